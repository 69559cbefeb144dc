//! Word documents (.docx) through zip + quick-xml.

use crate::error::ExtractError;
use crate::extract::FileExtract;
use crate::limits::ExtractOptions;
use crate::registry::{Extractor, Input, Progress};
use crate::sniff;

/// Reads .docx: headings with levels, masked text preview, tables.
#[derive(Debug, Clone, Copy, Default)]
pub struct WordExtractor;

impl Extractor for WordExtractor {
    fn supports(&self, mime: &str) -> bool {
        mime == sniff::DOCX
    }

    fn extract(
        &self,
        input: &Input<'_>,
        _options: &ExtractOptions,
        _progress: &mut dyn FnMut(Progress),
    ) -> Result<FileExtract, ExtractError> {
        Err(ExtractError::Unsupported {
            file: input.display.to_owned(),
            found: "Word (not yet implemented)".into(),
        })
    }
}
