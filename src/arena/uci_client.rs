//! A client for external UCI engines (Stockfish as data generator or opponent).
//! The engine's output is read on its own thread into a channel, so every wait has a
//! deadline: a silent, crashed or misbehaving engine is reported, never waited on forever.

pub use crate::chess::pgn::Score;
use crate::chess::{Move, Position};
use std::fmt;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// What went wrong with an engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EngineError {
    /// The program could not be started.
    Spawn(String),
    /// The engine exited or closed its output.
    Crashed(String),
    /// No expected answer before the deadline.
    Timeout(String),
    /// The engine said something that breaks the protocol (e.g. an unparsable bestmove).
    Protocol(String),
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EngineError::Spawn(m) => write!(f, "cannot start engine: {m}"),
            EngineError::Crashed(m) => write!(f, "engine crashed: {m}"),
            EngineError::Timeout(m) => write!(f, "engine timed out: {m}"),
            EngineError::Protocol(m) => write!(f, "engine protocol error: {m}"),
        }
    }
}

impl std::error::Error for EngineError {}

/// One `info ... multipv k ... score ... pv m ...` line, kept by multipv index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PvLine {
    pub multipv: u32,
    pub depth: u32,
    pub score: Score,
    pub first_move: String,
}

/// The outcome of one `go`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchResult {
    pub bestmove: String,
    pub score: Option<Score>,
    pub depth: u32,
    /// Last reported line per multipv index (index 0 = multipv 1).
    pub lines: Vec<PvLine>,
    pub elapsed: Duration,
    /// Nodes of the last `info` line that gave a count (`None`: the engine gave none).
    pub nodes: Option<u64>,
}

/// The node count of an `info` line, if it has one.
pub fn info_nodes(line: &str) -> Option<u64> {
    let mut t = line.split_whitespace();
    if t.next() != Some("info") {
        return None;
    }
    while let Some(w) = t.next() {
        match w {
            "nodes" => return t.next()?.parse().ok(),
            "pv" | "string" => return None,
            _ => {}
        }
    }
    None
}

/// Parses an `info` line; `None` when it has no score.
pub fn parse_info(line: &str) -> Option<PvLine> {
    let t: Vec<&str> = line.split_whitespace().collect();
    if t.first() != Some(&"info") {
        return None;
    }
    let (mut multipv, mut depth, mut score, mut first_move) = (1, 0, None, String::new());
    let mut i = 1;
    while i < t.len() {
        match t[i] {
            "depth" => depth = t.get(i + 1).and_then(|v| v.parse().ok()).unwrap_or(0),
            "multipv" => multipv = t.get(i + 1).and_then(|v| v.parse().ok()).unwrap_or(1),
            "score" => {
                let v = t.get(i + 2).and_then(|v| v.parse().ok());
                score = match (t.get(i + 1), v) {
                    (Some(&"cp"), Some(v)) => Some(Score::Cp(v)),
                    (Some(&"mate"), Some(v)) => Some(Score::Mate(v)),
                    _ => None,
                };
                i += 1;
            }
            "pv" => {
                first_move = t.get(i + 1).unwrap_or(&"").to_string();
                break;
            }
            // Strings run to the end of the line.
            "string" => break,
            _ => {}
        }
        i += 1;
    }
    Some(PvLine { multipv, depth, score: score?, first_move })
}

/// The longest line taken from an engine at once; a longer one arrives in pieces.
const MAX_LINE: u64 = 1 << 16;

/// A line as an engine sent it, made safe to parse, show and write to PGN: line end
/// removed, invalid UTF-8 replaced, tabs read as spaces, other control characters (ESC,
/// NUL) escaped as `\xNN`.
fn engine_text(line: &[u8]) -> String {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    crate::chess::pgn::printable(&String::from_utf8_lossy(line).replace('\t', " "))
}

/// A running engine process.
pub struct Engine {
    pub name: String,
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Engine {
    /// Starts `cmd` (split on whitespace: program then arguments), completes the `uci`
    /// handshake, applies `options`, and waits for `readyok`.
    pub fn start(cmd: &str, options: &[(String, String)], timeout: Duration) -> Result<Engine, EngineError> {
        let mut parts = cmd.split_whitespace();
        let prog = parts.next().ok_or_else(|| EngineError::Spawn("empty engine command".into()))?;
        let mut child = Command::new(prog)
            .args(parts)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| EngineError::Spawn(format!("{cmd}: {e}")))?;
        let stdout = child.stdout.take().ok_or_else(|| EngineError::Spawn("no stdout".into()))?;
        let stdin = child.stdin.take().ok_or_else(|| EngineError::Spawn("no stdin".into()))?;
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            let mut buf = Vec::new();
            while let Ok(n) = (&mut r).take(MAX_LINE).read_until(b'\n', &mut buf) {
                if n == 0 || tx.send(engine_text(&buf)).is_err() {
                    break;
                }
                buf.clear();
            }
        });
        let mut e = Engine { name: prog.to_string(), child, stdin, lines };
        e.send("uci")?;
        let deadline = Instant::now() + timeout;
        loop {
            let line = e.recv(deadline, "uciok")?;
            if let Some(n) = line.strip_prefix("id name ") {
                e.name = n.trim().to_string();
            }
            if line.trim() == "uciok" {
                break;
            }
        }
        for (k, v) in options {
            e.send(&format!("setoption name {k} value {v}"))?;
        }
        e.ready(timeout)?;
        Ok(e)
    }

    /// Sends one command line.
    pub fn send(&mut self, cmd: &str) -> Result<(), EngineError> {
        writeln!(self.stdin, "{cmd}")
            .and_then(|_| self.stdin.flush())
            .map_err(|e| EngineError::Crashed(format!("writing '{cmd}': {e}")))
    }

    fn recv(&mut self, deadline: Instant, waiting_for: &str) -> Result<String, EngineError> {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.lines.recv_timeout(left) {
            Ok(l) => Ok(l),
            Err(RecvTimeoutError::Timeout) => Err(EngineError::Timeout(format!("no '{waiting_for}'"))),
            Err(RecvTimeoutError::Disconnected) => {
                let status = self.child.try_wait().ok().flatten();
                Err(EngineError::Crashed(match status {
                    Some(s) => format!("exited ({s}) while we waited for '{waiting_for}'"),
                    None => format!("closed its output while we waited for '{waiting_for}'"),
                }))
            }
        }
    }

    /// `isready` → `readyok`.
    pub fn ready(&mut self, timeout: Duration) -> Result<(), EngineError> {
        self.send("isready")?;
        let deadline = Instant::now() + timeout;
        while self.recv(deadline, "readyok")?.trim() != "readyok" {}
        Ok(())
    }

    pub fn new_game(&mut self, timeout: Duration) -> Result<(), EngineError> {
        self.send("ucinewgame")?;
        self.ready(timeout)
    }

    /// Sends `position_cmd` (e.g. `position startpos moves e2e4`) then `go {limits}` and
    /// collects info lines until `bestmove`, or fails after `timeout`.
    pub fn go(&mut self, position_cmd: &str, limits: &str, timeout: Duration) -> Result<SearchResult, EngineError> {
        let start = Instant::now();
        self.send(position_cmd)?;
        self.send(&format!("go {limits}"))?;
        let deadline = start + timeout;
        let mut lines: Vec<PvLine> = Vec::new();
        let mut nodes = None;
        loop {
            let line = match self.recv(deadline, "bestmove") {
                Err(EngineError::Timeout(m)) => {
                    let _ = self.send("stop");
                    return Err(EngineError::Timeout(m));
                }
                r => r?,
            };
            if let Some(rest) = line.strip_prefix("bestmove") {
                let best = rest.split_whitespace().next().unwrap_or("").to_string();
                if best.is_empty() {
                    return Err(EngineError::Protocol("empty bestmove".into()));
                }
                let main = lines.first();
                return Ok(SearchResult {
                    bestmove: best,
                    score: main.map(|l| l.score),
                    depth: main.map_or(0, |l| l.depth),
                    lines,
                    elapsed: start.elapsed(),
                    nodes,
                });
            }
            if let Some(n) = info_nodes(&line) {
                nodes = Some(n);
            }
            if let Some(pv) = parse_info(&line) {
                let k = pv.multipv.clamp(1, 256) as usize;
                if lines.len() < k {
                    lines.resize(k, pv.clone());
                }
                lines[k - 1] = pv;
            }
        }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        let _ = self.send("quit");
        // Give it a moment to exit cleanly, then make sure it is gone.
        for _ in 0..20 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `position` command for `start` and `moves` (`startpos` when it is the initial
/// position).
pub fn position_cmd(start: &Position, moves: &[Move]) -> String {
    let mut s = if *start == Position::startpos() { "position startpos".to_string() } else { format!("position fen {}", start.fen()) };
    if !moves.is_empty() {
        s.push_str(" moves");
        for m in moves {
            s.push(' ');
            s.push_str(&m.to_string());
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn position_commands() {
        assert_eq!(position_cmd(&Position::startpos(), &[]), "position startpos");
        let p = Position::from_fen("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1").unwrap();
        let (a, b) = (p.parse_uci("e1g1").unwrap(), p.parse_uci("a1b1").unwrap());
        assert_eq!(position_cmd(&p, &[a, b]), format!("position fen {} moves e1g1 a1b1", p.fen()));
    }

    #[test]
    fn info_lines_parse() {
        let l = parse_info("info depth 12 seldepth 15 multipv 2 score cp -31 nodes 100 pv e7e5 g1f3").unwrap();
        assert_eq!(l, PvLine { multipv: 2, depth: 12, score: Score::Cp(-31), first_move: "e7e5".into() });
        let m = parse_info("info depth 9 score mate -3 pv a1a2").unwrap();
        assert_eq!(m.score, Score::Mate(-3));
        assert!(parse_info("info string hello score cp 3").is_none());
        assert!(parse_info("info depth 3 score cp").is_none());
        assert!(parse_info("bestmove e2e4").is_none());
        assert_eq!(Score::Cp(39).to_string(), "+0.39");
        assert_eq!(Score::Cp(-5).to_string(), "-0.05");
        assert_eq!(Score::Mate(-3).to_string(), "-M3");
        assert!(Score::Mate(2).to_cp() > Score::Mate(5).to_cp());
        assert!(Score::Mate(-2).to_cp() < Score::Mate(-5).to_cp());
    }
}
