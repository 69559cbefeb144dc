//! Maskflow's extractors: every file the user drops is read here, locally,
//! into a [`FileExtract`] whose sample values are masked with [`mask`].
//!
//! This crate owns masking and one extractor per file type. It does no
//! network I/O and knows nothing of databases, HTTP or Tauri: callers hand it
//! a path and get back an extract or an [`ExtractError`] that names the file
//! and the problem.
//!
//! Two readings are not masked, and neither is ever sent anywhere: [`values`]
//! (the raw values, for the privacy guard) and [`preview`] (a script's own
//! outputs, shown to the person who ran it), both through the same readers as
//! the extract.

#![deny(missing_docs)]

pub mod csv;
pub mod error;
pub mod excel;
pub mod extract;
pub mod extractor;
pub mod image;
pub mod limits;
pub mod mask;
pub mod ole;
pub mod pdf;
pub mod preview;
pub mod profile;
pub mod registry;
#[cfg(test)]
mod snapshots;
pub mod sniff;
pub mod table;
pub mod values;
pub mod word;
pub mod zipguard;

pub use error::ExtractError;
pub use extract::{
    CategoryColumn, CategoryValue, ColumnProfile, DifferingColumn, DocumentExtract, FileExtract,
    FileKind, FormatCount, Heading, ImageExtract, RepeatedKeys, ShapeCount, SheetExtract,
    TableExtract, TableProfile, TextFormat,
};
pub use extractor::{Extractor, Input, Progress};
pub use limits::ExtractOptions;
pub use mask::mask;
pub use registry::{Registry, extract_path, quiet_contained_panics};
pub use values::{ValueOptions, ValueSink};
