//! The labelled positions as the DBN reads them, and the two ways of holding some out:
//! - **positions** (the seed's protocol, section III.C): ten folds over positions drawn at
//!   random, so positions of one game fall on both sides;
//! - **games**: whole games held out, the same share of positions as one fold.

use super::features::Encoding;
use super::targets::{normalised, quantized, wdl_class};
use crate::data::labels::LabelSet;
use crate::tensor::{Matrix, SparseBatch};
use std::path::Path;

/// At most 32 pieces, 4 castling rights and the side to move.
const MAX_BITS: usize = 37;

/// One position: its set bits and its three targets.
#[derive(Clone, Copy, Debug)]
pub struct Sample {
    bits: [u16; MAX_BITS],
    len: u8,
    /// Result class: 0 loss, 1 draw, 2 win (White's side).
    pub wdl: u8,
    /// The normalised engine score in [−1, 1].
    pub target: f32,
    /// The quantized class 0..7.
    pub qclass: u8,
    pub game: u32,
}

impl Sample {
    pub fn bits(&self) -> &[u16] {
        &self.bits[..self.len as usize]
    }
}

/// A labelled set encoded once.
pub struct Samples {
    pub encoding: Encoding,
    pub items: Vec<Sample>,
}

impl Samples {
    pub fn from_labels(set: &LabelSet, encoding: Encoding) -> Samples {
        let mut buf = Vec::with_capacity(40);
        let items = set
            .items
            .iter()
            .map(|l| {
                encoding.active(&l.pos, &mut buf);
                let mut bits = [0u16; MAX_BITS];
                let len = buf.len().min(MAX_BITS);
                for (b, &i) in bits.iter_mut().zip(&buf) {
                    *b = i as u16;
                }
                Sample {
                    bits,
                    len: len as u8,
                    wdl: wdl_class(l.result) as u8,
                    target: normalised(l.score),
                    qclass: quantized(l.score) as u8,
                    game: l.game,
                }
            })
            .collect();
        Samples { encoding, items }
    }

    /// The rows `idx` as a sparse batch.
    pub fn sparse(&self, idx: &[usize], out: &mut SparseBatch) {
        out.clear();
        let mut row: Vec<u32> = Vec::with_capacity(MAX_BITS);
        for &i in idx {
            row.clear();
            row.extend(self.items[i].bits().iter().map(|&b| b as u32));
            out.push_row(&row).expect("bits below the encoding's width");
        }
    }

    /// The rows `idx` as dense 0/1 rows (an RBM's visible units).
    pub fn dense(&self, idx: &[usize], out: &mut Matrix) {
        out.resize_zeroed(idx.len(), self.encoding.inputs());
        for (r, &i) in idx.iter().enumerate() {
            let row = out.row_mut(r);
            for &b in self.items[i].bits() {
                row[b as usize] = 1.0;
            }
        }
    }
}

/// Which positions are held out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Split {
    /// Fold `fold` of `folds` over positions (the seed's cross-validation).
    Positions { fold: usize, folds: usize },
    /// Games whose id hashes into the first `per_mille` of a thousand.
    Games { per_mille: u32 },
}

impl Split {
    /// `positions-f3of10`, `games-100pm`: a run folder name and what tables print.
    pub fn name(&self) -> String {
        match self {
            Split::Positions { fold, folds } => format!("positions-f{fold}of{folds}"),
            Split::Games { per_mille } => format!("games-{per_mille}pm"),
        }
    }

    /// One line for headers and results.
    pub fn describe(&self) -> String {
        match self {
            Split::Positions { fold, folds } => {
                format!("position split (the seed's protocol): fold {} of {folds}, positions of a game on both sides", fold + 1)
            }
            Split::Games { per_mille } => format!("game split: {:.1} % of games held out whole", *per_mille as f64 / 10.0),
        }
    }

    fn held_out(&self, index: usize, s: &Sample, seed: u64) -> bool {
        match *self {
            Split::Positions { fold, folds } => (mix(index as u64 ^ seed.rotate_left(17)) % folds as u64) as usize == fold,
            Split::Games { per_mille } => mix(s.game as u64 ^ 0x9E37_79B9_7F4A_7C15) % 1000 < per_mille as u64,
        }
    }

    /// Indices of the training and the held-out positions.
    pub fn apply(&self, samples: &Samples, seed: u64) -> (Vec<usize>, Vec<usize>) {
        let (mut train, mut valid) = (Vec::new(), Vec::new());
        for (i, s) in samples.items.iter().enumerate() {
            if self.held_out(i, s, seed) {
                valid.push(i)
            } else {
                train.push(i)
            }
        }
        (train, valid)
    }
}

/// The order a stage visits its training positions in: one permutation kept through the
/// stage and shuffled again at each epoch, so epoch `e`'s order is the training set shuffled
/// by the streams of epochs `0..=e` in turn (the committed nets were trained so). A stage
/// resumed at epoch `e > 0` starts from the unshuffled set: it first replays the earlier
/// epochs' shuffles from their streams (`train::stage::epoch_rng`), or it would visit
/// another order than the uninterrupted run did.
pub struct EpochOrder {
    order: Vec<usize>,
    /// The next epoch whose shuffle is not applied yet.
    next: usize,
    seed: u64,
    stage: String,
}

impl EpochOrder {
    /// The order of stage `stage` of a run with seed `seed` over positions `train`.
    pub fn new(train: &[usize], seed: u64, stage: &str) -> EpochOrder {
        EpochOrder { order: train.to_vec(), next: 0, seed, stage: stage.to_string() }
    }

    /// Epoch `epoch`'s order; `rng` is the stage's stream of that epoch, not drawn from yet
    /// (the shuffle is its first use, which is what makes the replay exact).
    pub fn epoch(&mut self, epoch: usize, rng: &mut crate::tensor::Rng) -> &[usize] {
        assert!(epoch >= self.next, "stage {}: epoch {epoch} after epoch {}", self.stage, self.next);
        for e in self.next..epoch {
            shuffle(&mut self.order, &mut crate::train::stage::epoch_rng(self.seed, &self.stage, e));
        }
        shuffle(&mut self.order, rng);
        self.next = epoch + 1;
        &self.order
    }
}

/// The order of an epoch: Fisher-Yates with `next_u64() % (i + 1)`. (Not `Rng::shuffle`,
/// whose multiply-shift draw would change every committed figure's training order.)
pub fn shuffle(v: &mut [usize], rng: &mut crate::tensor::Rng) {
    for i in (1..v.len()).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        v.swap(i, j);
    }
}

/// SplitMix64's finaliser: a well-mixed hash of an index.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A labelled set for the smoke run, written to `path`: every position after ply 10 of the
/// games in `pgn` (draws included), scored by material (an engine's scores stood in for, so
/// no engine is needed).
pub fn smoke_labels(pgn: &Path, path: &Path) -> Result<(), String> {
    use crate::chess::pgn::{open_pgn, PgnReader};
    use crate::chess::{Color, Outcome, Position, Role};
    use crate::data::labels::{EngineScore, Labelled, Wdl};
    let material = |pos: &Position| {
        let side = |c| [(Role::Pawn, 100), (Role::Knight, 300), (Role::Bishop, 300), (Role::Rook, 500), (Role::Queen, 900)].iter().map(|&(r, x)| x * pos.pieces(c, r).count() as i32).sum::<i32>();
        side(Color::White) - side(Color::Black)
    };
    let mut reader = PgnReader::new(open_pgn(&pgn.display().to_string()).map_err(|e| format!("{}: {e}", pgn.display()))?);
    let mut set = LabelSet::default();
    let mut game = 0u32;
    while let Some(g) = reader.next_game() {
        game += 1;
        let Ok(g) = g else { continue };
        let result = match g.result {
            Some(Outcome::Win(Color::White)) => Wdl::Win,
            Some(Outcome::Win(Color::Black)) => Wdl::Loss,
            Some(Outcome::Draw) => Wdl::Draw,
            None => continue,
        };
        let mut pos = g.start;
        for (ply, &m) in g.moves.iter().enumerate() {
            if ply >= 10 && pos.has_legal_move() {
                set.items.push(Labelled { game, ply: ply as u16, result, score: EngineScore::Cp(material(&pos)), pos });
            }
            pos.play(m);
        }
    }
    set.set_meta("engine", "material (test stand-in)");
    set.save(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake(n: usize, per_game: usize) -> Samples {
        let sample = |game: u32| Sample { bits: [0; MAX_BITS], len: 0, wdl: 1, target: 0.0, qclass: 3, game };
        Samples { encoding: Encoding::Bits772, items: (0..n).map(|i| sample((i / per_game) as u32)).collect() }
    }

    #[test]
    fn folds_partition_positions_and_the_game_split_keeps_games_whole() {
        let s = fake(20_000, 5);
        let mut seen = vec![0; s.items.len()];
        for fold in 0..10 {
            let (train, valid) = Split::Positions { fold, folds: 10 }.apply(&s, 1);
            assert_eq!(train.len() + valid.len(), s.items.len());
            assert!((1700..2300).contains(&valid.len()), "fold {fold}: {}", valid.len());
            valid.iter().for_each(|&i| seen[i] += 1);
        }
        assert!(seen.iter().all(|&c| c == 1), "every position is held out by exactly one fold");
        let (train, valid) = Split::Games { per_mille: 100 }.apply(&s, 1);
        assert!((1700..2300).contains(&valid.len()), "{}", valid.len());
        let held: std::collections::HashSet<u32> = valid.iter().map(|&i| s.items[i].game).collect();
        assert!(train.iter().all(|&i| !held.contains(&s.items[i].game)), "a held-out game has a training position");
        // The position split puts positions of one game on both sides, which is its point.
        let (train, valid) = Split::Positions { fold: 0, folds: 10 }.apply(&s, 1);
        let held: std::collections::HashSet<u32> = valid.iter().map(|&i| s.items[i].game).collect();
        assert!(train.iter().any(|&i| held.contains(&s.items[i].game)));
    }
}
