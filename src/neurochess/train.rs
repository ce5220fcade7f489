//! Training (seed §3–§4): the chess model M on expert pairs (an epoch stage), then V by
//! TD(0) over games sampled as an expert prefix completed by self-play (an episode stage),
//! with EBNN's slopes or without them (plain back-propagation).
//!
//! V's targets, for the boards s_0 … s_T of one game (the expert prefix, the boards before
//! each self-played move, the final board), White's expected result z ∈ {+1, 0, −1}:
//! - the final board: z, its loss weighted ×20 (the seed's "learning rate for final values
//!   amplified by a factor of 20");
//! - every other *quiescent* board s_t: γ·V(s_{t+2}) (γ = 0.98), or γ·z when s_{t+2} is not
//!   before the final board; with EBNN also the slope γ·∇V(s_{t+2})·∂M(s_t)/∂s_t wherever
//!   s_{t+2} exists (Eq. 3–5), fitted by Tangent-Prop with weight λ.
//!
//! Targets and slopes of a batch come from V as it stood when the batch's games were played
//! (the same net that played them), so a batch is one deterministic function of the
//! parameters and the batch's streams, and a resumed run is bit-identical.

use super::data::Pairs;
use super::features::{is_quiescent, is_quiescent_both};
use super::model::{Model, Pass, Value};
use super::infer::{searcher, VEval};
use crate::chess::{Color, Game, Move, Outcome, Position};
use crate::eval::scalar::ScoreComparator;
use crate::search::{Limits, Searcher};
use crate::tensor::{active_kernel, Matrix, Optimizer, Params, Precision, Rng, Tape};
use crate::train::checkpoint::OptCfg;
use crate::train::episode::{EpisodeLearner, Trajectory};
use crate::train::stage::{Ctx, EpochStats, StageCfg};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};
use crate::tensor::NetFile;

/// The two ways V learns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// TD(0) values only.
    Bp,
    /// TD(0) values and M's slopes (Tangent-Prop).
    Ebnn,
}

impl Variant {
    pub fn name(self) -> &'static str {
        match self {
            Variant::Bp => "bp",
            Variant::Ebnn => "ebnn",
        }
    }

    pub fn parse(s: &str) -> Option<Variant> {
        match s {
            "bp" => Some(Variant::Bp),
            "ebnn" => Some(Variant::Ebnn),
            _ => None,
        }
    }
}

// ---------------------------------------------------------------- the chess model M

/// M's schedule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ModelCfg {
    pub epochs: usize,
    pub batch: usize,
    pub lr: f32,
}

/// M's mean squared error per feature on `pairs`, and the same for the "copy" prediction
/// s_{t+2} = s_t (what M must beat to have learned anything).
pub fn model_error(m: &Model, pairs: &Pairs) -> (f64, f64) {
    let (mut e, mut c) = (0.0f64, 0.0f64);
    let (mut h, mut y) = (Vec::new(), vec![0.0f32; m.width()]);
    for i in 0..pairs.len() {
        let (x, t) = pairs.row(i);
        m.forward(x, &mut h, &mut y);
        e += y.iter().zip(t).map(|(a, b)| ((a - b) as f64).powi(2)).sum::<f64>();
        c += x.iter().zip(t).map(|(a, b)| ((a - b) as f64).powi(2)).sum::<f64>();
    }
    let n = (pairs.len() * m.width()).max(1) as f64;
    (e / n, c / n)
}

/// M's error on one feature group.
pub struct GroupError {
    pub name: &'static str,
    pub features: usize,
    /// Mean squared error per feature of M, and of the copy prediction.
    pub model: f64,
    pub copy: f64,
}

/// M's error per block of features (both sides' blocks together, then the globals).
pub fn group_errors(m: &Model, pairs: &Pairs) -> Vec<GroupError> {
    let groups = m.features.groups();
    let mut sums = vec![(0.0f64, 0.0f64); groups.len()];
    let (mut h, mut y) = (Vec::new(), vec![0.0f32; m.width()]);
    for i in 0..pairs.len() {
        let (x, t) = pairs.row(i);
        m.forward(x, &mut h, &mut y);
        for (g, s) in groups.iter().zip(sums.iter_mut()) {
            for &f in &g.1 {
                s.0 += ((y[f] - t[f]) as f64).powi(2);
                s.1 += ((x[f] - t[f]) as f64).powi(2);
            }
        }
    }
    groups
        .into_iter()
        .zip(sums)
        .map(|((name, idx), (e, c))| {
            let n = (pairs.len() * idx.len()).max(1) as f64;
            GroupError { name, features: idx.len(), model: e / n, copy: c / n }
        })
        .collect()
}

/// Trains M on `train` as stage `model` of the run in `ctx` (Adam, mean squared error per
/// feature); the held-out games' error is the epoch's `model.valid_mse` curve.
pub fn train_model(ctx: &mut Ctx, m: &mut Model, train: &Pairs, valid: &Pairs, cfg: &ModelCfg) -> Result<(), String> {
    let stage = StageCfg { epochs: cfg.epochs, samples: train.len(), batch: cfg.batch, opt: OptCfg::Adam { lr: cfg.lr, decay: 1.0, weight_decay: 0.0 }, precision: Precision::F32 };
    let mut order: Vec<usize> = (0..train.len()).collect();
    let mut tape = Tape::new();
    let (mut x, mut y) = (Matrix::zeros(0, 0), Matrix::zeros(0, 0));
    let mut params = std::mem::take(&mut m.params);
    let result = ctx.run_stage("model", &mut params, &stage, |params, opt, epoch, rng| {
        m.params = std::mem::take(params);
        order.sort_unstable();
        rng.shuffle(&mut order);
        let (mut loss, mut seen) = (0.0f64, 0usize);
        let t = Instant::now();
        let batches = order.len().div_ceil(cfg.batch.max(1));
        for (b, chunk) in order.chunks(cfg.batch.max(1)).enumerate() {
            x.resize(chunk.len(), m.width());
            y.resize(chunk.len(), m.width());
            for (r, &i) in chunk.iter().enumerate() {
                let (a, c) = train.row(i);
                x.row_mut(r).copy_from_slice(a);
                y.row_mut(r).copy_from_slice(c);
            }
            tape.reset();
            let (l, _) = m.loss_on_tape(&mut tape, &x, &y).map_err(|e| e.to_string())?;
            let lv = tape.scalar(l);
            if !lv.is_finite() {
                return Err(format!("model epoch {} batch {b}: the loss is {lv}: training diverged (lower the learning rate)", epoch + 1));
            }
            loss += lv as f64 * chunk.len() as f64;
            seen += chunk.len();
            tape.backward(l, &mut m.params).map_err(|e| e.to_string())?;
            opt.step(&mut m.params);
            if b % 100 == 99 {
                eprint!("\r[model] epoch {} batch {}/{batches} mse {:.5} {:.0} pairs/s   ", epoch + 1, b + 1, loss / seen as f64, seen as f64 / t.elapsed().as_secs_f64().max(1e-9));
            }
        }
        eprintln!();
        let (val, copy) = model_error(m, valid);
        *params = std::mem::take(&mut m.params);
        Ok(EpochStats::new(loss / seen.max(1) as f64, f64::NAN, f64::NAN, seen).with_figure("valid_mse", val).with_figure("valid_copy_mse", copy))
    });
    m.params = params;
    result
}

// ---------------------------------------------------------------- V by TD(0)

/// The discount γ (the seed's 0.98): the profiles' and the analyses' (`neurochess-slopes`).
pub const GAMMA: f32 = 0.98;

/// V's learning settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TdCfg {
    /// The discount γ (the seed's 0.98).
    pub gamma: f32,
    /// The weight of final boards' loss (the seed's ×20 learning rate).
    pub final_weight: f32,
    /// The result also on the board before the final one, at the final weight (beyond the
    /// seed): a decisive game's final board always has the loser to move, so trained alone
    /// it teaches V that having the move loses; with the board before it (the winner to
    /// move) beside it, the side to move no longer predicts the result.
    pub final_both: bool,
    /// Boards trained only where neither side can win material by a capture
    /// ([`is_quiescent_both`]; beyond our first reading of the seed, closer to its "detects
    /// material threats"); off: where the side to move cannot ([`is_quiescent`]).
    pub quiet_both: bool,
    /// Tangent-Prop's slope weight λ (used when a chess model is given: EBNN).
    pub slope_weight: f32,
    /// Each slope weighted by M's reliability on its own transition (the seed's citation of
    /// EBNN: slopes count less where the domain theory predicts badly), λ·r with
    /// r = max(0, 1 − e/(2ē)): e the mean squared error per feature of M(s_t) against the
    /// s_{t+2} the game reached, ē M's on held-out expert pairs ([`Td::model_error`]). Off: λ
    /// for every slope.
    pub reliability: bool,
    /// EBNN's slopes carried in V's logit u (V = tanh u; beyond the seed): the target is
    /// `γ·(1 − V(s_t)²)·∇u(s_{t+2})·∂M/∂s_t` instead of `γ·∇V(s_{t+2})·∂M/∂s_t` (V there is V0,
    /// the net that played the game, as for the value targets), so a slope taken
    /// where V is nearer ±1 than at s_t (the game moving towards a result) does not ask V at
    /// s_t for a flatter logit than the value target does. Off: the seed's slopes of V itself.
    pub slope_logit: bool,
    /// Boards per gradient step.
    pub batch: usize,
    /// Passes over each batch's boards (the seed's workers drew from ring buffers of recent
    /// boards, so each board served more than one step).
    pub passes: usize,
    /// The self-play search depth (plies, quiescence on).
    pub depth: u32,
}

/// The TD(0) learner of the episode stage: plays with V in our search, learns from the
/// batch's games; EBNN when it holds a chess model.
pub struct Td {
    pub cfg: TdCfg,
    /// V's shape (its parameters are the stage's).
    pub template: Value,
    pub model: Option<Arc<Model>>,
    /// M's mean squared error per feature on held-out expert pairs (ē of
    /// [`TdCfg::reliability`]).
    pub model_error: f32,
    /// Per feature, its slope term's weight (1, or 0 for the feature groups `--slopes-off`
    /// names); `None`: every feature's slope counts.
    pub slope_features: Option<Vec<f32>>,
    /// Where V is saved after every batch (`v-GAMES.dcw`, GAMES the games played so far),
    /// with these header entries: the points of the learning curve.
    pub snapshots: Option<(std::path::PathBuf, usize, Vec<(String, String)>)>,
}

/// The most nodes a self-play move may search (beyond the depth limit).
pub const SELF_PLAY_NODES: u64 = 50_000;

/// The self-play side of one thread: V in the search.
pub struct Actor {
    search: Searcher<ScoreComparator<VEval>>,
    depth: u32,
}

/// One board V trains on.
struct Example {
    x: Vec<f32>,
    target: f32,
    weight: f32,
    /// The target slope, its reliability r (1 under a constant λ), and its norm against γ
    /// times the gradient M carries back (∇V(s_{t+2}), or its logit's scaled to s_t's level
    /// under [`TdCfg::slope_logit`]): how much M's Jacobian shrinks what it carries.
    slope: Option<(Vec<f32>, f32, f32)>,
    expert: bool,
}

/// White's result as a number.
pub fn result_value(o: Outcome) -> f32 {
    match o {
        Outcome::Win(Color::White) => 1.0,
        Outcome::Win(Color::Black) => -1.0,
        Outcome::Draw => 0.0,
    }
}

/// The boards of a game, s_0 … s_T (the opening's, then the actor's, then the final one),
/// and whether each came from the expert prefix.
pub fn boards(t: &Trajectory) -> Vec<(Position, bool)> {
    let mut out = Vec::with_capacity(t.opening.len() + t.positions.len() + 1);
    let mut g = Game::new(t.opening_start);
    for &m in &t.opening {
        out.push((*g.position(), true));
        g.play_unchecked(m);
    }
    let mut last = *g.position();
    for (p, &m) in t.positions.iter().zip(&t.moves) {
        out.push((*p, false));
        last = *p;
        last.play(m);
    }
    out.push((last, false));
    out
}

/// The TD(0) targets of one game (in board order): `(board index, target, weight)` for every
/// board trained on, the final one last. `quiescent[t]` says which boards may be trained.
/// With `final_both`, the board before the final one is trained on the result too, at
/// `final_weight` ([`TdCfg::final_both`]).
pub fn td_targets(values: &[f32], quiescent: &[bool], z: f32, gamma: f32, final_weight: f32, final_both: bool) -> Vec<(usize, f32, f32)> {
    let last = values.len() - 1;
    let before = if final_both && last > 0 { Some(last - 1) } else { None };
    let mut out: Vec<(usize, f32, f32)> =
        (0..last).filter(|&t| quiescent[t] && Some(t) != before).map(|t| (t, if t + 2 < last { gamma * values[t + 2] } else { gamma * z }, 1.0)).collect();
    if let Some(b) = before {
        out.push((b, z, final_weight));
    }
    out.push((last, z, final_weight));
    out
}

/// EBNN's target slope at s_t (Eq. 4–5): `γ·∇V(s_{t+2})·∂M(s_t)/∂s_t`, V's slope at the
/// board two plies on (`next`, V0's pass there) carried back through M at `x_t`. With `logit`
/// ([`TdCfg::slope_logit`]) the slope of V's logit is carried instead and taken at V(s_t)'s
/// level `v_t`: `γ·(1 − v_t²)·∇u(s_{t+2})·∂M/∂s_t`. `grad` is scratch (F); returns the slope (F).
#[allow(clippy::too_many_arguments)]
pub fn slope_target(v0: &Value, m: &Model, x_t: &[f32], v_t: f32, next: &Pass, gamma: f32, logit: bool, grad: &mut [f32]) -> Vec<f32> {
    let a = if logit { 1.0 - v_t * v_t } else { 1.0 - next.v * next.v };
    v0.input_gradient_scaled(next, a, grad);
    let mut s = vec![0.0f32; x_t.len()];
    m.vjp(x_t, grad, &mut s);
    s.iter_mut().for_each(|v| *v *= gamma);
    s
}

/// M's reliability on one transition s_t → s_{t+2}: 1 where it predicts the features exactly,
/// falling linearly to 0 at twice its mean held-out error `mean_error` ([`TdCfg::reliability`]).
pub fn reliability(m: &Model, x: &[f32], next: &[f32], mean_error: f32) -> f32 {
    let (mut h, mut y) = (Vec::new(), vec![0.0f32; m.width()]);
    m.forward(x, &mut h, &mut y);
    let e = y.iter().zip(next).map(|(a, b)| (a - b) * (a - b)).sum::<f32>() / m.width() as f32;
    (1.0 - e / (2.0 * mean_error.max(1e-12))).clamp(0.0, 1.0)
}

/// The file of the snapshot after `games` training games.
pub fn snapshot_name(games: usize) -> String {
    format!("v-{games:05}.dcw")
}

impl Td {
    fn value_of(&self, params: &Params) -> Value {
        Value { features: self.template.features, hidden: self.template.hidden, params: params.clone(), ids: self.template.ids }
    }

    /// The examples of one game, from V0 (the net that played it).
    fn examples(&self, v0: &Value, game: &Trajectory, out: &mut Vec<Example>) {
        let boards = boards(game);
        let n = boards.len();
        let fs = self.template.features;
        let width = fs.width();
        let mut xs = vec![vec![0.0f32; width]; n];
        let mut values = vec![0.0f32; n];
        let mut passes = vec![Pass::default(); n];
        for (i, (p, _)) in boards.iter().enumerate() {
            fs.features_into(p, &mut xs[i]);
            values[i] = v0.forward(&xs[i], &mut passes[i]);
        }
        let quiet = if self.cfg.quiet_both { is_quiescent_both } else { is_quiescent };
        let quiescent: Vec<bool> = boards.iter().map(|(p, _)| quiet(p)).collect();
        let z = result_value(game.outcome);
        let (gamma, last) = (self.cfg.gamma, n - 1);
        let mut grad = vec![0.0f32; width];
        for (t, target, weight) in td_targets(&values, &quiescent, z, gamma, self.cfg.final_weight, self.cfg.final_both) {
            let slope = match &self.model {
                Some(m) if t + 2 <= last => {
                    let s = slope_target(v0, m, &xs[t], values[t], &passes[t + 2], gamma, self.cfg.slope_logit, &mut grad);
                    let r = if self.cfg.reliability { reliability(m, &xs[t], &xs[t + 2], self.model_error) } else { 1.0 };
                    let norm = |v: &[f32]| v.iter().map(|a| a * a).sum::<f32>().sqrt();
                    let shrink = norm(&s) / (gamma * norm(&grad)).max(1e-12);
                    Some((s, r, shrink))
                }
                _ => None,
            };
            out.push(Example { x: xs[t].clone(), target, weight, slope, expert: boards[t].1 });
        }
    }
}

impl EpisodeLearner for Td {
    type Actor = Actor;

    fn actor(&self, params: &Params) -> Actor {
        Actor { search: searcher(self.value_of(params), active_kernel(), 1), depth: self.cfg.depth }
    }

    fn begin(actor: &mut Actor) {
        actor.search.clear();
    }

    fn act(actor: &mut Actor, game: &Game, explore: f64, rng: &mut Rng) -> Move {
        if explore > 0.0 && rng.next_f64() < explore {
            let moves = game.position().legal_moves();
            return moves.as_slice()[rng.below(moves.len() as u64) as usize];
        }
        let stop = Arc::new(AtomicBool::new(false));
        // A node budget as well as the depth: with a V that does not yet see material,
        // standing pat rarely cuts and a quiescence search among many mutual captures can
        // run to millions of nodes (1.5M for one depth-2 move of an early run). Nodes are
        // counted, not timed, so a game stays a function of its inputs.
        let limits = Limits { nodes: Some(SELF_PLAY_NODES), ..Limits::depth(actor.depth) };
        let r = actor.search.search(game, &limits, Duration::ZERO, stop, &mut |_| {});
        r.best.expect("the game has a legal move")
    }

    fn after_batch(&mut self, b: usize, params: &Params) -> Result<(), String> {
        let Some((dir, per_batch, meta)) = &self.snapshots else { return Ok(()) };
        let file = dir.join(snapshot_name((b + 1) * per_batch));
        let mut meta = meta.clone();
        meta.push(("games".into(), ((b + 1) * per_batch).to_string()));
        self.value_of(params).save(&file, &meta).map_err(|e| format!("{}: {e}", file.display()))
    }

    fn learn(&mut self, params: &mut Params, opt: &mut dyn Optimizer, games: &[Trajectory], rng: &mut Rng) -> Result<EpochStats, String> {
        let v0 = self.value_of(params);
        let mut ex = Vec::new();
        for g in games {
            self.examples(&v0, g, &mut ex);
        }
        let mut v = Value { features: self.template.features, hidden: self.template.hidden, params: std::mem::take(params), ids: self.template.ids };
        let (mut value_loss, mut slope_loss, mut final_loss) = (0.0f64, 0.0f64, 0.0f64);
        let (mut finals, mut expert) = (0usize, 0usize);
        let mut pass = Pass::default();
        let lambda = self.cfg.slope_weight;
        let passes = self.cfg.passes.max(1);
        let mut order: Vec<usize> = (0..ex.len()).collect();
        for pass_no in 0..passes {
            rng.shuffle(&mut order);
            // The figures are those of the last pass.
            if pass_no + 1 == passes {
                (value_loss, slope_loss, final_loss, finals, expert) = (0.0, 0.0, 0.0, 0, 0);
            }
            for chunk in order.chunks(self.cfg.batch.max(1)) {
                for e in chunk.iter().map(|&i| &ex[i]) {
                    let slope = e.slope.as_ref().map(|(s, r, _)| (&s[..], lambda * r, self.slope_features.as_deref()));
                    let (lv, ls) = v.accumulate(&e.x, e.target, e.weight, slope, &mut pass);
                    if e.weight == 1.0 {
                        value_loss += lv as f64;
                    } else {
                        final_loss += (lv / e.weight) as f64;
                        finals += 1;
                    }
                    slope_loss += ls as f64;
                    expert += e.expert as usize;
                }
                let scale = 1.0 / chunk.len() as f32;
                for id in v.ids.iter().flatten() {
                    v.params.grad_mut(*id).data_mut().iter_mut().for_each(|g| *g *= scale);
                }
                opt.step(&mut v.params);
            }
        }
        *params = v.params;
        if !value_loss.is_finite() || !slope_loss.is_finite() {
            return Err(format!("the TD loss is {value_loss} (slopes {slope_loss}): training diverged (lower the learning rate or the slope weight)"));
        }
        let inner = (ex.len() - finals).max(1) as f64;
        let plies: usize = games.iter().map(|g| g.moves.len()).sum();
        let white = games.iter().filter(|g| g.outcome == Outcome::Win(Color::White)).count();
        let black = games.iter().filter(|g| g.outcome == Outcome::Win(Color::Black)).count();
        let n = games.len().max(1) as f64;
        let mut st = EpochStats::new(value_loss / inner, f64::NAN, f64::NAN, ex.len())
            .with_figure("final_mse", final_loss / finals.max(1) as f64)
            .with_figure("expert_share", expert as f64 / ex.len().max(1) as f64)
            .with_figure("self_play_plies", plies as f64 / n)
            .with_figure("white_wins", white as f64 / n)
            .with_figure("black_wins", black as f64 / n);
        if self.model.is_some() {
            st = st.with_figure("slope_mse", slope_loss / inner / lambda.max(1e-12) as f64 / self.template.width() as f64);
            let slopes: Vec<(f32, f32)> = ex.iter().filter_map(|e| e.slope.as_ref().map(|(_, r, k)| (*r, *k))).collect();
            let mean = |f: &dyn Fn(&(f32, f32)) -> f32| slopes.iter().map(|x| f(x) as f64).sum::<f64>() / slopes.len().max(1) as f64;
            st = st.with_figure("slope_reliability", mean(&|x| x.0)).with_figure("slope_shrink", mean(&|x| x.1));
        }
        Ok(st)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `final_both`: the board before the final one takes the result at the final weight (the
    /// winner to move beside the loser to move), in place of its γ·z; the others are as the
    /// seed's, and a one-board game has no board before.
    #[test]
    fn td_targets_with_the_result_on_both_final_boards() {
        let values = [0.1, -0.2, 0.3, 0.4, 0.9];
        let q = [true, true, false, false, true];
        let t = td_targets(&values, &q, -1.0, 0.98, 20.0, true);
        assert_eq!(t, vec![(0, 0.98 * 0.3, 1.0), (1, 0.98 * 0.4, 1.0), (3, -1.0, 20.0), (4, -1.0, 20.0)]);
        assert_eq!(td_targets(&[0.5], &[true], 1.0, 0.98, 20.0, true), vec![(0, 1.0, 20.0)]);
    }

    /// The TD targets on a hand-made game of five boards s_0 … s_4 (s_4 final, a White win):
    /// s_0 and s_1 look two plies ahead (γ·V(s_2), γ·V(s_3)); s_3's board two plies on lies
    /// past the final one, so it takes γ·z; the final board takes z weighted ×20; s_2, not
    /// quiescent, is left out.
    #[test]
    fn td_targets_on_a_hand_made_game() {
        let values = [0.1, -0.2, 0.3, 0.4, 0.9];
        let q = [true, true, false, true, true];
        let t = td_targets(&values, &q, 1.0, 0.98, 20.0, false);
        let want = [(0, 0.98 * 0.3, 1.0), (1, 0.98 * 0.4, 1.0), (3, 0.98, 1.0), (4, 1.0, 20.0)];
        assert_eq!(t.len(), want.len());
        for (a, b) in t.iter().zip(want) {
            assert_eq!(a.0, b.0);
            assert!((a.1 - b.1).abs() < 1e-6 && a.2 == b.2, "{a:?} vs {b:?}");
        }
        // A game of the final board alone trains only that board.
        assert_eq!(td_targets(&[0.5], &[true], -1.0, 0.98, 20.0, false), vec![(0, -1.0, 20.0)]);
    }

    /// EBNN's slope target: V's own slope carried through M (checked against finite
    /// differences of γ·V(M(x)) where M's output is the board two plies on), and in the logit,
    /// the same slope rescaled from the tanh's derivative at s_t+2 to its derivative at s_t
    /// (against finite differences of γ·(1 − V(s_t)²)·atanh V(M(x))).
    #[test]
    fn slope_target_in_value_and_in_logit() {
        let mut rng = Rng::new(5);
        let n = crate::neurochess::features::FEATURES;
        let v = Value::new(9, &mut rng);
        let m = Model::new(&mut rng);
        let x: Vec<f32> = (0..n).map(|i| ((i * 37) % 11) as f32 / 11.0).collect();
        let through_m = |x: &[f32], pass: &mut Pass| {
            let (mut h, mut y) = (Vec::new(), vec![0.0f32; n]);
            m.forward(x, &mut h, &mut y);
            v.forward(&y, pass)
        };
        let mut next = Pass::default();
        let v_next = through_m(&x, &mut next);
        let v_t = 0.8f32;
        let mut grad = vec![0.0f32; n];
        let plain = slope_target(&v, &m, &x, v_t, &next, 0.98, false, &mut grad);
        let logit = slope_target(&v, &m, &x, v_t, &next, 0.98, true, &mut grad);
        let scale = (1.0 - v_t * v_t) / (1.0 - v_next * v_next);
        // The two spaces must differ here by more than the tolerances below.
        assert!(!(0.9..=1.1).contains(&scale), "the test's boards must differ in level ({scale})");
        let big = plain.iter().fold(0.0f32, |m, s| m.max(s.abs()));
        assert!(big > 1e-2, "slopes too small to tell the spaces apart ({big})");
        let close = |a: f32, b: f32| (a - b).abs() <= 0.02 * b.abs() + 2e-4;
        let (eps, mut scratch) = (1e-3f32, Pass::default());
        for i in (0..n).step_by(5) {
            let (mut up, mut down) = (x.clone(), x.clone());
            up[i] += eps;
            down[i] -= eps;
            let (vu, vd) = (through_m(&up, &mut scratch), through_m(&down, &mut scratch));
            let fd = 0.98 * (vu - vd) / (2.0 * eps);
            assert!(close(plain[i], fd), "value slope [{i}]: {} vs {fd}", plain[i]);
            let fd_logit = 0.98 * (1.0 - v_t * v_t) * (vu.atanh() - vd.atanh()) / (2.0 * eps);
            assert!(close(logit[i], fd_logit), "logit slope [{i}]: {} vs {fd_logit}", logit[i]);
            assert!((logit[i] - scale * plain[i]).abs() <= 1e-5 * (1.0 + (scale * plain[i]).abs()));
        }
        // Taken at s_t+2's own level, the logit's slope is V's: the two spaces agree.
        let same = slope_target(&v, &m, &x, v_next, &next, 0.98, true, &mut grad);
        for (a, b) in same.iter().zip(&plain) {
            assert!((a - b).abs() <= 1e-5 * (1.0 + b.abs()), "{a} vs {b}");
        }
    }

    /// M's reliability on a transition: 1 where the board reached is M's prediction, ½ at M's
    /// mean error, 0 from twice it on.
    #[test]
    fn reliability_falls_with_m_s_error_on_the_transition() {
        let m = Model::new(&mut Rng::new(3));
        let n = crate::neurochess::features::FEATURES;
        let x: Vec<f32> = (0..n).map(|i| (i % 7) as f32 / 7.0).collect();
        let (mut h, mut y) = (Vec::new(), vec![0.0f32; n]);
        m.forward(&x, &mut h, &mut y);
        assert_eq!(reliability(&m, &x, &y, 0.01), 1.0);
        // Every feature off by 0.1: e = 0.01.
        let off: Vec<f32> = y.iter().map(|v| v + 0.1).collect();
        assert!((reliability(&m, &x, &off, 0.01) - 0.5).abs() < 1e-4);
        assert!((reliability(&m, &x, &off, 0.005)).abs() < 1e-6);
        assert!((reliability(&m, &x, &off, 0.02) - 0.75).abs() < 1e-4);
    }
}
