//! A scripted UCI client of the real binary (stdin/stdout), for the engine's protocol tests.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

pub const SEC: Duration = Duration::from_secs(1);

/// How long a test waits for an answer the engine gives at once (`readyok`, `uciok`, an
/// `info string`, the `bestmove` after `stop` or after a short search): long enough for a
/// machine whose cores are all busy with other work, since a test only waits this long when
/// the answer is missing. Where promptness is the point, the test asserts its own bound.
pub const REPLY: Duration = Duration::from_secs(10);

pub struct Session {
    pub child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<(Instant, String)>,
    pub seen: Vec<String>,
}

impl Session {
    pub fn start(args: &[&str]) -> Session {
        let mut c = super::command();
        c.args(args);
        Session::of(c)
    }

    /// The engine under `ulimit -v kb` (its address space bounded, as a small container or
    /// a cautious GUI bounds it).
    #[cfg(unix)]
    pub fn start_limited(kb: u64) -> Session {
        let mut c = Command::new("sh");
        c.args(["-c", &format!("ulimit -v {kb} && exec \"$0\""), env!("CARGO_BIN_EXE_deepchess")]);
        Session::of(c)
    }

    fn of(mut c: Command) -> Session {
        let mut child = c
            .env_remove("DEEPCHESS_FAILPOINT")
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("engine starts");
        let stdin = child.stdin.take();
        let out = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for l in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send((Instant::now(), l)).is_err() {
                    break;
                }
            }
        });
        let mut s = Session { child, stdin, lines, seen: Vec::new() };
        // The whole suite again with helper threads (make test: Threads 2, Lazy SMP).
        if let Ok(t) = std::env::var("DEEPCHESS_TEST_THREADS") {
            s.send(&format!("setoption name Threads value {}", t.trim()));
            // Its answer is not one a test waits for.
            s.expect("info string Threads", REPLY);
            s.seen.clear();
        }
        s
    }

    pub fn send(&mut self, s: &str) {
        let w = self.stdin.as_mut().expect("stdin still open");
        writeln!(w, "{s}").unwrap();
        w.flush().unwrap();
    }

    /// Closes the engine's input (end of file), as a GUI that dies does.
    pub fn close_input(&mut self) {
        self.stdin = None;
    }

    /// Reads until a line starting with `prefix`; panics after `timeout`.
    pub fn expect(&mut self, prefix: &str, timeout: Duration) -> String {
        self.expect_at(prefix, timeout).1
    }

    /// [`Session::expect`], with the moment the line was read.
    pub fn expect_at(&mut self, prefix: &str, timeout: Duration) -> (Instant, String) {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok((t, l)) => {
                    self.seen.push(l.clone());
                    if l.starts_with(prefix) {
                        return (t, l);
                    }
                    assert!(!l.starts_with("bestmove") || prefix == "bestmove", "unexpected {l}");
                }
                Err(_) => panic!("no '{prefix}' within {timeout:?}; seen: {:#?}", self.seen),
            }
        }
    }

    /// Asserts that no line starting with `prefix` comes within `wait`.
    pub fn expect_none(&mut self, prefix: &str, wait: Duration) {
        let deadline = Instant::now() + wait;
        loop {
            match self.lines.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok((_, l)) => {
                    assert!(!l.starts_with(prefix), "unexpected '{l}' within {wait:?}");
                    self.seen.push(l);
                }
                Err(RecvTimeoutError::Timeout) => return,
                Err(RecvTimeoutError::Disconnected) => panic!("the engine exited; seen: {:#?}", self.seen),
            }
        }
    }

    /// Every remaining line until the engine closes its output (at most `timeout`).
    pub fn drain(&mut self, timeout: Duration) -> Vec<String> {
        let deadline = Instant::now() + timeout;
        let mut out = Vec::new();
        while let Ok((_, l)) = self.lines.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            out.push(l);
        }
        out
    }

    /// Waits up to `timeout` for the process to exit; kills it (and returns false) if not.
    pub fn exits_within(&mut self, timeout: Duration) -> bool {
        let t = Instant::now();
        while t.elapsed() < timeout {
            if let Ok(Some(_)) = self.child.try_wait() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        false
    }

    pub fn quit(mut self) {
        self.send("quit");
        let t = Instant::now();
        while t.elapsed() < REPLY {
            if let Ok(Some(st)) = self.child.try_wait() {
                assert!(st.success());
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        panic!("engine did not quit");
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // A failed test must not leave an engine searching.
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
