use super::*;

fn params(path: &Path, size: Option<u64>, direct: bool) -> FileParams {
    FileParams {
        path: path.to_path_buf(),
        size_bytes: size,
        direct,
        read_only: false,
    }
}

#[test]
fn creates_sparse_file_and_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("d.img");
    let d = FileDev::open(params(&p, Some(1 << 20), false)).unwrap();
    assert_eq!(std::fs::metadata(&p).unwrap().len(), 1 << 20);
    let mut ctx = IoCtx::new();
    let data: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
    d.write_at(&mut ctx, &data, 777, false).unwrap();
    d.write_at(&mut ctx, &data[..100], 50_000, true).unwrap();
    d.flush(&mut ctx).unwrap();
    let mut back = vec![0u8; data.len()];
    d.read_at(&mut ctx, &mut back, 777).unwrap();
    assert_eq!(back, data);
    d.zero(
        &mut ctx,
        ZeroReq {
            offset: 1000,
            len_bytes: 2000,
            may_trim: true,
            fua: true,
        },
    )
    .unwrap();
    d.zero(
        &mut ctx,
        ZeroReq {
            offset: 5000,
            len_bytes: 100,
            may_trim: false,
            fua: false,
        },
    )
    .unwrap();
    d.read_at(&mut ctx, &mut back, 777).unwrap();
    assert!(back[223..2223].iter().all(|&b| b == 0));
    assert!(back[4223..4323].iter().all(|&b| b == 0));
    assert_eq!(back[2223..4223], data[2223..4223]);
    d.trim(&mut ctx, 0, 1 << 20, false).unwrap();
    assert!(d.caps().may_block && d.caps().can_multi_conn);
}

#[test]
fn existing_file_size_is_never_changed() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("d.img");
    std::fs::write(&p, vec![1u8; 8192]).unwrap();
    assert_eq!(
        FileDev::open(params(&p, None, false))
            .unwrap()
            .caps()
            .size_bytes,
        8192
    );
    assert_eq!(
        FileDev::open(params(&p, Some(8192), false))
            .unwrap()
            .caps()
            .size_bytes,
        8192
    );
    let e = FileDev::open(params(&p, Some(4096), false)).unwrap_err();
    assert!(e.contains("has 8192 bytes but size = 4096"), "{e}");
    let e = FileDev::open(params(&dir.path().join("missing"), None, false)).unwrap_err();
    assert!(e.contains("give size"), "{e}");
}

#[test]
fn direct_io_reports_alignment_and_rounds_size() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("d.img");
    std::fs::write(&p, vec![0u8; 3 * 4096 + 100]).unwrap();
    let d = match FileDev::open(params(&p, None, true)) {
        Ok(d) => d,
        // A filesystem without O_DIRECT (tmpfs on old kernels) cannot run this test.
        Err(e) if e.contains("O_DIRECT") => return,
        Err(e) => panic!("{e}"),
    };
    let c = d.caps();
    assert!(c.min_block_bytes >= 512 && c.min_block_bytes.is_power_of_two());
    assert_eq!(c.size_bytes % u64::from(c.min_block_bytes), 0);
    assert!(c.size_bytes <= 3 * 4096);
    let mut ctx = IoCtx::new();
    let mut b = AlignedBuf::new(4096);
    b.fill(0xab);
    d.write_at(&mut ctx, &b, 4096, true).unwrap();
    let mut r = AlignedBuf::new(4096);
    d.read_at(&mut ctx, &mut r, 4096).unwrap();
    assert!(r.iter().all(|&x| x == 0xab));
    d.zero(
        &mut ctx,
        ZeroReq {
            offset: 4096,
            len_bytes: 4096,
            may_trim: false,
            fua: false,
        },
    )
    .unwrap();
    d.read_at(&mut ctx, &mut r, 4096).unwrap();
    assert!(r.iter().all(|&x| x == 0));
}

#[test]
fn read_only_backend_refuses_writes_with_eperm() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("d.img");
    std::fs::write(&p, vec![5u8; 4096]).unwrap();
    let d = FileDev::open(FileParams {
        read_only: true,
        ..params(&p, None, false)
    })
    .unwrap();
    assert!(!d.caps().can_write);
    let e = d.write_at(&mut IoCtx::new(), &[1], 0, false).unwrap_err();
    assert_eq!(e.errno, Errno::Perm);
    let mut b = [0u8; 16];
    d.read_at(&mut IoCtx::new(), &mut b, 0).unwrap();
    assert_eq!(b, [5u8; 16]);
}
