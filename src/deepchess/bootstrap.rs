//! The value student taught by its own search (beyond the paper; train phase `searched`):
//! positions of the training games, each searched by the student to a fixed depth, the
//! search's value the new target. What the search sees a few plies ahead (exchanges played
//! out, threats met) is compiled into the static value, as engines train a value on the
//! scores of their own deeper searches; the knowledge at the leaves is still DeepChess's.

use super::features::Features;
use super::infer::ValueStudent;
use super::model::ValueNet;
use crate::chess::{Color, Game};
use crate::eval::{ScoreComparator, CP_PER_LOGIT};
use crate::search::{Limits, Player, Score, Searcher};
use crate::train::log::Progress;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// Largest value a target takes, in logits (a mate, or a search that found the game
/// decided): past it the sigmoid of the target is 1 within 0.0003.
pub const MAX_TARGET: f32 = 8.0;

/// Transposition table of each labelling search, MB: cleared before each position (so a
/// label does not depend on which positions the thread searched before), small enough that
/// clearing it costs little beside a search of a few thousand nodes.
const HASH_MB: usize = 2;

/// Positions a labelling thread takes at a time: small enough that the threads finish a
/// chunk together, large enough that taking them costs nothing beside the searches.
const GRAIN: usize = 32;

/// Positions searched between two saves of [`search_values_kept`]'s file: about a minute
/// of searches at depth 8 on 2 cores, what a kill loses.
pub const CHUNK: usize = 20_000;

/// The search's value `v` (White's logit) mixed with the result of the position's game, as
/// probabilities: `lambda` · σ(v) + (1 − `lambda`) · [White won], back to a logit within
/// ±[`MAX_TARGET`]. `lambda` = 1 is the search's value alone; lower values add what the game's
/// end knew (its players saw further than the labelling search), as engines mix search
/// scores and game results in their value targets. The blend commutes with the colour
/// mirror: `blend_result(-v, !won, l) == -blend_result(v, won, l)`.
pub fn blend_result(v: f32, white_won: bool, lambda: f32) -> f32 {
    if lambda >= 1.0 {
        return v;
    }
    // In f64: near ±MAX_TARGET, 1 − p in f32 would keep three digits.
    let sigmoid = |x: f64| 1.0 / (1.0 + (-x).exp());
    let (l, result) = (f64::from(lambda), if white_won { 1.0 } else { 0.0 });
    let p = l * sigmoid(f64::from(v)) + (1.0 - l) * result;
    let m = f64::from(MAX_TARGET);
    let p = p.clamp(sigmoid(-m), sigmoid(m));
    (p / (1.0 - p)).ln().clamp(-m, m) as f32
}

/// `searched` (the labels of [`search_values`], in the order of the positions searched, some
/// left out) with each value blended with its game's result ([`blend_result`]); `drawn` is
/// every position searched, in order, with whether White won its game.
pub fn with_results(searched: Vec<(Features, f32)>, drawn: &[(Features, bool)], lambda: f32) -> Result<Vec<(Features, f32)>, String> {
    let mut rest = drawn.iter();
    searched
        .into_iter()
        .map(|(f, v)| match rest.find(|d| d.0 == f) {
            Some(&(_, won)) => Ok((f, blend_result(v, won, lambda))),
            None => Err("searched labels out of order with the positions drawn (a bug)".to_string()),
        })
        .collect()
}

/// The value of each position in `positions` (White's logit, within ±[`MAX_TARGET`]) by
/// a `depth`-ply search with `net` as its evaluation, on `threads` threads; a position the
/// search cannot start from (no legal move, or bits that make no legal position) is left
/// out. Each position is searched from a cleared table: the labels depend on neither the
/// order nor the number of threads.
pub fn search_values(net: &ValueNet, positions: &[Features], depth: u32, threads: usize, label: &str) -> Result<Vec<(Features, f32)>, String> {
    let mut prog = Progress::new(format!("[{label}] searching to depth {depth}"), positions.len());
    let out = search_part(net, positions, depth, threads, &mut prog, 0)?;
    prog.update(positions.len(), f64::NAN, None, "pos");
    prog.finish();
    Ok(out)
}

/// [`search_values`] kept in `path` as it goes ([`labels`]): the file is rewritten every
/// [`CHUNK`] positions, and a file left by an interrupted call with the same net and depth
/// is continued where it stopped (the positions must be the same, in the same order: the
/// caller draws them from a seed). A file of another net or depth is searched again; a
/// damaged one is refused, as it may hold hours of searches.
pub fn search_values_kept(net: &ValueNet, positions: &[Features], depth: u32, threads: usize, label: &str, path: &Path) -> Result<Vec<(Features, f32)>, String> {
    kept_in_chunks(net, positions, depth, threads, label, path, CHUNK)
}

fn kept_in_chunks(net: &ValueNet, positions: &[Features], depth: u32, threads: usize, label: &str, path: &Path, chunk: usize) -> Result<Vec<(Features, f32)>, String> {
    let labeller = fingerprint(net);
    let mut head = labels::Header { depth, labeller, drawn: 0 };
    let mut out = Vec::new();
    if path.exists() {
        let (h, kept) = labels::load(path).map_err(|e| format!("{e} (delete it to search again)"))?;
        if h.depth == depth && h.labeller == labeller && h.drawn as usize <= positions.len() {
            if !drawn_in_order(&kept, &positions[..h.drawn as usize]) {
                return Err(format!("{}: its examples are not the positions this run draws (a file of another run?); delete it to search again", path.display()));
            }
            if h.drawn as usize == positions.len() {
                eprintln!("[{label}] {} positions searched to depth {depth}, from {}", kept.len(), path.display());
                return Ok(kept);
            }
            eprintln!("[{label}] continuing {}: {} of {} positions searched", path.display(), h.drawn, positions.len());
            head.drawn = h.drawn;
            out = kept;
        } else {
            eprintln!(
                "[{label}] {} holds {} positions searched to depth {} by net {:016x}; asked: {} to depth {depth} by {labeller:016x}: searching again",
                path.display(),
                h.drawn,
                h.depth,
                h.labeller,
                positions.len()
            );
        }
    }
    let start = head.drawn as usize;
    let mut prog = Progress::new(format!("[{label}] searching to depth {depth}"), positions.len() - start);
    while (head.drawn as usize) < positions.len() {
        let from = head.drawn as usize;
        let to = (from + chunk.max(1)).min(positions.len());
        out.extend(search_part(net, &positions[from..to], depth, threads, &mut prog, from - start)?);
        head.drawn = to as u64;
        labels::save(path, &head, &out)?;
    }
    prog.update(positions.len() - start, f64::NAN, None, "pos");
    prog.finish();
    Ok(out)
}

/// Whether `kept` are positions of `drawn`, in its order (those without a legal move are
/// left out of `kept`).
fn drawn_in_order(kept: &[(Features, f32)], drawn: &[Features]) -> bool {
    let mut rest = drawn.iter();
    kept.iter().all(|(f, _)| rest.any(|d| d == f))
}

/// A net's fingerprint: FNV-1a 64 over its parameters' values, so labels know the net that
/// searched them.
pub fn fingerprint(net: &ValueNet) -> u64 {
    let p = &net.params;
    let bytes: Vec<u8> = p.ids().flat_map(|id| p.value(id).data().iter().flat_map(|v| v.to_le_bytes())).collect();
    crate::io::fnv1a64(&bytes)
}

/// The searched values of `positions`, in their order, threads taking [`GRAIN`] positions
/// at a time; `prog` is told of `before + done` positions.
fn search_part(net: &ValueNet, positions: &[Features], depth: u32, threads: usize, prog: &mut Progress, before: usize) -> Result<Vec<(Features, f32)>, String> {
    let threads = threads.clamp(1, 64);
    let (next, done) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let parts: Vec<Result<Vec<(usize, f32)>, String>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let (next, done) = (&next, &done);
                scope.spawn(move || -> Result<Vec<(usize, f32)>, String> {
                    let eval = ValueStudent::from_net(net)?;
                    let mut searcher = Searcher::new(ScoreComparator::new(eval), HASH_MB);
                    let stop = Arc::new(AtomicBool::new(false));
                    let mut out = Vec::new();
                    loop {
                        let from = next.fetch_add(GRAIN, Ordering::Relaxed);
                        if from >= positions.len() {
                            return Ok(out);
                        }
                        for (i, f) in positions.iter().enumerate().skip(from).take(GRAIN) {
                            if let Some(v) = searched(&mut searcher, f, depth, &stop) {
                                out.push((i, v));
                            }
                            done.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                })
            })
            .collect();
        // The calling thread reports progress until the workers finish.
        while handles.iter().any(|h| !h.is_finished()) {
            std::thread::sleep(Duration::from_millis(200));
            prog.update(before + done.load(Ordering::Relaxed), f64::NAN, None, "pos");
        }
        handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err("a labelling thread panicked".into()))).collect()
    });
    let mut all = Vec::with_capacity(positions.len());
    for p in parts {
        all.extend(p?);
    }
    all.sort_unstable_by_key(|e| e.0);
    Ok(all.into_iter().map(|(i, v)| (positions[i], v)).collect())
}

/// One position's searched value, White's logit; `None` when it has no legal move or its
/// bits make no legal position.
fn searched<P: Player>(searcher: &mut P, f: &Features, depth: u32, stop: &Arc<AtomicBool>) -> Option<f32> {
    let pos = f.to_position().ok()?;
    if pos.legal_moves().is_empty() {
        return None;
    }
    searcher.new_game();
    let r = searcher.choose(&Game::new(pos), &Limits::depth(depth), Duration::ZERO, Arc::clone(stop), &mut |_| {});
    r.best?;
    let mover = match r.info.score {
        Score::Cp(cp) => cp as f32 / CP_PER_LOGIT,
        Score::Mate(n) => MAX_TARGET.copysign(n as f32),
    };
    let white = if pos.turn() == Color::White { mover } else { -mover };
    Some(white.clamp(-MAX_TARGET, MAX_TARGET))
}

/// The searched phase's examples on disk (`searched-labels.dcsl` in a run folder), so a
/// resumed run does not search again. Little-endian: the magic line `DCSL3`, the depth (u32),
/// the searching net's [`fingerprint`] (u64), the positions drawn so far (u64; fewer than
/// asked while a labelling is under way) and the count of examples (u64: drawn positions
/// without a legal move are left out), then per example its number of set bits (u8), the
/// bits (u16 each, increasing, below 773) and its value (f32), and last the FNV-1a 64 of
/// every byte before it (u64): hours of searches are trusted on resume, so an edited or
/// damaged value is named as corruption, not trained on. Written atomically; a file that
/// breaks any of this is refused with where it breaks. (`DCSL2`, the same without the
/// checksum, is still read.)
pub mod labels {
    use super::Features;
    use crate::deepchess::features::{INPUTS, MAX_ACTIVE};
    use std::path::Path;

    const MAGIC: &[u8] = b"DCSL3\n";
    /// The format before the checksum: read, never written.
    const MAGIC_UNSEALED: &[u8] = b"DCSL2\n";

    /// What a labels file says of its examples.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct Header {
        /// Plies each position was searched to.
        pub depth: u32,
        /// The searching net's [`super::fingerprint`].
        pub labeller: u64,
        /// Positions drawn and searched so far (examples plus those without a legal move).
        pub drawn: u64,
    }
    /// Largest file read: 50 million examples of a full board.
    const MAX_BYTES: u64 = 4 << 30;

    pub fn save(path: &Path, head: &Header, examples: &[(Features, f32)]) -> Result<(), String> {
        let mut b = Vec::with_capacity(MAGIC.len() + 28 + examples.len() * 72);
        b.extend_from_slice(MAGIC);
        b.extend_from_slice(&head.depth.to_le_bytes());
        b.extend_from_slice(&head.labeller.to_le_bytes());
        b.extend_from_slice(&head.drawn.to_le_bytes());
        b.extend_from_slice(&(examples.len() as u64).to_le_bytes());
        for (f, v) in examples {
            b.push(f.as_slice().len() as u8);
            f.as_slice().iter().for_each(|i| b.extend_from_slice(&i.to_le_bytes()));
            b.extend_from_slice(&v.to_le_bytes());
        }
        let sum = crate::io::fnv1a64(&b);
        b.extend_from_slice(&sum.to_le_bytes());
        crate::io::atomic::write_atomic(path, &b).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// The file's header and its examples.
    pub fn load(path: &Path) -> Result<(Header, Vec<(Features, f32)>), String> {
        let b = crate::io::read_regular(path, MAX_BYTES, "searched values").map_err(|e| format!("{}: {e}", path.display()))?;
        parse(&b).map_err(|e| format!("{}: {e}", path.display()))
    }

    pub fn parse(b: &[u8]) -> Result<(Header, Vec<(Features, f32)>), String> {
        let mut at = MAGIC.len();
        let b = if b.get(..at) == Some(MAGIC) {
            let body = b.len().checked_sub(8).filter(|&n| n >= at).ok_or("cut short: no room for its checksum")?;
            let stored = u64::from_le_bytes(b[body..].try_into().unwrap());
            if crate::io::fnv1a64(&b[..body]) != stored {
                return Err("corrupt: its checksum does not match its contents (damaged or edited since it was written)".into());
            }
            &b[..body]
        } else if b.get(..at) == Some(MAGIC_UNSEALED) {
            b
        } else {
            return Err("not a file of searched values (no DCSL3 line)".into());
        };
        let mut take = |n: usize, what: &str| -> Result<&[u8], String> {
            let s = b.get(at..at + n).ok_or_else(|| format!("cut short at byte {at}, reading {what}"))?;
            at += n;
            Ok(s)
        };
        let depth = u32::from_le_bytes(take(4, "the depth")?.try_into().unwrap());
        let labeller = u64::from_le_bytes(take(8, "the net's fingerprint")?.try_into().unwrap());
        let drawn = u64::from_le_bytes(take(8, "the positions drawn")?.try_into().unwrap());
        let count = u64::from_le_bytes(take(8, "the count")?.try_into().unwrap());
        if count > drawn {
            return Err(format!("{count} examples of {drawn} positions drawn"));
        }
        let mut out = Vec::with_capacity(count.min(1 << 24) as usize);
        let mut bits = Vec::with_capacity(MAX_ACTIVE);
        for k in 0..count {
            let n = take(1, "a bit count")?[0] as usize;
            if n > MAX_ACTIVE {
                return Err(format!("example {k}: {n} bits set (at most {MAX_ACTIVE})"));
            }
            bits.clear();
            for c in take(2 * n, "bits")?.chunks(2) {
                let i = u16::from_le_bytes([c[0], c[1]]);
                if i as usize >= INPUTS || bits.last().is_some_and(|&l| l >= i) {
                    return Err(format!("example {k}: bit {i} out of range or out of order"));
                }
                bits.push(i);
            }
            let v = f32::from_le_bytes(take(4, "a value")?.try_into().unwrap());
            if !v.is_finite() || v.abs() > super::MAX_TARGET {
                return Err(format!("example {k}: value {v} outside ±{}", super::MAX_TARGET));
            }
            out.push((Features::from_sorted(&bits), v));
        }
        if at != b.len() {
            return Err(format!("{} bytes after the last of {count} examples", b.len() - at));
        }
        Ok((Header { depth, labeller, drawn }, out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chess::Position;

    /// The shipped value student and the features of `fens`.
    fn student_and(fens: &[&str]) -> (ValueNet, Vec<Features>) {
        crate::chess::attacks::init();
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/nets/value-student.dcw");
        let (net, _) = <ValueNet as crate::tensor::NetFile>::load(&path).unwrap();
        (net, fens.iter().map(|f| Features::from_position(&Position::from_fen(f).unwrap())).collect())
    }

    /// λ = 1 keeps the search's value; below it the target moves toward the game's result,
    /// more as λ falls, stays inside ±MAX_TARGET, and commutes with the colour mirror.
    #[test]
    fn blend_result_mixes_search_and_result() {
        for v in [-9.0f32, -2.5, 0.0, 0.7, 8.0] {
            assert_eq!(blend_result(v, true, 1.0), v);
            let mut last = v.min(MAX_TARGET);
            for l in [0.9f32, 0.7, 0.5, 0.2, 0.05] {
                let won = blend_result(v, true, l);
                assert!(won >= last - 1e-4 && won <= MAX_TARGET, "v {v} l {l}: {won} after {last}");
                last = won;
                let lost = blend_result(v, false, l);
                assert!(lost <= v.max(-MAX_TARGET) + 1e-4 && lost >= -MAX_TARGET, "v {v} l {l}: {lost}");
                assert!((blend_result(-v, false, l) + won).abs() < 1e-4, "mirror, v {v} l {l}");
            }
        }
        // Even odds and a half weight: σ = 0.75 for a won game, 0.25 for a lost one.
        assert!((blend_result(0.0, true, 0.5) - 3f32.ln()).abs() < 1e-5);
        assert!((blend_result(0.0, false, 0.5) + 3f32.ln()).abs() < 1e-5);
    }

    /// Labels with positions left out still meet their own games' results; labels that are
    /// not the positions drawn, in order, are an error.
    #[test]
    fn with_results_follows_the_draw() {
        let (_, f) = student_and(&[
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
            "8/8/8/4k3/8/8/3QK3/8 w - - 0 1",
        ]);
        let drawn = [(f[0], true), (f[1], false), (f[2], true)];
        let out = with_results(vec![(f[0], 0.0), (f[2], 0.0)], &drawn, 0.5).unwrap();
        assert_eq!(out.len(), 2);
        assert!(out[0].1 > 1.0 && out[1].1 > 1.0, "{:?}", out.iter().map(|e| e.1).collect::<Vec<_>>());
        let lost = with_results(vec![(f[1], 0.0)], &drawn, 0.5).unwrap();
        assert!(lost[0].1 < -1.0);
        assert_eq!(with_results(vec![(f[0], 0.3)], &drawn, 1.0).unwrap()[0].1, 0.3);
        assert!(with_results(vec![(f[2], 0.0), (f[0], 0.0)], &drawn, 0.5).is_err());
    }

    /// A searched value is the search's score read back as White's logit: with the shipped
    /// student, a position a queen up for White is above 0 whoever moves and its mirror
    /// below; the labels are the same on one thread and on three.
    #[test]
    fn searched_values_are_whites_and_deterministic() {
        let fens = [
            "r3k2r/ppp2ppp/2n5/8/8/2N5/PPPQ1PPP/R3K2R w KQkq - 0 1",
            "r3k2r/ppp2ppp/2n5/8/8/2N5/PPPQ1PPP/R3K2R b KQkq - 0 1",
            "r3k2r/pppq1ppp/2n5/8/8/2N5/PPP2PPP/R3K2R w KQkq - 0 1",
            "4k3/8/8/8/8/8/8/4K3 w - - 0 1",
        ];
        let (net, feats) = student_and(&fens);
        let one = search_values(&net, &feats, 3, 1, "test").unwrap();
        let three = search_values(&net, &feats, 3, 3, "test").unwrap();
        assert_eq!(one.len(), 4);
        assert_eq!(one.iter().map(|e| e.1).collect::<Vec<_>>(), three.iter().map(|e| e.1).collect::<Vec<_>>());
        assert!(one[0].1 > 1.0 && one[1].1 > 1.0 && one[2].1 < -1.0, "{one:?}");
        assert!(one.iter().all(|e| e.1.abs() <= MAX_TARGET));
    }

    /// Labels written and read back are the same; garbage, cut files and bad bits are
    /// refused with a reason, never a panic.
    #[test]
    fn labels_round_trip_and_refuse_garbage() {
        crate::chess::attacks::init();
        let ex: Vec<(Features, f32)> = ["4k3/8/8/8/8/8/8/3QK3 w - - 0 1", "r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1"]
            .iter()
            .zip([1.5f32, -0.25])
            .map(|(f, v)| (Features::from_position(&Position::from_fen(f).unwrap()), v))
            .collect();
        let dir = std::env::temp_dir().join(format!("dcsl-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("l.dcsl");
        let head = labels::Header { depth: 7, labeller: 0xDEAD_BEEF_0123_4567, drawn: 3 };
        labels::save(&path, &head, &ex).unwrap();
        assert_eq!(labels::load(&path).unwrap(), (head, ex.clone()));
        let bytes = std::fs::read(&path).unwrap();
        for cut in 0..bytes.len() {
            assert!(labels::parse(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        // Bad bits under a valid checksum (a writer's bug, not damage) are named as such.
        let mut bad = bytes[..bytes.len() - 8].to_vec();
        bad[MAGIC_LEN + 28 + 1] = 0xff;
        bad[MAGIC_LEN + 28 + 2] = 0xff;
        let sum = crate::io::fnv1a64(&bad);
        bad.extend_from_slice(&sum.to_le_bytes());
        assert!(labels::parse(&bad).unwrap_err().contains("example 0"));
        // Any changed byte after the magic line (a value negated, a bit flipped, the
        // checksum itself) is named as corruption; one in the magic line, as another file.
        let value_at = MAGIC_LEN + 28 + 1 + 2 * ex[0].0.as_slice().len();
        let mut negated = bytes.clone();
        negated[value_at + 3] ^= 0x80;
        assert!(labels::parse(&negated).unwrap_err().starts_with("corrupt"), "a negated value");
        let mut rng = 0x1234_5678u64;
        for _ in 0..2000 {
            let mut g = bytes.clone();
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let at = (rng % g.len() as u64) as usize;
            g[at] ^= (rng >> 32) as u8 | 1;
            let e = labels::parse(&g).unwrap_err();
            assert!(if at < MAGIC_LEN { e.starts_with("not a file") } else { e.starts_with("corrupt") }, "byte {at}: {e}");
        }
        std::fs::remove_dir_all(&dir).ok();
    }

    /// Kept labels: a call cut short after its first chunk is continued by the next call to
    /// the same labels as one uninterrupted call; labels of another depth are searched again;
    /// a damaged file is refused, not overwritten.
    #[test]
    fn kept_labels_continue_where_they_stopped() {
        let fens = [
            "r3k2r/ppp2ppp/2n5/8/8/2N5/PPPQ1PPP/R3K2R w KQkq - 0 1",
            "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1",
            "r3k2r/pppq1ppp/2n5/8/8/2N5/PPP2PPP/R3K2R w KQkq - 0 1",
            "4k3/8/8/8/8/8/8/4K3 w - - 0 1",
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
        ];
        let (net, feats) = student_and(&fens);
        let whole = search_values(&net, &feats, 2, 1, "test").unwrap();
        assert_eq!(whole.len(), 4, "the stalemate has no label");
        let dir = std::env::temp_dir().join(format!("dcsl-kept-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("l.dcsl");
        // A run killed after its first chunk of two positions (one of them the stalemate).
        kept_in_chunks(&net, &feats[..2], 2, 1, "test", &file, 2).unwrap();
        let (head, first) = labels::load(&file).unwrap();
        assert_eq!((head.drawn, head.depth, head.labeller), (2, 2, fingerprint(&net)));
        assert_eq!(first, whole[..1]);
        assert_eq!(kept_in_chunks(&net, &feats, 2, 2, "test", &file, 2).unwrap(), whole);
        assert_eq!(labels::load(&file).unwrap().0.drawn, 5);
        // Another depth searches again; the finished file then reads back as it is.
        let deeper = kept_in_chunks(&net, &feats, 3, 1, "test", &file, 2).unwrap();
        assert_eq!(deeper, search_values(&net, &feats, 3, 1, "test").unwrap());
        assert_eq!(search_values_kept(&net, &feats, 3, 1, "test", &file).unwrap(), deeper);
        let mut b = std::fs::read(&file).unwrap();
        b.truncate(b.len() - 1);
        std::fs::write(&file, &b).unwrap();
        assert!(search_values_kept(&net, &feats, 3, 1, "test", &file).unwrap_err().contains("delete it"));
        assert_eq!(std::fs::read(&file).unwrap(), b, "a damaged file is left as it was");
        // Issue 79: a value edited in a file whose length is whole is named as corruption,
        // not trained on; labels of positions this run does not draw are refused too.
        std::fs::remove_file(&file).unwrap();
        let good = search_values_kept(&net, &feats[..3], 3, 1, "test", &file).unwrap();
        let mut edited = std::fs::read(&file).unwrap();
        let at = edited.len() - 8 - 4;
        edited[at + 3] ^= 0x80;
        std::fs::write(&file, &edited).unwrap();
        let e = search_values_kept(&net, &feats[..3], 3, 1, "test", &file).unwrap_err();
        assert!(e.contains("corrupt") && e.contains("delete it"), "{e}");
        assert_eq!(std::fs::read(&file).unwrap(), edited, "a corrupt file is left as it was");
        labels::save(&file, &labels::Header { depth: 3, labeller: fingerprint(&net), drawn: 3 }, &good).unwrap();
        let e = search_values_kept(&net, &feats[2..5], 3, 1, "test", &file).unwrap_err();
        assert!(e.contains("not the positions this run draws"), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }

    const MAGIC_LEN: usize = 6;
}
