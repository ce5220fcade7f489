//! Every net file shipped under `data/` loads as the net its header's kind names and saves
//! back to the same bytes: the architectures declared as data (`tensor::net_arch`) read and
//! write the headers, and order the tensors, as the files on disk hold them. The nets no
//! file ships (NeuroChess's chess model M, a linear V) are written and read back beside them.

mod common;

use deepchess::tensor::{Architecture, NetFile, Rng, WeightFile};
use std::path::{Path, PathBuf};

fn dcw_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            dcw_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "dcw") {
            out.push(p);
        }
    }
}

/// `N` loaded from `path` and saved to `to` with the header it was loaded with.
fn resave<N: NetFile>(path: &Path, to: &Path) -> String {
    let (net, meta) = N::load(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    net.save(to, &meta).unwrap();
    net.arch().describe()
}

#[test]
fn every_shipped_net_saves_back_to_its_own_bytes() {
    use deepchess::{cnn, dbn, deepchess as dc, neurochess, selfplay};
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("data");
    let mut files = Vec::new();
    dcw_files(&root, &mut files);
    files.sort();
    let tmp = common::TempDir::new("shipped-nets");
    let mut kinds = std::collections::BTreeSet::new();
    for (i, path) in files.iter().enumerate() {
        let header = WeightFile::load(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let kind = header.meta("kind").unwrap_or("deepchess-net").to_string();
        let arch = header.meta("arch").unwrap_or_default().to_string();
        let to = tmp.join(format!("{i}.dcw"));
        let described = match kind.as_str() {
            "deepchess-net" => resave::<dc::model::Net>(path, &to),
            "deepchess-value-net" => resave::<dc::model::ValueNet>(path, &to),
            "dbn-net" => resave::<dbn::model::Dbn>(path, &to),
            "cnn-net" => resave::<cnn::model::Cnn>(path, &to),
            "neurochess-v" => resave::<neurochess::model::Value>(path, &to),
            "neurochess-m" => resave::<neurochess::model::Model>(path, &to),
            "selfplay-agents" => resave::<selfplay::model::Agents>(path, &to),
            other => panic!("{}: a kind this test does not know, '{other}': add it here", path.display()),
        };
        assert_eq!(described, arch, "{}: the architecture as read and written", path.display());
        let (a, b) = (std::fs::read(path).unwrap(), std::fs::read(&to).unwrap());
        assert!(a == b, "{}: {} bytes saved back as {} different bytes", path.display(), a.len(), b.len());
        kinds.insert(kind);
    }
    // The shipped nets cover every kind but NeuroChess's M; a missing folder is no pass.
    assert!(kinds.len() >= 6, "only {kinds:?} among {} files under {}", files.len(), root.display());

    // The nets no file ships: written, read back, written again to the same bytes.
    let mut rng = Rng::new(3);
    let v0 = neurochess::model::Value::with_features(neurochess::model::FeatureSet::Ours, 0, &mut rng);
    let m = neurochess::model::Model::with_features(neurochess::model::FeatureSet::Gnu, &mut rng);
    let (p, q) = (tmp.join("v0.dcw"), tmp.join("m.dcw"));
    v0.save(&p, &[]).unwrap();
    m.save(&q, &[]).unwrap();
    assert_eq!(WeightFile::load(&p).unwrap().meta("arch"), Some("175-0-1"));
    assert_eq!(WeightFile::load(&q).unwrap().meta("arch"), Some("gnu58-165-gnu58"));
    let names = |path: &Path| WeightFile::load(path).unwrap().tensors.iter().map(|(n, m)| format!("{n} {}×{}", m.rows(), m.cols())).collect::<Vec<_>>();
    assert_eq!(names(&p), ["v.w2 175×1", "v.b2 1×1"]);
    assert_eq!(names(&q), ["m.w1 58×165", "m.b1 1×165", "m.w2 165×58", "m.b2 1×58"]);
    let (p2, q2) = (tmp.join("v0-again.dcw"), tmp.join("m-again.dcw"));
    resave::<neurochess::model::Value>(&p, &p2);
    resave::<neurochess::model::Model>(&q, &q2);
    assert_eq!(std::fs::read(&p).unwrap(), std::fs::read(&p2).unwrap(), "a linear V");
    assert_eq!(std::fs::read(&q).unwrap(), std::fs::read(&q2).unwrap(), "M");
}
