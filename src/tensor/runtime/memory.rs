//! How freed memory goes back to the system. A training step allocates and frees the same
//! large buffers (a tape's values and gradients, a convolution's unrolled patches: megabytes
//! at batch 256) thousands of times. glibc's malloc returns such blocks to the kernel (by
//! `munmap`, or by trimming the heap's top), so every step faults its pages in again:
//! measured on seed 002's update, a fifth of the time went to page faults and zeroing
//! (docs/notebook/benchmarks.md). [`keep_freed_memory`] asks malloc to keep them instead;
//! the process's peak memory is unchanged, it is only not handed back between steps.

/// glibc's `mallopt` parameters (malloc.h).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const M_TRIM_THRESHOLD: i32 = -1;
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const M_MMAP_THRESHOLD: i32 = -3;

#[cfg(all(target_os = "linux", target_env = "gnu"))]
extern "C" {
    fn mallopt(param: i32, value: i32) -> i32;
}

/// Called once at the start of the command line program. Blocks up to 32 MB (glibc's
/// largest threshold) come from the heap, not from their own mappings, and the heap keeps up
/// to 1 GB of free memory at its top. Elsewhere (other C libraries) it does nothing.
pub fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // Safety: `mallopt` only sets two of malloc's tuning parameters; it is called before any
    // thread of ours starts, and an out-of-range value is refused by it (returns 0).
    unsafe {
        mallopt(M_MMAP_THRESHOLD, 32 << 20);
        mallopt(M_TRIM_THRESHOLD, 1 << 30);
    }
}
