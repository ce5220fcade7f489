//! Memory for the search's large tables (the transposition table, the position caches),
//! backed by 2 MB pages where the system gives them, and the prefetch hint their probes
//! use. A probe of such a table lands on a random entry: with 4 KB pages nearly every probe
//! also misses the TLB and waits for a page walk, with 2 MB pages a 16 MB table needs only 8
//! TLB entries. Linux gives large pages to memory that asks for them
//! (`madvise(MADV_HUGEPAGE)`, what "transparent huge pages: madvise" means, the common
//! default); where it does not, or on another system, the table is ordinary memory and works
//! the same, only slower.

use std::alloc::{alloc, dealloc, Layout};
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// Size and alignment of a large page (x86-64 and aarch64 Linux).
const LARGE_PAGE: usize = 2 << 20;

/// A fixed-length slice of `T` in memory aligned to large pages, each element built by the
/// caller (so no `T` is ever read before it is written).
pub struct LargeBuf<T> {
    ptr: NonNull<T>,
    len: usize,
    layout: Layout,
}

// Safety: a LargeBuf owns its elements as a Vec does.
unsafe impl<T: Send> Send for LargeBuf<T> {}
unsafe impl<T: Sync> Sync for LargeBuf<T> {}

impl<T> LargeBuf<T> {
    /// `len` elements (at least one), each `fill()`; an error when the memory cannot be had.
    pub fn try_new(len: usize, mut fill: impl FnMut() -> T) -> Result<Self, String> {
        let len = len.max(1);
        let size = std::mem::size_of::<T>();
        if size == 0 {
            return Err("zero-sized elements".into());
        }
        let bytes = len.checked_mul(size).ok_or("the size overflows")?;
        // Tables of at least one large page are aligned to one, so that each of its pages
        // can be large; smaller ones only to their element.
        let align = if bytes >= LARGE_PAGE { LARGE_PAGE } else { std::mem::align_of::<T>() };
        let layout = Layout::from_size_align(bytes, align.max(std::mem::align_of::<T>())).map_err(|e| e.to_string())?;
        // (A panicking `fill` would leak the allocation; the tables' fills do not panic.)
        // Safety: `layout` has a non-zero size.
        let raw = unsafe { alloc(layout) } as *mut T;
        let ptr = NonNull::new(raw).ok_or_else(|| format!("cannot allocate {} MB", bytes >> 20))?;
        if bytes >= LARGE_PAGE {
            advise_large_pages(ptr.as_ptr() as *mut u8, bytes);
        }
        for i in 0..len {
            // Safety: `i < len`, inside the allocation; each element is written once, before
            // any read.
            unsafe { ptr.as_ptr().add(i).write(fill()) };
        }
        Ok(LargeBuf { ptr, len, layout })
    }
}

impl<T> Deref for LargeBuf<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // Safety: `len` initialised elements (try_new).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T> DerefMut for LargeBuf<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // Safety: as deref, and `&mut self` is unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T> Drop for LargeBuf<T> {
    fn drop(&mut self) {
        // Safety: the elements were initialised by try_new and are dropped once; the memory
        // was allocated with `layout`.
        unsafe {
            std::ptr::drop_in_place(std::ptr::slice_from_raw_parts_mut(self.ptr.as_ptr(), self.len));
            dealloc(self.ptr.as_ptr() as *mut u8, self.layout);
        }
    }
}

/// Asks the CPU to start loading the cache line at `p` (a table entry read a little later:
/// the child's transposition entry, its feature-cache slot). No effect on other targets.
#[inline(always)]
pub fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // Safety: a prefetch is a hint; it never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p as *const i8)
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Asks Linux to back `[ptr, ptr + bytes)` with large pages; a refusal is not an error (the
/// memory stays in small pages).
#[cfg(target_os = "linux")]
fn advise_large_pages(ptr: *mut u8, bytes: usize) {
    const MADV_HUGEPAGE: i32 = 14;
    extern "C" {
        // The C library's madvise, linked into every Rust program on Linux by std.
        fn madvise(addr: *mut u8, len: usize, advice: i32) -> i32;
    }
    // Safety: the range is one live allocation of ours, aligned to a page; madvise only
    // changes how the kernel backs it.
    let _ = unsafe { madvise(ptr, bytes, MADV_HUGEPAGE) };
}

#[cfg(not(target_os = "linux"))]
fn advise_large_pages(_ptr: *mut u8, _bytes: usize) {}

/// Memory the process can still have, in MB: Linux's `MemAvailable`, less where a cgroup
/// (v2) limit leaves less; None where neither is known.
pub fn available_mb() -> Option<usize> {
    let read = |p: &str| super::read_text(std::path::Path::new(p), 1 << 20, "memory figure").ok();
    let system = read("/proc/meminfo").and_then(|t| {
        let line = t.lines().find(|l| l.starts_with("MemAvailable:"))?.to_string();
        line.split_whitespace().nth(1)?.parse::<usize>().ok().map(|kb| kb / 1024)
    });
    let group = (|| {
        let max: usize = read("/sys/fs/cgroup/memory.max")?.trim().parse().ok()?;
        let current: usize = read("/sys/fs/cgroup/memory.current")?.trim().parse().ok()?;
        Some(max.saturating_sub(current) >> 20)
    })();
    match (system, group) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Address space (MB) the process may still map under its soft `ulimit -v` (RLIMIT_AS):
/// the limit less what it maps now. None without a limit (or where unknown). Thread stacks
/// count here though they take little memory.
pub fn address_space_left_mb() -> Option<usize> {
    let read = |p: &str| super::read_text(std::path::Path::new(p), 1 << 20, "process figure").ok();
    let limits = read("/proc/self/limits")?;
    let soft = limits.lines().find(|l| l.starts_with("Max address space"))?.split_whitespace().nth(3)?.parse::<u64>().ok()?;
    let status = read("/proc/self/status")?;
    let mapped_kb = status.lines().find(|l| l.starts_with("VmSize:"))?.split_whitespace().nth(1)?.parse::<u64>().ok()?;
    Some(((soft >> 10).saturating_sub(mapped_kb) >> 10) as usize)
}

/// Refuses `bytes` of `what` when they exceed the memory the process can still have (a
/// count from a flag, checked before any work starts); passes where the figure is unknown.
pub fn check_fits(what: &str, bytes: u128) -> Result<(), String> {
    let need_mb = bytes >> 20;
    match available_mb() {
        Some(avail) if need_mb > avail as u128 => Err(format!("{what} needs about {need_mb} MB, more than the {avail} MB this machine has available")),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::rc::Rc;

    /// Every element is built once and dropped once, large (page-aligned) and small alike.
    #[test]
    fn builds_and_drops_every_element() {
        for len in [0, 1, 7, (LARGE_PAGE / 8) + 3] {
            let token = Rc::new(());
            let mut i = 0u64;
            let mut buf = LargeBuf::try_new(len, || {
                i += 1;
                (i, token.clone())
            })
            .unwrap();
            assert_eq!(buf.len(), len.max(1));
            assert!(buf.iter().enumerate().all(|(k, (v, _))| *v == k as u64 + 1));
            buf[0].0 = 42;
            assert_eq!(buf[0].0, 42);
            assert_eq!(Rc::strong_count(&token), len.max(1) + 1);
            if len * 16 >= LARGE_PAGE {
                assert_eq!(buf.as_ptr() as usize % LARGE_PAGE, 0, "a large table starts on a large page");
            }
            drop(buf);
            assert_eq!(Rc::strong_count(&token), 1);
        }
    }

    #[test]
    fn an_impossible_size_is_an_error() {
        assert!(LargeBuf::try_new(usize::MAX / 2, || 0u64).is_err());
    }
}
