//! Which board features V and M see (seed §5: "both learners used the original GNU-Chess
//! features"):
//! - [`FeatureSet::Ours`]: the 175 features of [`super::features`], GNU Chess's terms in spirit
//!   (what every run before issue 64 used);
//! - [`FeatureSet::Gnu`]: the terms of GNU Chess's evaluation as its authors described them,
//!   [`crate::eval::gnu`] (the evaluation Table 1's opponent plays with), one input per term
//!   per side (each side's contribution, positive good for that side; material in thousands
//!   of centipawns, the others in hundreds), then the stage and the side to move: 2 × 28 + 2.
//!
//! A net records its set in its architecture (`175-H-1`, `gnu58-H-1`; M `175-165-175`,
//! `gnu58-165-gnu58`), so a player built from a file evaluates with the features it learnt on.

use super::features::{features_into, BLOCKS, FEATURES, PER_SIDE};
use crate::chess::{Color, Position};
use crate::eval::gnu;

/// The GNU set's width: both sides' terms, the stage, the side to move.
pub const GNU_WIDTH: usize = 2 * gnu::N + 2;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum FeatureSet {
    #[default]
    Ours,
    Gnu,
}

impl FeatureSet {
    pub const ALL: [FeatureSet; 2] = [FeatureSet::Ours, FeatureSet::Gnu];

    pub fn name(self) -> &'static str {
        match self {
            FeatureSet::Ours => "ours",
            FeatureSet::Gnu => "gnu",
        }
    }

    pub fn parse(s: &str) -> Option<FeatureSet> {
        FeatureSet::ALL.into_iter().find(|f| f.name() == s)
    }

    /// Inputs per board.
    pub fn width(self) -> usize {
        match self {
            FeatureSet::Ours => FEATURES,
            FeatureSet::Gnu => GNU_WIDTH,
        }
    }

    /// The set's name in an architecture string, as [`TAGS`] holds it: `175` (the files
    /// written before there was a choice) or `gnu58`.
    pub fn tag(self) -> &'static str {
        TAGS[FeatureSet::ALL.iter().position(|&x| x == self).expect("every feature set")]
    }

    pub fn from_tag(tag: &str) -> Option<FeatureSet> {
        FeatureSet::ALL.into_iter().find(|f| f.tag() == tag)
    }

    /// The features of `pos` into `out` (length [`FeatureSet::width`]).
    pub fn features_into(self, pos: &Position, out: &mut [f32]) {
        match self {
            FeatureSet::Ours => features_into(pos, out),
            FeatureSet::Gnu => gnu_features_into(pos, out),
        }
    }

    /// The groups M's error is reported by: (name, feature indices).
    pub fn groups(self) -> Vec<(&'static str, Vec<usize>)> {
        match self {
            FeatureSet::Ours => {
                let mut g: Vec<(&'static str, Vec<usize>)> = BLOCKS.iter().map(|&(n, at, k)| (n, (at..at + k).chain(PER_SIDE + at..PER_SIDE + at + k).collect())).collect();
                g.push(("global", (2 * PER_SIDE..FEATURES).collect()));
                g
            }
            FeatureSet::Gnu => {
                let mut g: Vec<(&'static str, Vec<usize>)> = Vec::new();
                for (t, doc) in gnu::TERMS.iter().enumerate() {
                    let family = doc.name.split('.').next().unwrap_or(doc.name);
                    match g.iter_mut().find(|(n, _)| *n == family) {
                        Some((_, v)) => v.extend([t, gnu::N + t]),
                        None => g.push((family, vec![t, gnu::N + t])),
                    }
                }
                g.push(("global", vec![2 * gnu::N, 2 * gnu::N + 1]));
                g
            }
        }
    }
}

/// Each GNU term's scale as an input: material in thousands of centipawns, the rest in hundreds.
fn scale(t: usize) -> f32 {
    if t == gnu::T::Material as usize {
        1e-3
    } else {
        1e-2
    }
}

/// The GNU set (module documentation).
pub fn gnu_features_into(pos: &Position, out: &mut [f32]) {
    debug_assert_eq!(out.len(), GNU_WIDTH);
    let t = gnu::terms(pos);
    for c in Color::ALL {
        for k in 0..gnu::N {
            out[c.index() * gnu::N + k] = t.side[c.index()][k] * scale(k);
        }
    }
    out[2 * gnu::N] = t.stage;
    out[2 * gnu::N + 1] = if pos.turn() == Color::White { 1.0 } else { -1.0 };
}

/// The feature sets' tags as the nets' headers name them, in [`FeatureSet::ALL`]'s order: the
/// words an architecture's form accepts (a test holds them to the sets' widths).
pub const TAGS: &[&str] = &["175", "gnu58"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_set_names_its_width_and_round_trips_its_tag() {
        for f in FeatureSet::ALL {
            assert_eq!(FeatureSet::from_tag(&f.tag()), Some(f));
            assert_eq!(FeatureSet::parse(f.name()), Some(f));
            let covered: usize = f.groups().iter().map(|(_, v)| v.len()).sum();
            assert_eq!(covered, f.width(), "{f:?}: every feature in one group");
        }
        assert_eq!(FeatureSet::Ours.tag(), "175");
        assert_eq!(FeatureSet::Gnu.tag(), "gnu58");
        // The tags name the widths (the architecture strings' shapes).
        assert_eq!(FeatureSet::Ours.tag(), FEATURES.to_string());
        assert_eq!(FeatureSet::Gnu.tag(), format!("gnu{GNU_WIDTH}"));
    }

    #[test]
    fn the_gnu_set_is_the_evaluation_s_terms_scaled() {
        crate::chess::attacks::init();
        let p = Position::from_fen("4k3/8/8/8/8/8/8/3QK3 b - - 0 1").unwrap();
        let mut x = vec![0.0; GNU_WIDTH];
        gnu_features_into(&p, &mut x);
        assert!((x[gnu::T::Material as usize] - 0.98).abs() < 1e-6);
        assert_eq!(x[gnu::N + gnu::T::Material as usize], 0.0);
        assert_eq!(x[2 * gnu::N], 1.0, "the ending");
        assert_eq!(x[2 * gnu::N + 1], -1.0, "Black to move");
    }
}
