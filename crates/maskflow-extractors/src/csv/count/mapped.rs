//! The count of a regular file through a memory map.
//!
//! Why a map: reading copies every byte from the page cache into a buffer,
//! which on a 2 GB/s-copy machine costs as much as the whole scan; a map
//! lets the scan read the page cache itself. The file is mapped a window at
//! a time (populated in one call, unmapped after its scan), so memory —
//! mapped pages count in the resident set — stays at a few windows whatever
//! the file's size.
//!
//! The hazard of a map: a file that shrinks while mapped makes the next
//! access to a page past its new end raise SIGBUS, which would kill the
//! whole server or desktop app. [`guard`] catches exactly that: while a
//! window is scanned, a SIGBUS on an address inside it maps a page of zeros
//! there, the scan finishes on zeros, and the count reports
//! [`Outcome::Changed`] so the caller reads the file again. Any other SIGBUS
//! goes to the handler that was there before. A file that is rewritten in
//! place (same size) while counted gives a count of a mix of old and new
//! bytes, as a read would.
#![allow(unsafe_code)] // Memory maps and a signal handler; each block says why it is sound.

use std::fs::File;
use std::io;

use super::scan::Scanner;

/// Bytes mapped at a time: a multiple of the page size and of 64, small next
/// to the 64 MiB memory target, large enough that a map call is rare.
pub(super) const WINDOW: u64 = 4 << 20;

/// How a mapped count ended.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Outcome {
    /// The exact count.
    Count(u64),
    /// A quote RFC 4180 does not allow: count with `csv_core`.
    Anomaly,
    /// The file shrank while mapped (or cannot be mapped here): read it instead.
    Changed,
}

/// Windows mapped ahead of the scan.
#[cfg(target_os = "linux")]
const AHEAD: usize = 1;

/// A mapped window and its offset in the file.
#[cfg(target_os = "linux")]
type Window = io::Result<(u64, memmap2::Mmap)>;

/// Counts the first `len` bytes of `file` through a memory map, `window`
/// bytes (a multiple of the page size) at a time.
///
/// Mapping and unmapping a window (page-table work in the kernel) cost more
/// than its scan, so a second thread does both: it maps the next window
/// while this thread scans one, and unmaps the windows scanned. On a busy
/// machine the two compete for the same cores, which costs no more CPU time
/// than doing both in one thread.
#[cfg(target_os = "linux")]
pub(super) fn count(
    file: &File,
    len: u64,
    delimiter: u8,
    window: u64,
    progress: &mut dyn FnMut(u64),
) -> io::Result<Outcome> {
    if !guard::install() {
        return Ok(Outcome::Changed);
    }
    let (mapped_tx, mapped_rx) = std::sync::mpsc::sync_channel::<Window>(AHEAD);
    let (done_tx, done_rx) = std::sync::mpsc::channel::<memmap2::Mmap>();
    std::thread::scope(|scope| {
        scope.spawn(move || {
            let mut offset = 0u64;
            while offset < len {
                // Unmapped here rather than in the scan's thread.
                while let Ok(scanned) = done_rx.try_recv() {
                    drop(scanned);
                }
                let n = (len - offset).min(window);
                // SAFETY: the map is read-only and private. A file that shrinks
                // under it raises SIGBUS on access, which `guard::scan` turns into
                // zeros and `Changed` (this thread never reads it; populating
                // stops quietly at the file's end); bytes rewritten in place are
                // read once each, so they change the count, not memory safety.
                let map = unsafe {
                    memmap2::MmapOptions::new()
                        .offset(offset)
                        .len(n as usize)
                        .populate()
                        .map(file)
                };
                let failed = map.is_err();
                if mapped_tx.send(map.map(|m| (offset, m))).is_err() || failed {
                    return;
                }
                offset += n;
            }
            drop(mapped_tx);
            // Until the scan is done (it drops its sender).
            for scanned in done_rx {
                drop(scanned);
            }
        });
        // Owning both channel ends there means returning early drops them,
        // which stops the mapping thread before the scope waits for it.
        scan_windows(mapped_rx, done_tx, delimiter, progress)
    })
}

/// The scanning half of [`count`].
#[cfg(target_os = "linux")]
fn scan_windows(
    mapped: std::sync::mpsc::Receiver<Window>,
    done: std::sync::mpsc::Sender<memmap2::Mmap>,
    delimiter: u8,
    progress: &mut dyn FnMut(u64),
) -> io::Result<Outcome> {
    let mut scanner = Scanner::new(delimiter);
    for item in mapped {
        let (offset, map) = item?;
        let changed = guard::scan(&map, || {
            let mut rest = &map[..];
            if offset == 0 && rest.starts_with(super::UTF8_BOM) {
                // csv_core skips a leading BOM; as line ends, its bytes start no record.
                let first = rest.len().min(64);
                let mut block = [0u8; 64];
                block[..first].copy_from_slice(&rest[..first]);
                block[..3].fill(b'\n');
                scanner.short(&block[..first]);
                rest = &rest[first..];
            }
            let whole = scanner.blocks(rest);
            // Only the last window has a tail: `window` is a multiple of 64.
            scanner.short(&rest[whole..]);
        });
        let end = offset + map.len() as u64;
        // If the mapping thread has stopped, the map is dropped here instead.
        let _ = done.send(map);
        if changed {
            return Ok(Outcome::Changed);
        }
        if !scanner.ok() {
            return Ok(Outcome::Anomaly);
        }
        progress(end);
    }
    Ok(Outcome::Count(scanner.records()))
}

/// Other systems read the file instead.
#[cfg(not(target_os = "linux"))]
pub(super) fn count(
    _file: &File,
    _len: u64,
    _delimiter: u8,
    _window: u64,
    _progress: &mut dyn FnMut(u64),
) -> io::Result<Outcome> {
    Ok(Outcome::Changed)
}

/// Turns a SIGBUS inside the window being scanned into a page of zeros and
/// a flag, instead of the death of the process.
#[cfg(target_os = "linux")]
mod guard {
    use std::cell::Cell;
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicUsize, Ordering};

    thread_local! {
        /// The window this thread is scanning: start address and length.
        static RANGE: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
        /// Set by the handler when a page of the window was replaced by zeros.
        static HIT: Cell<bool> = const { Cell::new(false) };
    }

    /// The SIGBUS action before ours, for faults that are not ours.
    static PREVIOUS: OnceLock<Option<Action>> = OnceLock::new();
    static PAGE: AtomicUsize = AtomicUsize::new(4096);

    /// A `sigaction`, shareable between threads (plain data).
    struct Action(libc::sigaction);
    // SAFETY: `sigaction` is plain data (a handler address, a mask, flags); it
    // is written once before the handler can read it and never changed.
    unsafe impl Sync for Action {}
    // SAFETY: as above.
    unsafe impl Send for Action {}

    /// Installs the handler once per process; false if that failed.
    pub(super) fn install() -> bool {
        PREVIOUS
            .get_or_init(|| {
                // SAFETY: sysconf has no preconditions.
                let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
                if page > 0 {
                    PAGE.store(page as usize, Ordering::Relaxed);
                }
                // SAFETY: both structs are zeroed plain data, then filled as
                // sigaction(2) asks; the handler only calls async-signal-safe
                // functions (mmap, sigaction) and reads thread-locals that need
                // no initialisation.
                unsafe {
                    let mut new: libc::sigaction = std::mem::zeroed();
                    new.sa_sigaction = handler as *const () as usize;
                    new.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
                    libc::sigemptyset(&mut new.sa_mask);
                    let mut old: libc::sigaction = std::mem::zeroed();
                    (libc::sigaction(libc::SIGBUS, &new, &mut old) == 0).then_some(Action(old))
                }
            })
            .is_some()
    }

    /// Runs `scan` over `window`; true when part of it vanished (the file shrank).
    pub(super) fn scan(window: &[u8], scan: impl FnOnce()) -> bool {
        HIT.set(false);
        RANGE.set((window.as_ptr() as usize, window.len()));
        scan();
        RANGE.set((0, 0));
        HIT.replace(false)
    }

    extern "C" fn handler(
        signal: libc::c_int,
        info: *mut libc::siginfo_t,
        context: *mut libc::c_void,
    ) {
        // SAFETY: the kernel passes a valid siginfo for an SA_SIGINFO handler.
        let addr = unsafe { (*info).si_addr() } as usize;
        let (start, len) = RANGE.get();
        if addr >= start && addr - start < len {
            let page = PAGE.load(Ordering::Relaxed);
            // SAFETY: the page lies inside this thread's window, a private
            // read-only map that nothing else uses; replacing it by zeros
            // changes only what the scan reads, and the scan's result is then
            // thrown away (`HIT`).
            let zeros = unsafe {
                libc::mmap(
                    (addr & !(page - 1)) as *mut libc::c_void,
                    page,
                    libc::PROT_READ,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                    -1,
                    0,
                )
            };
            if zeros != libc::MAP_FAILED {
                HIT.set(true);
                return;
            }
        }
        // Not ours: hand it to the previous action, or to the default one
        // (returning re-runs the access, which faults again and ends the process).
        match PREVIOUS.get() {
            Some(Some(Action(prev)))
                if prev.sa_sigaction != libc::SIG_DFL && prev.sa_sigaction != libc::SIG_IGN =>
            {
                // SAFETY: the previous handler was installed for this signal with
                // these flags; calling it is what the kernel would have done.
                unsafe {
                    if prev.sa_flags & libc::SA_SIGINFO != 0 {
                        let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                            std::mem::transmute(prev.sa_sigaction);
                        f(signal, info, context);
                    } else {
                        let f: extern "C" fn(libc::c_int) = std::mem::transmute(prev.sa_sigaction);
                        f(signal);
                    }
                }
            }
            _ => {
                // SAFETY: restoring the default action is async-signal-safe.
                unsafe {
                    let mut default: libc::sigaction = std::mem::zeroed();
                    default.sa_sigaction = libc::SIG_DFL;
                    libc::sigaction(libc::SIGBUS, &default, std::ptr::null_mut());
                }
            }
        }
    }
}
