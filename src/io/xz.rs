//! xz streams through the `xz` program (present on every Debian and Ubuntu; the crate links
//! no compressor): a decompressing reader for streamed PGN, a bounded decompression of a
//! whole file, and compression with settings whose output is the same on every run.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Stdio};

/// The stdout of `xz -dc PATH`; a failed decompression becomes a read error at the end.
pub struct XzPipe {
    child: Child,
    out: ChildStdout,
    done: bool,
}

/// Streams `path` decompressed. A missing file fails here with the path, rather than later
/// with xz's exit status.
pub fn decompress(path: &Path) -> io::Result<XzPipe> {
    super::files::check_stream(path, "xz file")?;
    let mut child = Command::new("xz").arg("-dc").arg("--").arg(path).stdout(Stdio::piped()).spawn()?;
    let out = child.stdout.take().ok_or_else(|| io::Error::other("xz: no stdout"))?;
    Ok(XzPipe { child, out, done: false })
}

impl Read for XzPipe {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.out.read(buf)?;
        if n == 0 && !buf.is_empty() && !self.done {
            self.done = true;
            let status = self.child.wait()?;
            if !status.success() {
                return Err(io::Error::other(format!("xz -dc failed: {status}")));
            }
        }
        Ok(n)
    }
}

impl Drop for XzPipe {
    fn drop(&mut self) {
        // Reap the child even when the reader stops early.
        if !self.done {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// `file` (already checked: its bytes are xz's input) decompressed whole, at most
/// `max_bytes` of it; `what` names the file's role in the errors (the caller adds the path).
pub fn decompress_bounded(file: File, max_bytes: u64, what: &str) -> Result<Vec<u8>, String> {
    let mut child = Command::new("xz")
        .args(["-dc"])
        .stdin(Stdio::from(file))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run xz to decompress it: {e}"))?;
    let mut out = Vec::new();
    let read = child.stdout.take().map(|s| s.take(max_bytes + 1).read_to_end(&mut out));
    if out.len() as u64 > max_bytes {
        let _ = child.kill();
        let _ = child.wait();
        return Err(format!("decompresses to more than {} MiB, the most a {what} may hold", max_bytes >> 20));
    }
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut err);
    }
    let status = child.wait().map_err(|e| format!("xz: {e}"))?;
    if let Some(Err(e)) = read {
        return Err(format!("reading xz's output: {e}"));
    }
    if !status.success() {
        let err = super::text::cut(err.trim(), 60);
        return Err(format!("xz -dc failed ({status}): {err} (not an xz file, or corrupt)"));
    }
    Ok(out)
}

/// Runs `xz ARGS` on `input` and returns its output.
pub fn compress(args: &[&str], input: Vec<u8>) -> Result<Vec<u8>, String> {
    let mut child = Command::new("xz")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run xz to compress it: {e}"))?;
    let mut stdin = child.stdin.take().ok_or("xz: no stdin")?;
    // Fed from a thread: xz writes while it reads, and both pipes are finite.
    let feeder = std::thread::spawn(move || stdin.write_all(&input));
    let mut out = Vec::new();
    let read = child.stdout.take().ok_or("xz: no stdout")?.read_to_end(&mut out);
    let fed = feeder.join().map_err(|_| "xz: the feeding thread panicked".to_string())?;
    let status = child.wait().map_err(|e| format!("xz: {e}"))?;
    read.map_err(|e| format!("reading xz's output: {e}"))?;
    fed.map_err(|e| format!("feeding xz: {e}"))?;
    if !status.success() {
        return Err(format!("xz {} failed ({status})", args.join(" ")));
    }
    Ok(out)
}
