//! What a job does when an I/O fails, and which jobs stop when one ends:
//! fio's `continue_on_error`, `ignore_error`, `error_dump` and `exit_what`.
//!
//! fio sorts a failure into one of three kinds: a verify failure (errno
//! `EILSEQ`), else a read or a write failure by the I/O's direction. A
//! failure is *non-fatal* when `continue_on_error` names its kind and its
//! errno is in that kind's list: `ignore_error`'s list when one was given
//! for the kind (which also turns continuing on for it), else fio's
//! default list, `EIO` and `EILSEQ`. A non-fatal failure is counted and the
//! job goes on; any other ends the job (counted as well). The count and
//! the first errno are fio's `total_err` and `first_error`.

use serde::{Deserialize, Serialize};

/// The kinds of failure, as fio's `error_type_bit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    Read = 0,
    Write = 1,
    Verify = 2,
}

impl ErrorKind {
    /// fio's `td_error_type`: `EILSEQ` is a verify failure, the rest go
    /// by the I/O's direction.
    pub fn of(dir: super::IoDir, errno: i32) -> ErrorKind {
        if errno == libc::EILSEQ {
            ErrorKind::Verify
        } else if dir == super::IoDir::Read {
            ErrorKind::Read
        } else {
            ErrorKind::Write
        }
    }
}

/// Which jobs `exitall` stops when a job of it ends (fio's `exit_what`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExitWhat {
    /// The jobs of the same stonewall group; later groups still run.
    #[default]
    Group,
    /// Every job running now (in any group); later groups still run.
    Stonewall,
    /// Every job, and no later group starts.
    All,
}

/// fio's errors that `continue_on_error` continues on by default.
pub const DEFAULT_NON_FATAL: [i32; 2] = [libc::EIO, libc::EILSEQ];

/// Error handling of one job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ErrorOptions {
    /// Bit `ErrorKind as u8` set: continue on non-fatal failures of that kind.
    pub continue_on: u8,
    /// `ignore_error`: per kind (read, write, verify), the errnos that are
    /// non-fatal; empty = fio's default list ([`DEFAULT_NON_FATAL`]).
    pub ignore: [Vec<i32>; 3],
    /// `error_dump`: print every failure, non-fatal ones too (fio's default).
    pub error_dump: bool,
    pub exit_what: ExitWhat,
}

impl Default for ErrorOptions {
    fn default() -> Self {
        ErrorOptions {
            continue_on: 0,
            ignore: Default::default(),
            error_dump: true,
            exit_what: ExitWhat::Group,
        }
    }
}

impl ErrorOptions {
    /// fio's `td_non_fatal_error`: does the job go on after this failure?
    pub fn non_fatal(&self, kind: ErrorKind, errno: i32) -> bool {
        if self.continue_on & (1 << kind as u8) == 0 {
            return false;
        }
        let list = &self.ignore[kind as usize];
        if list.is_empty() {
            DEFAULT_NON_FATAL.contains(&errno)
        } else {
            list.contains(&errno)
        }
    }

    /// True when `continue_on_error` (or `ignore_error`) is in force: fio
    /// then reports `total_err` and `first_error`.
    pub fn continuing(&self) -> bool {
        self.continue_on != 0
    }

    /// `continue_on_error=VALUE` as fio reads it.
    pub fn parse_continue_on(text: &str) -> Result<u8, String> {
        Ok(match text.trim() {
            "none" | "0" => 0,
            "read" => 1,
            "write" => 2,
            "io" => 3,
            "verify" => 4,
            "all" | "1" => 7,
            other => {
                return Err(format!(
                    "'{other}' is not one of none, read, write, io, verify, all, 0, 1"
                ))
            }
        })
    }

    /// `ignore_error=READ_LIST,WRITE_LIST,VERIFY_LIST`, each list errno
    /// names or numbers separated by ':'. A kind given a list also has
    /// continuing turned on, as in fio. Returns the lists and their bits.
    pub fn parse_ignore(text: &str) -> Result<([Vec<i32>; 3], u8), String> {
        let parts: Vec<&str> = text.trim().split(',').collect();
        if parts.len() > 3 {
            return Err("has more than 3 lists (read,write,verify)".into());
        }
        let mut lists: [Vec<i32>; 3] = Default::default();
        let mut bits = 0u8;
        for (k, part) in parts.iter().enumerate() {
            for name in part.split(':').map(str::trim).filter(|n| !n.is_empty()) {
                lists[k].push(parse_errno(name)?);
            }
            if !lists[k].is_empty() {
                bits |= 1 << k;
            }
        }
        Ok((lists, bits))
    }
}

/// An errno written as its name (`ENOSPC`) or a number (`28`, `0x1c`, `-28`).
pub fn parse_errno(text: &str) -> Result<i32, String> {
    if let Some(&(_, n)) = ERRNO_NAMES.iter().find(|(name, _)| *name == text) {
        return Ok(n);
    }
    let (digits, radix) = match text.strip_prefix("0x").or(text.strip_prefix("0X")) {
        Some(hex) => (hex, 16),
        None => (text.trim_start_matches('-'), 10),
    };
    match i32::from_str_radix(digits, radix) {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!(
            "'{text}' is not an errno name (like EIO, ENOSPC) or a positive number"
        )),
    }
}

/// The name of an errno (`ENOSPC`), or its number as text.
pub fn errno_name(errno: i32) -> String {
    ERRNO_NAMES
        .iter()
        .find(|(_, n)| *n == errno)
        .map_or_else(|| errno.to_string(), |(name, _)| (*name).to_string())
}

/// Linux errno names. Written by hand: neither std nor libc maps names
/// to numbers (glibc's strerrorname_np goes the other way and is not in
/// the libc crate). The values come from libc's constants.
static ERRNO_NAMES: &[(&str, i32)] = &[
    ("EPERM", libc::EPERM),
    ("ENOENT", libc::ENOENT),
    ("ESRCH", libc::ESRCH),
    ("EINTR", libc::EINTR),
    ("EIO", libc::EIO),
    ("ENXIO", libc::ENXIO),
    ("E2BIG", libc::E2BIG),
    ("ENOEXEC", libc::ENOEXEC),
    ("EBADF", libc::EBADF),
    ("ECHILD", libc::ECHILD),
    ("EAGAIN", libc::EAGAIN),
    ("EWOULDBLOCK", libc::EWOULDBLOCK),
    ("ENOMEM", libc::ENOMEM),
    ("EACCES", libc::EACCES),
    ("EFAULT", libc::EFAULT),
    ("ENOTBLK", libc::ENOTBLK),
    ("EBUSY", libc::EBUSY),
    ("EEXIST", libc::EEXIST),
    ("EXDEV", libc::EXDEV),
    ("ENODEV", libc::ENODEV),
    ("ENOTDIR", libc::ENOTDIR),
    ("EISDIR", libc::EISDIR),
    ("EINVAL", libc::EINVAL),
    ("ENFILE", libc::ENFILE),
    ("EMFILE", libc::EMFILE),
    ("ENOTTY", libc::ENOTTY),
    ("ETXTBSY", libc::ETXTBSY),
    ("EFBIG", libc::EFBIG),
    ("ENOSPC", libc::ENOSPC),
    ("ESPIPE", libc::ESPIPE),
    ("EROFS", libc::EROFS),
    ("EMLINK", libc::EMLINK),
    ("EPIPE", libc::EPIPE),
    ("EDOM", libc::EDOM),
    ("ERANGE", libc::ERANGE),
    ("EDEADLK", libc::EDEADLK),
    ("ENAMETOOLONG", libc::ENAMETOOLONG),
    ("ENOLCK", libc::ENOLCK),
    ("ENOSYS", libc::ENOSYS),
    ("ENOTEMPTY", libc::ENOTEMPTY),
    ("ELOOP", libc::ELOOP),
    ("ENODATA", libc::ENODATA),
    ("ETIME", libc::ETIME),
    ("ENOLINK", libc::ENOLINK),
    ("EPROTO", libc::EPROTO),
    ("EBADMSG", libc::EBADMSG),
    ("EOVERFLOW", libc::EOVERFLOW),
    ("EILSEQ", libc::EILSEQ),
    ("EOPNOTSUPP", libc::EOPNOTSUPP),
    ("ENOTSUP", libc::ENOTSUP),
    ("ENOBUFS", libc::ENOBUFS),
    ("ENOTCONN", libc::ENOTCONN),
    ("ESHUTDOWN", libc::ESHUTDOWN),
    ("ETIMEDOUT", libc::ETIMEDOUT),
    ("ECONNREFUSED", libc::ECONNREFUSED),
    ("ECONNRESET", libc::ECONNRESET),
    ("ESTALE", libc::ESTALE),
    ("EUCLEAN", libc::EUCLEAN),
    ("EREMOTEIO", libc::EREMOTEIO),
    ("EDQUOT", libc::EDQUOT),
    ("ENOMEDIUM", libc::ENOMEDIUM),
    ("EMEDIUMTYPE", libc::EMEDIUMTYPE),
    ("ECANCELED", libc::ECANCELED),
    ("EHWPOISON", libc::EHWPOISON),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::IoDir;

    #[test]
    fn continue_on_error_follows_fios_kinds_and_default_list() {
        let mut o = ErrorOptions {
            continue_on: ErrorOptions::parse_continue_on("write").unwrap(),
            ..ErrorOptions::default()
        };
        let w = ErrorKind::of(IoDir::Write, libc::EIO);
        assert!(o.non_fatal(w, libc::EIO));
        // ENOSPC is not in fio's default list; reads are not continued.
        assert!(!o.non_fatal(w, libc::ENOSPC));
        assert!(!o.non_fatal(ErrorKind::of(IoDir::Read, libc::EIO), libc::EIO));
        // EILSEQ is a verify failure whatever the direction.
        assert_eq!(ErrorKind::of(IoDir::Write, libc::EILSEQ), ErrorKind::Verify);
        let (lists, bits) = ErrorOptions::parse_ignore(",ENOSPC:122").unwrap();
        o.ignore = lists;
        o.continue_on |= bits;
        assert!(o.non_fatal(w, libc::ENOSPC));
        assert!(o.non_fatal(w, libc::EDQUOT));
        // The list replaces the default one for its kind.
        assert!(!o.non_fatal(w, libc::EIO));
        assert_eq!(ErrorOptions::parse_continue_on("1"), Ok(7));
        assert!(ErrorOptions::parse_continue_on("sometimes").is_err());
    }

    #[test]
    fn ignore_error_turns_continuing_on_for_its_kinds_only() {
        let (lists, bits) = ErrorOptions::parse_ignore("EIO,ENOSPC:EIO").unwrap();
        assert_eq!(bits, 0b011);
        assert_eq!(lists[0], vec![libc::EIO]);
        assert_eq!(lists[1], vec![libc::ENOSPC, libc::EIO]);
        assert!(lists[2].is_empty());
        assert_eq!(parse_errno("0x1c"), Ok(libc::ENOSPC));
        assert_eq!(parse_errno("-5"), Ok(libc::EIO));
        assert!(parse_errno("ENOTANERROR")
            .unwrap_err()
            .contains("ENOTANERROR"));
        assert!(ErrorOptions::parse_ignore("EIO,EIO,EIO,EIO").is_err());
        assert_eq!(errno_name(libc::ENOSPC), "ENOSPC");
    }
}
