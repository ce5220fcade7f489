//! Autograd: the tape of a forward pass (`tape`), its backward pass, one `match` arm per
//! op (`backward`), and the store of parameters and their gradients (`params`).

pub mod backward;
pub mod params;
pub mod tape;

use std::sync::Mutex;
use tape::Tape;

/// Tapes kept between steps by [`with_tape`].
static TAPES: Mutex<Vec<Tape>> = Mutex::new(Vec::new());

/// Runs `f` on an empty tape taken from a global pool and returns the tape (with its
/// buffers) to the pool: a trainer whose threads or steps come and go records each step on
/// buffers a previous one already allocated and faulted in, instead of a new tape's.
pub fn with_tape<R>(f: impl FnOnce(&mut Tape) -> R) -> R {
    let mut tape = TAPES.lock().ok().and_then(|mut p| p.pop()).unwrap_or_default();
    tape.reset();
    let r = f(&mut tape);
    if let Ok(mut p) = TAPES.lock() {
        p.push(tape);
    }
    r
}
