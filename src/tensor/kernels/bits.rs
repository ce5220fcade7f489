//! Parallel bit extract and deposit (x86's PEXT and PDEP), chosen here as every instruction
//! set is: BMI2 where the CPU has it, a loop over the mask's set bits elsewhere. DeepChess's
//! table packs a board with them (`deepchess::infer::PackedKey`).

/// The bits of `x` at `mask`'s set bits, packed low (PEXT).
#[inline]
pub fn extract(x: u64, mask: u64) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("bmi2") {
        // Safety: the CPU has BMI2 (checked above).
        return unsafe { pext(x, mask) };
    }
    let (mut m, mut out, mut i) = (mask, 0u64, 0);
    while m != 0 {
        let sq = m.trailing_zeros();
        out |= ((x >> sq) & 1) << i;
        m &= m - 1;
        i += 1;
    }
    out
}

/// The low bits of `x` placed at `mask`'s set bits (PDEP).
#[inline]
pub fn deposit(x: u64, mask: u64) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("bmi2") {
        // Safety: the CPU has BMI2 (checked above).
        return unsafe { pdep(x, mask) };
    }
    let (mut m, mut out, mut i) = (mask, 0u64, 0);
    while m != 0 {
        let sq = m.trailing_zeros();
        out |= ((x >> i) & 1) << sq;
        m &= m - 1;
        i += 1;
    }
    out
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "bmi2")]
unsafe fn pext(x: u64, mask: u64) -> u64 {
    std::arch::x86_64::_pext_u64(x, mask)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "bmi2")]
unsafe fn pdep(x: u64, mask: u64) -> u64 {
    std::arch::x86_64::_pdep_u64(x, mask)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::rng::SplitMix64;

    fn portable_extract(x: u64, mask: u64) -> u64 {
        (0..64).filter(|&s| mask >> s & 1 == 1).enumerate().fold(0, |o, (i, s)| o | ((x >> s) & 1) << i)
    }

    #[test]
    fn extract_and_deposit_agree_with_the_definition() {
        let mut r = SplitMix64(5);
        for _ in 0..1000 {
            let (x, m) = (r.next_u64(), r.next_u64() & r.next_u64());
            assert_eq!(extract(x, m), portable_extract(x, m));
            assert_eq!(deposit(extract(x, m), m), x & m);
        }
    }
}
