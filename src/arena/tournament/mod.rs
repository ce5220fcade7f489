//! The tournament: every player of the registry (and Stockfish's `UCI_Elo` levels as anchors,
//! GNU Chess, any UCI engine) in one event per condition (equal clock, equal fixed depth),
//! scheduled by [`schedule`] (a round robin, then ladder rounds between neighbours), every
//! game in an append-only [`journal`] so that a killed tournament continues where it
//! stopped, one joint rating fit per condition ([`fit`]) and its tables and ladders
//! ([`report`]). Games are played by the match runner's code, so the rules, clock,
//! adjudication and handling of misbehaving engines are those of `deepchess match`.

pub mod fit;
pub mod journal;
pub mod report;
pub mod schedule;

use crate::arena::match_runner::{self, pgn_text, GameRecord, GameSettings, PgnHeader, PlayerSpec, Seats};
use crate::arena::openings::Opening;
use crate::arena::uci_client::Engine;
use journal::{GameLine, Journal, Pair};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One player of the event.
#[derive(Clone, Debug)]
pub struct Entrant {
    pub name: String,
    /// The seed system it comes from (`deepchess`, `dbn`, …), or `stockfish`, `gnuchess`,
    /// `external`.
    pub system: String,
    /// A fixed rating (Stockfish's `UCI_Elo`), or `None`: fitted.
    pub anchor: Option<f64>,
}

/// One condition: its name (`time`, `depth`), a label for tables, and how each entrant plays
/// under it (same order as the entrants).
#[derive(Clone, Debug)]
pub struct Condition {
    pub name: String,
    pub label: String,
    pub specs: Vec<PlayerSpec>,
}

/// Everything a tournament needs.
#[derive(Clone, Debug)]
pub struct TournamentConfig {
    pub entrants: Vec<Entrant>,
    pub conditions: Vec<Condition>,
    /// Ladder rounds after the round robin.
    pub rounds: usize,
    /// Neighbours each player meets in a ladder round.
    pub neighbours: usize,
    pub concurrency: usize,
    pub openings: Vec<Opening>,
    /// Where the suite came from (recorded with the settings).
    pub openings_name: String,
    pub settings: GameSettings,
    pub exe: PathBuf,
    pub start_timeout: Duration,
    /// The run folder: `journal.tsv`, per condition `games.pgn`, `table.md`, `ladder.svg`.
    pub out: PathBuf,
    pub bootstrap: usize,
    pub event: String,
}

impl TournamentConfig {
    /// The settings that fix what a game means; a journal started with others is not
    /// continued. Keys `cond.NAME.…` belong to one condition: a journal may hold conditions
    /// this run does not play, and a condition it never played is added. The number of
    /// rounds is not among them: a tournament can be lengthened.
    pub fn identity(&self) -> Vec<(String, String)> {
        let mut v = vec![
            ("openings".to_string(), format!("{} ({} openings)", self.openings_name, self.openings.len())),
            ("neighbours".to_string(), self.neighbours.to_string()),
            ("adjudication".to_string(), format!("{:?}", self.settings.adjudication)),
        ];
        for (i, e) in self.entrants.iter().enumerate() {
            let anchor = e.anchor.map_or(String::new(), |a| format!(" anchor={a}"));
            v.push((format!("player.{i}"), format!("{} system={}{anchor}", e.name, e.system)));
        }
        for c in &self.conditions {
            v.push((format!("cond.{}", c.name), c.label.clone()));
            for (i, s) in c.specs.iter().enumerate() {
                v.push((format!("cond.{}.player.{i}", c.name), spec_text(s)));
            }
        }
        v
    }

    /// Whether two entrants may meet (anchors never meet each other).
    pub fn allowed(&self, i: usize, j: usize) -> bool {
        i != j && !(self.entrants[i].anchor.is_some() && self.entrants[j].anchor.is_some())
    }

    pub fn anchors(&self) -> Vec<Option<f64>> {
        self.entrants.iter().map(|e| e.anchor).collect()
    }
}

fn spec_text(s: &PlayerSpec) -> String {
    let prog = match &s.program {
        match_runner::Program::Builtin(b) => format!("builtin={b}"),
        match_runner::Program::External(c) => format!("cmd={c}"),
    };
    let net = s.net.as_ref().map_or(String::new(), |n| format!(" net={n}"));
    let opts: String = s.options.iter().map(|(k, v)| format!(" option.{k}={v}")).collect();
    format!("{prog}{net}{opts} {}", s.limit)
}

/// The fit's results of every game of one condition so far.
pub fn results_of(cfg: &TournamentConfig, j: &Journal, cond: &str) -> fit::Results {
    let mut res = fit::Results::new(cfg.entrants.len());
    for ((c, round), pairs) in &j.rounds {
        if c != cond {
            continue;
        }
        for (k, p) in pairs.iter().enumerate() {
            let g0 = j.games.get(&(c.clone(), *round, k, 0)).map(|g| g.outcome);
            let g1 = j.games.get(&(c.clone(), *round, k, 1)).map(|g| g.outcome);
            match (g0, g1) {
                (Some(a), b) => res.add_pair(p.a, p.b, a, b),
                (None, Some(b)) => res.add_pair(p.b, p.a, b, None),
                (None, None) => {}
            }
        }
    }
    res
}

/// The pairs of `round` of `cond`, decided from the games before it.
fn plan_round(cfg: &TournamentConfig, j: &Journal, cond: &str, round: usize) -> Vec<Pair> {
    let n = cfg.entrants.len();
    let pairs = if round == 0 {
        schedule::round_robin(n, |a, b| cfg.allowed(a, b))
    } else {
        let r = fit::ratings(&results_of(cfg, j, cond), &cfg.anchors());
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| r[b].total_cmp(&r[a]).then(a.cmp(&b)));
        schedule::ladder(&order, cfg.neighbours, round, |a, b| cfg.allowed(a, b))
    };
    // Openings run on through the suite over the condition's pairs, the same sequence in
    // every condition.
    let before: usize = j.rounds.iter().filter(|((c, r), _)| c == cond && *r < round).map(|(_, p)| p.len()).sum();
    pairs.into_iter().enumerate().map(|(k, (a, b))| Pair { a, b, opening: (before + k) % cfg.openings.len() }).collect()
}

/// The settings of `identity` a journal holding `old` lacks (those of a condition it never
/// played, or of an event that has played nothing yet), or what differs. `played`: the
/// conditions with a round in the journal.
pub fn settings_to_add(old: &[(String, String)], identity: &[(String, String)], played: &[String]) -> Result<Vec<(String, String)>, String> {
    let cond_of = |k: &str| k.strip_prefix("cond.").map(|r| r.split('.').next().unwrap_or(r).to_string());
    let get = |set: &[(String, String)], k: &str| set.iter().find(|(k2, _)| k2 == k).map(|(_, v)| v.clone());
    // Settings of the whole event, and of each condition already played, must agree.
    let mut new = Vec::new();
    for (k, v) in identity {
        let open = match cond_of(k) {
            Some(c) => !played.contains(&c),
            None => played.is_empty(),
        };
        match get(old, k) {
            Some(o) if &o == v => {}
            Some(o) => return Err(format!("{k} differs (then: {o}; now: {v})")),
            None if open => new.push((k.clone(), v.clone())),
            None => return Err(format!("{k} is new (now: {v})")),
        }
    }
    for (k, o) in old {
        let played_now = cond_of(k).is_none_or(|c| identity.iter().any(|(k2, _)| cond_of(k2).as_deref() == Some(c.as_str())));
        if played_now && get(identity, k).is_none() {
            return Err(format!("{k} is gone (then: {o})"));
        }
    }
    Ok(new)
}

/// Progress of a running tournament, for the caller's progress line.
#[derive(Clone, Debug)]
pub struct Progress {
    pub cond: String,
    pub round: usize,
    pub rounds: usize,
    /// Games of this condition finished (this session and before) and planned so far.
    pub finished: usize,
    pub planned: usize,
    /// Games played in this session, and its elapsed time.
    pub played_now: usize,
    pub elapsed: Duration,
    pub last: Option<String>,
}

/// Runs (or continues) the tournament. `on_event` sees progress after every game.
pub fn run(cfg: &TournamentConfig, mut on_event: impl FnMut(&Progress) + Send) -> Result<Journal, String> {
    std::fs::create_dir_all(&cfg.out).map_err(|e| format!("{}: {e}", cfg.out.display()))?;
    for c in &cfg.conditions {
        for s in &c.specs {
            s.check_builtin()?;
        }
    }
    let path = cfg.out.join("journal.tsv");
    let mut j = Journal::open(&path)?;
    if j.games.is_empty() && !j.settings.is_empty() && settings_to_add(&j.settings, &cfg.identity(), &[]).is_err() {
        // Nothing was played under the old settings (a player that would not start, say):
        // start afresh rather than refuse.
        std::fs::remove_file(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        j = Journal::open(&path)?;
    }
    let identity = cfg.identity();
    let mut played: Vec<String> = j.rounds.keys().map(|(c, _)| c.clone()).collect();
    played.dedup();
    let new = settings_to_add(&j.settings, &identity, &played).map_err(|what| {
        format!(
            "{} holds a tournament played under other settings: {what}; continue it with its own settings, or give another --out",
            cfg.out.display()
        )
    })?;
    if !new.is_empty() {
        j.write_settings(&new)?;
    }
    let started = Instant::now();
    let mut played_now = 0usize;
    let date = match_runner::today();
    let ever: Vec<AtomicBool> = cfg.entrants.iter().map(|_| AtomicBool::new(false)).collect();
    for cond in &cfg.conditions {
        for round in 0..=cfg.rounds {
            let key = (cond.name.clone(), round);
            if !j.rounds.contains_key(&key) {
                let pairs = plan_round(cfg, &j, &cond.name, round);
                j.write_round(&cond.name, round, &pairs)?;
            }
            let pairs = j.rounds[&key].clone();
            // The games still to play: (pair, game).
            let todo: Vec<(usize, usize)> = (0..pairs.len())
                .flat_map(|k| [(k, 0), (k, 1)])
                .filter(|&(k, g)| !j.games.contains_key(&(cond.name.clone(), round, k, g)))
                .collect();
            if !todo.is_empty() {
                let played = play_round(cfg, cond, round, &pairs, &todo, &mut j, &ever, &date, &mut |j, last| {
                    played_now += 1;
                    let planned: usize = j.rounds.iter().filter(|((c, _), _)| *c == cond.name).map(|(_, p)| 2 * p.len()).sum();
                    let finished = j.games.keys().filter(|(c, ..)| *c == cond.name).count();
                    on_event(&Progress {
                        cond: cond.name.clone(),
                        round,
                        rounds: cfg.rounds,
                        finished,
                        planned,
                        played_now,
                        elapsed: started.elapsed(),
                        last: Some(last),
                    });
                });
                played?;
            }
            report::write_condition(cfg, &j, cond)?;
        }
    }
    report::write_summary(cfg, &j)?;
    Ok(j)
}

/// Plays the games `todo` of a round, `concurrency` at once; each game pair is one task, so
/// the two games of a pair share an engine start.
#[allow(clippy::too_many_arguments)]
fn play_round(
    cfg: &TournamentConfig,
    cond: &Condition,
    round: usize,
    pairs: &[Pair],
    todo: &[(usize, usize)],
    j: &mut Journal,
    ever: &[AtomicBool],
    date: &str,
    on_game: &mut (dyn FnMut(&Journal, String) + Send),
) -> Result<(), String> {
    let mut tasks: Vec<(usize, Vec<usize>)> = Vec::new();
    for &(k, g) in todo {
        match tasks.last_mut() {
            Some((pk, games)) if *pk == k => games.push(g),
            _ => tasks.push((k, vec![g])),
        }
    }
    let next = Mutex::new(0usize);
    let fatal: Mutex<Option<String>> = Mutex::new(None);
    let shared = Mutex::new((j, on_game));
    std::thread::scope(|scope| {
        for _ in 0..cfg.concurrency.max(1) {
            scope.spawn(|| loop {
                if fatal.lock().unwrap_or_else(|e| e.into_inner()).is_some() {
                    return;
                }
                let t = {
                    let mut n = next.lock().unwrap_or_else(|e| e.into_inner());
                    *n += 1;
                    *n - 1
                };
                let Some((k, games)) = tasks.get(t) else { return };
                let p = pairs[*k];
                let seats = Seats { players: [&cond.specs[p.a], &cond.specs[p.b]], ever_started: [&ever[p.a], &ever[p.b]] };
                let mut engines: [Option<Engine>; 2] = [None, None];
                let mut failures = [0u32; 2];
                for &g in games {
                    let white = g;
                    let opening = &cfg.openings[p.opening];
                    let result = match match_runner::play_one(&seats, &cfg.exe, cfg.start_timeout, &cfg.settings, &mut engines, &mut failures, white, opening) {
                        Ok(r) => r,
                        Err(msg) => {
                            fatal.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(msg);
                            return;
                        }
                    };
                    let record = GameRecord {
                        number: (2 * k + g + 1) as u64,
                        white,
                        outcome: result.outcome,
                        termination: result.termination,
                        detail: result.detail.clone(),
                        plies: result.pgn.moves.len(),
                    };
                    let (w, b) = if white == 0 { (seats.players[0], seats.players[1]) } else { (seats.players[1], seats.players[0]) };
                    let round_tag = format!("{}.{}.{}", round + 1, k + 1, g + 1);
                    let event = format!("{} ({})", cfg.event, cond.label);
                    let header = PgnHeader { event: &event, site: "deepchess tournament", round: &round_tag, date };
                    let pgn = match pgn_text(header, [w, b], &record, result.pgn) {
                        Ok(t) => t,
                        Err(e) => {
                            fatal.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(format!("game {round_tag}: cannot write PGN: {e}"));
                            return;
                        }
                    };
                    let line = GameLine {
                        cond: cond.name.clone(),
                        round,
                        pair: *k,
                        game: g,
                        outcome: record.outcome,
                        termination: record.termination.tag().to_string(),
                        plies: record.plies,
                        searched: result.searched,
                        pgn,
                    };
                    let mut guard = shared.lock().unwrap_or_else(|e| e.into_inner());
                    let (j, on_game) = &mut *guard;
                    if let Err(e) = j.write_game(line) {
                        fatal.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(e);
                        return;
                    }
                    let last = format!("{} {} {} ({})", w.name, journal::result_text(record.outcome), b.name, record.detail);
                    on_game(j, last);
                }
            });
        }
    });
    match fatal.into_inner().unwrap_or_else(|e| e.into_inner()) {
        Some(msg) => Err(msg),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::settings_to_add;

    fn kv(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn a_journal_continues_only_under_its_own_settings() {
        let depth = kv(&[("openings", "x"), ("player.0", "a"), ("cond.depth", "d3"), ("cond.depth.player.0", "a depth=3")]);
        let both = kv(&[("openings", "x"), ("player.0", "a"), ("cond.time", "t"), ("cond.time.player.0", "a tc=2"), ("cond.depth", "d3"), ("cond.depth.player.0", "a depth=3")]);
        let played = vec!["depth".to_string()];
        // A new journal takes everything; a condition never played is added.
        assert_eq!(settings_to_add(&[], &depth, &[]).unwrap(), depth);
        assert_eq!(settings_to_add(&depth, &both, &played).unwrap(), kv(&[("cond.time", "t"), ("cond.time.player.0", "a tc=2")]));
        // A journal holding more conditions than this run plays continues.
        assert!(settings_to_add(&both, &depth, &played).unwrap().is_empty());
        // A played condition under another limit, or other players, is refused.
        let other = kv(&[("openings", "x"), ("player.0", "a"), ("cond.depth", "d4"), ("cond.depth.player.0", "a depth=4")]);
        assert!(settings_to_add(&depth, &other, &played).unwrap_err().contains("cond.depth differs"));
        let more = kv(&[("openings", "x"), ("player.0", "a"), ("player.1", "b"), ("cond.depth", "d3"), ("cond.depth.player.0", "a depth=3")]);
        assert!(settings_to_add(&depth, &more, &played).unwrap_err().contains("player.1 is new"));
        assert!(settings_to_add(&more, &depth, &played).unwrap_err().contains("player.1 is gone"));
        // Before any round, settings cut short by a kill are completed.
        assert_eq!(settings_to_add(&depth[..2], &depth, &[]).unwrap(), depth[2..].to_vec());
    }
}
