//! What seed 004 registers (src/players.rs): `neurochess`, the EBNN net, and
//! `neurochess-bp`, plain back-propagation, each the searcher over V ([`super::infer`]).

use super::infer::tempo_searcher;
use crate::search::PlayerOption;
use super::model::Value;
use crate::search::{Built, PlayerSettings};
use crate::tensor::Kernel;
use std::path::Path;
use crate::tensor::NetFile;

/// Centipawns the search adds to V for the side to move (beyond the seed; 0, the default, is
/// the seed's V). V learned by TD(0) counts the move against its owner (its "move's worth",
/// a column of a run's material table, is negative), which starves alpha-beta of cut-offs.
pub const TEMPO: PlayerOption = PlayerOption {
    name: "Tempo",
    values: &["0", "auto", "auto+15", "auto+30", "15", "30", "45", "60"],
    about: "NeuroChess: centipawns added to V for the side to move (0: the seed's V; auto: what cancels V's own move's worth on the bench's positions; auto+N: that and N more, a tempo as chess has one)",
};

/// `Tempo auto`: half of V's move's worth on the bench's positions, negated, so that with it
/// the move is worth nothing to the search there (V's bias, measured on the net itself).
pub fn auto_tempo(v: &Value) -> f32 {
    let mut e = super::infer::VEval::new(v.clone());
    let boards: Vec<crate::chess::Position> = crate::search::bench::POSITIONS.iter().filter_map(|f| crate::chess::Position::from_fen(f).ok()).collect();
    -0.5 * super::material::move_worth(&mut e, boards.iter())
}

/// The centipawns a `Tempo` value stands for (`auto` measured by `auto`, `auto+N` that plus
/// N; the registry has already refused values outside the list).
fn tempo_of(value: Option<&str>, auto: impl FnOnce() -> f32) -> f32 {
    let Some(t) = value.map(|t| t.to_ascii_lowercase()) else { return 0.0 };
    match t.strip_prefix("auto") {
        Some(rest) => auto() + rest.strip_prefix('+').and_then(|n| n.parse::<f32>().ok()).unwrap_or(0.0),
        None => t.parse().unwrap_or(0.0),
    }
}

/// The `neurochess` and `neurochess-bp` players, from the net in `net` (the registry passes
/// the given file or the shipped one).
pub fn build(s: &PlayerSettings, net: Option<&Path>) -> Result<Built, String> {
    let path = net.expect("the NeuroChess players have a default net");
    let (v, meta) = Value::load(path).map_err(|e| e.to_string())?;
    let variant = meta.iter().find(|(k, _)| k == "variant").map_or("", |(_, v)| v.as_str());
    let desc = v.describe();
    let tempo = tempo_of(s.option(TEMPO.name), || auto_tempo(&v));
    let player = tempo_searcher(v, Kernel::for_player(s.kernel), s.hash_mb, tempo);
    let kernel = player.comp.eval.kernel().name();
    let tempo_note = if tempo == 0.0 { String::new() } else { format!(", tempo {tempo:+.0} cp") };
    let what = format!("{} ({desc}{}{variant}, {kernel} kernel{tempo_note})", path.display(), if variant.is_empty() { "" } else { ", " });
    Ok(Built { player: Box::new(player), loaded: Some(what) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tempo_values_read_as_centipawns() {
        assert_eq!(tempo_of(None, || 40.0), 0.0);
        assert_eq!(tempo_of(Some("0"), || 40.0), 0.0);
        assert_eq!(tempo_of(Some("30"), || 40.0), 30.0);
        assert_eq!(tempo_of(Some("auto"), || 40.0), 40.0);
        assert_eq!(tempo_of(Some("AUTO+15"), || 40.0), 55.0);
        assert_eq!(tempo_of(Some("auto+30"), || -10.0), 20.0);
    }
}
