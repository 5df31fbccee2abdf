//! Tables served straight from their memory-mapped files, guarded against the file changing
//! underneath (tables beyond the copy budget: see [`crate::tables`]).
//!
//! A mapped file that shrinks makes every read of a lost page raise `SIGBUS`, which kills a
//! process by default. The handler installed here knows the guarded mappings: a fault inside
//! one gets a page of zeros mapped in its place, the mapping is marked as faulted, and the
//! read carries on. The request that read it never answers from those zeros: after every
//! read, [`Guard::check`] looks at the fault mark and at the file's size and modification
//! time, which a truncation or an in-place write changes before any byte of the page cache
//! does. Faults outside guarded mappings go to whatever handler was there before (Rust's own,
//! which reports stack overflows), so nothing else changes.

use std::fs::File;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Once;

use memmap2::Mmap;

/// Guarded mappings at once: far more than there are closed games.
const SLOTS: usize = 256;

/// A guarded address range, readable from the signal handler without locks.
struct Region {
    start: AtomicUsize,
    end: AtomicUsize,
    faulted: AtomicBool,
}

#[allow(clippy::declare_interior_mutable_const)] // a template for the array below, never used itself
const EMPTY: Region = Region { start: AtomicUsize::new(0), end: AtomicUsize::new(0), faulted: AtomicBool::new(false) };
static REGIONS: [Region; SLOTS] = [EMPTY; SLOTS];
/// Serialises registration (the handler only reads).
static REGISTER: std::sync::Mutex<()> = std::sync::Mutex::new(());
static PAGE_SIZE: AtomicUsize = AtomicUsize::new(4096);
static INSTALL: Once = Once::new();
/// The `SIGBUS` action before ours, for faults that are not ours.
static mut PREVIOUS: Option<libc::sigaction> = None;

/// How a guarded table was when it was verified, and its place in the handler's list.
pub struct Guard {
    slot: usize,
    file: File,
    verified: (u64, Option<std::time::SystemTime>),
    /// Whether the change was logged already: once per table, however many requests see it.
    reported: AtomicBool,
    /// Set when a read found bytes that fail their own checks (a block's checksum): the file
    /// changed in a way its size and time did not show.
    damaged: std::sync::OnceLock<String>,
}

/// Why a guarded table's bytes can no longer be trusted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Changed(pub String);

impl Guard {
    /// Maps `file` and guards the mapping. The caller verifies the bytes afterwards; a change
    /// between the mapping and the verification is caught by the first [`Guard::check`].
    pub fn map(file: File) -> std::io::Result<(Mmap, Guard)> {
        install_handler();
        let meta = file.metadata()?;
        // SAFETY: the file may change under the mapping; that is what this module guards.
        let map = unsafe { Mmap::map(&file)? };
        let (start, end) = (map.as_ptr() as usize, map.as_ptr() as usize + map.len());
        let _held = REGISTER.lock().unwrap_or_else(|e| e.into_inner());
        let slot = REGIONS
            .iter()
            .position(|r| r.end.load(Ordering::Acquire) == 0)
            .ok_or_else(|| std::io::Error::other(format!("more than {SLOTS} guarded tables")))?;
        let region = &REGIONS[slot];
        region.faulted.store(false, Ordering::Release);
        region.start.store(start, Ordering::Release);
        region.end.store(end, Ordering::Release);
        Ok((
            map,
            Guard {
                slot,
                file,
                verified: (meta.len(), meta.modified().ok()),
                reported: AtomicBool::new(false),
                damaged: std::sync::OnceLock::new(),
            },
        ))
    }

    /// Whether this is the first time a change is reported (for logging it once).
    pub fn first_report(&self) -> bool {
        !self.reported.swap(true, Ordering::Relaxed)
    }

    /// Marks the bytes as changed: a read found them failing their own checks. Every later
    /// [`Guard::check`] fails, until the table is reloaded.
    pub fn mark_damaged(&self, reason: String) {
        let _ = self.damaged.set(reason);
    }

    /// `Ok` when the bytes read so far are the ones that were verified: no page has been lost,
    /// the file has neither changed size nor been written to, and no read found them damaged.
    pub fn check(&self) -> Result<(), Changed> {
        if let Some(reason) = self.damaged.get() {
            return Err(Changed(reason.clone()));
        }
        if REGIONS[self.slot].faulted.load(Ordering::Acquire) {
            return Err(Changed("its file shrank under the mapping (pages lost)".into()));
        }
        let meta = self.file.metadata().map_err(|e| Changed(format!("its file cannot be examined: {e}")))?;
        if (meta.len(), meta.modified().ok()) != self.verified {
            return Err(Changed("its file was written to or resized after it was verified".into()));
        }
        Ok(())
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        // Declared before the mapping in its owner, so the range is released first.
        let region = &REGIONS[self.slot];
        let _held = REGISTER.lock().unwrap_or_else(|e| e.into_inner());
        region.end.store(0, Ordering::Release);
        region.start.store(0, Ordering::Release);
    }
}

fn install_handler() {
    INSTALL.call_once(|| {
        // SAFETY: plain libc calls with valid arguments; PREVIOUS is written once, here,
        // before the handler that reads it is installed.
        unsafe {
            let page = libc::sysconf(libc::_SC_PAGESIZE);
            if page > 0 {
                PAGE_SIZE.store(page as usize, Ordering::Release);
            }
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_sigbus as *const () as usize;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut action.sa_mask);
            let mut previous: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGBUS, &action, &mut previous) == 0 {
                PREVIOUS = Some(previous);
            }
        }
    });
}

/// The `SIGBUS` handler: zeros over a lost page of a guarded mapping, else the old action.
extern "C" fn on_sigbus(signal: libc::c_int, info: *mut libc::siginfo_t, context: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo for SA_SIGINFO handlers. Only atomics and
    // mmap (a plain system call) are used here, nothing that allocates or locks.
    unsafe {
        let address = (*info).si_addr() as usize;
        for region in &REGIONS {
            let (start, end) = (region.start.load(Ordering::Acquire), region.end.load(Ordering::Acquire));
            if start <= address && address < end {
                let page = address & !(PAGE_SIZE.load(Ordering::Acquire) - 1);
                let zeros = libc::mmap(
                    page as *mut libc::c_void,
                    PAGE_SIZE.load(Ordering::Acquire),
                    libc::PROT_READ,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                    -1,
                    0,
                );
                if zeros != libc::MAP_FAILED {
                    region.faulted.store(true, Ordering::Release);
                    return;
                }
            }
        }
        // Not ours: hand it on, as if we had never been installed.
        match *std::ptr::addr_of!(PREVIOUS) {
            Some(previous) if previous.sa_sigaction != libc::SIG_DFL && previous.sa_sigaction != libc::SIG_IGN => {
                if previous.sa_flags & libc::SA_SIGINFO != 0 {
                    let handler: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                        std::mem::transmute(previous.sa_sigaction);
                    handler(signal, info, context);
                } else {
                    let handler: extern "C" fn(libc::c_int) = std::mem::transmute(previous.sa_sigaction);
                    handler(signal);
                }
            }
            _ => {
                // The default action: returning re-runs the faulting read, which now kills.
                libc::signal(libc::SIGBUS, libc::SIG_DFL);
            }
        }
    }
}
