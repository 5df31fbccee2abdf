//! A certificate file is sized up before it is read whole (issue #57, item 7): what is not a
//! regular file is refused unopened, and a file whose size is not the one its header declares
//! after its header's read. Every reader of certificates (the server's loader, `proofs
//! import`, `verify-proof`, `certify --with`) goes through `read_file`; before, each read the
//! whole file first: `/dev/zero` never ended, and a sparse file claiming a gigabyte cost one.

use shogi4_certificate::{read_file, Certificate, Entry};
use shogi4_engine::Position;

#[test]
fn a_certificate_file_is_sized_up_before_it_is_read() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("certificate-read");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let root = Position::parse("k3/C3/4/3K b - 1").unwrap();
    let capture = root.legal_moves().iter().position(|&mv| root.captures_royal(mv)).unwrap();
    let mut certificate = Certificate::new(root, true);
    certificate.insert(&root, Entry { move_index: capture as u8, bound: 1 });
    let bytes = certificate.to_bytes();
    let good = dir.join("good.s4cert");
    std::fs::write(&good, &bytes).unwrap();
    assert_eq!(read_file(&good).unwrap(), bytes);
    // One entry more declared than there is, and a sparse gigabyte after a true header.
    let count_at = bytes.len() - 19 - 8;
    let mut more = bytes.clone();
    more[count_at..count_at + 8].copy_from_slice(&2u64.to_le_bytes());
    let short = dir.join("short.s4cert");
    std::fs::write(&short, &more).unwrap();
    let sparse = dir.join("sparse.s4cert");
    std::fs::write(&sparse, &bytes).unwrap();
    std::fs::OpenOptions::new().write(true).open(&sparse).unwrap().set_len(1 << 30).unwrap();
    let zero = std::path::PathBuf::from("/dev/zero");
    for (path, says) in [(&zero, "not a regular file"), (&short, "declares"), (&sparse, "declares")] {
        let started = std::time::Instant::now();
        let error = read_file(path).unwrap_err().to_string();
        assert!(error.contains(says), "{}: {error}", path.display());
        assert!(started.elapsed() < std::time::Duration::from_millis(500), "{}", path.display());
    }
}
