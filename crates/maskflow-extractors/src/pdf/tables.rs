//! Tables found from where a page's text sits (seed 000: PDF tables).
//!
//! Pieces of text on one baseline make a line; pieces close together on a
//! line are one cell. A table is a run of at least two lines, each with two
//! or more cells, rows evenly spaced, whose cells fall into the same columns:
//! the columns are the page's x ranges that the cells of every line cover,
//! with gutters of white between them that no cell crosses. Prose does not
//! make a table: its lines hold one piece each, and where a two-column page
//! gives two pieces per line, every "cell" is a run of words, which tables
//! of data do not have in every column.
//!
//! Not handled: a cell whose text wraps onto a second line (its rest becomes
//! a row of its own), and a table continued on the next page (it is a second
//! table).

use super::layout::Segment;

/// Fewest cells on a line for it to be a table row.
const MIN_COLUMNS: usize = 2;
/// Fewest rows for a table.
const MIN_ROWS: usize = 2;
/// Most tables read from one page.
const MAX_TABLES_PER_PAGE: usize = 20;
/// Median words per cell above which a column reads as prose.
const PROSE_WORDS: usize = 6;

/// One line of text: its baseline and its cells, left to right.
#[derive(Clone, Debug, PartialEq)]
struct Line {
    y: f32,
    size: f32,
    cells: Vec<Segment>,
}

/// The tables on a page, each as rows of cell texts (every row as wide as
/// the table; an empty cell is an empty string).
pub(crate) fn find_tables(segments: Vec<Segment>) -> Vec<Vec<Vec<String>>> {
    let lines = lines(segments);
    let mut tables = Vec::new();
    let mut start = 0;
    while start < lines.len() && tables.len() < MAX_TABLES_PER_PAGE {
        if lines[start].cells.len() < MIN_COLUMNS {
            start += 1;
            continue;
        }
        let end = block_end(&lines, start);
        if let Some(table) = table(&lines[start..end]) {
            tables.push(table);
        }
        start = end;
    }
    tables
}

/// Groups segments into lines, top to bottom, joining pieces that sit
/// close together into one cell.
fn lines(mut segments: Vec<Segment>) -> Vec<Line> {
    segments.retain(|s| s.size > 0.0 && !s.text.trim().is_empty());
    segments.sort_by(|a, b| b.y.total_cmp(&a.y).then(a.x0.total_cmp(&b.x0)));
    let mut lines: Vec<Line> = Vec::new();
    for segment in segments {
        match lines.last_mut() {
            Some(line) if (line.y - segment.y).abs() <= 0.35 * line.size.max(segment.size) => {
                line.size = line.size.max(segment.size);
                line.cells.push(segment);
            }
            _ => lines.push(Line {
                y: segment.y,
                size: segment.size,
                cells: vec![segment],
            }),
        }
    }
    for line in &mut lines {
        line.cells.sort_by(|a, b| a.x0.total_cmp(&b.x0));
        line.cells = join_close(std::mem::take(&mut line.cells), line.size);
    }
    lines
}

/// Joins pieces of a line whose gap is no wider than a word space.
fn join_close(cells: Vec<Segment>, size: f32) -> Vec<Segment> {
    let mut joined: Vec<Segment> = Vec::with_capacity(cells.len());
    for cell in cells {
        match joined.last_mut() {
            Some(prev) if cell.x0 - prev.x1 <= 0.4 * size => {
                if cell.x0 - prev.x1 > 0.1 * size && !prev.text.ends_with(' ') {
                    prev.text.push(' ');
                }
                prev.text.push_str(&cell.text);
                prev.x1 = prev.x1.max(cell.x1);
            }
            _ => joined.push(cell),
        }
    }
    joined
}

/// Where the block of table-like lines starting at `start` ends: lines of
/// two or more cells, or of one cell between such lines, evenly spaced.
fn block_end(lines: &[Line], start: usize) -> usize {
    let mut end = start + 1;
    let mut gaps: Vec<f32> = Vec::new();
    while end < lines.len() {
        let line = &lines[end];
        let gap = lines[end - 1].y - line.y;
        let size = line.size.max(lines[end - 1].size);
        let typical = median(&gaps).unwrap_or(gap);
        let spaced = gap <= 3.0 * size && gap <= 1.6 * typical + 0.2 * size;
        let row_like = line.cells.len() >= MIN_COLUMNS
            || (line.cells.len() == 1
                && lines
                    .get(end + 1)
                    .is_some_and(|next| next.cells.len() >= MIN_COLUMNS));
        if !spaced || !row_like {
            break;
        }
        gaps.push(gap);
        end += 1;
    }
    // A lone line of one cell at the end belongs to what follows.
    while end > start + 1 && lines[end - 1].cells.len() < MIN_COLUMNS {
        end -= 1;
    }
    end
}

/// The table made by `block`, if its cells fall into columns.
fn table(block: &[Line]) -> Option<Vec<Vec<String>>> {
    if block.len() < MIN_ROWS {
        return None;
    }
    let columns = columns(block);
    if columns.len() < MIN_COLUMNS {
        return None;
    }
    let rows: Vec<Vec<String>> = block
        .iter()
        .map(|line| {
            let mut row = vec![String::new(); columns.len()];
            for cell in &line.cells {
                let middle = (cell.x0 + cell.x1) / 2.0;
                let column = columns
                    .iter()
                    .position(|&(left, right)| middle >= left && middle <= right)
                    .unwrap_or(0);
                let slot = &mut row[column];
                if !slot.is_empty() {
                    slot.push(' ');
                }
                slot.push_str(cell.text.trim());
            }
            row
        })
        .collect();
    let filled = rows
        .iter()
        .filter(|r| r.iter().filter(|c| !c.is_empty()).count() >= MIN_COLUMNS)
        .count();
    if filled < MIN_ROWS || !looks_like_data(&rows) {
        return None;
    }
    Some(rows)
}

/// Whether aligned rows hold data, not one of the layouts that align text
/// without being a table: a bulleted or numbered list (a column of
/// markers beside prose), a table of contents (dot leaders), a two-column
/// page (prose in every column) or a code listing (mostly empty cells).
fn looks_like_data(rows: &[Vec<String>]) -> bool {
    let width = rows.first().map_or(0, Vec::len);
    let column = |i: usize| {
        rows.iter()
            .filter_map(move |r| r.get(i))
            .filter(|c| !c.is_empty())
    };
    let content_columns = (0..width)
        .filter(|&i| !column(i).all(|c| is_list_marker(c)))
        .count();
    let with_leaders = rows
        .iter()
        .filter(|r| r.iter().any(|c| has_leader(c)))
        .count();
    let cells = rows.len() * width;
    let filled = rows.iter().flatten().filter(|c| !c.is_empty()).count();
    content_columns >= MIN_COLUMNS
        && with_leaders * 3 <= rows.len()
        && filled * 10 >= cells * 7
        && !all_columns_prose(rows)
}

/// A list's bullet or number: `•`, `-`, `1.`, `a)`, `(iv)`.
fn is_list_marker(cell: &str) -> bool {
    let cell = cell.trim();
    let body = cell.trim_start_matches('(').trim_end_matches(['.', ')']);
    cell.chars().count() <= 5
        && (body.chars().all(|c| !c.is_alphanumeric())
            || (body.len() < cell.len() && body.chars().all(char::is_alphanumeric)))
}

/// Dot leaders, as a table of contents draws them between a title and its page.
fn has_leader(cell: &str) -> bool {
    [".....", ":::::", "·····", "_____", ". . . . ."]
        .iter()
        .any(|leader| cell.contains(leader))
}

/// The x ranges the cells of a block cover, merged where they overlap.
fn columns(block: &[Line]) -> Vec<(f32, f32)> {
    let mut spans: Vec<(f32, f32)> = block
        .iter()
        .flat_map(|line| line.cells.iter().map(|c| (c.x0, c.x1)))
        .collect();
    spans.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut merged: Vec<(f32, f32)> = Vec::new();
    for (left, right) in spans {
        match merged.last_mut() {
            Some(last) if left <= last.1 => last.1 = last.1.max(right),
            _ => merged.push((left, right)),
        }
    }
    merged
}

/// Whether every column reads as running text (a two-column page layout).
fn all_columns_prose(rows: &[Vec<String>]) -> bool {
    let width = rows.first().map_or(0, Vec::len);
    (0..width).all(|column| {
        let words: Vec<f32> = rows
            .iter()
            .filter_map(|r| r.get(column))
            .filter(|c| !c.is_empty())
            .map(|c| c.split_whitespace().count() as f32)
            .collect();
        median(&words).is_some_and(|m| m >= PROSE_WORDS as f32)
    })
}

fn median(values: &[f32]) -> Option<f32> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f32::total_cmp);
    Some(sorted[sorted.len() / 2])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(x0: f32, y: f32, text: &str) -> Segment {
        Segment {
            x0,
            x1: x0 + text.len() as f32 * 5.0,
            y,
            size: 10.0,
            text: text.to_owned(),
        }
    }

    fn grid(top: f32, xs: &[f32], rows: &[&[&str]]) -> Vec<Segment> {
        rows.iter()
            .enumerate()
            .flat_map(|(i, row)| {
                row.iter()
                    .zip(xs)
                    .filter(|(t, _)| !t.is_empty())
                    .map(move |(t, &x)| seg(x, top - 20.0 * i as f32, t))
            })
            .collect()
    }

    #[test]
    fn a_grid_of_cells_is_a_table() {
        let page = grid(
            700.0,
            &[50.0, 200.0, 300.0],
            &[
                &["Name", "Date", "Amount"],
                &["Ada Byron", "2024-01-15", "12.50"],
                &["Alan Turing", "", "7.00"],
            ],
        );
        let tables = find_tables(page);
        assert_eq!(tables.len(), 1);
        assert_eq!(tables[0][1], ["Ada Byron", "2024-01-15", "12.50"]);
        assert_eq!(tables[0][2], ["Alan Turing", "", "7.00"]);
    }

    #[test]
    fn prose_between_two_grids_splits_them() {
        let mut page = grid(
            700.0,
            &[50.0, 200.0],
            &[&["a", "1"], &["b", "2"], &["c", "3"]],
        );
        page.push(seg(
            50.0,
            620.0,
            "A sentence of prose that runs across the page.",
        ));
        page.extend(grid(
            580.0,
            &[50.0, 150.0, 250.0],
            &[&["x", "y", "z"], &["1", "2", "3"]],
        ));
        let tables = find_tables(page);
        assert_eq!(tables.len(), 2);
        assert_eq!((tables[0].len(), tables[0][0].len()), (3, 2));
        assert_eq!((tables[1].len(), tables[1][0].len()), (2, 3));
    }

    #[test]
    fn prose_lines_are_no_table() {
        let page: Vec<Segment> = (0..6)
            .map(|i| seg(50.0, 700.0 - 12.0 * i as f32, "words of a paragraph here"))
            .collect();
        assert!(find_tables(page).is_empty());
    }

    #[test]
    fn a_two_column_page_of_prose_is_no_table() {
        let page: Vec<Segment> = (0..8)
            .flat_map(|i| {
                let y = 700.0 - 12.0 * i as f32;
                [
                    seg(50.0, y, "the left column runs on with many words"),
                    seg(320.0, y, "and the right column does the same thing"),
                ]
            })
            .collect();
        assert!(find_tables(page).is_empty());
    }

    #[test]
    fn a_bulleted_list_is_no_table() {
        let page: Vec<Segment> = (0..4)
            .flat_map(|i| {
                let y = 700.0 - 14.0 * i as f32;
                [seg(50.0, y, "•"), seg(62.0, y, "an item")]
            })
            .chain((0..3).flat_map(|i| {
                let y = 600.0 - 14.0 * i as f32;
                [seg(50.0, y, &format!("{}.", i + 1)), seg(66.0, y, "a step")]
            }))
            .collect();
        assert!(find_tables(page).is_empty());
    }

    #[test]
    fn a_table_of_contents_is_no_table() {
        let page: Vec<Segment> = (0..5)
            .flat_map(|i| {
                let y = 700.0 - 14.0 * i as f32;
                [
                    seg(50.0, y, "Chapter title ..........."),
                    seg(400.0, y, "12"),
                ]
            })
            .collect();
        assert!(find_tables(page).is_empty());
    }

    #[test]
    fn a_numbered_column_beside_data_is_still_a_table() {
        let page = grid(
            700.0,
            &[50.0, 100.0, 250.0],
            &[&["1.", "Ada", "12.50"], &["2.", "Alan", "7.00"]],
        );
        assert_eq!(find_tables(page).len(), 1);
    }

    #[test]
    fn words_placed_one_by_one_join_into_one_cell() {
        let mut page = vec![seg(50.0, 700.0, "Total"), seg(200.0, 700.0, "9")];
        // "Grand" ends at 75; "sum" starts one word-space later.
        page.push(seg(50.0, 680.0, "Grand"));
        page.push(seg(78.0, 680.0, "sum"));
        page.push(seg(200.0, 680.0, "12"));
        let tables = find_tables(page);
        assert_eq!(tables[0][1], ["Grand sum", "12"]);
    }
}
