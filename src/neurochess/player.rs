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
    values: &["0", "auto", "15", "30", "45", "60"],
    about: "NeuroChess: centipawns added to V for the side to move (0: the seed's V; auto: what cancels V's own move's worth on the bench's positions)",
};

/// `Tempo auto`: half of V's move's worth on the bench's positions, negated, so that with it
/// the move is worth nothing to the search there (V's bias, measured on the net itself).
pub fn auto_tempo(v: &Value) -> f32 {
    let mut e = super::infer::VEval::new(v.clone());
    let boards: Vec<crate::chess::Position> = crate::search::bench::POSITIONS.iter().filter_map(|f| crate::chess::Position::from_fen(f).ok()).collect();
    -0.5 * super::material::move_worth(&mut e, boards.iter())
}

/// The `neurochess` and `neurochess-bp` players, from the net in `net` (the registry passes
/// the given file or the shipped one).
pub fn build(s: &PlayerSettings, net: Option<&Path>) -> Result<Built, String> {
    let path = net.expect("the NeuroChess players have a default net");
    let (v, meta) = Value::load(path).map_err(|e| e.to_string())?;
    let variant = meta.iter().find(|(k, _)| k == "variant").map_or("", |(_, v)| v.as_str());
    let desc = v.describe();
    let tempo = match s.option(TEMPO.name) {
        Some(t) if t.eq_ignore_ascii_case("auto") => auto_tempo(&v),
        t => t.and_then(|t| t.parse().ok()).unwrap_or(0.0),
    };
    let player = tempo_searcher(v, Kernel::for_player(s.kernel), s.hash_mb, tempo);
    let kernel = player.comp.eval.kernel().name();
    let tempo_note = if tempo == 0.0 { String::new() } else { format!(", tempo {tempo:+.0} cp") };
    let what = format!("{} ({desc}{}{variant}, {kernel} kernel{tempo_note})", path.display(), if variant.is_empty() { "" } else { ", " });
    Ok(Built { player: Box::new(player), loaded: Some(what) })
}
