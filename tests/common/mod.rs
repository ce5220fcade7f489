//! Helpers shared by the integration tests: search runs, mates, random games, the shipped
//! net, and temporary folders that clean up after themselves.
#![allow(dead_code)]

pub mod crash;
pub mod session;
pub mod systems;

use deepchess::chess::{Game, Move, Position};
use deepchess::deepchess::infer::{Distilled, NetComparator};
use deepchess::eval::Comparator;
use deepchess::search::{Limits, SearchResult, Searcher};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The built program's path (for a match's `--exe`, an engine's command line).
pub fn exe() -> &'static str {
    env!("CARGO_BIN_EXE_deepchess")
}

/// The one way the tests start the program: the built `deepchess` in the crate's folder
/// (where the default data paths are), without a failpoint the test process may have in its
/// environment (a test that wants one sets it on the command). `tests/house_layering.rs`
/// refuses the binary's path anywhere else in the tests.
pub fn command() -> std::process::Command {
    let mut c = std::process::Command::new(exe());
    c.env_remove("DEEPCHESS_FAILPOINT").current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

/// The one way the tests run the program: the built `deepchess` with `args`, in the crate's
/// folder (where the default data paths are), without a failpoint the test process may have
/// in its environment; waits for it.
pub fn deepchess<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> std::process::Output {
    command().args(args).output().unwrap()
}

/// Bytes a command printed, as text.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A fresh, empty folder `deepchess-NAME-PID-N` under the system's temporary folder, removed
/// with everything in it when the guard is dropped, which unwinding does when an assertion
/// fails. The process id and a per-process counter keep parallel tests and concurrent test
/// runs apart.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::SeqCst);
        let dir = std::env::temp_dir().join(format!("deepchess-{name}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
        TempDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    pub fn join(&self, rel: impl AsRef<Path>) -> PathBuf {
        self.0.join(rel)
    }
}

impl std::ops::Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for TempDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The 30-game sample (tests/data/pgn/sf15-sample.pgn) as the dataset folder `dir/ds`, built
/// by `deepchess data` as a user would: every quiet position, a fifth of the games held out.
pub fn sample_dataset(dir: &Path) -> PathBuf {
    let ds = dir.join("ds");
    let src = format!("{}/tests/data/pgn/sf15-sample.pgn", env!("CARGO_MANIFEST_DIR"));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_deepchess"))
        .args(["data", "--pgn", &src, "--out", ds.to_str().unwrap(), "--per-game", "0", "--valid-per-mille", "200", "--quiet"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    ds
}

/// Seed 001's labelled set for tests, as `dir/labels.csv`: every position after ply 10 of the
/// sample games (draws included), scored by material (an engine's scores stood in for).
pub fn sample_labels(dir: &Path) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/pgn/sf15-sample.pgn");
    let path = dir.join("labels.csv");
    deepchess::dbn::data::smoke_labels(&src, &path).unwrap();
    path
}

/// Every position of the sample's decisive games, as `dir/all/train.dcds` (seed 003's corpus
/// for tests), built by `deepchess data` as a user would.
pub fn sample_corpus(dir: &Path) -> PathBuf {
    let out = dir.join("all");
    let src = format!("{}/tests/data/pgn/sf15-sample.pgn", env!("CARGO_MANIFEST_DIR"));
    let r = std::process::Command::new(env!("CARGO_BIN_EXE_deepchess"))
        .args(["data", "--pgn", &src, "--per-game", "0", "--skip-plies", "0", "--keep-captures", "--valid-per-mille", "0", "--quiet", "--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    out.join("train.dcds")
}

/// Searches `game` within `limits`, never stopped from outside.
pub fn run<C: Comparator>(s: &mut Searcher<C>, game: &Game, limits: Limits) -> SearchResult {
    s.search(game, &limits, Duration::ZERO, Arc::new(AtomicBool::new(false)), &mut |_| {})
}

pub fn uci(pos: &Position, m: &str) -> Move {
    pos.parse_uci(m).unwrap()
}

/// (FEN, mate in N, the mating first move) — all checked with Stockfish 15.1.
pub const MATES: &[(&str, i32, &str)] = &[
    ("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", 1, "a1a8"),
    ("r5k1/8/8/8/8/8/5PPP/6K1 b - - 0 1", 1, "a8a1"),
    ("7k/8/6K1/8/8/8/8/5Q2 w - - 0 1", 1, "f1f8"),
    ("r2qkb1r/pp2nppp/3p4/2pNN1B1/2BnP3/3P4/PPP2PPP/R2bK2R w KQkq - 1 1", 2, "d5f6"),
    ("6k1/pp4p1/2p5/2bp4/8/P5Pb/1P3rrP/2BRRN1K b - - 0 1", 2, "g2g1"),
    ("r1b1kb1r/pppp1ppp/5q2/4n3/3KP3/2N3PN/PPP4P/R1BQ1B1R b kq - 0 1", 3, "f8c5"),
    ("2r3k1/p4p2/3Rp2p/1p2P1pK/8/1P4P1/P3Q2P/1q6 b - - 0 1", 3, "b1g6"),
];

/// A random legal game prefix from a seed (xorshift), for legality checks.
pub fn random_game(seed: u64, plies: usize) -> Game {
    let mut g = Game::default();
    let mut x = seed | 1;
    for _ in 0..plies {
        if g.ending().is_some() {
            break;
        }
        let moves = g.position().legal_moves();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let m = moves.as_slice()[(x % moves.len() as u64) as usize];
        g.play_unchecked(m);
    }
    g
}

/// A searcher with the shipped distilled net (data/nets/distilled.dcw).
pub fn shipped_searcher() -> Searcher<NetComparator<Distilled>> {
    let path = format!("{}/data/nets/distilled.dcw", env!("CARGO_MANIFEST_DIR"));
    let net = Distilled::load(std::path::Path::new(&path)).unwrap();
    Searcher::new(NetComparator::new(net, "distilled", 16), 8)
}
