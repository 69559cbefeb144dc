//! Errors of extraction. Each names the file and says what is wrong in words
//! a person understands; none carries a value from inside the file.

use std::io;

/// Why a file could not be extracted. `Display` is `<file>: <reason>`.
#[derive(thiserror::Error, Debug)]
#[non_exhaustive]
pub enum ExtractError {
    /// The path does not exist.
    #[error("{file}: no such file")]
    NotFound {
        /// The file as the user named it.
        file: String,
    },
    /// The file cannot be read with the current permissions.
    #[error("{file}: permission denied (the file cannot be read)")]
    PermissionDenied {
        /// The file as the user named it.
        file: String,
    },
    /// A directory was given where a file was expected.
    #[error("{file}: is a folder, not a file")]
    IsDirectory {
        /// The folder as the user named it.
        file: String,
    },
    /// The file has no content at all.
    #[error("{file}: the file is empty (0 bytes)")]
    Empty {
        /// The file as the user named it.
        file: String,
    },
    /// No extractor supports this type of file.
    #[error(
        "{file}: unsupported file type ({found}); Maskflow reads CSV/TSV, Excel, ODS, PDF, Word (.docx) and images"
    )]
    Unsupported {
        /// The file as the user named it.
        file: String,
        /// What the file was found to be, e.g. `application/zip` or "binary data".
        found: String,
    },
    /// The file is password-protected or encrypted.
    #[error(
        "{file}: the {what} is password-protected or encrypted; remove the protection and try again"
    )]
    Encrypted {
        /// The file as the user named it.
        file: String,
        /// "workbook", "PDF", "document".
        what: &'static str,
    },
    /// The file is damaged or is not what its name says.
    #[error("{file}: {reason}")]
    Damaged {
        /// The file as the user named it.
        file: String,
        /// What is wrong, e.g. "the workbook is damaged: the zip archive is truncated".
        reason: String,
    },
    /// The file would decompress to more than Maskflow accepts (a zip bomb, or a huge container).
    #[error(
        "{file}: the {what} decompresses to more than Maskflow accepts ({detail}); it may be a zip bomb"
    )]
    TooLarge {
        /// The file as the user named it.
        file: String,
        /// "workbook", "document".
        what: &'static str,
        /// Sizes involved.
        detail: String,
    },
    /// An I/O error while reading.
    #[error("{file}: could not read the file: {source}")]
    Io {
        /// The file as the user named it.
        file: String,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
}

impl ExtractError {
    /// Maps an I/O error on `file` to the most specific variant.
    pub fn io(file: &str, source: io::Error) -> Self {
        let file = file.to_owned();
        match source.kind() {
            io::ErrorKind::NotFound => Self::NotFound { file },
            io::ErrorKind::PermissionDenied => Self::PermissionDenied { file },
            io::ErrorKind::IsADirectory => Self::IsDirectory { file },
            _ => Self::Io { file, source },
        }
    }

    /// A damaged-file error with the given reason.
    pub fn damaged(file: &str, reason: impl Into<String>) -> Self {
        Self::Damaged {
            file: file.to_owned(),
            reason: reason.into(),
        }
    }

    /// The file this error is about.
    pub fn file(&self) -> &str {
        match self {
            Self::NotFound { file }
            | Self::PermissionDenied { file }
            | Self::IsDirectory { file }
            | Self::Empty { file }
            | Self::Unsupported { file, .. }
            | Self::Encrypted { file, .. }
            | Self::Damaged { file, .. }
            | Self::TooLarge { file, .. }
            | Self::Io { file, .. } => file,
        }
    }

    /// What is wrong, without the file's name (the `<reason>` of `Display`),
    /// for a caller whose sentence already names the file.
    pub fn reason(&self) -> String {
        let full = self.to_string();
        match full
            .strip_prefix(self.file())
            .and_then(|r| r.strip_prefix(": "))
        {
            Some(reason) => reason.to_owned(),
            None => full,
        }
    }

    /// A short machine-readable code, for the API and the UI.
    pub fn code(&self) -> &'static str {
        match self {
            Self::NotFound { .. } => "not_found",
            Self::PermissionDenied { .. } => "permission_denied",
            Self::IsDirectory { .. } => "is_directory",
            Self::Empty { .. } => "empty",
            Self::Unsupported { .. } => "unsupported",
            Self::Encrypted { .. } => "encrypted",
            Self::Damaged { .. } => "damaged",
            Self::TooLarge { .. } => "too_large",
            Self::Io { .. } => "io",
        }
    }
}
