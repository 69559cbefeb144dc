//! Delimited text tables (CSV, TSV, semicolon and pipe separated).

use crate::error::ExtractError;
use crate::extract::FileExtract;
use crate::limits::ExtractOptions;
use crate::registry::{Extractor, Input, Progress};
use crate::sniff;

/// Reads delimited text.
#[derive(Debug, Clone, Copy, Default)]
pub struct CsvExtractor;

impl Extractor for CsvExtractor {
    fn supports(&self, mime: &str) -> bool {
        matches!(mime, sniff::CSV | sniff::TSV | sniff::TEXT)
    }

    fn extract(
        &self,
        input: &Input<'_>,
        _options: &ExtractOptions,
        _progress: &mut dyn FnMut(Progress),
    ) -> Result<FileExtract, ExtractError> {
        Err(ExtractError::Unsupported {
            file: input.display.to_owned(),
            found: "csv (not yet implemented)".into(),
        })
    }
}
