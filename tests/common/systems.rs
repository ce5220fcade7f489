//! The trainable systems as the built program lists them, and their smoke runs: what the
//! tests that cover every system iterate, so that a system joins them by its registry line
//! alone (`tests/house_fake_system.rs` runs them on a scratch crate's new system).

use super::{deepchess, text, TempDir};

/// Narrows the systems to a comma list of names (a scratch crate's tests run on its new
/// system alone).
const ONLY: &str = "DEEPCHESS_TEST_SYSTEMS";

/// The systems `deepchess train --help` lists, in the registry's order, less those
/// `DEEPCHESS_TEST_SYSTEMS` leaves out.
pub fn names() -> Vec<String> {
    let o = deepchess(&["train", "--help"]);
    let help = text(&o.stdout);
    assert!(o.status.success(), "{help}{}", text(&o.stderr));
    let (_, list) = help.split_once("Systems (--system NAME):\n").unwrap_or_else(|| panic!("no list of systems in:\n{help}"));
    let all: Vec<String> = list.lines().map_while(|l| l.strip_prefix("  ")).filter_map(|l| l.split_whitespace().next()).map(String::from).collect();
    assert!(!all.is_empty(), "no systems in:\n{help}");
    match std::env::var(ONLY) {
        Ok(only) => {
            let keep: Vec<&str> = only.split(',').map(str::trim).collect();
            let kept: Vec<String> = all.into_iter().filter(|n| keep.contains(&n.as_str())).collect();
            assert!(!kept.is_empty(), "{ONLY}={only} names none of the systems");
            kept
        }
        Err(_) => all,
    }
}

/// Whether `DEEPCHESS_TEST_SYSTEMS` narrows the systems (then counts over the whole
/// registry do not hold).
pub fn narrowed() -> bool {
    std::env::var_os(ONLY).is_some()
}

/// A system's smoke run: the tiny run the system names, its inputs written by the program
/// into a folder kept while this lives.
pub struct Smoke {
    /// The system's name (a test may add a variant's words to it).
    pub name: String,
    /// The arguments after `deepchess train`, `--out` and `--resume` aside.
    pub args: Vec<String>,
    _inputs: TempDir,
}

/// `name`'s smoke run (`deepchess train --system NAME --smoke-inputs DIR`).
pub fn smoke(name: &str) -> Smoke {
    let dir = TempDir::new(&format!("smoke-{name}"));
    let o = deepchess(&["train", "--system", name, "--smoke-inputs", dir.path().to_str().unwrap()]);
    assert!(o.status.success(), "{name}: no smoke run: {}", text(&o.stderr));
    let args: Vec<String> = text(&o.stdout).lines().map(String::from).collect();
    assert!(args.windows(2).any(|w| w[0] == "--system" && w[1] == name), "{name}: {args:?}");
    Smoke { name: name.to_string(), args, _inputs: dir }
}
