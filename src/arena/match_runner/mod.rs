//! The match runner: N games between two players over an opening suite, each opening played
//! twice with colours swapped (a game pair), several games at once, every game appended to a
//! PGN file with fsync, running W/D/L, pentanomial Elo and an optional SPRT that stops early.
//!
//! Every player is a UCI process, our own engine included (`builtin=KIND` runs this
//! executable as `uci`), so the runner treats all players alike and trusts none of them.

pub mod game;
pub mod player;
pub mod report;
mod resume;

pub use game::{GameOutcome, GameSettings, Searched, Termination};
pub use player::{Limit, PlayerSpec, Program};

use crate::chess::pgn::PgnGame;
use crate::chess::{Color, Outcome};
use crate::arena::elo::{Pentanomial, Sprt, SprtDecision, Wdl};
use crate::arena::openings::{self, Opening};
use crate::arena::uci_client::{Engine, EngineError};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Everything a match needs.
#[derive(Clone, Debug)]
pub struct MatchConfig {
    /// Player A (whose score and Elo are reported) and player B.
    pub players: [PlayerSpec; 2],
    pub games: u64,
    pub concurrency: usize,
    pub openings: Vec<Opening>,
    /// First opening used (0-based), and an optional shuffle seed.
    pub opening_first: usize,
    pub shuffle: Option<u64>,
    /// Continue the match whose games `pgn_out` already holds (`--resume`).
    pub resume: bool,
    /// PGN file the games are appended to.
    pub pgn_out: Option<PathBuf>,
    pub settings: GameSettings,
    pub sprt: Option<Sprt>,
    /// Executable run as `<exe> uci` for built-in players.
    pub exe: PathBuf,
    /// Longest wait for an engine to start (`uci` … `readyok`, options and net loading).
    pub start_timeout: Duration,
    pub event: String,
}

/// One finished game as the runner saw it.
#[derive(Clone, Debug)]
pub struct GameRecord {
    /// 1-based game number; games 2k−1 and 2k share an opening.
    pub number: u64,
    /// Which player (0 = A, 1 = B) had White.
    pub white: usize,
    pub outcome: Outcome,
    pub termination: Termination,
    pub detail: String,
    pub plies: usize,
}

impl GameRecord {
    /// The colour player A had in this game.
    pub fn colour_a(&self) -> Color {
        if self.white == 0 { Color::White } else { Color::Black }
    }

    /// Player A's points in this game.
    pub fn score_a(&self) -> f64 {
        let a = self.colour_a();
        match self.outcome {
            Outcome::Draw => 0.5,
            Outcome::Win(c) if c == a => 1.0,
            Outcome::Win(_) => 0.0,
        }
    }
}

/// Running totals, from player A's side.
#[derive(Clone, Debug, Default)]
pub struct MatchStats {
    pub planned: u64,
    pub finished: u64,
    /// Of `finished`, the games a resume found in the PGN file.
    pub resumed: u64,
    pub wdl: Wdl,
    pub penta: Pentanomial,
    /// Per player (A, B): games lost on time, by illegal moves, by crashes.
    pub time_losses: [u64; 2],
    pub illegal_moves: [u64; 2],
    pub crashes: [u64; 2],
    pub adjudicated: u64,
    /// Points scored by White, over all games.
    pub white_points: f64,
    pub llr: Option<f64>,
    pub sprt: Option<SprtDecision>,
    pub elapsed: Duration,
}

/// Hands out game numbers in order; after an SPRT decision only the second games of pairs
/// already started, so that every counted pair is complete.
struct Schedule {
    next: u64,
    stop: bool,
    /// Games (0-based) a resumed match already holds: passed over.
    done: std::collections::BTreeSet<u64>,
}

fn take(s: &Mutex<Schedule>, total: u64) -> Option<u64> {
    let mut s = s.lock().unwrap_or_else(|e| e.into_inner());
    while s.done.contains(&s.next) {
        s.next += 1;
    }
    if s.next >= total || (s.stop && s.next.is_multiple_of(2)) {
        return None;
    }
    s.next += 1;
    Some(s.next - 1)
}

/// Plays the match. `on_game` sees the totals after every game (for progress lines).
pub fn run(cfg: &MatchConfig, mut on_game: impl FnMut(&MatchStats, &GameRecord) + Send) -> Result<MatchStats, String> {
    if cfg.games == 0 {
        return Err("a match needs at least one game".into());
    }
    if cfg.openings.is_empty() {
        return Err("no openings".into());
    }
    for p in &cfg.players {
        p.check_builtin()?;
    }
    // The games a resumed match holds, read (and checked) before anything is written; a new
    // match must not add its games to a file that holds others' under the same numbers.
    let pairs = cfg.games.div_ceil(2) as usize;
    let order = openings::order(cfg.openings.len(), pairs, cfg.opening_first, cfg.shuffle);
    let earlier = if cfg.resume { resume::played(cfg, &order)? } else { Default::default() };
    // A compressed or non-PGN file is refused untouched; the separator keeps a blank line
    // between the file's last game and ours.
    let mut file = match &cfg.pgn_out {
        Some(p) => {
            let separator = crate::chess::pgn::appendable(p)?;
            let mut f = crate::io::open_append(p, "PGN file", crate::io::Place::Named).map_err(|e| format!("{}: {e}", p.display()))?;
            f.write_all(separator.as_bytes()).map_err(|e| format!("{}: {e}", p.display()))?;
            Some(f)
        }
        None => None,
    };
    let started = Instant::now();
    let mut stats = MatchStats { planned: cfg.games, ..MatchStats::default() };
    let mut half_pairs = HashMap::<u64, f64>::new();
    let mut schedule = Schedule { next: 0, stop: false, done: Default::default() };
    for (n, record) in &earlier {
        count(&mut stats, record, &mut half_pairs);
        schedule.done.insert(n - 1);
    }
    stats.resumed = earlier.len() as u64;
    if cfg.resume {
        let at = cfg.pgn_out.as_ref().map_or(String::new(), |p| p.display().to_string());
        eprintln!("resuming: {} of the match's {} games are in {at}", earlier.len(), cfg.games);
    }
    if let Some(sprt) = cfg.sprt.as_ref().filter(|_| !earlier.is_empty()) {
        let llr = sprt.llr(&stats.penta);
        (stats.llr, stats.sprt) = (Some(llr), Some(sprt.decision(llr)));
        schedule.stop = stats.sprt != Some(SprtDecision::Continue);
    }
    let schedule = Mutex::new(schedule);
    let fatal: Mutex<Option<String>> = Mutex::new(None);
    let ever_started = [AtomicBool::new(false), AtomicBool::new(false)];
    let shared = Mutex::new((stats, half_pairs, &mut on_game, file.as_mut()));
    let set_fatal = |msg: String| {
        let mut f = fatal.lock().unwrap_or_else(|e| e.into_inner());
        f.get_or_insert(msg);
    };
    let date = today();

    std::thread::scope(|scope| {
        for _ in 0..cfg.concurrency.max(1) {
            scope.spawn(|| {
                let mut engines: [Option<Engine>; 2] = [None, None];
                let mut start_failures = [0u32; 2];
                while fatal.lock().unwrap_or_else(|e| e.into_inner()).is_none() {
                    let Some(i) = take(&schedule, cfg.games) else { return };
                    let white = (i % 2) as usize;
                    let opening = &cfg.openings[order[(i / 2) as usize]];
                    let seats = Seats { players: [&cfg.players[0], &cfg.players[1]], ever_started: [&ever_started[0], &ever_started[1]] };
                    let result = match play_one(&seats, &cfg.exe, cfg.start_timeout, &cfg.settings, &mut engines, &mut start_failures, white, opening) {
                        Err(msg) => return set_fatal(msg),
                        Ok(g) => g,
                    };
                    let record = GameRecord {
                        number: i + 1,
                        white,
                        outcome: result.outcome,
                        termination: result.termination,
                        detail: result.detail.clone(),
                        plies: result.pgn.moves.len(),
                    };
                    let (w, b) = (&cfg.players[white], &cfg.players[1 - white]);
                    let text = pgn_text(PgnHeader { event: &cfg.event, site: "deepchess match", round: &record.number.to_string(), date: &date }, [w, b], &record, result.pgn);
                    let mut guard = shared.lock().unwrap_or_else(|e| e.into_inner());
                    let (stats, half_pairs, on_game, file) = &mut *guard;
                    if let (Some(f), Ok(t)) = (file.as_mut(), &text) {
                        if let Err(e) = f.write_all(t.as_bytes()).and_then(|_| f.sync_data()) {
                            return set_fatal(format!("writing the PGN file: {e}"));
                        }
                    }
                    if let Err(e) = text {
                        return set_fatal(format!("game {}: cannot write PGN: {e}", i + 1));
                    }
                    count(stats, &record, half_pairs);
                    stats.elapsed = started.elapsed();
                    if let Some(sprt) = &cfg.sprt {
                        let llr = sprt.llr(&stats.penta);
                        stats.llr = Some(llr);
                        let d = sprt.decision(llr);
                        stats.sprt = Some(d);
                        if d != SprtDecision::Continue {
                            schedule.lock().unwrap_or_else(|e| e.into_inner()).stop = true;
                        }
                    }
                    on_game(stats, &record);
                }
            });
        }
    });
    if let Some(msg) = fatal.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(msg);
    }
    let (stats, ..) = shared.into_inner().unwrap_or_else(|e| e.into_inner());
    Ok(stats)
}

/// The two players of a game and whether each has ever started (a player that never got
/// going stops the whole event; one that fails later loses games until it comes back).
pub struct Seats<'a> {
    pub players: [&'a PlayerSpec; 2],
    pub ever_started: [&'a AtomicBool; 2],
}

/// Plays one game between `seats` (`white` is the index of the player with White), starting
/// or restarting their engines in `engines` as needed; an engine that misbehaved is dropped
/// (killed) so that the next game starts it afresh. `Err` is a failure that ends the whole
/// event (a player that cannot run at all); a player whose engine fails to (re)start loses
/// the game, which is returned like any other.
#[allow(clippy::too_many_arguments)]
pub fn play_one(
    seats: &Seats,
    exe: &Path,
    start_timeout: Duration,
    settings: &GameSettings,
    engines: &mut [Option<Engine>; 2],
    failures: &mut [u32; 2],
    white: usize,
    opening: &Opening,
) -> Result<GameOutcome, String> {
    match prepare(seats, exe, start_timeout, settings.move_timeout, engines, failures, white) {
        Err(Fatal(msg)) => Err(msg),
        Ok(Some(mut failed)) => {
            failed.pgn = PgnGame::new(opening.start);
            for &m in &opening.moves {
                failed.pgn.push(m, None);
            }
            Ok(failed)
        }
        Ok(None) => {
            let [a, b] = engines;
            let (a, b) = (a.as_mut().unwrap(), b.as_mut().unwrap());
            let (w, bl) = if white == 0 { (a, b) } else { (b, a) };
            let names = [seats.players[white].name.as_str(), seats.players[1 - white].name.as_str()];
            let limits = [seats.players[white].limit, seats.players[1 - white].limit];
            let g = game::play([w, bl], names, limits, opening, settings);
            for (c, &bad) in g.broken.iter().enumerate() {
                if bad {
                    // A hung or confused engine is killed (on drop) and restarted.
                    engines[if c == 0 { white } else { 1 - white }] = None;
                }
            }
            Ok(g)
        }
    }
}

/// A failure that ends the whole match (a player that cannot run at all).
struct Fatal(String);

/// Makes sure both engines are running and ready for a new game. `Ok(Some(game))` is a game
/// already lost by a player whose engine failed to (re)start or to get ready.
fn prepare(
    seats: &Seats,
    exe: &Path,
    start_timeout: Duration,
    move_timeout: Duration,
    engines: &mut [Option<Engine>; 2],
    failures: &mut [u32; 2],
    white: usize,
) -> Result<Option<game::GameOutcome>, Fatal> {
    // White's engine first, so that a double failure is charged to White consistently.
    for p in [white, 1 - white] {
        let spec = seats.players[p];
        let color = if p == white { Color::White } else { Color::Black };
        let mut err = None;
        if engines[p].is_none() {
            let (cmd, options) = spec.command(exe);
            match Engine::start(&cmd, &options, start_timeout) {
                Ok(e) => engines[p] = Some(e),
                Err(EngineError::Spawn(m)) => return Err(Fatal(format!("player {}: cannot start '{cmd}': {m}", spec.name))),
                Err(e) if !seats.ever_started[p].load(Ordering::SeqCst) => {
                    return Err(Fatal(format!("player {}: '{cmd}' failed to start as a UCI engine: {e}", spec.name)))
                }
                Err(e) => err = Some(format!("failed to restart: {e}")),
            }
        }
        if let Some(e) = engines[p].as_mut() {
            seats.ever_started[p].store(true, Ordering::SeqCst);
            if let Err(e) = e.new_game(move_timeout) {
                engines[p] = None;
                err = Some(format!("not ready for a new game: {e}"));
            }
        }
        if let Some(why) = err {
            failures[p] += 1;
            if failures[p] >= 3 {
                return Err(Fatal(format!("player {}: engine failed 3 times in a row, last: {why}", spec.name)));
            }
            let side = if color == Color::White { "White" } else { "Black" };
            return Ok(Some(game::GameOutcome {
                outcome: Outcome::Win(color.flip()),
                termination: Termination::Crash(color),
                detail: format!("{side} ({}) {why}", spec.name),
                pgn: PgnGame::new(crate::chess::Position::startpos()),
                broken: [false, false],
                searched: Default::default(),
            }));
        }
        failures[p] = 0;
    }
    Ok(None)
}

fn count(stats: &mut MatchStats, r: &GameRecord, half_pairs: &mut HashMap<u64, f64>) {
    stats.finished += 1;
    let a = r.score_a();
    stats.wdl.add(r.outcome, r.colour_a());
    stats.white_points += match r.outcome {
        Outcome::Win(Color::White) => 1.0,
        Outcome::Win(Color::Black) => 0.0,
        Outcome::Draw => 0.5,
    };
    let player_of = |c: Color| if (c == Color::White) == (r.white == 0) { 0 } else { 1 };
    match r.termination {
        Termination::TimeForfeit(c) => stats.time_losses[player_of(c)] += 1,
        Termination::IllegalMove(c) => stats.illegal_moves[player_of(c)] += 1,
        Termination::Crash(c) => stats.crashes[player_of(c)] += 1,
        Termination::Adjudicated => stats.adjudicated += 1,
        Termination::Rules(_) => {}
    }
    let pair = (r.number - 1) / 2;
    match half_pairs.remove(&pair) {
        Some(first) => stats.penta.add(first, a),
        None => {
            half_pairs.insert(pair, a);
        }
    }
}

/// The tags a game's PGN shares with its event.
pub struct PgnHeader<'a> {
    pub event: &'a str,
    pub site: &'a str,
    pub round: &'a str,
    pub date: &'a str,
}

/// A finished game as PGN text, with the players (`[white, black]`), limits and how it ended.
pub fn pgn_text(h: PgnHeader, [w, b]: [&PlayerSpec; 2], r: &GameRecord, mut g: PgnGame) -> std::io::Result<String> {
    let tags = [
        ("Event", h.event.to_string()),
        ("Site", h.site.to_string()),
        ("Date", h.date.to_string()),
        ("Round", h.round.to_string()),
        ("White", w.name.clone()),
        ("Black", b.name.clone()),
    ];
    for (k, v) in tags {
        g.set_tag(k, &v);
    }
    if w.limit == b.limit {
        g.set_tag("TimeControl", &w.limit.pgn_time_control());
    } else {
        g.set_tag("WhiteTimeControl", &w.limit.pgn_time_control());
        g.set_tag("BlackTimeControl", &b.limit.pgn_time_control());
    }
    g.set_tag("WhiteLimit", &w.limit.to_string());
    g.set_tag("BlackLimit", &b.limit.to_string());
    g.set_tag("Termination", r.termination.tag());
    g.set_tag("TerminationDetails", &r.detail);
    g.set_tag("PlyCount", &r.plies.to_string());
    g.result = Some(r.outcome);
    g.to_pgn()
}

/// Today's UTC date as `YYYY.MM.DD` (civil-from-days, H. Hinnant's algorithm).
pub fn today() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let z = (secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}.{m:02}.{d:02}")
}

#[cfg(test)]
mod tests {
    #[test]
    fn date_is_plausible() {
        let d = super::today();
        assert_eq!(d.len(), 10);
        assert!(d.as_str() > "2024.01.01", "{d}");
    }
}
