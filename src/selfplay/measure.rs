//! What the agents do, measured (seed 002, "Training": the milestones): the figures of a
//! batch's self-play games, and the greedy agents' games against a random mover and a one-ply
//! greedy capturer.

use super::features::capture_value;
use super::model::Agents;
use super::recipe::QCfg;
use super::infer::Actor;
use crate::chess::threats::{escape_case, greedy_capture};
use crate::chess::{Color, Game, Move, Position};
use crate::data::escape::Case;
use crate::search::see::see_ge;
use crate::tensor::Rng;
use crate::train::episode::{End, Trajectory};

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
        if let Some(m) = (self == Baseline::Greedy).then(|| greedy_capture(pos)).flatten() {
            return m;
        }
        let moves = pos.legal_moves();
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

/// What the seed saw, measured on a batch's games: captures per game, material captured per
/// game, the share of moves that leave one of the mover's pieces en prise (the opponent then
/// has a capture that wins material by static exchange), and how games end.
pub fn game_figures(games: &[Trajectory]) -> Vec<(&'static str, f64)> {
    let (mut captures, mut material, mut en_prise, mut moves) = (0usize, 0.0f64, 0usize, 0usize);
    let (mut mates, mut limits) = (0usize, 0usize);
    // Seed 002's "escape" in the games themselves: the escape cases met, how many the move
    // played saved, and a random mover's expected saves there.
    let (mut cases, mut saved, mut random) = (0usize, 0usize, 0.0f64);
    for g in games {
        for (pos, &mv) in g.positions.iter().zip(&g.moves) {
            if let Some(e) = escape_case(pos) {
                cases += 1;
                saved += e.saving.contains(&mv) as usize;
                random += e.saving.len() as f64 / e.legal.max(1) as f64;
            }
            let taken = capture_value(pos, mv);
            captures += (taken > 0.0) as usize;
            material += taken as f64;
            moves += 1;
            if pos.takes_king(mv) {
                continue; // the game's last move in the seed's environment, never played
            }
            let mut after = *pos;
            after.play(mv);
            // In the seed's environment a move may leave the king itself en prise.
            let replies = after.legal_moves();
            en_prise += (replies.iter().any(|&m| after.takes_king(m)) || replies.iter().any(|&m| after.is_capture(m) && see_ge(&after, m, 1))) as usize;
        }
        match g.end {
            // A king taken in the seed's environment is its mate.
            End::Rules(crate::chess::game::Ending::Checkmate) | End::KingTaken => mates += 1,
            End::MoveLimit => limits += 1,
            End::Rules(_) | End::NoMove => {}
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
        ("escape_cases_per_game", cases as f64 / n),
        ("escape_selfplay", if cases == 0 { f64::NAN } else { saved as f64 / cases as f64 }),
        ("escape_selfplay_random", if cases == 0 { f64::NAN } else { random / cases as f64 }),
    ]
}

/// The share of the escape suite's positions ([`crate::data::escape`]) in which the greedy
/// agents' move saves the hanging piece.
pub fn escape_rate(agents: &Agents, compose: super::policy::Compose, suite: &[Case]) -> f64 {
    escape_steps(agents, compose, suite).saved as f64 / suite.len().max(1) as f64
}


/// Where the greedy agents' escapes are lost, on an escape suite: in how many positions the
/// piece selector values the hanging piece's square above every other piece that can move;
/// the greedy action moves that piece; that move saves it; any move saves it (a defence, a
/// capture of the attacker, a block).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EscapeSteps {
    pub cases: usize,
    pub piece_selector_first: usize,
    /// What a uniformly random choice among the pieces that can move would give there.
    pub random_piece: f64,
    pub moved: usize,
    pub saved_by_moving: usize,
    pub saved: usize,
    /// Of the `piece_selector_first` positions, those where the hanging piece's own move
    /// selector's best legal destination saves it: what an action that takes the piece
    /// selector's first choice, then its best square, would save (`selfplay::probe`).
    pub saved_piece_first: usize,
}

/// [`EscapeSteps`] of `agents` on `suite`.
pub fn escape_steps(agents: &Agents, compose: super::policy::Compose, suite: &[Case]) -> EscapeSteps {
    let mut actor = Actor::new(Agents { layout: agents.layout, params: agents.params.clone() }, compose);
    let mut st = EscapeSteps { cases: suite.len(), piece_selector_first: 0, random_piece: 0.0, moved: 0, saved_by_moving: 0, saved: 0, saved_piece_first: 0 };
    for c in suite {
        let choice = actor.greedy(&c.pos);
        let values = actor.values();
        let p = &values.nets[0];
        let h = c.escape.square.index();
        let moves = c.pos.legal_moves();
        let froms = moves.iter().map(|m| m.from.index()).collect::<std::collections::BTreeSet<_>>();
        if froms.iter().all(|&f| f == h || p[f] < p[h]) {
            st.piece_selector_first += 1;
            let role = c.pos.role_on(c.escape.square).expect("the hanging square holds a piece");
            let m = &values.nets[super::model::Net::Move(role).index()];
            let best = moves.iter().filter(|mv| mv.from.index() == h).max_by(|a, b| m[a.to.index()].total_cmp(&m[b.to.index()]));
            st.saved_piece_first += best.is_some_and(|mv| c.escape.saving.contains(mv)) as usize;
        }
        st.random_piece += 1.0 / froms.len() as f64;
        let saves = c.escape.saving.contains(&choice.mv);
        st.saved += saves as usize;
        if choice.mv.from.index() == h {
            st.moved += 1;
            st.saved_by_moving += saves as usize;
        }
    }
    st
}
