//! Why EBNN flattens V, measured (`deepchess neurochess-slopes RUN`): on held-out expert
//! pairs `(s_t, s_{t+2})`, per feature group, what EBNN asks of V's slope at `s_t` (the target
//! `γ·∇V(s_{t+2})·∂M(s_t)/∂s_t`) against V's own slope there (`∇V(s_t)`), and how M carries
//! each feature two plies on (the diagonal of its Jacobian, `∂M_i/∂x_i`: near 1 where a feature
//! persists, as material mostly does; below 1, every slope carried back through M shrinks in
//! that direction, and a V fitted to such slopes flattens there, TD step after TD step).

use super::data::{pairs, read_games, split, Line, Pairs, HELD_OUT_PER_MILLE};
use super::model::{Model, Pass, Value};
use super::train::GAMMA;
use crate::io::args::{self, CliError, Flag};
use crate::tensor::NetFile;
use crate::train::system::Command;
use std::path::{Path, PathBuf};

/// One feature group's figures, summed over the pairs.
#[derive(Clone, Debug, PartialEq)]
pub struct GroupSlopes {
    pub name: &'static str,
    pub features: usize,
    /// Mean of `∂M_i/∂x_i` over the group's features and the pairs.
    pub jacobian_diagonal: f64,
    /// Across the pairs, the least-squares slope of a feature two plies on on itself now
    /// (`x_{t+2,i}` on `x_{t,i}`: how the games carry it), and of M's prediction on it
    /// (`M(x_t)_i` on `x_{t,i}`), each the mean over the group's features that vary.
    pub data_slope: f64,
    pub model_slope: f64,
    /// The least-squares factor of the target on V's own slope, `Σ⟨t, o⟩ / Σ‖o‖²`: 1 when EBNN
    /// asks for the slope V has, below 1 when it asks for a flatter one.
    pub projection: f64,
    /// `√(Σ‖t‖² / Σ‖o‖²)`: the target's size against V's own slope.
    pub norm_ratio: f64,
    /// `Σ⟨t, o⟩ / √(Σ‖t‖²·Σ‖o‖²)`: whether they point the same way.
    pub cosine: f64,
}

/// The diagonal of M's Jacobian at `x`: `∂M_i/∂x_i = Σ_j W1[i, j]·(1 − h_j²)·W2[j, i]`, plus 1
/// when M predicts the change.
pub fn jacobian_diagonal(m: &Model, x: &[f32], out: &mut [f32]) {
    let (mut h, mut y) = (Vec::new(), vec![0.0f32; m.width()]);
    m.forward(x, &mut h, &mut y);
    jacobian_diagonal_at(m, &h, out);
}

/// [`jacobian_diagonal`] at a board whose hidden activations `h` [`Model::forward`] has made.
pub fn jacobian_diagonal_at(m: &Model, h: &[f32], out: &mut [f32]) {
    let n = m.width();
    let (w1, w2) = (m.params.value(m.w1).data(), m.params.value(m.w2).data());
    let hidden = h.len();
    for (i, o) in out.iter_mut().enumerate().take(n) {
        *o = (0..hidden).map(|j| w1[i * hidden + j] * (1.0 - h[j] * h[j]) * w2[j * n + i]).sum::<f32>() + if m.residual { 1.0 } else { 0.0 };
    }
}

/// The figures of every feature group of M's feature set (the groups of M's error table), on
/// `pairs`, with discount `gamma`.
pub fn by_group(m: &Model, v: &Value, pairs: &Pairs, gamma: f32) -> Vec<GroupSlopes> {
    let n = m.width();
    let groups = m.features.groups();
    // Per group: Σ diag, Σ⟨t, o⟩, Σ‖t‖², Σ‖o‖².
    let mut sums = vec![[0.0f64; 4]; groups.len()];
    // Per feature: Σx, Σx², Σx·x₂, Σx₂, Σx·M, ΣM (the least-squares slopes).
    let mut moments = vec![[0.0f64; 6]; n];
    let (mut h, mut y) = (Vec::new(), vec![0.0f32; n]);
    let (mut pass, mut pass2) = (Pass::default(), Pass::default());
    let (mut own, mut next, mut target, mut diag) = (vec![0.0f32; n], vec![0.0f32; n], vec![0.0f32; n], vec![0.0f32; n]);
    for r in 0..pairs.len() {
        let (x, x2) = pairs.row(r);
        v.forward(x, &mut pass);
        v.input_gradient(&pass, &mut own);
        v.forward(x2, &mut pass2);
        v.input_gradient(&pass2, &mut next);
        // M once per pair: its activations serve the slope target, the diagonal and M(x_t).
        m.forward(x, &mut h, &mut y);
        m.vjp_at(&h, &next, &mut target);
        target.iter_mut().for_each(|t| *t *= gamma);
        jacobian_diagonal_at(m, &h, &mut diag);
        for (f, mo) in moments.iter_mut().enumerate() {
            let (a, b, c) = (x[f] as f64, x2[f] as f64, y[f] as f64);
            for (k, v) in [a, a * a, a * b, b, a * c, c].into_iter().enumerate() {
                mo[k] += v;
            }
        }
        for ((_, idx), s) in groups.iter().zip(sums.iter_mut()) {
            for &f in idx {
                let (t, o) = (target[f] as f64, own[f] as f64);
                s[0] += diag[f] as f64;
                s[1] += t * o;
                s[2] += t * t;
                s[3] += o * o;
            }
        }
    }
    groups
        .into_iter()
        .zip(sums)
        .map(|((name, idx), s)| {
            let cells = (idx.len() * pairs.len()).max(1) as f64;
            let tiny = f64::MIN_POSITIVE;
            let count = pairs.len().max(1) as f64;
            // Least-squares slopes of the features that vary across the pairs.
            let slope = |k_xy: usize, k_y: usize| {
                let per: Vec<f64> = idx
                    .iter()
                    .filter_map(|&f| {
                        let mo = &moments[f];
                        let var = mo[1] / count - (mo[0] / count).powi(2);
                        (var > 1e-9).then(|| (mo[k_xy] / count - mo[0] / count * mo[k_y] / count) / var)
                    })
                    .collect();
                if per.is_empty() { f64::NAN } else { per.iter().sum::<f64>() / per.len() as f64 }
            };
            GroupSlopes {
                name,
                features: idx.len(),
                jacobian_diagonal: s[0] / cells,
                data_slope: slope(2, 3),
                model_slope: slope(4, 5),
                projection: s[1] / s[3].max(tiny),
                norm_ratio: (s[2] / s[3].max(tiny)).sqrt(),
                cosine: s[1] / (s[2] * s[3]).sqrt().max(tiny),
            }
        })
        .collect()
}

/// The table of [`by_group`] for one V, as Markdown rows (header included).
pub fn table(rows: &[GroupSlopes]) -> String {
    let mut s = String::from("| feature group | features | x_t+2 on x_t (the games) | M(x_t) on x_t | M's ∂M_i/∂x_i (mean) | EBNN's target on V's slope (least squares) | ‖target‖ / ‖V's slope‖ | cosine |\n|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for g in rows {
        s.push_str(&format!("| {} | {} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} |\n", g.name, g.features, g.data_slope, g.model_slope, g.jacobian_diagonal, g.projection, g.norm_ratio, g.cosine));
    }
    s
}

/// `deepchess neurochess-slopes`, an analysis of seed 004's runs (`SYSTEM.commands`).
pub const COMMAND: Command = Command {
    name: "neurochess-slopes",
    synopsis: "RUN [--pairs N]",
    about: "seed 004: EBNN's slope targets per feature group against V's own slope, and M's Jacobian",
    run,
};

const FLAGS: &[Flag] = &[
    Flag { name: "pairs", value: Some("N"), help: "held-out expert pairs to read (default 5000)" },
    Flag { name: "v", value: Some("FILE"), help: "a V net to read instead of the run's bp/v.dcw and ebnn/v.dcw (repeatable)" },
];

const ABOUT: &str = "\
Reads a NeuroChess run folder (what 'deepchess train --system neurochess' wrote): its chess
model M (model/m.dcw) and its Vs (bp/v.dcw, ebnn/v.dcw), on pairs (s_t, s_t+2) of the run's
own held-out expert games (the games M's error is measured on, from the seed and the expert
files run.txt records). Per feature group: the mean diagonal of M's Jacobian (how M carries a
feature two plies on: 1 where it persists), and, for each V, EBNN's slope target
gamma*dV(s_t+2)/ds_t+2 * dM(s_t)/ds_t against V's own slope dV(s_t)/ds_t: the least-squares
factor of the target on V's slope (below 1: EBNN asks V to be flatter there), their norm ratio
and their cosine.";

fn run(argv: &[String]) -> Result<(), CliError> {
    let help = args::usage("neurochess-slopes", "RUN [--pairs N] [--v FILE ...]", ABOUT, FLAGS);
    let p = args::parse("neurochess-slopes", argv, FLAGS, &help)?;
    let [dir] = &p.positional[..] else {
        return Err(CliError::Usage(format!("deepchess neurochess-slopes: give one run folder\n\n{help}")));
    };
    let n: usize = p.get_or("neurochess-slopes", "pairs", 5000)?;
    let dir = Path::new(dir);
    let fail = CliError::Failed;
    let run_txt = crate::io::files::read_text(&dir.join("run.txt"), 1 << 20, "run's settings").map_err(|e| fail(format!("{}: {e} (not a NeuroChess run folder?)", dir.join("run.txt").display())))?;
    let setting = |key: &str| run_txt.lines().find_map(|l| l.strip_prefix(key).and_then(|r| r.strip_prefix('='))).map(str::to_string);
    let seed: u64 = setting("seed").and_then(|s| s.parse().ok()).ok_or_else(|| fail(format!("{}: no seed=N line", dir.join("run.txt").display())))?;
    let expert = setting("expert").ok_or_else(|| fail(format!("{}: no expert= line", dir.join("run.txt").display())))?;
    // Each expert file as the run recorded it, `path:checksum`.
    let files: Vec<PathBuf> = expert.split(',').map(|f| PathBuf::from(f.rsplit_once(':').map_or(f, |(path, _)| path))).collect();
    let (m, _) = Model::load(&dir.join("model/m.dcw")).map_err(|e| fail(e.to_string()))?;
    let mut vs: Vec<(String, Value)> = Vec::new();
    let chosen: Vec<PathBuf> = match p.get_all("v") {
        v if !v.is_empty() => v.iter().map(PathBuf::from).collect(),
        _ => ["bp/v.dcw", "ebnn/v.dcw"].iter().map(|f| dir.join(f)).filter(|f| f.exists()).collect(),
    };
    for f in chosen {
        let (v, _) = Value::load(&f).map_err(|e| fail(e.to_string()))?;
        if v.features != m.features {
            return Err(fail(format!("{} reads the {} features, M the {}", f.display(), v.features.name(), m.features.name())));
        }
        vs.push((f.display().to_string(), v));
    }
    let refs: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let games = read_games(&refs).map_err(fail)?;
    let expert = split(games, HELD_OUT_PER_MILLE, seed);
    let valid: Vec<&Line> = expert.valid.iter().collect();
    let held = pairs(m.features, &valid, n, seed ^ 2);
    let gamma = GAMMA;
    println!("{}: M {} on {} held-out pairs of {} expert games, gamma {gamma}", dir.display(), m.describe(), held.len(), held.games);
    for (name, v) in &vs {
        println!("\nV {} ({name}):\n", v.describe());
        print!("{}", table(&by_group(&m, v, &held, gamma)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::neurochess::model::FeatureSet;
    use crate::tensor::Rng;

    /// The diagonal against finite differences of M's own forward pass.
    #[test]
    fn the_jacobian_diagonal_is_the_forward_pass_s_derivative() {
        let mut rng = Rng::new(7);
        for (fs, residual) in [(FeatureSet::Ours, false), (FeatureSet::Gnu, false), (FeatureSet::Gnu, true)] {
            let m = Model::with_features(fs, &mut rng).residual(residual);
            let n = m.width();
            let x: Vec<f32> = (0..n).map(|_| rng.next_f32() - 0.5).collect();
            let mut d = vec![0.0f32; n];
            jacobian_diagonal(&m, &x, &mut d);
            let (mut h, mut y) = (Vec::new(), vec![0.0f32; n]);
            let eps = 1e-2f32;
            for i in (0..n).step_by(7) {
                let (mut up, mut down) = (x.clone(), x.clone());
                up[i] += eps;
                down[i] -= eps;
                m.forward(&up, &mut h, &mut y);
                let a = y[i];
                m.forward(&down, &mut h, &mut y);
                let fd = (a - y[i]) / (2.0 * eps);
                assert!((fd - d[i]).abs() < 2e-3 + 0.02 * fd.abs(), "{} feature {i}: {fd} vs {}", fs.name(), d[i]);
            }
        }
    }

    /// When M is the identity on the features and the pair does not move, EBNN's target is γ
    /// times V's own slope: projection γ, norm ratio γ, cosine 1, diagonal 1 (the identity is
    /// built from M's layers: tanh kept in its linear range by small weights, scaled back).
    #[test]
    fn an_identity_model_asks_for_gamma_times_v_s_own_slope() {
        let mut rng = Rng::new(3);
        let fs = FeatureSet::Gnu;
        let mut m = Model::with_features(fs, &mut rng);
        let (n, hidden, scale) = (m.width(), m.params.value(m.w1).cols(), 1e-3f32);
        let (w1, w2) = (m.w1, m.w2);
        for i in 0..n {
            for j in 0..hidden {
                m.params.value_mut(w1).set(i, j, if i == j { scale } else { 0.0 });
                m.params.value_mut(w2).set(j, i, if i == j { 1.0 / scale } else { 0.0 });
            }
        }
        let v = Value::with_features(fs, 8, &mut rng);
        let x: Vec<f32> = (0..20 * n).map(|_| rng.next_f32() - 0.5).collect();
        let pairs = Pairs { width: n, y: x.clone(), x, games: 1 };
        for g in by_group(&m, &v, &pairs, 0.9) {
            assert!((g.jacobian_diagonal - 1.0).abs() < 1e-2, "{g:?}");
            // The pairs do not move and M copies them: both slopes are 1.
            assert!((g.data_slope - 1.0).abs() < 1e-6 && (g.model_slope - 1.0).abs() < 1e-2, "{g:?}");
            assert!((g.projection - 0.9).abs() < 1e-2 && (g.norm_ratio - 0.9).abs() < 1e-2 && (g.cosine - 1.0).abs() < 1e-3, "{g:?}");
        }
    }
}
