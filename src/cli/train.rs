//! `deepchess train [--system NAME]`: finds the system in the registry's `SYSTEMS`
//! (src/players.rs; DeepChess when none is named), parses the command line against its
//! flags and runs it. Each system's flags and run live in its `pipeline.rs`.

use crate::io::args::{parse, usage, CliError, Flag};
use crate::players::{find_system, SYSTEMS};
use crate::train::system::System;

/// The system named by `--system NAME` or `--system=NAME` in `args` (DeepChess by default).
fn named_system(args: &[String]) -> Result<&'static System, CliError> {
    let name = args.iter().enumerate().find_map(|(i, a)| match a.strip_prefix("--system") {
        Some("") => Some(args.get(i + 1).map(String::as_str).unwrap_or("")),
        Some(v) => v.strip_prefix('='),
        None => None,
    });
    let name = name.unwrap_or(SYSTEMS[0].name);
    find_system(name).ok_or_else(|| {
        let names: Vec<&str> = SYSTEMS.iter().map(|s| s.name).collect();
        CliError::Usage(format!("deepchess train: unknown --system '{name}' ({})", names.join(", ")))
    })
}

/// `--smoke-inputs DIR` (not in the help: for the tests): the system's smoke run's inputs
/// written into DIR and its arguments printed, one a line, instead of training.
const SMOKE_FLAG: &str = "--smoke-inputs";

pub fn run_cli(args: &[String]) -> Result<(), CliError> {
    let system = named_system(args)?;
    if let Some(i) = args.iter().position(|a| a == SMOKE_FLAG) {
        let dir = args.get(i + 1).ok_or_else(|| CliError::Usage(format!("deepchess train: {SMOKE_FLAG} needs a folder")))?;
        let words = (system.smoke)(std::path::Path::new(dir)).map_err(CliError::Failed)?;
        for w in words {
            println!("{w}");
        }
        return Ok(());
    }
    let mut flags = vec![Flag { name: "system", value: Some("NAME"), help: "the system to train (listed below; 'deepchess train --system NAME --help' for its flags)" }];
    flags.extend(system.flags.iter().map(|f| Flag { name: f.name, value: f.value, help: f.help }));
    let cmd = if system.name == SYSTEMS[0].name { "train".to_string() } else { format!("train --system {}", system.name) };
    let mut help = usage(&cmd, system.synopsis, &format!("{}: {}.\n\n{}", system.seed, system.about, system.help), &flags);
    help.push_str("\nSystems (--system NAME):\n");
    for s in SYSTEMS {
        help.push_str(&format!("  {:<10} {}: {}\n", s.name, s.seed, s.about));
    }
    let p = parse("train", args, &flags, &help)?;
    if let Some(extra) = p.positional.first() {
        return Err(CliError::Usage(format!("deepchess train: unexpected argument '{extra}'")));
    }
    (system.run)(&p, &format!("deepchess {cmd}"))
}
