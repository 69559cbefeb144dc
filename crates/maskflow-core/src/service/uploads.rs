//! Files the user gives: uploads (streamed or as bytes) and local files
//! read where they lie, each extracted, masked and recorded.

use super::*;
use crate::events::EventBus;
use maskflow_extractors::{FileKind, ValueSink};
use maskflow_privacy::categories::{CategoryCandidate, CategoryCounter, DEFAULT_MIN_ROWS};

impl Service {
    /// Where to store a new upload: a fresh file id and a path under
    /// `<home>/files/<file_id>/` named after the user's file.
    pub fn new_upload(&self, filename: &str) -> Result<(String, PathBuf)> {
        let id = self.id("file");
        let dir = self.inner.home.join("files").join(&id);
        std::fs::create_dir_all(&dir)
            .map_err(|e| CoreError::io(format!("creating {}", dir.display()), e))?;
        Ok((id, dir.join(safe_filename(filename))))
    }

    /// Extracts an upload written to the path [`Service::new_upload`] gave,
    /// and records it. On failure the stored copy is removed and the error
    /// names the file as the user did.
    pub async fn add_upload(
        &self,
        file_id: &str,
        filename: &str,
        path: PathBuf,
    ) -> Result<UploadedFile> {
        let dir = path.parent().map(Path::to_path_buf);
        let result = self.record_file(file_id, filename, path).await;
        if result.is_err()
            && let Some(d) = &dir
        {
            let _ = std::fs::remove_dir_all(d);
        }
        result
    }

    /// Stores bytes the user picked in a shell that has no path for them (a
    /// file chooser inside the desktop window), then extracts them like an
    /// upload.
    pub async fn add_upload_bytes(&self, filename: &str, bytes: &[u8]) -> Result<UploadedFile> {
        self.ensure_space(
            bytes.len() as u64,
            &format!("the upload {}", safe_filename(filename)),
        )?;
        let (file_id, path) = self.new_upload(filename)?;
        if let Err(e) = std::fs::write(&path, bytes) {
            if let Some(d) = path.parent() {
                let _ = std::fs::remove_dir_all(d);
            }
            return Err(CoreError::io(format!("writing {}", path.display()), e));
        }
        self.add_upload(&file_id, filename, path).await
    }

    /// Extracts a file where it lies on this machine (the desktop app's
    /// dropped files) and records it with its path; nothing is copied or
    /// removed. The path stays local: only the masked extract is returned.
    pub async fn add_local_file(&self, path: PathBuf) -> Result<UploadedFile> {
        let meta = std::fs::metadata(&path)
            .map_err(|e| CoreError::InvalidRequest(format!("{}: {e}", path.display())))?;
        if !meta.is_file() {
            return Err(CoreError::InvalidRequest(format!(
                "{} is not a file",
                path.display()
            )));
        }
        let filename = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let file_id = self.id("file");
        self.record_file(&file_id, &filename, path).await
    }

    /// Runs the extractor over `path` (publishing [`Event::ExtractProgress`]
    /// while a large file is counted) and stores the file's row. The reading
    /// runs in the service's extraction slots ([`extract_pool`]), off the
    /// async workers; the store is written in one short transaction after.
    pub(super) async fn record_file(
        &self,
        file_id: &str,
        filename: &str,
        path: PathBuf,
    ) -> Result<UploadedFile> {
        let display_name = safe_filename(filename);
        let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        let events = self.inner.events.clone();
        let (id, name) = (file_id.to_owned(), display_name.clone());
        let waiting = || {
            events.publish(Event::ExtractProgress {
                file_id: id.clone(),
                filename: name.clone(),
                done: 0,
                total: size,
                waiting: true,
            })
        };
        let read = FileReading {
            path: path.clone(),
            size,
            categories_max_bytes: self.max_file_bytes(),
            events: events.clone(),
            file_id: id.clone(),
            filename: name.clone(),
        };
        let extracted = self
            .inner
            .extract_pool
            .run(waiting, move || read.run())
            .await?;
        let (mut extract, categories) = match extracted {
            Ok(done) => done,
            Err(e) => {
                let message = e
                    .to_string()
                    .replace(&path.display().to_string(), &display_name);
                return Err(CoreError::InvalidRequest(message));
            }
        };
        extract.filename = display_name.clone();
        let row = FileRow {
            id: file_id.to_owned(),
            filename: display_name,
            path: path.display().to_string(),
            size_bytes: i64::try_from(size).unwrap_or(i64::MAX),
            extract: to_json(&extract)?,
            created_at: self.now(),
        };
        {
            let mut db = self.db();
            let tx = db.transaction()?;
            store::insert_file(&tx, &row)?;
            store::file_categories::put(&tx, &row.id, &categories)?;
            tx.commit()?;
        }
        let mut uploaded = UploadedFile::from(row);
        uploaded.categories = categories;
        Ok(uploaded)
    }

    /// How many files are read at once at most (the others wait their turn).
    pub fn extract_slots(&self) -> usize {
        self.inner.extract_pool.slots()
    }
}

/// What reading one file takes, moved onto its extraction thread.
struct FileReading {
    path: PathBuf,
    size: u64,
    categories_max_bytes: u64,
    events: EventBus,
    file_id: String,
    filename: String,
}

/// A file's extract (profiled when a table) and its category columns (#28).
type Reading = (maskflow_extractors::FileExtract, Vec<CategoryCandidate>);

impl FileReading {
    /// The extract, then one pass over the values for both the profile and
    /// the category columns (two when they may read different amounts).
    fn run(self) -> std::result::Result<Reading, maskflow_extractors::ExtractError> {
        let mut last_percent = u64::MAX;
        let mut progress = |done: u64, total: u64| {
            let percent = done.saturating_mul(100) / total.max(1);
            if percent != last_percent {
                last_percent = percent;
                self.events.publish(Event::ExtractProgress {
                    file_id: self.file_id.clone(),
                    filename: self.filename.clone(),
                    done,
                    total,
                    waiting: false,
                });
            }
        };
        let mut extract = maskflow_extractors::extract_path(
            &self.path,
            &maskflow_extractors::ExtractOptions::with_samples(UPLOAD_SAMPLES),
            &mut |step| progress(step.done, step.total),
        )?;
        let registry = maskflow_extractors::Registry::with_defaults();
        // The profile covers every row (the prompt says so); the category
        // count reads up to its own limit, in the same pass when that is
        // the whole file too (a workbook's sheets are read whole by both).
        let profile_options = maskflow_extractors::ValueOptions::WHOLE_FILE;
        let table = matches!(extract.kind, FileKind::Csv | FileKind::Excel);
        let tee = table
            && (matches!(extract.kind, FileKind::Excel) || self.size <= self.categories_max_bytes);
        let mut sink = UploadSinks::new(self.size, &mut progress, tee);
        if table {
            // A file the extract could read but the profile cannot (it is
            // read twice) keeps its extract, without a profile.
            let read = registry.values(&self.path, &profile_options, &mut sink);
            let profiled = read.is_ok();
            let tables = std::mem::take(&mut sink.profiler).finish();
            if profiled {
                maskflow_extractors::profile::attach(&mut extract, tables);
            }
            if tee && !profiled {
                sink.categories = None;
            }
        }
        let categories = if tee {
            sink.categories.map(|c| c.finish(DEFAULT_MIN_ROWS))
        } else {
            drop(sink);
            maskflow_privacy::categories::candidates(
                &self.path,
                self.categories_max_bytes,
                DEFAULT_MIN_ROWS,
            )
            .ok()
        };
        Ok((extract, categories.unwrap_or_default()))
    }
}
/// Sample rows an upload's extract keeps: more than the extractors' default,
/// since the context-fit reduction cuts them when a model's window is small.
pub const UPLOAD_SAMPLES: usize = 10;

/// One pass over a table's values, fed to the profiler (reporting the
/// pass's progress by the bytes of the cells it has seen, about the file's
/// bytes without delimiters) and, when it is the same pass, to the category
/// count: a large file is read once for both.
struct UploadSinks<'a> {
    profiler: maskflow_extractors::profile::Profiler,
    categories: Option<CategoryCounter>,
    size: u64,
    seen: u64,
    next: u64,
    report: &'a mut dyn FnMut(u64, u64),
}

impl<'a> UploadSinks<'a> {
    fn new(size: u64, report: &'a mut dyn FnMut(u64, u64), categories: bool) -> Self {
        Self {
            profiler: Default::default(),
            categories: categories.then(CategoryCounter::default),
            size,
            seen: 0,
            next: 0,
            report,
        }
    }
}

impl ValueSink for UploadSinks<'_> {
    fn table(&mut self, sheet: Option<&str>, columns: &[String]) {
        self.profiler.table(sheet, columns);
        if let Some(c) = &mut self.categories {
            c.table(sheet, columns);
        }
    }

    fn cell(&mut self, column: usize, value: &str) {
        self.profiler.cell(column, value);
        self.counted(column, value);
    }

    fn text_cell(&mut self, column: usize, value: &str) {
        self.profiler.text_cell(column, value);
        self.counted(column, value);
    }

    fn text(&mut self, text: &str) {
        if let Some(c) = &mut self.categories {
            c.text(text);
        }
    }

    fn row_end(&mut self) {
        self.profiler.row_end();
        if let Some(c) = &mut self.categories {
            c.row_end();
        }
    }

    fn table_width(&mut self, width: usize) {
        self.profiler.table_width(width);
        if let Some(c) = &mut self.categories {
            c.table_width(width);
        }
    }
}

impl UploadSinks<'_> {
    /// A cell for the category counter and the progress.
    fn counted(&mut self, column: usize, value: &str) {
        if let Some(c) = &mut self.categories {
            c.cell(column, value);
        }
        self.seen += value.len() as u64 + 1;
        if self.seen >= self.next && self.size > 0 {
            (self.report)(self.seen.min(self.size), self.size);
            self.next = self.seen + self.size / 100 + 1;
        }
    }
}

/// The file's own name without folders or control characters ("upload" when empty).
pub(super) fn safe_filename(name: &str) -> String {
    let base = name.rsplit(['/', '\\']).next().unwrap_or("");
    let cleaned: String = base
        .chars()
        .filter(|c| !c.is_control())
        .map(|c| {
            if matches!(c, ':' | '*' | '?' | '"' | '<' | '>' | '|') {
                '_'
            } else {
                c
            }
        })
        .take(200)
        .collect();
    let cleaned = cleaned.trim().trim_start_matches('.').to_owned();
    if cleaned.is_empty() {
        "upload".into()
    } else {
        cleaned
    }
}
