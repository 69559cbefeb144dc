//! PDF, Word and image extraction over fixtures written by real writers
//! (fpdf2, pypdf, python-docx, Pillow: see tests/fixtures/docs/make_fixtures.py),
//! plus damaged, truncated, encrypted and hostile inputs made here.

use std::path::{Path, PathBuf};

use maskflow_extractors::error::ExtractError;
use maskflow_extractors::extract::{FileExtract, FileKind};
use maskflow_extractors::image::{ImageExtractor, TESSERACT_MISSING};
use maskflow_extractors::limits::{ExtractOptions, TEXT_PREVIEW_CHARS};
use maskflow_extractors::pdf::PdfExtractor;
use maskflow_extractors::sniff;
use maskflow_extractors::values::{CollectedValues, ValueOptions};
use maskflow_extractors::word::WordExtractor;
use maskflow_extractors::{Extractor, Input, Registry};

/// Words written into the fixtures; none may appear anywhere in an extract.
const SECRETS: &[&str] = &[
    "Zanzibar",
    "Ophelia",
    "Hartmann",
    "Quixote",
    "Bartholomew",
    "Marmalade",
    "Wilhelmina",
    "Marrakesh",
    "4711",
    "194211",
    "1,234",
    "2024",
    "2019",
    "example.com",
];

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/docs")
        .join(name)
}

/// Runs the whole registry (sniffing included) on a file.
fn extract(path: &Path) -> Result<FileExtract, ExtractError> {
    Registry::with_defaults().extract(path, &ExtractOptions::default(), &mut |_| {})
}

/// Runs one extractor directly, as if sniffing had said `mime`.
fn extract_as(
    extractor: &dyn Extractor,
    path: &Path,
    mime: &'static str,
) -> Result<FileExtract, ExtractError> {
    let display = path.display().to_string();
    let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let input = Input {
        path,
        display: &display,
        filename: "file",
        mime,
        size,
    };
    extractor.extract(&input, &ExtractOptions::default(), &mut |_| {})
}

fn assert_no_secrets(extract: &FileExtract) {
    let json = serde_json::to_string(extract).expect("an extract serializes");
    for secret in SECRETS {
        assert!(!json.contains(secret), "{secret:?} leaked into {json}");
    }
}

/// Deterministic pseudo-random bytes (no dependency, same every run).
fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut state = seed;
    (0..len)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) as u8
        })
        .collect()
}

fn write_temp(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).expect("temp file written");
    path
}

fn expect_damaged(result: Result<FileExtract, ExtractError>, words: &str) -> String {
    match result {
        Err(e @ ExtractError::Damaged { .. }) => {
            let message = e.to_string();
            assert!(message.contains(words), "{message:?} lacks {words:?}");
            assert!(!message.contains('\n'), "{message:?} is not one line");
            message
        }
        other => panic!("expected a damaged-file error, got {other:?}"),
    }
}

// ---------------------------------------------------------------- PDF

#[test]
fn pdf_gives_pages_outline_headings_and_a_masked_preview() {
    let extract = extract(&fixture("report.pdf")).expect("the report reads");
    assert_eq!(extract.kind, FileKind::Pdf);
    assert_eq!(extract.filename, "report.pdf");
    assert!(extract.columns.is_empty());
    assert!(extract.sample_rows.is_empty());
    assert_eq!(extract.row_count, 0);
    let doc = extract.document.as_ref().expect("document metadata");
    assert_eq!(doc.page_count, Some(3));
    let headings: Vec<(u8, &str)> = doc
        .headings
        .iter()
        .map(|h| (h.level, h.text.as_str()))
        .collect();
    assert_eq!(
        headings,
        [
            (1, "Aaaaaaaaa Aaaaaa Aaaaaaaa"),
            (2, "Aaaaaaa Aaaaaaa"),
            (1, "Aaaaaaaa Aaaaaaaaa"),
        ]
    );
    // Text from all three pages, masked, shape kept.
    let preview = &doc.text_preview;
    assert!(
        preview.contains("Aaaaaaa Aaaaaaaa aaaaaa aaaaaaaa ####"),
        "{preview}"
    );
    assert!(preview.contains("AAAA-######"), "{preview}");
    assert!(preview.contains("$#,###.##"), "{preview}");
    assert!(preview.contains("aaaaaaaaaa@aaaaaaa.aaa"), "{preview}");
    assert!(preview.chars().count() <= TEXT_PREVIEW_CHARS);
    assert_no_secrets(&extract);
}

/// A PDF whose first page shows `first` in Helvetica and whose other
/// `pages` pages all draw one shared, compressed stream of `content_bytes`
/// bytes of path operators: small on disk, huge once inflated and parsed.
fn pdf_with_heavy_pages(first: &str, pages: usize, content_bytes: usize) -> Vec<u8> {
    use lopdf::{Document, Object, Stream, dictionary};
    let mut doc = Document::with_version("1.5");
    let font = doc.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
    });
    let text = format!("BT /F1 12 Tf 72 720 Td ({first}) Tj ET");
    let light = doc.add_object(Stream::new(dictionary! {}, text.into_bytes()));
    let mut heavy = Stream::new(dictionary! {}, b"0 0 m\n".repeat(content_bytes / 6 + 1));
    heavy.compress().expect("compresses");
    let heavy = doc.add_object(heavy);
    let pages_id = doc.new_object_id();
    let kids: Vec<Object> = std::iter::once(light)
        .chain(std::iter::repeat_n(heavy, pages))
        .map(|contents| {
            doc.add_object(dictionary! {
                "Type" => "Page",
                "Parent" => pages_id,
                "Contents" => contents,
                "Resources" => dictionary! { "Font" => dictionary! { "F1" => font } },
            })
            .into()
        })
        .collect();
    let count = i64::try_from(kids.len()).expect("page count");
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! { "Type" => "Pages", "Kids" => kids, "Count" => count }),
    );
    let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog);
    let mut bytes = Vec::new();
    doc.save_to(&mut bytes).expect("writes");
    bytes
}

/// Issue 39, finding 5: a 418 KB PDF whose content stream inflates to
/// 60 MiB took 24 s and 4.6 GB to read; one small stream shared by many
/// pages multiplies that. Pages past the budget are left unread, said so,
/// and what fits is still read, for the extract and for the guard alike.
#[test]
fn pdf_page_content_is_read_within_a_budget() {
    let dir = tempfile::tempdir().expect("temp dir");
    // One page of 60 MiB; and 100 pages of 3 MiB each (300 MiB in all), of
    // which the first ones fit the document's budget and the rest do not.
    for (name, pages, bytes, unread) in [
        ("one-heavy-page.pdf", 1, 60 << 20, 1..=1),
        ("many-pages.pdf", 100, 3 << 20, 60..=99),
    ] {
        let pdf = pdf_with_heavy_pages("Quarterly report for Ophelia", pages, bytes);
        assert!(pdf.len() < 1 << 20, "{name} is {} bytes", pdf.len());
        let path = write_temp(&dir, name, &pdf);
        let extract = extract(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        let doc = extract.document.as_ref().expect("document metadata");
        assert_eq!(doc.page_count, Some(1 + pages as u32), "{name}");
        assert!(
            doc.text_preview.contains("Aaaaaaaaa aaaaaa aaa Aaaaaaa"),
            "{name}: {}",
            doc.text_preview
        );
        let told = extract.warnings.iter().find_map(|w| {
            let (count, rest) = w.split_once(' ')?;
            rest.starts_with("page(s) were not read for text or tables")
                .then(|| count.parse::<usize>().ok())?
        });
        assert!(
            told.is_some_and(|n| unread.contains(&n)),
            "{name}: {:?}",
            extract.warnings
        );
        assert_no_secrets(&extract);

        let mut values = CollectedValues::default();
        Registry::with_defaults()
            .values(&path, &ValueOptions::default(), &mut values)
            .unwrap_or_else(|e| panic!("{name}: values: {e}"));
        assert!(
            values.texts.iter().any(|t| t.contains("Ophelia")),
            "{name}: the guard knows the first page's text: {:?}",
            values.texts
        );
    }
}

#[test]
fn encrypted_pdf_is_refused_as_encrypted() {
    match extract(&fixture("encrypted.pdf")) {
        Err(e @ ExtractError::Encrypted { what: "PDF", .. }) => {
            assert!(e.to_string().contains("password-protected"), "{e}");
        }
        other => panic!("expected an encrypted-PDF error, got {other:?}"),
    }
}

#[test]
fn truncated_pdf_is_damaged() {
    let dir = tempfile::tempdir().expect("temp dir");
    let bytes = std::fs::read(fixture("report.pdf")).expect("fixture");
    let path = write_temp(&dir, "cut.pdf", &bytes[..bytes.len() / 3]);
    let message = expect_damaged(extract(&path), "cut.pdf");
    assert!(
        message.contains("damaged") || message.contains("truncated"),
        "{message}"
    );
}

#[test]
fn random_bytes_with_a_pdf_header_are_damaged() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut bytes = b"%PDF-1.7\n".to_vec();
    bytes.extend(noise(4096, 7));
    let path = write_temp(&dir, "noise.pdf", &bytes);
    expect_damaged(extract(&path), "noise.pdf");
}

#[test]
fn random_bytes_handed_to_the_pdf_extractor_are_damaged() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = write_temp(&dir, "noise.pdf", &noise(4096, 11));
    let message = expect_damaged(extract_as(&PdfExtractor, &path, sniff::PDF), "not a PDF");
    assert!(
        message.starts_with(&path.display().to_string()),
        "{message}"
    );
}

#[test]
fn pdf_with_only_an_owner_password_opens_and_is_masked() {
    let extract = extract(&fixture("owner-only.pdf")).expect("opens without a password");
    let doc = extract.document.as_ref().expect("document metadata");
    assert_eq!(doc.page_count, Some(3));
    assert_eq!(doc.headings.len(), 3);
    assert!(
        doc.text_preview.contains("AAAA-######"),
        "{}",
        doc.text_preview
    );
    assert_no_secrets(&extract);
}

#[test]
fn pdf_with_a_broken_xref_offset_is_rebuilt_with_a_warning() {
    let dir = tempfile::tempdir().expect("temp dir");
    let bytes = std::fs::read(fixture("report.pdf")).expect("fixture");
    let at = bytes
        .windows(9)
        .rposition(|w| w == b"startxref")
        .expect("the fixture has startxref");
    let mut broken = bytes[..at].to_vec();
    broken.extend_from_slice(b"startxref\n9\n%%EOF\n");
    let path = write_temp(&dir, "broken-xref.pdf", &broken);
    let extract = extract(&path).expect("lopdf rebuilds the table");
    assert_eq!(
        extract.document.as_ref().and_then(|d| d.page_count),
        Some(3)
    );
    assert!(
        extract.warnings.iter().any(|w| w.contains("rebuilt")),
        "{:?}",
        extract.warnings
    );
    assert_no_secrets(&extract);
}

// ---------------------------------------------------------------- Word

/// A zip with the given (name, content) parts, deflated.
fn zip_bytes(parts: &[(&str, &[u8])]) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    let mut w = zip::ZipWriter::new(&mut out);
    for (name, content) in parts {
        w.start_file(
            *name,
            zip::write::SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Deflated),
        )
        .expect("zip entry");
        std::io::Write::write_all(&mut w, content).expect("zip write");
    }
    w.finish().expect("zip finished");
    out.into_inner()
}

/// Rewrites the uncompressed size that the central directory declares for every member.
fn lie_about_sizes(mut zip: Vec<u8>, size: u32) -> Vec<u8> {
    let mut at = 0;
    let mut patched = 0;
    while let Some(i) = zip[at..].windows(4).position(|w| w == b"PK\x01\x02") {
        let header = at + i;
        zip[header + 24..header + 28].copy_from_slice(&size.to_le_bytes());
        patched += 1;
        at = header + 4;
    }
    assert!(patched > 0, "no central directory header found");
    zip
}

const DOC_XML: &[u8] = br#"<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>Ophelia</w:t></w:r></w:p></w:body></w:document>"#;

#[test]
fn word_gives_headings_text_tables_and_pages() {
    let extract = extract(&fixture("report.docx")).expect("the report reads");
    assert_eq!(extract.kind, FileKind::Word);
    let doc = extract.document.as_ref().expect("document metadata");
    assert_eq!(
        doc.page_count,
        Some(1),
        "python-docx's template records one page"
    );
    let headings: Vec<(u8, &str)> = doc
        .headings
        .iter()
        .map(|h| (h.level, h.text.as_str()))
        .collect();
    assert_eq!(
        headings,
        [
            (1, "Aaaaaaaa Aaaaaaaa"),
            (1, "Aaaaaaa Aaaaaaaa"),
            (2, "Aaaaaaaaaaa Aaaaaa"),
            (4, "Aaaaaaaaa Aaaaaaa"),
        ]
    );
    let preview = &doc.text_preview;
    assert!(
        preview.starts_with("Aaaaaaaa Aaaaaaaa\nAaaaaaa Aaaaaaaa\nAaaaaaa Aaaaaaaa aaaaaa aa ####"),
        "{preview}"
    );
    assert!(
        preview.contains("Aaaaaaa AAAA-###### aaaaaa $#,###.##."),
        "{preview}"
    );
    assert!(
        preview.ends_with("Aaaaaaa aaaaa aaaa Aaaaaaaaaa."),
        "{preview}"
    );

    assert_eq!(doc.tables.len(), 1);
    let table = &doc.tables[0];
    assert_eq!(table.columns, ["Name", "City", "Amount"]);
    assert_eq!(table.row_count, 3);
    assert_eq!(
        table.sample_rows,
        [
            ["Aaaaaaa Aaaaaaaa", "Aaaaaaa", "####"],
            ["Aaaaaaaaaaa Aa", "Aaaaaaaa", "##"],
            ["Aaaaaaaaaa Aaaaaa", "Aaaaaaaaa", "####"],
        ]
    );
    // The top level mirrors the first table.
    assert_eq!(extract.columns, table.columns);
    assert_eq!(extract.sample_rows, table.sample_rows);
    assert_eq!(extract.row_count, 3);
    assert_eq!(extract.has_header, Some(true));
    assert_no_secrets(&extract);
}

#[test]
fn word_samples_follow_the_options() {
    let path = fixture("report.docx");
    let extract = Registry::with_defaults()
        .extract(&path, &ExtractOptions::with_samples(1), &mut |_| {})
        .expect("reads");
    assert_eq!(extract.sample_rows.len(), 1);
    assert_eq!(
        extract.row_count, 3,
        "the count is exact whatever the samples"
    );
}

#[test]
fn word_without_tables_has_empty_top_level_fields() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = write_temp(
        &dir,
        "plain.docx",
        &zip_bytes(&[("word/document.xml", DOC_XML)]),
    );
    let extract = extract(&path).expect("reads");
    assert!(extract.columns.is_empty() && extract.sample_rows.is_empty());
    assert_eq!(extract.row_count, 0);
    assert_eq!(extract.has_header, None);
    let doc = extract.document.as_ref().expect("document");
    assert_eq!(doc.page_count, None, "no docProps/app.xml");
    assert_eq!(doc.text_preview, "Aaaaaaa");
    assert_no_secrets(&extract);
}

#[test]
fn truncated_docx_is_damaged() {
    let dir = tempfile::tempdir().expect("temp dir");
    let bytes = std::fs::read(fixture("report.docx")).expect("fixture");
    let path = write_temp(&dir, "cut.docx", &bytes[..bytes.len() / 2]);
    let message = expect_damaged(extract(&path), "cut.docx");
    assert!(message.contains("truncated"), "{message}");
}

#[test]
fn docx_without_its_text_part_is_damaged() {
    let dir = tempfile::tempdir().expect("temp dir");
    let zip = zip_bytes(&[("[Content_Types].xml", b"<Types/>")]);
    let path = write_temp(&dir, "hollow.docx", &zip);
    expect_damaged(extract(&path), "no word/document.xml part");
}

#[test]
fn docx_with_malformed_xml_is_damaged() {
    let dir = tempfile::tempdir().expect("temp dir");
    let zip = zip_bytes(&[(
        "word/document.xml",
        b"<w:document><w:body><w:p><w:t>Ophelia</w:p></w:body>",
    )]);
    let path = write_temp(&dir, "bad-xml.docx", &zip);
    expect_damaged(extract(&path), "not well-formed XML");
}

#[test]
fn random_bytes_handed_to_the_word_extractor_are_damaged() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = write_temp(&dir, "noise.docx", &noise(4096, 3));
    expect_damaged(
        extract_as(&WordExtractor, &path, sniff::DOCX),
        "the zip archive is truncated or corrupt",
    );
}

#[test]
fn docx_declaring_a_huge_part_is_refused_as_too_large() {
    let dir = tempfile::tempdir().expect("temp dir");
    let zip = lie_about_sizes(zip_bytes(&[("word/document.xml", DOC_XML)]), 3 << 30);
    let path = write_temp(&dir, "bomb.docx", &zip);
    match extract(&path) {
        Err(e @ ExtractError::TooLarge { .. }) => {
            let message = e.to_string();
            assert!(
                message.contains("3.0 GiB") && message.contains("zip bomb"),
                "{message}"
            );
        }
        other => panic!("expected TooLarge, got {other:?}"),
    }
}

#[test]
fn docx_with_an_extreme_compression_ratio_is_refused_as_too_large() {
    let dir = tempfile::tempdir().expect("temp dir");
    let zip = lie_about_sizes(zip_bytes(&[("word/document.xml", DOC_XML)]), 200 << 20);
    let path = write_temp(&dir, "ratio.docx", &zip);
    match extract(&path) {
        Err(e @ ExtractError::TooLarge { .. }) => {
            assert!(e.to_string().contains("compressed"), "{e}");
        }
        other => panic!("expected TooLarge, got {other:?}"),
    }
}

// ---------------------------------------------------------------- images

fn image_extractor(tesseract: &str) -> ImageExtractor {
    ImageExtractor {
        tesseract: Some(PathBuf::from(tesseract)),
        ..ImageExtractor::default()
    }
}

#[test]
fn image_dimensions_and_format_come_from_the_header() {
    let missing = image_extractor("/nonexistent/tesseract");
    for (name, mime, width, height, format) in [
        ("text.png", sniff::PNG, 640, 120, "png"),
        ("tiny.gif", sniff::GIF, 31, 17, "gif"),
    ] {
        let extract = extract_as(&missing, &fixture(name), mime).expect("reads");
        assert_eq!(extract.kind, FileKind::Image);
        assert!(extract.columns.is_empty());
        assert_eq!(extract.row_count, 0);
        let image = extract.image.as_ref().expect("image metadata");
        assert_eq!((image.width, image.height), (width, height), "{name}");
        assert_eq!(image.format, format);
    }
}

#[test]
fn ocr_is_absent_with_a_reason_when_tesseract_is_missing() {
    let extract = extract_as(
        &image_extractor("/nonexistent/tesseract"),
        &fixture("text.png"),
        sniff::PNG,
    )
    .expect("reads");
    let image = extract.image.as_ref().expect("image metadata");
    assert_eq!(image.ocr_text, None);
    assert_eq!(
        image.ocr_unavailable_reason.as_deref(),
        Some(TESSERACT_MISSING)
    );
    let json = serde_json::to_string(&extract).expect("serializes");
    assert!(!json.contains("ocr_text"), "{json}");
    assert!(json.contains("apt-get install tesseract-ocr"), "{json}");
}

#[test]
fn ocr_failure_is_reported_as_the_reason() {
    let extract = extract_as(&image_extractor("false"), &fixture("text.png"), sniff::PNG)
        .expect("the image still reads");
    let image = extract.image.as_ref().expect("image metadata");
    assert_eq!(image.ocr_text, None);
    let reason = image.ocr_unavailable_reason.as_deref().unwrap_or("");
    assert!(reason.starts_with("tesseract failed"), "{reason}");
}

#[test]
fn ocr_text_is_masked() {
    let on_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join("tesseract").is_file()))
        .unwrap_or(false);
    if !on_path {
        println!("skipped: tesseract is not on PATH (apt-get install tesseract-ocr)");
        return;
    }
    let extract = extract(&fixture("text.png")).expect("reads");
    let image = extract.image.as_ref().expect("image metadata");
    assert_eq!(image.ocr_unavailable_reason, None);
    let text = image.ocr_text.as_deref().expect("OCR ran");
    assert_eq!(text, "Aaaaaaaa ####");
    assert_no_secrets(&extract);
}

#[test]
fn truncated_image_header_is_damaged() {
    let dir = tempfile::tempdir().expect("temp dir");
    let bytes = std::fs::read(fixture("text.png")).expect("fixture");
    let path = write_temp(&dir, "cut.png", &bytes[..20]);
    let message = expect_damaged(extract(&path), "cut.png");
    assert!(message.contains("image"), "{message}");
}

#[test]
fn random_bytes_with_a_png_signature_are_damaged() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut bytes = b"\x89PNG\r\n\x1a\n".to_vec();
    bytes.extend(noise(2048, 5));
    let path = write_temp(&dir, "noise.png", &bytes);
    expect_damaged(extract(&path), "noise.png");
}

#[cfg(unix)]
#[test]
fn ocr_that_hangs_is_stopped_with_a_reason() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("temp dir");
    let script = write_temp(&dir, "hang.sh", b"#!/bin/sh\nexec sleep 600\n");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let extractor = ImageExtractor {
        tesseract: Some(script),
        ocr_timeout: std::time::Duration::from_millis(100),
    };
    let extract = extract_as(&extractor, &fixture("text.png"), sniff::PNG).expect("reads");
    let image = extract.image.as_ref().expect("image metadata");
    assert_eq!(image.ocr_text, None);
    let reason = image.ocr_unavailable_reason.as_deref().unwrap_or("");
    assert!(
        reason.contains("did not finish") && reason.contains("stopped"),
        "{reason}"
    );
}
