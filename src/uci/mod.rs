//! The UCI engine: `deepchess` with no arguments. `Eval` chooses among the players of the
//! registry (src/players.rs). The main thread reads commands (so `isready` and `stop` are
//! answered mid-search); each `go` runs on its own thread, which owns the searcher until it
//! prints the one `bestmove` of that `go`.

use crate::chess::{Game, Position};
use crate::io::pages::available_mb;
use crate::players::{self, BuildError, Entry};
use crate::search::{Info, Limits, Player, PlayerSettings, Ponder, Score, MAX_DEPTH};
use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

mod memory;

/// Where the engine writes its lines; shared with the search thread.
pub type Out = Arc<Mutex<Box<dyn Write + Send>>>;

/// Writes one protocol line. Every control character in it is escaped first: parts of the
/// line come from files (a net header's variant or architecture, a path), and a `\n` there
/// would put a second line such as `bestmove h2h4` or `readyok` on the GUI's stream.
fn say(out: &Out, line: &str) {
    let line: std::borrow::Cow<str> = if line.contains(char::is_control) { crate::io::text::printable(line).into() } else { line.into() };
    let mut w = out.lock().unwrap_or_else(|e| e.into_inner());
    // A closed stdout (GUI gone) is not worth a panic; quitting follows on stdin EOF.
    let _ = writeln!(w, "{line}");
    let _ = w.flush();
}

/// Starts the search thread of one `go`: it takes the searcher from `slot`, searches, prints
/// the `bestmove` and hands the searcher back. The searcher stays in `slot` if the thread
/// cannot be started.
fn spawn_search(slot: Arc<Mutex<Option<Box<dyn Player>>>>, out: Out, game: Game, limits: Limits, overhead: Duration, flag: Arc<AtomicBool>) -> std::io::Result<JoinHandle<Box<dyn Player>>> {
    std::thread::Builder::new().name("search".into()).stack_size(64 << 20).spawn(move || {
        let mut searcher = slot.lock().unwrap_or_else(|e| e.into_inner()).take().expect("the searcher is in its slot");
        let r = searcher.choose(&game, &limits, overhead, flag.clone(), &mut |info| say(&out, &info_line(info)));
        // `go infinite` must not answer before `stop`, nor `go ponder` before `ponderhit` or
        // `stop`.
        while limits.waits_for_stop() && !flag.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(1));
        }
        say(&out, &info_line(&r.info));
        let best = match r.best {
            Some(m) => match r.ponder {
                Some(p) => format!("bestmove {m} ponder {p}"),
                None => format!("bestmove {m}"),
            },
            None => "bestmove 0000".to_string(),
        };
        say(&out, &best);
        searcher
    })
}

/// `info string MSG`, with the fallback's note while the fallback plays.
fn say_info(out: &Out, fallback: Option<&str>, msg: &str) {
    match fallback {
        Some(note) if !msg.contains(note) => say(out, &format!("info string {msg} [{note}]")),
        _ => say(out, &format!("info string {msg}")),
    }
}

/// The searcher for player `eval` with its net from `file` (or its shipped one), else the
/// fallback evaluator. Returns a sentence for `info string` saying what was loaded or why
/// not, and, when the fallback plays, a short note every later `info string` carries.
fn build_player(eval: &Entry, file: Option<&str>, hash_mb: usize, options: &[(String, String)]) -> (Box<dyn Player>, String, Option<String>) {
    let settings = PlayerSettings { net: file.map(std::path::PathBuf::from), options: options.to_vec(), ..PlayerSettings::new(hash_mb) };
    // A cache the machine refuses panics where it is allocated: caught here, the fallback
    // plays instead of the engine ending.
    let built = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| eval.build(&settings)))
        .unwrap_or_else(|p| Err(BuildError::Load(p.downcast_ref::<String>().cloned().unwrap_or_else(|| "its memory could not be had".into()))));
    // EvalFile under a player that takes no net: said, and the player plays without it.
    if let Err(BuildError::TakesNoNet { .. }) = built {
        let plain = PlayerSettings { options: options.to_vec(), ..PlayerSettings::new(hash_mb) };
        if let Ok(b) = eval.build(&plain) {
            let msg = format!("Eval {} takes no net file: EvalFile {} ignored", eval.name, crate::io::text::printable(file.unwrap_or("")));
            return (b.player, msg, None);
        }
    }
    match built {
        Ok(b) => {
            let msg = match b.loaded {
                Some(what) => format!("Eval {}: loaded {what}", eval.name),
                None => format!("Eval {}", eval.name),
            };
            (b.player, msg, None)
        }
        Err(e) => {
            let fallback = players::find(players::FALLBACK).expect("the fallback is registered");
            let player = fallback.build(&PlayerSettings::new(hash_mb)).expect("the fallback needs no file").player;
            let hint = if matches!(e, BuildError::NoNet { .. }) { "; set EvalFile" } else { "" };
            let note = format!("playing {}, not Eval {}: no net loaded", fallback.name, eval.name);
            (player, format!("no net loaded, using {} ({e}{hint})", fallback.name), Some(note))
        }
    }
}

struct Running {
    stop: Arc<AtomicBool>,
    /// Set while the search ponders (`go ponder`), for `ponderhit`.
    ponder: Option<Ponder>,
    handle: JoinHandle<Box<dyn Player>>,
    /// Not a search but the starting of its helper threads (no `bestmove` is owed).
    starting: bool,
}

/// Engine state between commands.
pub struct Engine {
    out: Out,
    game: Game,
    hash_mb: usize,
    /// The threads searching (`Threads` as far as the memory allows) and `Threads` as asked.
    threads: usize,
    threads_asked: usize,
    overhead: Duration,
    eval: &'static Entry,
    eval_file: Option<String>,
    /// Null move, late-move reductions and pruning (off: the paper's full-width search).
    selective: bool,
    /// Quiescence search and the check extension (off: seed 004's fixed-depth tables).
    quiescence: bool,
    /// Values of the players' own options (`players::player_options`), as set.
    player_options: Vec<(String, String)>,
    searcher: Option<Box<dyn Player>>,
    running: Option<Running>,
    /// What the last (re)build loaded, said after `uciok`.
    notice: String,
    /// Set while the fallback evaluator plays because the chosen player's net did not
    /// load: every `info string` says so until a net loads.
    fallback: Option<String>,
}

const HASH_DEFAULT: usize = 16;
const HASH_MAX: usize = 65536;
const OVERHEAD_DEFAULT_MS: u64 = 30;

/// Runs the engine on stdin/stdout until `quit` or end of input.
pub fn run_stdio() {
    crate::chess::attacks::init();
    let out: Out = Arc::new(Mutex::new(Box::new(std::io::stdout())));
    let mut e = Engine::new(out);
    e.run(std::io::stdin().lock());
}

impl Engine {
    pub fn new(out: Out) -> Engine {
        Engine {
            out,
            game: Game::default(),
            hash_mb: HASH_DEFAULT,
            threads: 1,
            threads_asked: 1,
            overhead: Duration::from_millis(OVERHEAD_DEFAULT_MS),
            eval: players::find_offered(players::DEFAULT).expect("the default player is registered"),
            eval_file: None,
            selective: true,
            quiescence: true,
            player_options: Vec::new(),
            searcher: None,
            running: None,
            notice: String::new(),
            fallback: None,
        }
    }

    /// Reads commands until `quit` or end of input. End of input means the GUI is gone, so
    /// it is `quit`: a running search is stopped (it still prints its `bestmove`) and the
    /// engine exits rather than search on for no one.
    pub fn run(&mut self, mut input: impl BufRead) {
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match input.read_until(b'\n', &mut buf) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            }
            let Ok(line) = std::str::from_utf8(&buf) else {
                self.info("input is not valid UTF-8; line ignored");
                continue;
            };
            if !self.command(line.trim_end_matches(['\n', '\r'])) {
                break;
            }
        }
        // Helper threads still being started owe nothing: the process ends without them.
        if self.running.as_ref().is_some_and(|r| r.starting) {
            return;
        }
        self.stop_search();
    }

    fn info(&self, msg: &str) {
        say_info(&self.out, self.fallback.as_deref(), msg)
    }

    /// Handles one line; returns false on `quit`.
    pub fn command(&mut self, line: &str) -> bool {
        let tokens: Vec<&str> = line.split_whitespace().collect();
        let Some((&cmd, rest)) = tokens.split_first() else { return true };
        match cmd {
            "uci" => self.uci(),
            "isready" => {
                // Heavy set-up (loading a net) happens here or at the first go, never mid-search.
                self.ensure_searcher();
                say(&self.out, "readyok")
            }
            "ucinewgame" => {
                self.stop_search();
                self.game = Game::default();
                if let Some(s) = self.searcher.as_mut() {
                    s.new_game();
                }
            }
            "position" => {
                self.stop_search();
                self.position(rest);
            }
            "go" => self.go(rest),
            "stop" => self.stop_search(),
            "ponderhit" => match self.running.as_ref().and_then(|r| r.ponder.as_ref()).filter(|p| p.pondering()) {
                Some(p) => p.hit(),
                None => self.info("ponderhit ignored: the engine is not pondering"),
            },
            "setoption" => {
                self.stop_search();
                self.setoption(rest, line);
            }
            "debug" | "register" => {}
            "quit" => return false,
            "d" => say(&self.out, &format!("info string fen {}", self.game.position().fen())),
            other => {
                let shown: String = other.chars().take(40).collect();
                self.info(&format!("unknown command '{shown}' ignored"))
            }
        }
        true
    }

    fn uci(&self) {
        for l in [
            format!("id name deepchess {}", env!("CARGO_PKG_VERSION")),
            "id author the deepchess authors (after David, Netanyahu & Wolf 2016)".to_string(),
            format!("option name Hash type spin default {HASH_DEFAULT} min 1 max {HASH_MAX}"),
            "option name Threads type spin default 1 min 1 max 256".to_string(),
            format!("option name Move Overhead type spin default {OVERHEAD_DEFAULT_MS} min 0 max 5000"),
            "option name EvalFile type string default <empty>".to_string(),
            format!("option name Eval type combo default {}{}", players::DEFAULT, players::offered_names().iter().map(|n| format!(" var {n}")).collect::<String>()),
            "option name Selective type check default true".to_string(),
            "option name Quiescence type check default true".to_string(),
            "option name Ponder type check default false".to_string(),
        ] {
            say(&self.out, &l);
        }
        for o in players::player_options() {
            say(&self.out, &o.uci_line());
        }
        say(&self.out, "uciok");
    }

    fn position(&mut self, args: &[&str]) {
        let (pos, rest) = match args.split_first() {
            Some((&"startpos", rest)) => (Position::startpos(), rest),
            Some((&"fen", rest)) => {
                let n = rest.iter().position(|&t| t == "moves").unwrap_or(rest.len());
                match Position::from_fen(&rest[..n].join(" ")) {
                    Ok(p) => (p, &rest[n..]),
                    Err(e) => return self.info(&format!("position ignored: bad FEN: {e}")),
                }
            }
            _ => return self.info("position ignored: expected 'position startpos|fen FEN [moves ...]'"),
        };
        let mut game = Game::new(pos);
        match rest.split_first() {
            None => {}
            Some((&"moves", moves)) => {
                for (i, m) in moves.iter().enumerate() {
                    match game.position().parse_uci(m) {
                        Ok(mv) => game.play_unchecked(mv),
                        Err(e) => {
                            self.info(&format!("position: move {} ignored with the rest: {e}", i + 1));
                            break;
                        }
                    }
                }
            }
            Some((t, _)) => self.info(&format!("position: unexpected '{t}' (expected 'moves'); moves ignored")),
        }
        self.game = game;
    }

    fn parse_go(&self, args: &[&str]) -> Limits {
        let is_go_keyword = |t: &str| {
            matches!(t, "wtime" | "btime" | "winc" | "binc" | "movestogo" | "depth" | "nodes" | "mate" | "movetime" | "infinite" | "ponder" | "searchmoves")
        };
        let mut l = Limits::default();
        let mut i = 0;
        while i < args.len() {
            let key = args[i];
            let num = |i: usize| -> Option<i64> { args.get(i + 1).and_then(|v| v.parse::<i64>().ok()) };
            let ms = |v: i64| Duration::from_millis(v.max(0) as u64);
            let takes_value = matches!(key, "wtime" | "btime" | "winc" | "binc" | "movestogo" | "depth" | "nodes" | "mate" | "movetime");
            if takes_value {
                match num(i) {
                    Some(v) => match key {
                        "wtime" => l.wtime = Some(ms(v)),
                        "btime" => l.btime = Some(ms(v)),
                        "winc" => l.winc = Some(ms(v)),
                        "binc" => l.binc = Some(ms(v)),
                        "movestogo" => l.movestogo = Some(v.clamp(1, 1000) as u32),
                        "depth" => l.depth = Some(v.clamp(1, MAX_DEPTH as i64) as u32),
                        "nodes" => l.nodes = Some(v.max(1) as u64),
                        "mate" => l.mate = Some(v.clamp(1, 50) as u32),
                        _ => l.movetime = Some(ms(v)),
                    },
                    None => {
                        self.info(&format!("go: '{key}' needs a number; ignored"));
                        i += 1;
                        continue;
                    }
                }
                i += 2;
                continue;
            }
            match key {
                "infinite" => l.infinite = true,
                "ponder" => l.ponder = Some(Ponder::new()),
                "searchmoves" => {
                    // Moves up to the next keyword; each must be legal here.
                    let pos = self.game.position();
                    while let Some(&t) = args.get(i + 1).filter(|&&t| !is_go_keyword(t)) {
                        match pos.parse_uci(t) {
                            Ok(m) => l.searchmoves.push(m),
                            Err(e) => self.info(&format!("go searchmoves: '{}' ignored: {e}", t.chars().take(16).collect::<String>())),
                        }
                        i += 1;
                    }
                    if l.searchmoves.is_empty() {
                        self.info("go searchmoves: no legal move listed; searching all moves");
                    }
                }
                other => self.info(&format!("go: unknown parameter '{other}' ignored")),
            }
            i += 1;
        }
        // One rule for every player: `go` with nothing that ends it is `go infinite`. A
        // search runs until `stop`; a policy without search (qagent) has its move at once
        // and answers it at `stop`, as a search that ended early under `go infinite` does.
        if l.unbounded() && !l.infinite && l.ponder.is_none() {
            l.infinite = true;
        }
        l
    }

    fn go(&mut self, args: &[&str]) {
        // One bestmove per go: a search still running answers its own go first.
        self.stop_search();
        let limits = self.parse_go(args);
        let ponder = limits.ponder.clone();
        if limits.borrows_clock(self.game.position().turn()) {
            self.info("go: no clock given for the side to move; planning with the opponent's");
        }
        self.ensure_searcher();
        // Helper threads still being started are waited for here, not at `isready`.
        self.join();
        if let Some(note) = self.fallback.clone() {
            // Said at every go: a GUI's log shows which evaluator played each move.
            self.info(&note);
        }
        let Some(mut searcher) = self.searcher.take() else {
            return self.info("internal: no searcher available; go ignored");
        };
        // Threads set while a search ran apply from this one on.
        searcher.set_threads(self.threads);
        let stop = Arc::new(AtomicBool::new(false));
        // The searcher goes to the thread through a slot, so that a thread the machine
        // cannot start leaves it here: with its helpers' memory given back, once more.
        let slot = Arc::new(Mutex::new(Some(searcher)));
        let start = || spawn_search(slot.clone(), self.out.clone(), self.game.clone(), limits.clone(), self.overhead, stop.clone());
        let mut handle = start();
        if handle.is_err() {
            let mut kept = slot.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(s) = kept.as_mut().filter(|s| s.threads() > 1) {
                s.set_threads(1);
                drop(kept);
                self.threads = 1;
                self.info("could not start the search thread beside its helpers; searching on 1 thread (Threads 1)");
                handle = start();
            }
        }
        match handle {
            Ok(handle) => self.running = Some(Running { stop, ponder, handle, starting: false }),
            Err(e) => {
                self.info(&format!("could not start the search thread: {e}"));
                say(&self.out, "bestmove 0000");
                self.searcher = slot.lock().unwrap_or_else(|e| e.into_inner()).take();
                if self.searcher.is_none() {
                    self.rebuild_searcher();
                }
            }
        }
    }

    /// Stops a running search and waits for its bestmove.
    fn stop_search(&mut self) {
        if let Some(r) = self.running.as_ref() {
            r.stop.store(true, Ordering::Relaxed);
        }
        self.join();
    }

    fn join(&mut self) {
        if let Some(r) = self.running.take() {
            match r.handle.join() {
                Ok(s) => self.searcher = Some(s),
                Err(_) if r.starting => {
                    self.info("starting the helper threads failed; starting a fresh searcher on one thread");
                    self.threads = 1;
                    self.rebuild_searcher();
                }
                Err(_) => {
                    self.info("the search thread failed; starting a fresh searcher");
                    say(&self.out, "bestmove 0000");
                    self.rebuild_searcher();
                }
            }
        }
    }

    /// Builds the searcher for the current Eval/EvalFile/Hash (after a search finished).
    fn rebuild_searcher(&mut self) {
        // The old searcher's memory goes first: two at once may not fit.
        self.searcher = None;
        let mut note = String::new();
        if let Some(avail) = available_mb().filter(|&a| self.memory_mb(self.hash_mb, 1) > a) {
            note = format!("; Hash {} MB does not fit in the {avail} MB available with this Eval's cache, using {HASH_DEFAULT} MB", self.hash_mb);
            self.hash_mb = HASH_DEFAULT;
        }
        let (mut s, mut msg, fallback) = build_player(self.eval, self.eval_file.as_deref(), self.hash_mb, &self.player_options);
        msg.push_str(&note);
        s.set_selective(self.selective);
        s.set_quiescence(self.quiescence);
        self.searcher = Some(s);
        self.notice = msg;
        self.fallback = fallback;
    }

    /// The searcher, built on first use (so `uci` answers at once).
    fn ensure_searcher(&mut self) {
        if self.searcher.is_none() && self.running.is_none() {
            self.rebuild_searcher();
            self.info(&self.notice.clone());
            self.start_threads(false);
        }
    }

    fn setoption(&mut self, args: &[&str], line: &str) {
        // setoption name <words...> [value <words...>]
        if args.first() != Some(&"name") {
            return self.info("setoption ignored: expected 'setoption name NAME [value VALUE]'");
        }
        let vpos = args.iter().position(|&t| t == "value");
        let name = args[1..vpos.unwrap_or(args.len())].join(" ");
        // The value is taken from the line as typed: a path may hold runs of spaces.
        let value = vpos.map(|v| after_tokens(line, v + 2).to_string()).unwrap_or_default();
        let spin = |lo: u64, hi: u64| -> Result<u64, String> {
            match value.parse::<u64>() {
                Ok(v) if (lo..=hi).contains(&v) => Ok(v),
                _ => Err(format!("setoption {name}: value '{value}' is not a number in {lo}..{hi}; ignored")),
            }
        };
        match name.to_ascii_lowercase().as_str() {
            "hash" => match spin(1, HASH_MAX as u64) {
                Ok(v) => self.set_hash(v as usize),
                Err(m) => self.info(&m),
            },
            "threads" => match spin(1, 256) {
                Ok(v) => {
                    (self.threads, self.threads_asked) = (v as usize, v as usize);
                    if self.searcher.is_some() {
                        self.start_threads(true);
                    } else {
                        let fit = self.threads_that_fit();
                        self.threads = fit;
                        self.info(&format!("Threads {v}: from the next search{}", if fit < self.threads_asked { format!(", on {fit} (the memory for more is not there)") } else { String::new() }));
                    }
                }
                Err(m) => self.info(&m),
            },
            "move overhead" => match spin(0, 5000) {
                Ok(v) => self.overhead = Duration::from_millis(v),
                Err(m) => self.info(&m),
            },
            "evalfile" => {
                self.eval_file = if value.is_empty() || value == "<empty>" { None } else { Some(value.clone()) };
                self.rebuild_searcher();
                self.info(&self.notice.clone());
                self.start_threads(false);
            }
            "eval" => match players::find_offered(&value) {
                Some(p) => {
                    self.eval = p;
                    self.rebuild_searcher();
                    self.info(&self.notice.clone());
                    self.start_threads(false);
                }
                None => self.info(&format!("setoption Eval: '{value}' is not one of {}; ignored", players::offered_names().join(", "))),
            },
            "selective" => match value.to_ascii_lowercase().as_str() {
                v @ ("true" | "false") => {
                    self.selective = v == "true";
                    if let Some(s) = self.searcher.as_mut() {
                        s.set_selective(self.selective);
                    }
                }
                _ => self.info(&format!("setoption Selective: '{value}' is not true or false; ignored")),
            },
            "quiescence" => match value.to_ascii_lowercase().as_str() {
                v @ ("true" | "false") => {
                    self.quiescence = v == "true";
                    if let Some(s) = self.searcher.as_mut() {
                        s.set_quiescence(self.quiescence);
                    }
                }
                _ => self.info(&format!("setoption Quiescence: '{value}' is not true or false; ignored")),
            },
            // The engine always prints its expected reply; the option tells it a GUI ponders.
            "ponder" => match value.to_ascii_lowercase().as_str() {
                "true" | "false" => {}
                _ => self.info(&format!("setoption Ponder: '{value}' is not true or false; ignored")),
            },
            "clear hash" => {
                if let Some(s) = self.searcher.as_mut() {
                    s.new_game();
                }
            }
            _ => match players::find_option(&name) {
                // A player's own option (the registry declares it): the player is built again.
                Some(o) => match o.check(&value) {
                    Ok(v) => {
                        let known = self.player_options.iter().position(|(n, _)| n == o.name);
                        let changed = known.map_or(v != o.values[0], |k| self.player_options[k].1 != v);
                        self.player_options.retain(|(n, _)| n != o.name);
                        self.player_options.push((o.name.to_string(), v.to_string()));
                        if changed {
                            self.rebuild_searcher();
                            self.info(&self.notice.clone());
                            self.start_threads(false);
                        }
                    }
                    Err(e) => self.info(&format!("setoption {e}; ignored")),
                },
                None => self.info(&format!("setoption: unknown option '{name}' ignored")),
            },
        }
    }
}

/// The text after the first `n` whitespace-separated tokens of `line`, its inner spacing
/// kept and its ends trimmed.
fn after_tokens(line: &str, n: usize) -> &str {
    let mut rest = line.trim_start();
    for _ in 0..n {
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        rest = rest[end..].trim_start();
    }
    rest.trim_end()
}

/// `info depth … seldepth … score … nodes … nps … hashfull … time … pv …`
pub fn info_line(i: &Info) -> String {
    let score = match i.score {
        Score::Cp(c) => format!("cp {c}"),
        Score::Mate(m) => format!("mate {m}"),
    };
    let mut s = format!(
        "info depth {} seldepth {} multipv 1 score {score} nodes {} nps {} hashfull {} time {}",
        i.depth,
        i.seldepth,
        i.nodes,
        i.nps(),
        i.hashfull,
        i.time.as_millis()
    );
    if !i.pv.is_empty() {
        s.push_str(" pv");
        for m in &i.pv {
            s.push(' ');
            s.push_str(&m.to_string());
        }
    }
    s
}
