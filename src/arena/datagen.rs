//! Game generation through an external UCI engine (e.g. Stockfish) to grow the corpus:
//! openings drawn among near-best MultiPV moves, per-side node budgets drawn log-uniformly,
//! adjudication like rating lists, a `{score/depth}` comment on every engine move.

use super::adjudication::Adjudication;
use super::uci_client::{position_cmd, Engine, EngineError, Score};
use crate::chess::pgn::EngineEval;
use crate::chess::{Color, Game, Move, Outcome, Position};
use super::datagen_file::inspect;
use crate::io::files::read_regular;
use crate::tensor::rng::SplitMix64;
use std::time::Duration;

/// How games are generated. `Default` matches the shipped corpus's settings.
#[derive(Clone, Debug)]
pub struct GenSettings {
    /// Per-side node budget range; each side's budget is drawn log-uniformly per game.
    pub nodes_min: u64,
    pub nodes_max: u64,
    /// Opening plies chosen at random among near-best moves: a count in this range.
    pub opening_plies: (usize, usize),
    pub opening_multipv: u32,
    pub opening_depth: u32,
    /// Moves within this many centipawns of the best may be chosen in the opening.
    pub opening_margin_cp: i32,
    /// Win and draw adjudication on the engine's scores.
    pub adjudication: Adjudication,
    /// A game still running at this ply is a draw.
    pub max_plies: usize,
    /// Longest wait for one engine answer.
    pub move_timeout: Duration,
}

impl Default for GenSettings {
    fn default() -> Self {
        GenSettings {
            nodes_min: 300,
            nodes_max: 6000,
            opening_plies: (4, 10),
            opening_multipv: 6,
            opening_depth: 8,
            opening_margin_cp: 40,
            adjudication: Adjudication::DATAGEN,
            max_plies: 400,
            move_timeout: Duration::from_secs(30),
        }
    }
}

/// A generated game, ready to be written as PGN.
#[derive(Clone, Debug)]
pub struct GeneratedGame {
    pub start: Position,
    pub moves: Vec<Move>,
    /// `{+0.39/8}`-style comment text per move (`None` for opening plies).
    pub comments: Vec<Option<String>>,
    pub outcome: Outcome,
    /// `rules` or `adjudicated`.
    pub termination: &'static str,
    pub nodes: [u64; 2],
}

/// Draws a node budget log-uniformly in [lo, hi] from a uniform u64.
pub fn log_uniform(lo: u64, hi: u64, r: u64) -> u64 {
    let (lo, hi) = (lo.max(1) as f64, hi.max(lo.max(1)) as f64);
    let u = (r >> 11) as f64 / (1u64 << 53) as f64;
    (lo * (hi / lo).powf(u)).round() as u64
}

/// Plays one game with `engine` from `start`. `rand` supplies uniform u64s.
pub fn play_game(
    engine: &mut Engine,
    start: Position,
    s: &GenSettings,
    rand: &mut impl FnMut() -> u64,
) -> Result<GeneratedGame, EngineError> {
    let nodes = [log_uniform(s.nodes_min, s.nodes_max, rand()), log_uniform(s.nodes_min, s.nodes_max, rand())];
    engine.new_game(s.move_timeout)?;
    let mut game = Game::new(start);
    let mut comments = Vec::new();
    let (lo, hi) = s.opening_plies;
    let opening = lo + (rand() % (hi.saturating_sub(lo) as u64 + 1)) as usize;

    // Opening: a random move among those within the margin of the best MultiPV line.
    if opening > 0 {
        engine.send(&format!("setoption name MultiPV value {}", s.opening_multipv))?;
    }
    for _ in 0..opening {
        if game.outcome().is_some() {
            break;
        }
        let r = engine.go(
            &position_cmd(&start, game.moves()),
            &format!("depth {}", s.opening_depth),
            s.move_timeout,
        )?;
        let best = r.lines.iter().map(|l| l.score.to_cp()).max();
        let near: Vec<&str> = r
            .lines
            .iter()
            .filter(|l| best.is_some_and(|b| l.score.to_cp() >= b - s.opening_margin_cp) && !l.first_move.is_empty())
            .map(|l| l.first_move.as_str())
            .collect();
        let pick = if near.is_empty() { r.bestmove.as_str() } else { near[(rand() % near.len() as u64) as usize] };
        let m = game
            .position()
            .parse_uci(pick)
            .map_err(|e| EngineError::Protocol(format!("opening move: {e}")))?;
        game.play_unchecked(m);
        comments.push(None);
    }
    if opening > 0 {
        engine.send("setoption name MultiPV value 1")?;
    }

    // Main game with adjudication on White-relative scores.
    let mut white_scores: Vec<Option<i32>> = Vec::new();
    let (outcome, termination) = loop {
        if let Some((o, _)) = game.outcome() {
            break (o, "rules");
        }
        if game.moves().len() >= s.max_plies {
            break (Outcome::Draw, "adjudicated");
        }
        let side = game.position().turn();
        let r = engine.go(
            &position_cmd(&start, game.moves()),
            &format!("nodes {}", nodes[side.index()]),
            s.move_timeout,
        )?;
        let m = game
            .position()
            .parse_uci(&r.bestmove)
            .map_err(|e| EngineError::Protocol(format!("bestmove: {e}")))?;
        let score = r.score.unwrap_or(Score::Cp(0));
        comments.push(Some(EngineEval { score, depth: r.depth }.to_string()));
        game.play_unchecked(m);
        let w = if side == Color::White { score.to_cp() } else { -score.to_cp() };
        white_scores.push(Some(w));
        if let Some((o, _)) = s.adjudication.verdict(&white_scores, game.moves().len()) {
            break (o, "adjudicated");
        }
    };
    Ok(GeneratedGame { start, moves: game.moves().to_vec(), comments, outcome, termination, nodes })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_uniform_stays_in_range_and_spreads() {
        let vals: Vec<u64> = (0..1000u64).map(|i| log_uniform(300, 6000, i.wrapping_mul(0x9E37_79B9_7F4A_7C15))).collect();
        assert!(vals.iter().all(|&v| (300..=6000).contains(&v)));
        let below_geo_mean = vals.iter().filter(|&&v| v < 1342).count();
        assert!((350..650).contains(&below_geo_mean), "{below_geo_mean}");
    }
}

/// A whole generation run: where to write, how many games, how many engines at once.
#[derive(Clone, Debug)]
pub struct RunConfig {
    pub engine: String,
    pub options: Vec<(String, String)>,
    pub out: std::path::PathBuf,
    /// Total games wanted in `out` (games already there count).
    pub games: u64,
    pub concurrency: usize,
    pub seed: u64,
    /// Start positions to draw from (default: the initial position).
    pub starts: Vec<Position>,
    pub settings: GenSettings,
}

/// Live counts for progress lines.
#[derive(Clone, Debug, Default)]
pub struct RunStats {
    pub existing: u64,
    pub written: u64,
    pub white: u64,
    pub black: u64,
    pub draws: u64,
    pub failures: u64,
}

fn to_pgn(g: &GeneratedGame, round: u64, engine: &str) -> std::io::Result<String> {
    let mut p = crate::chess::pgn::PgnGame::new(g.start);
    for (k, v) in [
        ("Event", "deepchess datagen".to_string()),
        ("Site", "local".to_string()),
        ("Date", "????.??.??".to_string()),
        ("Round", round.to_string()),
        ("White", format!("{engine} nodes={}", g.nodes[0])),
        ("Black", format!("{engine} nodes={}", g.nodes[1])),
        ("Termination", g.termination.to_string()),
        ("PlyCount", g.moves.len().to_string()),
    ] {
        p.set_tag(k, &v);
    }
    for (m, c) in g.moves.iter().zip(&g.comments) {
        p.push(*m, c.clone());
    }
    p.result = Some(g.outcome);
    p.to_pgn()
}

/// Largest existing output read back to resume (it is read whole): millions of games.
const MAX_OUT_BYTES: u64 = 4 << 30;

/// Generates games until `out` holds `cfg.games`, appending each finished game with an
/// fsync; an interrupted run resumes where it stopped. An existing `out` must be datagen's
/// own output (`datagen_file::inspect`): an unfinished game of its own at the end is cut,
/// a missing blank line after the last game added; anything else is refused untouched.
pub fn run(cfg: &RunConfig, mut progress: impl FnMut(&RunStats) + Send) -> Result<RunStats, String> {
    use std::io::Write;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Mutex;

    let shown = cfg.out.display().to_string();
    let text = match read_regular(&cfg.out, MAX_OUT_BYTES, "datagen output") {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(format!("{shown}: {e}")),
    };
    let found = inspect(&text)
        .map_err(|why| format!("{shown}: not datagen's output, left untouched: {why}. Give another --out"))?;
    let existing = found.games;
    // Nothing to add: the file stays exactly as it is, an unfinished last game included.
    if existing >= cfg.games {
        return Ok(RunStats { existing, ..RunStats::default() });
    }
    let mut file = crate::io::open_append(&cfg.out, "datagen output", crate::io::Place::Named).map_err(|e| format!("{shown}: {e}"))?;
    if found.keep < text.len() {
        file.set_len(found.keep as u64).map_err(|e| format!("{shown}: cannot cut the unfinished last game: {e}"))?;
        eprintln!("cut {} bytes of an unfinished game at the end of {shown}", text.len() - found.keep);
    }
    if !found.append.is_empty() {
        file.write_all(found.append)
            .and_then(|_| file.sync_data())
            .map_err(|e| format!("{shown}: cannot end the last game with its blank line: {e}"))?;
    }
    let starts = if cfg.starts.is_empty() { vec![Position::startpos()] } else { cfg.starts.clone() };
    let next = AtomicU64::new(existing);
    let shared = Mutex::new((file, RunStats { existing, ..RunStats::default() }, &mut progress));
    let fatal: Mutex<Option<String>> = Mutex::new(None);
    // Rounds whose game failed are played again, so the file ends with exactly `games`.
    let retry: Mutex<Vec<u64>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..cfg.concurrency.max(1) {
            scope.spawn(|| {
                let mut engine: Option<Engine> = None;
                let mut consecutive_failures = 0;
                loop {
                    if fatal.lock().unwrap().is_some() {
                        return;
                    }
                    let round = match retry.lock().unwrap().pop() {
                        Some(r) => r,
                        None => next.fetch_add(1, Ordering::SeqCst),
                    };
                    if round >= cfg.games {
                        return;
                    }
                    let mut rng = SplitMix64(cfg.seed ^ round.wrapping_mul(0xA24B_AED4_963E_E407));
                    let mut rand = || rng.next_u64();
                    let start = starts[(rand() % starts.len() as u64) as usize];
                    let result = (|| {
                        if engine.is_none() {
                            engine = Some(Engine::start(&cfg.engine, &cfg.options, cfg.settings.move_timeout)?);
                        }
                        play_game(engine.as_mut().unwrap(), start, &cfg.settings, &mut rand)
                    })();
                    let mut guard = shared.lock().unwrap();
                    let (file, stats, progress) = &mut *guard;
                    match result.and_then(|g| {
                        let name = engine.as_ref().map(|e| e.name.clone()).unwrap_or_default();
                        to_pgn(&g, round, &name).map(|t| (g, t)).map_err(|e| EngineError::Protocol(e.to_string()))
                    }) {
                        Ok((g, text)) => {
                            consecutive_failures = 0;
                            if let Err(e) = file.write_all(text.as_bytes()).and_then(|_| file.sync_data()) {
                                *fatal.lock().unwrap() = Some(format!("{shown}: write failed: {e}"));
                                return;
                            }
                            stats.written += 1;
                            match g.outcome {
                                Outcome::Win(Color::White) => stats.white += 1,
                                Outcome::Win(Color::Black) => stats.black += 1,
                                Outcome::Draw => stats.draws += 1,
                            }
                        }
                        Err(e) => {
                            // Drop the engine (it may be wedged) and retry the game later.
                            stats.failures += 1;
                            consecutive_failures += 1;
                            engine = None;
                            eprintln!("\nwarning: game {round}: {e}");
                            if consecutive_failures >= 5 {
                                *fatal.lock().unwrap() = Some(format!("engine failed 5 games in a row, last: {e}"));
                                return;
                            }
                            retry.lock().unwrap().push(round);
                        }
                    }
                    progress(stats);
                }
            });
        }
    });
    if let Some(e) = fatal.into_inner().unwrap() {
        return Err(e);
    }
    let (_, stats, _) = shared.into_inner().unwrap();
    Ok(stats)
}
