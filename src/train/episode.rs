//! The episode stage, beside the epoch stage ([`super::stage`]): for systems that learn from
//! games they play themselves. Each batch, games are played in parallel on every core by the
//! system's own move-choosing code (an [`EpisodeLearner`]: the stage imports no search, no
//! player and no system), each game's trajectory (positions, moves, rewards, result) is
//! handed to the learner, which updates the parameters; then the batch is logged and
//! checkpointed.
//!
//! Determinism, so that a resumed run is byte-identical to an uninterrupted one: game `g` of
//! batch `b` draws its opening and its exploration from its own stream, a function of (seed,
//! stage, b, g) only; every game of a batch is played by an actor made from the parameters
//! as they stood at the batch's start; the learner receives the trajectories in game order.
//! So neither the thread count nor where a kill fell changes a bit, and a checkpoint at each
//! batch boundary (parameters, optimizer, batches done) is all a resume needs: a kill loses
//! at most the batch under way.

use super::checkpoint::{Checkpoint, OptCfg};
use super::log::{Progress, Row};
use super::stage::{Ctx, EpochStats};
use crate::chess::game::{Ending, Outcome};
use crate::chess::{Game, Move, Position};
use crate::tensor::{Optimizer, Params, Rng};
use std::time::Instant;

/// How games begin: the position, then (for variety) a few plies chosen at random.
#[derive(Clone, Debug, PartialEq)]
pub enum Opening {
    /// Every game from the standard start.
    Start,
    /// From the standard start, 0 to `n` random legal plies first (uniform in count).
    RandomPlies(usize),
    /// From one of these positions (chosen at random per game), then 0 to `n` random plies.
    Book(Vec<Position>, usize),
    /// A prefix of one of these games (start position and moves, chosen at random per
    /// game): its first `k` moves, `k` uniform from `low` (a fraction of the game's length)
    /// to the whole game. The learner sees the prefix ([`Trajectory::opening`]): NeuroChess
    /// learns from expert moves and from its own.
    Lines(std::sync::Arc<Vec<(Position, Vec<Move>)>>, f64),
}

/// Exploration, decaying linearly from `start` at the first batch to `end` at batch
/// `over` and staying there (the meaning of the number is the learner's: ε of ε-greedy, a
/// temperature).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Exploration {
    pub start: f64,
    pub end: f64,
    pub over: usize,
}

impl Exploration {
    /// The exploration of batch `b` (0-based).
    pub fn at(&self, b: usize) -> f64 {
        if self.over == 0 || b >= self.over {
            return self.end;
        }
        self.start + (self.end - self.start) * b as f64 / self.over as f64
    }
}

/// The schedule of an episode stage.
#[derive(Clone, Debug, PartialEq)]
pub struct EpisodeCfg {
    pub batches: usize,
    pub games_per_batch: usize,
    /// A game still going after this many plies (opening included) ends as a draw.
    pub max_plies: usize,
    pub opening: Opening,
    pub exploration: Exploration,
    pub opt: OptCfg,
    /// Whether threefold repetition and the fifty-move rule end a game (legal chess as played:
    /// true). False keeps only mate, stalemate, insufficient material and the move limit, as
    /// an environment without those rules (seed 002's) would.
    pub rule_draws: bool,
    /// An environment without check (seed 002's): the actor chooses among pseudo-legal moves
    /// ([`Position::pseudo_legal_moves`]), so a king may be left attacked; a move that takes
    /// the king ends the game, won by its mover, and is not played. Mate, stalemate and
    /// insufficient material end nothing there (repetition and fifty moves as `rule_draws`
    /// says).
    pub king_capture: bool,
}

/// How a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// By the rules (mate, stalemate, repetition, fifty moves, insufficient material).
    Rules(Ending),
    /// At [`EpisodeCfg::max_plies`], scored a draw.
    MoveLimit,
    /// A king was taken ([`EpisodeCfg::king_capture`]): the last move, not played.
    KingTaken,
    /// The side to move had no move at all in an environment without check, scored a draw.
    NoMove,
}

/// One game as the learner sees it: the opening (where the game began and the moves played
/// before the actor took over: random plies, an expert prefix), then the moves its actor
/// chose, the position before each, the reward of each, and the result.
#[derive(Clone, Debug)]
pub struct Trajectory {
    /// Where the game began, and the opening's moves from there.
    pub opening_start: Position,
    pub opening: Vec<Move>,
    /// Where the actor took over (after the opening).
    pub start: Position,
    pub positions: Vec<Position>,
    pub moves: Vec<Move>,
    pub rewards: Vec<f32>,
    pub outcome: Outcome,
    pub end: End,
}

/// What a system hands the episode stage.
pub trait EpisodeLearner {
    /// The move-choosing state of one game-playing thread (a snapshot of the model).
    type Actor: Send;

    /// An actor playing with `params` as they are now.
    fn actor(&self, params: &Params) -> Self::Actor;

    /// A new game begins for this actor (forget tables tied to the last one, so that a game
    /// does not depend on which thread played the game before it).
    fn begin(_actor: &mut Self::Actor) {}

    /// The move to play in `game` (which has a legal move; a pseudo-legal one under
    /// [`EpisodeCfg::king_capture`]), exploring by `explore`, drawing any randomness from `rng`.
    fn act(actor: &mut Self::Actor, game: &Game, explore: f64, rng: &mut Rng) -> Move;

    /// The reward of `mv` played in `before`, reaching `after` (0 for a system that learns
    /// from results alone; a move that takes a king is not played: `after` is `before`).
    fn reward(_actor: &Self::Actor, _before: &Position, _mv: Move, _after: &Position) -> f32 {
        0.0
    }

    /// Batch `b` (0-based) is about to be played (a learner whose figures depend on where it
    /// is in the run, e.g. an evaluation every k batches, learns it here; a resumed run calls
    /// it for the first batch it plays).
    fn batch_begins(&mut self, _b: usize) {}

    /// After batch `b` (0-based) was learned, before its checkpoint: a learner may keep
    /// snapshots of the parameters (written atomically: a kill before the checkpoint replays
    /// the batch, which writes the same bits again).
    fn after_batch(&mut self, _b: usize, _params: &Params) -> Result<(), String> {
        Ok(())
    }

    /// Learns from one batch of games (in game order), updating `params` through `opt`;
    /// returns the batch's figures for the log.
    fn learn(&mut self, params: &mut Params, opt: &mut dyn Optimizer, games: &[Trajectory], rng: &mut Rng) -> Result<EpochStats, String>;

    /// Whether `learn` steps the stage's optimizer. A learner that updates by optimizers of
    /// its own (seed 002's author recipe: a fresh Adam per move) leaves the stage's at step
    /// 0, and its checkpoints are resumed as such.
    fn steps_optimizer(&self) -> bool {
        true
    }
}

/// The stream of game `g` of batch `b`: a function of (seed, stage, b, g) alone.
pub fn game_rng(seed: u64, stage: &str, b: usize, g: usize) -> Rng {
    let mut h = seed ^ 0x9A3E_5EED_0B5E_55ED;
    for x in stage.bytes().map(u64::from).chain([b as u64, g as u64]) {
        h = (h ^ x).wrapping_mul(0x100_0000_01b3).rotate_left(17);
    }
    Rng::new(h)
}

/// Plays one game: the opening, then the actor until the rules end it or `max_plies`.
fn play<L: EpisodeLearner>(actor: &mut L::Actor, cfg: &EpisodeCfg, explore: f64, rng: &mut Rng) -> Trajectory {
    let (start, prefix, random_plies): (Position, &[Move], usize) = match &cfg.opening {
        Opening::Start => (Position::startpos(), &[], 0),
        Opening::RandomPlies(n) => (Position::startpos(), &[], rng.below(*n as u64 + 1) as usize),
        Opening::Book(book, n) => (book[rng.below(book.len().max(1) as u64) as usize], &[], rng.below(*n as u64 + 1) as usize),
        Opening::Lines(lines, low) => {
            let (p, moves) = &lines[rng.below(lines.len().max(1) as u64) as usize];
            let from = ((moves.len() as f64 * low.clamp(0.0, 1.0)).round() as usize).min(moves.len());
            let k = from + rng.below((moves.len() - from) as u64 + 1) as usize;
            (*p, &moves[..k], 0)
        }
    };
    L::begin(actor);
    let mut game = Game::new(start);
    let mut opening = Vec::new();
    for &m in prefix {
        if game.outcome().is_some() || !game.position().is_legal(m) {
            break;
        }
        game.play_unchecked(m);
        opening.push(m);
    }
    for _ in 0..random_plies {
        let moves = game.position().legal_moves();
        if moves.is_empty() || game.outcome().is_some() {
            break;
        }
        let m = moves.as_slice()[rng.below(moves.len() as u64) as usize];
        game.play_unchecked(m);
        opening.push(m);
    }
    let mut t = Trajectory {
        opening_start: start,
        opening,
        start: *game.position(),
        positions: Vec::new(),
        moves: Vec::new(),
        rewards: Vec::new(),
        outcome: Outcome::Draw,
        end: End::MoveLimit,
    };
    loop {
        if let Some((outcome, ending)) = game.outcome() {
            let ends = if cfg.king_capture { matches!(ending, Ending::Repetition | Ending::FiftyMoves) && cfg.rule_draws } else { cfg.rule_draws || !matches!(ending, Ending::Repetition | Ending::FiftyMoves) };
            if ends {
                (t.outcome, t.end) = (outcome, End::Rules(ending));
                return t;
            }
        }
        if game.moves().len() >= cfg.max_plies {
            return t;
        }
        let before = *game.position();
        // Without check, the moves the actor may choose among (none: a draw).
        let pseudo = cfg.king_capture.then(|| before.pseudo_legal_moves());
        if pseudo.as_ref().is_some_and(Vec::is_empty) {
            t.end = End::NoMove;
            return t;
        }
        let m = L::act(actor, &game, explore, rng);
        match &pseudo {
            Some(moves) => assert!(moves.contains(&m), "the actor chose {m}, not a move in {}", before.fen()),
            None => assert!(before.is_legal(m), "the actor chose {m}, illegal in {}", before.fen()),
        }
        if cfg.king_capture && before.takes_king(m) {
            // The game ends here, the move unplayed: the learner sees it as the last.
            t.rewards.push(L::reward(actor, &before, m, &before));
            t.positions.push(before);
            t.moves.push(m);
            (t.outcome, t.end) = (Outcome::Win(before.turn()), End::KingTaken);
            return t;
        }
        game.play_unchecked(m);
        t.rewards.push(L::reward(actor, &before, m, game.position()));
        t.positions.push(before);
        t.moves.push(m);
    }
}

impl Ctx {
    /// Runs the remaining batches of episode stage `name` with `learner`, `threads` games at
    /// once, checkpointing after each batch.
    pub fn run_episodes<L: EpisodeLearner>(&mut self, name: &str, params: &mut Params, cfg: &EpisodeCfg, threads: usize, learner: &mut L) -> Result<(), String> {
        let mut opt = cfg.opt.build();
        let start = self.resume_stage(name, params, opt.as_mut(), cfg.batches, ("batches_done", "batch", "batches"), learner.steps_optimizer())?;
        for b in start..cfg.batches {
            let t = Instant::now();
            let explore = cfg.exploration.at(b);
            learner.batch_begins(b);
            let games = self.play_batch(name, b, learner, params, cfg, explore, threads.max(1));
            let played = t.elapsed().as_secs_f64();
            let lr = opt.lr();
            let mut rng = super::stage::epoch_rng(self.seed, name, b);
            let st = learner.learn(params, opt.as_mut(), &games, &mut rng)?;
            learner.after_batch(b, params)?;
            opt.end_epoch();
            let secs = t.elapsed().as_secs_f64();
            let plies: usize = games.iter().map(|g| g.moves.len()).sum();
            eprintln!(
                "[{name}] batch {}/{} loss {:.5} explore {explore:.3} {} games ({plies} plies) in {played:.1}s, {:.1} games/s, {:.1}s",
                b + 1,
                cfg.batches,
                st.loss,
                games.len(),
                games.len() as f64 / played.max(1e-9),
                secs
            );
            let row = Row { phase: name.to_string(), epoch: b + 1, lr, loss: st.loss, train_acc: st.train_acc, val_acc: st.val_acc, seconds: secs, rate: games.len() as f64 / secs.max(1e-9) };
            self.log.push(row).map_err(|e| format!("writing the log in {}: {e}", self.dir.display()))?;
            self.log_extras(name, ("batch", b), lr, secs, &st)?;
            self.save_checkpoint(name, ("batches_done", b + 1), &st, params, opt.as_ref())?;
        }
        Ok(())
    }

    /// Plays the games of batch `b`, in parallel, in game order.
    #[allow(clippy::too_many_arguments)]
    fn play_batch<L: EpisodeLearner>(&self, name: &str, b: usize, learner: &L, params: &Params, cfg: &EpisodeCfg, explore: f64, threads: usize) -> Vec<Trajectory> {
        let n = cfg.games_per_batch;
        let mut prog = Progress::new(format!("[{name}] batch {}", b + 1), n);
        let done = std::sync::atomic::AtomicUsize::new(0);
        let mut games: Vec<Option<Trajectory>> = vec![None; n];
        std::thread::scope(|scope| {
            let chunks: Vec<(usize, &mut [Option<Trajectory>])> = {
                let per = n.div_ceil(threads).max(1);
                games.chunks_mut(per).enumerate().map(|(i, c)| (i * per, c)).collect()
            };
            let mut handles = Vec::new();
            for (first, chunk) in chunks {
                let mut actor = learner.actor(params);
                let (seed, done) = (self.seed, &done);
                handles.push(scope.spawn(move || {
                    for (k, slot) in chunk.iter_mut().enumerate() {
                        let mut rng = game_rng(seed, name, b, first + k);
                        *slot = Some(play::<L>(&mut actor, cfg, explore, &mut rng));
                        done.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                }));
            }
            while handles.iter().any(|h| !h.is_finished()) {
                prog.update(done.load(std::sync::atomic::Ordering::Relaxed), f64::NAN, None, "games");
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            for h in handles {
                if let Err(p) = h.join() {
                    std::panic::resume_unwind(p);
                }
            }
        });
        prog.finish();
        games.into_iter().map(|g| g.expect("every game was played")).collect()
    }

    /// Restores stage `name` from the run's checkpoint when it holds it (`count_key`: the
    /// key of the units done, checked against `total`; `unit`, `units`: their name in
    /// messages; `stepped`: the optimizer has taken steps by then), and the log rows of the
    /// last unit done where the log lost them; returns the units done.
    pub(super) fn resume_stage(&mut self, name: &str, params: &mut Params, opt: &mut dyn Optimizer, total: usize, (count_key, unit, units): (&str, &str, &str), stepped: bool) -> Result<usize, String> {
        let ck = self.dir.join("checkpoint.dcw");
        if !(self.resume && ck.exists()) {
            return Ok(0);
        }
        let c = Checkpoint::load(&ck).map_err(|e| e.to_string())?;
        if c.meta("stage") != Some(name) {
            return Ok(0);
        }
        if c.meta("seed") != Some(&self.seed.to_string()) {
            return Err(format!("{}: made with another --seed ({:?}); resume with the same settings", ck.display(), c.meta("seed")));
        }
        // Checked against the stage as a net is against its architecture: a count beyond
        // the schedule would end the stage at once with a "finished" net.
        let done = c.meta(count_key).unwrap_or("(missing)");
        let start = match done.parse::<usize>() {
            Ok(n) if (1..=total).contains(&n) => n,
            _ => return Err(format!("{}: {count_key} '{done}' in stage {name}, which has {total} {}: not a checkpoint of this run", ck.display(), if total == 1 { unit } else { units })),
        };
        c.restore(params, opt, stepped, &ck.display().to_string())?;
        if let Some(rows) = c.meta(LOG_ROWS) {
            self.log.restore(rows).map_err(|e| format!("writing the log in {}: {e}", self.dir.display()))?;
        }
        eprintln!("[{}{name}] resuming after {unit} {start} from {}", self.label, ck.display());
        Ok(start)
    }

    /// Writes the run's checkpoint after `done` units (epochs, batches) of stage `name`,
    /// with the log rows of the last one (the stage's row and those of `st`'s figures).
    pub(super) fn save_checkpoint(&self, name: &str, (count_key, done): (&str, usize), st: &EpochStats, params: &Params, opt: &dyn Optimizer) -> Result<(), String> {
        let phases: Vec<String> = std::iter::once(name.to_string()).chain(st.extra.iter().map(|x| format!("{name}.{}", x.label))).collect();
        let rows: Vec<Row> = self.log.rows.iter().filter(|r| r.epoch == done && phases.contains(&r.phase)).cloned().collect();
        let mut meta = self.meta.clone();
        meta.push(("stage".into(), name.into()));
        meta.push((count_key.into(), done.to_string()));
        meta.push(("seed".into(), self.seed.to_string()));
        meta.push((LOG_ROWS.into(), super::log::unit_text(&rows)));
        Checkpoint::save(&self.dir.join("checkpoint.dcw"), &meta, params, opt).map_err(|e| e.to_string())
    }
}

/// The checkpoint's header key holding the log rows of the unit it closes.
const LOG_ROWS: &str = "log.rows";
