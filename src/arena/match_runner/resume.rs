//! `match --resume`: a match stopped part way (a kill, a machine restarted, a session's end)
//! continues from the games its PGN file already holds, so a long clock's hundred games may
//! be played over several sittings. A game is taken up only when it is one of this match's
//! games, by everything the file says of it: its event, its number (the `Round` tag), its
//! players in the seats that number gives them, their limits, and the opening the number
//! gives it. Anything else in the file refuses the resume, untouched: adding our games to
//! another match's would put two matches under one table.

use super::game::Termination;
use super::{GameRecord, MatchConfig};
use crate::chess::pgn::PgnReader;
use crate::chess::{Color, Outcome};
use std::collections::BTreeMap;

/// The games of `cfg`'s match that its PGN file already holds, by game number, each as the
/// runner counted it when it was played. `order[k]` is the opening of the k-th pair. A file
/// that is missing holds none.
pub fn played(cfg: &MatchConfig, order: &[usize]) -> Result<BTreeMap<u64, GameRecord>, String> {
    let Some(path) = &cfg.pgn_out else { return Ok(BTreeMap::new()) };
    if !path.exists() {
        return Ok(BTreeMap::new());
    }
    let bytes = crate::io::files::read_regular(path, 1 << 30, "PGN file").map_err(|e| format!("{}: {e}", path.display()))?;
    let mut reader = PgnReader::new(&bytes[..]);
    let mut done = BTreeMap::new();
    while let Some(game) = reader.next_game() {
        let at = |what: String| format!("--resume: {}: {what}", path.display());
        let g = game.map_err(|skip| at(format!("{skip} (a game cut short by a kill: remove it and resume)")))?;
        let tag = |name: &str| g.tag(name).unwrap_or("");
        let n: u64 = tag("Round").parse().map_err(|_| at(format!("game {} has no game number (Round tag '{}')", g.number, tag("Round"))))?;
        let it = |what: String| at(format!("game {n}: {what}; not this match's game: give another --pgn"));
        if tag("Event") != cfg.event {
            return Err(it(format!("its event is '{}', this match's '{}'", tag("Event"), cfg.event)));
        }
        if n == 0 || n > cfg.games {
            return Err(it(format!("this match has games 1 to {}", cfg.games)));
        }
        let white = ((n - 1) % 2) as usize;
        let (w, b) = (&cfg.players[white], &cfg.players[1 - white]);
        if tag("White") != w.name || tag("Black") != b.name {
            return Err(it(format!("{} against {}, where this match seats {} against {}", tag("White"), tag("Black"), w.name, b.name)));
        }
        if tag("WhiteLimit") != w.limit.to_string() || tag("BlackLimit") != b.limit.to_string() {
            return Err(it(format!("played at {} against {}, this match at {} against {}", tag("WhiteLimit"), tag("BlackLimit"), w.limit, b.limit)));
        }
        let opening = &cfg.openings[order[((n - 1) / 2) as usize]];
        if g.start != opening.start || !g.moves.starts_with(&opening.moves) {
            return Err(it("it began from another opening than this match's".to_string()));
        }
        let outcome = g.result.ok_or_else(|| it("it has no result".to_string()))?;
        let record = GameRecord {
            number: n,
            white,
            outcome,
            termination: termination(tag("Termination"), outcome, &g).map_err(it)?,
            detail: tag("TerminationDetails").to_string(),
            plies: g.moves.len(),
        };
        if done.insert(n, record).is_some() {
            return Err(at(format!("game {n} is in the file twice")));
        }
    }
    Ok(done)
}

/// The runner's termination from the `Termination` tag it wrote: a forfeit's side is the
/// loser's, a game ended by the rules ends so when replayed.
fn termination(tag: &str, outcome: Outcome, g: &crate::chess::pgn::PgnGame) -> Result<Termination, String> {
    let loser = match outcome {
        Outcome::Win(c) => Some(c.flip()),
        Outcome::Draw => None,
    };
    let forfeit = |f: fn(Color) -> Termination| loser.map(f).ok_or_else(|| format!("'{tag}' with a drawn result"));
    match tag {
        "normal" => match g.to_game().outcome() {
            Some((o, ending)) if o == outcome => Ok(Termination::Rules(ending)),
            _ => Err(format!("'{tag}' but the moves do not end the game with its result")),
        },
        "adjudication" => Ok(Termination::Adjudicated),
        "time forfeit" => forfeit(Termination::TimeForfeit),
        "illegal move" => forfeit(Termination::IllegalMove),
        "engine crash" => forfeit(Termination::Crash),
        _ => Err(format!("unknown termination '{tag}'")),
    }
}
