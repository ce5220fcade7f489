//! Weight files: round trip, atomic write, and every kind of damage rejected clearly.

use deepchess::tensor::weights::{WeightFile, FORMAT_VERSION};
use deepchess::tensor::{Init, Matrix, Params, Rng};
use std::path::PathBuf;

fn tmp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("deepchess-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn sample_params() -> Params {
    let mut rng = Rng::new(1);
    let mut p = Params::new();
    p.add("pos2vec.l1.w", Init::HeNormal.matrix(7, 5, &mut rng)).unwrap();
    p.add("pos2vec.l1.b", Matrix::filled(1, 5, 0.25)).unwrap();
    p.add("head.w", Init::XavierUniform.matrix(3, 2, &mut rng)).unwrap();
    p
}

#[test]
fn round_trip_and_atomic_write() {
    let d = tmp_dir("roundtrip");
    let path = d.join("net.dcw");
    let p = sample_params();
    let meta = vec![("arch".to_string(), "773-600-400-200-100".to_string())];
    p.save(&path, &meta).unwrap();
    let mut q = sample_params();
    q.value_mut(q.find("head.w").unwrap()).fill(0.0);
    let got_meta = q.load(&path).unwrap();
    assert_eq!(got_meta, meta);
    for id in p.ids() {
        assert_eq!(p.value(id), q.value(id));
    }
    // Only the final file remains (no temporary left behind); overwrite works too.
    p.save(&path, &[]).unwrap();
    let names: Vec<_> = std::fs::read_dir(&d).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names.len(), 1, "{names:?}");
    let _ = std::fs::remove_dir_all(&d);
}

fn bytes() -> Vec<u8> {
    let p = sample_params();
    WeightFile { meta: vec![("k".into(), "v".into())], tensors: p.ids().map(|i| (p.name(i).to_string(), p.value(i).clone())).collect() }.to_bytes()
}

#[test]
fn every_truncation_is_rejected() {
    let b = bytes();
    for len in 0..b.len() {
        let e = WeightFile::from_bytes(&b[..len], "t.dcw").unwrap_err().to_string();
        assert!(e.contains("t.dcw"), "{e}");
        assert!(e.contains("truncated") || e.contains("magic") || e.contains("checksum") || e.contains("corrupt"), "len {len}: {e}");
    }
    assert!(WeightFile::from_bytes(&b, "t.dcw").is_ok());
}

#[test]
fn every_flipped_byte_is_rejected() {
    let b = bytes();
    for i in 0..b.len() {
        let mut c = b.clone();
        c[i] ^= 0x10;
        assert!(WeightFile::from_bytes(&c, "x").is_err(), "flip at byte {i} accepted");
    }
}

#[test]
fn wrong_magic_version_and_trailing_bytes() {
    let b = bytes();
    let mut c = b.clone();
    c[0] = b'X';
    assert!(WeightFile::from_bytes(&c, "x").unwrap_err().to_string().contains("magic"));
    let mut c = b.clone();
    c[8..12].copy_from_slice(&(FORMAT_VERSION + 1).to_le_bytes());
    let e = WeightFile::from_bytes(&c, "x").unwrap_err().to_string();
    assert!(e.contains("version"), "{e}");
    let mut c = b.clone();
    c.push(0);
    assert!(WeightFile::from_bytes(&c, "x").is_err());
}

#[test]
fn wrong_shape_missing_and_extra_tensors() {
    let d = tmp_dir("shape");
    let path = d.join("net.dcw");
    sample_params().save(&path, &[]).unwrap();
    // Wrong shape: the error names the tensor and both shapes, and nothing is changed.
    let mut p = Params::new();
    p.add("pos2vec.l1.w", Matrix::zeros(7, 6)).unwrap();
    p.add("pos2vec.l1.b", Matrix::zeros(1, 5)).unwrap();
    p.add("head.w", Matrix::zeros(3, 2)).unwrap();
    let e = p.load(&path).unwrap_err().to_string();
    assert!(e.contains("pos2vec.l1.w") && e.contains("7×5") && e.contains("7×6"), "{e}");
    assert!(p.value(p.find("pos2vec.l1.b").unwrap()).data().iter().all(|&x| x == 0.0));
    // Missing tensor.
    let mut p = sample_params();
    p.add("extra", Matrix::zeros(1, 1)).unwrap();
    assert!(p.load(&path).unwrap_err().to_string().contains("missing"));
    // File holds a tensor the store does not have.
    let mut p = Params::new();
    p.add("head.w", Matrix::zeros(3, 2)).unwrap();
    assert!(p.load(&path).unwrap_err().to_string().contains("unexpected"));
    // Missing file: an I/O error naming the path.
    let e = p.load(&d.join("nope.dcw")).unwrap_err().to_string();
    assert!(e.contains("nope.dcw"), "{e}");
    let _ = std::fs::remove_dir_all(&d);
}
