//! The SIMD scan behind the exact count: 64 bytes at a time into bit masks
//! (quotes, line ends, delimiters), a prefix XOR of the quote mask for the
//! "inside quotes" mask, and a popcount of the bytes that start a record.
//!
//! Each block is folded without a data-dependent branch: a branch on "this
//! block has a quote" is taken at random on real tables (one quoted field
//! per row puts a quote in most blocks but not all) and each miss costs more
//! than the whole block. Anomalies are OR-ed into one word, read once per
//! buffer, for the same reason.
#![allow(unsafe_code)] // SIMD loads and intrinsics; each block says why it is sound.

/// Bit masks of one 64-byte block: bit `i` is byte `i`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Masks {
    quote: u64,
    /// `\n` or `\r`.
    end: u64,
    delim: u64,
}

/// The instruction set a [`Scanner`] classifies blocks with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    /// One 64-byte load and four compares into mask registers per block.
    #[cfg(target_arch = "x86_64")]
    Avx512,
    /// Two 32-byte loads, eight compares and eight movemasks per block.
    #[cfg(target_arch = "x86_64")]
    Avx2,
    /// The x86-64 baseline: four 16-byte loads per block.
    #[cfg(target_arch = "x86_64")]
    Sse2,
    /// Byte by byte (other architectures, and the reference in tests).
    Portable,
}

impl Kernel {
    /// The widest kernel this CPU runs, detected at run time.
    pub fn best() -> Self {
        Self::available()[0]
    }

    /// Every kernel this CPU runs, widest first.
    pub fn available() -> Vec<Self> {
        let mut kernels = Vec::new();
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            let scalar = has!("pclmulqdq") && has!("popcnt") && has!("bmi1");
            if scalar && has!("avx512f") && has!("avx512bw") {
                kernels.push(Self::Avx512);
            }
            if scalar && has!("avx2") {
                kernels.push(Self::Avx2);
            }
            kernels.push(Self::Sse2);
        }
        kernels.push(Self::Portable);
        kernels
    }
}

/// State carried from one block to the next.
#[derive(Debug)]
pub(super) struct Scanner {
    delimiter: u8,
    kernel: Kernel,
    /// All ones while inside quotes at the end of the last block.
    inside: u64,
    /// 1 when the last byte was a line end outside quotes (or at file start).
    last_end: u64,
    /// 1 when the last byte may precede an opening quote.
    last_sep: u64,
    /// 1 when the last byte was a closing quote.
    last_close: u64,
    /// Non-zero once a quote RFC 4180 does not allow has been seen.
    bad: u64,
    records: u64,
}

impl Scanner {
    /// A scanner at the start of a file, with the widest kernel the CPU has.
    pub(super) fn new(delimiter: u8) -> Self {
        Self::with_kernel(delimiter, Kernel::best())
    }

    /// A scanner with a given kernel, which must be one of [`Kernel::available`].
    pub(super) fn with_kernel(delimiter: u8, kernel: Kernel) -> Self {
        Self {
            delimiter,
            kernel,
            inside: 0,
            last_end: 1,
            last_sep: 1,
            last_close: 0,
            bad: 0,
            records: 0,
        }
    }

    /// Records started so far.
    pub(super) fn records(&self) -> u64 {
        self.records
    }

    /// False once the input had a quote RFC 4180 does not allow.
    pub(super) fn ok(&self) -> bool {
        self.bad == 0
    }

    /// Scans the whole 64-byte blocks of `data`; returns how many bytes that
    /// is (the rest, under 64 bytes, is for [`Scanner::short`]).
    pub(super) fn blocks(&mut self, data: &[u8]) -> usize {
        let whole = data.len() / 64 * 64;
        let data = &data[..whole];
        match self.kernel {
            // SAFETY (all three): `kernel` is one of `Kernel::available()`, so the
            // CPU has every feature the function enables.
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => unsafe { self.blocks_avx512(data) },
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => unsafe { self.blocks_avx2(data) },
            #[cfg(target_arch = "x86_64")]
            Kernel::Sse2 => unsafe { self.blocks_sse2(data) },
            Kernel::Portable => {
                for b in data.chunks_exact(64) {
                    self.step(
                        classify_portable(b, self.delimiter),
                        u64::MAX,
                        prefix_xor_shift,
                    );
                }
            }
        }
        whole
    }

    /// Scans one block of at most 64 bytes from a copy (the file's last
    /// block, or its first when a byte-order mark is blanked out).
    pub(super) fn short(&mut self, bytes: &[u8]) {
        let n = bytes.len().min(64);
        if n == 0 {
            return;
        }
        let mut block = [0u8; 64];
        block[..n].copy_from_slice(&bytes[..n]);
        let valid = u64::MAX >> (64 - n);
        self.step(
            classify_portable(&block, self.delimiter),
            valid,
            prefix_xor_shift,
        );
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,pclmulqdq,popcnt,bmi1")]
    unsafe fn blocks_avx512(&mut self, data: &[u8]) {
        use std::arch::x86_64::*;
        let (q, nl, cr, d) = (
            _mm512_set1_epi8(b'"' as i8),
            _mm512_set1_epi8(b'\n' as i8),
            _mm512_set1_epi8(b'\r' as i8),
            _mm512_set1_epi8(self.delimiter as i8),
        );
        for block in data.chunks_exact(64) {
            // SAFETY: `block` is 64 bytes long; one unaligned 64-byte load.
            let v = unsafe { _mm512_loadu_si512(block.as_ptr().cast()) };
            let masks = Masks {
                quote: _mm512_cmpeq_epi8_mask(v, q),
                end: _mm512_cmpeq_epi8_mask(v, nl) | _mm512_cmpeq_epi8_mask(v, cr),
                delim: _mm512_cmpeq_epi8_mask(v, d),
            };
            self.step(masks, u64::MAX, |x| prefix_xor_clmul(x));
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,pclmulqdq,popcnt,bmi1")]
    unsafe fn blocks_avx2(&mut self, data: &[u8]) {
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
            self.step(masks, u64::MAX, |x| prefix_xor_clmul(x));
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "sse2")]
    unsafe fn blocks_sse2(&mut self, data: &[u8]) {
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
            self.step(masks, u64::MAX, prefix_xor_shift);
        }
    }

    /// Folds one block into the count; `valid` masks the bytes that exist.
    /// Branch-free: the only dependency from one block to the next is the
    /// XOR and shift that carry `inside`, so blocks overlap in the pipeline.
    #[inline(always)]
    fn step(&mut self, m: Masks, valid: u64, prefix_xor: impl Fn(u64) -> u64) {
        let inside = prefix_xor(m.quote) ^ self.inside;
        self.inside = ((inside as i64) >> 63) as u64;
        let end = m.end & !inside;
        let after_end = (end << 1) | self.last_end;
        self.records += u64::from((!end & after_end & valid).count_ones());
        self.last_end = end >> 63;
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
        self.bad |= bad_open | bad_close;
    }
}

/// Classifies 64 bytes without SIMD (the short blocks, and other architectures).
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

    /// Runs `kernel` over `data` and returns (records, ok, carried state).
    fn run(kernel: Kernel, data: &[u8]) -> (u64, bool, [u64; 4]) {
        let mut s = Scanner::with_kernel(b',', kernel);
        let whole = s.blocks(data);
        s.short(&data[whole..]);
        (
            s.records,
            s.ok(),
            [s.inside, s.last_end, s.last_sep, s.last_close],
        )
    }

    #[test]
    fn every_simd_path_agrees_with_the_portable_one() {
        let mut well_formed = Vec::new();
        for i in 0..3000 {
            well_formed.extend_from_slice(format!("{i},\"a,\"\"b\"\"\nc\",d\r\n\n").as_bytes());
        }
        let mut x = 7u64;
        let noisy: Vec<u8> = (0..64 * 500 + 17)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                b"ab,\"\n\r;x"[(x >> 60) as usize % 8]
            })
            .collect();
        let kernels = Kernel::available();
        #[cfg(target_arch = "x86_64")]
        {
            assert!(kernels.contains(&Kernel::Sse2));
            // Where the CPU has them, the wide kernels are tested too (and are the ones used).
            if std::arch::is_x86_feature_detected!("avx512bw") {
                assert_eq!(Kernel::best(), Kernel::Avx512);
            }
        }
        for data in [&well_formed, &noisy] {
            // Every cut: a block that starts inside quotes, after a closing quote, after `\r`...
            for cut in [0, 1, 63, 64, 65, data.len() / 2] {
                let reference = run(Kernel::Portable, &data[cut..]);
                for &kernel in &kernels {
                    assert_eq!(run(kernel, &data[cut..]), reference, "{kernel:?} at {cut}");
                }
            }
        }
    }
}
