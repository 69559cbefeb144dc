//! The registry that picks one extractor per file (seed 000: the first
//! whose `supports(mime)` is true wins).

use std::cell::Cell;
use std::fmt::Debug;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::sync::Once;

use crate::error::ExtractError;
use crate::extract::FileExtract;
use crate::extractor::{Extractor, Input, Progress};
use crate::limits::ExtractOptions;
use crate::sniff;
use crate::values::{ValueOptions, ValueSink};

/// The registered extractors, asked in order.
#[derive(Debug)]
pub struct Registry {
    extractors: Vec<Box<dyn Extractor>>,
}

impl Default for Registry {
    fn default() -> Self {
        Self::with_defaults()
    }
}

impl Registry {
    /// A registry with no extractor.
    pub fn empty() -> Self {
        Self {
            extractors: Vec::new(),
        }
    }

    /// A registry with every built-in extractor.
    pub fn with_defaults() -> Self {
        let mut registry = Self::empty();
        registry.register(Box::new(crate::csv::CsvExtractor));
        registry.register(Box::new(crate::excel::ExcelExtractor));
        registry.register(Box::new(crate::pdf::PdfExtractor));
        registry.register(Box::new(crate::word::WordExtractor));
        registry.register(Box::new(crate::image::ImageExtractor::default()));
        registry
    }

    /// Adds an extractor after the ones already registered.
    pub fn register(&mut self, extractor: Box<dyn Extractor>) {
        self.extractors.push(extractor);
    }

    /// The first extractor that supports `mime`.
    pub fn find(&self, mime: &str) -> Option<&dyn Extractor> {
        self.extractors
            .iter()
            .find(|e| e.supports(mime))
            .map(|e| e.as_ref())
    }

    /// Extracts the file at `path`: checks it, sniffs its type, and runs the
    /// first extractor that supports it.
    pub fn extract(
        &self,
        path: &Path,
        options: &ExtractOptions,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<FileExtract, ExtractError> {
        self.with_extractor(path, |extractor, input| {
            extractor.extract(input, options, progress)
        })
    }

    /// Like [`Registry::extract`], but only what can be read at once (see [`Extractor::preview`]).
    pub fn preview(
        &self,
        path: &Path,
        options: &ExtractOptions,
    ) -> Result<FileExtract, ExtractError> {
        self.with_extractor(path, |extractor, input| extractor.preview(input, options))
    }

    /// Visits the raw values of the file at `path` with the extractor its
    /// content calls for (the name's extension only breaks ties, as for
    /// [`Registry::extract`]). Text that is not a table (JSON, XML, prose)
    /// is visited line by line.
    pub fn values(
        &self,
        path: &Path,
        options: &ValueOptions,
        sink: &mut dyn ValueSink,
    ) -> Result<(), ExtractError> {
        let display = path.display().to_string();
        if sniff::sniff_file(path).map_err(|e| ExtractError::io(&display, e))? == sniff::OTHER_TEXT
        {
            return crate::csv::values::plain_text(path, &display, options, sink);
        }
        self.with_extractor(path, |extractor, input| {
            extractor.values(input, options, sink)
        })
    }

    fn with_extractor<T>(
        &self,
        path: &Path,
        run: impl FnOnce(&dyn Extractor, &Input<'_>) -> Result<T, ExtractError>,
    ) -> Result<T, ExtractError> {
        let display = path.display().to_string();
        let meta = std::fs::metadata(path).map_err(|e| ExtractError::io(&display, e))?;
        if meta.is_dir() {
            return Err(ExtractError::IsDirectory { file: display });
        }
        if meta.len() == 0 {
            return Err(ExtractError::Empty { file: display });
        }
        let mime = sniff::sniff_file(path).map_err(|e| ExtractError::io(&display, e))?;
        let Some(extractor) = self.find(mime) else {
            let ext = sniff::extension(path);
            let mut found = sniff::describe(mime).to_owned();
            if !ext.is_empty() {
                found.push_str(&format!(", although the name ends in .{ext}"));
            }
            return Err(ExtractError::Unsupported {
                file: display,
                found,
            });
        };
        let filename = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| display.clone());
        let input = Input {
            path,
            display: &display,
            filename: &filename,
            mime,
            size: meta.len(),
        };
        contained(&display, || run(extractor, &input))
    }
}

/// Runs `read` on the file `display`; third-party parsers must never take the
/// process down, so a panic in one is reported as a damaged file.
pub(crate) fn contained<T>(
    display: &str,
    read: impl FnOnce() -> Result<T, ExtractError>,
) -> Result<T, ExtractError> {
    IN_EXTRACTOR.with(|flag| flag.set(true));
    let result = catch_unwind(AssertUnwindSafe(read));
    IN_EXTRACTOR.with(|flag| flag.set(false));
    result.unwrap_or_else(|_| {
        Err(ExtractError::damaged(
            display,
            "the file could not be read; it may be damaged",
        ))
    })
}

thread_local! {
    /// Whether this thread is inside an extractor, where a panic is contained.
    static IN_EXTRACTOR: Cell<bool> = const { Cell::new(false) };
}

/// Keeps a panic inside an extractor (a third-party parser meeting a hostile
/// file) from printing anything: the registry already turns it into a
/// one-line "damaged file" error. Panics elsewhere still reach the previous
/// hook. Binaries call this once at start; fuzz targets do not, so that every
/// panic stays visible to the fuzzer.
pub fn quiet_contained_panics() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !IN_EXTRACTOR.with(Cell::get) {
                previous(info);
            }
        }));
    });
}

/// Extracts one file with the default registry.
pub fn extract_path(
    path: &Path,
    options: &ExtractOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<FileExtract, ExtractError> {
    Registry::with_defaults().extract(path, options, progress)
}
