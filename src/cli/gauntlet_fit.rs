//! `deepchess gauntlet-fit`: places a player on an opponent's rating scale (Stockfish's
//! `UCI_Elo`) from its results against several fixed levels, given as W-D-L or as the PGN
//! files `deepchess match` wrote.

use crate::io::args::{parse, usage, CliError, Flag};
use crate::chess::pgn::{open_pgn, PgnReader};
use crate::chess::Color;
use crate::arena::elo::{fit_rating, Wdl};

const FLAGS: &[Flag] = &[Flag {
    name: "player",
    value: Some("NAME"),
    help: "whose results to count in PGN files (White/Black tag; default deepchess)",
}];

const ABOUT: &str = "\
Places a player on the scale of the levels it played (e.g. Stockfish's UCI_Elo) from its
results at each: the maximum-likelihood rating of the logistic model (at level L the expected
score is 1 / (1 + 10^((L - R)/400)), a draw half a win and half a loss) with a 95 %
likelihood-ratio interval.

Each LEVEL:RESULTS gives one level and either a W-D-L count of the player's games or a PGN
file of them (the games of --player, whichever colour it had). A level may be given more
than once; its results are added.

Examples:
  deepchess gauntlet-fit 1900:56-5-19 2000:60-18-82 2100:42-20-98
  deepchess gauntlet-fit --player deepchess 1900:runs/gauntlet-1900.pgn 2000:runs/gauntlet-2000.pgn";

fn help() -> String {
    usage("gauntlet-fit", "[--player NAME] LEVEL:W-D-L|LEVEL:FILE.pgn ...", ABOUT, FLAGS)
}

pub fn run(args: &[String]) -> Result<(), CliError> {
    let p = parse("gauntlet-fit", args, FLAGS, &help())?;
    let player = p.get("player").unwrap_or("deepchess");
    if p.positional.is_empty() {
        return Err(CliError::Usage(format!(
            "deepchess gauntlet-fit: give at least one LEVEL:W-D-L or LEVEL:FILE.pgn\n\n{}",
            help()
        )));
    }
    let rows = p.positional.iter().map(|spec| read_spec(spec, player)).collect::<Result<Vec<_>, _>>()?;
    println!("{:>7} {:>6} {:>12} {:>8}  source", "level", "games", "W-D-L", "score");
    for (level, w, source) in &rows {
        let score = 100.0 * w.points() / w.games().max(1) as f64;
        let wdl = format!("{}-{}-{}", w.wins, w.draws, w.losses);
        println!("{level:>7} {:>6} {wdl:>12} {score:>7.1}%  {source}", w.games());
    }
    let levels: Vec<(f64, Wdl)> = rows.iter().map(|r| (r.0, r.1)).collect();
    let fit = fit_rating(&levels)
        .ok_or_else(|| CliError::Failed("deepchess gauntlet-fit: no games to fit".to_string()))?;
    let show = |x: f64| {
        if x.is_finite() {
            format!("{x:.0}")
        } else if x > 0.0 {
            "+inf".to_string()
        } else {
            "-inf".to_string()
        }
    };
    println!(
        "{player}: about {}, 95 % interval {} to {} ({} games; logistic fit, likelihood-ratio interval)",
        show(fit.rating),
        show(fit.lo),
        show(fit.hi),
        fit.games
    );
    Ok(())
}

/// `LEVEL:W-D-L` or `LEVEL:FILE`.
fn read_spec(spec: &str, player: &str) -> Result<(f64, Wdl, String), CliError> {
    let bad = |why: &str| CliError::Usage(format!("deepchess gauntlet-fit: '{spec}': {why} (expected LEVEL:W-D-L or LEVEL:FILE.pgn)"));
    let (level, rest) = spec.split_once(':').ok_or_else(|| bad("no ':'"))?;
    let level: f64 = level.trim().parse().map_err(|_| bad("the level is not a number"))?;
    if !level.is_finite() {
        return Err(bad("the level is not a number"));
    }
    if let Some(wdl) = parse_wdl(rest) {
        return Ok((level, wdl, "W-D-L given".to_string()));
    }
    if rest.is_empty() {
        return Err(bad("nothing after ':'"));
    }
    let looks_like_counts = rest.bytes().all(|c| c.is_ascii_digit() || c == b'-');
    if looks_like_counts && !std::path::Path::new(rest).exists() {
        return Err(bad("W-D-L needs three whole numbers"));
    }
    let wdl = count_pgn(rest, player)?;
    Ok((level, wdl, rest.to_string()))
}

fn parse_wdl(s: &str) -> Option<Wdl> {
    let mut it = s.split('-');
    let mut next = || it.next().filter(|x| !x.is_empty() && x.bytes().all(|c| c.is_ascii_digit()))?.parse::<u64>().ok();
    let (wins, draws, losses) = (next()?, next()?, next()?);
    if it.next().is_some() {
        return None;
    }
    Some(Wdl { wins, draws, losses })
}

/// The W-D-L of `player` over the finished games of a PGN file.
fn count_pgn(path: &str, player: &str) -> Result<Wdl, CliError> {
    let src = open_pgn(path).map_err(|e| CliError::Failed(format!("deepchess gauntlet-fit: {path}: {e}")))?;
    let mut reader = PgnReader::new(src);
    let mut wdl = Wdl::default();
    let (mut skipped, mut unfinished) = (0u64, 0u64);
    let mut others: Vec<String> = Vec::new();
    while let Some(g) = reader.next_game() {
        let Ok(g) = g else {
            skipped += 1;
            continue;
        };
        let side = if g.tag("White") == Some(player) {
            Color::White
        } else if g.tag("Black") == Some(player) {
            Color::Black
        } else {
            for name in [g.tag("White"), g.tag("Black")].into_iter().flatten() {
                if others.len() < 8 && !others.iter().any(|o| o == name) {
                    others.push(name.to_string());
                }
            }
            continue;
        };
        match g.result {
            Some(outcome) => wdl.add(outcome, side),
            None => unfinished += 1,
        }
    }
    if skipped > 0 {
        eprintln!("deepchess gauntlet-fit: {path}: {skipped} games could not be read and are not counted");
    }
    if unfinished > 0 {
        eprintln!("deepchess gauntlet-fit: {path}: {unfinished} unfinished games ('*') not counted");
    }
    if wdl.games() == 0 {
        let seen = if others.is_empty() { "none".to_string() } else { others.join(", ") };
        return Err(CliError::Failed(format!(
            "deepchess gauntlet-fit: {path}: no finished games of player '{player}' (players seen: {seen}; see --player)"
        )));
    }
    Ok(wdl)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wdl_specs_parse_strictly() {
        assert_eq!(parse_wdl("56-5-19"), Some(Wdl { wins: 56, draws: 5, losses: 19 }));
        for bad in ["", "1-2", "1-2-3-4", "a-b-c", "1--2", "-1-2-3", "1-2-x", "1.5-2-3"] {
            assert_eq!(parse_wdl(bad), None, "{bad}");
        }
        assert!(read_spec("2000", "x").is_err());
        assert!(read_spec("abc:1-2-3", "x").is_err());
        assert!(read_spec("inf:1-2-3", "x").is_err());
        assert!(read_spec("2000:", "x").is_err());
        assert!(matches!(read_spec("2000:1-2", "x"), Err(CliError::Usage(m)) if m.contains("three whole numbers")));
        assert_eq!(read_spec("2000:1-2-3", "x").unwrap().0, 2000.0);
    }
}
