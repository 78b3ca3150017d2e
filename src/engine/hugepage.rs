//! Transparent huge pages for the simulator's large arenas.
//!
//! A paper-scale run touches its packet arena, flow slab and event wheel at random: the §5.3
//! benchmark keeps up to 284 K packets alive (≈ 52 MB of slots and INT records), far past what
//! the CPU's TLB maps with 4 KiB pages (an AMD EPYC's 2,048-entry L2 TLB covers 8 MiB), so a
//! large share of its memory accesses — and of the event loop's software prefetches — wait for
//! a page walk first. With 2 MiB pages the same TLB covers 4 GiB.
//!
//! Linux gives huge pages to anonymous memory only where the process asks for them
//! (`madvise(MADV_HUGEPAGE)`) when `/sys/kernel/mm/transparent_hugepage/enabled` is `madvise`,
//! the default of most distributions. [`HugePageAlloc`] is the system allocator plus that
//! request on every allocation (and reallocation) of at least [`HUGE_MIN_BYTES`]: the
//! page-aligned interior of the block is advised; small allocations are untouched. The advice
//! changes where memory lives, never what the program computes: outputs are bit-identical with
//! and without it. It costs one system call per large (re)allocation — arenas grow by doubling,
//! so a handful per run — and possibly some resident memory (a huge page is faulted in whole).
//!
//! The `sfc` binary installs it as its global allocator; `SFC_HUGEPAGES=0` in the environment
//! turns the advice off (for comparison runs), see [`set_enabled`]. On other systems it is the
//! plain system allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, Ordering};

/// Allocations of at least this many bytes are advised to use huge pages (2 MiB: smaller
/// blocks cannot contain an aligned huge page).
pub const HUGE_MIN_BYTES: usize = 2 << 20;

/// Whether large allocations are advised (on by default).
static ENABLED: AtomicBool = AtomicBool::new(true);

/// Turns the huge-page advice on or off for allocations made from now on.
pub fn set_enabled(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
}

/// Whether large allocations are currently advised to use huge pages.
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// The system allocator, advising blocks of [`HUGE_MIN_BYTES`] or more to use transparent
/// huge pages (see the module documentation).
#[derive(Debug, Default, Clone, Copy)]
pub struct HugePageAlloc;

/// Advises the whole pages inside `[ptr, ptr + len)` to use huge pages (Linux; a no-op
/// elsewhere, for small blocks, or when disabled). Failure is ignored: the advice is an
/// optimisation, and the kernel may refuse it (THP `never`, old kernels).
#[inline]
fn advise(ptr: *mut u8, len: usize) {
    if ptr.is_null() || len < HUGE_MIN_BYTES || !enabled() {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        let start = (ptr as usize).div_ceil(PAGE) * PAGE;
        let end = (ptr as usize + len) / PAGE * PAGE;
        if end > start {
            // SAFETY: the range lies inside a block the system allocator just handed us;
            // MADV_HUGEPAGE only changes how the kernel backs those pages, never their contents.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
            }
        }
    }
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged and returns
// its result; the only addition is an `madvise` on memory inside the returned block.
unsafe impl GlobalAlloc for HugePageAlloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged.
        let p = unsafe { System.alloc(layout) };
        advise(p, layout.size());
        p
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged.
        let p = unsafe { System.alloc_zeroed(layout) };
        advise(p, layout.size());
        p
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged.
        unsafe { System.dealloc(ptr, layout) }
    }

    /// A block growing to [`HUGE_MIN_BYTES`] or more by at least half moves to a fresh, advised
    /// block (copy, then free the old one) rather than through the system's `realloc`: glibc
    /// grows a large block with `mremap`, which keeps the pages already there small, so a
    /// doubling arena would stay half on small pages. Smaller growth steps (a caller
    /// reserving a little at a time) keep the system's `realloc`, so the copies stay linear in
    /// the final size.
    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size < HUGE_MIN_BYTES
            || new_size < layout.size().saturating_add(layout.size() / 2)
            || !enabled()
        {
            // SAFETY: forwarded unchanged.
            let p = unsafe { System.realloc(ptr, layout, new_size) };
            advise(p, new_size);
            return p;
        }
        // SAFETY: `realloc`'s contract makes `new_size` with `layout.align()` a valid layout.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        // SAFETY: non-zero size (≥ HUGE_MIN_BYTES).
        let p = unsafe { System.alloc(new_layout) };
        if !p.is_null() {
            advise(p, new_size);
            // SAFETY: both blocks are live and distinct; `layout.size() < new_size` bytes of
            // the old block are initialised as far as the caller is concerned; the old block
            // is freed with the layout it was allocated with.
            unsafe {
                std::ptr::copy_nonoverlapping(ptr, p, layout.size());
                System.dealloc(ptr, layout);
            }
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Serialises the tests that depend on the process-wide switch ([`set_enabled`]).
    static SWITCH: std::sync::Mutex<()> = std::sync::Mutex::new(());

    /// The allocator hands back usable memory for small and huge blocks, through growth and
    /// shrinking, with and without the advice (it is not this crate's test allocator, so call
    /// it directly).
    #[test]
    fn allocates_reallocates_and_frees_like_the_system_allocator() {
        let _g = SWITCH.lock().unwrap_or_else(|e| e.into_inner());
        let a = HugePageAlloc;
        for on in [true, false] {
            set_enabled(on);
            for size in [64usize, HUGE_MIN_BYTES - 1, HUGE_MIN_BYTES, 5 << 20] {
                let layout = Layout::from_size_align(size, 64).unwrap();
                // SAFETY: non-zero size; every byte written is inside the block; freed with
                // the layout it was allocated with.
                unsafe {
                    let p = a.alloc(layout);
                    assert!(!p.is_null());
                    p.write_bytes(0xab, size);
                    let q = a.realloc(p, layout, size * 2);
                    assert!(!q.is_null());
                    assert_eq!(*q.add(size - 1), 0xab, "realloc keeps the contents");
                    q.add(size).write_bytes(0xcd, size);
                    let grown = Layout::from_size_align(size * 2, 64).unwrap();
                    // A small growth step (the system's realloc path).
                    let more = size * 2 + size / 4;
                    let r = a.realloc(q, grown, more);
                    assert!(!r.is_null());
                    assert_eq!((*r, *r.add(size - 1)), (0xab, 0xab));
                    assert_eq!((*r.add(size), *r.add(2 * size - 1)), (0xcd, 0xcd));
                    a.dealloc(r, Layout::from_size_align(more, 64).unwrap());
                    let z = a.alloc_zeroed(layout);
                    assert!((0..size).step_by(4093).all(|i| *z.add(i) == 0));
                    a.dealloc(z, layout);
                }
            }
        }
        set_enabled(true);
    }

    /// VmFlags of the mapping of `/proc/self/smaps` that contains address `a`.
    #[cfg(target_os = "linux")]
    fn vm_flags_at(a: usize) -> Option<String> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        let mut inside = false;
        for line in smaps.lines() {
            if let Some((range, _)) = line.split_once(' ')
                && let Some((lo, hi)) = range.split_once('-')
                && let (Ok(lo), Ok(hi)) =
                    (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
            {
                inside = (lo..hi).contains(&a);
            } else if inside && let Some(f) = line.strip_prefix("VmFlags:") {
                return Some(f.to_string());
            }
        }
        None
    }

    /// A large block is marked for huge pages (`hg` in its mapping's flags) when the kernel
    /// offers transparent huge pages at all; a small one, or any with the advice off, is not
    /// advised by us.
    #[cfg(target_os = "linux")]
    #[test]
    fn large_blocks_are_advised_to_use_huge_pages() {
        let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
            .unwrap_or_default();
        if thp.is_empty() || thp.contains("[never]") {
            return; // no THP on this kernel: nothing to observe
        }
        let _g = SWITCH.lock().unwrap_or_else(|e| e.into_inner());
        let a = HugePageAlloc;
        let layout = Layout::from_size_align(8 << 20, 4096).unwrap();
        // SAFETY: non-zero size; freed with its layout.
        unsafe {
            let p = a.alloc(layout);
            assert!(!p.is_null());
            let mid = p as usize + (4 << 20);
            let flags = vm_flags_at(mid).expect("mapping of a live block");
            assert!(
                flags.split_whitespace().any(|f| f == "hg"),
                "flags: {flags}"
            );
            // Grown through `realloc`: the new block is advised too.
            let q = a.realloc(p, layout, 16 << 20);
            assert!(!q.is_null());
            let flags = vm_flags_at(q as usize + (12 << 20)).expect("mapping of a live block");
            assert!(
                flags.split_whitespace().any(|f| f == "hg"),
                "flags: {flags}"
            );
            a.dealloc(q, Layout::from_size_align(16 << 20, 4096).unwrap());
        }
    }
}
