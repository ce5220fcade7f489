//! The external-engine client against scripted fake engines (tests/fakes/*.sh): a normal
//! game, an illegal move, a crash and a silent engine are each reported, never a hang.

use deepchess::chess::Position;
use deepchess::arena::uci_client::{Engine, EngineError, Score};
use std::time::{Duration, Instant};

fn fake(name: &str) -> String {
    format!("{}/tests/fakes/{name}.sh", env!("CARGO_MANIFEST_DIR"))
}

const T: Duration = Duration::from_secs(5);

#[test]
fn scripted_engine_plays_its_game() {
    let mut e = Engine::start(&fake("scripted"), &[("Hash".into(), "8".into())], T).unwrap();
    assert_eq!(e.name, "FakeScripted");
    e.new_game(T).unwrap();
    let mut pos = Position::startpos();
    let mut moves: Vec<String> = Vec::new();
    while !pos.is_checkmate() {
        let cmd = format!("position startpos moves {}", moves.join(" "));
        let r = e.go(cmd.trim_end(), "nodes 100", T).unwrap();
        assert_eq!(r.depth, 3);
        assert!(matches!(r.score, Some(Score::Cp(_))));
        let m = pos.parse_uci(&r.bestmove).unwrap();
        pos.play(m);
        moves.push(r.bestmove);
    }
    assert_eq!(moves.len(), 7);
}

#[test]
fn illegal_crashing_and_silent_engines_are_reported() {
    let mut e = Engine::start(&fake("illegal"), &[], T).unwrap();
    let r = e.go("position startpos", "nodes 1", T).unwrap();
    assert!(Position::startpos().parse_uci(&r.bestmove).is_err());

    let mut e = Engine::start(&fake("crash"), &[], T).unwrap();
    let err = e.go("position startpos", "nodes 1", T).unwrap_err();
    assert!(matches!(err, EngineError::Crashed(_)), "{err}");

    let mut e = Engine::start(&fake("silent"), &[], T).unwrap();
    let t = Instant::now();
    let err = e.go("position startpos", "movetime 10", Duration::from_millis(300)).unwrap_err();
    assert!(matches!(err, EngineError::Timeout(_)), "{err}");
    assert!(t.elapsed() < Duration::from_secs(3));

    let err = Engine::start("/nonexistent/engine", &[], T).err().unwrap();
    assert!(matches!(err, EngineError::Spawn(_)), "{err}");
}
