//! Perft: the number of leaf nodes of the legal move tree, bulk-counted at the last ply.

use super::moves::Move;
use super::position::Position;

/// Leaf count of the legal move tree of `depth` plies.
pub fn perft(pos: &Position, depth: u32) -> u64 {
    match depth {
        0 => 1,
        1 => pos.count_legal() as u64,
        _ => {
            let mut n = 0;
            pos.for_each_piece_moves(|pm| {
                pm.for_each(|m| {
                    let mut child = *pos;
                    child.play(m);
                    n += perft(&child, depth - 1);
                });
                false
            });
            n
        }
    }
}

/// Leaf counts per root move (Stockfish's `go perft` divide), in generation order.
pub fn divide(pos: &Position, depth: u32) -> Vec<(Move, u64)> {
    let depth = depth.max(1);
    pos.legal_moves()
        .iter()
        .map(|&m| {
            let mut child = *pos;
            child.play(m);
            (m, perft(&child, depth - 1))
        })
        .collect()
}
