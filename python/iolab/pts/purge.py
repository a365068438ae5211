"""SNIA PTS purge — every LBA back to the state of a device never written —
and the safety checks in front of it.

- an NBD export (``--uri``): TRIM over the whole export (NBD_CMD_TRIM), or
  WRITE_ZEROES where the server offers no TRIM, then FLUSH — a minimal
  fixed-newstyle client (NBD_OPT_GO, simple replies) in this module;
- a block device: BLKDISCARD over the device (BLKZEROOUT where discard is
  not supported), only when the user names the device a second time
  (``--purge-device DEV``) and gives ``--allow-overwrite``; never a mounted
  device, one in swap, or one held by another (device-mapper, md): iolab's
  safety rules for devices (docs/user-guide.md "Safety");
- a file: removed, so the next run lays it out anew (iolab's own file,
  marked as such); an existing file iolab did not create needs
  ``--allow-overwrite`` as every write to it does.

Every refusal is a :class:`~iolab.errors.RefusedError` of one line.
"""

from __future__ import annotations

import errno
import fcntl
import os
import socket
import stat
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional
from urllib.parse import parse_qs, urlsplit

from iolab.errors import JobError, RefusedError

NBDMAGIC = 0x4E42444D41474943
IHAVEOPT = 0x49484156454F5054
OPT_REPLY_MAGIC = 0x0003E889045565A9
REQUEST_MAGIC = 0x25609513
SIMPLE_REPLY_MAGIC = 0x67446698
FLAG_FIXED_NEWSTYLE, FLAG_NO_ZEROES = 1, 2
OPT_GO, REP_ACK, REP_INFO, REP_ERR = 7, 1, 3, 1 << 31
INFO_EXPORT = 0
SEND_FLUSH, SEND_TRIM, SEND_WRITE_ZEROES = 1 << 2, 1 << 5, 1 << 6
CMD_DISC, CMD_FLUSH, CMD_TRIM, CMD_WRITE_ZEROES = 2, 3, 4, 6
#: Bytes per TRIM / WRITE_ZEROES request (NBD lengths are 32-bit).
CHUNK_BYTES = 1 << 30
BLKGETSIZE64, BLKDISCARD, BLKZEROOUT = 0x80081272, 0x1277, 0x127F
MARKER_XATTR = "user.iolab.created"


@dataclass(frozen=True)
class Purged:
    """What the purge did, for pts.json and the report."""

    how: str  # "nbd TRIM", "nbd WRITE_ZEROES", "BLKDISCARD", "BLKZEROOUT", "file removed", "not purged"
    bytes: int

    def to_json(self) -> dict[str, Any]:
        return {"how": self.how, "bytes": self.bytes}


# --- NBD -----------------------------------------------------------------------------------------


def _nbd_address(uri: str) -> tuple[Any, str]:
    """(socket address, export name) of ``nbd://host[:port]/name`` or ``nbd+unix:///name?socket=P``."""
    u = urlsplit(uri)
    name = u.path[1:] if u.path.startswith("/") else u.path
    if u.scheme == "nbd" and u.hostname:
        return (u.hostname, u.port or 10809), name
    if u.scheme == "nbd+unix":
        sock = parse_qs(u.query).get("socket")
        if sock:
            return sock[0], name
    raise JobError(f"--uri {uri}: expected nbd://host[:port]/export or nbd+unix:///export?socket=PATH")


def _unreachable(uri: str, address: str | tuple[str, int], name: str, e: OSError) -> RefusedError:
    """No NBD server at ``address``: what failed, and what to start (iolab's
    own target serves a simulated SSD; docs/pts.md)."""
    if isinstance(address, str):
        where, serve = address, f"--unix {address}"
    else:
        where, serve = f"{address[0]}:{address[1]}", f"--tcp {address[0]}:{address[1]}"
    return RefusedError(
        f"--uri {uri}: cannot reach the NBD server at {where}: {e.strerror or e}; start one there first "
        f"(iolab's own: iolab target {serve} --export '{name}=sim-ssd,capacity=16m,channels=1,dies=1,planes=2' &, docs/pts.md) or correct --uri"
    )


class NbdClient:
    """One connection in transmission phase: the export's size and flags, and
    requests answered one at a time."""

    def __init__(self, uri: str, timeout_s: float = 60.0) -> None:
        address, name = _nbd_address(uri)
        family = socket.AF_UNIX if isinstance(address, str) else socket.AF_INET
        if family == socket.AF_INET:
            try:
                family = socket.getaddrinfo(address[0], address[1], type=socket.SOCK_STREAM)[0][0]
            except OSError as e:
                raise _unreachable(uri, address, name, e) from None
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        self.sock.settimeout(timeout_s)
        self.uri, self.handle = uri, 0
        try:
            self.sock.connect(address)
            self.size_bytes, self.flags = self._handshake(name)
        except OSError as e:
            self.sock.close()
            raise _unreachable(uri, address, name, e) from None
        except BaseException:
            self.sock.close()
            raise

    def _recv(self, n: int) -> bytes:
        out = b""
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                raise RefusedError(f"--uri {self.uri}: the server closed the connection")
            out += chunk
        return out

    def _handshake(self, name: str) -> tuple[int, int]:
        magic, opt, hflags = struct.unpack(">QQH", self._recv(18))
        if magic != NBDMAGIC or opt != IHAVEOPT or not hflags & FLAG_FIXED_NEWSTYLE:
            raise RefusedError(f"--uri {self.uri}: not a fixed-newstyle NBD server")
        self.sock.sendall(struct.pack(">I", FLAG_FIXED_NEWSTYLE | (hflags & FLAG_NO_ZEROES)))
        data = struct.pack(">I", len(name)) + name.encode() + struct.pack(">H", 0)
        self.sock.sendall(struct.pack(">QII", IHAVEOPT, OPT_GO, len(data)) + data)
        size = flags = None
        while True:
            magic, _, rtype, length = struct.unpack(">QIII", self._recv(20))
            body = self._recv(length)
            if magic != OPT_REPLY_MAGIC:
                raise RefusedError(f"--uri {self.uri}: bad option reply")
            if rtype & REP_ERR:
                text = body.decode(errors="replace") or f"error {rtype & ~REP_ERR}"
                raise RefusedError(f"--uri {self.uri}: export '{name}' refused: {text}")
            if rtype == REP_INFO and struct.unpack(">H", body[:2])[0] == INFO_EXPORT:
                size, flags = struct.unpack(">QH", body[2:12])
            if rtype == REP_ACK:
                break
        if size is None or flags is None:
            raise RefusedError(f"--uri {self.uri}: the server sent no export size")
        return size, flags

    def request(self, cmd: int, offset: int = 0, length: int = 0) -> None:
        self.handle += 1
        self.sock.sendall(struct.pack(">IHHQQI", REQUEST_MAGIC, 0, cmd, self.handle, offset, length))
        if cmd == CMD_DISC:
            return
        magic, error, handle = struct.unpack(">IIQ", self._recv(16))
        if magic != SIMPLE_REPLY_MAGIC or handle != self.handle:
            raise RefusedError(f"--uri {self.uri}: bad reply")
        if error:
            raise RefusedError(f"--uri {self.uri}: request {cmd} at {offset}: {os.strerror(error)}")

    def close(self) -> None:
        try:
            self.request(CMD_DISC)
        finally:
            self.sock.close()


def export_size(uri: str) -> int:
    """The export's size in bytes (asked of the server)."""
    client = NbdClient(uri)
    try:
        return client.size_bytes
    finally:
        client.close()


def purge_nbd(uri: str) -> Purged:
    """TRIM (or WRITE_ZEROES) the whole export, then FLUSH."""
    client = NbdClient(uri)
    try:
        if client.flags & SEND_TRIM:
            cmd, how = CMD_TRIM, "nbd TRIM"
        elif client.flags & SEND_WRITE_ZEROES:
            cmd, how = CMD_WRITE_ZEROES, "nbd WRITE_ZEROES"
        else:
            raise RefusedError(
                f"--uri {uri}: the export takes neither TRIM nor WRITE_ZEROES: cannot purge (--no-purge)"
            )
        for offset in range(0, client.size_bytes, CHUNK_BYTES):
            client.request(cmd, offset, min(CHUNK_BYTES, client.size_bytes - offset))
        if client.flags & SEND_FLUSH:
            client.request(CMD_FLUSH)
        return Purged(how, client.size_bytes)
    finally:
        client.close()


# --- block devices ------------------------------------------------------------------------------


@dataclass(frozen=True)
class SystemTables:
    """Where the device checks look (injectable for tests)."""

    mounts: Path = Path("/proc/self/mounts")
    swaps: Path = Path("/proc/swaps")
    sys_block: Path = Path("/sys/class/block")


SYSTEM = SystemTables()


def _kernel_name(path: str) -> Optional[str]:
    """``sda1`` for /dev/sda1 (any path to a block device), else None."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISBLK(st.st_mode):
        return None
    link = Path(f"/sys/dev/block/{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}")
    try:
        return link.resolve().name
    except OSError:
        return Path(path).resolve().name


def in_use(device: str, tables: SystemTables = SYSTEM) -> Optional[str]:
    """Why ``device`` (or one of its partitions) is in use, or None."""
    name = _kernel_name(device) or Path(device).resolve().name
    mine = {name} | {p.name for p in (tables.sys_block / name).glob(f"{name}*") if p.is_dir()}
    for line in _lines(tables.mounts):
        fields = line.split()
        if len(fields) >= 2 and fields[0].startswith("/dev/"):
            src = _kernel_name(fields[0]) or Path(fields[0]).name
            if src in mine:
                return f"{fields[0]} is mounted on {fields[1]}"
    for line in _lines(tables.swaps)[1:]:
        fields = line.split()
        if fields and (_kernel_name(fields[0]) or Path(fields[0]).name) in mine:
            return f"{fields[0]} is in use as swap"
    for part in sorted(mine):
        holders = sorted(h.name for h in (tables.sys_block / part / "holders").glob("*"))
        if holders:
            return f"{part} is held by {', '.join(holders)}"
    return None


def _lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []


def check_device_purge(
    device: str, confirm: Optional[str], allow_overwrite: bool, tables: SystemTables = SYSTEM
) -> None:
    """Refuse a device purge the safety rules do not allow (one line each)."""
    why = in_use(device, tables)
    if why is not None:
        raise RefusedError(f"{device}: {why}: iolab never purges or writes a device in use; unmount it first")
    if confirm is None or os.path.realpath(confirm) != os.path.realpath(device):
        raise RefusedError(
            f"{device}: purging erases every byte of it: confirm with --purge-device {device} --allow-overwrite "
            "(or run without a purge: --no-purge)"
        )
    if not allow_overwrite:
        raise RefusedError(f"{device}: writing a block device needs --allow-overwrite")


def device_size(device: str) -> int:
    with open(device, "rb") as f:
        buf = fcntl.ioctl(f.fileno(), BLKGETSIZE64, b"\0" * 8)
    size: int = struct.unpack("Q", buf)[0]
    return size


def purge_device(device: str) -> Purged:
    """BLKDISCARD the whole device (BLKZEROOUT where it cannot discard)."""
    size = device_size(device)
    fd = os.open(device, os.O_WRONLY | os.O_EXCL)
    try:
        rng = struct.pack("QQ", 0, size)
        try:
            fcntl.ioctl(fd, BLKDISCARD, rng)
            return Purged("BLKDISCARD", size)
        except OSError as e:
            if e.errno not in (errno.EOPNOTSUPP, errno.ENOTTY, errno.EINVAL):
                raise
        fcntl.ioctl(fd, BLKZEROOUT, rng)
        return Purged("BLKZEROOUT", size)
    finally:
        os.close(fd)


# --- files --------------------------------------------------------------------------------------


def iolab_created(path: Path) -> bool:
    try:
        return bool(os.getxattr(path, MARKER_XATTR))
    except OSError:
        return False


def purge_file(path: Path, allow_overwrite: bool) -> Purged:
    """Remove the file, so the next run lays it out anew."""
    if not path.exists():
        return Purged("file absent (laid out by the first run)", 0)
    if not path.is_file():
        raise RefusedError(f"{path}: not a regular file or a block device: give a file, a device or --uri")
    if not allow_overwrite and not iolab_created(path):
        raise RefusedError(f"{path}: exists and iolab did not create it: a purge removes it; give --allow-overwrite")
    size = path.stat().st_size
    path.unlink()
    return Purged("file removed (laid out anew by the first run)", size)
