//! Seed 003's convolutional classifier end to end: a dataset of every position of decisive
//! games (`deepchess data --per-game 0 …`, with the position split and the checkmate filter),
//! `train --system cnn` at the tiny profile, resume, refusals, and the net playing through
//! the registry.

mod common;

use deepchess::tensor::NetFile;
use common::{deepchess, TempDir};
use std::path::Path;


fn sample_pgn() -> String {
    format!("{}/tests/data/pgn/sf15-sample.pgn", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn data_offers_the_position_split_and_the_seeds_filter() {
    let dir = TempDir::new("cnn-data");
    let all = common::sample_corpus(dir.path());
    let show = |f: &Path| String::from_utf8_lossy(&deepchess(&["data", "--show", f.to_str().unwrap()]).stdout).to_string();
    assert!(show(&all).contains("protocol: games"), "{}", show(&all));
    let out = dir.join("pos");
    let r = deepchess(&["data", "--pgn", &sample_pgn(), "--split", "positions", "--valid-per-mille", "200", "--per-game", "0", "--quiet", "--out", out.to_str().unwrap()]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let (train, valid) = (show(&out.join("train.dcds")), show(&out.join("valid.dcds")));
    assert!(train.contains("protocol: positions") && valid.contains("single positions held out"), "{valid}");
    // With a position split, games are on both sides.
    let games = |f: &Path| {
        let d = deepchess::data::dataset::Dataset::load(f).unwrap();
        d.records.iter().map(|r| r.game).collect::<std::collections::HashSet<u32>>()
    };
    let (tg, vg) = (games(&out.join("train.dcds")), games(&out.join("valid.dcds")));
    assert!(!vg.is_empty() && vg.iter().all(|g| tg.contains(g)), "every validation game also trains");
    // `accuracy` names the protocol beside every figure.
    let compact = format!("{}/data/nets/compact.dcw", env!("CARGO_MANIFEST_DIR"));
    let r = deepchess(&["accuracy", "--net", &compact, "--data", out.to_str().unwrap(), "--pairs", "200"]);
    let text = String::from_utf8_lossy(&r.stdout);
    assert!(r.status.success() && text.matches("[position split]").count() == 4 && text.contains("draw-referenced value"), "{text}{}", String::from_utf8_lossy(&r.stderr));
    // The checkmate filter keeps fewer games and says how many it dropped.
    let mates = dir.join("mates");
    let r = deepchess(&["data", "--pgn", &sample_pgn(), "--mate-only", "--per-game", "0", "--quiet", "--out", mates.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&r.stdout);
    assert!(r.status.success() && text.contains("dropped by the filter"), "{text}");
    assert!(show(&mates.join("train.dcds")).contains("filter: ended by checkmate"));
    // Rating filter: the sample has no Elo tags, so nothing is kept.
    let rated = dir.join("rated");
    let r = deepchess(&["data", "--pgn", &sample_pgn(), "--min-elo", "2000", "--quiet", "--out", rated.to_str().unwrap()]);
    assert!(r.status.success() && String::from_utf8_lossy(&r.stdout).contains(" 0 decisive:"), "{}", String::from_utf8_lossy(&r.stdout));
    let r = deepchess(&["data", "--pgn", &sample_pgn(), "--split", "random", "--out", rated.to_str().unwrap()]);
    assert!(!r.status.success() && String::from_utf8_lossy(&r.stderr).contains("--split"));
}

#[test]
fn tiny_run_trains_both_variants_resumes_and_plays() {
    let dir = TempDir::new("cnn-train");
    let all = common::sample_corpus(dir.path());
    let out = dir.join("run");
    let (c, o) = (all.to_str().unwrap(), out.to_str().unwrap());
    let test = format!("same-file={c}");
    let base = ["train", "--system", "cnn", "--profile", "tiny", "--corpus", c, "--test", &test, "--out", o, "--valid-per-mille", "150"];
    let r = deepchess(&base);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let md = std::fs::read_to_string(out.join("results.md")).unwrap();
    for row in ["| train |", "| valid-positions |", "| valid-games |", "| same-file |", "difficult", "Calibration, relu"] {
        assert!(md.contains(row), "{row} missing:\n{md}");
    }
    for f in ["linear/cnn.dcw", "relu/cnn.dcw", "linear/log.csv", "linear/curves.svg", "run.txt"] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    let log = std::fs::read_to_string(out.join("linear/log.csv")).unwrap();
    assert!(log.contains("\ncnn,2,") && log.contains("\ncnn.valid_positions,2,"), "{log}");

    // A finished run resumes to the same table without training again.
    let net = out.join("linear/cnn.dcw");
    let before = std::fs::metadata(&net).unwrap().modified().unwrap();
    let mut again = base.to_vec();
    again.push("--resume");
    let r = deepchess(&again);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert_eq!(std::fs::metadata(&net).unwrap().modified().unwrap(), before, "a finished net was trained again");
    let md2 = std::fs::read_to_string(out.join("results.md")).unwrap();
    let table = |s: &str| s.lines().filter(|l| l.starts_with("| ")).map(String::from).collect::<Vec<_>>();
    assert_eq!(table(&md), table(&md2));
    // Another seed on resume is refused, naming the flag; without --resume nothing is overwritten.
    let mut other = again.clone();
    other.extend(["--seed", "2"]);
    let r = deepchess(&other);
    assert!(!r.status.success() && String::from_utf8_lossy(&r.stderr).contains("--seed"));
    // So are another set of variants or test sets (issue 45: results.md lost the earlier
    // rows), naming both values; the table is untouched.
    let other_test = format!("other={c}");
    for (extra, flag, was, now) in [
        (vec!["--acts", "relu"], "--acts", "linear,relu", "relu"),
        (vec!["--acts", "relu,linear"], "--acts", "linear,relu", "relu,linear"),
        (vec!["--test", &other_test], "--test", "same-file=", "other="),
    ] {
        let mut a: Vec<&str> = base.iter().copied().filter(|&x| x != test.as_str() && x != "--test").collect();
        if flag != "--test" {
            a.extend(["--test", &test]);
        }
        a.push("--resume");
        a.extend(extra.iter().copied());
        let r = deepchess(&a);
        let err = String::from_utf8_lossy(&r.stderr);
        assert!(!r.status.success() && err.contains(&format!("{flag}: this run was made with '{was}")) && err.contains(now), "{extra:?}: {err}");
        assert_eq!(table(&std::fs::read_to_string(out.join("results.md")).unwrap()), table(&md));
    }
    let r = deepchess(&base);
    assert!(!r.status.success() && String::from_utf8_lossy(&r.stderr).contains("--resume"));

    // The net plays through the registry, in the shared search.
    use deepchess::players::find;
    use deepchess::search::PlayerSettings;
    let mut s = PlayerSettings::new(1);
    s.net = Some(net.clone());
    let built = find("cnn").unwrap().build(&s).map_err(|e| e.to_string()).unwrap();
    assert!(built.loaded.unwrap().contains("8x8x7-c16k4-p2s2-c8k2-ip8-1/linear"));
    let r = deepchess(&["bench", "--eval", "cnn", "--net", net.to_str().unwrap(), "--depth", "2"]);
    assert!(r.status.success(), "{}{}", String::from_utf8_lossy(&r.stdout), String::from_utf8_lossy(&r.stderr));
}

#[test]
fn bad_flags_and_files_are_named() {
    let dir = TempDir::new("cnn-flags");
    let o = dir.join("run");
    let o = o.to_str().unwrap();
    for (args, want) in [
        (vec!["--acts", "linear,tanh"], "--acts"),
        (vec!["--profile", "fast"], "fast"),
        (vec!["--test", "nofile"], "NAME=FILE"),
        (vec!["--test", "a b=x.dcds"], "--test name"),
        (vec!["--valid-per-mille", "0"], "--valid-per-mille"),
        (vec!["--epochs", "0"], "--epochs"),
        (vec!["--corpus", "/nonexistent/corpus.dcds"], "/nonexistent/corpus.dcds"),
    ] {
        let mut a = vec!["train", "--system", "cnn", "--out", o];
        a.extend(args.iter().copied());
        let r = deepchess(&a);
        let err = String::from_utf8_lossy(&r.stderr);
        assert!(!r.status.success() && err.contains(want), "{args:?}: {err}");
    }
    // A corpus that is not a dataset is refused by name.
    let junk = dir.join("junk.dcds");
    std::fs::write(&junk, b"not a dataset at all, just text").unwrap();
    let r = deepchess(&["train", "--system", "cnn", "--out", o, "--corpus", junk.to_str().unwrap()]);
    assert!(!r.status.success() && String::from_utf8_lossy(&r.stderr).contains("junk.dcds"));
    // Nets: another system's net, a cut file and a header that disagrees with the tensors.
    use deepchess::cnn::model::{Arch, Cnn, ConvAct};
    let compact = format!("{}/data/nets/compact.dcw", env!("CARGO_MANIFEST_DIR"));
    let e = Cnn::load(Path::new(&compact)).err().expect("a DeepChess net is not a CNN").to_string();
    assert!(e.contains("not a CNN net") && e.contains("compact.dcw"), "{e}");
    let net = Cnn::new(Arch { conv1: 6, conv2: 4, hidden: 3, act: ConvAct::Relu }, &mut deepchess::tensor::Rng::new(1));
    let good = dir.join("net.dcw");
    net.save(&good, &[]).unwrap();
    let bytes = std::fs::read(&good).unwrap();
    let cut = dir.join("cut.dcw");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    assert!(Cnn::load(&cut).is_err());
    let mut wf = deepchess::tensor::WeightFile::load(&good).unwrap();
    wf.meta.iter_mut().filter(|(k, _)| k == "arch").for_each(|(_, v)| *v = "8x8x7-c6k4-p2s2-c5k2-ip3-1/relu".into());
    wf.save(&good).unwrap();
    let e = Cnn::load(&good).err().expect("arch and tensors disagree").to_string();
    assert!(e.contains("c5k2") && e.contains("conv2.w"), "{e}");
    // The registry names a missing net file.
    use deepchess::players::find;
    use deepchess::search::PlayerSettings;
    let mut s = PlayerSettings::new(1);
    s.net = Some(dir.join("missing.dcw"));
    assert!(find("cnn").unwrap().build(&s).is_err());
}
