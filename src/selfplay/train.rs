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
use super::infer::{env_moves, Actor};
use super::measure::{game_figures, score_against, Baseline};
use super::recipe::{Loss, QCfg, Targets, Update};
use super::model::{Agents, Layout, Net};
use crate::chess::{Color, Game, Move, Position, Role};
use crate::tensor::autograd::with_tape;
use crate::tensor::{Matrix, Optimizer, Params, Rng};
use crate::train::episode::{EpisodeLearner, Trajectory};
use crate::train::stage::EpochStats;

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
    /// The squares each net may choose (the agent's pieces; per role, where its pieces of
    /// that kind can go): [`Targets::Masked`] pulls the others to 0. Unread (every square)
    /// under [`Targets::Chosen`].
    mask: [u64; 7],
}

/// The squares each of the agent's nets may choose in `pos`: the piece selector its pieces,
/// each move selector the destinations of its kind of piece (legal, or pseudo-legal in the
/// seed's environment).
fn masks(pos: &Position, king_capture: bool) -> [u64; 7] {
    let mut m = [0u64; 7];
    m[0] = pos.by_color(pos.turn()).0;
    for mv in env_moves(pos, king_capture) {
        if let Some(r) = pos.role_on(mv.from) {
            m[Net::Move(r).index()] |= 1 << mv.to.index();
        }
    }
    m
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
            out.push(Example { x, colour, from: mv.from.index(), to: mv.to.index(), role, q_piece: qp, q_move: qm, mask: if self.cfg.targets == Targets::Masked { masks(pos, self.cfg.king_capture) } else { [u64::MAX; 7] } });
        }
    }

    /// The gradient of one step on `chunk`, into `params`' gradients: per (agent, net), the
    /// squared error of the taught outputs against their targets, summed over the chunk's
    /// examples and divided by its size. The fourteen nets are independent, so their tapes run
    /// on `threads` threads (net g on thread g mod threads, each into its own gradient buffer,
    /// kernels serial inside): the same bits for any thread count. Returns the (colour, net)
    /// pairs it reached and the squared errors: (piece, move) of the chosen outputs, and of the
    /// masked ones.
    fn gradients(&self, params: &mut Params, chunk: &[&Example]) -> Result<(Vec<(Color, Net)>, f64, f64, f64), String> {
        // Per net, its rows: the example and, when the net is taught it, the chosen output
        // and its target.
        type Rows<'a> = Vec<(&'a Example, Option<(usize, f32)>)>;
        let masked = self.cfg.targets == Targets::Masked;
        let mut groups: Vec<(Color, Net, Rows)> = Vec::new();
        for colour in [Color::White, Color::Black] {
            for net in Net::ALL {
                let rows: Rows = chunk
                    .iter()
                    .filter(|e| e.colour == colour)
                    .filter_map(|e| match net {
                        Net::Piece => Some((*e, Some((e.from, e.q_piece)))),
                        Net::Move(r) if r == e.role => Some((*e, Some((e.to, e.q_move)))),
                        Net::Move(_) if masked => Some((*e, None)),
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
        let run = |w: usize| -> Result<(Vec<Matrix>, Vec<(usize, f64, f64)>), String> {
            crate::tensor::runtime::threads::serial(|| {
                let mut grads: Vec<Matrix> = shared.ids().map(|id| Matrix::zeros(shared.value(id).rows(), shared.value(id).cols())).collect();
                let mut losses = Vec::new();
                for (g, &(colour, net, ref rows)) in groups.iter().enumerate().skip(w).step_by(workers) {
                    let mut x = Matrix::zeros(rows.len(), INPUTS);
                    for (r, (e, _)) in rows.iter().enumerate() {
                        x.row_mut(r).copy_from_slice(&e.x[..]);
                    }
                    // A pooled tape: its buffers outlive the update's threads.
                    let (sq, msq) = with_tape(|tape| -> Result<(f64, f64), String> {
                        let xv = tape.input(&x);
                        let y = self.layout.net_on_tape(shared, tape, xv, colour, net).map_err(|e| e.to_string())?;
                        // The target is the output itself but where the net is taught: the
                        // gradient flows through those outputs only.
                        let mut target = tape.value(y).clone();
                        let (mut sq, mut msq) = (0.0f64, 0.0f64);
                        for (r, &(e, chosen)) in rows.iter().enumerate() {
                            let row = target.row_mut(r);
                            if masked {
                                let allowed = e.mask[net.index()];
                                for (k, v) in row.iter_mut().enumerate() {
                                    if allowed >> k & 1 == 0 {
                                        msq += (*v * *v) as f64;
                                        *v = 0.0;
                                    }
                                }
                            }
                            if let Some((k, q)) = chosen {
                                let d = row[k] - q;
                                sq += (d * d) as f64;
                                row[k] = q;
                            }
                        }
                        let t = tape.input(&target);
                        // Both losses average over rows × 64 outputs; the step's loss is the sum over
                        // the chunk's examples divided by the chunk. Huber is half the squared
                        // error within δ: doubled, it is the squared error there.
                        let (loss, twice) = match self.cfg.loss {
                            Loss::Squared => (tape.mse(y, t), 1.0),
                            Loss::Huber(delta) => (tape.huber(y, t, delta), 2.0),
                        };
                        let loss = loss.map_err(|e| e.to_string())?;
                        tape.backward_into(loss, shared, &mut grads, twice * 64.0 * rows.len() as f32 / total).map_err(|e| e.to_string())?;
                        Ok((sq, msq))
                    })?;
                    losses.push((g, sq, msq));
                }
                Ok((grads, losses))
            })
        };
        let done: Vec<Result<(Vec<Matrix>, Vec<(usize, f64, f64)>), String>> = if workers == 1 {
            vec![run(0)]
        } else {
            std::thread::scope(|s| {
                let handles: Vec<_> = (0..workers).map(|w| s.spawn(move || run(w))).collect();
                handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err("a training thread panicked".into()))).collect()
            })
        };
        params.zero_grads();
        let mut sq = vec![(0.0f64, 0.0f64); groups.len()];
        for r in done {
            let (grads, losses) = r?;
            for (g, l, m) in losses {
                let (colour, net, _) = &groups[g];
                for id in self.layout.tensors(*colour, *net) {
                    params.grad_mut(id).data_mut().copy_from_slice(grads[id.index()].data());
                }
                sq[g] = (l, m);
            }
        }
        // Summed in the nets' order, whichever thread computed them.
        let (mut lp, mut lm, mut lmask) = (0.0f64, 0.0f64, 0.0f64);
        for (g, (_, net, _)) in groups.iter().enumerate() {
            if *net == Net::Piece {
                lp += sq[g].0;
            } else {
                lm += sq[g].0;
            }
            lmask += sq[g].1;
        }
        Ok((groups.iter().map(|(c, n, _)| (*c, *n)).collect(), lp, lm, lmask))
    }

    /// One step of `opt` on `chunk` ([`Learner::gradients`]); returns the squared errors
    /// (piece, move, masked).
    fn step(&self, params: &mut Params, opt: &mut dyn Optimizer, chunk: &[&Example]) -> Result<(f64, f64, f64), String> {
        let (_, lp, lm, lmask) = self.gradients(params, chunk)?;
        opt.step(params);
        Ok((lp, lm, lmask))
    }

    /// One step on `chunk` by a fresh Adam of rate `lr` (the author's code builds one per
    /// update): its first step moves each parameter of the nets reached by lr·g/(|g| + ε),
    /// ε = 1e-8 (bias-corrected moments are g and g² then).
    fn fresh_adam_step(&self, params: &mut Params, lr: f32, chunk: &[&Example]) -> Result<(f64, f64, f64), String> {
        let (reached, lp, lm, lmask) = self.gradients(params, chunk)?;
        for (colour, net) in reached {
            for id in self.layout.tensors(colour, net) {
                let (value, grad) = params.value_and_grad_mut(id);
                for (x, &g) in value.data_mut().iter_mut().zip(grad.data()) {
                    *x -= lr * g / (g.abs() + 1e-8);
                }
            }
        }
        Ok((lp, lm, lmask))
    }
}

impl EpisodeLearner for Learner {
    type Actor = Actor;

    /// The author recipe updates by a fresh Adam per move: the stage's own never steps.
    fn steps_optimizer(&self) -> bool {
        matches!(self.cfg.update, Update::Batches)
    }

    fn actor(&self, params: &Params) -> Actor {
        Actor::in_env(self.agents(params), self.cfg.compose, self.cfg.king_capture)
    }

    /// ε-greedy: a uniformly random legal move with probability `explore`, else the agents'.
    fn batch_begins(&mut self, b: usize) {
        self.batch = b;
    }

    fn act(actor: &mut Actor, game: &Game, explore: f64, rng: &mut Rng) -> Move {
        let pos = game.position();
        if explore > 0.0 && rng.next_f64() < explore {
            let moves = actor.moves(pos);
            return moves[rng.below(moves.len() as u64) as usize];
        }
        actor.greedy(pos).mv
    }

    /// What the move took (the king's value for a mate, or for the king itself in the seed's
    /// environment, where a mate ends nothing); the reply is folded in `learn`.
    fn reward(actor: &Actor, before: &Position, mv: Move, after: &Position) -> f32 {
        capture_value(before, mv) + if !actor.king_capture() && after.is_checkmate() { MATE_VALUE } else { 0.0 }
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
        let (mut lp, mut lm, mut lmask) = (0.0f64, 0.0f64, 0.0f64);
        match self.cfg.update {
            Update::Batches => {
                let mut order: Vec<usize> = (0..ex.len()).collect();
                let passes = self.cfg.passes.max(1);
                for pass in 0..passes {
                    rng.shuffle(&mut order);
                    if pass + 1 == passes {
                        (lp, lm, lmask) = (0.0, 0.0, 0.0);
                    }
                    for chunk in order.chunks(self.cfg.batch.max(1)) {
                        let c: Vec<&Example> = chunk.iter().map(|&i| &ex[i]).collect();
                        let (p, m, k) = self.step(params, opt, &c)?;
                        (lp, lm, lmask) = (lp + p, lm + m, lmask + k);
                    }
                }
            }
            // The games' moves in the order they were played, one step each.
            Update::PerMove { lr } => {
                for e in &ex {
                    let (p, m, k) = self.fresh_adam_step(params, lr, &[e])?;
                    (lp, lm, lmask) = (lp + p, lm + m, lmask + k);
                }
            }
        }
        let n = ex.len().max(1) as f64;
        if !(lp.is_finite() && lm.is_finite()) {
            return Err(format!("the Q loss is {lp} (piece) / {lm} (move): training diverged (lower the learning rate)"));
        }
        let mut st = EpochStats::new((lp + lm) / n, f64::NAN, f64::NAN, ex.len()).with_figure("loss_piece", lp / n).with_figure("loss_move", lm / n).with_figure("loss_masked", lmask / n);
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
            let suite = escape_suite();
            st = st
                .with_figure("escape_suite", super::measure::escape_rate(&agents, c.compose, suite))
                .with_figure("material_vs_random", r.material)
                .with_figure("material_vs_greedy", g.material)
                .with_figure("vs_random", r.score)
                .with_figure("vs_greedy", g.score);
        }
        Ok(st)
    }
}

/// The shipped escape suite, read once.
fn escape_suite() -> &'static [crate::data::escape::Case] {
    static SUITE: std::sync::OnceLock<Vec<crate::data::escape::Case>> = std::sync::OnceLock::new();
    SUITE.get_or_init(crate::data::escape::shipped)
}

/// The probe positions of the health figures logged every batch (32, fixed).
fn health_probes() -> &'static [Position] {
    static PROBES: std::sync::OnceLock<Vec<Position>> = std::sync::OnceLock::new();
    PROBES.get_or_init(|| super::health::probes(32, 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::selfplay::policy::Compose;

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
        let arch = super::super::model::Arch { c1: 2, c2: 2, c3: 2, fc: 2 };
        let legal = Actor::new(Agents::new(arch, &mut Rng::new(1)), Compose::Signed);
        let seed_env = Actor::in_env(Agents::new(arch, &mut Rng::new(1)), Compose::Signed, true);
        let p = Position::from_fen("4k3/8/3q4/4n3/3P4/8/8/4K3 w - - 0 1").unwrap();
        let m = p.parse_uci("d4e5").unwrap();
        let mut after = p;
        after.play(m);
        assert_eq!(Learner::reward(&legal, &p, m, &after), 3.0);
        let m2 = after.parse_uci("d6e5").unwrap();
        let mut after2 = after;
        after2.play(m2);
        assert_eq!(Learner::reward(&legal, &after, m2, &after2), 1.0);
        let mate = Position::from_fen("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1").unwrap();
        let mm = mate.parse_uci("a1a8").unwrap();
        let mut done = mate;
        done.play(mm);
        assert_eq!(Learner::reward(&legal, &mate, mm, &done), 255.0);
        // In the seed's environment a mate ends nothing and earns nothing; taking the king
        // (left attacked) earns its 255.
        assert_eq!(Learner::reward(&seed_env, &mate, mm, &done), 0.0);
        let open = Position::from_fen("6k1/8/8/8/8/8/8/R3K2r w - - 0 1").unwrap();
        let take = open.pseudo_legal_moves().into_iter().find(|&m| m.to_string() == "a1a8").unwrap();
        let mut left = open;
        left.play(take);
        let king = left.pseudo_legal_moves().into_iter().find(|&m| left.takes_king(m)).expect("h1 takes e1");
        assert_eq!(Learner::reward(&seed_env, &left, king, &left), 255.0);
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
        let cfg = QCfg { gamma: 0.99, no_capture: -0.1, batch: 2, passes: 1, compose: Compose::Signed, eval_every: 0, eval_games: 0, eval_plies: 0, rule_draws: false, mate: MATE_VALUE, king_capture: false, loss: Loss::Squared, targets: Targets::Chosen, update: Update::Batches };
        let learner = Learner { cfg, layout: agents.layout, seed: 1, batch: 0, threads: 1 };
        let example = |m: Move, q: f32| {
            let mut x = Box::new([0.0f32; INPUTS]);
            encode(&pos, Color::White, &mut x[..]);
            Example { x, colour: Color::White, from: m.from.index(), to: m.to.index(), role: pos.role_on(m.from).unwrap(), q_piece: q, q_move: q, mask: masks(&pos, false) }
        };
        let ex = [example(take, 9.0), example(quiet, -0.1)];
        let mut params = agents.params;
        let mut opt = crate::tensor::Adam::new(0.01);
        let mut last = f64::INFINITY;
        for _ in 0..300 {
            let (lp, lm, _) = learner.step(&mut params, &mut opt, &[&ex[0], &ex[1]]).unwrap();
            last = lp + lm;
        }
        assert!(last < 0.1, "the squared errors stay at {last}");
        let mut actor = Actor::new(Agents { layout: learner.layout, params }, Compose::Signed);
        let c = actor.greedy(&pos);
        assert_eq!(c.mv, take, "{c:?}");
        assert!((c.p - 9.0).abs() < 0.3 && (c.m - 9.0).abs() < 0.3, "{c:?}");
        let black_after: Vec<f32> = learner.layout.tensors(Color::Black, Net::Piece).iter().flat_map(|&id| actor.agents().params.value(id).data().to_vec()).collect();
        assert_eq!(black_before, black_after);
    }

    /// Steps on one and on three threads give the same parameters, bit for bit.
    #[test]
    fn a_step_is_the_same_on_any_thread_count() {
        use super::super::model::Arch;
        let pos = Position::startpos();
        let arch = Arch { c1: 3, c2: 5, c3: 2, fc: 6 };
        let cfg = QCfg { gamma: 0.99, no_capture: -0.1, batch: 8, passes: 1, compose: Compose::Signed, eval_every: 0, eval_games: 0, eval_plies: 0, rule_draws: false, mate: MATE_VALUE, king_capture: false, loss: Loss::Squared, targets: Targets::Chosen, update: Update::Batches };
        let mut ex = Vec::new();
        let mut p = pos;
        for (i, m) in ["e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6"].iter().enumerate() {
            let mv = p.parse_uci(m).unwrap();
            let mut x = Box::new([0.0f32; INPUTS]);
            encode(&p, p.turn(), &mut x[..]);
            ex.push(Example { x, colour: p.turn(), from: mv.from.index(), to: mv.to.index(), role: p.role_on(mv.from).unwrap(), q_piece: i as f32 - 2.0, q_move: 1.5 - i as f32, mask: masks(&p, false) });
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
