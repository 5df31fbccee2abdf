//! Memory: access hints for the solver and the audit, which read large arrays at random, and
//! what a solve needs against what the machine has.

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

/// Asks Linux to back a large array with 2 MiB pages: the solver and the proof search read
/// theirs at random, and with 4 KiB pages nearly every access would also miss the TLB. Only a
/// hint; it takes effect for pages not yet touched (so call it on a fresh allocation's spare
/// capacity before filling it).
pub fn advise_huge_pages<T>(items: &mut [T]) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let (base, len) = (items.as_mut_ptr() as usize, std::mem::size_of_val(items));
        let start = base.next_multiple_of(HUGE);
        let end = (base + len) / HUGE * HUGE;
        if end > start {
            // SAFETY: the range lies inside `items`, which we borrow mutably; MADV_HUGEPAGE
            // changes no contents, only how the kernel backs the pages.
            unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = items;
}

/// A vector of `len` copies of `value`, backed by huge pages where the system allows.
pub fn huge_vec<T: Clone>(value: T, len: usize) -> Vec<T> {
    let mut items = Vec::with_capacity(len);
    advise_huge_pages(items.spare_capacity_mut());
    items.resize(len, value);
    items
}

/// Bytes of working memory a solve of `slots` slots needs: a state byte, a decided bit and a
/// frontier bit per slot (the state bytes become the table), and a little for the rest.
pub fn solve_memory_needed(slots: u64) -> u64 {
    slots + slots.div_ceil(32) * 8 + (16 << 20)
}

/// Refuses work on `material` that needs `needed` bytes where `limit` (the caller's, else
/// what the system has available) is less: before anything is allocated, so that a game too
/// large for the machine is a clear error, never an allocation failure. Without a limit from
/// either, nothing is refused.
pub fn refuse_too_large(
    material: shogi4_engine::Material,
    needed: u64,
    limit: Option<u64>,
) -> Result<(), crate::SolveError> {
    match limit.or_else(available_memory) {
        Some(limit) if needed > limit => Err(crate::SolveError::TooLarge { material, needed, limit }),
        _ => Ok(()),
    }
}

/// Memory the system can give without swapping (`MemAvailable`), where it says.
pub fn available_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
