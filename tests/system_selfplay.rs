//! Seed 002 end to end: the action is always legal (random nets, proptest-generated
//! positions, both composition rules), the move scores the player uses agree with the action,
//! and a tiny run through the command line trains, reports and plays (kills and resumes:
//! tests/train_crash_systems.rs).

mod common;

use deepchess::tensor::NetFile;
use common::{deepchess, text, TempDir};
use deepchess::chess::{Move, Position};
use deepchess::selfplay::infer::{evaluate, Infer};
use deepchess::selfplay::policy::Values;
use deepchess::selfplay::model::{Agents, Arch};
use deepchess::selfplay::policy::{choose, move_scores, Compose};
use deepchess::selfplay::pipeline::Profile;
use deepchess::selfplay::measure::{score_against, Baseline};
use deepchess::selfplay::recipe::QCfg;
use deepchess::tensor::{Kernel, ParamId, Rng};
use proptest::prelude::*;

fn random_agents(seed: u64) -> Agents {
    let mut a = Agents::new(Arch { c1: 4, c2: 6, c3: 3, fc: 7 }, &mut Rng::new(seed));
    // Weights of a usable scale (the seed's 1e-7 makes every output a near tie).
    let mut rng = Rng::new(seed ^ 99);
    let ids: Vec<ParamId> = a.params.ids().collect();
    for id in ids {
        a.params.value_mut(id).data_mut().iter_mut().for_each(|v| *v = rng.uniform(-0.7, 0.7));
    }
    a
}

const STARTS: &[&str] = &[
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Along random legal games (castling, en passant and promotions included in the starts),
    /// the agents' action is a legal move of the side to move, for both rules, and the
    /// player's move scores put that action first.
    #[test]
    fn the_action_is_always_legal(start in 0..STARTS.len(), picks in prop::collection::vec(any::<u16>(), 0..80), seed in 0u64..1000) {
        let agents = random_agents(seed);
        let mut infer = Infer::new(Kernel::Scalar);
        let mut values = Values::default();
        let mut pos = Position::from_fen(STARTS[start]).unwrap();
        for pick in picks {
            let legal: Vec<Move> = pos.legal_moves().iter().copied().collect();
            if legal.is_empty() {
                break;
            }
            evaluate(&mut infer, &agents, &pos, &mut values).unwrap();
            for rule in [Compose::Signed, Compose::Product] {
                let c = choose(&pos, &values, rule);
                prop_assert!(legal.contains(&c.mv), "{} plays {:?}", pos.fen(), c.mv);
                let mut s = Vec::new();
                move_scores(&pos, &values, rule, &legal, &mut s);
                let best = s.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
                let first = legal[s.iter().position(|&x| x == best).unwrap()];
                prop_assert_eq!(first, c.mv, "{}", pos.fen());
            }
            pos.play(legal[pick as usize % legal.len()]);
        }
    }
}



/// The tiny profile through `train --system selfplay`: the figures the seed describes are in
/// the log and the table, a second run without `--resume` is refused, a bad flag exits 2, and
/// the trained agents load and play.
#[test]
fn a_tiny_run_trains_reports_and_plays() {
    let dir = TempDir::new("selfplay-tiny");
    let out = dir.join("run");
    let o = out.to_str().unwrap();
    let r = deepchess(&["train", "--system", "selfplay", "--profile", "tiny", "--out", o, "--threads", "2"]);
    assert!(r.status.success(), "{}", text(&r.stderr));
    let md = std::fs::read_to_string(out.join("results.md")).unwrap();
    assert!(md.contains("| games | captures / game |") && md.contains("\n| 12 |"), "{md}");
    let log = std::fs::read_to_string(out.join("log.csv")).unwrap();
    for figure in ["q.captures_per_game", "q.en_prise_share", "q.mate_share", "q.vs_random", "q.vs_greedy", "q.escape_selfplay", "q.escape_suite", "q.health_blind_nets"] {
        assert!(log.contains(figure), "{figure} missing from the log");
    }
    assert!(md.contains("escapes on the suite") && md.contains("Every net sees the board."), "{md}");
    // The agents see the board (issue 63): every layer of every net has live units and every
    // output moves with the position, on the probe set the run's table used.
    {
        use deepchess::selfplay::health::{measure, probes, verdict};
        let (agents, _) = Agents::load(&out.join("agents.dcw")).unwrap();
        verdict(&measure(&agents, &probes(200, 1), deepchess::tensor::Kernel::Scalar)).unwrap();
    }
    // The escape rate the run logged at its last evaluation is what `deepchess escape` measures
    // for the same agents on the same suite.
    let logged: f64 = log.lines().filter(|l| l.starts_with("q.escape_suite,")).last().unwrap().split(',').nth(3).unwrap().parse().unwrap();
    let e = deepchess(&["escape", "--player", &format!("qagent={}", out.join("agents.dcw").display())]);
    assert!(e.status.success(), "{}", text(&e.stderr));
    let n: f64 = text(&e.stdout).split_whitespace().next().unwrap().parse().unwrap();
    let saved = format!("({:.0} of {n})", logged * n);
    assert!(text(&e.stdout).lines().nth(1).is_some_and(|l| l.contains(&saved)), "logged {logged}, measured {}", text(&e.stdout));
    let again = deepchess(&["train", "--system", "selfplay", "--profile", "tiny", "--out", o]);
    assert!(!again.status.success() && text(&again.stderr).contains("--resume"), "{}", text(&again.stderr));
    let bad = deepchess(&["train", "--system", "selfplay", "--compose", "sum", "--out", o]);
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad.stderr));
    // The agents load and play whole legal games against both baselines (the evaluation
    // the run reports), the same score for any thread count.
    let (agents, meta) = Agents::load(&out.join("agents.dcw")).unwrap();
    assert!(meta.iter().any(|(k, v)| k == "compose" && v == "signed"), "{meta:?}");
    let cfg = QCfg { eval_games: 4, eval_plies: 60, ..Profile::tiny().q };
    for b in [Baseline::Random, Baseline::Greedy] {
        let one = score_against(&agents, b, &cfg, 7, 1);
        assert!((0.0..=1.0).contains(&one.score) && one.material.is_finite(), "{one:?}");
        assert_eq!(one, score_against(&agents, b, &cfg, 7, 2), "{b:?}");
    }
    // The registered player: the run's agents play the handcrafted search through `match`.
    let pgn = dir.join("g.pgn");
    let net = format!("net={}", out.join("agents.dcw").display());
    let m = deepchess(&["match", "--engine", "name=q", "builtin=qagent", &net, "--engine", "name=hc", "builtin=handcrafted", "--each", "depth=1", "--games", "2", "--pgn", pgn.to_str().unwrap()]);
    assert!(m.status.success(), "{}", text(&m.stderr));
    let games = std::fs::read_to_string(&pgn).unwrap();
    assert_eq!(games.matches("[Event ").count(), 2, "{games}");
    assert!(games.contains("[White \"q\"]") && games.contains("[Black \"q\"]"), "{games}");
}

/// The shipped agents (`data/nets/qagent.dcw`) on the health check (`selfplay::health`: each
/// layer's share of live units and the output's spread across 200 probe positions): every one
/// of the fourteen nets sees the board. (The agents shipped before issue 63 failed it: ten
/// nets position-blind.) `--nocapture` prints every net's figures.
#[test]
fn the_shipped_agents_see_the_board() {
    use deepchess::selfplay::health::{alive_text, measure, probes, verdict};
    let (agents, _) = Agents::load(&shipped()).unwrap();
    let h = measure(&agents, &probes(200, 1), deepchess::tensor::Kernel::Scalar);
    for n in &h {
        eprintln!("{:<13} alive {}  spread across positions {:.3e}, across squares {:.3e}", n.name(), alive_text(n), n.spread_positions, n.spread_squares);
    }
    verdict(&h).unwrap();
}

fn shipped() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/nets/qagent.dcw")
}

/// The shipped agents on the escape suite (`data/escape/suite.epd`): the rate training
/// measures (`selfplay::measure::escape_rate`, the greedy agents) is the rate `deepchess
/// escape` measures for the registered player, position by position.
#[test]
fn the_shipped_agents_on_the_escape_suite() {
    use deepchess::arena::escape::{player_rate, random_rate};
    use deepchess::players::find;
    use deepchess::search::{Limits, PlayerSettings};
    let suite = deepchess::data::escape::shipped();
    let (agents, _) = Agents::load(&shipped()).unwrap();
    let ours = deepchess::selfplay::measure::escape_rate(&agents, Compose::Signed, &suite);
    let mut p = find("qagent").unwrap().build(&PlayerSettings { net: Some(shipped()), ..PlayerSettings::new(1) }).unwrap();
    let r = player_rate(p.player.as_mut(), &suite, &Limits::depth(1));
    eprintln!("qagent saves {} (a random mover {})", r.text(), random_rate(&suite).text());
    assert_eq!(r.share(), ours);
}

/// Issue 63's goal, as a test: the shipped agents save a hanging piece in at least half the
/// suite's positions (a random mover: 19.9 %). Not met yet (docs/results.md, seed 002), so it
/// runs with `make test-full` (ignored), as the goal it measures.
#[test]
#[ignore]
fn the_shipped_agents_escape_half_the_time() {
    let suite = deepchess::data::escape::shipped();
    let (agents, _) = Agents::load(&shipped()).unwrap();
    let rate = deepchess::selfplay::measure::escape_rate(&agents, Compose::Signed, &suite);
    // Where the saves are lost (`--nocapture`): the piece selector's first choice, the action,
    // the destination.
    let st = deepchess::selfplay::measure::escape_steps(&agents, Compose::Signed, &suite);
    eprintln!("{} positions: the piece selector values the hanging piece first in {} (a random piece: {:.1}), the action moves it in {} and saves it so in {}; saved in all (a defence, a capture of the attacker, a block included): {}", st.cases, st.piece_selector_first, st.random_piece, st.moved, st.saved_by_moving, st.saved);
    assert_eq!(st.saved as f64 / st.cases as f64, rate);
    assert!(rate >= 0.5, "the shipped agents save {:.1} % of the suite's pieces", 100.0 * rate);
}

/// The probe of `selfplay::probe` (ours): the seed's piece-selector shape, trained from fresh
/// weights on labels (1 on each of the mover's pieces en prise, 0 on its others) from the
/// positions of `data/datagen/` (the suite's games are not among them), then asked on the
/// escape suite which piece hangs. `--nocapture` prints each epoch: the training error, the
/// suite's positions where the hanging piece ranks first (a random piece's expectation beside
/// it), and those the shipped move selectors then save. `make test` runs it small (5,000
/// positions, 2 epochs, about a second: the hanging piece first in 232 of 500); the figures in
/// docs/results.md (seed 002) are `PROBE_POSITIONS=300000 PROBE_EPOCHS=10`, about 3 minutes.
#[test]
fn the_piece_selector_shape_can_see_en_prise() {
    use deepchess::selfplay::measure::escape_steps;
    use deepchess::selfplay::probe::{fresh_piece_selectors, labelled_positions, train_epoch};
    let env = |k: &str, d: usize| std::env::var(k).ok().and_then(|v| v.parse().ok()).unwrap_or(d);
    let (want, epochs) = (env("PROBE_POSITIONS", 5_000), env("PROBE_EPOCHS", 2));
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/datagen");
    let pgns = ["sf15-datagen-1.pgn.xz", "sf15-datagen-2.pgn.xz", "sf15-datagen-3.pgn.xz"]
        .iter()
        .map(|f| deepchess::chess::pgn::open_pgn(dir.join(f).to_str().unwrap()).unwrap())
        .collect();
    let t0 = std::time::Instant::now();
    let data = labelled_positions(pgns, want, 4);
    let with = data.iter().filter(|l| l.has_hanging()).count();
    eprintln!("{} positions ({} with a piece en prise) in {:.0} s", data.len(), with, t0.elapsed().as_secs_f64());
    let suite = deepchess::data::escape::shipped();
    let (shipped_agents, _) = Agents::load(&shipped()).unwrap();
    let before = escape_steps(&shipped_agents, Compose::Signed, &suite);
    eprintln!("the shipped piece selectors: hanging piece first in {} of {} (a random piece {:.1}); the move selectors then save {}", before.piece_selector_first, before.cases, before.random_piece, before.saved_piece_first);
    let mut agents = fresh_piece_selectors(&shipped_agents, 7);
    let mut opt = deepchess::tensor::Adam::new(1e-3);
    let mut rng = Rng::new(11);
    let mut last = escape_steps(&agents, Compose::Signed, &suite);
    eprintln!("epoch 0: first {} of {}", last.piece_selector_first, last.cases);
    for e in 1..=epochs {
        let t = std::time::Instant::now();
        let err = train_epoch(&mut agents, &mut opt, &data, 64, &mut rng).unwrap();
        last = escape_steps(&agents, Compose::Signed, &suite);
        eprintln!("epoch {e}: training error {err:.4}; suite: hanging piece first in {} of {} (a random piece {:.1}), then saved by the shipped move selectors in {} ({:.0} s)", last.piece_selector_first, last.cases, last.random_piece, last.saved_piece_first, t.elapsed().as_secs_f64());
    }
    assert!(last.piece_selector_first as f64 > 2.0 * last.random_piece, "the probe ranks the hanging piece first in {} of {}", last.piece_selector_first, last.cases);
}
