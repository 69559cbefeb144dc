//! Spreadsheets (xlsx, xlsm, xlsb, xls, ods) through calamine.

use crate::error::ExtractError;
use crate::extract::FileExtract;
use crate::limits::ExtractOptions;
use crate::registry::{Extractor, Input, Progress};
use crate::sniff;

/// Reads workbooks: every sheet, dates as ISO-8601, formulas as cached values.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExcelExtractor;

impl Extractor for ExcelExtractor {
    fn supports(&self, mime: &str) -> bool {
        matches!(
            mime,
            sniff::XLSX | sniff::XLSM | sniff::XLSB | sniff::XLS | sniff::ODS
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
            found: "workbook (not yet implemented)".into(),
        })
    }
}
