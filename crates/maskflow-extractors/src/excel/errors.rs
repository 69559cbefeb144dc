//! calamine's errors as sentences a person understands, carrying none of
//! the file's own text (issue 39, finding 7).

use calamine::XlsxError;

use super::encrypted;
use crate::error::ExtractError;

/// Turns a calamine error into a typed error with a sentence a person
/// understands. It carries none of the file's text: a worksheet is named by
/// its place, never by its name, and a part's, a table's or a cell's text is
/// left out. The error may reach an MCP client before any approval, and a
/// sheet may be named after a person (issue 39, finding 7).
pub(super) fn calamine_error(
    file: &str,
    sheet: Option<usize>,
    err: calamine::Error,
) -> ExtractError {
    use calamine::{Error, OdsError, XlsError, XlsbError};
    let what = match &err {
        Error::Xlsx(XlsxError::Password)
        | Error::Xlsb(XlsbError::Password)
        | Error::Xls(XlsError::Password)
        | Error::Ods(OdsError::Password) => return encrypted(file),
        Error::Io(e)
        | Error::Xlsx(XlsxError::Io(e))
        | Error::Xlsb(XlsbError::Io(e))
        | Error::Xls(XlsError::Io(e))
        | Error::Ods(OdsError::Io(e))
            if e.kind() != std::io::ErrorKind::UnexpectedEof =>
        {
            return ExtractError::io(file, std::io::Error::new(e.kind(), e.to_string()));
        }
        Error::Io(_)
        | Error::Xlsx(XlsxError::Io(_))
        | Error::Xlsb(XlsbError::Io(_))
        | Error::Xls(XlsError::Io(_))
        | Error::Ods(OdsError::Io(_)) => "the file ends too early (it is truncated)".to_owned(),
        Error::Xlsx(XlsxError::Zip(_))
        | Error::Xlsb(XlsbError::Zip(_))
        | Error::Ods(OdsError::Zip(_)) => "its zip container is truncated or invalid".to_owned(),
        Error::Xlsx(XlsxError::Xml(_))
        | Error::Xlsb(XlsbError::Xml(_))
        | Error::Ods(OdsError::Xml(_)) => "a part of it is not valid XML".to_owned(),
        Error::Xlsx(e) => xlsx_reason(e),
        Error::Xlsb(e) => xlsb_reason(e),
        Error::Xls(e) => xls_reason(e),
        Error::Ods(e) => ods_reason(e),
        Error::Vba(_) => VBA.to_owned(),
        Error::De(_) => "a cell cannot be read".to_owned(),
        Error::Msg(m) => lower_first(m),
    };
    let reason = match sheet {
        Some(at) => format!("the workbook is damaged: worksheet {}: {what}", at + 1),
        None => format!("the workbook is damaged: {what}"),
    };
    ExtractError::damaged(file, single_line(&reason))
}

const VBA: &str = "its macros (VBA) cannot be read";
const SHEET_MISSING: &str = "a worksheet it lists is missing";

// The reasons below say what an error carrying the file's text (a sheet's,
// table's or part's name, an attribute's value, a cell's text) means
// without that text. They name every variant, with no catch-all: a variant
// a later calamine adds does not compile until someone decides whether its
// message may carry the file's text.

fn xlsx_reason(e: &XlsxError) -> String {
    match e {
        XlsxError::CellTAttribute(_) => "a cell has a type that cannot be read".to_owned(),
        XlsxError::Unrecognized { typ, .. } => format!("it holds an unrecognized {typ}"),
        XlsxError::CellError(_) => "a cell holds an unknown error value".to_owned(),
        XlsxError::WorksheetNotFound(_) => SHEET_MISSING.to_owned(),
        XlsxError::TableNotFound(_) | XlsxError::PivotTableNotFound(_) => {
            "a table it lists is missing".to_owned()
        }
        XlsxError::NotAWorksheet(_) => "a sheet it lists as a worksheet is not one".to_owned(),
        XlsxError::FileNotFound(part) => missing_part(part),
        XlsxError::Vba(_) => VBA.to_owned(),
        // Positions, numbers, bytes and calamine's own words only.
        XlsxError::Io(_)
        | XlsxError::Zip(_)
        | XlsxError::Xml(_)
        | XlsxError::XmlAttr(_)
        | XlsxError::Parse(_)
        | XlsxError::ParseFloat(_)
        | XlsxError::ParseInt(_)
        | XlsxError::XmlEof(_)
        | XlsxError::UnexpectedNode(_)
        | XlsxError::RelationshipNotFound
        | XlsxError::Alphanumeric(_)
        | XlsxError::NumericColumn(_)
        | XlsxError::RangeWithoutColumnComponent
        | XlsxError::RangeWithoutRowComponent
        | XlsxError::ColumnNumberOverflow
        | XlsxError::RowNumberOverflow
        | XlsxError::DimensionCount(_)
        | XlsxError::Unexpected(_)
        | XlsxError::Password
        | XlsxError::Encoding(_) => lower_first(&e.to_string()),
    }
}

fn xlsb_reason(e: &calamine::XlsbError) -> String {
    use calamine::XlsbError;
    match e {
        XlsbError::Unrecognized { typ, .. } => format!("it holds an unrecognized {typ}"),
        XlsbError::WorksheetNotFound(_) => SHEET_MISSING.to_owned(),
        XlsbError::FileNotFound(part) => missing_part(part),
        XlsbError::Vba(_) => VBA.to_owned(),
        XlsbError::Io(_)
        | XlsbError::Zip(_)
        | XlsbError::Xml(_)
        | XlsbError::XmlAttr(_)
        | XlsbError::Mismatch { .. }
        | XlsbError::StackLen
        | XlsbError::UnsupportedType(_)
        | XlsbError::Etpg(_)
        | XlsbError::IfTab(_)
        | XlsbError::BErr(_)
        | XlsbError::Ptg(_)
        | XlsbError::CellError(_)
        | XlsbError::WideStr { .. }
        | XlsbError::Password
        | XlsbError::Encoding(_) => lower_first(&e.to_string()),
    }
}

fn xls_reason(e: &calamine::XlsError) -> String {
    use calamine::XlsError;
    match e {
        XlsError::WorksheetNotFound(_) => SHEET_MISSING.to_owned(),
        XlsError::Vba(_) | XlsError::NoVba => VBA.to_owned(),
        XlsError::Cfb(_) => {
            "it is not a readable Excel 97-2003 workbook (the compound file is invalid)".to_owned()
        }
        XlsError::Io(_)
        | XlsError::StackLen
        | XlsError::Unrecognized { .. }
        | XlsError::Password
        | XlsError::Len { .. }
        | XlsError::ContinueRecordTooShort
        | XlsError::EoStream(_)
        | XlsError::InvalidFormula { .. }
        | XlsError::IfTab(_)
        | XlsError::Etpg(_)
        | XlsError::InvalidFormat { .. } => lower_first(&e.to_string()),
    }
}

fn ods_reason(e: &calamine::OdsError) -> String {
    use calamine::OdsError;
    match e {
        OdsError::Mismatch { expected, .. } => format!("expected {expected}, found something else"),
        OdsError::WorksheetNotFound(_) => SHEET_MISSING.to_owned(),
        OdsError::InvalidMime(_) => "it is not an OpenDocument spreadsheet".to_owned(),
        OdsError::Io(_)
        | OdsError::Zip(_)
        | OdsError::Xml(_)
        | OdsError::XmlAttr(_)
        | OdsError::Parse(_)
        | OdsError::ParseInt(_)
        | OdsError::ParseFloat(_)
        | OdsError::ParseBool(_)
        | OdsError::FileNotFound(_)
        | OdsError::Eof(_)
        | OdsError::Password
        | OdsError::AttrError(_)
        | OdsError::EncodingError(_)
        | OdsError::CellLimitExceeded { .. } => lower_first(&e.to_string()),
    }
}

/// "the part P is missing", naming P only when it is one of the standard
/// parts of a workbook (`xl/workbook.xml`, `xl/worksheets/sheet3.xml`): a
/// part's path is the file's own text and may be anything.
fn missing_part(part: &str) -> String {
    const WORDS: &[&str] = &[
        "xl",
        "worksheets",
        "sheet",
        "workbook",
        "styles",
        "sharedstrings",
        "rels",
        "theme",
        "xml",
        "bin",
        "content",
        "types",
        "docprops",
        "core",
        "app",
        "chartsheets",
        "drawings",
        "drawing",
        "tables",
        "table",
        "calcchain",
        "metadata",
        "meta",
        "settings",
        "manifest",
        "meta-inf",
        "mimetype",
    ];
    let standard = part
        .to_ascii_lowercase()
        .split(|c: char| matches!(c, '/' | '.' | '_' | '[' | ']') || c.is_ascii_digit())
        .all(|w| w.is_empty() || WORDS.contains(&w));
    if standard && part.is_ascii() {
        format!("the part {part} is missing")
    } else {
        "a part it refers to is missing".to_owned()
    }
}

fn lower_first(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) if c.is_uppercase() && !chars.clone().next().is_some_and(char::is_uppercase) => {
            c.to_lowercase().chain(chars).collect()
        }
        _ => s.to_owned(),
    }
}

fn single_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calamine_errors_become_sentences() {
        let e = calamine_error("f.xlsx", None, XlsxError::Password.into());
        assert!(matches!(
            e,
            ExtractError::Encrypted {
                what: "workbook",
                ..
            }
        ));
        let e = calamine_error(
            "f.xlsx",
            Some(1),
            XlsxError::FileNotFound("xl/workbook.xml".into()).into(),
        );
        assert_eq!(
            e.to_string(),
            "f.xlsx: the workbook is damaged: worksheet 2: the part xl/workbook.xml is missing"
        );
    }

    /// calamine quotes the file's own text in some errors (a sheet's, a
    /// table's, a part's name; a cell's value); the sentence leaves it out.
    #[test]
    fn calamine_errors_carry_none_of_the_files_text() {
        use calamine::{OdsError, XlsbError};
        let name = "Jane Doe";
        let errors: Vec<calamine::Error> = vec![
            XlsxError::WorksheetNotFound(name.into()).into(),
            XlsxError::TableNotFound(name.into()).into(),
            XlsxError::PivotTableNotFound(name.into()).into(),
            XlsxError::NotAWorksheet(name.into()).into(),
            XlsxError::CellError(name.into()).into(),
            XlsxError::CellTAttribute(name.into()).into(),
            XlsxError::FileNotFound(format!("xl/worksheets/{name}.xml")).into(),
            XlsxError::Unrecognized {
                typ: "cell type",
                val: name.into(),
            }
            .into(),
            XlsbError::WorksheetNotFound(name.into()).into(),
            XlsbError::Unrecognized {
                typ: "cell type",
                val: name.into(),
            }
            .into(),
            OdsError::Mismatch {
                expected: "a cell",
                found: name.into(),
            }
            .into(),
            calamine::XlsError::WorksheetNotFound(name.into()).into(),
        ];
        for err in errors {
            let said = format!("{err}");
            let e = calamine_error("f.xlsx", Some(0), err).to_string();
            assert!(
                !e.contains("Jane") && !e.contains("Doe"),
                "{said} became {e}"
            );
            assert!(
                e.starts_with("f.xlsx: the workbook is damaged: worksheet 1: "),
                "{e}"
            );
        }
    }
}
