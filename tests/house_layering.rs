//! Guards the one-way layering of `src/` described in docs/architecture.md (the floors).
//!
//! Every top-level module lives on a floor and may only reach down:
//!
//! ```text
//! floor 0: io                       floor 4: the systems (deepchess, dbn, cnn, neurochess, selfplay)
//! floor 1: chess, tensor            floor 5: players
//! floor 2: data, eval               floor 6: uci, arena
//! floor 3: train, search            floor 7: cli
//! top:     src/lib.rs, src/main.rs (the crate root may import anything)
//! ```
//!
//! The systems' folders are not listed here: they are read from the registry of the tree
//! checked, each module named in `SYSTEMS` of src/players.rs (`&crate::NAME::…`), so a new
//! system joins floor 4 by its registry line and nothing here changes.
//!
//! A module may import itself or a lower floor, never its own floor or a higher one,
//! and `search` may not import `tensor` (the search knows no network and no numerics).
//! A top-level module that is on no floor is an error of its own.
//!
//! An "import" is any `crate::NAME` path in code (not comments or literals), whether
//! in a `use`, a group `crate::{a::X, b::Y}` or an inline expression, plus
//! `super::` chains that climb out to the crate root. Code under `#[cfg(test)]` counts.
//!
//! Beside the floors, `cli` (which may import any floor) names no system's module: a
//! system's commands, benchmark parts and shapes reach it through `SYSTEMS`.
//!
//! And one rule of the numeric engine: instruction sets are chosen in
//! `src/tensor/kernels/` only (no `#[target_feature]` or `is_x86_feature_detected!`
//! elsewhere; code generic over the flavour runs through `tensor::kernels::dispatch`).
//!
//! To check another checkout, point the test at its `src/`:
//! `DEEPCHESS_LAYERING_SRC=/path/to/checkout/src cargo test --test house_layering`.

use std::collections::{BTreeSet, HashSet};
use std::fs;
use std::path::{Path, PathBuf};

/// docs/architecture.md: the shared floors, lowest first (index = floor number); floor 4
/// holds the systems, read from the registry ([`systems_of`]).
const FLOORS: &[&[&str]] = &[
    &["io"],
    &["chess", "tensor"],
    &["data", "eval"],
    &["train", "search"],
    &[],
    &["players"],
    &["uci", "arena"],
    &["cli"],
];
/// The floor of the system folders.
const SYSTEMS_FLOOR: usize = 4;

/// The floors of one tree: [`FLOORS`] and its systems.
struct Floors {
    systems: Vec<String>,
}

impl Floors {
    fn of(&self, module: &str) -> Option<usize> {
        if self.systems.iter().any(|s| s == module) {
            return Some(SYSTEMS_FLOOR);
        }
        FLOORS.iter().position(|floor| floor.contains(&module))
    }
}

/// The systems of the tree under `src_root`: the modules its `players.rs` names in the
/// `SYSTEMS` table (`&crate::NAME::pipeline::SYSTEM` and the like), in order.
fn systems_of(src_root: &Path) -> Vec<String> {
    let Ok(text) = fs::read_to_string(src_root.join("players.rs")) else { return Vec::new() };
    let code = strip_comments_and_literals(&text);
    let Some(start) = code.find("const SYSTEMS") else { return Vec::new() };
    let end = code[start..].find("];").map_or(code.len(), |e| start + e);
    let mut systems: Vec<String> = Vec::new();
    for (name, _) in referenced_modules(&code[start..end], &["players".to_string()]) {
        if !systems.contains(&name) {
            systems.push(name);
        }
    }
    systems
}

// ---------------------------------------------------------------- lexer

fn is_ident_char(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// Blanks out comments and string/char literals, keeping every newline so that
/// line numbers in the result match the original. Lifetimes (`'a`) are kept.
fn strip_comments_and_literals(src: &str) -> String {
    let s: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    while i < s.len() {
        let (c, next) = (s[i], s.get(i + 1).copied());
        // Where a comment or literal starting at `i` ends (exclusive), if one starts here.
        let end = if c == '/' && next == Some('/') {
            Some(s[i..].iter().position(|&c| c == '\n').map_or(s.len(), |p| i + p))
        } else if c == '/' && next == Some('*') {
            let (mut depth, mut j) = (1, i + 2); // block comments nest in Rust
            while j < s.len() && depth > 0 {
                match (s[j], s.get(j + 1)) {
                    ('/', Some('*')) => (depth, j) = (depth + 1, j + 2),
                    ('*', Some('/')) => (depth, j) = (depth - 1, j + 2),
                    _ => j += 1,
                }
            }
            Some(j)
        } else if c == '"' {
            let mut j = i + 1;
            while j < s.len() && s[j] != '"' {
                j += if s[j] == '\\' { 2 } else { 1 }; // skip the escaped character
            }
            Some(j + 1)
        } else if c == '\'' {
            char_literal_end(&s, i) // `None` for a lifetime or loop label: ordinary code
        } else if i == 0 || !is_ident_char(s[i - 1]) {
            raw_string_end(&s, i) // only where a token starts: the `r` ending `for` opens none
        } else {
            None
        };
        match end {
            Some(end) => {
                let end = end.min(s.len());
                out.extend(s[i..end].iter().map(|&c| if c == '\n' { '\n' } else { ' ' }));
                i = end;
            }
            None => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

/// If a raw (`r"…"`, `r#"…"#`, `br#"…"#`, `cr"…"`) string starts at `i`, where it ends.
/// Plain byte/C strings (`b"…"`) fall through to the `"` case after their prefix letter.
fn raw_string_end(s: &[char], i: usize) -> Option<usize> {
    let mut j = i;
    if matches!(s.get(j), Some('b' | 'c')) {
        j += 1;
    }
    if s.get(j) != Some(&'r') {
        return None;
    }
    j += 1;
    let hashes = s[j..].iter().take_while(|&&c| c == '#').count();
    j += hashes;
    if s.get(j) != Some(&'"') {
        return None; // e.g. a raw identifier `r#type`, or just a name
    }
    // It ends at the first `"` followed by as many `#` as it opened with.
    let close: Vec<char> = std::iter::once('"').chain(std::iter::repeat('#').take(hashes)).collect();
    let body = j + 1;
    Some(s[body..].windows(close.len()).position(|w| w == close).map_or(s.len(), |p| body + p + close.len()))
}

/// If a char literal (`'a'`, `'\n'`, `'\u{1F600}'`) starts at `i`, where it ends;
/// `None` for a lifetime or label such as `'a` or `'static`.
fn char_literal_end(s: &[char], i: usize) -> Option<usize> {
    match s.get(i + 1)? {
        '\\' => {
            // Escape: the closing quote comes within a few characters (`\u{10FFFF}` is longest).
            let close = s.iter().skip(i + 3).take(10).position(|&c| c == '\'' || c == '\n')?;
            let j = i + 3 + close;
            (s[j] == '\'').then_some(j + 1)
        }
        '\n' => None,
        _ => (s.get(i + 2) == Some(&'\'')).then_some(i + 3),
    }
}

// ---------------------------------------------------------------- tokens and paths

#[derive(Debug, PartialEq)]
enum Tok {
    Ident(String),
    PathSep,
    Punct(char),
}

/// Splits stripped code into identifiers, `::` and single punctuation, with line numbers.
fn tokenize(code: &str) -> Vec<(Tok, usize)> {
    let s: Vec<char> = code.chars().collect();
    let (mut toks, mut line, mut i) = (Vec::new(), 1, 0);
    while i < s.len() {
        let c = s[i];
        if c.is_whitespace() {
            line += usize::from(c == '\n');
            i += 1;
        } else if is_ident_char(c) {
            let len = s[i..].iter().take_while(|&&c| is_ident_char(c)).count();
            toks.push((Tok::Ident(s[i..i + len].iter().collect()), line));
            i += len;
        } else if c == ':' && s.get(i + 1) == Some(&':') {
            toks.push((Tok::PathSep, line));
            i += 2;
        } else {
            toks.push((Tok::Punct(c), line));
            i += 1;
        }
    }
    toks
}

fn ident(tok: Option<&(Tok, usize)>) -> Option<&str> {
    match tok {
        Some((Tok::Ident(name), _)) => Some(name),
        _ => None,
    }
}

/// Top-level names (with lines) of the use tree starting at `toks[i]`, right after
/// `crate::`: `name`, or `{a::X, b::{Y, Z}, {c}}`. `self` and `*` name no module.
fn tree_heads(toks: &[(Tok, usize)], i: usize, heads: &mut Vec<(String, usize)>) {
    match toks.get(i) {
        Some((Tok::Ident(name), line)) if name != "self" => heads.push((name.clone(), *line)),
        Some((Tok::Punct('{'), _)) => {
            // Walk the group; the first token after `{` or a depth-1 `,` starts an item.
            let (mut depth, mut j, mut item_start) = (1, i + 1, true);
            while j < toks.len() && depth > 0 {
                if item_start && depth == 1 {
                    tree_heads(toks, j, heads);
                }
                item_start = false;
                match toks[j].0 {
                    Tok::Punct('{') => depth += 1,
                    Tok::Punct('}') => depth -= 1,
                    Tok::Punct(',') if depth == 1 => item_start = true,
                    _ => {}
                }
                j += 1;
            }
        }
        _ => {}
    }
}

/// Every top-level module referred to in `code` (already stripped) of a file whose
/// module path is `file_module` (e.g. `["search", "foo"]`), with line numbers.
fn referenced_modules(code: &str, file_module: &[String]) -> Vec<(String, usize)> {
    let toks = tokenize(code);
    let mut heads = Vec::new();
    // Inline `mod name { … }` blocks change what `super` means; track them by brace depth.
    let (mut depth, mut inline_mods): (usize, Vec<(String, usize)>) = (0, Vec::new());
    for i in 0..toks.len() {
        match &toks[i].0 {
            Tok::Punct('{') => {
                depth += 1;
                if i >= 2 && ident(toks.get(i - 2)) == Some("mod") {
                    if let Some(name) = ident(toks.get(i - 1)) {
                        inline_mods.push((name.to_string(), depth));
                    }
                }
            }
            Tok::Punct('}') => {
                if inline_mods.last().is_some_and(|(_, d)| *d == depth) {
                    inline_mods.pop();
                }
                depth = depth.saturating_sub(1);
            }
            _ => {}
        }
        // Only path *starts* count: not `a::crate`, and `pub(crate)` has no `::`.
        let starts_path = i == 0 || toks[i - 1].0 != Tok::PathSep;
        if !starts_path || toks.get(i + 1).map(|t| &t.0) != Some(&Tok::PathSep) {
            continue;
        }
        match ident(toks.get(i)) {
            Some("crate") => tree_heads(&toks, i + 2, &mut heads),
            Some("super") => {
                let mut module: Vec<String> = file_module.to_vec();
                module.extend(inline_mods.iter().map(|(name, _)| name.clone()));
                let (mut j, mut valid) = (i, true);
                while ident(toks.get(j)) == Some("super") && toks.get(j + 1).map(|t| &t.0) == Some(&Tok::PathSep) {
                    valid &= module.pop().is_some(); // climbing above the crate root is no valid Rust
                    j += 2;
                }
                match module.first() {
                    Some(top) => heads.push((top.clone(), toks[i].1)),
                    None if valid => tree_heads(&toks, j, &mut heads), // climbed to the crate root
                    None => {}
                }
            }
            _ => {}
        }
    }
    heads
}

// ---------------------------------------------------------------- the check

fn rust_files(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for path in paths {
        if path.is_dir() {
            rust_files(&path, files);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            files.push(path);
        }
    }
}

/// Why `from` (on `floor`) may not import `to`, or `None` if it may.
fn rule_broken(floors: &Floors, from: &str, floor: usize, to: &str) -> Option<String> {
    if from == to {
        return None;
    }
    Some(match floors.of(to) {
        None => format!("imports {to}, which is on no floor, so it is not below it (docs/architecture.md)"),
        Some(f) if f == floor => format!(
            "imports {to} (floor {f}): modules on the same floor may not import each other (docs/architecture.md)"
        ),
        Some(f) if f > floor => format!(
            "imports {to} (floor {f}), which is not below it: a module may import only lower floors (docs/architecture.md)"
        ),
        Some(_) if from == "search" && to == "tensor" => format!(
            "imports {to}: the search knows no network and no numerics, so search may not import tensor (docs/architecture.md)"
        ),
        Some(_) => return None,
    })
}

/// All layering violations under `src_root`, one message per offending reference.
fn violations(src_root: &Path) -> Vec<String> {
    let src_name = src_root.file_name().map_or("src".into(), |n| n.to_string_lossy().into_owned());
    let floors = Floors { systems: systems_of(src_root) };
    let mut files = Vec::new();
    rust_files(src_root, &mut files);
    let (mut out, mut unknown) = (Vec::new(), BTreeSet::new());
    for file in files {
        let Ok(rel) = file.strip_prefix(src_root) else { continue };
        let mut module: Vec<String> =
            rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
        let shown = format!("{src_name}/{}", module.join("/"));
        if module.len() == 1 && (module[0] == "lib.rs" || module[0] == "main.rs") {
            continue; // the crate root sits above every floor
        }
        if let Some(last) = module.last_mut() {
            last.truncate(last.len() - ".rs".len()); // rust_files only returns `*.rs`
        }
        if module.len() > 1 && module.last().is_some_and(|m| m == "mod") {
            module.pop();
        }
        let top = module[0].clone();
        let Some(floor) = floors.of(&top) else {
            let place = if rel.components().count() == 1 { format!("{top}.rs") } else { format!("{top}/") };
            unknown.insert(format!(
                "{src_name}/{place} is not a floor of docs/architecture.md: every module must sit on one (a system's folder sits on floor {SYSTEMS_FLOOR} by its line in SYSTEMS, src/players.rs)"
            ));
            continue; // a module with no floor has no rule to check its imports against
        };
        let Ok(bytes) = fs::read(&file) else { continue };
        let code = strip_comments_and_literals(&String::from_utf8_lossy(&bytes));
        let mut seen = HashSet::new();
        for (target, line) in referenced_modules(&code, &module) {
            if let Some(why) = rule_broken(&floors, &top, floor, &target) {
                if seen.insert((line, target.clone())) {
                    out.push(format!("{shown}:{line}: {top} (floor {floor}) {why}"));
                }
            }
        }
    }
    out.extend(unknown);
    out
}

#[test]
fn layering_follows_the_floors() {
    let root = std::env::var_os("DEEPCHESS_LAYERING_SRC")
        .map_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/src")), PathBuf::from);
    assert!(root.is_dir(), "{} is not a directory", root.display());
    assert!(!systems_of(&root).is_empty(), "no SYSTEMS table in {}/players.rs", root.display());
    let found = violations(&root);
    assert!(
        found.is_empty(),
        "{} layering violation(s) of docs/architecture.md in {}:\n{}",
        found.len(),
        root.display(),
        found.join("\n")
    );
}

// ---------------------------------------------------------------- cli names no system

/// Every reference from `cli/` to a system's module (a `crate::deepchess::…` path, whatever
/// the system): the command line may import any floor, but a system's commands, benchmark
/// parts and shapes reach it through `SYSTEMS` (src/players.rs), so that a new system is
/// run, listed and benchmarked by `cli` unedited (docs/architecture.md, "cli names no system").
fn cli_references_to_systems(src_root: &Path) -> Vec<String> {
    let src_name = src_root.file_name().map_or("src".into(), |n| n.to_string_lossy().into_owned());
    let systems = systems_of(src_root);
    let mut files = Vec::new();
    rust_files(&src_root.join("cli"), &mut files);
    let mut out = Vec::new();
    for file in files {
        let Ok(rel) = file.strip_prefix(src_root) else { continue };
        let mut module: Vec<String> = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
        if let Some(last) = module.last_mut() {
            last.truncate(last.len() - ".rs".len());
        }
        if module.len() > 1 && module.last().is_some_and(|m| m == "mod") {
            module.pop();
        }
        let Ok(bytes) = fs::read(&file) else { continue };
        let code = strip_comments_and_literals(&String::from_utf8_lossy(&bytes));
        let mut seen = HashSet::new();
        for (target, line) in referenced_modules(&code, &module) {
            if systems.contains(&target) && seen.insert((line, target.clone())) {
                out.push(format!(
                    "{src_name}/{}:{line}: cli names the system {target}: its commands, bench parts and shapes come through SYSTEMS (src/players.rs)",
                    rel.display()
                ));
            }
        }
    }
    out
}

#[test]
fn cli_names_no_system() {
    let root = std::env::var_os("DEEPCHESS_LAYERING_SRC")
        .map_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/src")), PathBuf::from);
    let found = cli_references_to_systems(&root);
    assert!(found.is_empty(), "{} reference(s) to a system in src/cli/:\n{}", found.len(), found.join("\n"));
}

#[test]
fn cli_check_catches_a_system_named_in_cli() {
    let tree = TempTree::new();
    tree.file("players.rs", "pub const SYSTEMS: &[&System] = &[\n    &crate::deepchess::pipeline::SYSTEM,\n    &crate::cnn::pipeline::SYSTEM,\n];\n");
    tree.file(
        "cli/bench.rs",
        "use crate::players;\n// crate::cnn::bench\nconst S: &str = \"crate::deepchess\";\nfn f() { crate::cnn::bench::CONV; }\n\
         use crate::{search::Player, deepchess::model::Arch};\n",
    );
    tree.file("cli/sub/mod.rs", "use super::super::deepchess::features::INPUTS;\n");
    tree.file("cnn/x.rs", "use crate::deepchess::model::Net;\n"); // another floor's rule, not this check's
    let mut found = cli_references_to_systems(&tree.0.join("src"));
    found.sort();
    let expected = ["src/cli/bench.rs:4: cli names the system cnn", "src/cli/bench.rs:5: cli names the system deepchess", "src/cli/sub/mod.rs:1: cli names the system deepchess"];
    assert_eq!(found.len(), expected.len(), "{}", found.join("\n"));
    for (got, want) in found.iter().zip(expected) {
        assert!(got.starts_with(want), "{got:?} is not {want:?}");
    }
}

// ---------------------------------------------------------------- instruction sets

/// The words that choose an instruction set: only `src/tensor/kernels/` may say them.
const ISA_WORDS: &[&str] = &["target_feature", "is_x86_feature_detected"];

/// Every use (in code, not comments or literals) of [`ISA_WORDS`] under `src_root` outside
/// `tensor/kernels/`: an instruction-set decision taken elsewhere than the numeric engine's
/// kernels (docs/architecture.md, "Numerics").
fn isa_decisions_outside_kernels(src_root: &Path) -> Vec<String> {
    let src_name = src_root.file_name().map_or("src".into(), |n| n.to_string_lossy().into_owned());
    let mut files = Vec::new();
    rust_files(src_root, &mut files);
    let mut out = Vec::new();
    for file in files {
        let Ok(rel) = file.strip_prefix(src_root) else { continue };
        if rel.starts_with("tensor/kernels") {
            continue;
        }
        let Ok(bytes) = fs::read(&file) else { continue };
        let code = strip_comments_and_literals(&String::from_utf8_lossy(&bytes));
        for (tok, line) in tokenize(&code) {
            if let Tok::Ident(word) = tok {
                if ISA_WORDS.contains(&word.as_str()) {
                    out.push(format!(
                        "{src_name}/{}:{line}: {word} outside tensor/kernels/: instruction sets are chosen there (a FlavourFn run by Kernel::run, or a *_with kernel taking a Kernel)",
                        rel.display()
                    ));
                }
            }
        }
    }
    out
}

#[test]
fn instruction_sets_are_chosen_in_tensor_kernels_only() {
    let root = std::env::var_os("DEEPCHESS_LAYERING_SRC")
        .map_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/src")), PathBuf::from);
    let found = isa_decisions_outside_kernels(&root);
    assert!(found.is_empty(), "{} instruction-set decision(s) outside src/tensor/kernels/:\n{}", found.len(), found.join("\n"));
}

// ---------------------------------------------------------------- tests of the checker

#[test]
fn isa_check_catches_target_features_outside_the_kernels() {
    let tree = TempTree::new();
    tree.file("tensor/kernels/simd.rs", "#[target_feature(enable = \"avx2\")]\nunsafe fn f() {}\nfn g() -> bool { is_x86_feature_detected!(\"avx2\") }\n");
    tree.file(
        "neurochess/player.rs",
        "// a #[target_feature] wrapper, once\nconst S: &str = \"is_x86_feature_detected\";\n\
         #[cfg(target_arch = \"x86_64\")]\n#[target_feature(enable = \"avx2\")]\nunsafe fn hidden() {}\n",
    );
    tree.file("tensor/layers/dense.rs", "fn f() -> bool {\n    std::is_x86_feature_detected!(\"fma\")\n}\n");
    let found = isa_decisions_outside_kernels(&tree.0.join("src"));
    let expected = ["src/neurochess/player.rs:4: target_feature outside", "src/tensor/layers/dense.rs:2: is_x86_feature_detected outside"];
    for want in expected {
        assert!(found.iter().any(|v| v.starts_with(want)), "missing {want:?} in:\n{}", found.join("\n"));
    }
    assert_eq!(found.len(), expected.len(), "{}", found.join("\n"));
}

#[test]
fn lexer_strips_comments_and_literals_but_keeps_lifetimes_and_lines() {
    let src = "a // crate::x\n/* x /* nested */ crate::y */ b\n\"s \\\" crate::z\" r#\"q\"# br\"w\"\n\
               '\\n' 'c' '\\u{1F600}' b'x' &'a T<'static> r#type\n";
    let out = strip_comments_and_literals(src);
    assert_eq!(out.lines().count(), 4, "newlines kept: {out:?}");
    let words: Vec<&str> = out.split_whitespace().collect();
    assert_eq!(words, ["a", "b", "b", "&'a", "T<'static>", "r#type"], "{out:?}");
    assert_eq!(out.lines().nth(1).map(str::trim), Some("b"), "line 2 keeps its code");
}

/// A temporary tree removed on drop, even when an assertion fails.
struct TempTree(PathBuf);

impl TempTree {
    fn new() -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        Self(std::env::temp_dir().join(format!("deepchess-layering-{}-{nanos}", std::process::id())))
    }
    fn file(&self, rel: &str, text: &str) {
        let path = self.0.join("src").join(rel);
        fs::create_dir_all(path.parent().expect("file has a parent")).expect("mkdir");
        fs::write(path, text).expect("write");
    }
}

impl Drop for TempTree {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

#[test]
fn layering_check_catches_each_kind_of_violation() {
    let tree = TempTree::new();
    tree.file("lib.rs", "pub mod data; pub mod play; use crate::cli::run;\n");
    tree.file(
        "data/datagen.rs",
        "use crate::play::uci_client::Engine;\nuse crate::arena::Match;\nuse crate::eval::score;\n\
         /// use crate::cli::x;\n// crate::uci\n/* crate::players /* nested */ */\n\
         const S: &str = \"crate::search::x\"; const R: &str = r#\"crate::train\"#;\n\
         fn f<'a>(x: &'a str) -> &'a str { let c = '\"'; x } // 'crate::cnn\n\
         #[cfg(test)]\nmod tests {\n    use super::*;\n    fn t() { crate::uci::go(); }\n}\n",
    );
    tree.file("dbn/x.rs", "use crate::deepchess::model::Net;\nstruct S<'a>(&'a crate::selfplay::Game, char);\n");
    tree.file("search/mod.rs", "use crate::{chess::Position,\n    tensor::Kernel};\nfn f() { crate::players::find(p); }\n");
    // In the inline `mod tests`, `super::super` is `search`, not the crate root.
    tree.file(
        "search/x.rs",
        "use super::super::tensor::Matrix;\nuse super::tt::Table;\nuse self::y::Z;\n\
         #[cfg(test)]\nmod tests {\n    use super::super::tt::Table;\n}\n",
    );
    tree.file("cli/x.rs", "use crate::players;\nuse crate::{uci::Engine, arena::{Gauntlet, Elo}};\n");
    tree.file(
        "deepchess/x.rs",
        "use crate::search::MAX_PLY;\nfn f<'a>(b: &'a crate::chess::Board) -> crate::tensor::Matrix { todo!() }\n",
    );
    // The registry names the systems of floor 4: cnn/ has a folder but no line, so no floor.
    tree.file(
        "players.rs",
        "pub(crate) fn find() {}\npub(in crate::players) fn g() {}\n\
         pub const SYSTEMS: &[&System] = &[\n    &crate::deepchess::pipeline::SYSTEM,\n    // &crate::cnn::SYSTEM,\n    \
         &crate::dbn::pipeline::SYSTEM,\n    &crate::selfplay::SYSTEM,\n];\nconst LATER: &str = crate::play::X;\n",
    );
    tree.file("cnn/x.rs", "use crate::chess::Board;\n");
    tree.file("play/mod.rs", "use crate::cli::x;\n");
    // The bottom floor imports nothing of the crate; everything may import it.
    tree.file("io/x.rs", "use crate::chess::Position;\nuse super::atomic::write_atomic;\n");
    tree.file("chess/x.rs", "use crate::io::write_atomic;\n");

    let found = violations(&tree.0.join("src"));
    let expected = [
        "src/data/datagen.rs:1: data (floor 2) imports play, which is on no floor",
        "src/data/datagen.rs:2: data (floor 2) imports arena (floor 6), which is not below it",
        "src/data/datagen.rs:3: data (floor 2) imports eval (floor 2): modules on the same floor",
        "src/data/datagen.rs:12: data (floor 2) imports uci (floor 6)", // inside #[cfg(test)]
        "src/dbn/x.rs:1: dbn (floor 4) imports deepchess (floor 4): modules on the same floor",
        "src/dbn/x.rs:2: dbn (floor 4) imports selfplay (floor 4)", // right after a lifetime
        "src/search/mod.rs:2: search (floor 3) imports tensor: the search knows no network",
        "src/search/mod.rs:3: search (floor 3) imports players (floor 5), which is not below it",
        "src/search/x.rs:1: search (floor 3) imports tensor: the search knows no network",
        "src/play/ is not a floor of docs/architecture.md",
        "src/cnn/ is not a floor of docs/architecture.md",
        "src/players.rs:9: players (floor 5) imports play, which is on no floor",
        "src/io/x.rs:1: io (floor 0) imports chess (floor 1), which is not below it",
    ];
    for want in expected {
        assert!(found.iter().any(|v| v.starts_with(want)), "missing {want:?} in:\n{}", found.join("\n"));
    }
    assert_eq!(found.len(), expected.len(), "unexpected extra violations:\n{}", found.join("\n"));
}

/// The integration tests are grouped by the floor they guard, by the prefix of their file's
/// name (`io_`, `chess_`, `tensor_`, `data_`, `train_`, `search_`, `system_`, `players_`,
/// `uci_`, `arena_`, and `house_` for the checks of the whole crate), and they run the
/// program through one runner (`common::command`, `common::deepchess`) rather than a copy
/// of their own: no test file outside `tests/common` names the binary.
#[test]
fn test_files_are_grouped_by_floor() {
    const PREFIXES: &[&str] = &["io_", "chess_", "tensor_", "data_", "train_", "search_", "system_", "players_", "uci_", "arena_", "house_"];
    let tests = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut stray = Vec::new();
    let mut copies = Vec::new();
    for e in std::fs::read_dir(&tests).unwrap() {
        let p = e.unwrap().path();
        let Some(name) = p.file_name().and_then(|n| n.to_str()).filter(|n| n.ends_with(".rs")) else { continue };
        if !PREFIXES.iter().any(|pre| name.starts_with(pre)) {
            stray.push(name.to_string());
        }
        let text = std::fs::read_to_string(&p).unwrap();
        if text.lines().any(|l| l.starts_with("fn deepchess(") || l.starts_with("pub fn deepchess(")) && !text.contains("common::deepchess(") {
            copies.push(name.to_string());
        }
        // The binary is started by common::command alone (it clears an inherited failpoint
        // and sets the folder): its path in a test file is a spawn bypassing it.
        if text.contains(concat!("CARGO_BIN_EXE_", "deepchess")) {
            copies.push(format!("{name} (names the binary: use common::command or common::exe)"));
        }
    }
    assert!(stray.is_empty(), "test files without a floor's prefix ({}): {stray:?}", PREFIXES.join(" "));
    assert!(copies.is_empty(), "test files with a runner of their own (use common::deepchess): {copies:?}");
}
