//! Weight files: round trip, atomic write, and every kind of damage rejected clearly.

mod common;

use deepchess::tensor::weights::{WeightFile, FORMAT_VERSION};
use deepchess::tensor::{Init, Matrix, Params, Rng};

fn tmp_dir(name: &str) -> common::TempDir {
    common::TempDir::new(&format!("test-{name}"))
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
}

#[test]
fn atomic_write_never_follows_a_planted_link_and_clears_dead_writers_temporaries() {
    use deepchess::io::write_atomic;
    let d = tmp_dir("planted");
    let victim = d.join("victim.txt");
    std::fs::write(&victim, b"precious").unwrap();
    let target = d.join("out.bin");
    // Every name the old scheme would have used, planted as a link to the victim.
    std::os::unix::fs::symlink(&victim, d.join(format!("out.bin.{}.tmp", std::process::id()))).unwrap();
    write_atomic(&target, b"new bytes").unwrap();
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious", "the link's target was written through");
    assert_eq!(std::fs::read(&target).unwrap(), b"new bytes");
    // A link at the destination itself is replaced, its target untouched.
    let link = d.join("link.bin");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    write_atomic(&link, b"replaced").unwrap();
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    assert!(!std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());

    // Temporaries of a writer that no longer exists go; a live writer's (ours) stay, and so
    // do unrelated files.
    let dead = (u32::MAX / 2 + 12345).to_string(); // far above Linux's pid_max
    let stale_new = d.join(format!(".out.bin.{dead}.0123456789abcdef.tmp"));
    let stale_old = d.join(format!("out.bin.{dead}.tmp"));
    let live = d.join(format!(".out.bin.{}.fedcba9876543210.tmp", std::process::id()));
    let unrelated = d.join(format!(".other.bin.{dead}.0123456789abcdef.tmp"));
    for f in [&stale_new, &stale_old, &live, &unrelated] {
        std::fs::write(f, b"x").unwrap();
    }
    write_atomic(&target, b"again").unwrap();
    assert!(!stale_new.exists() && !stale_old.exists(), "a dead writer's temporary was left");
    assert!(live.exists() && unrelated.exists(), "a live or unrelated file was removed");
    let left: Vec<_> = std::fs::read_dir(&d).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    assert_eq!(left.iter().filter(|n| n.ends_with(".tmp")).count(), 3, "{left:?}"); // live, unrelated, planted link
}

#[test]
fn non_finite_values_are_rejected_after_the_checksum() {
    let mut wf = WeightFile::from_bytes(&bytes(), "x").unwrap();
    wf.tensors[2].1.data_mut()[3] = f32::NAN; // head.w is 3×2: row 1, column 1
    let e = WeightFile::from_bytes(&wf.to_bytes(), "n.dcw").unwrap_err().to_string();
    assert!(e.contains("n.dcw") && e.contains("'head.w' holds NaN at index 3 (row 1, column 1)"), "{e}");
    // Damage is still reported as damage, not as the value it happens to produce.
    let mut b = wf.to_bytes();
    let n = b.len();
    b[n - 1] ^= 1;
    assert!(WeightFile::from_bytes(&b, "n.dcw").unwrap_err().to_string().contains("checksum"));
}

/// Many tiny tensors: reading stays linear in their number (a duplicate-name check by linear
/// search would take minutes here).
#[test]
fn many_tiny_tensors_load_quickly() {
    let tensors = (0..200_000).map(|i| (format!("t{i}"), Matrix::zeros(0, 0))).collect();
    let b = WeightFile { meta: Vec::new(), tensors }.to_bytes();
    let t = std::time::Instant::now();
    assert_eq!(WeightFile::from_bytes(&b, "x").unwrap().tensors.len(), 200_000);
    assert!(t.elapsed().as_secs() < 10, "{:?}", t.elapsed());
    let mut dup = WeightFile::from_bytes(&b, "x").unwrap();
    dup.tensors[199_999].0 = "t7".into();
    assert!(WeightFile::from_bytes(&dup.to_bytes(), "x").unwrap_err().to_string().contains("'t7' appears twice"));
}

#[test]
fn non_finite_values_are_never_written() {
    let d = common::TempDir::new("nonfinite-save");
    let path = d.join("net.dcw");
    let mut p = sample_params();
    p.save(&path, &[]).unwrap();
    let before = std::fs::read(&path).unwrap();
    let mut bad = Matrix::filled(1, 5, 0.25);
    bad.data_mut()[3] = f32::NAN;
    p = Params::new();
    p.add("pos2vec.l1.b", bad).unwrap();
    let e = p.save(&path, &[]).unwrap_err().to_string();
    assert!(e.contains("pos2vec.l1.b") && e.contains("column 3"), "{e}");
    assert_eq!(std::fs::read(&path).unwrap(), before, "the earlier file was touched");
}

/// Finite but absurd weights (issue 45: a net of 3e38s loaded and played nonsense) are
/// refused by every player's loader, naming the tensor and the bound; so is writing one.
/// The optimizer's state in a checkpoint is not bounded (its moments are not weights).
#[test]
fn weights_no_training_gives_are_refused_by_every_loader() {
    use deepchess::players::PLAYERS;
    use deepchess::search::PlayerSettings;
    use deepchess::tensor::weights::MAX_WEIGHT;
    let dir = common::TempDir::new("absurd-weights");
    for p in PLAYERS.iter().filter(|p| p.default_net.is_some()) {
        let shipped = deepchess::players::default_net_path(p.default_net.unwrap()).unwrap();
        let good = WeightFile::load(&shipped).unwrap();
        for v in [3e38f32, -2.0 * MAX_WEIGHT] {
            let mut wf = good.clone();
            let (name, m) = wf.tensors.last_mut().unwrap();
            let name = name.clone();
            m.data_mut().iter_mut().for_each(|x| *x = v);
            let path = dir.join(format!("{}.dcw", p.name));
            let e = wf.save(&path).unwrap_err().to_string();
            assert!(e.contains("refusing to write") && e.contains(&name) && e.contains("1e4"), "{e}");
            // Written past the check, as a crafted file would be.
            std::fs::write(&path, wf.to_bytes()).unwrap();
            let s = PlayerSettings { net: Some(path.clone()), ..PlayerSettings::new(1) };
            let e = p.build(&s).err().unwrap_or_else(|| panic!("{}: {v} accepted", p.name)).to_string();
            assert!(e.contains(&name) && e.contains("beyond ±1e4"), "{}: {e}", p.name);
        }
    }
    let mut ck = WeightFile::default();
    ck.tensors.push(("opt.v.0".into(), deepchess::tensor::Matrix::filled(1, 2, 1e6)));
    ck.save(&dir.join("ck.dcw")).unwrap();
    assert!(WeightFile::load(&dir.join("ck.dcw")).is_ok());
}
