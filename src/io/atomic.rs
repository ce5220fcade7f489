//! Atomic writes: a file is replaced whole or not at all, whatever kills the process, and a
//! failpoint the crash tests aim kills with.

use std::io::Write;
use std::path::Path;

/// Writes `bytes` to `path` atomically: a fresh temporary sibling, fsync, rename over `path`,
/// fsync of the folder. A kill never leaves a half-written `path`.
///
/// The temporary's name carries the process id and a random nonce and is created exclusively
/// (`create_new`, which never follows a symbolic link), so a file or link planted in the folder
/// can neither be overwritten nor redirect the write. Temporaries left by killed writers of the
/// same `path` are removed first (their process is gone), so resumed runs do not pile them up.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let name = path.file_name().ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "no file name"))?;
    let name = name.to_string_lossy();
    remove_stale_temporaries(path, &name);
    let (tmp, mut f) = create_temporary(path, &name, nonce)?;
    let result = (|| {
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        failpoint("before-rename", path);
        std::fs::rename(&tmp, path)?;
        // The rename itself is durable only once the folder is synced; not every platform
        // can open a folder, so this is best effort.
        if let Some(dir) = path.parent().map(|d| if d.as_os_str().is_empty() { Path::new(".") } else { d }) {
            if let Ok(d) = std::fs::File::open(dir) {
                let _ = d.sync_all();
            }
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Creates `path`'s temporary sibling exclusively: a name already taken (by a file or a
/// link, which `create_new` never follows) is passed over for the next nonce.
fn create_temporary(path: &Path, name: &str, mut nonce: impl FnMut() -> u64) -> std::io::Result<(std::path::PathBuf, std::fs::File)> {
    let mut attempt = 0;
    loop {
        let tmp = path.with_file_name(format!(".{name}.{}.{:016x}.tmp", std::process::id(), nonce()));
        match std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 8 => attempt += 1,
            Err(e) => return Err(e),
        }
    }
}

/// 64 random bits from the standard library's per-process hash keys (seeded by the OS).
fn nonce() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos()));
    h.finish()
}

/// Removes `.NAME.PID.NONCE.tmp` (and the older `NAME.PID.tmp`) siblings of `path` whose
/// writer process no longer exists. Only where `/proc` tells which processes live; a live
/// writer's temporary is never touched, nor anything that does not match the pattern.
fn remove_stale_temporaries(path: &Path, name: &str) {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let file = e.file_name();
        let Some(file) = file.to_str() else { continue };
        let pid = if let Some(rest) = file.strip_prefix(&format!(".{name}.")).and_then(|r| r.strip_suffix(".tmp")) {
            match rest.split_once('.') {
                Some((pid, hex)) if hex.len() == 16 && hex.bytes().all(|b| b.is_ascii_hexdigit()) => pid,
                _ => continue,
            }
        } else if let Some(pid) = file.strip_prefix(&format!("{name}.")).and_then(|r| r.strip_suffix(".tmp")) {
            pid
        } else {
            continue;
        };
        let Ok(pid) = pid.parse::<u32>() else { continue };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Crash-safety tests: `DEEPCHESS_FAILPOINT=before-rename:N` aborts the process (as `kill -9`
/// would: no destructors, no flush) just before the N-th atomic rename, after the temporary
/// is written and synced, naming the file on stderr; `DEEPCHESS_FAILPOINT=trace` names every
/// rename on stderr (`failpoint rename N PATH`), so a test learns a run's writes in order.
/// Unset, it costs one cached environment lookup.
pub fn failpoint(point: &str, path: &Path) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::OnceLock;
    static SPEC: OnceLock<Option<(String, usize)>> = OnceLock::new();
    static HITS: AtomicUsize = AtomicUsize::new(0);
    let spec = SPEC.get_or_init(|| {
        let v = std::env::var("DEEPCHESS_FAILPOINT").ok()?;
        if v == "trace" {
            return Some((v, 0));
        }
        let (p, n) = v.split_once(':')?;
        Some((p.to_string(), n.parse().ok()?))
    });
    match spec {
        Some((p, 0)) if p == "trace" => {
            let n = HITS.fetch_add(1, Ordering::SeqCst) + 1;
            eprintln!("failpoint rename {n} {}", path.display());
        }
        Some((p, n)) if p == point && HITS.fetch_add(1, Ordering::SeqCst) + 1 == *n => {
            eprintln!("failpoint {point}:{n}: aborting before the rename of {}", path.display());
            std::process::abort();
        }
        _ => {}
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::create_temporary;

    /// A link planted at the very name the writer picks is passed over, never written
    /// through; so is a plain file.
    #[test]
    fn a_planted_temporary_name_is_never_written_through() {
        let dir = std::env::temp_dir().join(format!("deepchess-planted-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let victim = dir.join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        let target = dir.join("out.bin");
        let name = |n: u64| dir.join(format!(".out.bin.{}.{n:016x}.tmp", std::process::id()));
        std::os::unix::fs::symlink(&victim, name(1)).unwrap();
        std::fs::write(name(2), b"someone else's").unwrap();
        let mut nonces = [1u64, 2, 3].into_iter();
        let (tmp, mut f) = create_temporary(&target, "out.bin", || nonces.next().unwrap()).unwrap();
        std::io::Write::write_all(&mut f, b"new").unwrap();
        assert_eq!(tmp, name(3));
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        assert_eq!(std::fs::read(name(2)).unwrap(), b"someone else's");
        // Every name taken: an error, nothing written.
        let result = create_temporary(&target, "out.bin", || 1);
        assert_eq!(result.unwrap_err().kind(), std::io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
