//! The zip-bomb pre-check shared by every extractor of a zip container
//! (xlsx, xlsm, xlsb, ods, docx).
//!
//! Before any member is inflated, the sizes the central directory declares
//! are checked against [`MAX_ZIP_MEMBER_BYTES`], [`MAX_ZIP_RATIO`] and
//! [`MAX_ZIP_TOTAL_BYTES`], and an encrypted member is reported as such.
//! Member names come from the file, so no message quotes them: a refusal
//! speaks of sizes only.

use std::io::{Read, Seek};

use zip::ZipArchive;

use crate::error::ExtractError;
use crate::limits::{
    MAX_ZIP_MEMBER_BYTES, MAX_ZIP_RATIO, MAX_ZIP_TOTAL_BYTES, ZIP_RATIO_EXEMPT_BYTES,
};

/// Declared sizes of one zip member, from the central directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemberSize {
    /// Declared uncompressed size in bytes.
    pub uncompressed: u64,
    /// Compressed size in bytes.
    pub compressed: u64,
}

/// Checks declared member sizes against the zip-bomb limits; `Err` says which, in a sentence.
pub fn check_sizes(members: impl IntoIterator<Item = MemberSize>) -> Result<(), String> {
    let mut total: u64 = 0;
    for m in members {
        if m.uncompressed > MAX_ZIP_MEMBER_BYTES {
            return Err(format!(
                "one part declares {}, the limit for a part is {}",
                human(m.uncompressed),
                human(MAX_ZIP_MEMBER_BYTES)
            ));
        }
        let ratio = m.uncompressed / m.compressed.max(1);
        if m.uncompressed > ZIP_RATIO_EXEMPT_BYTES && ratio > MAX_ZIP_RATIO {
            return Err(format!(
                "one part of {} is compressed {ratio}:1, the limit is {MAX_ZIP_RATIO}:1",
                human(m.uncompressed)
            ));
        }
        total = total.saturating_add(m.uncompressed);
    }
    if total > MAX_ZIP_TOTAL_BYTES {
        return Err(format!(
            "its parts declare {} in all, the limit is {}",
            human(total),
            human(MAX_ZIP_TOTAL_BYTES)
        ));
    }
    Ok(())
}

/// Checks a zip's central directory only: a bomb is `TooLarge`, an encrypted member `Encrypted`.
pub fn check_archive<R: Read + Seek>(
    archive: &ZipArchive<R>,
    file: &str,
    what: &'static str,
) -> Result<(), ExtractError> {
    // Members are checked in order, so the first offending one decides,
    // whether it is encrypted or too large.
    let mut refused = None;
    let sizes = (0..archive.len()).map_while(|i| match archive.by_index_data(i) {
        Ok(entry) if entry.encrypted() => {
            refused = Some(ExtractError::Encrypted {
                file: file.to_owned(),
                what,
            });
            None
        }
        Ok(entry) => Some(MemberSize {
            uncompressed: entry.size(),
            compressed: entry.compressed_size(),
        }),
        Err(_) => {
            refused = Some(ExtractError::damaged(
                file,
                format!("the {what} is damaged: its zip container is truncated or invalid"),
            ));
            None
        }
    });
    let checked = check_sizes(sizes);
    if let Some(error) = refused {
        return Err(error);
    }
    checked.map_err(|detail| ExtractError::TooLarge {
        file: file.to_owned(),
        what,
        detail,
    })
}

/// A byte count for people: "3.0 GiB", "12 KiB".
pub fn human(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["bytes", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} bytes")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn size(uncompressed: u64, compressed: u64) -> MemberSize {
        MemberSize {
            uncompressed,
            compressed,
        }
    }

    #[test]
    fn human_sizes_read_well() {
        assert_eq!(human(12), "12 bytes");
        assert_eq!(human(3 * 1024 * 1024 * 1024), "3.0 GiB");
    }

    #[test]
    fn zip_sizes_within_limits_pass() {
        assert_eq!(
            check_sizes([size(500, 100), size(ZIP_RATIO_EXEMPT_BYTES, 1)]),
            Ok(())
        );
        assert_eq!(check_sizes([size(10 << 20, 1 << 20)]), Ok(()));
    }

    #[test]
    fn zip_bombs_are_refused() {
        let err = check_sizes([size(MAX_ZIP_MEMBER_BYTES + 1, 1 << 30)]).unwrap_err();
        assert!(err.starts_with("one part declares "), "{err}");
        assert!(err.ends_with("the limit for a part is 1.0 GiB"), "{err}");
        let err = check_sizes([size(100 << 20, 1000)]).unwrap_err();
        assert!(
            err.contains("100.0 MiB is compressed 104857:1, the limit is 1000:1"),
            "{err}"
        );
        let err = check_sizes([size(900 << 20, 900 << 20); 3]).unwrap_err();
        assert!(
            err.contains("its parts declare 2.6 GiB in all, the limit is 2.0 GiB"),
            "{err}"
        );
        let err = check_sizes([size(2 << 20, 0)]).unwrap_err();
        assert!(err.contains("is compressed 2097152:1"), "{err}");
    }

    #[test]
    fn an_encrypted_member_is_refused_as_encrypted() {
        let mut out = std::io::Cursor::new(Vec::new());
        {
            let mut w = zip::ZipWriter::new(&mut out);
            w.start_file("xl/workbook.xml", zip::write::SimpleFileOptions::default())
                .expect("zip entry");
            std::io::Write::write_all(&mut w, b"<workbook/>").expect("write");
            w.finish().expect("zip finished");
        }
        let mut bytes = out.into_inner();
        // Set the "encrypted" bit of the member's central-directory flags.
        let at = bytes
            .windows(4)
            .position(|w| w == b"PK\x01\x02")
            .expect("central directory")
            + 8;
        bytes[at] |= 1;
        let archive = ZipArchive::new(std::io::Cursor::new(bytes)).expect("zip reads");
        let err = check_archive(&archive, "f.xlsx", "workbook").unwrap_err();
        assert!(
            matches!(
                err,
                ExtractError::Encrypted {
                    what: "workbook",
                    ..
                }
            ),
            "{err:?}"
        );
    }
}
