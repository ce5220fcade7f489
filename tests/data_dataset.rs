//! Dataset files: round trip, encoding agreement, and every kind of corruption rejected.

mod common;

use deepchess::data::dataset::{Dataset, Record};
use deepchess::deepchess::features::Features;
use deepchess::chess::Position;
use proptest::prelude::*;

fn sample() -> Dataset {
    let fens = [
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 b - - 0 1",
    ];
    let mut d = Dataset::default();
    d.set_meta("source", "test");
    d.set_meta("set", "train");
    for (i, f) in fens.iter().enumerate() {
        let p = Position::from_fen(f).unwrap();
        d.records.push(Record::new(&p, i % 2 == 0, 10 + i as u16, i as u32));
    }
    d
}

#[test]
fn round_trip_and_features_match_direct_encoding() {
    let d = sample();
    let dir = common::TempDir::new("ds");
    let path = dir.join("train.dcds");
    d.save(&path).unwrap();
    let back = Dataset::load(&path).unwrap();
    assert_eq!(back.records, d.records);
    assert_eq!(back.meta("source"), Some("test"));
    assert_eq!(back.wins().count(), 2);
    assert_eq!(back.losses().count(), 1);
    for (r, f) in back.records.iter().zip([
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 b - - 0 1",
    ]) {
        let p = Position::from_fen(f).unwrap();
        assert_eq!(Features::from_record(r), Features::from_position(&p));
        assert_eq!(Features::from_record(r).to_position().unwrap().fen().split(' ').take(3).collect::<Vec<_>>(), p.fen().split(' ').take(3).collect::<Vec<_>>());
    }
    // No temp file left behind.
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
}

#[test]
fn corruption_is_rejected_with_a_reason() {
    let bytes = sample().to_bytes();
    let err = |b: &[u8]| Dataset::from_bytes(b).unwrap_err();
    assert!(err(&bytes[..bytes.len() - 1]).contains("truncated"));
    assert!(err(&bytes[..10]).contains("truncated"));
    assert!(err(b"garbage file").contains("magic"));
    let mut v = bytes.clone();
    v[8] = 9;
    assert!(err(&v).contains("version"));
    let mut v = bytes.clone();
    let n = v.len();
    v[n - 20] ^= 1;
    assert!(err(&v).contains("checksum"));
    let mut v = bytes.clone();
    v.push(0);
    assert!(err(&v).contains("bytes"));
    assert!(Dataset::load(std::path::Path::new("/nonexistent/x.dcds")).unwrap_err().to_string().contains("cannot read"));
    // A record with a valid checksum but more pieces than a position holds.
    let mut d = sample();
    for b in &mut d.records[0].board[8..24] {
        *b = 0x11;
    }
    let e = err(&d.to_bytes());
    assert!(e.contains("record 0") && e.contains("64 pieces"), "{e}");
}

proptest! {
    #[test]
    fn garbage_never_panics(b in prop::collection::vec(any::<u8>(), 0..300)) {
        let _ = Dataset::from_bytes(&b);
        let mut v = sample().to_bytes();
        for (i, x) in b.iter().enumerate().take(8) {
            let at = (*x as usize * 7 + i * 13) % v.len();
            v[at] ^= x | 1;
        }
        let _ = Dataset::from_bytes(&v);
    }
}
