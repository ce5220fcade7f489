//! What made a file. The command line program records, once, the command it was given, the
//! program's version and the numeric kernel in use ([`record`]); the data readers add each
//! input file they open, with its size and checksum ([`input`]); every weight file and
//! dataset saved afterwards carries these in its header as `made.*` keys ([`header`]), and
//! `deepchess show FILE` prints them, the command first: the one command that makes the file
//! again (on the same kernel: the kernels' float sums differ in their last bits).
//!
//! `--resume` is left out of the recorded command: a resumed run ends with the bytes of an
//! uninterrupted one (tests/train_crash_systems.rs), so the command without it makes the file.
//! Nothing is recorded in a process that did not call [`record`] (tests, library users):
//! their files carry no `made.*` keys.

use std::path::Path;
use std::sync::{Mutex, OnceLock};

/// The header keys, in the order written.
pub const COMMAND: &str = "made.command";
pub const VERSION: &str = "made.version";
pub const KERNEL: &str = "made.kernel";
pub const PRECISION: &str = "made.precision";
/// Every setting of the run as resolved (`key=value; …`, the defaults spelled out): what the
/// command meant when it ran, should a later program change a default.
pub const SETTINGS: &str = "made.settings";
pub const INPUTS: &str = "made.inputs";
/// Written by hand only: how keys written after the file was made were checked.
pub const NOTE: &str = "made.note";

struct Made {
    command: String,
    version: String,
    kernel: String,
    /// The run's resolved settings, once the training run has them ([`settings`]).
    settings: Mutex<Option<String>>,
    /// The training products' precision: a run's `precision` setting, else f32.
    precision: Mutex<String>,
    /// `path size=N fnv64=HEX`, in the order first opened, each path once.
    inputs: Mutex<Vec<(String, String)>>,
}

static MADE: OnceLock<Made> = OnceLock::new();

/// A word as a POSIX shell reads it back: bare when it holds only safe characters, else in
/// single quotes (a quote inside written `'\''`).
pub fn shell_word(s: &str) -> String {
    let safe = !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b));
    if safe {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// The command `deepchess ARGS` as one line, `--resume` left out.
pub fn command_line(args: &[String]) -> String {
    let mut words = vec!["deepchess".to_string()];
    words.extend(args.iter().filter(|a| a.as_str() != "--resume").map(|a| shell_word(a)));
    words.join(" ")
}

/// Records this process's command (`args` after the program name), the crate's version and
/// the kernel's name. The first call wins; later ones change nothing.
pub fn record(args: &[String], kernel: &str) {
    let version = format!("deepchess {}{}", env!("CARGO_PKG_VERSION"), source_commit().map(|c| format!(", source commit {c}")).unwrap_or_default());
    let _ = MADE.set(Made { command: command_line(args), version, kernel: kernel.to_string(), settings: Mutex::new(None), precision: Mutex::new("f32".to_string()), inputs: Mutex::new(Vec::new()) });
}

/// The commit checked out in the source tree the program was built from, when that tree is
/// still there and is a git checkout (read from `.git` without running git; uncommitted
/// changes are not seen).
fn source_commit() -> Option<String> {
    let git = Path::new(env!("CARGO_MANIFEST_DIR")).join(".git");
    let read = |p: &Path| crate::io::read_text(p, 16 << 20, "git file").ok();
    let head = read(&git.join("HEAD"))?;
    let head = head.trim();
    let sha = match head.strip_prefix("ref: ") {
        None => head.to_string(),
        Some(r) => match read(&git.join(r)) {
            Some(s) => s.trim().to_string(),
            None => {
                let packed = read(&git.join("packed-refs"))?;
                packed.lines().find_map(|l| l.strip_suffix(r).map(|s| s.trim().to_string()))?
            }
        },
    };
    (sha.len() >= 12 && sha.bytes().all(|b| b.is_ascii_hexdigit())).then(|| sha[..12].to_string())
}

/// Records the run's settings as resolved (its `run.txt` lines: profile, seed, rates, …),
/// written into every file saved afterwards; a `precision` setting (DeepChess's `--precision
/// bf16`) becomes `made.precision`. Nothing happens before [`record`]; a later call replaces an
/// earlier one.
pub fn settings(pairs: &[(String, String)]) {
    let Some(made) = MADE.get() else { return };
    if let (Some((_, p)), Ok(mut precision)) = (pairs.iter().find(|(k, _)| k == "precision"), made.precision.lock()) {
        *precision = p.clone();
    }
    if let Ok(mut s) = made.settings.lock() {
        *s = Some(pairs.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("; "));
    }
}

/// Adds the file at `path` to the inputs of what this process saves (its size and FNV-1a 64
/// checksum), reading it once more in pieces: for a file streamed by its reader. Nothing
/// happens before [`record`], or for a path already added, or for a file that cannot be read
/// (its reader reports that).
pub fn input(path: &Path) {
    if known(path) != Some(false) {
        return;
    }
    if let Some((size, fnv)) = file_checksum(path) {
        input_hashed(path, size, fnv);
    }
}

/// [`input`] for a file whose bytes the caller holds: no second read.
pub fn input_bytes(path: &Path, bytes: &[u8]) {
    if known(path) == Some(false) {
        input_hashed(path, bytes.len() as u64, crate::io::fnv1a64(bytes));
    }
}

/// [`input`] for a file whose size and FNV-1a 64 the caller has computed.
pub fn input_hashed(path: &Path, size: u64, fnv: u64) {
    let Some(made) = MADE.get() else { return };
    let name = path.display().to_string();
    if let Ok(mut v) = made.inputs.lock() {
        if !v.iter().any(|(p, _)| *p == name) {
            v.push((name, format!("size={size} fnv64={fnv:016x}")));
        }
    }
}

/// Whether `path` is among the inputs already (`None`: nothing is recorded in this process).
fn known(path: &Path) -> Option<bool> {
    let made = MADE.get()?;
    let name = path.display().to_string();
    made.inputs.lock().ok().map(|v| v.iter().any(|(p, _)| *p == name))
}

/// A file's size and FNV-1a 64, read in 1 MB pieces.
fn file_checksum(path: &Path) -> Option<(u64, u64)> {
    use std::io::Read;
    let mut f = crate::io::open_regular(path, u64::MAX, "input file").ok()?;
    let (mut h, mut n) = (crate::io::checksum::FNV_OFFSET, 0u64);
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let k = f.read(&mut buf).ok()?;
        if k == 0 {
            break;
        }
        h = crate::io::checksum::fnv1a64_continue(h, &buf[..k]);
        n += k as u64;
    }
    Some((n, h))
}

/// The `made.*` keys for a header (empty before [`record`]).
pub fn header() -> Vec<(String, String)> {
    let Some(m) = MADE.get() else { return Vec::new() };
    let inputs = m.inputs.lock().map(|v| v.iter().map(|(p, s)| format!("{p} {s}")).collect::<Vec<_>>().join("; ")).unwrap_or_default();
    let mut h = vec![(COMMAND.to_string(), m.command.clone()), (VERSION.to_string(), m.version.clone()), (KERNEL.to_string(), m.kernel.clone()), (PRECISION.to_string(), m.precision.lock().map(|p| p.clone()).unwrap_or_else(|_| "f32".to_string()))];
    if let Some(settings) = m.settings.lock().ok().and_then(|s| s.clone()) {
        h.push((SETTINGS.to_string(), settings));
    }
    if !inputs.is_empty() {
        h.push((INPUTS.to_string(), inputs));
    }
    h
}

/// The entries of a `made.inputs` value, one per file. Entries are joined by "; " and each
/// ends in its `fnv64=HEX`, so a "; " inside a path does not split its entry.
pub fn input_entries(inputs: &str) -> Vec<String> {
    let ends_entry = |piece: &str| {
        piece.rsplit(' ').next().and_then(|w| w.strip_prefix("fnv64=")).is_some_and(|h| !h.is_empty() && h.bytes().all(|b| b.is_ascii_hexdigit()))
    };
    let mut out: Vec<String> = Vec::new();
    let mut open = false;
    for piece in inputs.split("; ") {
        match out.last_mut() {
            Some(last) if open => {
                last.push_str("; ");
                last.push_str(piece);
            }
            _ => out.push(piece.to_string()),
        }
        open = !ends_entry(piece);
    }
    out
}

/// `meta` with the `made.*` keys added where it has none of them (a file copied from another
/// run keeps what made it).
pub fn stamp(meta: &[(String, String)]) -> Vec<(String, String)> {
    let mut out = meta.to_vec();
    if !meta.iter().any(|(k, _)| k.starts_with("made.")) {
        out.extend(header());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_read_back_as_they_were_given() {
        assert_eq!(shell_word("--profile"), "--profile");
        assert_eq!(shell_word("runs/a b"), "'runs/a b'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
        assert_eq!(shell_word(""), "''");
        let args: Vec<String> = ["train", "--system", "dbn", "--resume", "--out", "x y"].iter().map(|s| s.to_string()).collect();
        assert_eq!(command_line(&args), "deepchess train --system dbn --out 'x y'");
    }

    #[test]
    fn input_entries_survive_separators_inside_paths() {
        let a = "data/a.csv size=3 fnv64=00000000000000ff";
        let b = "runs/x; y/b.csv size=10 fnv64=0123456789abcdef";
        let c = "odd; name; fnv64=; c size=1 fnv64=aa";
        assert_eq!(input_entries(&[a, b, c].join("; ")), vec![a, b, c]);
        assert_eq!(input_entries(a), vec![a]);
        // Text that never reaches an fnv64 field stays one entry rather than being lost.
        assert_eq!(input_entries("written by hand; no checksum"), vec!["written by hand; no checksum"]);
    }
}
