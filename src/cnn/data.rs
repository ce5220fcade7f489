//! The seed's sets ("Chess datasets"): every position of decisive games labelled by the
//! winner, split into training, validation and a test set from games the training never saw.
//!
//! One corpus gives the training set and two validation sets on one run, so the seed's doubt
//! ("same games (different positions though) being in both training set and validation set")
//! is measured on one net:
//! - **games**: every position of `per_mille` games in 1000 (by game), none trained on;
//! - **positions**: `per_mille` positions in 1000 of the *other* games (by game and ply),
//!   whose neighbours in the same game are trained on, as a random position split gives;
//! - training: the remaining positions.
//!
//! The test sets are separate datasets (a later file of the same generator, another engine's
//! games), named by the caller.

use super::features::{encode_record, INPUTS};
use crate::data::dataset::Record;
use crate::data::sample::{is_validation, is_validation_position};
use crate::tensor::Matrix;

/// Salt of the game split, so it differs from the `deepchess data` split of the same games.
const GAME_SALT: u64 = 0xC003;
/// Salt of the position split.
const POSITION_SALT: u64 = 0xC0C0;

/// The three parts of one corpus.
#[derive(Default)]
pub struct Sets {
    pub train: Vec<Record>,
    pub valid_games: Vec<Record>,
    pub valid_positions: Vec<Record>,
}

/// A record's game as a split key (records carry their game's index in the corpus).
fn game_key(r: &Record) -> u64 {
    (r.game as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xC4
}

/// Splits `records` (one corpus, every game's positions) as the module documentation says.
pub fn split(records: Vec<Record>, per_mille: u32) -> Sets {
    let mut s = Sets::default();
    for r in records {
        let key = game_key(&r);
        if is_validation(key, per_mille, GAME_SALT) {
            s.valid_games.push(r);
        } else if is_validation_position(key, r.ply, per_mille, POSITION_SALT) {
            s.valid_positions.push(r);
        } else {
            s.train.push(r);
        }
    }
    s
}

/// Number of distinct games among `records`.
pub fn games(records: &[Record]) -> usize {
    let mut g: Vec<u32> = records.iter().map(|r| r.game).collect();
    g.sort_unstable();
    g.dedup();
    g.len()
}

/// Encodes `records[idx]` into `x` (`batch × 448`) and their labels into `y` (`batch × 1`).
pub fn batch(records: &[Record], idx: &[usize], x: &mut Matrix, y: &mut Matrix) {
    x.resize(idx.len(), INPUTS);
    y.resize(idx.len(), 1);
    for (row, &i) in idx.iter().enumerate() {
        encode_record(&records[i], x.row_mut(row));
        y.set(row, 0, records[i].label as f32);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chess::Position;

    #[test]
    fn the_game_set_shares_no_game_and_the_position_set_does() {
        let pos = Position::startpos();
        let records: Vec<Record> = (0..2000u32).flat_map(|g| (0..60u16).map(move |ply| Record::new(&pos, g % 2 == 0, ply, g))).collect();
        let s = split(records, 80);
        let n = 2000 * 60;
        assert_eq!(s.train.len() + s.valid_games.len() + s.valid_positions.len(), n);
        let frac = |v: &Vec<Record>| v.len() as f64 / n as f64;
        assert!((0.05..0.11).contains(&frac(&s.valid_games)), "{}", frac(&s.valid_games));
        assert!((0.05..0.10).contains(&frac(&s.valid_positions)), "{}", frac(&s.valid_positions));
        let train_games: std::collections::HashSet<u32> = s.train.iter().map(|r| r.game).collect();
        assert!(s.valid_games.iter().all(|r| !train_games.contains(&r.game)));
        let shared = s.valid_positions.iter().filter(|r| train_games.contains(&r.game)).count();
        assert_eq!(shared, s.valid_positions.len(), "every position-split game is also trained on");
        assert_eq!(games(&s.valid_games) * 60, s.valid_games.len());
    }
}
