//! One game between two UCI engines: our own rules decide the result (never an engine's
//! claim), the clock is measured by us, and misbehaviour (illegal move, crash, silence,
//! flag fall) ends the game as a loss for the offender, with the reason recorded.

use super::player::Limit;
use crate::arena::adjudication::Adjudication;
use crate::arena::openings::Opening;
use crate::arena::uci_client::{position_cmd, Engine, EngineError};
use crate::chess::pgn::{EngineEval, PgnGame};
use crate::chess::{Color, Ending, Game, Outcome, Position, Role};
use std::time::{Duration, Instant};

/// Rules of play shared by every game of a match.
#[derive(Clone, Copy, Debug)]
pub struct GameSettings {
    pub adjudication: Option<Adjudication>,
    /// How far past its clock (or movetime) a move may arrive and still count.
    pub time_tolerance: Duration,
    /// Past clock + this, a silent engine is given up on (then killed and restarted).
    pub hang_margin: Duration,
    /// Longest wait for a `nodes`/`depth` search, and for `ucinewgame`/`isready`.
    pub move_timeout: Duration,
}

impl Default for GameSettings {
    fn default() -> Self {
        GameSettings {
            adjudication: Some(Adjudication::MATCH),
            time_tolerance: Duration::from_millis(50),
            hang_margin: Duration::from_secs(1),
            move_timeout: Duration::from_secs(60),
        }
    }
}

/// Why a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Termination {
    Rules(Ending),
    /// By the resign rule (a win) or the draw rule.
    Adjudicated,
    /// The side's clock fell, or its engine went silent.
    TimeForfeit(Color),
    IllegalMove(Color),
    /// The side's engine crashed, failed to start or broke the protocol.
    Crash(Color),
}

impl Termination {
    /// The PGN `Termination` tag.
    pub fn tag(&self) -> &'static str {
        match self {
            Termination::Rules(_) => "normal",
            Termination::Adjudicated => "adjudication",
            Termination::TimeForfeit(_) => "time forfeit",
            Termination::IllegalMove(_) => "illegal move",
            Termination::Crash(_) => "engine crash",
        }
    }
}

/// A finished game.
#[derive(Clone, Debug)]
pub struct GameOutcome {
    pub outcome: Outcome,
    pub termination: Termination,
    /// A sentence for people: "White mates", "Black (sf) lost on time: 1.234 s used, 1.1 s left".
    pub detail: String,
    /// Moves with `{score/depth time}` comments (none on opening moves).
    pub pgn: PgnGame,
    /// Engines (white, black) that must be restarted before their next game.
    pub broken: [bool; 2],
    /// What each side's searches reported (white, black).
    pub searched: [Searched; 2],
}

/// A side's searches over one game: how many, how deep, how many nodes in what time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Searched {
    /// Moves the engine chose (opening moves excluded).
    pub moves: u32,
    /// Sum of the reported depths, over the moves that reported one.
    pub depth_sum: u64,
    pub depth_moves: u32,
    /// Sum of the reported nodes, and the think time (ms) of the moves that reported them.
    pub nodes: u64,
    pub nodes_ms: u64,
    pub nodes_moves: u32,
}

impl Searched {
    pub fn add(&mut self, o: &Searched) {
        self.moves += o.moves;
        self.depth_sum += o.depth_sum;
        self.depth_moves += o.depth_moves;
        self.nodes += o.nodes;
        self.nodes_ms += o.nodes_ms;
        self.nodes_moves += o.nodes_moves;
    }

    /// Mean reported depth (`None`: no move reported one).
    pub fn mean_depth(&self) -> Option<f64> {
        (self.depth_moves > 0).then(|| self.depth_sum as f64 / self.depth_moves as f64)
    }

    /// Nodes per second over the moves that reported nodes, timed by us.
    pub fn nps(&self) -> Option<f64> {
        (self.nodes_moves > 0).then(|| self.nodes as f64 * 1000.0 / self.nodes_ms.max(1) as f64)
    }
}

/// Whether `side` has mating material at all (FIDE: a flag fall against a bare king or a
/// lone minor piece is a draw).
fn can_mate(pos: &Position, side: Color) -> bool {
    let heavy = pos.pieces(side, Role::Pawn) | pos.pieces(side, Role::Rook) | pos.pieces(side, Role::Queen);
    heavy.any() || (pos.pieces(side, Role::Knight) | pos.pieces(side, Role::Bishop)).count() >= 2
}

fn millis(d: Duration) -> u128 {
    d.as_millis()
}

/// Plays one game. `engines` and `names` are (white, black); both engines have had
/// `ucinewgame`. Returns the result and which engines are no longer trustworthy.
pub fn play(
    engines: [&mut Engine; 2],
    names: [&str; 2],
    limits: [Limit; 2],
    opening: &Opening,
    s: &GameSettings,
) -> GameOutcome {
    let mut game = Game::new(opening.start);
    let mut pgn = PgnGame::new(opening.start);
    for &m in &opening.moves {
        game.play_unchecked(m);
        pgn.push(m, None);
    }
    // Remaining clock per side (signed: a late move goes negative).
    let mut clock: [i128; 2] = limits.map(|l| match l {
        Limit::Clock { base, .. } => base.as_millis() as i128,
        _ => 0,
    });
    let inc: [u128; 2] = limits.map(|l| match l {
        Limit::Clock { inc, .. } => millis(inc),
        _ => 0,
    });
    // White-relative scores of the engine moves, for adjudication (None: no score given).
    let mut scores: Vec<Option<i32>> = Vec::new();
    let mut broken = [false, false];
    let mut searched = [Searched::default(); 2];
    let tol = millis(s.time_tolerance) as i128;

    let (outcome, termination, detail) = loop {
        if let Some((o, e)) = game.outcome() {
            let why = match e {
                Ending::Checkmate => format!("{} mates", side_name(game.position().turn().flip())),
                Ending::Stalemate => "stalemate".into(),
                Ending::FiftyMoves => "fifty-move rule".into(),
                Ending::Repetition => "threefold repetition".into(),
                Ending::InsufficientMaterial => "insufficient material".into(),
            };
            break (o, Termination::Rules(e), why);
        }
        let side = game.position().turn();
        let me = side.index();
        let who = format!("{} ({})", side_name(side), names[me]);
        let (go, timeout) = match limits[me] {
            Limit::Clock { .. } => {
                // An opponent without a clock is shown ours, so the engine sees a sane clock.
                let other = if matches!(limits[1 - me], Limit::Clock { .. }) { 1 - me } else { me };
                let (w, b) = if side == Color::White { (me, other) } else { (other, me) };
                let go = format!(
                    "wtime {} btime {} winc {} binc {}",
                    clock[w].max(1),
                    clock[b].max(1),
                    inc[w],
                    inc[b]
                );
                (go, Duration::from_millis(clock[me].max(0) as u64 + tol as u64) + s.hang_margin)
            }
            Limit::MoveTime(t) => (format!("movetime {}", millis(t)), t + s.time_tolerance + s.hang_margin),
            Limit::Nodes(n) => (format!("nodes {n}"), s.move_timeout),
            Limit::Depth(d) => (format!("depth {d}"), s.move_timeout),
        };
        let t0 = Instant::now();
        let result = engines[me].go(&position_cmd(&opening.start, game.moves()), &go, timeout);
        let used = t0.elapsed();
        let r = match result {
            Ok(r) => r,
            Err(e) => {
                broken[me] = true;
                let t = match e {
                    EngineError::Timeout(_) => Termination::TimeForfeit(side),
                    _ => Termination::Crash(side),
                };
                let why = match &e {
                    EngineError::Timeout(_) => format!("{who} did not answer within {:.3} s", timeout.as_secs_f64()),
                    other => format!("{who}: {other}"),
                };
                break forfeit(&game, side, t, why);
            }
        };
        // Our own wall clock, not the engine's claim, is what counts.
        let late = match limits[me] {
            Limit::Clock { .. } => {
                let left = clock[me];
                clock[me] -= used.as_millis() as i128;
                (clock[me] < -tol).then(|| format!("{who} lost on time: {} ms used, {left} ms left", used.as_millis()))
            }
            Limit::MoveTime(t) => (used.as_millis() as i128 > t.as_millis() as i128 + tol)
                .then(|| format!("{who} exceeded movetime: {} ms used, {} ms allowed", used.as_millis(), t.as_millis())),
            _ => None,
        };
        if let Some(why) = late {
            break forfeit(&game, side, Termination::TimeForfeit(side), why);
        }
        let m = match game.position().parse_uci(&r.bestmove) {
            Ok(m) => m,
            Err(e) => {
                // It may be lost in its own state; start it afresh next game.
                broken[me] = true;
                let why = format!("{who} played an illegal move: {e}");
                break forfeit(&game, side, Termination::IllegalMove(side), why);
            }
        };
        if let Limit::Clock { .. } = limits[me] {
            clock[me] = clock[me].max(0) + inc[me] as i128;
        }
        let st = &mut searched[me];
        st.moves += 1;
        if r.depth > 0 {
            st.depth_sum += u64::from(r.depth);
            st.depth_moves += 1;
        }
        if let Some(n) = r.nodes {
            st.nodes += n;
            st.nodes_ms += used.as_millis() as u64;
            st.nodes_moves += 1;
        }
        let secs = format!("{:.2}s", used.as_secs_f64());
        let comment = match r.score {
            Some(score) => format!("{} {secs}", EngineEval { score, depth: r.depth }),
            None => secs,
        };
        game.play_unchecked(m);
        pgn.push(m, Some(comment));
        scores.push(r.score.map(|sc| if side == Color::White { sc.to_cp() } else { -sc.to_cp() }));
        if let Some(adj) = &s.adjudication {
            if let Some((o, why)) = adj.verdict(&scores, game.moves().len()) {
                break (o, Termination::Adjudicated, why);
            }
        }
    };
    pgn.result = Some(outcome);
    GameOutcome { outcome, termination, detail, pgn, broken, searched }
}

fn side_name(c: Color) -> &'static str {
    if c == Color::White {
        "White"
    } else {
        "Black"
    }
}

/// `side` forfeits; a flag fall against a side that cannot mate is a draw.
fn forfeit(game: &Game, side: Color, t: Termination, why: String) -> (Outcome, Termination, String) {
    if matches!(t, Termination::TimeForfeit(_)) && !can_mate(game.position(), side.flip()) {
        return (Outcome::Draw, t, format!("{why}; draw: {} cannot mate", side_name(side.flip())));
    }
    (Outcome::Win(side.flip()), t, why)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mating_material() {
        let p = Position::from_fen("8/8/8/4k3/8/8/8/K6N w - - 0 1").unwrap();
        assert!(!can_mate(&p, Color::White));
        assert!(!can_mate(&p, Color::Black));
        let q = Position::from_fen("8/8/8/4k3/8/8/P7/K6N w - - 0 1").unwrap();
        assert!(can_mate(&q, Color::White));
    }
}
