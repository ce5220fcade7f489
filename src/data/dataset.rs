//! W/L position datasets on disk. Records hold the board, not an encoding: each system
//! computes its own input from it.
//!
//! File layout (little endian):
//! ```text
//! magic   b"DCHSDATA"        8 bytes
//! version u32 = 1
//! meta    u32 length + UTF-8 "key=value\n" lines (source, set, split, sampling, seed, …)
//! count   u64 records
//! records count × 40 bytes:  board nibbles [u8; 32] | flags u8 | label u8 | ply u16 | game u32
//! check   u64 FNV-1a of every byte before it
//! ```
//! Board nibble of square s: 0 empty, 1..=6 White P N B R Q K, 7..=12 Black; flags bit 0 =
//! White to move, bits 1..=4 = castling WK WQ BK BQ. Label 1 = W (White won), 0 = L.

use crate::chess::{Color, Position, Square};
use std::fmt;
use std::path::{Path, PathBuf};

pub const MAGIC: &[u8; 8] = b"DCHSDATA";
const VERSION: u32 = 1;
pub const RECORD_BYTES: usize = 40;

/// One sampled position with its label and where it came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Record {
    pub board: [u8; 32],
    pub flags: u8,
    /// 1 when White won the game the position comes from.
    pub label: u8,
    pub ply: u16,
    pub game: u32,
}

impl Record {
    pub fn new(pos: &Position, white_won: bool, ply: u16, game: u32) -> Record {
        let mut board = [0u8; 32];
        for sq in Square::all() {
            if let Some(p) = pos.piece_on(sq) {
                let v = 1 + p.role.index() as u8 + 6 * p.color.index() as u8;
                board[sq.index() / 2] |= v << (4 * (sq.index() % 2));
            }
        }
        let flags = (pos.turn() == Color::White) as u8 | pos.castling_rights() << 1;
        Record { board, flags, label: white_won as u8, ply, game }
    }

    /// The pieces as twelve bitboards, index `colour * 6 + role` (White's pawns first,
    /// Black's king last): what every system's encoding is computed from.
    pub fn planes(&self) -> [u64; 12] {
        let mut planes = [0u64; 12];
        for s in 0..64 {
            let v = self.board[s / 2] >> (4 * (s % 2)) & 15;
            if (1..=12).contains(&v) {
                planes[v as usize - 1] |= 1 << s;
            }
        }
        planes
    }

    pub fn white_to_move(&self) -> bool {
        self.flags & 1 != 0
    }

    /// Castling rights as the position's four bits (`chess::position::castle`).
    pub fn castling(&self) -> u8 {
        self.flags >> 1 & 15
    }

    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.board);
        out.push(self.flags);
        out.push(self.label);
        out.extend_from_slice(&self.ply.to_le_bytes());
        out.extend_from_slice(&self.game.to_le_bytes());
    }

    fn read(b: &[u8]) -> Record {
        let mut board = [0u8; 32];
        board.copy_from_slice(&b[..32]);
        Record {
            board,
            flags: b[32],
            label: b[33],
            ply: u16::from_le_bytes([b[34], b[35]]),
            game: u32::from_le_bytes([b[36], b[37], b[38], b[39]]),
        }
    }

    /// Checks the record could come from a real position (a piece code per square, one
    /// king each, at most 32 pieces).
    fn validate(&self) -> Result<(), String> {
        let (mut kings, mut pieces) = ([0; 2], 0);
        for s in 0..64 {
            let v = self.board[s / 2] >> (4 * (s % 2)) & 15;
            if v > 12 {
                return Err(format!("bad piece code {v} on square {s}"));
            }
            if v == 6 || v == 12 {
                kings[(v / 7) as usize] += 1;
            }
            pieces += usize::from(v != 0);
        }
        if kings != [1, 1] {
            return Err(format!("{} white and {} black kings", kings[0], kings[1]));
        }
        if pieces > 32 {
            return Err(format!("{pieces} pieces on the board (a position has at most 32)"));
        }
        if self.flags >> 5 != 0 || self.label > 1 {
            return Err("bad flags or label byte".into());
        }
        Ok(())
    }
}

/// A dataset: its metadata and its records.
#[derive(Clone, Debug, Default)]
pub struct Dataset {
    pub meta: Vec<(String, String)>,
    pub records: Vec<Record>,
}

/// What is wrong with a dataset file.
#[derive(Debug)]
pub struct DatasetError {
    pub path: PathBuf,
    pub message: String,
}

impl fmt::Display for DatasetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "dataset {}: {}", self.path.display(), self.message)
    }
}

impl std::error::Error for DatasetError {}


/// Largest dataset file read (hundreds of millions of records, far beyond the corpus this
/// crate builds): a wrong path fails at once instead of filling memory.
pub const MAX_FILE_BYTES: u64 = 16 << 30;

/// The value of `key` in a file's `key=value` header (datasets, labelled sets).
pub fn meta_get<'a>(meta: &'a [(String, String)], key: &str) -> Option<&'a str> {
    meta.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}

/// Sets `key` in a file's header, in place if present, else at the end.
pub fn meta_set(meta: &mut Vec<(String, String)>, key: &str, value: String) {
    match meta.iter_mut().find(|(k, _)| k == key) {
        Some(slot) => slot.1 = value,
        None => meta.push((key.to_string(), value)),
    }
}

impl Dataset {
    pub fn meta(&self, key: &str) -> Option<&str> {
        meta_get(&self.meta, key)
    }

    pub fn set_meta(&mut self, key: &str, value: impl Into<String>) {
        meta_set(&mut self.meta, key, value.into())
    }

    pub fn wins(&self) -> impl Iterator<Item = &Record> {
        self.records.iter().filter(|r| r.label == 1)
    }

    pub fn losses(&self) -> impl Iterator<Item = &Record> {
        self.records.iter().filter(|r| r.label == 0)
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        self.bytes_with(&self.meta)
    }

    /// The bytes with `meta` as the header.
    fn bytes_with(&self, meta_kv: &[(String, String)]) -> Vec<u8> {
        let mut out = Vec::with_capacity(64 + self.records.len() * RECORD_BYTES);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        let mut meta = String::new();
        for (k, v) in meta_kv {
            // Keys and values are single-line by construction; newlines would break parsing.
            meta.push_str(&format!("{}={}\n", k.replace(['\n', '='], " "), v.replace('\n', " ")));
        }
        out.extend_from_slice(&(meta.len() as u32).to_le_bytes());
        out.extend_from_slice(meta.as_bytes());
        out.extend_from_slice(&(self.records.len() as u64).to_le_bytes());
        for r in &self.records {
            r.write(&mut out);
        }
        let check = crate::io::fnv1a64(&out);
        out.extend_from_slice(&check.to_le_bytes());
        out
    }

    /// Writes atomically, so a kill never leaves a half-written dataset. The header gains what
    /// made the file (`made.*`, [`crate::io::provenance`]) when the program recorded it.
    pub fn save(&self, path: &Path) -> Result<(), DatasetError> {
        crate::io::write_atomic(path, &self.bytes_with(&crate::io::provenance::stamp(&self.meta)))
            .map_err(|e| DatasetError { path: path.to_path_buf(), message: format!("cannot write: {e}") })
    }

    /// A dataset file's identity without reading its records: its size and the checksum it
    /// ends with (FNV-1a of every byte before it, which `load` verifies), e.g. to tell on
    /// `--resume` whether a run's data changed.
    pub fn fingerprint(path: &Path) -> Result<String, DatasetError> {
        use std::io::{Read, Seek, SeekFrom};
        let fail = |m: String| DatasetError { path: path.to_path_buf(), message: m };
        let mut f = crate::io::files::open_regular(path, MAX_FILE_BYTES, "dataset").map_err(|e| fail(format!("cannot read: {e}")))?;
        let len = f.metadata().map_err(|e| fail(format!("cannot read: {e}")))?.len();
        if len < 24 {
            return Err(fail(format!("truncated: {len} bytes")));
        }
        let mut check = [0u8; 8];
        f.seek(SeekFrom::End(-8))
            .and_then(|_| f.read_exact(&mut check))
            .map_err(|e| fail(format!("cannot read: {e}")))?;
        Ok(format!("{len} bytes, fnv1a {:016x}", u64::from_le_bytes(check)))
    }

    pub fn load(path: &Path) -> Result<Dataset, DatasetError> {
        let fail = |m: String| DatasetError { path: path.to_path_buf(), message: m };
        let bytes = crate::io::read_regular(path, MAX_FILE_BYTES, "dataset").map_err(|e| fail(format!("cannot read: {e}")))?;
        crate::io::provenance::input_bytes(path, &bytes);
        Dataset::from_bytes(&bytes).map_err(fail)
    }

    pub fn from_bytes(b: &[u8]) -> Result<Dataset, String> {
        if b.len() < 8 || &b[..8] != MAGIC {
            return Err("not a deepchess dataset (bad magic)".into());
        }
        let need = |n: usize, what: &str| -> Result<(), String> {
            if b.len() < n {
                Err(format!("truncated: file ends inside the {what} ({} bytes)", b.len()))
            } else {
                Ok(())
            }
        };
        need(16, "header")?;
        let version = u32::from_le_bytes(b[8..12].try_into().unwrap());
        if version != VERSION {
            return Err(format!("version {version}, this build reads version {VERSION}"));
        }
        let meta_len = u32::from_le_bytes(b[12..16].try_into().unwrap()) as usize;
        let meta_end = 16usize.checked_add(meta_len).ok_or("bad metadata length")?;
        need(meta_end + 8, "metadata")?;
        let meta_text = std::str::from_utf8(&b[16..meta_end]).map_err(|_| "metadata is not UTF-8")?;
        let meta = meta_text
            .lines()
            .filter_map(|l| l.split_once('=').map(|(k, v)| (k.to_string(), v.to_string())))
            .collect();
        let count = u64::from_le_bytes(b[meta_end..meta_end + 8].try_into().unwrap()) as usize;
        let body = meta_end + 8;
        let expect = count
            .checked_mul(RECORD_BYTES)
            .and_then(|n| n.checked_add(body + 8))
            .ok_or("bad record count")?;
        if b.len() != expect {
            return Err(format!(
                "header says {count} records ({expect} bytes) but the file has {} bytes (truncated or corrupt)",
                b.len()
            ));
        }
        let stored = u64::from_le_bytes(b[expect - 8..].try_into().unwrap());
        if stored != crate::io::fnv1a64(&b[..expect - 8]) {
            return Err("checksum mismatch (corrupt file)".into());
        }
        let mut records = Vec::with_capacity(count);
        for (i, chunk) in b[body..expect - 8].chunks_exact(RECORD_BYTES).enumerate() {
            let r = Record::read(chunk);
            r.validate().map_err(|e| format!("record {i}: {e}"))?;
            records.push(r);
        }
        Ok(Dataset { meta, records })
    }
}
