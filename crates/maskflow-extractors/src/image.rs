//! Raster images through the image crate (width, height and format, read
//! from the header only), with OCR by the system's `tesseract` program when
//! it is installed. OCR text is masked before it leaves this module; when
//! OCR cannot run, the extract says why instead.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use image::{ImageError, ImageFormat, ImageReader};

use crate::error::ExtractError;
use crate::extract::{FileExtract, FileKind, ImageExtract};
use crate::extractor::{Extractor, Input, Progress};
use crate::limits::{ExtractOptions, TEXT_PREVIEW_CHARS};
use crate::mask::mask;
use crate::sniff;
use crate::table::cut;

/// How long OCR of one image may take before tesseract is stopped.
pub const DEFAULT_OCR_TIMEOUT: Duration = Duration::from_secs(60);
/// Most bytes of tesseract output read; the rest is discarded.
const MAX_OCR_OUTPUT_BYTES: u64 = 1024 * 1024;
/// The reason given when tesseract cannot be found.
pub const TESSERACT_MISSING: &str = "tesseract is not installed (apt-get install tesseract-ocr)";

/// Reads images: width, height, format, masked OCR text.
#[derive(Debug, Clone)]
pub struct ImageExtractor {
    /// The tesseract program to run; `None` looks for `tesseract` on `PATH`.
    pub tesseract: Option<PathBuf>,
    /// How long OCR may take before tesseract is killed.
    pub ocr_timeout: Duration,
}

impl Default for ImageExtractor {
    fn default() -> Self {
        Self {
            tesseract: None,
            ocr_timeout: DEFAULT_OCR_TIMEOUT,
        }
    }
}

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
        progress: &mut dyn FnMut(Progress),
    ) -> Result<FileExtract, ExtractError> {
        let file = input.display;
        let reader = ImageReader::open(input.path)
            .map_err(|e| ExtractError::io(file, e))?
            .with_guessed_format()
            .map_err(|e| ExtractError::io(file, e))?;
        let Some(format) = reader.format() else {
            return Err(ExtractError::damaged(
                file,
                "the image is damaged or in a format Maskflow cannot read",
            ));
        };
        let (width, height) = reader.into_dimensions().map_err(|e| image_error(file, e))?;
        let mut extract = FileExtract::new(input.filename, FileKind::Image);
        let (ocr_text, ocr_unavailable_reason) = match self.ocr(input.path) {
            Ok(text) => {
                if text.is_empty() {
                    extract
                        .warnings
                        .push("OCR found no text in the image".into());
                }
                (Some(text), None)
            }
            Err(reason) => (None, Some(reason)),
        };
        extract.image = Some(ImageExtract {
            width,
            height,
            format: format_name(format),
            ocr_text,
            ocr_unavailable_reason,
        });
        progress(Progress {
            done: input.size,
            total: input.size,
        });
        Ok(extract)
    }

    /// The text OCR finds; nothing when OCR cannot run (then no text of the
    /// image can be in an extract either).
    fn values(
        &self,
        input: &Input<'_>,
        _options: &crate::values::ValueOptions,
        sink: &mut dyn crate::values::ValueSink,
    ) -> Result<(), ExtractError> {
        if let Ok(text) = self.ocr_raw(input.path) {
            crate::values::visit_text(sink, &text);
        }
        Ok(())
    }
}

impl ImageExtractor {
    /// The tesseract program to run, if there is one.
    fn program(&self) -> Option<PathBuf> {
        match &self.tesseract {
            Some(path) => Some(path.clone()),
            None => find_on_path("tesseract"),
        }
    }

    /// Runs tesseract on `path`: the masked text, or why there is none.
    fn ocr(&self, path: &Path) -> Result<String, String> {
        self.ocr_raw(path)
            .map(|text| mask(&cut(text.trim(), TEXT_PREVIEW_CHARS)))
    }

    /// Runs tesseract on `path`: the raw text (blank lines dropped), or why there is none.
    fn ocr_raw(&self, path: &Path) -> Result<String, String> {
        let program = self.program().ok_or_else(|| TESSERACT_MISSING.to_owned())?;
        // A relative name starting with '-' would be read as an option.
        let image = if path.is_relative() {
            Path::new(".").join(path)
        } else {
            path.to_owned()
        };
        let mut child = Command::new(&program)
            .arg(&image)
            .arg("stdout")
            .env("OMP_THREAD_LIMIT", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => TESSERACT_MISSING.to_owned(),
                _ => "tesseract could not be started".to_owned(),
            })?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| "tesseract could not be started".to_owned())?;
        let reader = thread::spawn(move || {
            let mut limited = stdout.take(MAX_OCR_OUTPUT_BYTES);
            let mut out = Vec::new();
            let ok = limited.read_to_end(&mut out).is_ok();
            // Keep the pipe drained so tesseract never blocks on a full pipe.
            let _ = std::io::copy(&mut limited.into_inner(), &mut std::io::sink());
            ok.then_some(out)
        });
        let deadline = Instant::now() + self.ocr_timeout;
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if Instant::now() >= deadline => {
                    let _ = child.kill();
                    let _ = child.wait();
                    // The reader thread ends when the pipe closes; it is not waited for.
                    return Err(format!(
                        "tesseract did not finish within {} s and was stopped",
                        self.ocr_timeout.as_secs_f32()
                    ));
                }
                Ok(None) => thread::sleep(Duration::from_millis(20)),
                Err(_) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err("tesseract could not be watched and was stopped".to_owned());
                }
            }
        };
        let output = reader.join().ok().flatten();
        if !status.success() {
            return Err(match status.code() {
                Some(code) => format!("tesseract failed on this image (exit status {code})"),
                None => "tesseract failed on this image (it was killed)".to_owned(),
            });
        }
        let output = output.ok_or_else(|| "tesseract's output could not be read".to_owned())?;
        let text = String::from_utf8_lossy(&output);
        let tidy = text
            .lines()
            .map(str::trim_end)
            .filter(|line| !line.trim().is_empty())
            .collect::<Vec<_>>()
            .join("\n");
        Ok(tidy)
    }
}

/// The first `name` in a folder of `PATH` that is a file.
fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

/// "png", "jpeg", "gif", …
fn format_name(format: ImageFormat) -> String {
    match format {
        ImageFormat::Png => "png".into(),
        ImageFormat::Jpeg => "jpeg".into(),
        ImageFormat::Gif => "gif".into(),
        ImageFormat::Bmp => "bmp".into(),
        ImageFormat::Tiff => "tiff".into(),
        ImageFormat::WebP => "webp".into(),
        other => other
            .extensions_str()
            .first()
            .map(|e| (*e).to_owned())
            .unwrap_or_else(|| "image".into()),
    }
}

fn image_error(file: &str, error: ImageError) -> ExtractError {
    let reason = match &error {
        ImageError::IoError(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
            "the image is truncated: its header is incomplete"
        }
        ImageError::IoError(_) => "the image could not be read",
        ImageError::Unsupported(_) => "the image uses a variant of its format Maskflow cannot read",
        ImageError::Limits(_) => "the image is larger than Maskflow accepts",
        _ => "the image is damaged: its header cannot be read",
    };
    ExtractError::damaged(file, reason)
}
