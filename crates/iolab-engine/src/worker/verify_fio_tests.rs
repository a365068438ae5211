//! `verify=crc64`, `crc32`, `crc16` and `crc7` against fio's own: the check
//! values of the CRC variants fio uses, and the CRC fields of blocks fio
//! 3.33 wrote with each, recomputed by iolab's digest over fio's data (a
//! corrupted byte must change it). fio's headers differ from iolab's, so
//! this checks the digest, not the layout.

use super::*;

/// fio 3.33's verify header: 40 bytes, then the CRC (little endian: 8
/// bytes for crc64, 4 for crc32, 2 for crc16, 1 for crc7), then the data
/// the CRC covers (read from a file fio wrote).
const FIO_HDR: usize = 40;

#[test]
fn crc32_crc16_crc7_are_fios_variants_check_values() {
    let check = |kind| digest(kind, b"123456789");
    // fio's crc32: CRC-32/CKSUM's check value without its final complement.
    assert_eq!(check(VerifyKind::Crc32), 0x89a1_897fu32.to_le_bytes());
    assert_eq!(check(VerifyKind::Crc16), 0xbb3du16.to_le_bytes()); // CRC-16/ARC
    assert_eq!(check(VerifyKind::Crc7), [0x75]); // CRC-7/MMC
}

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
fn crcs_match_the_fields_fio_wrote_and_catch_a_flipped_byte() {
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
    for kind in [
        VerifyKind::Crc64,
        VerifyKind::Crc32,
        VerifyKind::Crc16,
        VerifyKind::Crc7,
    ] {
        let file = dir.path().join(format!("fio-{}", kind.name()));
        let st = std::process::Command::new(&fio)
            .args(["--name=w", "--rw=write", "--bs=4k", "--size=64k"])
            .arg(format!("--verify={}", kind.name()))
            .args(["--do_verify=0", "--verify_state_save=0"])
            .arg("--output=/dev/null")
            .arg(format!("--filename={}", file.display()))
            .status()
            .unwrap();
        assert!(st.success(), "fio failed: {st}");
        let data = std::fs::read(&file).unwrap();
        assert_eq!(data.len(), 64 << 10);
        let crc_bytes = digest(kind, b"").len();
        for block in data.chunks(4096) {
            let want = &block[FIO_HDR..FIO_HDR + crc_bytes];
            let body = &block[FIO_HDR + crc_bytes..];
            assert_eq!(digest(kind, body), want, "{kind:?}");
            let mut bad = body.to_vec();
            bad[1000] ^= 0x10;
            assert_ne!(digest(kind, &bad), want, "{kind:?}");
        }
    }
}

fn which_fio() -> Result<std::path::PathBuf, ()> {
    let path = std::env::var_os("PATH").ok_or(())?;
    std::env::split_paths(&path)
        .map(|d| d.join("fio"))
        .find(|p| p.is_file())
        .ok_or(())
}
