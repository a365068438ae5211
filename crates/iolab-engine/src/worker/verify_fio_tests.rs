//! `verify=crc64` against fio's own: the check value of the CRC-64 variant
//! fio uses, and the crc64 fields of blocks fio 3.33 wrote with
//! `verify=crc64`, recomputed by iolab's digest over fio's data (a
//! corrupted byte must change it). fio's headers differ from iolab's, so
//! this checks the digest, not the layout.

use super::*;

/// fio 3.33's verify header: 40 bytes, then the 8-byte crc64 (little
/// endian), then the data the crc64 covers (read from a file fio wrote).
const FIO_HDR: usize = 40;

#[test]
fn crc64_is_fios_variant_check_value() {
    // CRC-64/REDIS's catalogued check value (reveng), fio's crc64 variant.
    let d = digest(VerifyKind::Crc64, b"123456789");
    assert_eq!(
        u64::from_le_bytes(d[..8].try_into().unwrap()),
        0xe9c6_d914_c4b8_d9ca
    );
}

#[test]
fn crc64_matches_the_fields_fio_wrote_and_catches_a_flipped_byte() {
    let Ok(fio) = which_fio() else {
        assert_ne!(
            std::env::var("CI").as_deref(),
            Ok("true"),
            "peer 'fio' not found (CI=true: a missing peer is a failure)"
        );
        eprintln!("skipped: peer 'fio' not found; apt-get install fio");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("fio-crc64");
    let st = std::process::Command::new(fio)
        .args(["--name=w", "--rw=write", "--bs=4k", "--size=64k"])
        .args(["--verify=crc64", "--do_verify=0", "--verify_state_save=0"])
        .arg("--output=/dev/null")
        .arg(format!("--filename={}", file.display()))
        .status()
        .unwrap();
    assert!(st.success(), "fio failed: {st}");
    let data = std::fs::read(&file).unwrap();
    assert_eq!(data.len(), 64 << 10);
    for block in data.chunks(4096) {
        let want = &block[FIO_HDR..FIO_HDR + 8];
        let body = &block[FIO_HDR + 8..];
        assert_eq!(digest(VerifyKind::Crc64, body), want);
        let mut bad = body.to_vec();
        bad[1000] ^= 0x10;
        assert_ne!(digest(VerifyKind::Crc64, &bad), want);
    }
}

fn which_fio() -> Result<std::path::PathBuf, ()> {
    let path = std::env::var_os("PATH").ok_or(())?;
    std::env::split_paths(&path)
        .map(|d| d.join("fio"))
        .find(|p| p.is_file())
        .ok_or(())
}
