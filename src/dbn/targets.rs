//! What each head learns (section III.A): the game's result in three classes, the engine's
//! score clipped to [−300, 300] cp and normalised, and that score quantized into seven
//! classes. The seed's "Equation 2" (its quantization) is not in the text: the bins here are
//! ours, and docs/notebook/results.md says why.
//!
//! Every target and every value is from White's side.

use crate::data::labels::{EngineScore, Wdl};

/// The clip of the seed ("in the range [-300; 300]"), centipawns. Mates go to the bound.
pub const CLIP_CP: i32 = 300;

/// Upper edges (cp, exclusive) of the positive half of the seven quantized classes: class 3
/// is |cp| < `EDGES_CP[0]`, class 4 is `EDGES_CP[0]` ≤ cp < `EDGES_CP[1]`, …, class 6 is cp ≥
/// `EDGES_CP[2]`; negative scores mirror them (classes 2, 1, 0). Symmetric around 0, so a
/// colour-mirrored position lands in the mirrored class, and set near equal mass on our
/// labelled positions (docs/notebook/results.md shows the counts).
pub const EDGES_CP: [i32; 3] = [20, 90, 300];

/// Number of quantized classes.
pub const CLASSES: usize = 7;

/// The score clipped to ±[`CLIP_CP`] (a mate for White is +300, for Black −300).
pub fn clipped_cp(s: EngineScore) -> i32 {
    match s {
        EngineScore::Cp(cp) => cp.clamp(-CLIP_CP, CLIP_CP),
        EngineScore::Mate(m) => if m >= 0 { CLIP_CP } else { -CLIP_CP },
    }
}

/// The regression target: the clipped score divided by the clip, in [−1, 1] (the range of
/// the tanh output).
pub fn normalised(s: EngineScore) -> f32 {
    clipped_cp(s) as f32 / CLIP_CP as f32
}

/// The quantized class of a score, 0 (Black far ahead) ..= 6 (White far ahead).
pub fn quantized(s: EngineScore) -> usize {
    let cp = clipped_cp(s);
    let mag = EDGES_CP.iter().take_while(|&&e| cp.abs() >= e).count();
    if cp >= 0 { 3 + mag } else { 3 - mag }
}

/// The value a quantized class stands for, normalised like [`normalised`]: the middle of its
/// bin, the outer classes at the bound (they hold the clipped scores, mates among them).
pub fn class_value(class: usize) -> f32 {
    // Bin i of the positive half spans [lower[i], upper[i]); the outer one holds what was
    // clipped, so it stands for the bound.
    let lower = [0, EDGES_CP[0], EDGES_CP[1], EDGES_CP[2]];
    let upper = [EDGES_CP[0], EDGES_CP[1], EDGES_CP[2], CLIP_CP];
    let mid = |i: usize| -> f32 {
        match i {
            0 => 0.0,
            3 => CLIP_CP as f32,
            i => (lower[i] + upper[i]) as f32 / 2.0,
        }
    };
    let d = class as isize - 3;
    let v = mid(d.unsigned_abs()) / CLIP_CP as f32;
    if d < 0 { -v } else { v }
}

/// The result class: 0 loss, 1 draw, 2 win (White's side).
pub fn wdl_class(r: Wdl) -> usize {
    match r {
        Wdl::Loss => 0,
        Wdl::Draw => 1,
        Wdl::Win => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_clip_normalise_and_quantize_symmetrically() {
        assert_eq!(clipped_cp(EngineScore::Cp(1234)), 300);
        assert_eq!(clipped_cp(EngineScore::Mate(-2)), -300);
        assert_eq!(normalised(EngineScore::Cp(150)), 0.5);
        for cp in -400..=400 {
            let (a, b) = (quantized(EngineScore::Cp(cp)), quantized(EngineScore::Cp(-cp)));
            assert_eq!(a + b, 6, "{cp}: classes {a} and {b} are not mirrored");
        }
        assert_eq!(quantized(EngineScore::Cp(0)), 3);
        assert_eq!(quantized(EngineScore::Cp(EDGES_CP[0] - 1)), 3);
        assert_eq!(quantized(EngineScore::Cp(EDGES_CP[0])), 4);
        assert_eq!(quantized(EngineScore::Mate(5)), 6);
        assert_eq!(quantized(EngineScore::Mate(-1)), 0);
        // Values increase with the class, mirror, and stay within the normalised range.
        let v: Vec<f32> = (0..CLASSES).map(class_value).collect();
        assert!(v.windows(2).all(|w| w[0] < w[1]), "{v:?}");
        assert!((0..CLASSES).all(|c| (v[c] + v[6 - c]).abs() < 1e-6 && v[c].abs() <= 1.0));
        assert_eq!((v[3], v[6]), (0.0, 1.0));
    }
}
