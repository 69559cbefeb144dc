//! The extractor interface (seed 000: `supports(mime)` + `extract(file)`),
//! apart from the registry so that each extractor depends only on this.

use std::fmt::Debug;
use std::path::Path;

use crate::error::ExtractError;
use crate::extract::FileExtract;
use crate::limits::ExtractOptions;
use crate::values::{ValueOptions, ValueSink};

/// Progress of a slow pass (the exact row count of a large file), in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Bytes read so far.
    pub done: u64,
    /// Size of the file in bytes.
    pub total: u64,
}

/// One file handed to an extractor.
#[derive(Clone, Copy, Debug)]
pub struct Input<'a> {
    /// Where the file is.
    pub path: &'a Path,
    /// The file as the user named it, for error messages.
    pub display: &'a str,
    /// The file's name without its folder, for the extract.
    pub filename: &'a str,
    /// The sniffed MIME type.
    pub mime: &'static str,
    /// Size in bytes.
    pub size: u64,
}

/// Reads one type of file into a masked [`FileExtract`].
pub trait Extractor: Send + Sync + Debug {
    /// Whether this extractor reads files of this MIME type.
    fn supports(&self, mime: &str) -> bool;

    /// Extracts `input`. Slow passes report their progress through `progress`.
    fn extract(
        &self,
        input: &Input<'_>,
        options: &ExtractOptions,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<FileExtract, ExtractError>;

    /// Columns and masked samples only, as fast as the format allows: for a
    /// large table, `row_count` may be only the records read so far. By
    /// default this is the full extraction.
    fn preview(
        &self,
        input: &Input<'_>,
        options: &ExtractOptions,
    ) -> Result<FileExtract, ExtractError> {
        self.extract(input, options, &mut |_| {})
    }

    /// Visits the raw values of `input` (see [`crate::values`]): every cell
    /// of every table, every piece of text, and the header's column names
    /// when the extractor takes the first row as a header.
    fn values(
        &self,
        input: &Input<'_>,
        options: &ValueOptions,
        sink: &mut dyn ValueSink,
    ) -> Result<(), ExtractError>;
}
