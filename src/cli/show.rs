//! `deepchess show FILE`: what a weight file (a net, both agents, a checkpoint) or a dataset
//! is and what made it: its header, the command that makes it again (`made.command`, see
//! `io::provenance`) with the kernel, version and inputs it was made with, its tensors'
//! shapes and parameter count. Files saved before headers recorded their command say so.

use crate::data::dataset::Dataset;
use crate::io::args::{parse, usage, CliError};
use crate::io::provenance as made;
use crate::io::text::printable;
use crate::tensor::WeightFile;
use std::path::Path;

/// The report on one weight file's header and tensors.
pub fn describe_weights(wf: &WeightFile) -> String {
    let mut s = String::new();
    s += &describe_meta(&wf.meta);
    let params: usize = wf.tensors.iter().filter(|(n, _)| !n.starts_with("opt.")).map(|(_, m)| m.len()).sum();
    let opt = wf.tensors.iter().filter(|(n, _)| n.starts_with("opt.")).count();
    s += &format!("tensors: {} ({params} parameters{})\n", wf.tensors.len() - opt, if opt > 0 { format!("; {opt} of optimizer state") } else { String::new() });
    for (n, m) in wf.tensors.iter().filter(|(n, _)| !n.starts_with("opt.")).take(40) {
        s += &format!("  {}: {}×{}\n", printable(n), m.rows(), m.cols());
    }
    if wf.tensors.len() - opt > 40 {
        s += &format!("  … {} more\n", wf.tensors.len() - opt - 40);
    }
    s
}

/// The header, the `made.*` keys first and the reproducing command spelled out.
fn describe_meta(meta: &[(String, String)]) -> String {
    let mut s = String::new();
    // Every value is the file's text: a line feed in it would print a line the file made up.
    let meta: Vec<(String, String)> = meta.iter().map(|(k, v)| (printable(k), printable(v))).collect();
    let get = |k: &str| meta.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str());
    match get(made::COMMAND) {
        Some(cmd) => {
            s += &format!("made by: {cmd}\n");
            match get(made::KERNEL) {
                Some(k) => {
                    s += &format!("  kernel: {k} (another kernel may add products in another order, and the same command there give other last bits: data/nets/README.md says which nets do)\n");
                    s += &format!("  again, by the program below on this kernel: DEEPCHESS_KERNEL={} {cmd}\n", crate::io::provenance::shell_word(k));
                }
                None => s += "  kernel: not recorded\n",
            }
            s += &format!("  program: {}\n", get(made::VERSION).unwrap_or("not recorded"));
            s += &format!("  precision: {}\n", get(made::PRECISION).unwrap_or("not recorded"));
            if let Some(settings) = get(made::SETTINGS) {
                s += &format!("  settings: {settings}\n");
            }
            if let Some(note) = get(made::NOTE) {
                s += &format!("  note: {note}\n");
            }
            match get(made::INPUTS) {
                Some(inputs) => {
                    s += "  inputs:\n";
                    for i in made::input_entries(inputs) {
                        s += &format!("    {i}\n");
                    }
                }
                None => s += "  inputs: none read from files\n",
            }
        }
        None => s += "made by: not recorded (saved before headers recorded their command, or by a program that is not the command line; see data/nets/README.md for the shipped nets)\n",
    }
    for (k, v) in meta.iter().filter(|(k, _)| !k.starts_with("made.")) {
        s += &format!("{k}: {v}\n");
    }
    s
}

pub fn run(args: &[String]) -> Result<(), CliError> {
    let help = usage(
        "show",
        "FILE",
        "What a weight file (net, agents, checkpoint) or a dataset is and the command that made it: its header (kind, architecture, profile, seed, …), the recorded command with the kernel, program version and input files (size and checksum) it was made with, and its tensors.",
        &[],
    );
    let p = parse("show", args, &[], &help)?;
    let [file] = p.positional.as_slice() else {
        return Err(CliError::Usage("deepchess show: one FILE is needed".into()));
    };
    let path = Path::new(file);
    let mut head = [0u8; 8];
    {
        use std::io::Read;
        let mut f = crate::io::open_regular(path, 16 << 30, "file to show").map_err(|e| CliError::Failed(format!("{file}: {e}")))?;
        let n = f.read(&mut head).map_err(|e| CliError::Failed(format!("{file}: {e}")))?;
        if n < 8 {
            return Err(CliError::Failed(format!("{file}: {n} bytes, too short for a weight file or a dataset")));
        }
    }
    if &head == crate::tensor::weights::MAGIC {
        let wf = WeightFile::load(path).map_err(|e| CliError::Failed(e.to_string()))?;
        println!("{file}: weight file, {} bytes, checksum {}, tensors {}", std::fs::metadata(path).map_or(0, |m| m.len()), checksum_of(path), tensor_checksum(&wf));
        print!("{}", describe_weights(&wf));
        return Ok(());
    }
    if &head == crate::data::dataset::MAGIC {
        let d = Dataset::load(path).map_err(|e| CliError::Failed(e.to_string()))?;
        println!("{file}: dataset, {} records ({} W, {} L), checksum {}", d.records.len(), d.wins().count(), d.losses().count(), checksum_of(path));
        print!("{}", describe_meta(&d.meta));
        return Ok(());
    }
    Err(CliError::Failed(format!("{file}: neither a weight file nor a dataset (its first bytes are not DCHSWGT or the dataset magic); a labelled set: deepchess label --show FILE")))
}

/// The checksum of a weight file's tensors alone (names, shapes, values; the header aside), as
/// `fnv64=HEX`: it names a net across header changes (docs/results.md cites nets by it).
pub fn tensor_checksum(wf: &WeightFile) -> String {
    let bare = WeightFile { meta: Vec::new(), tensors: wf.tensors.clone() };
    format!("fnv64={:016x}", crate::io::fnv1a64(&bare.to_bytes()))
}

/// The FNV-1a 64 the file ends with (what `load` verified), as `fnv64=HEX`.
fn checksum_of(path: &Path) -> String {
    use std::io::{Read, Seek, SeekFrom};
    let mut b = [0u8; 8];
    match crate::io::open_regular(path, 16 << 30, "file to show").and_then(|mut f| f.seek(SeekFrom::End(-8)).and_then(|_| f.read_exact(&mut b))) {
        Ok(()) => format!("fnv64={:016x}", u64::from_le_bytes(b)),
        Err(_) => "unreadable".into(),
    }
}
