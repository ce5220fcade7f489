//! Who plays and how long they may think: a player spec in cutechess style
//! (`name=sf cmd=/usr/games/stockfish option.UCI_Elo=1400 tc=10+0.1`) and search limits.

use crate::players;
use std::fmt;
use std::path::Path;
use std::time::Duration;

/// How long a player may think.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// A game clock: base time plus an increment per move (`tc=10+0.1`).
    Clock { base: Duration, inc: Duration },
    /// `nodes=N` per move.
    Nodes(u64),
    /// `depth=N` per move.
    Depth(u32),
    /// `movetime=MS` per move, enforced like a clock.
    MoveTime(Duration),
}

impl Limit {
    /// Parses one `key=value` limit; `None` if the key is not a limit.
    pub fn parse(key: &str, value: &str) -> Option<Result<Limit, String>> {
        let bad = |what: &str| Err(format!("{key}={value}: {what}"));
        Some(match key {
            "tc" => {
                let (b, i) = value.split_once('+').unwrap_or((value, "0"));
                match (seconds(b), seconds(i)) {
                    (Some(base), Some(inc)) if !base.is_zero() => Ok(Limit::Clock { base, inc }),
                    _ => bad("wants SECONDS or SECONDS+INCREMENT, e.g. tc=10+0.1"),
                }
            }
            "nodes" => match value.parse::<u64>() {
                Ok(n) if n > 0 => Ok(Limit::Nodes(n)),
                _ => bad("wants a positive node count"),
            },
            "depth" => match value.parse::<u32>() {
                Ok(n) if (1..=255).contains(&n) => Ok(Limit::Depth(n)),
                _ => bad("wants a depth from 1 to 255"),
            },
            "movetime" => match value.parse::<u64>() {
                Ok(n) if n > 0 => Ok(Limit::MoveTime(Duration::from_millis(n))),
                _ => bad("wants positive milliseconds"),
            },
            _ => return None,
        })
    }

    /// The PGN `TimeControl` value: `10+0.1` for clocks (seconds), `-` otherwise.
    pub fn pgn_time_control(&self) -> String {
        match self {
            Limit::Clock { base, inc } => format!("{}+{}", secs(*base), secs(*inc)),
            Limit::MoveTime(t) => format!("1/{}", secs(*t)),
            _ => "-".into(),
        }
    }
}

fn seconds(s: &str) -> Option<Duration> {
    let v: f64 = s.parse().ok()?;
    (v.is_finite() && (0.0..1e7).contains(&v)).then(|| Duration::from_secs_f64(v))
}

/// Seconds without trailing zeros: `10`, `0.1`.
fn secs(d: Duration) -> String {
    let s = format!("{:.3}", d.as_secs_f64());
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Limit::Clock { base, inc } => write!(f, "tc={}+{}", secs(*base), secs(*inc)),
            Limit::Nodes(n) => write!(f, "nodes={n}"),
            Limit::Depth(n) => write!(f, "depth={n}"),
            Limit::MoveTime(t) => write!(f, "movetime={}", t.as_millis()),
        }
    }
}

/// What program a player runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Program {
    /// An external UCI engine: program and arguments, split on whitespace.
    External(String),
    /// Our own engine (`<this executable> uci`) with `Eval` set to a player of the registry
    /// (src/players.rs).
    Builtin(String),
}

/// One player of a match.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlayerSpec {
    pub name: String,
    pub program: Program,
    /// `net=FILE`: sent as the UCI option `EvalFile`.
    pub net: Option<String>,
    /// `option.NAME=VALUE`: UCI options, in order.
    pub options: Vec<(String, String)>,
    pub limit: Limit,
}

impl PlayerSpec {
    /// Builds a player from `key=value` words: first the shared ones (`--each`), then its own,
    /// a later key overriding an earlier one. A word without `=` continues the previous value,
    /// so `cmd=/path/engine --flag` keeps its argument.
    pub fn parse(shared: &str, own: &str) -> Result<PlayerSpec, String> {
        let mut pairs: Vec<(String, String)> = Vec::new();
        for word in shared.split_whitespace().chain(own.split_whitespace()) {
            match word.split_once('=') {
                Some((k, v)) if !k.is_empty() && !k.starts_with('-') => pairs.push((k.to_string(), v.to_string())),
                _ => match pairs.last_mut() {
                    Some(last) => {
                        last.1.push(' ');
                        last.1.push_str(word);
                    }
                    None => return Err(format!("'{word}' is not KEY=VALUE")),
                },
            }
        }
        let (mut name, mut cmd, mut builtin, mut net, mut limit) = (None, None, None, None, None);
        let mut options: Vec<(String, String)> = Vec::new();
        for (k, v) in pairs {
            if let Some(opt) = k.strip_prefix("option.") {
                if opt.is_empty() {
                    return Err(format!("{k}={v}: option name missing"));
                }
                options.retain(|(o, _)| o != opt);
                options.push((opt.to_string(), v));
                continue;
            }
            if let Some(l) = Limit::parse(&k, &v) {
                limit = Some(l?);
                continue;
            }
            match k.as_str() {
                "name" if !v.is_empty() => name = Some(v),
                "cmd" if !v.trim().is_empty() => (cmd, builtin) = (Some(v), None),
                "builtin" => match players::find_offered(&v) {
                    Some(p) => (builtin, cmd) = (Some(p.name.to_string()), None),
                    None => return Err(format!("builtin={v}: expected one of {}", players::offered_names().join(", "))),
                },
                "net" if !v.is_empty() => net = Some(v),
                "name" | "cmd" | "net" => return Err(format!("{k}= needs a value")),
                _ => {
                    return Err(format!(
                        "unknown key '{k}' (expected name, cmd, builtin, net, option.NAME, tc, nodes, depth, movetime)"
                    ))
                }
            }
        }
        let program = match (cmd, builtin) {
            (Some(c), _) => Program::External(c),
            (None, Some(b)) => Program::Builtin(b),
            (None, None) => return Err("a player needs cmd=COMMAND or builtin=KIND".into()),
        };
        let limit = limit.ok_or("a player needs a limit: tc=S+INC, nodes=N, depth=N or movetime=MS")?;
        let name = name.unwrap_or_else(|| match &program {
            Program::Builtin(b) => b.clone(),
            Program::External(c) => {
                let prog = c.split_whitespace().next().unwrap_or(c);
                Path::new(prog).file_name().map_or(prog.to_string(), |f| f.to_string_lossy().to_string())
            }
        });
        Ok(PlayerSpec { name, program, net, options, limit })
    }

    /// For a built-in player, loads its net as its engine will (the given `net=` file, else
    /// its shipped one): a net that does not load must stop the match before the first game,
    /// or the engine would play its fallback evaluator under this player's name. A net given
    /// to a player that takes none is refused too. External engines are not checked here.
    pub fn check_builtin(&self) -> Result<(), String> {
        let Program::Builtin(kind) = &self.program else { return Ok(()) };
        let p = players::find(kind).ok_or_else(|| format!("player {}: builtin={kind} is not in the registry", self.name))?;
        if p.default_net.is_none() {
            return match &self.net {
                Some(n) => Err(format!("player {}: builtin={kind} uses no net file, but net={n} was given", self.name)),
                None => Ok(()),
            };
        }
        let settings = crate::search::PlayerSettings { net: self.net.as_ref().map(std::path::PathBuf::from), ..crate::search::PlayerSettings::new(1) };
        match p.build(&settings) {
            Ok(_) => Ok(()),
            Err(e) => Err(format!("player {}: builtin={kind} cannot load its net: {e}; the engine would play its fallback evaluator under this name", self.name)),
        }
    }

    /// The command line and UCI options that start this player. Built-in players run `exe`
    /// (normally this very executable) as a UCI engine, so every player is driven alike.
    pub fn command(&self, exe: &Path) -> (String, Vec<(String, String)>) {
        let mut options = Vec::new();
        let cmd = match &self.program {
            Program::External(c) => c.clone(),
            Program::Builtin(kind) => {
                options.push(("Eval".to_string(), kind.clone()));
                format!("{} uci", exe.display())
            }
        };
        if let Some(net) = &self.net {
            options.push(("EvalFile".to_string(), net.clone()));
        }
        options.extend(self.options.iter().cloned());
        (cmd, options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse() {
        let p = PlayerSpec::parse(
            "tc=10+0.1",
            "name=sf cmd=/usr/games/stockfish option.UCI_LimitStrength=true option.UCI_Elo=1400",
        )
        .unwrap();
        assert_eq!(p.name, "sf");
        assert_eq!(p.program, Program::External("/usr/games/stockfish".into()));
        assert_eq!(p.limit, Limit::Clock { base: Duration::from_secs(10), inc: Duration::from_millis(100) });
        assert_eq!(p.options.len(), 2);
        let (cmd, opts) = p.command(Path::new("/x/deepchess"));
        assert_eq!(cmd, "/usr/games/stockfish");
        assert_eq!(opts[1], ("UCI_Elo".to_string(), "1400".to_string()));

        let b = PlayerSpec::parse("nodes=500", "builtin=distilled net=nets/d.bin depth=3").unwrap();
        assert_eq!((b.name.as_str(), b.limit), ("distilled", Limit::Depth(3)));
        let (cmd, opts) = b.command(Path::new("/x/deepchess"));
        assert_eq!(cmd, "/x/deepchess uci");
        assert_eq!(opts[0], ("Eval".into(), "distilled".into()));
        assert_eq!(opts[1], ("EvalFile".into(), "nets/d.bin".into()));

        let args = PlayerSpec::parse("", "cmd=/bin/eng --fast movetime=50").unwrap();
        assert_eq!(args.program, Program::External("/bin/eng --fast".into()));
        assert_eq!(args.name, "eng");
        assert_eq!(args.limit.to_string(), "movetime=50");
        assert_eq!(Limit::Clock { base: Duration::from_secs(60), inc: Duration::ZERO }.pgn_time_control(), "60+0");
    }

    #[test]
    fn bad_specs_are_explained() {
        for (spec, needle) in [
            ("cmd=x", "needs a limit"),
            ("tc=10", "needs cmd"),
            ("builtin=stockfish tc=1", "expected one of"),
            ("cmd=x tc=abc", "tc=abc"),
            ("cmd=x tc=0", "tc=0"),
            ("cmd=x nodes=-5", "positive node count"),
            ("cmd=x depth=0", "depth from 1"),
            ("cmd=x tc=1 colour=white", "unknown key 'colour'"),
            ("stockfish", "not KEY=VALUE"),
            ("cmd=x tc=1 option.=3", "option name missing"),
        ] {
            let e = PlayerSpec::parse("", spec).unwrap_err();
            assert!(e.contains(needle), "{spec}: {e}");
        }
    }
}
