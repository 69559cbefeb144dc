//! Raster images through the image crate, with OCR by the system's tesseract.

use crate::error::ExtractError;
use crate::extract::FileExtract;
use crate::limits::ExtractOptions;
use crate::registry::{Extractor, Input, Progress};
use crate::sniff;

/// Reads images: width, height, format, masked OCR text.
#[derive(Debug, Clone, Default)]
pub struct ImageExtractor;

impl Extractor for ImageExtractor {
    fn supports(&self, mime: &str) -> bool {
        matches!(
            mime,
            sniff::PNG | sniff::JPEG | sniff::GIF | sniff::BMP | sniff::TIFF | sniff::WEBP
        )
    }

    fn extract(
        &self,
        input: &Input<'_>,
        _options: &ExtractOptions,
        _progress: &mut dyn FnMut(Progress),
    ) -> Result<FileExtract, ExtractError> {
        Err(ExtractError::Unsupported {
            file: input.display.to_owned(),
            found: "image (not yet implemented)".into(),
        })
    }
}
