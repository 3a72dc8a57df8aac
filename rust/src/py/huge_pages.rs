//! The module's allocator: the system's, asking Linux to back large blocks with 2 MB pages.
//!
//! Why: the merge loop's position records (16 bytes per byte of the corpus's unique pre-tokens) and its
//! pair table (tens of MB) are read at random, one record here, one entry there; with 4 kB pages nearly
//! every such read also missed the TLB and walked the page tables. `madvise(MADV_HUGEPAGE)` on the blocks
//! of at least `HUGE_MIN` bytes (the machines we run on leave transparent huge pages to `madvise`) lets
//! the kernel map them with 2 MB pages: 7-15% less time in a CJK merge loop (issue 22). Only a hint: where
//! huge pages are off or unavailable, nothing changes.
//!
//! Only the blocks allocated inside `advised` are advised (the merge kernel's, as `MergeKernel` builds its
//! index and merges): advising every large block, the counting tables' too, cost 5 MB more peak RSS on 12 MB
//! of English (whole 2 MB pages for half-used blocks) for no gain. Small blocks are never advised.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

thread_local! {
    /// Whether this thread is in `advised`: only the merge loop's blocks are advised.
    static ADVISING: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` with its large blocks advised (the merge loop's: see the module's docs).
pub fn advised<T>(f: impl FnOnce() -> T) -> T {
    struct Reset(bool);
    impl Drop for Reset {
        fn drop(&mut self) {
            ADVISING.with(|a| a.set(self.0)); // also when `f` panics (a panic becomes a Python error)
        }
    }
    let _reset = Reset(ADVISING.with(|a| a.replace(true)));
    f()
}

/// Blocks of at least this many bytes are advised (a few huge pages' worth: the advice has a cost).
const HUGE_MIN: usize = 8 << 20;
const HUGE_PAGE: usize = 2 << 20;
const MADV_HUGEPAGE: i32 = 14;

#[cfg(target_os = "linux")]
extern "C" {
    fn madvise(addr: *mut std::ffi::c_void, len: usize, advice: i32) -> i32;
}

/// The system allocator, with large blocks advised on Linux (see the module's docs).
pub struct HugePages;

fn advise(ptr: *mut u8, size: usize) {
    // try_with: never a panic inside the allocator, even while the thread's locals are torn down.
    if ptr.is_null() || size < HUGE_MIN || !ADVISING.try_with(Cell::get).unwrap_or(false) {
        return;
    }
    // The whole huge pages inside the block: madvise takes page-aligned ranges.
    let start = (ptr as usize).next_multiple_of(HUGE_PAGE);
    let end = (ptr as usize + size) / HUGE_PAGE * HUGE_PAGE;
    #[cfg(target_os = "linux")]
    if end > start {
        // SAFETY: the range lies inside a block this allocator just returned; the advice changes how the
        // kernel backs the pages, never their contents. A failure (e.g. EINVAL without huge pages) is ignored.
        unsafe {
            madvise(start as *mut std::ffi::c_void, end - start, MADV_HUGEPAGE);
        }
    }
}

// SAFETY: every method is the system allocator's, then advice on the block it returned.
unsafe impl GlobalAlloc for HugePages {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let ptr = System.alloc(layout);
        advise(ptr, layout.size());
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let ptr = System.alloc_zeroed(layout);
        advise(ptr, layout.size());
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let ptr = System.realloc(ptr, layout, new_size);
        advise(ptr, new_size);
        ptr
    }
}
