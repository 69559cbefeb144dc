//! Exact record counting of delimited text in bounded memory.
//!
//! The fast path classifies 64 bytes at a time into bit masks (quotes,
//! line ends, delimiters) with SIMD, turns the quote mask into an
//! "inside quotes" mask with a prefix XOR, and counts the bytes that start a
//! record: a byte that is not a line end, right after a line end outside
//! quotes. That is exactly RFC 4180 with `""` escapes, quoted line breaks,
//! `\n`, `\r\n` and lone `\r` endings, and blank lines skipped — the csv
//! crate's dialect. A quote where RFC 4180 does not allow one (inside an
//! unquoted field, or text after a closing quote) is an anomaly: the fast
//! path gives up and [`count_records`] counts with `csv_core` instead, which
//! is slower but handles every quirk the same way the samples were read.
#![allow(unsafe_code)] // SIMD loads and intrinsics; each block says why it is sound.

use std::io::{self, Read};
use std::sync::mpsc;

/// Size of the read buffer. Memory stays at this whatever the file's size or
/// the length of one field.
const BUF: usize = 1 << 20;

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
        let whole = n / 64 * 64;
        if !scanner.blocks(&buf[..whole]) {
            return Ok(None);
        }
        if whole < n {
            let mut last = [0u8; 64];
            last[..n - whole].copy_from_slice(&buf[whole..n]);
            let valid = u64::MAX >> (64 - (n - whole));
            if scanner.block(classify_portable(&last, delimiter), valid) {
                return Ok(None);
            }
        }
        progress(done);
        if n < BUF {
            break;
        }
        let _ = empty.send(buf);
    }
    Ok(Some(scanner.records))
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

/// Bit masks of one 64-byte block: bit `i` is byte `i`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Masks {
    quote: u64,
    /// `\n` or `\r`.
    end: u64,
    delim: u64,
}

/// State carried from one block to the next.
#[derive(Debug)]
struct Scanner {
    delimiter: u8,
    /// All ones while inside quotes at the end of the last block.
    inside: u64,
    /// 1 when the last byte was a line end outside quotes (or at file start).
    last_end: u64,
    /// 1 when the last byte may precede an opening quote.
    last_sep: u64,
    /// 1 when the last byte was a closing quote.
    last_close: u64,
    records: u64,
}

impl Scanner {
    fn new(delimiter: u8) -> Self {
        Self {
            delimiter,
            inside: 0,
            last_end: 1,
            last_sep: 1,
            last_close: 0,
            records: 0,
        }
    }

    /// Scans whole 64-byte blocks with the best classifier this CPU has;
    /// false on an anomaly.
    fn blocks(&mut self, data: &[u8]) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("pclmulqdq")
            {
                // SAFETY: the CPU supports both features, checked just above.
                return unsafe { self.blocks_avx2(data) };
            }
            // SAFETY: SSE2 is part of the x86_64 baseline.
            unsafe { self.blocks_sse2(data) }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            data.chunks_exact(64)
                .all(|b| !self.block(classify_portable(b, self.delimiter), u64::MAX))
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,pclmulqdq")]
    unsafe fn blocks_avx2(&mut self, data: &[u8]) -> bool {
        use std::arch::x86_64::*;
        let (q, nl, cr, d) = (
            _mm256_set1_epi8(b'"' as i8),
            _mm256_set1_epi8(b'\n' as i8),
            _mm256_set1_epi8(b'\r' as i8),
            _mm256_set1_epi8(self.delimiter as i8),
        );
        for block in data.chunks_exact(64) {
            // SAFETY: `block` is 64 bytes long; the loads are unaligned loads of 32 bytes at 0 and 32.
            let (lo, hi) = unsafe {
                (
                    _mm256_loadu_si256(block.as_ptr().cast()),
                    _mm256_loadu_si256(block.as_ptr().add(32).cast()),
                )
            };
            let mask = |v: __m256i| -> u64 {
                let lo_bits = _mm256_movemask_epi8(_mm256_cmpeq_epi8(lo, v)) as u32 as u64;
                let hi_bits = _mm256_movemask_epi8(_mm256_cmpeq_epi8(hi, v)) as u32 as u64;
                lo_bits | (hi_bits << 32)
            };
            let masks = Masks {
                quote: mask(q),
                end: mask(nl) | mask(cr),
                delim: mask(d),
            };
            if self.block_with(masks, u64::MAX, |x| prefix_xor_clmul(x)) {
                return false;
            }
        }
        true
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "sse2")]
    unsafe fn blocks_sse2(&mut self, data: &[u8]) -> bool {
        use std::arch::x86_64::*;
        let (q, nl, cr, d) = (
            _mm_set1_epi8(b'"' as i8),
            _mm_set1_epi8(b'\n' as i8),
            _mm_set1_epi8(b'\r' as i8),
            _mm_set1_epi8(self.delimiter as i8),
        );
        for block in data.chunks_exact(64) {
            // SAFETY: `block` is 64 bytes long; four unaligned 16-byte loads at 0, 16, 32, 48.
            let v = unsafe {
                let p = block.as_ptr();
                [
                    _mm_loadu_si128(p.cast()),
                    _mm_loadu_si128(p.add(16).cast()),
                    _mm_loadu_si128(p.add(32).cast()),
                    _mm_loadu_si128(p.add(48).cast()),
                ]
            };
            let mask = |c: __m128i| -> u64 {
                v.iter()
                    .enumerate()
                    .map(|(i, x)| {
                        (_mm_movemask_epi8(_mm_cmpeq_epi8(*x, c)) as u16 as u64) << (16 * i)
                    })
                    .fold(0, |a, b| a | b)
            };
            let masks = Masks {
                quote: mask(q),
                end: mask(nl) | mask(cr),
                delim: mask(d),
            };
            if self.block_with(masks, u64::MAX, prefix_xor_shift) {
                return false;
            }
        }
        true
    }

    /// One block with the portable prefix XOR; true on an anomaly.
    fn block(&mut self, masks: Masks, valid: u64) -> bool {
        self.block_with(masks, valid, prefix_xor_shift)
    }

    /// Folds one block into the count; `valid` masks the bytes that exist.
    /// Returns true on an anomaly.
    #[inline(always)]
    fn block_with(&mut self, m: Masks, valid: u64, prefix_xor: impl Fn(u64) -> u64) -> bool {
        let inside = if m.quote == 0 {
            self.inside
        } else {
            prefix_xor(m.quote) ^ self.inside
        };
        self.inside = ((inside as i64) >> 63) as u64;
        let end = m.end & !inside;
        let after_end = (end << 1) | self.last_end;
        self.records += u64::from((!end & after_end & valid).count_ones());
        self.last_end = end >> 63;
        if m.quote == 0 && self.last_close == 0 {
            self.last_sep = ((m.delim & !inside) | end) >> 63;
            return false;
        }
        let close = m.quote & !inside;
        let open = m.quote & inside;
        let sep = (m.delim & !inside) | end | close;
        let after_sep = (sep << 1) | self.last_sep;
        let after_close = (close << 1) | self.last_close;
        self.last_sep = sep >> 63;
        self.last_close = close >> 63;
        // An opening quote must start a field; a closing quote must end one
        // (or be the first half of a `""` escape).
        let bad_open = open & !after_sep;
        let bad_close = after_close & valid & !(m.delim | m.end | m.quote);
        (bad_open | bad_close) != 0
    }
}

/// Classifies 64 bytes without SIMD (the tail block, and other architectures).
fn classify_portable(block: &[u8], delimiter: u8) -> Masks {
    let mut m = Masks::default();
    for (i, &b) in block.iter().enumerate().take(64) {
        let bit = 1u64 << i;
        if b == b'"' {
            m.quote |= bit;
        } else if b == b'\n' || b == b'\r' {
            m.end |= bit;
        } else if b == delimiter {
            m.delim |= bit;
        }
    }
    m
}

/// Bit `i` of the result is the XOR of bits `0..=i` of `x`.
#[inline(always)]
fn prefix_xor_shift(mut x: u64) -> u64 {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    x
}

/// [`prefix_xor_shift`] in one carry-less multiplication by all ones.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "pclmulqdq,sse2")]
fn prefix_xor_clmul(x: u64) -> u64 {
    use std::arch::x86_64::*;
    let product = _mm_clmulepi64_si128(_mm_set_epi64x(0, x as i64), _mm_set1_epi8(-1), 0);
    _mm_cvtsi128_si64(product) as u64
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
    fn prefix_xor_agrees() {
        for x in [
            0u64,
            1,
            0b1011,
            u64::MAX,
            0x8000_0000_0000_0001,
            0xDEAD_BEEF_F00D_CAFE,
        ] {
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("pclmulqdq") {
                // SAFETY: the feature was detected.
                assert_eq!(unsafe { prefix_xor_clmul(x) }, prefix_xor_shift(x));
            }
            let naive = (0..64).fold((0u64, 0u64), |(acc, out), i| {
                let acc = acc ^ ((x >> i) & 1);
                (acc, out | (acc << i))
            });
            assert_eq!(prefix_xor_shift(x), naive.1);
        }
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

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn every_simd_path_agrees_with_the_portable_one() {
        let mut well_formed = Vec::new();
        for i in 0..3000 {
            well_formed.extend_from_slice(format!("{i},\"a,\"\"b\"\"\nc\",d\r\n\n").as_bytes());
        }
        well_formed.truncate(well_formed.len() / 64 * 64);
        let mut x = 7u64;
        let noisy: Vec<u8> = (0..64 * 500)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                b"ab,\"\n\r;x"[(x >> 60) as usize % 8]
            })
            .collect();
        for data in [&well_formed, &noisy] {
            let mut portable = Scanner::new(b',');
            let ok = data
                .chunks_exact(64)
                .all(|b| !portable.block(classify_portable(b, b','), u64::MAX));
            let mut sse2 = Scanner::new(b',');
            // SAFETY: SSE2 is part of the x86_64 baseline.
            assert_eq!(unsafe { sse2.blocks_sse2(data) }, ok);
            assert_eq!(sse2.records, portable.records);
            if std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("pclmulqdq")
            {
                let mut avx2 = Scanner::new(b',');
                // SAFETY: both features were detected.
                assert_eq!(unsafe { avx2.blocks_avx2(data) }, ok);
                assert_eq!(avx2.records, portable.records);
            }
        }
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
