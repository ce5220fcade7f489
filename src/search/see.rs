//! Static exchange evaluation: the material balance of the capture sequence on one square,
//! each side recapturing with its least valuable piece and free to stop. Used to skip losing
//! captures in quiescence; it needs no evaluator, so it serves the net and handcrafted alike.

use crate::chess::{Bitboard, Move, Position, Role};

const VALUE: [i32; 6] = [100, 300, 300, 500, 900, 20_000];

/// The exchange's result for the side making `m`, in rough centipawns (pins ignored).
pub fn see(pos: &Position, m: Move) -> i32 {
    let us = pos.turn();
    let mover = pos.role_on(m.from).unwrap_or(Role::Pawn);
    let mut occ = pos.occupied() ^ Bitboard::from_square(m.from);
    let mut gain = [0i32; 40];
    gain[0] = match pos.role_on(m.to) {
        Some(r) => VALUE[r.index()],
        None if mover == Role::Pawn && m.from.file() != m.to.file() => {
            // En passant: the victim is behind the target square.
            let victim = if m.to.rank() > m.from.rank() { m.to.index() - 8 } else { m.to.index() + 8 };
            occ ^= Bitboard::from_square(crate::chess::Square::new(victim as u8));
            VALUE[0]
        }
        None => 0,
    };
    let mut on_square = mover;
    if let Some(p) = m.promotion {
        gain[0] += VALUE[p.index()] - VALUE[0];
        on_square = p;
    }
    let mut side = us.flip();
    let mut d = 0;
    loop {
        let attackers = pos.attackers(m.to, side, occ) & occ;
        if attackers.is_empty() || d + 1 >= gain.len() {
            break;
        }
        let Some((role, sq)) = Role::ALL.iter().find_map(|&r| {
            let b = attackers & pos.by_role(r);
            b.any().then(|| (r, b.lsb()))
        }) else {
            break;
        };
        // A king may only recapture when nothing defends the square any more.
        if role == Role::King && (pos.attackers(m.to, side.flip(), occ) & occ).any() {
            break;
        }
        d += 1;
        gain[d] = VALUE[on_square.index()] - gain[d - 1];
        if gain[d].max(-gain[d - 1]) < 0 {
            break;
        }
        occ ^= Bitboard::from_square(sq);
        on_square = role;
        side = side.flip();
    }
    while d > 0 {
        gain[d - 1] = -((-gain[d - 1]).max(gain[d]));
        d -= 1;
    }
    gain[0]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn see_of(fen: &str, m: &str) -> i32 {
        let p = Position::from_fen(fen).unwrap();
        see(&p, p.parse_uci(m).unwrap())
    }

    #[test]
    fn exchanges() {
        // Free pawn.
        assert_eq!(see_of("4k3/8/8/3p4/4P3/8/8/4K3 w - - 0 1", "e4d5"), 100);
        // Pawn defended by pawn, taken by the queen: loses the queen for a pawn.
        assert_eq!(see_of("4k3/2p5/3p4/8/8/8/3Q4/4K3 w - - 0 1", "d2d6"), 100 - 900);
        // Rook takes a defended knight: 300 - 500.
        assert_eq!(see_of("4k3/4p3/3n4/8/8/8/3R4/4K3 w - - 0 1", "d2d6"), -200);
        // X-ray: two rooks against one defender.
        assert_eq!(see_of("3rk3/8/3p4/8/8/8/3R4/3RK3 w - - 0 1", "d2d6"), 100);
        // Quiet move to an attacked square counts the loss.
        assert_eq!(see_of("4k3/8/3p4/8/8/8/8/2N1K3 w - - 0 1", "c1e2"), 0);
    }
}
