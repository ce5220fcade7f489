//! The fuzzing harness shared by the fuzz tests: byte-level mutations of real samples, and
//! a runner that gives each input a time bound, turns a panic into a failing case (shrunk
//! and saved beside the test file), and prints what it tried.

#![allow(dead_code)]

use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::{FileFailurePersistence, TestCaseError, TestRunner};
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::fmt;
use std::panic::Location;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// One parse of one input; generous, since the machine may be busy (they take microseconds).
pub const PARSE_LIMIT: Duration = Duration::from_secs(1);
/// A whole case (parse and invariant checks); beyond it the case is taken for a hang.
pub const HANG_LIMIT: Duration = Duration::from_secs(20);

/// `DEEPCHESS_FUZZ_CASES` cases (default 300); failures are saved to
/// `<test file>.proptest-regressions` and replayed first.
fn config(source_file: &'static str) -> ProptestConfig {
    let cases = std::env::var("DEEPCHESS_FUZZ_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(300);
    ProptestConfig {
        source_file: Some(source_file),
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("proptest-regressions"))),
        ..ProptestConfig::with_cases(cases)
    }
}

/// Bytes that mean something to some parser, or to none.
pub const SPECIAL: &[u8] = b"\0\xFF\x80\xC3\xEF\xBB\xBF\n\r\t /-0123456789";

/// One byte-level edit; positions are taken modulo the length, so every edit applies.
#[derive(Clone, Debug)]
pub enum Edit {
    FlipBit(usize, u8),
    Set(usize, u8),
    Insert(usize, u8),
    Delete(usize, usize),
    /// A span (start, length) copied to another place.
    Duplicate(usize, usize, usize),
    Truncate(usize),
    /// This sample up to a cut, then another sample from a cut.
    Splice(usize, usize, usize),
}

/// Any byte, a special one, or one of the surface's own alphabet (which keeps the result
/// near the grammar, so that the parser gets past its first check more often).
pub fn byte(alphabet: &'static [u8]) -> impl Strategy<Value = u8> {
    prop_oneof![any::<u8>(), select(SPECIAL), select(alphabet)]
}

pub fn edit(alphabet: &'static [u8]) -> impl Strategy<Value = Edit> {
    let at = any::<usize>();
    prop_oneof![
        (at.clone(), 0..8u8).prop_map(|(i, b)| Edit::FlipBit(i, b)),
        (at.clone(), byte(alphabet)).prop_map(|(i, c)| Edit::Set(i, c)),
        (at.clone(), byte(alphabet)).prop_map(|(i, c)| Edit::Insert(i, c)),
        (at.clone(), 1..16usize).prop_map(|(i, n)| Edit::Delete(i, n)),
        (at.clone(), 1..40usize, at.clone()).prop_map(|(i, n, to)| Edit::Duplicate(i, n, to)),
        at.clone().prop_map(Edit::Truncate),
        (at.clone(), at.clone(), at).prop_map(|(o, i, j)| Edit::Splice(o, i, j)),
    ]
}

/// Sample `pick` with `edits` applied in turn; a splice takes its tail from another sample.
pub fn apply(samples: &[Vec<u8>], pick: usize, edits: &[Edit]) -> Vec<u8> {
    let mut b = samples[pick].clone();
    for e in edits {
        let n = b.len();
        let at = |i: usize| i % (n + 1);
        match *e {
            Edit::FlipBit(i, bit) if n > 0 => b[i % n] ^= 1 << bit,
            Edit::Set(i, c) if n > 0 => b[i % n] = c,
            Edit::Insert(i, c) => b.insert(at(i), c),
            Edit::Delete(i, len) => {
                let s = at(i);
                b.drain(s..(s + len).min(n));
            }
            Edit::Duplicate(i, len, to) => {
                let s = at(i);
                let span = b[s..(s + len).min(n)].to_vec();
                let to = at(to);
                b.splice(to..to, span);
            }
            Edit::Truncate(i) => b.truncate(at(i)),
            Edit::Splice(o, i, j) => {
                let other = &samples[o % samples.len()];
                b.truncate(at(i));
                b.extend_from_slice(&other[j % (other.len() + 1)..]);
            }
            _ => {}
        }
    }
    b
}

/// Input bytes, shown escaped when a case fails.
#[derive(Clone)]
pub struct Bytes(pub Vec<u8>);

impl fmt::Debug for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "b\"{}\"", self.0.escape_ascii())
    }
}

impl Bytes {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0).into_owned()
    }
}

/// A sample with one to three edits.
pub fn mutated(samples: &'static [Vec<u8>], alphabet: &'static [u8]) -> impl Strategy<Value = Bytes> {
    (0..samples.len(), prop::collection::vec(edit(alphabet), 1..=3))
        .prop_map(move |(pick, edits)| Bytes(apply(samples, pick, &edits)))
}

/// What a case did, for the tallies: accepted, or rejected for a reason (a FEN field, a
/// skip reason).
pub enum Outcome {
    Accepted,
    Rejected(String),
}

/// Runs `check` on each generated input, each on its own thread so that a hang fails the
/// case (with its input) instead of stalling the test binary; prints the tallies.
#[track_caller]
pub fn fuzz<S>(name: &str, strategy: S, check: fn(S::Value) -> Result<Outcome, TestCaseError>)
where
    S: Strategy,
    S::Value: Send + 'static,
{
    let accepted = Cell::new(0u64);
    let rejected = RefCell::new(BTreeMap::<String, u64>::new());
    let t = Instant::now();
    let result = TestRunner::new(config(Location::caller().file())).run(&strategy, |input| {
        let (tx, rx) = mpsc::channel();
        let worker = std::thread::spawn(move || {
            let _ = tx.send(check(input));
        });
        match rx.recv_timeout(HANG_LIMIT) {
            Ok(r) => {
                let _ = worker.join();
                match r? {
                    Outcome::Accepted => accepted.set(accepted.get() + 1),
                    Outcome::Rejected(why) => *rejected.borrow_mut().entry(why).or_default() += 1,
                }
                Ok(())
            }
            // The worker panicked: pass the panic on, for the runner to report and shrink.
            Err(mpsc::RecvTimeoutError::Disconnected) => match worker.join() {
                Err(panic) => std::panic::resume_unwind(panic),
                Ok(()) => Err(TestCaseError::fail("the check ended without a result")),
            },
            Err(mpsc::RecvTimeoutError::Timeout) => Err(TestCaseError::fail(format!("no answer within {HANG_LIMIT:?}"))),
        }
    });
    let rejected = rejected.into_inner();
    let total_rejected: u64 = rejected.values().sum();
    let reasons: Vec<String> = rejected.iter().map(|(why, n)| format!("{why}: {n}")).collect();
    println!(
        "{name}: {} inputs in {:.2?}: {} accepted, {total_rejected} rejected ({})",
        accepted.get() + total_rejected,
        t.elapsed(),
        accepted.get(),
        reasons.join(", ")
    );
    if let Err(e) = result {
        panic!("{name}: {e}");
    }
}

/// Calls `parse`, failing the case if it took longer than `PARSE_LIMIT`.
pub fn timed<T>(what: &str, parse: impl FnOnce() -> T) -> Result<T, TestCaseError> {
    let t = Instant::now();
    let out = parse();
    let took = t.elapsed();
    if took > PARSE_LIMIT {
        return Err(TestCaseError::fail(format!("{what} took {took:?}")));
    }
    Ok(out)
}
