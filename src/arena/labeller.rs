//! The labeller (`deepchess label`): positions sampled from PGN games, each scored by a UCI
//! engine at a fixed depth, written as a labelled set (`data::labels`) for seed 001.
//!
//! - Sampling (`data::sample::sample_for_labels`): per game, up to `per_game` random
//!   positions from ply `skip_plies` on (draws included; games without a result are not
//!   used), never one without a legal move, never a position already taken from this game
//!   or an earlier one. The RNG of a game is seeded by `seed ^ game_key(game)`; games are
//!   read in order until `positions` are taken.
//! - Scoring: each position is searched alone: `ucinewgame`, `position fen F`, `go depth D`,
//!   with `Threads 1` and `Hash 16`. A depth-limited single-threaded search from a cleared
//!   state is a function of the position, so the labels do not depend on `jobs` (how many
//!   engines run at once) nor on which engine took which position. The last score the
//!   engine reports (side to move) is turned to White's side.
//! - Checkpoint: every scored row is appended to `OUT.partial` (the set's provenance and
//!   header, then rows in the order they finish). A rerun with `resume` keeps the rows
//!   there that match this run's sampling (same provenance, same positions) and scores only
//!   the rest; a torn last line is dropped. When every position is scored the set is written
//!   atomically to `OUT` in sampling order and `OUT.partial` is removed.

use super::uci_client::{Engine, EngineError};
use crate::chess::pgn::{open_pgn, PgnReader};
use crate::chess::Position;
use crate::data::build::describe_empty;
use crate::data::labels::{meta_lines, read_text, EngineScore, LabelSet, Labelled, Wdl, FORMAT, HEADER};
use crate::data::sample::{game_key, sample_for_labels};
use crate::tensor::rng::SplitMix64;
use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::channel;
use std::time::{Duration, Instant};

/// Everything a labelling run needs.
#[derive(Clone, Debug)]
pub struct LabelConfig {
    /// PGN sources, read in order (`*.xz` decompressed).
    pub sources: Vec<String>,
    pub out: PathBuf,
    /// Engine command (program and arguments, split on whitespace).
    pub engine: String,
    pub depth: u32,
    /// Stop sampling once this many positions are taken (`None`: every game).
    pub positions: Option<usize>,
    pub per_game: usize,
    pub skip_plies: usize,
    pub seed: u64,
    /// Engines searching at once.
    pub jobs: usize,
    /// Continue from `OUT.partial`.
    pub resume: bool,
    /// Longest wait for one engine answer (a search, or the handshake).
    pub timeout: Duration,
    /// Engine hash table, MiB.
    pub hash_mb: u32,
}

impl LabelConfig {
    /// Defaults: depth 10, 4 positions a game after 10 plies, seed 1, one engine, Hash 16.
    pub fn new(sources: Vec<String>, out: PathBuf, engine: String) -> LabelConfig {
        LabelConfig {
            sources,
            out,
            engine,
            depth: 10,
            positions: None,
            per_game: 4,
            skip_plies: 10,
            seed: 1,
            jobs: 1,
            resume: false,
            timeout: Duration::from_secs(60),
            hash_mb: 16,
        }
    }

    /// The command that regenerates the set (flags that change its content only).
    pub fn command(&self) -> String {
        let mut s = String::from("deepchess label");
        for src in &self.sources {
            s.push_str(&format!(" --pgn {src}"));
        }
        s.push_str(&format!(" --depth {} --per-game {} --skip-plies {}", self.depth, self.per_game, self.skip_plies));
        if let Some(n) = self.positions {
            s.push_str(&format!(" --positions {n}"));
        }
        s.push_str(&format!(" --seed {}", self.seed));
        s
    }
}

/// `stockfish` when it is on PATH, else Debian's `/usr/games/stockfish`.
pub fn default_engine() -> Result<String, String> {
    let on_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join("stockfish").is_file()))
        .unwrap_or(false);
    if on_path {
        return Ok("stockfish".into());
    }
    if Path::new("/usr/games/stockfish").is_file() {
        return Ok("/usr/games/stockfish".into());
    }
    Err("no engine: 'stockfish' is not on PATH and /usr/games/stockfish does not exist; \
         install Stockfish ('make install-stockfish') or give --engine CMD"
        .into())
}

/// A sampled position waiting for its score.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sampled {
    pub game: u32,
    pub ply: u16,
    pub result: Wdl,
    pub pos: Position,
}

/// What the sampling read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SampleStats {
    pub games_read: u64,
    /// Unreadable games (bad moves, bad FEN, ...).
    pub skipped: u64,
    /// Games without a result (`*`): not used.
    pub unfinished: u64,
    /// Games that gave at least one position.
    pub used: u64,
}

impl std::fmt::Display for SampleStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} read, {} unreadable, {} without a result (not used), {} gave positions",
            self.games_read, self.skipped, self.unfinished, self.used
        )
    }
}

/// Samples the positions of a run, in order. `warn` receives each skipped game's message.
pub fn sample(cfg: &LabelConfig, mut warn: impl FnMut(&str)) -> Result<(Vec<Sampled>, SampleStats), String> {
    let mut out = Vec::new();
    let mut st = SampleStats::default();
    let mut taken = HashSet::new();
    let mut game: u32 = 0;
    let full = |out: &Vec<Sampled>| cfg.positions.is_some_and(|n| out.len() >= n);
    'sources: for src in &cfg.sources {
        let input = open_pgn(src).map_err(|e| format!("{src}: {e}"))?;
        let mut reader = PgnReader::new(input);
        let (mut read_here, mut skipped_here) = (0u64, 0u64);
        while let Some(item) = reader.next_game() {
            if full(&out) {
                break 'sources;
            }
            st.games_read += 1;
            read_here += 1;
            game = game.wrapping_add(1);
            let g = match item {
                Ok(g) => g,
                Err(skip) => {
                    st.skipped += 1;
                    skipped_here += 1;
                    warn(&format!("{src}: {skip}"));
                    continue;
                }
            };
            let Some(outcome) = g.result else {
                st.unfinished += 1;
                continue;
            };
            let mut rng = SplitMix64(cfg.seed ^ game_key(&g.start, &g.moves));
            let picked = sample_for_labels(&g.start, &g.moves, cfg.skip_plies, cfg.per_game, &mut taken, &mut || rng.next_u64());
            st.used += u64::from(!picked.is_empty());
            let result = Wdl::from_outcome(outcome);
            out.extend(picked.into_iter().map(|(ply, pos)| Sampled { game, ply, result, pos }));
        }
        if let Some(e) = &reader.summary().io_error {
            return Err(format!("{src}: read error: {e}"));
        }
        if read_here == skipped_here {
            warn(&format!("no game found in {}", describe_empty(src, skipped_here)));
        }
    }
    if let Some(n) = cfg.positions {
        out.truncate(n);
    }
    Ok((out, st))
}

/// Progress of a run, for the caller's display.
#[derive(Clone, Debug, Default)]
pub struct Progress {
    /// Positions in the set.
    pub total: usize,
    /// Scored, the resumed ones included.
    pub done: usize,
    /// Taken from `OUT.partial`.
    pub resumed: usize,
    pub elapsed: Duration,
}

/// What a finished run did.
#[derive(Clone, Debug)]
pub struct RunSummary {
    pub set: LabelSet,
    pub stats: SampleStats,
    pub resumed: usize,
    pub scored: usize,
    pub elapsed: Duration,
}

/// `OUT.partial`.
pub fn partial_path(out: &Path) -> PathBuf {
    let mut name = out.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".partial");
    out.with_file_name(name)
}

/// Samples, scores and writes the set; `progress` is called about once a second and at the
/// end.
pub fn run(cfg: &LabelConfig, mut warn: impl FnMut(&str), mut progress: impl FnMut(&Progress)) -> Result<RunSummary, String> {
    if cfg.jobs == 0 || cfg.depth == 0 || cfg.per_game == 0 {
        return Err("jobs, depth and per-game must be at least 1".into());
    }
    let partial = partial_path(&cfg.out);
    let finished = check_output(cfg, &partial)?;
    if partial.exists() && !cfg.resume {
        return Err(format!(
            "{} exists (an interrupted run): rerun with --resume to continue it, or delete it to start over",
            partial.display()
        ));
    }
    let t0 = Instant::now();
    let (items, stats) = sample(cfg, &mut warn)?;
    if items.is_empty() {
        return Err(format!("no position to label in {}", cfg.sources.join(", ")));
    }
    if let Some(set) = finished {
        return keep_finished(cfg, set, &items, stats, &partial, t0);
    }
    // Start the engines first: the provenance holds the engine's name.
    let options = vec![("Threads".to_string(), "1".to_string()), ("Hash".to_string(), cfg.hash_mb.to_string())];
    let mut engines = Vec::new();
    for _ in 0..cfg.jobs.min(items.len()) {
        engines.push(Engine::start(&cfg.engine, &options, cfg.timeout).map_err(|e| match e {
            // Its message names the command already.
            EngineError::Spawn(_) => e.to_string(),
            _ => format!("{}: {e}", cfg.engine),
        })?);
    }
    let mut set = provenance(cfg, &engines[0].name, &stats);

    let mut scores: Vec<Option<EngineScore>> = vec![None; items.len()];
    let resumed = if cfg.resume && partial.exists() { read_partial(&partial, &set.meta, &items, &mut scores)? } else { 0 };
    if resumed == 0 {
        let mut head = meta_lines(&set.meta);
        head.push_str(HEADER);
        head.push('\n');
        crate::io::write_atomic(&partial, head.as_bytes()).map_err(|e| format!("{}: cannot write: {e}", partial.display()))?;
    }
    let mut file = crate::io::open_append(&partial, "labelling checkpoint", crate::io::Place::Own).map_err(|e| format!("{}: cannot open for appending: {e}", partial.display()))?;
    let todo: Vec<usize> = (0..items.len()).filter(|&i| scores[i].is_none()).collect();
    let mut p = Progress { total: items.len(), done: resumed, resumed, elapsed: t0.elapsed() };
    progress(&p);

    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let (tx, rx) = channel::<(usize, Result<EngineScore, EngineError>)>();
    let mut failure: Option<String> = None;
    let mut write_error: Option<String> = None;
    std::thread::scope(|scope| {
        for mut engine in engines {
            let tx = tx.clone();
            let (next, stop, todo, items) = (&next, &stop, &todo, &items);
            scope.spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&i) = todo.get(k) else { break };
                    let r = score_one(&mut engine, &items[i].pos, cfg.depth, cfg.timeout);
                    let failed = r.is_err();
                    if tx.send((i, r)).is_err() || failed {
                        break;
                    }
                }
            });
        }
        drop(tx);
        let mut last_sync = Instant::now();
        let mut last_report = Instant::now();
        for (i, r) in rx {
            match r {
                Ok(score) => {
                    scores[i] = Some(score);
                    p.done += 1;
                    let it = &items[i];
                    let row = Labelled { game: it.game, ply: it.ply, result: it.result, score, pos: it.pos }.row();
                    if write_error.is_none() {
                        if let Err(e) = writeln!(file, "{row}") {
                            write_error = Some(format!("{}: cannot append: {e}", partial.display()));
                            stop.store(true, Ordering::Relaxed);
                        }
                    }
                    if last_sync.elapsed() > Duration::from_secs(10) {
                        let _ = file.sync_data();
                        last_sync = Instant::now();
                    }
                }
                Err(e) => {
                    stop.store(true, Ordering::Relaxed);
                    if failure.is_none() {
                        let it = &items[i];
                        failure = Some(format!("{e} (game {} ply {}, FEN {})", it.game, it.ply, it.pos.fen()));
                    }
                }
            }
            if last_report.elapsed() >= Duration::from_secs(1) {
                p.elapsed = t0.elapsed();
                progress(&p);
                last_report = Instant::now();
            }
        }
    });
    let _ = file.sync_data();
    drop(file);
    p.elapsed = t0.elapsed();
    progress(&p);
    if let Some(e) = write_error {
        return Err(e);
    }
    if let Some(e) = failure {
        let kept = match p.done {
            0 => "no position was scored yet".to_string(),
            n => format!("the {n} positions scored are kept in {}: rerun with --resume to continue", partial.display()),
        };
        return Err(format!("{}: {e}; {kept}", cfg.engine));
    }
    set.items = items
        .iter()
        .zip(&scores)
        .map(|(it, s)| {
            let score = s.expect("every position was scored");
            Labelled { game: it.game, ply: it.ply, result: it.result, score, pos: it.pos }
        })
        .collect();
    set.set_meta("count", set.items.len().to_string());
    set.save(&cfg.out)?;
    std::fs::remove_file(&partial).map_err(|e| format!("{}: cannot remove: {e}", partial.display()))?;
    Ok(RunSummary { set, stats, resumed, scored: p.done - resumed, elapsed: t0.elapsed() })
}

/// This run's set, already written: checked position by position against `items`, never
/// rewritten; a checkpoint left by a kill between the set's write and its removal goes.
fn keep_finished(cfg: &LabelConfig, set: LabelSet, items: &[Sampled], stats: SampleStats, partial: &Path, t0: Instant) -> Result<RunSummary, String> {
    let same = set.items.len() == items.len()
        && set.items.iter().zip(items).all(|(a, b)| (a.game, a.ply, a.result, a.pos) == (b.game, b.ply, b.result, b.pos));
    if !same {
        return Err(format!(
            "{} holds other positions than this run samples (its command matches: were the --pgn files changed?); choose another --out or delete it",
            cfg.out.display()
        ));
    }
    if partial.exists() {
        std::fs::remove_file(partial).map_err(|e| format!("{}: cannot remove: {e}", partial.display()))?;
    }
    let n = set.items.len();
    Ok(RunSummary { set, stats, resumed: n, scored: 0, elapsed: t0.elapsed() })
}

/// The provenance of a run's set (and of its checkpoint, which a resume compares).
fn provenance(cfg: &LabelConfig, engine: &str, stats: &SampleStats) -> LabelSet {
    let mut set = LabelSet::default();
    set.set_meta("format", FORMAT);
    set.set_meta("columns", "game = 1-based number of the game in the sources (skipped games counted), ply = half-moves played before the position, result = the game's result, score = engine centipawns or #N mate in N (#-N: Black mates), both from White's side");
    set.set_meta("engine", engine);
    set.set_meta("search", format!("go depth {}, Threads=1, Hash={}, ucinewgame before every position", cfg.depth, cfg.hash_mb));
    set.set_meta("sources", cfg.sources.join(" "));
    set.set_meta("games", stats.to_string());
    set.set_meta(
        "sampling",
        format!(
            "up to {} random positions a game from ply {} on (the final position included), draws included, no position without a legal move, no position (board, side, castling, en passant) twice in the set; games in source order until the target",
            cfg.per_game, cfg.skip_plies
        ),
    );
    set.set_meta("seed", format!("{} (a game's RNG is SplitMix64(seed ^ fnv1a(start FEN + moves)))", cfg.seed));
    set.set_meta("target", cfg.positions.map_or("every game".to_string(), |n| n.to_string()));
    set.set_meta("command", cfg.command());
    set
}

/// What may be written at `cfg.out`: nothing there, or (with `resume`) this run's own
/// finished set, returned so the run ends without scoring. An output that is one of the
/// inputs, anything that is not a labelled set, another run's set, or a set without
/// `--resume` is refused untouched, as is a partial file that is an input.
fn check_output(cfg: &LabelConfig, partial: &Path) -> Result<Option<LabelSet>, String> {
    let out = &cfg.out;
    for src in &cfg.sources {
        for (path, what) in [(out.as_path(), "--out"), (partial, "--out's checkpoint")] {
            if crate::io::files::same_file(Path::new(src), path) {
                return Err(format!("{}: the {what} is also the input --pgn {src}; writing it would destroy the games: choose another --out", path.display()));
            }
        }
    }
    let Ok(meta) = std::fs::symlink_metadata(out) else { return Ok(None) };
    if !std::fs::metadata(out).map(|m| m.is_file()).unwrap_or(meta.is_file()) {
        return Err(format!("{}: exists and is not a regular file; choose another --out", out.display()));
    }
    let set = LabelSet::load(out).map_err(|e| {
        format!("{} exists and is not a labelled set ({e}); refusing to overwrite it: choose another --out, or move the file away", out.display())
    })?;
    let (was, now) = (set.meta("command").unwrap_or("(none)"), cfg.command());
    if was != now {
        return Err(format!(
            "{} is a labelled set made by another run (its command: \"{was}\"; this run's: \"{now}\"); refusing to overwrite it: choose another --out, or delete it",
            out.display()
        ));
    }
    if !cfg.resume {
        return Err(format!(
            "{} exists: this run's set, {} positions; rerun with --resume to check it (nothing is scored again), or delete it to start over",
            out.display(),
            set.items.len()
        ));
    }
    Ok(Some(set))
}

/// One position: a cleared engine, a depth-limited search, the last score from White's side.
pub fn score_one(engine: &mut Engine, pos: &Position, depth: u32, timeout: Duration) -> Result<EngineScore, EngineError> {
    engine.new_game(timeout)?;
    let r = engine.go(&format!("position fen {}", pos.fen()), &format!("depth {depth}"), timeout)?;
    let score = r.score.ok_or_else(|| EngineError::Protocol("bestmove without any 'info ... score' line".into()))?;
    let s = EngineScore::from_mover(score, pos.turn());
    if s == EngineScore::Mate(0) {
        return Err(EngineError::Protocol("score mate 0 for a position with legal moves".into()));
    }
    Ok(s)
}

/// Takes the rows of `OUT.partial` that belong to this run into `scores`; returns how many.
/// The file's provenance must be this run's; a torn last line (a kill mid-write) is dropped
/// and the file cut back to its last whole line.
fn read_partial(path: &Path, meta: &[(String, String)], items: &[Sampled], scores: &mut [Option<EngineScore>]) -> Result<usize, String> {
    let mut bytes = read_text(path)?;
    let whole = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let torn = whole < bytes.len();
    bytes.truncate(whole);
    let old = LabelSet::from_csv(&bytes).map_err(|e| format!("{}:{e}", path.display()))?;
    for (k, v) in meta {
        let was = old.meta(k).unwrap_or("(missing)");
        if was != v {
            return Err(format!(
                "{} was made by another run: its {k} is \"{was}\", this run's is \"{v}\"; rerun with that run's flags, or delete it to start over",
                path.display()
            ));
        }
    }
    let index: HashMap<(u32, u16), usize> = items.iter().enumerate().map(|(i, it)| ((it.game, it.ply), i)).collect();
    let mut n = 0;
    for row in &old.items {
        let i = *index.get(&(row.game, row.ply)).ok_or_else(|| {
            format!("{}: game {} ply {} is not one of this run's positions; delete the file to start over", path.display(), row.game, row.ply)
        })?;
        if items[i].pos != row.pos || items[i].result != row.result {
            return Err(format!(
                "{}: game {} ply {} holds another position or result than this run samples; delete the file to start over",
                path.display(),
                row.game,
                row.ply
            ));
        }
        scores[i] = Some(row.score);
        n += 1;
    }
    if torn {
        crate::io::write_atomic(path, &bytes).map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
    }
    Ok(n)
}
