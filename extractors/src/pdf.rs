//! PDF documents through lopdf.

use crate::error::ExtractError;
use crate::extract::FileExtract;
use crate::limits::ExtractOptions;
use crate::registry::{Extractor, Input, Progress};
use crate::sniff;

/// Reads PDFs: page count, masked text preview, headings from the outline.
#[derive(Debug, Clone, Copy, Default)]
pub struct PdfExtractor;

impl Extractor for PdfExtractor {
    fn supports(&self, mime: &str) -> bool {
        mime == sniff::PDF
    }

    fn extract(
        &self,
        input: &Input<'_>,
        _options: &ExtractOptions,
        _progress: &mut dyn FnMut(Progress),
    ) -> Result<FileExtract, ExtractError> {
        Err(ExtractError::Unsupported {
            file: input.display.to_owned(),
            found: "PDF (not yet implemented)".into(),
        })
    }
}
