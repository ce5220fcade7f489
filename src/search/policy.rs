//! A player without search: it scores every legal move of the position with a
//! [`MoveScorer`] (a policy net, a Q-function, one ply of an evaluator) and plays the best.
//! Its whole search is one ply, so it answers any `go` at once, whatever the limits, with one
//! `info` line (depth 1, the moves scored as nodes, the best move as the principal
//! variation); `go infinite` and `go ponder` still wait for `stop`, which the engine loop
//! does for every player. `searchmoves` restricts the moves it chooses among, as it does the
//! search's root.

use super::player::Player;
use super::searcher::{Info, Score, SearchResult};
use super::time::Limits;
use crate::chess::{Game, Move};
use crate::eval::Counters;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What a policy player asks of its model.
pub trait MoveScorer: Send {
    /// Short name for `info string` and `bench`.
    fn name(&self) -> &'static str;

    /// One score per move of `moves` (all legal in `game`'s position), higher better for
    /// the side to move, into `scores` (emptied first).
    fn score_moves(&mut self, game: &Game, moves: &[Move], scores: &mut Vec<f32>);

    /// The `info score cp` of the chosen move's score, from the side to move's view.
    fn centipawns(&self, _best: f32) -> i32 {
        0
    }

    /// A new game begins.
    fn new_game(&mut self) {}

    /// What it counted, each count named by the scorer.
    fn counters(&self) -> Counters {
        Counters::default()
    }
}

/// A [`MoveScorer`] as a [`Player`]: the legal move of the highest score (the first of them
/// in move-generation order on a tie, so a choice is a function of the position).
pub struct PolicyPlayer<S> {
    pub scorer: S,
    scores: Vec<f32>,
    /// Moves chosen and moves scored since it was built.
    choices: u64,
    scored: u64,
}

impl<S: MoveScorer> PolicyPlayer<S> {
    pub fn new(scorer: S) -> PolicyPlayer<S> {
        PolicyPlayer { scorer, scores: Vec::new(), choices: 0, scored: 0 }
    }
}

impl<S: MoveScorer> Player for PolicyPlayer<S> {
    fn choose(&mut self, game: &Game, limits: &Limits, _overhead: Duration, _stop: Arc<AtomicBool>, on_info: &mut dyn FnMut(&Info)) -> SearchResult {
        let start = Instant::now();
        let pos = game.position();
        let mut moves: Vec<Move> = pos.legal_moves().iter().copied().collect();
        // As the search does: `searchmoves` restricts to its legal members (none legal: no
        // restriction).
        if moves.iter().any(|m| limits.searchmoves.contains(m)) {
            moves.retain(|m| limits.searchmoves.contains(m));
        }
        let (best, score) = if moves.is_empty() {
            // Mated or stalemated: nothing to choose, the rules' score.
            (None, if pos.is_check() { Score::Mate(0) } else { Score::Cp(0) })
        } else {
            self.scorer.score_moves(game, &moves, &mut self.scores);
            assert_eq!(self.scores.len(), moves.len(), "{}: one score per move", self.scorer.name());
            let i = (0..moves.len()).fold(0, |b, i| if self.scores[i] > self.scores[b] { i } else { b });
            self.choices += 1;
            self.scored += moves.len() as u64;
            (Some(moves[i]), Score::Cp(self.scorer.centipawns(self.scores[i])))
        };
        let info = Info { depth: 1, seldepth: 1, score, nodes: moves.len() as u64, time: start.elapsed(), pv: best.into_iter().collect(), hashfull: 0 };
        on_info(&info);
        SearchResult { best, ponder: None, info }
    }

    fn new_game(&mut self) {
        self.scorer.new_game();
    }

    fn name(&self) -> &'static str {
        self.scorer.name()
    }

    fn counters(&self) -> Counters {
        let mut c = Counters::default().with("moves chosen", self.choices, None).with("moves scored", self.scored, None);
        c.0.extend(self.scorer.counters().0);
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chess::{Position, Role};

    /// Scores a move by the value of what it captures (a pawn 1, …), then prefers the
    /// later squares: a deterministic toy.
    struct Greedy;
    impl MoveScorer for Greedy {
        fn name(&self) -> &'static str {
            "greedy"
        }
        fn score_moves(&mut self, game: &Game, moves: &[Move], scores: &mut Vec<f32>) {
            let pos = game.position();
            scores.clear();
            let value = |r: Role| [1.0, 3.0, 3.0, 5.0, 9.0, 0.0][r.index()];
            scores.extend(moves.iter().map(|&m| pos.role_on(m.to).map_or(0.0, value)));
        }
        fn centipawns(&self, best: f32) -> i32 {
            (100.0 * best) as i32
        }
    }

    fn choose(p: &mut PolicyPlayer<Greedy>, fen: &str, limits: Limits) -> SearchResult {
        let game = Game::new(Position::from_fen(fen).unwrap());
        let mut infos = Vec::new();
        let r = p.choose(&game, &limits, Duration::ZERO, Arc::new(AtomicBool::new(false)), &mut |i| infos.push(i.clone()));
        assert_eq!(infos.len(), 1, "one info line");
        r
    }

    #[test]
    fn plays_the_best_scored_legal_move_under_any_limit() {
        let mut p = PolicyPlayer::new(Greedy);
        // White's queen takes the rook on a8, whatever the limits.
        let fen = "r3k3/8/8/8/8/8/8/Q3K3 w - - 0 1";
        for limits in [Limits::depth(1), Limits::depth(40), Limits { nodes: Some(1), ..Limits::default() }, Limits { infinite: true, ..Limits::default() }] {
            let r = choose(&mut p, fen, limits);
            assert_eq!(r.best.map(|m| m.to_string()), Some("a1a8".to_string()));
            assert_eq!((r.info.depth, r.info.score, r.info.pv.len()), (1, Score::Cp(500), 1));
        }
        // searchmoves: only the king may move.
        let pos = Position::from_fen(fen).unwrap();
        let king: Vec<Move> = pos.legal_moves().iter().copied().filter(|m| m.to_string().starts_with("e1")).collect();
        let r = choose(&mut p, fen, Limits { searchmoves: king.clone(), ..Limits::depth(1) });
        assert!(king.contains(&r.best.unwrap()));
        // No legal move: none chosen, the rules' score.
        let mated = choose(&mut p, "k7/1Q6/1K6/8/8/8/8/8 b - - 0 1", Limits::depth(1));
        assert_eq!((mated.best, mated.info.score), (None, Score::Mate(0)));
        let stalemate = choose(&mut p, "k7/8/1Q6/8/8/8/8/7K b - - 0 1", Limits::depth(1));
        assert_eq!((stalemate.best, stalemate.info.score), (None, Score::Cp(0)));
        assert_eq!(p.counters().get("moves chosen"), 5);
    }
}
