//! The checksum of every file format of the crate.

/// FNV-1a 64's starting value.
pub const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a 64: simple, std-only, catches flipped bits and truncation.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    fnv1a64_continue(FNV_OFFSET, bytes)
}

/// FNV-1a 64 of what gave `h`, followed by `bytes` (a file read in pieces).
pub fn fnv1a64_continue(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// A text record sealed by its checksum: `body`, a tab, `#` and the 16 hex digits of its
/// FNV-1a 64 (journals and points files: each line is trusted on resume, so a record
/// damaged or edited since it was written is named as such instead of believed).
pub fn seal_line(body: &str) -> String {
    format!("{body}\t#{:016x}", fnv1a64(body.as_bytes()))
}

/// The body of a line [`seal_line`] made; an error saying what is wrong when the checksum
/// is missing or does not match.
pub fn unseal_line(line: &str) -> Result<&str, &'static str> {
    let (body, sum) = line.rsplit_once("\t#").ok_or("corrupt: the record has lost its checksum")?;
    match u64::from_str_radix(sum, 16) {
        Ok(s) if sum.len() == 16 && s == fnv1a64(body.as_bytes()) => Ok(body),
        _ => Err("corrupt: the record's checksum does not match it (damaged or edited since it was written)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_lines_round_trip_and_any_changed_byte_is_named() {
        let body = "series\t100\tnet.dcw\t3\t1\t2\t0\t1\t1\t1\t0\t4096";
        let line = seal_line(body);
        assert_eq!(unseal_line(&line), Ok(body));
        for i in 0..line.len() {
            let mut b = line.clone().into_bytes();
            b[i] = if b[i] == b'1' { b'2' } else { b'1' };
            let Ok(changed) = String::from_utf8(b) else { continue };
            assert!(unseal_line(&changed).is_err(), "byte {i}: {changed}");
        }
        assert!(unseal_line(body).unwrap_err().contains("lost its checksum"));
        assert!(unseal_line("").is_err());
    }
}
