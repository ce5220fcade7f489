//! `deepchess tournament` end to end with the scripted fake engines of tests/fakes/: a killed
//! tournament continues where it stopped and ends with every scheduled game exactly once
//! (journal, PGN and table the same as an uninterrupted run's); a folder holding another
//! tournament is refused; real built-in players play both conditions.

mod common;

use deepchess::chess::pgn::PgnReader;
use std::collections::HashSet;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

fn fake(name: &str) -> String {
    format!("{}/tests/fakes/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// Three fake players (two play scholar's mate, one shuffles its knight a little slowly),
/// no built-in players, no Stockfish: the first player is the anchor at 0.
fn fake_args(out: &str) -> Vec<String> {
    let mut a: Vec<String> = ["tournament", "--out", out, "--players", "none", "--stockfish", "none", "--gnuchess", "none"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for spec in [
        format!("name=alpha cmd={}", fake("scripted.sh")),
        format!("name=beta cmd={}", fake("scripted.sh")),
        format!("name=gamma cmd={} 0.03", fake("slow.sh")),
        format!("name=delta cmd={} 0.03", fake("slow.sh")),
    ] {
        a.push("--engine".into());
        a.extend(spec.split(' ').map(String::from));
    }
    a.extend(["--conditions", "depth", "--rounds", "2", "--neighbours", "1", "--openings", "startpos", "--bootstrap", "50"].iter().map(|s| s.to_string()));
    a
}

fn run(args: &[String]) -> Output {
    common::command().args(args).current_dir(env!("CARGO_MANIFEST_DIR")).output().unwrap()
}

fn ok(o: &Output) -> String {
    let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "status {:?}\nstdout:\n{out}\nstderr:\n{err}", o.status);
    out.into_owned()
}

/// The journal's game keys (each must appear once) and the number of games its rounds plan.
fn journal(dir: &common::TempDir) -> (Vec<String>, usize) {
    let text = std::fs::read_to_string(dir.join("journal.tsv")).unwrap();
    let mut games = Vec::new();
    let mut planned = 0;
    for line in text.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        match f[0] {
            "G" => games.push(f[1..5].join(".")),
            "R" => planned += 2 * f[3].split(';').filter(|p| !p.is_empty()).count(),
            _ => {}
        }
    }
    (games, planned)
}

fn pgn_games(path: &std::path::Path) -> usize {
    let f = std::fs::File::open(path).unwrap();
    let mut r = PgnReader::new(std::io::BufReader::new(f));
    let n = r.by_ref().count();
    assert_eq!(r.summary().skipped(), 0);
    n
}

#[test]
fn a_killed_tournament_continues_without_losing_or_repeating_a_game() {
    // The same tournament uninterrupted, for reference.
    let whole = common::TempDir::new("tournament-whole");
    let out_whole = ok(&run(&fake_args(whole.path().to_str().unwrap())));
    let (games, planned) = journal(&whole);
    assert_eq!(games.len(), planned);
    assert!(planned >= 12 + 2 * 3, "round robin of 4 (6 pairs) and two ladder rounds: {planned}");

    let dir = common::TempDir::new("tournament-killed");
    let args = fake_args(dir.path().to_str().unwrap());
    let mut child = common::command()
        .args(&args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Kill it (SIGKILL: no clean-up) once some games are in, well before the end.
    let t0 = Instant::now();
    loop {
        let done = std::fs::read_to_string(dir.join("journal.tsv")).map_or(0, |t| t.lines().filter(|l| l.starts_with("G\t")).count());
        if done >= 5 || t0.elapsed() > Duration::from_secs(120) {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let (before, _) = journal(&dir);
    assert!(before.len() >= 5 && before.len() < planned, "killed after {} of {planned} games", before.len());
    // A record cut in half by the kill is dropped and its game played again.
    let mut f = std::fs::OpenOptions::new().append(true).open(dir.join("journal.tsv")).unwrap();
    std::io::Write::write_all(&mut f, b"G\tdepth\t9\t9\t0\t1-0\tnor").unwrap();
    drop(f);

    let out = ok(&run(&args));
    let (after, planned_after) = journal(&dir);
    assert_eq!(planned_after, planned, "the same schedule");
    let unique: HashSet<&String> = after.iter().collect();
    assert_eq!(unique.len(), after.len(), "no game counted twice");
    assert_eq!(after.len(), planned, "no game lost");
    assert_eq!(after[..before.len()], before[..], "the games before the kill are kept as they were");
    assert_eq!(pgn_games(&dir.join("depth/games.pgn")), planned);
    // The fakes play the same games every time: the same table as the uninterrupted run
    // (but for nodes/s, which is timed).
    let table = |s: &str| {
        s.lines()
            .filter(|l| l.starts_with("| "))
            .map(|l| l.split('|').enumerate().filter(|&(k, _)| k != 8).map(|(_, c)| c).collect::<Vec<_>>().join("|"))
            .collect::<Vec<_>>()
    };
    assert_eq!(table(&out), table(&out_whole), "{out}\n---\n{out_whole}");
    for name in ["alpha", "beta", "gamma", "delta"] {
        assert!(out.contains(&format!("| {name} | external |")), "{out}");
    }
    assert!(out.contains("0 (anchor)"), "the first player anchors the scale: {out}");

    // Running it again plays nothing and prints the same table.
    let again = ok(&run(&args));
    assert_eq!(journal(&dir).0.len(), planned);
    assert_eq!(table(&again), table(&out));

    // Other settings in the same folder are refused, and the journal is left alone.
    let mut other = args.clone();
    let i = other.iter().position(|a| a == "--neighbours").unwrap();
    other[i + 1] = "2".into();
    let o = run(&other);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("other settings") && err.contains("neighbours"), "{err}");
    assert_eq!(journal(&dir).0.len(), planned);
}

#[test]
fn built_in_players_meet_in_both_conditions() {
    let dir = common::TempDir::new("tournament-builtin");
    // A player that cannot start stops the event before any game; fixed, the same folder
    // starts afresh (nothing was played under the old settings).
    let bad = run(&[
        "tournament", "--out", dir.path().to_str().unwrap(), "--players", "handcrafted", "--stockfish", "none", "--gnuchess", "none",
        "--engine", "name=ghost", "cmd=/nonexistent/engine",
    ]
    .map(String::from));
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("player ghost: cannot start '/nonexistent/engine'"));
    let o = run(&[
        "tournament", "--out", dir.path().to_str().unwrap(), "--players", "handcrafted,compact,qagent", "--stockfish", "none",
        "--gnuchess", "none", "--rounds", "0", "--tc", "1+0.01", "--depth", "1", "--bootstrap", "50",
    ]
    .map(String::from));
    let out = ok(&o);
    for cond in ["time", "depth"] {
        let table = std::fs::read_to_string(dir.join(format!("{cond}/table.md"))).unwrap();
        assert!(table.contains("| handcrafted | handcrafted |") && table.contains("0 (anchor)"), "{table}");
        assert!(table.contains("| compact | deepchess |") && table.contains("| qagent | selfplay |"), "{table}");
        let svg = std::fs::read_to_string(dir.join(format!("{cond}/ladder.svg"))).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("qagent") && svg.trim_end().ends_with("</svg>"));
        // Each player in its system's colour (SYSTEMS), the handcrafted one in the arena's.
        for sys in ["deepchess", "selfplay"] {
            let c = deepchess::players::find_system(sys).unwrap().colour;
            assert!(svg.contains(&format!(r#"stroke="{c}""#)) && svg.contains(&format!(r#"fill="{c}"/><text"#)), "{sys}: {svg}");
        }
        assert!(svg.contains(r##"fill="#8c564b"/><text"##), "{svg}");
        assert_eq!(pgn_games(&dir.join(format!("{cond}/games.pgn"))), 6, "the round robin of three");
    }
    // Depth 1 for the searchers in the depth condition; the policy reports no deeper.
    let depth_table = std::fs::read_to_string(dir.join("depth/table.md")).unwrap();
    let compact = depth_table.lines().find(|l| l.contains("| compact |")).unwrap();
    assert!(compact.trim_end().ends_with("| 1.0 |"), "{compact}");
    assert!(out.contains("## equal time, 1+0.01 per game") && out.contains("## equal depth, 1 plies"), "{out}");
}
