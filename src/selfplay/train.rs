//! Learning (seed 002, "rewards" and "Q-learning"): the two agents play each other on the
//! episode stage, and each learns from its own moves.
//!
//! The reward of an agent's move a_t (seed: "if the white agent takes black's Queen, it gets a
//! reward of +9"; "we need to evaluate how the opponent responded … a cumulative reward of
//! −8"): the value of what a_t captures, minus the value of what the opponent's reply captures,
//! −0.1 when a_t captures nothing. A mate is worth the king's 255 (the seed's environment lets
//! a king be taken; in legal chess the mate is that moment): +255 to the move that mates, −255
//! to the move the mate answers.
//!
//! The Q-targets (seed: "Q(s,a) = R(s,a) + gamma * max Q(s',a')", γ = 0.99): s' is the board
//! when the agent next moves (after the reply), and max Q(s',a') is read from the greedy
//! action there, "the piece values and move values of the action that was taken": the piece
//! selector's target is r + γ·p(s', a'.from), the moved piece's selector's target is
//! r + γ·m(s', a'.to). When the game ends with a_t or with its reply there is no s' and the
//! target is r; a game cut at the move limit bootstraps wherever s' was reached. MSE on the
//! chosen outputs (the piece selector's from-square, the moved piece's selector's
//! destination), Adam. Targets come from the parameters as they stood when the batch was
//! played (the nets that chose the moves), so a batch is one function of its inputs.

use super::features::{capture_value, encode, INPUTS, MATE_VALUE};
use super::infer::{evaluate, Infer};
use super::policy::Values;
use super::model::{Agents, Layout, Net};
use super::policy::{choose, Compose};
use crate::chess::{Color, Game, Move, Position, Role};
use crate::search::see::see_ge;
use crate::tensor::kernels::simd::active_kernel;
use crate::tensor::{Matrix, Optimizer, Params, Rng, Tape};
use crate::train::episode::{End, EpisodeLearner, Trajectory};
use crate::train::stage::EpochStats;

/// The settings of the learning rule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QCfg {
    /// The discount (the seed's 0.99).
    pub gamma: f32,
    /// The reward of a move that captures nothing (the seed's −0.1).
    pub no_capture: f32,
    /// Examples per optimizer step and passes over a batch's examples.
    pub batch: usize,
    pub passes: usize,
    pub compose: Compose,
    /// Every this many batches, the agents play `eval_games` games against a random mover and
    /// as many against a one-ply greedy capturer (0: never).
    pub eval_every: usize,
    pub eval_games: usize,
    /// The game length of those games (plies; then a draw).
    pub eval_plies: usize,
    /// Whether repetition and the fifty-move rule end games (self-play and evaluation): the
    /// seed's environment has neither, so by default only mate, stalemate, insufficient
    /// material and the move limit do.
    pub rule_draws: bool,
    /// The reward of a mate (the seed's king value, 255).
    pub mate: f32,
}

impl QCfg {
    /// The seed's rule (γ 0.99, −0.1 for a quiet move, mate 255) on batches of 256 moves, an
    /// evaluation of 100 games of 100 plies every 10 batches: the quick and paper profiles'.
    pub fn seed() -> QCfg {
        QCfg { gamma: 0.99, no_capture: -0.1, batch: 256, passes: 1, compose: Compose::Signed, eval_every: 10, eval_games: 100, eval_plies: 100, rule_draws: false, mate: super::features::MATE_VALUE }
    }
}

/// The rewards of one game's moves from each mover's side (see the module documentation):
/// `captured[t]` is what ply t took (255 for a mate), as the episode stage recorded it.
pub fn agent_rewards(captured: &[f32], no_capture: f32) -> Vec<f32> {
    (0..captured.len())
        .map(|t| {
            let own = captured[t];
            let reply = captured.get(t + 1).copied().unwrap_or(0.0);
            own - reply + if own == 0.0 { no_capture } else { 0.0 }
        })
        .collect()
}

/// The Q-targets (piece selector, move selector) of each move: r alone where the agent never
/// moved again (`next[t]` is None), else r + γ·(p', m') of its greedy action then.
pub fn q_targets(rewards: &[f32], next: &[Option<(f32, f32)>], gamma: f32) -> Vec<(f32, f32)> {
    rewards.iter().zip(next).map(|(&r, n)| n.map_or((r, r), |(p, m)| (r + gamma * p, r + gamma * m))).collect()
}

/// One move to learn from.
struct Example {
    x: Box<[f32; INPUTS]>,
    colour: Color,
    from: usize,
    to: usize,
    role: Role,
    q_piece: f32,
    q_move: f32,
}

/// The nets of both agents as they stand, and what choosing a move needs.
pub struct Actor {
    agents: Agents,
    infer: Infer,
    values: Values,
    compose: Compose,
}

impl Actor {
    pub fn new(agents: Agents, compose: Compose) -> Actor {
        Actor { agents, infer: Infer::new(active_kernel()), values: Values::default(), compose }
    }

    /// The greedy action in `pos` (which has a legal move), with its two values.
    pub fn greedy(&mut self, pos: &Position) -> super::policy::Choice {
        evaluate(&mut self.infer, &self.agents, pos, &mut self.values).expect("the agents' shapes are checked on load");
        choose(pos, &self.values, self.compose)
    }
}

pub struct Learner {
    pub cfg: QCfg,
    pub layout: Layout,
    pub seed: u64,
    /// The batch being played and learnt (from the stage).
    pub batch: usize,
    /// Threads for the evaluation games.
    pub threads: usize,
}

/// An opponent of the evaluation games.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Baseline {
    /// A uniformly random legal move.
    Random,
    /// The capture of the most valuable piece (the first on a tie), else a random move.
    Greedy,
}

impl Baseline {
    fn choose(self, pos: &Position, rng: &mut Rng) -> Move {
        let moves = pos.legal_moves();
        if self == Baseline::Greedy {
            let mut best: Option<(f32, Move)> = None;
            for &m in moves.iter() {
                let v = capture_value(pos, m);
                if v > 0.0 && best.map_or(true, |(b, _)| v > b) {
                    best = Some((v, m));
                }
            }
            if let Some((_, m)) = best {
                return m;
            }
        }
        moves.as_slice()[rng.below(moves.len() as u64) as usize]
    }
}

/// What the greedy agents did against a baseline: their score (wins and half the draws, per
/// game) and the material they took less the material the baseline took, per game. Games
/// cut at the limit are draws, so against a weak mover the score moves only with mates; the
/// material shows captures and escapes long before.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Versus {
    pub score: f64,
    pub material: f64,
}

/// [`Versus`] over `cfg.eval_games` games against `baseline`, half with each colour, each
/// cut at `cfg.eval_plies`; game g draws from its own stream, so the thread count changes
/// nothing.
pub fn score_against(agents: &Agents, baseline: Baseline, cfg: &QCfg, seed: u64, threads: usize) -> Versus {
    let (compose, games, plies, rule_draws) = (cfg.compose, cfg.eval_games, cfg.eval_plies, cfg.rule_draws);
    use crate::chess::game::{Ending, Outcome};
    let per = games.div_ceil(threads.max(1));
    let (points, material): (f64, f64) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads.max(1))
            .map(|t| {
                s.spawn(move || {
                    let mut actor = Actor::new(Agents { layout: agents.layout, params: agents.params.clone() }, compose);
                    let (mut pts, mut mat) = (0.0f64, 0.0f64);
                    for g in (t * per)..((t + 1) * per).min(games) {
                        let mut rng = Rng::new(seed ^ (g as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
                        let ours = if g % 2 == 0 { Color::White } else { Color::Black };
                        let mut game = Game::new(Position::startpos());
                        let over = |g: &Game| match g.outcome() {
                            Some((_, e)) => rule_draws || !matches!(e, Ending::Repetition | Ending::FiftyMoves),
                            None => false,
                        };
                        while !over(&game) && game.moves().len() < plies {
                            let pos = *game.position();
                            let mine = pos.turn() == ours;
                            let m = if mine { actor.greedy(&pos).mv } else { baseline.choose(&pos, &mut rng) };
                            let taken = capture_value(&pos, m) as f64;
                            mat += if mine { taken } else { -taken };
                            game.play_unchecked(m);
                        }
                        pts += match game.outcome().filter(|_| over(&game)) {
                            Some((Outcome::Win(c), _)) if c == ours => 1.0,
                            Some((Outcome::Win(_), _)) => 0.0,
                            _ => 0.5,
                        };
                    }
                    (pts, mat)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("an evaluation thread")).fold((0.0, 0.0), |a, b| (a.0 + b.0, a.1 + b.1))
    });
    let n = games.max(1) as f64;
    Versus { score: points / n, material: material / n }
}

impl Learner {
    fn agents(&self, params: &Params) -> Agents {
        Agents { layout: self.layout, params: params.clone() }
    }

    /// The examples of one game, targets from `actor` (the batch's nets).
    fn examples(&self, actor: &mut Actor, t: &Trajectory, out: &mut Vec<Example>) {
        let n = t.moves.len();
        let rescaled: Vec<f32>;
        let took = if self.cfg.mate == MATE_VALUE {
            &t.rewards[..]
        } else {
            rescaled = t.rewards.iter().map(|&c| if c >= MATE_VALUE { c - MATE_VALUE + self.cfg.mate } else { c }).collect();
            &rescaled[..]
        };
        let rewards = agent_rewards(took, self.cfg.no_capture);
        // s' of ply i is the board before ply i + 2, when the game went on that far.
        let next: Vec<Option<(f32, f32)>> = (0..n)
            .map(|i| {
                t.positions.get(i + 2).map(|s| {
                    let c = actor.greedy(s);
                    (c.p, c.m)
                })
            })
            .collect();
        for (i, (qp, qm)) in q_targets(&rewards, &next, self.cfg.gamma).into_iter().enumerate() {
            let (pos, mv) = (&t.positions[i], t.moves[i]);
            let colour = pos.turn();
            let mut x = Box::new([0.0f32; INPUTS]);
            encode(pos, colour, &mut x[..]);
            let role = pos.role_on(mv.from).expect("a played move has a piece");
            out.push(Example { x, colour, from: mv.from.index(), to: mv.to.index(), role, q_piece: qp, q_move: qm });
        }
    }

    /// One optimizer step on `chunk`: per (agent, net), the squared error of the chosen
    /// outputs against their targets, summed over the chunk's examples and divided by its
    /// size. The fourteen nets are independent, so their tapes run on `threads` threads (net
    /// g on thread g mod threads, each into its own gradient buffer, kernels serial inside):
    /// the same bits for any thread count. Returns (piece loss, move loss) summed.
    fn step(&self, params: &mut Params, opt: &mut dyn Optimizer, chunk: &[&Example]) -> Result<(f64, f64), String> {
        type Rows<'a> = Vec<(&'a Example, usize, f32)>;
        let mut groups: Vec<(Color, Net, Rows)> = Vec::new();
        for colour in [Color::White, Color::Black] {
            for net in Net::ALL {
                let rows: Rows = chunk
                    .iter()
                    .filter(|e| e.colour == colour)
                    .filter_map(|e| match net {
                        Net::Piece => Some((*e, e.from, e.q_piece)),
                        Net::Move(r) if r == e.role => Some((*e, e.to, e.q_move)),
                        Net::Move(_) => None,
                    })
                    .collect();
                if !rows.is_empty() {
                    groups.push((colour, net, rows));
                }
            }
        }
        let total = chunk.len() as f32;
        let workers = self.threads.clamp(1, groups.len().max(1));
        let shared: &Params = params;
        let run = |w: usize| -> Result<(Vec<Matrix>, Vec<(usize, f64)>), String> {
            crate::tensor::runtime::threads::serial(|| {
                let mut grads: Vec<Matrix> = shared.ids().map(|id| Matrix::zeros(shared.value(id).rows(), shared.value(id).cols())).collect();
                let mut losses = Vec::new();
                for (g, (colour, net, rows)) in groups.iter().enumerate().skip(w).step_by(workers) {
                    let mut x = Matrix::zeros(rows.len(), INPUTS);
                    for (r, (e, _, _)) in rows.iter().enumerate() {
                        x.row_mut(r).copy_from_slice(&e.x[..]);
                    }
                    let mut tape = Tape::new();
                    let xv = tape.input(&x);
                    let y = self.layout.net_on_tape(shared, &mut tape, xv, *colour, *net).map_err(|e| e.to_string())?;
                    // The target is the output itself but for the chosen square: the
                    // gradient flows through the chosen outputs only.
                    let mut target = tape.value(y).clone();
                    let mut sq = 0.0f64;
                    for (r, &(_, k, q)) in rows.iter().enumerate() {
                        let d = target.get(r, k) - q;
                        sq += (d * d) as f64;
                        target.row_mut(r)[k] = q;
                    }
                    let t = tape.input(&target);
                    let loss = tape.mse(y, t).map_err(|e| e.to_string())?;
                    // mse averages over rows × 64 outputs; the step's loss is the sum over
                    // the chunk's examples divided by the chunk.
                    tape.backward_into(loss, shared, &mut grads, 64.0 * rows.len() as f32 / total).map_err(|e| e.to_string())?;
                    losses.push((g, sq));
                }
                Ok((grads, losses))
            })
        };
        let done: Vec<Result<(Vec<Matrix>, Vec<(usize, f64)>), String>> = if workers == 1 {
            vec![run(0)]
        } else {
            std::thread::scope(|s| {
                let handles: Vec<_> = (0..workers).map(|w| s.spawn(move || run(w))).collect();
                handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err("a training thread panicked".into()))).collect()
            })
        };
        params.zero_grads();
        let mut sq = vec![0.0f64; groups.len()];
        for r in done {
            let (grads, losses) = r?;
            for (g, l) in losses {
                let (colour, net, _) = &groups[g];
                for id in self.layout.tensors(*colour, *net) {
                    params.grad_mut(id).data_mut().copy_from_slice(grads[id.index()].data());
                }
                sq[g] = l;
            }
        }
        // Summed in the nets' order, whichever thread computed them.
        let (mut lp, mut lm) = (0.0f64, 0.0f64);
        for (g, (_, net, _)) in groups.iter().enumerate() {
            if *net == Net::Piece {
                lp += sq[g];
            } else {
                lm += sq[g];
            }
        }
        opt.step(params);
        Ok((lp, lm))
    }
}

impl EpisodeLearner for Learner {
    type Actor = Actor;

    fn actor(&self, params: &Params) -> Actor {
        Actor::new(self.agents(params), self.cfg.compose)
    }

    /// ε-greedy: a uniformly random legal move with probability `explore`, else the agents'.
    fn batch_begins(&mut self, b: usize) {
        self.batch = b;
    }

    fn act(actor: &mut Actor, game: &Game, explore: f64, rng: &mut Rng) -> Move {
        let pos = game.position();
        if explore > 0.0 && rng.next_f64() < explore {
            let moves = pos.legal_moves();
            return moves.as_slice()[rng.below(moves.len() as u64) as usize];
        }
        actor.greedy(pos).mv
    }

    /// What the move took (the king's value for a mate); the reply is folded in `learn`.
    fn reward(before: &Position, mv: Move, after: &Position) -> f32 {
        capture_value(before, mv) + if after.is_checkmate() { MATE_VALUE } else { 0.0 }
    }

    fn learn(&mut self, params: &mut Params, opt: &mut dyn Optimizer, games: &[Trajectory], rng: &mut Rng) -> Result<EpochStats, String> {
        // The targets need the greedy action at every s′: games split over the threads, each
        // with its own copy of the batch's nets, examples kept in game order.
        let per = games.len().div_ceil(self.threads.max(1)).max(1);
        let this = &*self;
        let shared: &Params = params;
        let ex: Vec<Example> = std::thread::scope(|s| {
            let handles: Vec<_> = games
                .chunks(per)
                .map(|part| {
                    s.spawn(move || {
                        let mut actor = this.actor(shared);
                        let mut out = Vec::new();
                        for g in part {
                            this.examples(&mut actor, g, &mut out);
                        }
                        out
                    })
                })
                .collect();
            handles.into_iter().flat_map(|h| h.join().expect("a target thread")).collect()
        });
        let (mut lp, mut lm) = (0.0f64, 0.0f64);
        let mut order: Vec<usize> = (0..ex.len()).collect();
        let passes = self.cfg.passes.max(1);
        for pass in 0..passes {
            rng.shuffle(&mut order);
            if pass + 1 == passes {
                (lp, lm) = (0.0, 0.0);
            }
            for chunk in order.chunks(self.cfg.batch.max(1)) {
                let c: Vec<&Example> = chunk.iter().map(|&i| &ex[i]).collect();
                let (p, m) = self.step(params, opt, &c)?;
                lp += p;
                lm += m;
            }
        }
        let n = ex.len().max(1) as f64;
        if !(lp.is_finite() && lm.is_finite()) {
            return Err(format!("the Q loss is {lp} (piece) / {lm} (move): training diverged (lower the learning rate)"));
        }
        let mut st = EpochStats::new((lp + lm) / n, f64::NAN, f64::NAN, ex.len()).with_figure("loss_piece", lp / n).with_figure("loss_move", lm / n);
        for (name, v) in game_figures(games) {
            st = st.with_figure(name, v);
        }
        // Whether the nets still see the board, every batch (issue 63): the smallest share
        // of live units of any layer of any net, and the position-blind nets, on a fixed probe
        // set; said on stderr at each evaluation while any net is sick.
        let health = super::health::measure(&self.agents(params), &health_probes(), crate::tensor::active_kernel());
        let (min_alive, blind) = super::health::summary(&health);
        st = st.with_figure("health_min_alive", min_alive).with_figure("health_blind_nets", blind as f64);
        let c = &self.cfg;
        let evaluating = c.eval_every > 0 && (self.batch + 1) % c.eval_every == 0;
        if let (true, Err(e)) = (evaluating, super::health::verdict(&health)) {
            eprintln!("\nwarning: after batch {}: {e}", self.batch + 1);
        }
        if evaluating {
            let agents = self.agents(params);
            let seed = self.seed ^ (self.batch as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03);
            let (r, g) = (score_against(&agents, Baseline::Random, c, seed, self.threads), score_against(&agents, Baseline::Greedy, c, seed ^ 1, self.threads));
            st = st
                .with_figure("material_vs_random", r.material)
                .with_figure("material_vs_greedy", g.material)
                .with_figure("vs_random", r.score)
                .with_figure("vs_greedy", g.score);
        }
        Ok(st)
    }
}

/// The probe positions of the health figures logged every batch (32, fixed).
fn health_probes() -> &'static [Position] {
    static PROBES: std::sync::OnceLock<Vec<Position>> = std::sync::OnceLock::new();
    PROBES.get_or_init(|| super::health::probes(32, 1))
}

/// What the seed saw, measured on a batch's games: captures per game, material captured per
/// game, the share of moves that leave one of the mover's pieces en prise (the opponent then
/// has a capture that wins material by static exchange), and how games end.
pub fn game_figures(games: &[Trajectory]) -> Vec<(&'static str, f64)> {
    let (mut captures, mut material, mut en_prise, mut moves) = (0usize, 0.0f64, 0usize, 0usize);
    let (mut mates, mut limits) = (0usize, 0usize);
    for g in games {
        for (pos, &mv) in g.positions.iter().zip(&g.moves) {
            let taken = capture_value(pos, mv);
            captures += (taken > 0.0) as usize;
            material += taken as f64;
            let mut after = *pos;
            after.play(mv);
            en_prise += after.legal_moves().iter().any(|&m| after.is_capture(m) && see_ge(&after, m, 1)) as usize;
            moves += 1;
        }
        match g.end {
            End::Rules(crate::chess::game::Ending::Checkmate) => mates += 1,
            End::MoveLimit => limits += 1,
            End::Rules(_) => {}
        }
    }
    let n = games.len().max(1) as f64;
    vec![
        ("captures_per_game", captures as f64 / n),
        ("material_per_game", material / n),
        ("en_prise_share", en_prise as f64 / moves.max(1) as f64),
        ("mate_share", mates as f64 / n),
        ("limit_share", limits as f64 / n),
        ("plies_per_game", moves as f64 / n),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A capture then a recapture: the pawn takes a knight (+3), the queen retakes the pawn
    /// (−1 for the first mover); a quiet move costs 0.1; a mate earns 255 and costs the mated
    /// side's previous move as much.
    #[test]
    fn rewards_on_hand_made_sequences() {
        let r = agent_rewards(&[3.0, 1.0, 0.0, 0.0], -0.1);
        let want = [2.0, 1.0, -0.1, -0.1];
        for (a, b) in r.iter().zip(want) {
            assert!((a - b).abs() < 1e-6, "{r:?}");
        }
        let r = agent_rewards(&[0.0, 255.0], -0.1);
        assert!((r[0] - (-255.1)).abs() < 1e-4 && r[1] == 255.0, "{r:?}");
        // The episode stage's per-move half, on real moves: a pawn takes a knight, a queen
        // takes back; then a mate.
        let p = Position::from_fen("4k3/8/3q4/4n3/3P4/8/8/4K3 w - - 0 1").unwrap();
        let m = p.parse_uci("d4e5").unwrap();
        let mut after = p;
        after.play(m);
        assert_eq!(Learner::reward(&p, m, &after), 3.0);
        let m2 = after.parse_uci("d6e5").unwrap();
        let mut after2 = after;
        after2.play(m2);
        assert_eq!(Learner::reward(&after, m2, &after2), 1.0);
        let mate = Position::from_fen("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1").unwrap();
        let mm = mate.parse_uci("a1a8").unwrap();
        let mut done = mate;
        done.play(mm);
        assert_eq!(Learner::reward(&mate, mm, &done), 255.0);
    }

    /// The update reaches the outputs it should: trained on two moves of one position (a
    /// capture of a hanging queen worth 9, a quiet move worth −0.1), the greedy agent comes to
    /// choose the capture, and Black's nets, never trained, are untouched.
    #[test]
    fn updates_teach_the_chosen_outputs() {
        use super::super::model::Arch;
        let pos = Position::from_fen("4k3/8/8/3q4/8/8/3R4/4K3 w - - 0 1").unwrap();
        let (take, quiet) = (pos.parse_uci("d2d5").unwrap(), pos.parse_uci("e1f1").unwrap());
        let arch = Arch { c1: 4, c2: 8, c3: 4, fc: 16 };
        let agents = Agents::new(arch, &mut Rng::new(4));
        let black_before: Vec<f32> = agents.layout.tensors(Color::Black, Net::Piece).iter().flat_map(|&id| agents.params.value(id).data().to_vec()).collect();
        let cfg = QCfg { gamma: 0.99, no_capture: -0.1, batch: 2, passes: 1, compose: Compose::Signed, eval_every: 0, eval_games: 0, eval_plies: 0, rule_draws: false, mate: MATE_VALUE };
        let learner = Learner { cfg, layout: agents.layout, seed: 1, batch: 0, threads: 1 };
        let example = |m: Move, q: f32| {
            let mut x = Box::new([0.0f32; INPUTS]);
            encode(&pos, Color::White, &mut x[..]);
            Example { x, colour: Color::White, from: m.from.index(), to: m.to.index(), role: pos.role_on(m.from).unwrap(), q_piece: q, q_move: q }
        };
        let ex = [example(take, 9.0), example(quiet, -0.1)];
        let mut params = agents.params;
        let mut opt = crate::tensor::Adam::new(0.01);
        let mut last = f64::INFINITY;
        for _ in 0..300 {
            let (lp, lm) = learner.step(&mut params, &mut opt, &[&ex[0], &ex[1]]).unwrap();
            last = lp + lm;
        }
        assert!(last < 0.1, "the squared errors stay at {last}");
        let mut actor = Actor::new(Agents { layout: learner.layout, params }, Compose::Signed);
        let c = actor.greedy(&pos);
        assert_eq!(c.mv, take, "{c:?}");
        assert!((c.p - 9.0).abs() < 0.3 && (c.m - 9.0).abs() < 0.3, "{c:?}");
        let black_after: Vec<f32> = learner.layout.tensors(Color::Black, Net::Piece).iter().flat_map(|&id| actor.agents.params.value(id).data().to_vec()).collect();
        assert_eq!(black_before, black_after);
    }

    /// Steps on one and on three threads give the same parameters, bit for bit.
    #[test]
    fn a_step_is_the_same_on_any_thread_count() {
        use super::super::model::Arch;
        let pos = Position::startpos();
        let arch = Arch { c1: 3, c2: 5, c3: 2, fc: 6 };
        let cfg = QCfg { gamma: 0.99, no_capture: -0.1, batch: 8, passes: 1, compose: Compose::Signed, eval_every: 0, eval_games: 0, eval_plies: 0, rule_draws: false, mate: MATE_VALUE };
        let mut ex = Vec::new();
        let mut p = pos;
        for (i, m) in ["e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6"].iter().enumerate() {
            let mv = p.parse_uci(m).unwrap();
            let mut x = Box::new([0.0f32; INPUTS]);
            encode(&p, p.turn(), &mut x[..]);
            ex.push(Example { x, colour: p.turn(), from: mv.from.index(), to: mv.to.index(), role: p.role_on(mv.from).unwrap(), q_piece: i as f32 - 2.0, q_move: 1.5 - i as f32 });
            p.play(mv);
        }
        let refs: Vec<&Example> = ex.iter().collect();
        let run = |threads: usize| {
            let agents = Agents::new(arch, &mut Rng::new(8));
            let learner = Learner { cfg, layout: agents.layout, seed: 1, batch: 0, threads };
            let mut params = agents.params;
            let mut opt = crate::tensor::Adam::new(0.01);
            let mut losses = Vec::new();
            for _ in 0..3 {
                losses.push(learner.step(&mut params, &mut opt, &refs).unwrap());
            }
            let bits: Vec<u32> = params.ids().flat_map(|id| params.value(id).data().iter().map(|v| v.to_bits()).collect::<Vec<_>>()).collect();
            (bits, losses)
        };
        assert_eq!(run(1), run(3));
    }

    #[test]
    fn q_targets_bootstrap_only_where_the_agent_moves_again() {
        let t = q_targets(&[-0.1, 2.0, 5.0], &[Some((1.0, -2.0)), Some((0.5, 0.5)), None], 0.99);
        assert_eq!(t[0], (-0.1 + 0.99, -0.1 - 1.98));
        assert_eq!(t[1], (2.0 + 0.495, 2.0 + 0.495));
        assert_eq!(t[2], (5.0, 5.0), "the game ended: the reward alone");
    }
}
