//! A small hand-written argument parser (the crate uses std only).
//!
//! Each subcommand declares its flags as a table of [`Flag`]s; parsing checks
//! unknown flags, missing values and bad numbers, and reports them as a
//! [`CliError::Usage`], which the CLI turns into exit code 2.

use std::fmt;
use std::str::FromStr;

/// One flag a subcommand accepts.
pub struct Flag {
    /// Long name without the dashes, e.g. `"fen"` for `--fen`.
    pub name: &'static str,
    /// Placeholder of the value (`Some("FEN")`), or `None` for a boolean switch.
    pub value: Option<&'static str>,
    pub help: &'static str,
}

/// What went wrong on the command line or while running a subcommand.
#[derive(Debug)]
pub enum CliError {
    /// Bad usage: exit code 2, with a hint to `--help`.
    Usage(String),
    /// The command was well formed but failed (bad file, bad data): exit code 1.
    Failed(String),
    /// `--help` was asked for; the text is printed on stdout, exit code 0.
    Help(String),
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Usage(m) | CliError::Failed(m) | CliError::Help(m) => f.write_str(m),
        }
    }
}

/// Parsed flags and positional arguments of one subcommand.
#[derive(Debug, Default)]
pub struct Parsed {
    flags: Vec<(&'static str, Option<String>)>,
    pub positional: Vec<String>,
}

/// Usage text of a subcommand from its flag table.
pub fn usage(cmd: &str, synopsis: &str, about: &str, flags: &[Flag]) -> String {
    let mut s = format!("{about}\n\nUsage: deepchess {cmd} {synopsis}\n\nOptions:\n");
    for f in flags {
        let left = match f.value {
            Some(v) => format!("--{} {}", f.name, v),
            None => format!("--{}", f.name),
        };
        s.push_str(&format!("  {left:<24} {}\n", f.help));
    }
    s.push_str(&format!("  {:<24} {}\n", "-h, --help", "print this help"));
    s
}

/// The placeholders of flags that set a count (of positions, games, epochs, plies,
/// engines): every such value is bounded here, before any work starts, so that no command
/// runs for hours or aborts on an allocation because of one typed digit too many. Seeds and
/// salts are named `SEED` and `SALT`, and take any 64-bit value.
pub const COUNT_PLACEHOLDERS: [&str; 4] = ["N", "K", "J", "D"];
/// The largest count a flag may set; a command may bound its own counts further (against
/// the memory they take, say).
pub const COUNT_MAX: u64 = 1_000_000_000;

fn check_count(cmd: &str, name: &str, placeholder: &str, v: &str) -> Result<(), CliError> {
    if !COUNT_PLACEHOLDERS.contains(&placeholder) {
        return Ok(());
    }
    // Only a whole number too large is refused here; anything else is the command's to judge.
    let digits = v.trim().trim_start_matches('+');
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) && digits.parse::<u64>().map_or(true, |n| n > COUNT_MAX) {
        return Err(CliError::Usage(format!("deepchess {cmd}: --{name} {v}: a count above {COUNT_MAX} is refused (it cannot fit the machine)")));
    }
    Ok(())
}

/// Parses `args` against `flags`. `--name value` and `--name=value` are both accepted.
pub fn parse(cmd: &str, args: &[String], flags: &[Flag], help: &str) -> Result<Parsed, CliError> {
    let mut out = Parsed::default();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if a == "-h" || a == "--help" {
            return Err(CliError::Help(help.to_string()));
        }
        if let Some(body) = a.strip_prefix("--") {
            let (name, inline) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (body, None),
            };
            let Some(flag) = flags.iter().find(|f| f.name == name) else {
                return Err(CliError::Usage(format!(
                    "deepchess {cmd}: unknown flag '--{name}' (see 'deepchess {cmd} --help')"
                )));
            };
            let value = match (flag.value, inline) {
                (None, Some(_)) => {
                    return Err(CliError::Usage(format!(
                        "deepchess {cmd}: flag '--{name}' takes no value"
                    )))
                }
                (None, None) => None,
                (Some(_), Some(v)) => Some(v),
                (Some(ph), None) => {
                    i += 1;
                    match args.get(i) {
                        Some(v) => Some(v.clone()),
                        None => {
                            return Err(CliError::Usage(format!(
                                "deepchess {cmd}: flag '--{name}' needs a value {ph}"
                            )))
                        }
                    }
                }
            };
            if let (Some(ph), Some(v)) = (flag.value, value.as_deref()) {
                check_count(cmd, name, ph, v)?;
            }
            out.flags.push((flag.name, value));
        } else if a.len() > 1 && a.starts_with('-') && a.parse::<f64>().is_err() {
            return Err(CliError::Usage(format!(
                "deepchess {cmd}: unknown flag '{a}' (see 'deepchess {cmd} --help')"
            )));
        } else {
            out.positional.push(a.clone());
        }
        i += 1;
    }
    Ok(out)
}

impl Parsed {
    /// Whether a boolean switch was given.
    pub fn has(&self, name: &str) -> bool {
        self.flags.iter().any(|(n, _)| *n == name)
    }

    /// The last value given for a flag, if any.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.flags.iter().rev().find(|(n, _)| *n == name).and_then(|(_, v)| v.as_deref())
    }

    /// Every value given for a repeatable flag, in order.
    pub fn get_all(&self, name: &str) -> Vec<&str> {
        self.flags.iter().filter(|(n, _)| *n == name).filter_map(|(_, v)| v.as_deref()).collect()
    }

    /// A flag's value parsed as `T`, or `default` when absent; a bad value is a usage error.
    pub fn get_or<T: FromStr>(&self, cmd: &str, name: &str, default: T) -> Result<T, CliError> {
        match self.get(name) {
            None => Ok(default),
            Some(v) => parse_value(cmd, &format!("--{name}"), v),
        }
    }
}

/// Parses one value, naming the flag or argument in the error.
pub fn parse_value<T: FromStr>(cmd: &str, what: &str, v: &str) -> Result<T, CliError> {
    v.parse::<T>().map_err(|_| {
        CliError::Usage(format!("deepchess {cmd}: invalid value '{v}' for {what}"))
    })
}

/// Median of benchmark samples (sorts in place); NaN for none.
pub fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Median over `reps` of (work units per second), each repetition running `f` for at least
/// `min_s` seconds, after one call to warm up (caches, buffers, page faults).
pub fn rate(reps: usize, min_s: f64, units_per_call: f64, mut f: impl FnMut()) -> f64 {
    f(); // warm-up: caches, buffers, page faults
    let mut rates = Vec::with_capacity(reps);
    for _ in 0..reps {
        let t = std::time::Instant::now();
        let mut calls = 0u64;
        while calls == 0 || t.elapsed().as_secs_f64() < min_s {
            f();
            calls += 1;
        }
        rates.push(units_per_call * calls as f64 / t.elapsed().as_secs_f64());
    }
    median(&mut rates)
}
