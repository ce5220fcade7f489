//! The episode stage (train::episode): games of the learner's own policy, in parallel, handed
//! to it in batches. A result must not depend on the thread count, a resumed run must be the
//! uninterrupted one to the byte, and the game rules (openings, the move limit, rewards,
//! exploration) must hold.

mod common;

use deepchess::chess::game::Outcome;
use deepchess::chess::{Color, Game, Move, Position, Role};
use deepchess::tensor::{Matrix, Optimizer, ParamId, Params, Rng};
use deepchess::train::checkpoint::OptCfg;
use deepchess::train::episode::{End, EpisodeCfg, EpisodeLearner, Exploration, Opening, Trajectory};
use deepchess::train::stage::{Ctx, EpochStats};

/// A learner of piece values: the policy plays the capture of the most valuable piece (by
/// the values), else a random move (or any random move with probability `explore`); the
/// values move towards predicting the result. It keeps every batch it was given.
struct Values {
    id: ParamId,
    seen: Vec<Vec<Trajectory>>,
}

fn value(w: &[f32], pos: &Position) -> f32 {
    let roles = [Role::Pawn, Role::Knight, Role::Bishop, Role::Rook, Role::Queen];
    let m: f32 = roles.iter().zip(w).map(|(&r, v)| v * (pos.pieces(Color::White, r).count() as f32 - pos.pieces(Color::Black, r).count() as f32)).sum();
    (m / 10.0).tanh()
}

impl EpisodeLearner for Values {
    type Actor = Vec<f32>;

    fn actor(&self, params: &Params) -> Vec<f32> {
        params.value(self.id).data().to_vec()
    }

    fn act(w: &mut Vec<f32>, game: &Game, explore: f64, rng: &mut Rng) -> Move {
        let pos = game.position();
        let moves = pos.legal_moves();
        let random = moves.as_slice()[rng.below(moves.len() as u64) as usize];
        if rng.next_f64() < explore {
            return random;
        }
        let sign = if pos.turn() == Color::White { 1.0 } else { -1.0 };
        let score = |m: &Move| {
            let mut p = *pos;
            p.play(*m);
            sign * value(w, &p)
        };
        let best = moves.iter().copied().fold(random, |b, m| if score(&m) > score(&b) { m } else { b });
        best
    }

    fn reward(_actor: &Self::Actor, before: &Position, mv: Move, _after: &Position) -> f32 {
        if before.is_capture(mv) {
            1.0
        } else {
            -0.1
        }
    }

    fn learn(&mut self, params: &mut Params, opt: &mut dyn Optimizer, games: &[Trajectory], _rng: &mut Rng) -> Result<EpochStats, String> {
        let w = params.value(self.id).data().to_vec();
        let mut g = [0.0f32; 5];
        let mut n = 0;
        for t in games {
            let target = match t.outcome {
                Outcome::Win(Color::White) => 1.0,
                Outcome::Win(Color::Black) => -1.0,
                Outcome::Draw => 0.0,
            };
            for pos in &t.positions {
                let y = value(&w, pos);
                for (k, r) in [Role::Pawn, Role::Knight, Role::Bishop, Role::Rook, Role::Queen].into_iter().enumerate() {
                    let x = pos.pieces(Color::White, r).count() as f32 - pos.pieces(Color::Black, r).count() as f32;
                    g[k] += 2.0 * (y - target) * (1.0 - y * y) * x / 10.0;
                }
                n += 1;
            }
        }
        params.grad_mut(self.id).data_mut().iter_mut().zip(g).for_each(|(p, v)| *p = v / n.max(1) as f32);
        opt.step(params);
        self.seen.push(games.to_vec());
        Ok(EpochStats::new(n as f64, f64::NAN, f64::NAN, games.len()).with_figure("plies", n as f64))
    }
}

fn cfg(batches: usize) -> EpisodeCfg {
    EpisodeCfg {
        batches,
        games_per_batch: 6,
        max_plies: 40,
        opening: Opening::RandomPlies(6),
        exploration: Exploration { start: 0.6, end: 0.2, over: 2 },
        opt: OptCfg::Sgd { lr: 0.5, decay: 0.9, momentum: 0.9 },
        rule_draws: true,
        king_capture: false,
    }
}

/// Runs `batches` batches (resuming when asked) in `dir`; the values and what was learnt from.
fn train(dir: &std::path::Path, batches: usize, threads: usize, resume: bool) -> (Vec<f32>, Values) {
    let mut ctx = Ctx::new(dir, 5, resume, vec![]).unwrap();
    let mut p = Params::new();
    let id = p.add("values", Matrix::filled(1, 5, 1.0)).unwrap();
    let mut l = Values { id, seen: Vec::new() };
    ctx.run_episodes("values", &mut p, &cfg(batches), threads, &mut l).unwrap();
    (p.value(id).data().to_vec(), l)
}

/// Every file of a run folder but the log's wall-clock columns.
fn files(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            let mut b = std::fs::read(e.path()).unwrap();
            if name == "log.csv" {
                b = String::from_utf8(b).unwrap().lines().map(|l| l.rsplitn(3, ',').nth(2).unwrap().to_string() + "\n").collect::<String>().into_bytes();
            }
            (name, b)
        })
        .filter(|(n, _)| n != "curves.svg")
        .collect();
    v.sort();
    v
}

#[test]
fn the_thread_count_changes_nothing_and_a_resume_is_the_uninterrupted_run() {
    let dirs: Vec<common::TempDir> = (0..3).map(|i| common::TempDir::new(&format!("episode-{i}"))).collect();
    let (one, l1) = train(&dirs[0], 3, 1, false);
    let (two, l2) = train(&dirs[1], 3, 2, false);
    assert_eq!(one, two, "values depend on the thread count");
    assert_eq!(files(&dirs[0]), files(&dirs[1]));
    let moves = |l: &Values| l.seen.iter().flatten().map(|t| t.moves.clone()).collect::<Vec<_>>();
    assert_eq!(moves(&l1), moves(&l2));
    // Two batches, stop, then the third from the checkpoint.
    train(&dirs[2], 2, 2, false);
    let (resumed, l3) = train(&dirs[2], 3, 1, true);
    assert_eq!(l3.seen.len(), 1, "only the missing batch is played");
    assert_eq!(resumed, one);
    assert_eq!(files(&dirs[2]), files(&dirs[0]));
    // A finished stage resumes to itself without playing.
    let (again, l4) = train(&dirs[2], 3, 2, true);
    assert!(l4.seen.is_empty() && again == one);
}

#[test]
fn games_follow_the_rules_openings_limits_rewards_and_exploration() {
    let dir = common::TempDir::new("episode-rules");
    let (_, l) = train(&dir, 3, 2, false);
    assert_eq!(l.seen.len(), 3);
    let games: Vec<&Trajectory> = l.seen.iter().flatten().collect();
    assert_eq!(games.len(), 18);
    // Random opening plies: the actor does not always start from the initial position.
    let starts: std::collections::HashSet<String> = games.iter().map(|t| t.start.fen()).collect();
    assert!(starts.len() > 3, "{starts:?}");
    for t in &games {
        assert_eq!((t.positions.len(), t.rewards.len()), (t.moves.len(), t.moves.len()));
        let mut p = t.start;
        for (k, &m) in t.moves.iter().enumerate() {
            assert_eq!(p, t.positions[k]);
            assert!(p.is_legal(m));
            assert_eq!(t.rewards[k], if p.is_capture(m) { 1.0 } else { -0.1 });
            p.play(m);
        }
        match t.end {
            End::MoveLimit => assert_eq!(t.outcome, Outcome::Draw),
            End::Rules(_) => assert!(Game::new(p).outcome().is_some() || t.moves.len() < 40),
            End::KingTaken | End::NoMove => panic!("{:?} in legal chess", t.end),
        }
        assert!(t.moves.len() <= 40);
    }
    assert!(games.iter().any(|t| t.end == End::MoveLimit));
    assert_eq!(cfg(3).exploration.at(0), 0.6);
    assert!((cfg(3).exploration.at(1) - 0.4).abs() < 1e-12);
    assert_eq!((cfg(3).exploration.at(2), cfg(3).exploration.at(9)), (0.2, 0.2));
    let log = std::fs::read_to_string(dir.join("log.csv")).unwrap();
    assert!(log.contains("\nvalues,3,") && log.contains("\nvalues.plies,3,"), "{log}");
}

/// Expert lines as openings: each game plays a prefix of one of the lines, at least the
/// given share of it, and the learner sees the prefix.
#[test]
fn games_open_with_a_prefix_of_an_expert_line() {
    use std::sync::Arc;
    let line: Vec<Move> = {
        let mut g = Game::default();
        for san in ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "Ba4", "Nf6", "O-O", "Be7"] {
            g.play_san(san).unwrap();
        }
        g.moves().to_vec()
    };
    let lines = Arc::new(vec![(Position::startpos(), line.clone())]);
    let dir = common::TempDir::new("episode-lines");
    let mut ctx = Ctx::new(&dir, 3, false, vec![]).unwrap();
    let mut p = Params::new();
    let id = p.add("values", Matrix::filled(1, 5, 1.0)).unwrap();
    let mut l = Values { id, seen: Vec::new() };
    let cfg = EpisodeCfg { opening: Opening::Lines(lines, 0.5), max_plies: 30, ..cfg(1) };
    ctx.run_episodes("values", &mut p, &cfg, 2, &mut l).unwrap();
    let mut lengths = std::collections::HashSet::new();
    for t in &l.seen[0] {
        assert_eq!(t.opening_start, Position::startpos());
        assert!(t.opening.len() >= 5 && t.opening.len() <= line.len(), "{}", t.opening.len());
        assert_eq!(t.opening[..], line[..t.opening.len()]);
        let mut p = t.opening_start;
        t.opening.iter().for_each(|&m| p.play(m));
        assert_eq!(p, t.start);
        lengths.insert(t.opening.len());
    }
    assert!(lengths.len() > 1, "prefixes of several lengths: {lengths:?}");
}

/// A learner that plays in an environment without check: a random pseudo-legal move, the
/// king's capture whenever it is there. It learns nothing.
struct KingTaker {
    seen: Vec<Trajectory>,
}

impl EpisodeLearner for KingTaker {
    type Actor = ();

    fn actor(&self, _: &Params) {}

    fn act(_: &mut (), game: &Game, _: f64, rng: &mut Rng) -> Move {
        let pos = game.position();
        let moves = pos.pseudo_legal_moves();
        moves.iter().copied().find(|&m| pos.takes_king(m)).unwrap_or_else(|| moves[rng.below(moves.len() as u64) as usize])
    }

    fn reward(_: &(), before: &Position, mv: Move, _: &Position) -> f32 {
        if before.takes_king(mv) {
            255.0
        } else {
            0.0
        }
    }

    fn learn(&mut self, _: &mut Params, _: &mut dyn Optimizer, games: &[Trajectory], _: &mut Rng) -> Result<EpochStats, String> {
        self.seen.extend_from_slice(games);
        Ok(EpochStats::new(0.0, f64::NAN, f64::NAN, games.len()))
    }
}

/// With `king_capture`, random pseudo-legal play leaves kings attacked, and a game ends when
/// one is taken: that move is the trajectory's last, rewarded, not played (every position of
/// the game still has both kings), and the game is its mover's; mates end nothing.
#[test]
fn without_check_a_game_ends_when_a_king_is_taken() {
    let dir = common::TempDir::new("episode-kings");
    let mut ctx = Ctx::new(&dir, 3, false, vec![]).unwrap();
    let mut p = Params::new();
    p.add("nothing", Matrix::filled(1, 1, 0.0)).unwrap();
    let cfg = EpisodeCfg { king_capture: true, rule_draws: false, max_plies: 300, games_per_batch: 8, batches: 2, opening: Opening::Start, ..cfg(2) };
    let mut l = KingTaker { seen: Vec::new() };
    ctx.run_episodes("kings", &mut p, &cfg, 2, &mut l).unwrap();
    assert_eq!(l.seen.len(), 16);
    let taken: Vec<&Trajectory> = l.seen.iter().filter(|t| t.end == End::KingTaken).collect();
    assert!(taken.len() >= 12, "{} of 16 games ended with a king taken", taken.len());
    for t in &l.seen {
        for pos in &t.positions {
            assert_eq!((pos.pieces(Color::White, Role::King).count(), pos.pieces(Color::Black, Role::King).count()), (1, 1), "{}", pos.fen());
        }
        if t.end == End::KingTaken {
            let (last, mv) = (t.positions.last().unwrap(), *t.moves.last().unwrap());
            assert!(last.takes_king(mv));
            assert_eq!(*t.rewards.last().unwrap(), 255.0);
            assert_eq!(t.outcome, Outcome::Win(last.turn()));
            assert_eq!(t.rewards.iter().filter(|&&r| r > 0.0).count(), 1);
        }
    }
}
