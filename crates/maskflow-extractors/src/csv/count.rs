//! Exact record counting of delimited text in bounded memory.
//!
//! The fast path ([`scan`]) classifies 64 bytes at a time into bit masks
//! (quotes, line ends, delimiters) with SIMD, turns the quote mask into an
//! "inside quotes" mask with a prefix XOR, and counts the bytes that start a
//! record: a byte that is not a line end, right after a line end outside
//! quotes. That is exactly RFC 4180 with `""` escapes, quoted line breaks,
//! `\n`, `\r\n` and lone `\r` endings, and blank lines skipped — the csv
//! crate's dialect. A quote where RFC 4180 does not allow one (inside an
//! unquoted field, or text after a closing quote) is an anomaly: the fast
//! path gives up and [`count_records`] counts with `csv_core` instead, which
//! is slower but handles every quirk the same way the samples were read.
//!
//! A regular file is read through a memory map ([`mapped`], Linux), in
//! windows so memory stays bounded: it saves the kernel's copy into read
//! buffers, which costs as much as the scan. Anything else (pipes, decoded
//! text, other systems) is read into buffers by a second thread.

mod mapped;
mod scan;

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;
use std::sync::mpsc;

pub use scan::Kernel;
use scan::Scanner;

/// Size of the read buffer. Memory stays at this whatever the file's size or
/// the length of one field.
const BUF: usize = 1 << 20;

/// Counts the records of the delimited file at `path`, whose bytes are
/// ASCII-compatible, reporting bytes done; equals [`count_records`] over the
/// same bytes.
pub fn count_file(path: &Path, delimiter: u8, progress: &mut dyn FnMut(u64)) -> io::Result<u64> {
    count_path(path, delimiter, mapped::WINDOW, progress)
}

/// [`count_file`] mapping `window` bytes at a time.
fn count_path(
    path: &Path,
    delimiter: u8,
    window: u64,
    progress: &mut dyn FnMut(u64),
) -> io::Result<u64> {
    let file = File::open(path)?;
    let meta = file.metadata()?;
    if meta.is_file() {
        match mapped::count(&file, meta.len(), delimiter, window, progress) {
            Ok(mapped::Outcome::Count(n)) => return Ok(n),
            Ok(mapped::Outcome::Anomaly) => {
                return slow_count(File::open(path)?, delimiter, progress);
            }
            // The file shrank under the map, or cannot be mapped: read it instead.
            Ok(mapped::Outcome::Changed) | Err(_) => {}
        }
    }
    count_records(|| File::open(path), delimiter, progress)
}

/// Counts the records of `data` in the calling thread with `kernel` (one of
/// [`Kernel::available`]); `None` on a quote RFC 4180 does not allow. For
/// measuring the scan alone, and for bytes already in memory.
///
/// # Panics
/// When the CPU lacks `kernel`'s instructions.
pub fn count_slice(data: &[u8], delimiter: u8, kernel: Kernel) -> Option<u64> {
    assert!(
        Kernel::available().contains(&kernel),
        "{kernel:?} is not available on this CPU"
    );
    let mut scanner = Scanner::with_kernel(delimiter, kernel);
    let mut data = data;
    let mut bom = [b'\n'; 64];
    if data.starts_with(UTF8_BOM) {
        // csv_core skips a leading BOM; as line ends, its bytes start no record.
        let first = data.len().min(64);
        bom[3..first].copy_from_slice(&data[3..first]);
        scanner.short(&bom[..first]);
        data = &data[first..];
    }
    let whole = scanner.blocks(data);
    scanner.short(&data[whole..]);
    scanner.ok().then(|| scanner.records())
}

/// Counts the records of a delimited text stream, reporting `(bytes read)`
/// after each buffer. `open` is called once, or twice when the fast path
/// meets an anomaly and the count restarts with `csv_core`.
pub fn count_records<R: Read + Send>(
    mut open: impl FnMut() -> io::Result<R>,
    delimiter: u8,
    progress: &mut dyn FnMut(u64),
) -> io::Result<u64> {
    match fast_count(open()?, delimiter, progress)? {
        Some(n) => Ok(n),
        None => slow_count(open()?, delimiter, progress),
    }
}

/// The UTF-8 byte-order mark.
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// Buffers in flight between the reading thread and the scan.
const BUFFERS: usize = 3;

/// The SIMD scan; `None` when the input has a quote RFC 4180 does not allow.
///
/// One thread reads while the caller's thread scans, so the count costs
/// about the larger of the two instead of their sum.
pub fn fast_count<R: Read + Send>(
    reader: R,
    delimiter: u8,
    progress: &mut dyn FnMut(u64),
) -> io::Result<Option<u64>> {
    let (full_tx, full_rx) = mpsc::sync_channel::<io::Result<(Vec<u8>, usize)>>(BUFFERS);
    let (empty_tx, empty_rx) = mpsc::sync_channel::<Vec<u8>>(BUFFERS);
    for _ in 0..BUFFERS {
        // Cannot fail: the receiver is alive and the channel has room.
        let _ = empty_tx.send(vec![0u8; BUF]);
    }
    std::thread::scope(|scope| {
        scope.spawn(move || {
            let mut reader = reader;
            while let Ok(mut buf) = empty_rx.recv() {
                let read = read_full(&mut reader, &mut buf);
                let last = !matches!(read, Ok(n) if n == BUF);
                if full_tx.send(read.map(|n| (buf, n))).is_err() || last {
                    return;
                }
            }
        });
        // Owning both channel ends here means returning early drops them, which
        // stops the reading thread before the scope waits for it.
        scan_chunks(full_rx, empty_tx, delimiter, progress)
    })
}

/// The consuming half of [`fast_count`].
fn scan_chunks(
    full: mpsc::Receiver<io::Result<(Vec<u8>, usize)>>,
    empty: mpsc::SyncSender<Vec<u8>>,
    delimiter: u8,
    progress: &mut dyn FnMut(u64),
) -> io::Result<Option<u64>> {
    let mut scanner = Scanner::new(delimiter);
    let mut done = 0u64;
    // Chunks are whole buffers (multiples of 64 bytes) except the last one.
    while let Ok(chunk) = full.recv() {
        let (mut buf, n) = chunk?;
        if done == 0 && buf[..n].starts_with(UTF8_BOM) {
            // csv_core skips a leading BOM; as line ends, its bytes start no record.
            buf[..3].fill(b'\n');
        }
        done += n as u64;
        let whole = scanner.blocks(&buf[..n]);
        scanner.short(&buf[whole..n]);
        if !scanner.ok() {
            return Ok(None);
        }
        progress(done);
        if n < BUF {
            break;
        }
        let _ = empty.send(buf);
    }
    Ok(Some(scanner.records()))
}

/// Fills `buf` as far as the reader allows; returns 0 only at end of input.
fn read_full<R: Read>(reader: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut total = 0;
    while total < buf.len() {
        match reader.read(&mut buf[total..]) {
            Ok(0) => break,
            Ok(n) => total += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(total)
}

/// Counts records with `csv_core`, the reference, in bounded memory.
pub fn slow_count<R: Read>(
    mut reader: R,
    delimiter: u8,
    progress: &mut dyn FnMut(u64),
) -> io::Result<u64> {
    let mut core = csv_core::ReaderBuilder::new().delimiter(delimiter).build();
    let mut buf = vec![0u8; BUF];
    let mut field = [0u8; 4096];
    let mut records = 0u64;
    let mut done = 0u64;
    loop {
        let n = read_full(&mut reader, &mut buf)?;
        done += n as u64;
        let mut input = &buf[..n];
        loop {
            let (result, consumed, _) = core.read_field(input, &mut field);
            input = &input[consumed..];
            match result {
                csv_core::ReadFieldResult::Field { record_end: true } => records += 1,
                csv_core::ReadFieldResult::Field { record_end: false }
                | csv_core::ReadFieldResult::OutputFull => {}
                csv_core::ReadFieldResult::InputEmpty => break,
                csv_core::ReadFieldResult::End => return Ok(records),
            }
        }
        progress(done);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn fast(s: &[u8]) -> Option<u64> {
        fast_count(s, b',', &mut |_| {}).ok().flatten()
    }

    fn reference(s: &[u8]) -> u64 {
        slow_count(s, b',', &mut |_| {}).unwrap_or(u64::MAX)
    }

    #[test]
    fn counts_like_the_csv_crate() {
        for case in [
            &b""[..],
            b"a,b\n1,2\n",
            b"a,b\n1,2",
            b"a,b\r\n1,2\r\n",
            b"a,b\r1,2\r",
            b"\n\na,b\n\n\n1,2\n\n",
            b"a,\"b\nc\",d\n1,2,3\n",
            b"\"a\"\"b\",c\n\"\"\"\",\"\"\n",
            b"\"unterminated\n1,2\n3,4",
            b"x",
            // Fuzzing found: csv_core skips a leading BOM, so BOM + line end is no record.
            b"\xEF\xBB\xBF\n\xFB\xE8v",
            b"\xEF\xBB\xBF",
            b"\xEF\xBB\xBFa,b\n1,2\n",
        ] {
            assert_eq!(
                fast(case),
                Some(reference(case)),
                "{:?}",
                String::from_utf8_lossy(case)
            );
            for kernel in Kernel::available() {
                assert_eq!(
                    count_slice(case, b',', kernel),
                    Some(reference(case)),
                    "{kernel:?}"
                );
            }
        }
    }

    #[test]
    fn quotes_that_rfc_4180_does_not_allow_fall_back() {
        assert_eq!(fast(b"a,5'10\",c\n"), None);
        assert_eq!(fast(b"\"a\"b,c\n"), None);
        assert_eq!(
            count_records(|| Ok(&b"a,5'10\",c\n1,2,3\n"[..]), b',', &mut |_| {}).ok(),
            Some(2)
        );
    }

    #[test]
    fn counts_across_block_and_buffer_boundaries() {
        let mut s = Vec::new();
        for i in 0..200_000 {
            s.extend_from_slice(format!("{i},\"multi\nline {i}\",\"q\"\"q\"\r\n").as_bytes());
        }
        assert_eq!(fast(&s), Some(200_000));
        assert_eq!(reference(&s), 200_000);
    }

    /// A small window, so that tests cross many window boundaries.
    const TEST_WINDOW: u64 = 64 * 1024;

    fn mapped(s: &[u8]) -> u64 {
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), s).unwrap();
        count_path(file.path(), b',', TEST_WINDOW, &mut |_| {}).unwrap()
    }

    #[test]
    fn a_mapped_file_counts_like_the_reference() {
        let mut long = Vec::new();
        for i in 0..20_000 {
            long.extend_from_slice(format!("{i},\"multi\nline {i}\",\"q\"\"q\"\r\n").as_bytes());
        }
        for case in [
            &b""[..],
            b"a,b\n1,2",
            b"\xEF\xBB\xBF\n\xFB\xE8v",
            b"\xEF\xBB\xBFa,b\n1,2\n",
            b"a,5'10\",c\n1,2,3\n",
            &long,
            &long[..long.len() - 7],
        ] {
            assert_eq!(mapped(case), reference(case));
        }
        let mut reported = Vec::new();
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), &long).unwrap();
        count_path(file.path(), b',', TEST_WINDOW, &mut |done| {
            reported.push(done)
        })
        .unwrap();
        assert_eq!(
            reported.len() as u64,
            (long.len() as u64).div_ceil(TEST_WINDOW)
        );
        assert_eq!(reported.last(), Some(&(long.len() as u64)));
    }

    #[test]
    fn a_file_that_shrinks_while_mapped_is_read_again_not_a_crash() {
        let mut s = Vec::new();
        for i in 0..40_000 {
            s.extend_from_slice(format!("{i},\"a\nb\",c\n").as_bytes());
        }
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), &s).unwrap();
        let keep = s.len() / 3;
        let writer = std::fs::OpenOptions::new()
            .write(true)
            .open(file.path())
            .unwrap();
        let mut first = true;
        let n = count_path(file.path(), b',', TEST_WINDOW, &mut |_| {
            // After the first window, the file loses its last two thirds: the
            // next windows are past its end, where a map access raises SIGBUS.
            if std::mem::take(&mut first) {
                writer.set_len(keep as u64).unwrap();
            }
        })
        .unwrap();
        assert_eq!(n, reference(&s[..keep]));
    }

    fn csvish() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(
            prop_oneof![
                Just(b'a'),
                Just(b','),
                Just(b'"'),
                Just(b'\n'),
                Just(b'\r'),
                Just(b'x')
            ],
            0..300,
        )
    }

    proptest! {
        #[test]
        fn fast_path_is_exact_or_gives_up(s in csvish()) {
            if let Some(n) = fast(&s) {
                prop_assert_eq!(n, reference(&s));
            }
            for kernel in Kernel::available() {
                if let Some(n) = count_slice(&s, b',', kernel) {
                    prop_assert_eq!(n, reference(&s));
                }
            }
        }

        #[test]
        fn well_formed_tables_take_the_fast_path(rows in proptest::collection::vec(proptest::collection::vec("[a-z\",\n ]{0,6}", 1..4), 0..40)) {
            let mut s = String::new();
            for row in &rows {
                let fields: Vec<String> = row.iter().map(|f| format!("\"{}\"", f.replace('"', "\"\""))).collect();
                s.push_str(&fields.join(","));
                s.push_str("\r\n");
            }
            prop_assert_eq!(fast(s.as_bytes()), Some(reference(s.as_bytes())));
        }

        #[test]
        fn count_records_always_matches_the_reference(s in csvish()) {
            let n = count_records(|| Ok(&s[..]), b',', &mut |_| {}).ok();
            prop_assert_eq!(n, Some(reference(&s)));
        }
    }
}
