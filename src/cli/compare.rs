//! `deepchess compare --net FILE FEN_A FEN_B`

use crate::io::args::{parse, usage, CliError, Flag};
use crate::chess::Position;
use crate::deepchess::features::Features;
use crate::deepchess::model::Net;
use std::path::PathBuf;

const FLAGS: &[Flag] = &[Flag { name: "net", value: Some("FILE"), help: "network file (.dcw)" }];

pub fn run(args: &[String]) -> Result<(), CliError> {
    let help = usage(
        "compare",
        "--net FILE FEN_A FEN_B",
        "Prints the network's probability that position A is better for White than B.",
        FLAGS,
    );
    let p = parse("compare", args, FLAGS, &help)?;
    let net_path = p.get("net").ok_or_else(|| CliError::Usage("deepchess compare: --net FILE is needed".into()))?;
    let [a, b] = p.positional.as_slice() else {
        return Err(CliError::Usage("deepchess compare: expected two FENs (quote each)".into()));
    };
    let pa = Position::from_fen(a).map_err(|e| CliError::Usage(format!("deepchess compare: FEN_A: {e}")))?;
    let pb = Position::from_fen(b).map_err(|e| CliError::Usage(format!("deepchess compare: FEN_B: {e}")))?;
    let (net, _) = Net::load(&PathBuf::from(net_path)).map_err(|e| CliError::Failed(e.to_string()))?;
    let (fa, fb) = (Features::from_position(&pa), Features::from_position(&pb));
    let p = net.prob_better(&[fa.as_slice()], &[fb.as_slice()]).map_err(|e| CliError::Failed(format!("{net_path}: {e}")))?;
    println!("{:.6}", p[0]);
    Ok(())
}
