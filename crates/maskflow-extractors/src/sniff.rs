//! Decides a file's MIME type from its content (magic bytes) and its name
//! together. Content wins; the extension only settles what content cannot
//! (a damaged zip named `.xlsx`, or which text table a `.tsv` is).

use std::io::{Read, Seek};
use std::path::Path;

/// MIME of CSV.
pub const CSV: &str = "text/csv";
/// MIME of TSV.
pub const TSV: &str = "text/tab-separated-values";
/// MIME of other plain text that may hold a table.
pub const TEXT: &str = "text/plain";
/// MIME of xlsx.
pub const XLSX: &str = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";
/// MIME of xlsm.
pub const XLSM: &str = "application/vnd.ms-excel.sheet.macroEnabled.12";
/// MIME of xlsb.
pub const XLSB: &str = "application/vnd.ms-excel.sheet.binary.macroEnabled.12";
/// MIME of xls (and of any OLE2 compound file that is named like a workbook).
pub const XLS: &str = "application/vnd.ms-excel";
/// MIME of ods.
pub const ODS: &str = "application/vnd.oasis.opendocument.spreadsheet";
/// MIME of docx.
pub const DOCX: &str = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";
/// MIME of PDF.
pub const PDF: &str = "application/pdf";
/// MIME of PNG.
pub const PNG: &str = "image/png";
/// MIME of JPEG.
pub const JPEG: &str = "image/jpeg";
/// MIME of GIF.
pub const GIF: &str = "image/gif";
/// MIME of BMP.
pub const BMP: &str = "image/bmp";
/// MIME of TIFF.
pub const TIFF: &str = "image/tiff";
/// MIME of WebP.
pub const WEBP: &str = "image/webp";
/// A zip archive that is none of the above.
pub const ZIP: &str = "application/zip";
/// An OLE2 compound file that is not a workbook (e.g. an old .doc).
pub const OLE: &str = "application/x-ole-storage";
/// Text that is not a table (JSON, HTML, XML…).
pub const OTHER_TEXT: &str = "text/x-not-a-table";
/// Unrecognised binary data.
pub const BINARY: &str = "application/octet-stream";

/// How many bytes of the head are looked at.
const HEAD: usize = 8192;

/// The lower-case extension of `path`, or "".
pub fn extension(path: &Path) -> String {
    path.extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase()
}

/// Sniffs the MIME type of the file at `path` from its first bytes and its name.
pub fn sniff_file(path: &Path) -> std::io::Result<&'static str> {
    let mut file = std::fs::File::open(path)?;
    let mut head = Vec::with_capacity(HEAD);
    (&mut file).take(HEAD as u64).read_to_end(&mut head)?;
    let ext = extension(path);
    if head.starts_with(b"PK\x03\x04") || head.starts_with(b"PK\x05\x06") {
        file.rewind()?;
        return Ok(sniff_zip(file, &ext));
    }
    Ok(sniff_bytes(&head, &ext))
}

/// Sniffs from the head of a file (everything but zip containers, which need the whole file).
pub fn sniff_bytes(head: &[u8], ext: &str) -> &'static str {
    if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        return PNG;
    }
    if head.starts_with(b"\xFF\xD8\xFF") {
        return JPEG;
    }
    if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        return GIF;
    }
    if head.starts_with(b"II*\0") || head.starts_with(b"MM\0*") {
        return TIFF;
    }
    if head.len() >= 12 && &head[..4] == b"RIFF" && &head[8..12] == b"WEBP" {
        return WEBP;
    }
    if is_bmp(head) {
        return BMP;
    }
    if memchr::memmem::find(&head[..head.len().min(1024)], b"%PDF-").is_some() {
        return PDF;
    }
    if head.starts_with(&[0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1]) {
        return match ext {
            "xls" | "xlsx" | "xlsm" | "xlsb" | "xla" | "xlt" => XLS,
            _ => OLE,
        };
    }
    if head.starts_with(b"PK\x03\x04") || head.starts_with(b"PK\x05\x06") {
        return by_extension(ext).unwrap_or(ZIP);
    }
    if is_text(head) {
        return text_mime(head, ext);
    }
    BINARY
}

fn is_bmp(head: &[u8]) -> bool {
    // "BM" alone is too weak (a CSV may start with "BMW,"): check the DIB header size too.
    head.len() >= 18
        && head.starts_with(b"BM")
        && matches!(
            u32::from_le_bytes([head[14], head[15], head[16], head[17]]),
            12 | 40 | 52 | 56 | 64 | 108 | 124
        )
}

/// Whether the head looks like text: a UTF-16 BOM, or no NUL and few control bytes.
fn is_text(head: &[u8]) -> bool {
    if head.starts_with(&[0xFF, 0xFE]) || head.starts_with(&[0xFE, 0xFF]) {
        return true;
    }
    if head.contains(&0) {
        return false;
    }
    let control = head
        .iter()
        .filter(|&&b| b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | 0x0C | 0x1B))
        .count();
    control * 20 <= head.len()
}

fn text_mime(head: &[u8], ext: &str) -> &'static str {
    match ext {
        "tsv" | "tab" => TSV,
        "csv" => CSV,
        "json" | "jsonl" | "ndjson" | "xml" | "html" | "htm" | "md" | "py" | "js" | "rs"
        | "yaml" | "yml" | "toml" => OTHER_TEXT,
        _ => {
            let trimmed = head
                .iter()
                .position(|b| !b.is_ascii_whitespace())
                .map(|i| &head[i..])
                .unwrap_or(&[]);
            if trimmed.starts_with(b"<?xml")
                || trimmed.starts_with(b"<!DOCTYPE")
                || trimmed.starts_with(b"<html")
            {
                OTHER_TEXT
            } else {
                TEXT
            }
        }
    }
}

fn by_extension(ext: &str) -> Option<&'static str> {
    Some(match ext {
        "xlsx" => XLSX,
        "xlsm" => XLSM,
        "xlsb" => XLSB,
        "ods" => ODS,
        "docx" => DOCX,
        _ => return None,
    })
}

/// Looks inside a zip container for the part that says what it is.
fn sniff_zip<R: Read + Seek>(reader: R, ext: &str) -> &'static str {
    let Ok(mut archive) = zip::ZipArchive::new(reader) else {
        // Damaged: let the extractor the name points at report it.
        return by_extension(ext).unwrap_or(ZIP);
    };
    let has = |archive: &zip::ZipArchive<R>, name: &str| archive.index_for_name(name).is_some();
    if has(&archive, "xl/workbook.xml") {
        return if ext == "xlsm" { XLSM } else { XLSX };
    }
    if has(&archive, "xl/workbook.bin") {
        return XLSB;
    }
    if has(&archive, "word/document.xml") {
        return DOCX;
    }
    if let Ok(mut mimetype) = archive.by_name("mimetype") {
        let mut value = String::new();
        if (&mut mimetype).take(128).read_to_string(&mut value).is_ok() && value.trim() == ODS {
            return ODS;
        }
    }
    by_extension(ext).unwrap_or(ZIP)
}

/// A description of a MIME type for error messages.
pub fn describe(mime: &str) -> &'static str {
    match mime {
        ZIP => "a zip archive",
        OLE => "an old-style Office file that is not a workbook",
        OTHER_TEXT => "text that is not a table",
        BINARY => "unrecognised binary data",
        _ => "an unsupported format",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_bytes_win_over_the_extension() {
        assert_eq!(sniff_bytes(b"\x89PNG\r\n\x1a\n....", "csv"), PNG);
        assert_eq!(sniff_bytes(b"%PDF-1.7\n", "docx"), PDF);
        assert_eq!(sniff_bytes(b"a,b\n1,2\n", "pdf"), TEXT);
    }

    #[test]
    fn text_tables_by_extension() {
        assert_eq!(sniff_bytes(b"a,b\n1,2\n", "csv"), CSV);
        assert_eq!(sniff_bytes(b"a\tb\n", "tsv"), TSV);
        assert_eq!(sniff_bytes(b"{\"a\": 1}", "json"), OTHER_TEXT);
        assert_eq!(sniff_bytes(b"\xFF\xFEa\0,\0", "csv"), CSV);
    }

    #[test]
    fn a_csv_starting_with_bm_is_not_a_bitmap() {
        assert_eq!(sniff_bytes(b"BMW,Audi,VW\n1,2,3\n", "csv"), CSV);
    }

    #[test]
    fn binary_is_binary() {
        assert_eq!(sniff_bytes(&[0, 1, 2, 3, 200, 17, 0, 9], "csv"), BINARY);
    }
}
