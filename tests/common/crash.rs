//! What the crash tests compare: a training run's folder as files (relative path → bytes),
//! less what measures the wall clock, and the `deepchess train` command they kill.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

/// `deepchess train ARGS --out OUT [--resume]`, with no failpoint inherited.
pub fn train(args: &[String], out: &Path, resume: bool) -> Command {
    let mut c = super::command();
    c.arg("train").args(args).args(["--out", out.to_str().unwrap()]);
    if resume {
        c.arg("--resume");
    }
    c.env_remove("DEEPCHESS_FAILPOINT");
    c
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Every file under `dir` (relative path → bytes), in comparable form: log.csv without its
/// last two columns (seconds and samples per second measure the wall clock), results.md
/// reduced to its table rows (its title names the folder, its last line the wall time),
/// weight files without their `made.*` header keys (the command names the run's folder;
/// tests/io_provenance.rs checks what they hold).
pub fn outputs(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, m: &mut BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let path = e.unwrap().path();
            if path.is_dir() {
                walk(root, &path, m);
                continue;
            }
            let rel = path.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            let bytes = std::fs::read(&path).unwrap();
            let text = || String::from_utf8(bytes.clone()).unwrap();
            let kept = match path.file_name().unwrap().to_str().unwrap() {
                "log.csv" => text().lines().map(|l| l.rsplitn(3, ',').nth(2).unwrap().to_string() + "\n").collect::<String>().into_bytes(),
                "results.md" => text().lines().filter(|l| l.starts_with('|')).map(|l| l.to_string() + "\n").collect::<String>().into_bytes(),
                n if n.ends_with(".dcw") => {
                    let mut wf = deepchess::tensor::WeightFile::from_bytes(&bytes, n).unwrap();
                    wf.meta.retain(|(k, _)| !k.starts_with("made."));
                    wf.to_bytes()
                }
                _ => bytes,
            };
            m.insert(rel, kept);
        }
    }
    let mut m = BTreeMap::new();
    walk(dir, dir, &mut m);
    m
}

/// `dir` holds what the uninterrupted run left in `reference`, and no temporary; `what`
/// says which run for the failure message.
pub fn assert_same_outputs(reference: &Path, dir: &Path, what: &str) {
    let (want, got) = (outputs(reference), outputs(dir));
    let left: Vec<_> = got.keys().filter(|n| n.ends_with(".tmp")).collect();
    assert!(left.is_empty(), "{what}: temporaries left behind: {left:?}");
    assert_eq!(want.keys().collect::<Vec<_>>(), got.keys().collect::<Vec<_>>(), "{what}: not the same files");
    for (name, bytes) in &want {
        assert!(got[name] == *bytes, "{what}: {name} differs from the uninterrupted run's");
    }
}
