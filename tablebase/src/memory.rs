//! Memory access hints for the solver and the audit, which read large arrays at random.

/// Hints the CPU to fetch the cache line of `item`.
#[inline]
pub fn prefetch<T>(item: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is only a hint; it never faults and `item` is a valid address.
    #[allow(unused_unsafe)]
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>((item as *const T).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = item;
}

/// Asks Linux to back a large array with 2 MiB pages: the solver reads it at random, and
/// with 4 KiB pages nearly every access would also miss the TLB. Only a hint.
pub fn advise_huge_pages(bytes: &mut [u8]) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let start = (bytes.as_mut_ptr() as usize).next_multiple_of(HUGE);
        let end = (bytes.as_mut_ptr() as usize + bytes.len()) / HUGE * HUGE;
        if end > start {
            // SAFETY: the range lies inside `bytes`, which we own; MADV_HUGEPAGE changes no
            // contents, only how the kernel backs the pages.
            unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
        }
    }
}
