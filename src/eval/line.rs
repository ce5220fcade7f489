//! A net's first layer kept incrementally along the search's line (what NNUE engines call the
//! accumulator), for every net whose input is the board as bits: DeepChess's 773 bits, the
//! DBN's 772 or 773. A comparator or evaluator keeps a [`Line`]: the position at each ply (the
//! search announces each move, `Comparator::set_node`) and, lazily, that ply's first-layer
//! sums, built from the nearest ancestor's by the rows of the bits the moves changed (two to
//! four after a move) rather than from the position's ~34 bits.

use super::comparator::MAX_PLY;
use crate::chess::position::castle;
use crate::chess::{Bitboard, Color, Piece, Position, Role, Square};
use crate::tensor::kernels::vecops;
use crate::tensor::layers::dense::Dense;
use crate::tensor::Kernel;

/// Where a board-bits input puts what is not a piece. Every such encoding of the crate starts
/// with the 12 × 64 piece bits, colour · 384 + role · 64 + square; then four castling bits
/// (white king side, white queen side, black king side, black queen side) from `castling`,
/// and, if it has one, the bit set when White is to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BoardBits {
    pub castling: usize,
    pub side: Option<usize>,
}

const RIGHTS: [u8; 4] = [castle::WK, castle::WQ, castle::BK, castle::BQ];

impl BoardBits {
    /// The bit that says of the colour-mirrored position (ranks flipped, colours swapped)
    /// what bit `i` says of this one: a piece bit or a castling bit. The side bit has no
    /// such twin (the mirror has it exactly when this position lacks it): callers toggle it.
    #[inline]
    pub fn mirror_bit(&self, i: usize) -> usize {
        if i < 768 {
            let (c, r, sq) = (i / 384, i % 384 / 64, i % 64);
            (1 - c) * 384 + r * 64 + (sq ^ 56)
        } else if i >= self.castling && i < self.castling + 4 {
            self.castling + ((i - self.castling) ^ 2)
        } else {
            i
        }
    }

    /// The set bits of `pos`, in increasing order, into `out` (cleared first).
    pub fn active(&self, pos: &Position, out: &mut Vec<usize>) {
        out.clear();
        for c in Color::ALL {
            for r in Role::ALL {
                out.extend(pos.pieces(c, r).into_iter().map(|sq| c.index() * 384 + r.index() * 64 + sq.index()));
            }
        }
        let rights = pos.castling_rights();
        let castling = RIGHTS.iter().enumerate().filter(|&(_, &b)| rights & b != 0).map(|(i, _)| self.castling + i);
        let side = self.side.filter(|_| pos.turn() == Color::White);
        // The extras in increasing order too (the side bit lies before or after castling).
        match side {
            Some(s) if s < self.castling => {
                out.push(s);
                out.extend(castling);
            }
            _ => {
                out.extend(castling);
                out.extend(side);
            }
        }
    }

    /// The bits that differ between two positions: (added, removed), appended to the lists;
    /// the piece bits of each in increasing order (the order an update sums rows in), then
    /// the side bit, then castling. Only the squares whose occupant changed are looked at.
    pub fn delta(&self, from: &Position, to: &Position, added: &mut Vec<usize>, removed: &mut Vec<usize>) {
        let mut changed = Bitboard::EMPTY;
        for c in Color::ALL {
            changed |= from.by_color(c) ^ to.by_color(c);
        }
        for r in Role::ALL {
            changed |= from.by_role(r) ^ to.by_role(r);
        }
        let bit = |p: Piece, sq: Square| p.color.index() * 384 + p.role.index() * 64 + sq.index();
        let (a0, r0) = (added.len(), removed.len());
        for sq in changed {
            if let Some(p) = from.piece_on(sq) {
                removed.push(bit(p, sq));
            }
            if let Some(p) = to.piece_on(sq) {
                added.push(bit(p, sq));
            }
        }
        added[a0..].sort_unstable();
        removed[r0..].sort_unstable();
        if let Some(side) = self.side {
            match (from.turn(), to.turn()) {
                (Color::White, Color::Black) => removed.push(side),
                (Color::Black, Color::White) => added.push(side),
                _ => {}
            }
        }
        let (ca, cb) = (from.castling_rights(), to.castling_rights());
        for (i, b) in RIGHTS.into_iter().enumerate() {
            match (ca & b != 0, cb & b != 0) {
                (true, false) => removed.push(self.castling + i),
                (false, true) => added.push(self.castling + i),
                _ => {}
            }
        }
    }
}

/// A first layer over board bits: its sums (bias plus one row per set bit), from scratch or
/// from another position's sums.
pub trait FirstLayer {
    /// An element of the sums (f32, or i16 for an integer net).
    type Sum: Copy + Default;
    /// Its input encoding.
    fn bits(&self) -> BoardBits;
    /// Width of the sums, padding included.
    fn width(&self) -> usize;
    /// The sums of the set bits `active`.
    fn refresh(&self, active: &[usize], out: &mut [Self::Sum]);
    /// `dst = src` plus the rows of `added`, minus those of `removed`.
    fn update(&self, dst: &mut [Self::Sum], src: &[Self::Sum], added: &[usize], removed: &[usize]);
}

/// A first layer held as a dense layer's rows ([`Dense`]: padded, half-precision values
/// widened to f32): what the scalar nets read along the line (the DBN heads, DeepChess's
/// value student), each sum a row added or taken away with the kernel `kernel`.
pub struct DenseFirst<'a> {
    pub d: &'a Dense,
    pub kernel: Kernel,
    pub bits: BoardBits,
}

impl FirstLayer for DenseFirst<'_> {
    type Sum = f32;
    fn bits(&self) -> BoardBits {
        self.bits
    }
    fn width(&self) -> usize {
        self.d.cols()
    }
    fn refresh(&self, active: &[usize], out: &mut [f32]) {
        vecops::update_with(self.kernel, out, self.d.bias(), self.d.weights(), self.d.cols(), active, &[]);
    }
    fn update(&self, dst: &mut [f32], src: &[f32], added: &[usize], removed: &[usize]) {
        vecops::update_with(self.kernel, dst, src, self.d.weights(), self.d.cols(), added, removed);
    }
}

/// How far back an update may start: beyond it a refresh from the position's bits is cheaper
/// than replaying the moves.
const MAX_REPLAY: usize = 8;

/// The search's current line: the position at each ply `0..=MAX_PLY` and, where computed
/// since that ply last changed, its first-layer sums.
pub struct Line<S> {
    positions: Vec<Position>,
    sums: Vec<S>,
    valid: Vec<bool>,
    width: usize,
    added: Vec<usize>,
    removed: Vec<usize>,
    /// Sums from the nearest valid ancestor (true, the default) or from scratch each time.
    pub incremental: bool,
}

impl<S: Copy + Default> Line<S> {
    /// A line for sums `width` wide.
    pub fn new(width: usize) -> Self {
        Line {
            positions: vec![Position::startpos(); MAX_PLY + 1],
            sums: vec![S::default(); width * (MAX_PLY + 1)],
            valid: vec![false; MAX_PLY + 1],
            width,
            added: Vec::new(),
            removed: Vec::new(),
            incremental: true,
        }
    }

    /// The line now has `pos` at `ply` (every move the search makes).
    #[inline]
    pub fn set_node(&mut self, ply: usize, pos: &Position) {
        if ply <= MAX_PLY {
            self.positions[ply] = *pos;
            self.valid[ply] = false;
        }
    }

    /// A new root: every ply's sums are stale; the root's are computed at once, so that any
    /// node within a few plies of it updates incrementally even if no interior node did.
    pub fn set_root<L: FirstLayer<Sum = S>>(&mut self, pos: &Position, layer: &L) {
        self.clear();
        self.set_node(0, pos);
        self.ensure(0, layer);
    }

    /// Forgets every ply's sums.
    pub fn clear(&mut self) {
        self.valid.iter_mut().for_each(|v| *v = false);
    }

    /// Whether `pos` is the line's position at `ply` (a caller outside the search may ask
    /// about any position).
    #[inline]
    pub fn holds(&self, ply: usize, pos: &Position) -> bool {
        ply <= MAX_PLY && self.positions[ply].hash() == pos.hash()
    }

    /// The sums at `ply` (of a position the line holds), computed from the nearest valid
    /// ancestor within reach, or from the position's bits.
    pub fn ensure<L: FirstLayer<Sum = S>>(&mut self, ply: usize, layer: &L) -> &[S] {
        let h = self.width;
        if !self.valid[ply] {
            let mut from = ply;
            while from > 0 && !self.valid[from] && ply - from < MAX_REPLAY {
                from -= 1;
            }
            if !self.incremental || !self.valid[from] {
                layer.bits().active(&self.positions[ply], &mut self.added);
                layer.refresh(&self.added, &mut self.sums[ply * h..(ply + 1) * h]);
                self.valid[ply] = true;
            } else {
                let bits = layer.bits();
                for p in from..ply {
                    self.added.clear();
                    self.removed.clear();
                    bits.delta(&self.positions[p], &self.positions[p + 1], &mut self.added, &mut self.removed);
                    let (lo, hi) = self.sums.split_at_mut((p + 1) * h);
                    layer.update(&mut hi[..h], &lo[p * h..(p + 1) * h], &self.added, &self.removed);
                    self.valid[p + 1] = true;
                }
            }
        }
        &self.sums[ply * h..(ply + 1) * h]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A first layer of small integer rows (exact sums), 6 wide.
    struct Rows(BoardBits);
    impl FirstLayer for Rows {
        type Sum = i64;
        fn bits(&self) -> BoardBits {
            self.0
        }
        fn width(&self) -> usize {
            6
        }
        fn refresh(&self, active: &[usize], out: &mut [i64]) {
            out.iter_mut().enumerate().for_each(|(j, o)| *o = active.iter().map(|&i| row(i, j)).sum());
        }
        fn update(&self, dst: &mut [i64], src: &[i64], added: &[usize], removed: &[usize]) {
            for (j, d) in dst.iter_mut().enumerate() {
                *d = src[j] + added.iter().map(|&i| row(i, j)).sum::<i64>() - removed.iter().map(|&i| row(i, j)).sum::<i64>();
            }
        }
    }
    fn row(i: usize, j: usize) -> i64 {
        ((i * 7919 + j * 104_729) % 1000) as i64 - 500
    }

    /// Along random games, with both encodings' layouts: the bits are increasing, the delta
    /// turns a position's bits into its child's, and incremental sums equal fresh ones.
    #[test]
    fn incremental_sums_equal_fresh_ones() {
        crate::chess::attacks::init();
        for bits in [BoardBits { castling: 769, side: Some(768) }, BoardBits { castling: 768, side: Some(772) }, BoardBits { castling: 768, side: None }] {
            let layer = Rows(bits);
            let mut line = Line::<i64>::new(6);
            let (mut a, mut b) = (Vec::new(), Vec::new());
            for seed in 0..6u64 {
                let mut pos = Position::startpos();
                line.set_root(&pos, &layer);
                let mut rng = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
                for ply in 1..60 {
                    let moves = pos.legal_moves();
                    if moves.is_empty() {
                        break;
                    }
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    let mut child = pos;
                    child.play(moves.as_slice()[(rng % moves.len() as u64) as usize]);
                    bits.active(&pos, &mut a);
                    bits.active(&child, &mut b);
                    assert!(a.windows(2).all(|w| w[0] < w[1]) && b.windows(2).all(|w| w[0] < w[1]));
                    let (mut added, mut removed) = (Vec::new(), Vec::new());
                    bits.delta(&pos, &child, &mut added, &mut removed);
                    let mut next: Vec<usize> = a.iter().copied().filter(|x| !removed.contains(x)).chain(added.iter().copied()).collect();
                    next.sort_unstable();
                    assert_eq!(next, b, "{bits:?}");
                    line.set_node(ply, &child);
                    // Ask only every third ply: updates then span several moves.
                    if ply % 3 == 0 || ply > 50 {
                        let mut fresh = vec![0; 6];
                        layer.refresh(&b, &mut fresh);
                        assert!(line.holds(ply, &child));
                        assert_eq!(line.ensure(ply, &layer), &fresh[..]);
                    }
                    pos = child;
                }
            }
        }
    }
}
