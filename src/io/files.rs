//! Reading a user-supplied file whole into memory: a regular file only, and never more than
//! a bound. Every loader of a whole file (weight files, datasets, opening suites, datagen's
//! output) goes through [`read_regular`], so a wrong path fails with a clear message instead
//! of blocking or exhausting memory. And where the shipped nets are ([`default_net_path`]).

use std::io::{self, Read};
use std::path::Path;

/// Reads the regular file `path` whole. Anything else is refused before it is read: a FIFO
/// would block `open` until some writer appears, a device such as `/dev/zero` never ends, a
/// directory cannot be read. Files above `max_bytes` are refused too. `what` names the
/// file's role in the errors ("net file", "dataset"); the caller adds the path.
///
/// The opened file is checked again (the path may have been swapped since the first check)
/// and read through `take(max_bytes + 1)`, so a file that grows while it is read still
/// cannot take more than the bound.
pub fn read_regular(path: &Path, max_bytes: u64, what: &str) -> io::Result<Vec<u8>> {
    let file = open_regular(path, max_bytes, what)?;
    let meta = file.metadata()?;
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(max_bytes.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_large(max_bytes, what));
    }
    Ok(bytes)
}

/// [`read_regular`] as UTF-8 text.
pub fn read_text(path: &Path, max_bytes: u64, what: &str) -> io::Result<String> {
    String::from_utf8(read_regular(path, max_bytes, what)?).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("not UTF-8 text (byte {}): a {what} is text", e.utf8_error().valid_up_to())))
}

/// Opens `path` to be streamed (read as it comes, never whole): a regular file or a FIFO
/// that a producer writes into (opening it waits for the producer). A directory, device or
/// socket is refused: `/dev/zero` would never end.
pub fn open_stream(path: &Path, what: &str) -> io::Result<std::fs::File> {
    check_stream(path, what)?;
    std::fs::File::open(path)
}

/// The checks of [`open_stream`] alone, for a stream another program opens (`xz -dc`).
pub fn check_stream(path: &Path, what: &str) -> io::Result<()> {
    let t = std::fs::metadata(path)?.file_type();
    #[cfg(unix)]
    let fifo = std::os::unix::fs::FileTypeExt::is_fifo(&t);
    #[cfg(not(unix))]
    let fifo = false;
    if !(t.is_file() || fifo) {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("{}, not a {what} (a regular file or a FIFO)", kind_of(&t))));
    }
    Ok(())
}

/// Opens the regular file `path` (of at most `max_bytes`) for reading, with the checks of
/// [`read_regular`], for callers that read only part of it.
pub fn open_regular(path: &Path, max_bytes: u64, what: &str) -> io::Result<std::fs::File> {
    check(&std::fs::metadata(path)?, max_bytes, what)?;
    let file = open_nonblocking(path)?;
    check(&file.metadata()?, max_bytes, what)?;
    Ok(file)
}

fn check(meta: &std::fs::Metadata, max_bytes: u64, what: &str) -> io::Result<()> {
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{}, not a regular file: a {what} is read from a regular file only", kind_of(&meta.file_type())),
        ));
    }
    if meta.len() > max_bytes {
        return Err(too_large(max_bytes, what));
    }
    Ok(())
}

fn too_large(max_bytes: u64, what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("larger than {}, the most a {what} may hold", human(max_bytes)))
}

/// `1 GiB`, `256 MiB`, or plain bytes.
fn human(n: u64) -> String {
    match n {
        n if n >= 1 << 30 && n % (1 << 30) == 0 => format!("{} GiB", n >> 30),
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n => format!("{n} bytes"),
    }
}

#[cfg(unix)]
/// What a file that is not a regular one is, for an error: "a FIFO (named pipe)", "a directory", …
pub fn kind_of(t: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "a special file"
    }
}

#[cfg(not(unix))]
pub fn kind_of(t: &std::fs::FileType) -> &'static str {
    if t.is_dir() {
        "a directory"
    } else {
        "a special file"
    }
}

/// [`read_regular`] of a file the program keeps in its own output folder (a journal, a curve's
/// points), refused when it is a symbolic link: what it appends there must not land outside
/// the folder (see [`Place::Own`]).
pub fn read_own(path: &Path, max_bytes: u64, what: &str) -> io::Result<Vec<u8>> {
    if std::fs::symlink_metadata(path)?.file_type().is_symlink() {
        return Err(own_link(what));
    }
    read_regular(path, max_bytes, what)
}

/// The length of `bytes` (the content of the program's own line-by-line file `path`) up to
/// its last line end. A last line without one was cut short by a kill: that record never
/// happened, so the file is cut back to the line end, and the next append starts clean.
pub fn cut_torn_line(path: &Path, bytes: &[u8], what: &str) -> io::Result<usize> {
    let whole = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    if whole < bytes.len() {
        let f = open_append(path, what, Place::Own)?;
        f.set_len(whole as u64)?;
        f.sync_all()?;
    }
    Ok(whole)
}

fn own_link(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, format!("a symbolic link: a {what} is written in its own folder, never through a link (remove the link)"))
}

/// Where a file opened by [`open_append`] may be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// A file the program keeps in its own output folder (a tournament's journal, a curve's
    /// points): a symbolic link there is refused, since appending through it writes outside
    /// the folder the user named.
    Own,
    /// A file the user named (a PGN to append games to): a link is followed.
    Named,
}

/// Opens `path` for appending, creating it when absent: a regular file only (a FIFO would
/// block, a device swallow or feed what is written), and with [`Place::Own`] never through a
/// symbolic link. `what` names the file's role in the errors; the caller adds the path.
pub fn open_append(path: &Path, what: &str, place: Place) -> io::Result<std::fs::File> {
    let refuse = |why: String| io::Error::new(io::ErrorKind::InvalidInput, why);
    let link_meta = match std::fs::symlink_metadata(path) {
        Ok(m) => Some(m),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    if place == Place::Own && link_meta.as_ref().is_some_and(|m| m.file_type().is_symlink()) {
        return Err(own_link(what));
    }
    if let Some(m) = &link_meta {
        let m = if m.file_type().is_symlink() { std::fs::metadata(path)? } else { m.clone() };
        if !m.is_file() {
            return Err(refuse(format!("{}, not a regular file: a {what} is a regular file only", kind_of(&m.file_type()))));
        }
    }
    let mut o = std::fs::OpenOptions::new();
    o.append(true).create(true);
    #[cfg(all(target_os = "linux", any(target_arch = "x86_64", target_arch = "x86", target_arch = "aarch64", target_arch = "arm", target_arch = "riscv64")))]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(0o4000); // O_NONBLOCK: a FIFO swapped in since the check opens at once.
    }
    let file = o.open(path)?;
    let opened = file.metadata()?;
    if !opened.is_file() {
        return Err(refuse(format!("{}, not a regular file: a {what} is a regular file only", kind_of(&opened.file_type()))));
    }
    if place == Place::Own && std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(own_link(what));
    }
    Ok(file)
}

/// Whether `a` and `b` name the same existing file (the same device and inode on Unix,
/// else the same canonical path): an output that is also an input is refused before it is
/// opened for writing. A path that does not exist is no file, so `false`.
pub fn same_file(a: &Path, b: &Path) -> bool {
    let (Ok(ma), Ok(mb)) = (std::fs::metadata(a), std::fs::metadata(b)) else { return false };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        ma.dev() == mb.dev() && ma.ino() == mb.ino()
    }
    #[cfg(not(unix))]
    {
        let _ = (ma, mb);
        matches!((std::fs::canonicalize(a), std::fs::canonicalize(b)), (Ok(x), Ok(y)) if x == y)
    }
}

/// Opens for reading without blocking where the platform allows: should a FIFO replace the
/// checked path, `open` returns at once and the second check refuses it. On a regular file
/// the flag changes nothing.
fn open_nonblocking(path: &Path) -> io::Result<std::fs::File> {
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    #[cfg(all(target_os = "linux", any(target_arch = "x86_64", target_arch = "x86", target_arch = "aarch64", target_arch = "arm", target_arch = "riscv64")))]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // O_NONBLOCK on these architectures (the kernel's generic value).
        o.custom_flags(0o4000);
    }
    o.open(path)
}

/// Where the shipped nets are looked for when no file is given: `data/nets/FILE` under the
/// working directory, beside the executable's build tree, then under the source tree.
pub fn default_net_path(file: &str) -> Option<std::path::PathBuf> {
    let mut dirs = vec![std::path::PathBuf::from("data/nets")];
    if let Ok(exe) = std::env::current_exe() {
        if let Some(d) = exe.parent() {
            dirs.push(d.join("../../data/nets"));
        }
    }
    dirs.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("data/nets"));
    dirs.into_iter().map(|d| d.join(file)).find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_files_only_and_bounded() {
        let dir = std::env::temp_dir().join(format!("deepchess-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("x.bin");
        std::fs::write(&f, b"hello").unwrap();
        assert_eq!(read_regular(&f, 5, "test file").unwrap(), b"hello");
        let e = read_regular(&f, 4, "test file").unwrap_err().to_string();
        assert!(e.contains("larger than 4 bytes") && e.contains("test file"), "{e}");
        let e = read_regular(&dir, 1 << 20, "test file").unwrap_err().to_string();
        assert!(e.contains("a directory, not a regular file"), "{e}");
        if Path::new("/dev/zero").exists() {
            let e = read_regular(Path::new("/dev/zero"), 1 << 30, "test file").unwrap_err().to_string();
            assert!(e.contains("character device"), "{e}");
        }
        assert_eq!(read_regular(&dir.join("nope"), 1, "x").unwrap_err().kind(), io::ErrorKind::NotFound);
        assert!(same_file(&f, &dir.join(".").join("x.bin")) && !same_file(&f, &dir) && !same_file(&f, &dir.join("nope")));
        assert_eq!(human(1 << 30), "1 GiB");
        assert_eq!(human(256 << 20), "256 MiB");
        // Appending: a new file is created; a link is followed only for a named file.
        let log = dir.join("log.txt");
        std::io::Write::write_all(&mut open_append(&log, "log", Place::Own).unwrap(), b"a").unwrap();
        std::io::Write::write_all(&mut open_append(&log, "log", Place::Own).unwrap(), b"b").unwrap();
        assert_eq!(std::fs::read(&log).unwrap(), b"ab");
        #[cfg(unix)]
        {
            let link = dir.join("link.txt");
            std::os::unix::fs::symlink(&log, &link).unwrap();
            let e = open_append(&link, "journal", Place::Own).unwrap_err().to_string();
            assert!(e.contains("symbolic link") && e.contains("journal"), "{e}");
            assert!(open_append(&link, "PGN file", Place::Named).is_ok());
            std::os::unix::fs::symlink("/dev/null", dir.join("null")).unwrap();
            let e = open_append(&dir.join("null"), "PGN file", Place::Named).unwrap_err().to_string();
            assert!(e.contains("character device"), "{e}");
        }
        assert!(open_append(&dir, "log", Place::Named).unwrap_err().to_string().contains("a directory"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
