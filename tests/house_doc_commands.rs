//! The docs stay runnable: every `deepchess …` command written in the README, in `docs/*.md`
//! and in the data folders' READMEs names a subcommand that exists and only flags that its
//! `--help` lists (a renamed or dropped flag breaks a documented command silently otherwise),
//! and every shipped net cited with a checksum (`` `compact.dcw` d4f6e2bc ``) is cited with the
//! checksum of the file in `data/nets/`; every `make …` command names targets and variables
//! the Makefile has; every `python3 SCRIPT` names a script that exists. The notebooks are
//! history and are not checked.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The program's exit code and everything it printed.
fn deepchess(args: &[&str]) -> (i32, String) {
    let out = common::deepchess(args);
    (out.status.code().unwrap_or(-1), format!("{}{}", common::text(&out.stdout), common::text(&out.stderr)))
}

/// README.md, docs/*.md and every README.md under data/, relative to the crate's root.
fn documents() -> Vec<PathBuf> {
    fn readmes(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                readmes(&p, out);
            } else if p.file_name().is_some_and(|n| n == "README.md") {
                out.push(p);
            }
        }
    }
    let mut files = vec![root().join("README.md")];
    for e in std::fs::read_dir(root().join("docs")).unwrap().flatten() {
        if e.path().extension().is_some_and(|x| x == "md") {
            files.push(e.path());
        }
    }
    readmes(&root().join("data"), &mut files);
    files.sort();
    files
}

/// The `deepchess …` commands of a markdown text: lines of fenced blocks (after an optional
/// `$ `) and inline code spans, which may run over several lines (whitespace collapsed).
fn commands(text: &str) -> Vec<String> {
    commands_of("deepchess ", text)
}

/// The commands starting with `program` (its name and a space), as [`commands`] finds them.
fn commands_of(program: &str, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut fenced, mut prose, mut shell) = (false, String::new(), String::new());
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            prose.push('\n');
            continue;
        }
        // Shell lines: in a fenced block, or in an indented one behind a `$ ` prompt, each
        // with an optional comment, continued by a trailing `\`.
        let indented = line.starts_with("    ") && line.trim_start().starts_with("$ ");
        if fenced || indented || !shell.is_empty() {
            let l = line.split(" #").next().unwrap().trim();
            let l = if shell.is_empty() { l.strip_prefix("$ ").unwrap_or(l) } else { l };
            if let Some(head) = l.strip_suffix('\\') {
                shell.push_str(head);
                shell.push(' ');
                continue;
            }
            shell.push_str(l);
            let cmd = shell.split_whitespace().collect::<Vec<_>>().join(" ");
            shell.clear();
            if cmd.starts_with(program) {
                out.push(cmd);
            }
        } else {
            prose.push_str(line);
            prose.push('\n');
        }
    }
    for span in prose.split('`').skip(1).step_by(2) {
        let span = span.split_whitespace().collect::<Vec<_>>().join(" ");
        if span.starts_with(program) {
            out.push(span);
        }
    }
    out
}

/// The `--flag` words of a text (a flag starts a word: `x--y` and `---` are not flags).
fn flags(text: &str) -> BTreeSet<String> {
    let b = text.as_bytes();
    let mut out = BTreeSet::new();
    let mut i = 0;
    while i + 2 < b.len() {
        let starts_word = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'-' || b[i - 1] == b'_');
        if starts_word && b[i] == b'-' && b[i + 1] == b'-' && b[i + 2].is_ascii_lowercase() {
            let mut j = i + 2;
            while j < b.len() && (b[j].is_ascii_lowercase() || b[j].is_ascii_digit() || b[j] == b'-') {
                j += 1;
            }
            out.insert(text[i..j].trim_end_matches('-').to_string());
            i = j;
        } else {
            i += 1;
        }
    }
    out
}

/// What is wrong with `cmd` against the CLI's help texts (cached per subcommand and system).
fn problems(cmd: &str, help: &mut BTreeMap<(String, String), (i32, String)>) -> Vec<String> {
    let words: Vec<&str> = cmd.split_whitespace().collect();
    let sub = words.get(1).copied().unwrap_or("");
    // `deepchess --help`, or a placeholder such as `deepchess SUBCOMMAND` or `deepchess …`.
    if !sub.starts_with(|c: char| c.is_ascii_lowercase()) {
        return Vec::new();
    }
    let system = match words.iter().position(|w| *w == "--system") {
        Some(i) if sub == "train" => words.get(i + 1).copied().unwrap_or("").to_string(),
        _ => String::new(),
    };
    let (code, text) = help.entry((sub.to_string(), system.clone())).or_insert_with(|| {
        let mut args = vec![sub];
        if !system.is_empty() {
            args.extend(["--system", system.as_str()]);
        }
        args.push("--help");
        deepchess(&args)
    });
    let name = if system.is_empty() { format!("deepchess {sub}") } else { format!("deepchess {sub} --system {system}") };
    if *code != 0 {
        return vec![format!("`{name} --help` fails: {}", text.trim())];
    }
    let known = flags(text);
    flags(cmd).into_iter().filter(|f| !known.contains(f)).map(|f| format!("{f} is not a flag of `{name}`")).collect()
}

#[test]
fn the_checker_finds_commands_and_refuses_unknown_flags() {
    let text = "Run `deepchess train --system dbn\n  --profile paper --no-such-flag 3` and\n```\n$ deepchess perft 5 --divide   # a comment --not-a-flag\n$ deepchess perft 4 \\\n    --fen x --wrapped\n```\n`deepchess nosuch --x`, `deepchess …`, `make train`.\n\n    $ deepchess perft 3 --indented\n";
    let found = commands(text);
    assert_eq!(found, ["deepchess perft 5 --divide", "deepchess perft 4 --fen x --wrapped", "deepchess perft 3 --indented", "deepchess train --system dbn --profile paper --no-such-flag 3", "deepchess nosuch --x", "deepchess …"]);
    let mut help = BTreeMap::new();
    assert_eq!(problems(&found[1], &mut help), ["--wrapped is not a flag of `deepchess perft`"]);
    assert_eq!(problems(&found[2], &mut help), ["--indented is not a flag of `deepchess perft`"]);
    let found = [found[0].clone(), found[3].clone(), found[4].clone(), found[5].clone()];
    assert!(problems(&found[3], &mut BTreeMap::new()).is_empty());
    assert!(problems(&found[0], &mut help).is_empty(), "{:?}", problems(&found[0], &mut help));
    assert_eq!(problems(&found[1], &mut help), ["--no-such-flag is not a flag of `deepchess train --system dbn`"]);
    let unknown = problems(&found[2], &mut help);
    assert!(unknown.len() == 1 && unknown[0].contains("unknown subcommand"), "{unknown:?}");
    assert_eq!(flags("a--b --c-d, [--e] x---"), ["--c-d", "--e"].iter().map(|s| s.to_string()).collect());
}

#[test]
fn every_documented_command_uses_flags_its_subcommand_knows() {
    let mut help = BTreeMap::new();
    let (mut checked, mut bad) = (0, Vec::new());
    for file in documents() {
        let text = std::fs::read_to_string(&file).unwrap();
        for cmd in commands(&text) {
            checked += 1;
            for p in problems(&cmd, &mut help) {
                bad.push(format!("{}: {p}: {cmd}", file.strip_prefix(root()).unwrap().display()));
            }
        }
    }
    assert!(checked >= 100, "only {checked} documented commands found: is the extraction broken?");
    assert!(bad.is_empty(), "documented commands the CLI would refuse:\n{}", bad.join("\n"));
}

#[test]
fn every_shipped_net_cited_with_a_checksum_is_cited_with_its_own() {
    let mut shipped = BTreeMap::new();
    for e in std::fs::read_dir(root().join("data/nets")).unwrap().flatten() {
        let p = e.path();
        if p.extension().is_some_and(|x| x == "dcw") {
            let (code, text) = deepchess(&["show", p.to_str().unwrap()]);
            assert_eq!(code, 0, "{text}");
            let at = text.find("tensors fnv64=").unwrap_or_else(|| panic!("no tensors checksum in: {text}")) + "tensors fnv64=".len();
            shipped.insert(p.file_name().unwrap().to_string_lossy().into_owned(), text[at..at + 8].to_string());
        }
    }
    assert!(shipped.len() >= 10, "{shipped:?}");
    let (mut cited, mut bad) = (0, Vec::new());
    for file in documents() {
        let text = std::fs::read_to_string(&file).unwrap();
        // `name.dcw` or `data/nets/name.dcw`, then an 8-hex checksum, bare or in parentheses.
        for (at, _) in text.match_indices(".dcw`") {
            let start = text[..at].rfind('`').unwrap_or(at);
            let name = text[start + 1..at + 4].trim_start_matches("data/nets/");
            let Some(sum) = shipped.get(name) else { continue };
            // `name` d4f6e2bc, `name` (d4f6e2bc), `name`, d4f6e2bc, `name` (EBNN, 3514e4fb),
            // `name` tensors d4f6e2bc.
            let mut after = text[at + 5..].trim_start_matches([' ', '\n', '(', ',']);
            if let Some((word, rest)) = after.split_once(", ") {
                if !word.is_empty() && word.len() <= 12 && word.chars().all(|c| c.is_ascii_alphabetic()) && word.chars().any(|c| !c.is_ascii_hexdigit()) {
                    after = rest;
                }
            }
            let after = after.strip_prefix("tensors ").unwrap_or(after);
            let hex: String = after.chars().take_while(|c| c.is_ascii_hexdigit()).collect();
            if hex.len() != 8 {
                continue;
            }
            cited += 1;
            if &hex != sum {
                let line = text[..at].lines().count();
                bad.push(format!("{}:{line}: {name} cited as {hex}, the file's is {sum}", file.strip_prefix(root()).unwrap().display()));
            }
        }
    }
    assert!(cited >= 30, "only {cited} citations found: is the extraction broken?");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// What is wrong with a documented `make …` command: a word that is not a target of the
/// Makefile, or a `VAR=value` whose variable the Makefile never reads (`[VAR=…]` is optional).
fn make_problems(cmd: &str, makefile: &str) -> Vec<String> {
    let targets: BTreeSet<&str> = makefile
        .lines()
        .filter_map(|l| l.split_once(':').filter(|(t, rest)| !rest.starts_with('=') && !t.is_empty() && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')).map(|(t, _)| t))
        .collect();
    // Words as the shell splits them: a quoted value (`VAR="--a b"`) is one word.
    let mut words: Vec<String> = vec![String::new()];
    let mut quote: Option<char> = None;
    for c in cmd.chars() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, c) if c.is_whitespace() => words.push(String::new()),
            (_, c) => words.last_mut().expect("one word at least").push(c),
        }
    }
    let mut out = Vec::new();
    for w in words.iter().filter(|w| !w.is_empty()).skip(1) {
        let w = w.trim_start_matches('[');
        if let Some((var, _)) = w.split_once('=') {
            let read = makefile.contains(&format!("$({var})"))
                || makefile.lines().any(|l| l.strip_prefix(var).is_some_and(|r| [" ?=", " =", " :=", "?=", "="].iter().any(|op| r.starts_with(op))));
            if !read {
                out.push(format!("{var} is not a variable of the Makefile"));
            }
        } else if w.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-') && !targets.contains(w) {
            out.push(format!("{w} is not a target of the Makefile"));
        }
    }
    out
}

#[test]
fn every_documented_make_command_names_targets_and_variables_the_makefile_has() {
    let makefile = std::fs::read_to_string(root().join("Makefile")).unwrap();
    assert_eq!(make_problems("make train-dbn [DBN_PROFILE=paper] NO_SUCH_VAR=1 no-such-target", &makefile), ["NO_SUCH_VAR is not a variable of the Makefile", "no-such-target is not a target of the Makefile"]);
    assert_eq!(make_problems("make train-neurochess NC_TRAIN_FLAGS=\"--slopes-off material\" no-such-target", &makefile), ["no-such-target is not a target of the Makefile"]);
    let (mut checked, mut bad) = (0, Vec::new());
    for file in documents() {
        let text = std::fs::read_to_string(&file).unwrap();
        for cmd in commands_of("make ", &text) {
            checked += 1;
            for p in make_problems(&cmd, &makefile) {
                bad.push(format!("{}: {p}: {cmd}", file.strip_prefix(root()).unwrap().display()));
            }
        }
    }
    assert!(checked >= 50, "only {checked} documented make commands found: is the extraction broken?");
    assert!(bad.is_empty(), "documented make commands the Makefile does not have:\n{}", bad.join("\n"));
}

#[test]
fn every_documented_script_exists() {
    let (mut checked, mut bad) = (0, Vec::new());
    for file in documents() {
        let text = std::fs::read_to_string(&file).unwrap();
        for cmd in commands_of("python3 ", &text) {
            checked += 1;
            let script = cmd.split_whitespace().nth(1).unwrap_or("");
            // `python3 …` and `python3 SCRIPT` are placeholders.
            if script.starts_with(|c: char| c.is_ascii_lowercase()) && !root().join(script).is_file() {
                bad.push(format!("{}: {script} does not exist: {cmd}", file.strip_prefix(root()).unwrap().display()));
            }
        }
    }
    assert!(checked >= 3, "only {checked} documented scripts found: is the extraction broken?");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
