//! Guards for Excel 97-2003 workbooks (OLE2 compound files), run before
//! calamine reads them. Fuzzing showed calamine trusting two things a hostile
//! file controls: sector chains (followed until memory runs out) and a sheet's
//! declared dimensions (reserved up front, so a huge one aborts the process).
//! The strict `cfb` reader validates the container; a scan of the BIFF
//! records bounds the dimensions.

use std::io::{Read, Seek};

use crate::error::ExtractError;

/// Largest sheet calamine may be asked to reserve room for: Excel 97-2003's own
/// maximum of 65,536 rows by 256 columns.
pub const MAX_XLS_CELLS: u64 = 65_536 * 256;
/// The BIFF record that declares a sheet's used range.
const DIMENSIONS: u16 = 0x0200;

/// Checks the compound file and every sheet's declared dimensions, then
/// rewinds `reader` for calamine.
pub fn check_xls<R: Read + Seek>(reader: &mut R, file: &str) -> Result<(), ExtractError> {
    let damaged =
        |what: &str| ExtractError::damaged(file, format!("the workbook is damaged: {what}"));
    {
        let mut container = cfb::CompoundFile::open(&mut *reader)
            .map_err(|_| damaged("its Excel 97-2003 container is invalid"))?;
        for name in ["/Workbook", "/Book"] {
            if !container.is_stream(name) {
                continue;
            }
            let mut stream = container
                .open_stream(name)
                .map_err(|_| damaged("its workbook stream cannot be read"))?;
            let mut bytes = Vec::new();
            stream
                .read_to_end(&mut bytes)
                .map_err(|_| damaged("its workbook stream is truncated"))?;
            if let Some(cells) = largest_declared_sheet(&bytes).filter(|&c| c > MAX_XLS_CELLS) {
                return Err(damaged(&format!(
                    "a sheet declares {cells} cells, more than an Excel 97-2003 sheet can hold ({MAX_XLS_CELLS})"
                )));
            }
        }
    }
    reader.rewind().map_err(|e| ExtractError::io(file, e))
}

/// The largest cell count any DIMENSIONS record declares, computed the way
/// calamine does (a backwards range counts as the huge number it wraps to).
fn largest_declared_sheet(stream: &[u8]) -> Option<u64> {
    let mut largest = None;
    let mut at = 0usize;
    while let Some(header) = stream.get(at..at + 4) {
        let typ = u16::from_le_bytes([header[0], header[1]]);
        let len = usize::from(u16::from_le_bytes([header[2], header[3]]));
        let Some(data) = stream.get(at + 4..at + 4 + len) else {
            break;
        };
        if typ == DIMENSIONS {
            let cells = declared_cells(data);
            largest = largest.max(Some(cells));
        }
        at += 4 + len;
    }
    largest
}

/// Cells declared by one DIMENSIONS record (BIFF8: 14 or 16 bytes; BIFF5: 10).
fn declared_cells(r: &[u8]) -> u64 {
    let u16_at = |i: usize| u32::from(u16::from_le_bytes([r[i], r[i + 1]]));
    let u32_at = |i: usize| u32::from_le_bytes([r[i], r[i + 1], r[i + 2], r[i + 3]]);
    let (first_row, last_row, mut first_col, last_col) = match r.len() {
        10 => (u16_at(0), u16_at(2), u16_at(4), u16_at(6)),
        14 | 16 => (u32_at(0), u32_at(4), u16_at(8), u16_at(10)),
        _ => return 0, // calamine rejects other lengths itself
    };
    if first_col > 0xFF || last_col < first_col {
        first_col = 0;
    }
    if last_row == 0 || last_col == 0 {
        return 1;
    }
    let rows = u64::from(
        last_row
            .wrapping_sub(1)
            .wrapping_sub(first_row)
            .wrapping_add(1),
    );
    let cols = u64::from(
        last_col
            .wrapping_sub(1)
            .wrapping_sub(first_col)
            .wrapping_add(1),
    );
    rows.saturating_mul(cols)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dimensions(first_row: u32, last_row: u32, first_col: u16, last_col: u16) -> Vec<u8> {
        let mut r = vec![0x00, 0x02, 14, 0];
        r.extend_from_slice(&first_row.to_le_bytes());
        r.extend_from_slice(&last_row.to_le_bytes());
        r.extend_from_slice(&first_col.to_le_bytes());
        r.extend_from_slice(&last_col.to_le_bytes());
        r.extend_from_slice(&[0, 0]);
        r
    }

    #[test]
    fn reads_the_largest_declared_sheet() {
        let mut stream = dimensions(0, 10, 0, 3);
        stream.extend(dimensions(0, 100, 0, 2));
        assert_eq!(largest_declared_sheet(&stream), Some(200));
    }

    #[test]
    fn huge_and_backwards_ranges_are_huge() {
        assert!(
            largest_declared_sheet(&dimensions(0, 0x0100_0000, 0, 0xFF)).unwrap() > MAX_XLS_CELLS
        );
        assert!(largest_declared_sheet(&dimensions(50, 10, 0, 3)).unwrap() > MAX_XLS_CELLS);
        assert!(largest_declared_sheet(&dimensions(0, 65_536, 0, 256)).unwrap() <= MAX_XLS_CELLS);
    }

    #[test]
    fn a_truncated_record_ends_the_scan() {
        let mut stream = dimensions(0, 10, 0, 3);
        stream.extend_from_slice(&[0x00, 0x02, 14, 0, 1, 2]);
        assert_eq!(largest_declared_sheet(&stream), Some(30));
    }
}
