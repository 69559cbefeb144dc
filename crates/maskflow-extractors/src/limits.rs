//! Options and the hard limits that keep memory bounded whatever the input.

/// Default number of sample rows per table.
pub const DEFAULT_SAMPLES: usize = 5;
/// Largest number of sample rows a caller may ask for.
pub const MAX_SAMPLES: usize = 50;
/// Longest sample value kept, in characters; longer values are cut (and the
/// extract says so).
pub const MAX_VALUE_CHARS: usize = 200;
/// Longest column name kept, in characters.
pub const MAX_COLUMN_NAME_CHARS: usize = 256;
/// Samples and columns are read from at most this many bytes at the start of a file.
pub const SAMPLE_WINDOW_BYTES: u64 = 8 * 1024 * 1024;
/// Largest decompressed size accepted for one member of a zip container
/// (xlsx, docx, ods): anything larger is treated as a zip bomb.
pub const MAX_ZIP_MEMBER_BYTES: u64 = 1024 * 1024 * 1024;
/// Largest total decompressed size accepted for a zip container.
pub const MAX_ZIP_TOTAL_BYTES: u64 = 2 * 1024 * 1024 * 1024;
/// Largest compression ratio accepted for a zip member bigger than
/// [`ZIP_RATIO_EXEMPT_BYTES`].
pub const MAX_ZIP_RATIO: u64 = 1000;
/// Zip members at most this big are exempt from the compression-ratio check.
pub const ZIP_RATIO_EXEMPT_BYTES: u64 = 1024 * 1024;
/// The most sheets a workbook may declare: reading a long sheet list costs
/// more than linear time in the spreadsheet library (50,000 sheets over one
/// part took 33 s and 1.15 GB), so the list is counted first, linearly.
pub const MAX_SHEETS: usize = 1000;
/// Characters of masked text kept in a document's preview.
pub const TEXT_PREVIEW_CHARS: usize = 2000;
/// Pages of a PDF whose text feeds the preview.
pub const PREVIEW_PAGES: u32 = 3;

/// What the caller wants from an extraction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExtractOptions {
    /// Number of sample rows (clamped to `1..=MAX_SAMPLES`).
    pub samples: usize,
}

impl Default for ExtractOptions {
    fn default() -> Self {
        Self {
            samples: DEFAULT_SAMPLES,
        }
    }
}

impl ExtractOptions {
    /// Options with `samples` clamped to the allowed range.
    pub fn with_samples(samples: usize) -> Self {
        Self {
            samples: samples.clamp(1, MAX_SAMPLES),
        }
    }
}
