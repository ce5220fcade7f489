//! Floor 0: the process's dealings with the outside, written once for every floor above:
//! atomic writes ([`atomic`]), bounded reads of regular files ([`files`]), xz streams
//! ([`xz`]), the checksum of every file format ([`checksum`]), text from outside made safe
//! to show ([`text`]), what made a file ([`provenance`]), the command line's flags ([`args`]: each subcommand and each
//! trainable system declares its own), and memory in large pages for the search's tables ([`pages`]). It knows nothing of chess or numerics.

pub mod args;
pub mod atomic;
pub mod checksum;
pub mod files;
pub mod pages;
pub mod provenance;
pub mod text;
pub mod xz;

pub use atomic::write_atomic;
pub use checksum::fnv1a64;
pub use files::{open_append, open_regular, open_stream, read_regular, read_text, same_file, Place};

/// Ends the process after a failed write to stdout (the crate's `print!` macros, src/lib.rs):
/// once the reader of a pipe is gone nothing more can be said, so the process ends quietly
/// with status 141, as a Unix tool ended by SIGPIPE does; another write error is reported
/// on stderr and ends it with status 1.
#[doc(hidden)]
pub fn stdout_failed(e: std::io::Error) -> ! {
    if e.kind() != std::io::ErrorKind::BrokenPipe {
        eprintln!("error: writing to stdout: {e}");
        std::process::exit(1);
    }
    std::process::exit(141)
}
