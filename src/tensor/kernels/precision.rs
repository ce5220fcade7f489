//! The precision of the numeric engine's products: f32, the default, or bf16 operands with
//! f32 sums (the opt-in mixed precision of training, [`crate::tensor::kernels::gemm::bf16`]).
//!
//! It is a setting of the thread that runs the products, set for a stretch of work by
//! [`with_precision`] and read by the products themselves, nowhere else: a trainer's stage
//! sets its stage's precision once around its epochs, the data-parallel training step
//! (`tensor::optim::shards`) runs each shard with the precision of the thread that called
//! it, and searches and evaluations never set it.

use std::cell::Cell;

/// The precision of the products (matrix products: forward and backward passes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Precision {
    /// Operands and sums in f32.
    #[default]
    F32,
    /// Operands rounded to bf16 (round to nearest even), their products summed in f32;
    /// weights, activations and the optimizer stay f32.
    Bf16,
}

impl Precision {
    /// Its name on the command line and in run records: `f32`, `bf16`.
    pub fn name(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::Bf16 => "bf16",
        }
    }

    /// The precision called `name` ([`Precision::name`]).
    pub fn parse(name: &str) -> Option<Precision> {
        match name {
            "f32" => Some(Precision::F32),
            "bf16" => Some(Precision::Bf16),
            _ => None,
        }
    }
}

thread_local! {
    static CURRENT: Cell<Precision> = const { Cell::new(Precision::F32) };
}

/// Runs `f` with this thread's products in precision `p`, then restores the thread's
/// setting (also when `f` panics).
pub fn with_precision<R>(p: Precision, f: impl FnOnce() -> R) -> R {
    struct Restore(Precision);
    impl Drop for Restore {
        fn drop(&mut self) {
            CURRENT.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(CURRENT.with(|c| c.replace(p)));
    f()
}

/// This thread's precision ([`with_precision`]), as the products read it.
pub(crate) fn precision() -> Precision {
    CURRENT.with(|c| c.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_setting_is_scoped_to_the_thread_and_the_call() {
        assert_eq!(precision(), Precision::F32);
        let inner = with_precision(Precision::Bf16, || (precision(), std::thread::spawn(precision).join().unwrap()));
        assert_eq!(inner, (Precision::Bf16, Precision::F32));
        assert_eq!(precision(), Precision::F32);
        for p in [Precision::F32, Precision::Bf16] {
            assert_eq!(Precision::parse(p.name()), Some(p));
        }
        assert_eq!(Precision::parse("fp8"), None);
    }
}
