//! A run's output against the approved run's (issue 41, point 3), value
//! free: per output table its rows and columns, per column its empty
//! cells, and per numeric column the order of magnitude and the sign of
//! its values. A jump — rows halved or doubled, a column gone or new, a
//! column that became mostly empty, a numeric column ten times larger or
//! smaller or of another sign — holds the run as "needs a look" instead of
//! "succeeded". Pure: over the profiles [`crate::builder::output_shape::read`]
//! made of both runs' outputs. Shown to the user locally; the names are
//! the script's (output files, their columns), masked by
//! [`crate::shape::shown`] where one looks like a value.

use crate::builder::output_shape::OutputTable;
use crate::shape::shown;
use maskflow_extractors::profile::TableProfile;

/// How a run's outputs compare with the approved run's.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Comparison {
    /// The figures, one line per output table (and per column that moved).
    pub lines: Vec<String>,
    /// The jumps: the run needs a look when there is one.
    pub jumps: Vec<String>,
}

/// What a table is called in a line.
fn label(t: &OutputTable) -> String {
    let name = t.file.rsplit('/').next().unwrap_or(&t.file);
    let name: String = name.chars().filter(|c| !c.is_control()).collect();
    match t.sheet {
        Some(s) => format!("output {:?} sheet {}", shown(&name), s + 1),
        None => format!("output {:?}", shown(&name)),
    }
}

/// A profile's rounded figure (`1.2e3`, `-40`) as a number.
fn number(text: Option<&String>) -> Option<f64> {
    text.and_then(|t| t.trim().trim_start_matches('~').parse::<f64>().ok())
        .filter(|n| n.is_finite())
}

/// The sign of a column's values: `+`, `-`, or `±` when both.
fn sign(min: f64, max: f64) -> &'static str {
    if min >= 0.0 {
        "+"
    } else if max <= 0.0 {
        "-"
    } else {
        "±"
    }
}

/// The order of magnitude of the largest absolute value (`10^3`).
fn magnitude(min: f64, max: f64) -> Option<i32> {
    let largest = min.abs().max(max.abs());
    #[allow(clippy::cast_possible_truncation)]
    (largest > 0.0).then(|| largest.log10().floor() as i32)
}

fn share(part: u64, of: u64) -> f64 {
    if of == 0 {
        0.0
    } else {
        #[allow(clippy::cast_precision_loss)]
        let s = part as f64 / of as f64;
        s
    }
}

/// Compares `new`'s tables with the `approved` run's, matched by output
/// file and sheet. With `rows_vary` (the workflow declared the
/// `row_count` drift), a table's rows halved or doubled are a line, not
/// a jump; no rows at all still is one.
pub fn compare(approved: &[OutputTable], new: &[OutputTable], rows_vary: bool) -> Comparison {
    let mut out = Comparison::default();
    for a in approved {
        let what = label(a);
        let Some(n) = new.iter().find(|n| n.file == a.file && n.sheet == a.sheet) else {
            out.jumps
                .push(format!("{what} is missing (the approved run wrote it)"));
            continue;
        };
        table(&what, &a.profile, &n.profile, rows_vary, &mut out);
    }
    for n in new {
        if !approved
            .iter()
            .any(|a| a.file == n.file && a.sheet == n.sheet)
        {
            out.lines.push(format!(
                "{}: {} rows, {} columns (the approved run did not write it)",
                label(n),
                n.profile.rows_profiled,
                n.profile.columns.len()
            ));
        }
    }
    out
}

fn table(what: &str, a: &TableProfile, n: &TableProfile, rows_vary: bool, out: &mut Comparison) {
    let (ar, nr) = (a.rows_profiled, n.rows_profiled);
    out.lines.push(format!(
        "{what}: {nr} rows, {} columns (approved run: {ar} rows, {} columns)",
        n.columns.len(),
        a.columns.len()
    ));
    let rows = if rows_vary {
        &mut out.lines
    } else {
        &mut out.jumps
    };
    if ar >= 2 && nr > 0 && nr * 2 <= ar {
        rows.push(format!(
            "{what}: {nr} rows where the approved run had {ar} (halved or less)"
        ));
    } else if ar >= 2 && nr >= ar * 2 {
        rows.push(format!(
            "{what}: {nr} rows where the approved run had {ar} (doubled or more)"
        ));
    } else if ar > 0 && nr == 0 {
        out.jumps
            .push(format!("{what}: no rows where the approved run had {ar}"));
    }
    for ac in &a.columns {
        let col = format!("{what}: column {:?}", shown(&ac.name));
        let Some(nc) = n.columns.iter().find(|c| c.name == ac.name) else {
            out.jumps
                .push(format!("{col} is missing (the approved run wrote it)"));
            continue;
        };
        let (ae, ne) = (share(ac.nulls, ar), share(nc.nulls, nr));
        if ne - ae >= 0.5 {
            out.jumps.push(format!(
                "{col}: {:.0} % of its cells are empty (approved run: {:.0} %)",
                ne * 100.0,
                ae * 100.0
            ));
        }
        let (Some(amin), Some(amax), Some(nmin), Some(nmax)) = (
            number(ac.min.as_ref()),
            number(ac.max.as_ref()),
            number(nc.min.as_ref()),
            number(nc.max.as_ref()),
        ) else {
            continue;
        };
        let (asign, nsign) = (sign(amin, amax), sign(nmin, nmax));
        let (amag, nmag) = (magnitude(amin, amax), magnitude(nmin, nmax));
        let shown_mag = |m: Option<i32>| m.map_or_else(|| "0".to_owned(), |m| format!("10^{m}"));
        let figures = format!(
            "values {nsign}{} (approved run: {asign}{})",
            shown_mag(nmag),
            shown_mag(amag)
        );
        let largest = |lo: f64, hi: f64| lo.abs().max(hi.abs());
        let (al, nl) = (largest(amin, amax), largest(nmin, nmax));
        let tenfold = al > 0.0 && nl > 0.0 && (nl / al >= 10.0 || al / nl >= 10.0);
        if asign != nsign {
            out.jumps
                .push(format!("{col}: {figures}: the sign of its values changed"));
        } else if tenfold {
            out.jumps.push(format!(
                "{col}: {figures}: ten times {} or more",
                if nl > al { "larger" } else { "smaller" }
            ));
        } else {
            out.lines.push(format!("{col}: {figures}"));
        }
    }
    for nc in &n.columns {
        if !a.columns.iter().any(|c| c.name == nc.name) {
            out.jumps.push(format!(
                "{what}: column {:?} is new (the approved run did not write it)",
                shown(&nc.name)
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use maskflow_extractors::profile::ColumnProfile;

    /// A column: its name, its numeric range, its empty cells.
    type Col<'a> = (&'a str, Option<(&'a str, &'a str)>, u64);

    fn t(rows: u64, cols: &[Col<'_>]) -> OutputTable {
        OutputTable {
            file: "out.csv".into(),
            sheet: None,
            profile: TableProfile {
                rows_profiled: rows,
                columns: cols
                    .iter()
                    .map(|(name, range, nulls)| ColumnProfile {
                        name: (*name).into(),
                        inferred_type: if range.is_some() { "decimal" } else { "text" }.into(),
                        nulls: *nulls,
                        min: range.map(|r| r.0.into()),
                        max: range.map(|r| r.1.into()),
                        ..ColumnProfile::default()
                    })
                    .collect(),
                ..TableProfile::default()
            },
        }
    }

    #[test]
    fn the_same_kind_of_output_has_no_jump() {
        let a = t(
            100,
            &[("region", None, 0), ("tip", Some(("1.0", "9.5")), 0)],
        );
        let n = t(120, &[("region", None, 2), ("tip", Some(("0.5", "12")), 0)]);
        let c = compare(&[a], &[n], false);
        assert!(c.jumps.is_empty(), "{c:?}");
        assert_eq!(
            c.lines,
            vec![
                "output \"out.csv\": 120 rows, 2 columns (approved run: 100 rows, 2 columns)",
                "output \"out.csv\": column \"tip\": values +10^1 (approved run: +10^0)",
            ]
        );
    }

    #[test]
    fn halved_rows_a_tenfold_share_a_sign_and_empty_cells_are_jumps() {
        let a = t(
            172,
            &[
                ("share", Some(("0.01", "0.2")), 0),
                ("n", Some(("1", "5")), 0),
                ("k", None, 0),
            ],
        );
        let n = t(
            80,
            &[
                ("share", Some(("5.4", "7.2")), 0),
                ("n", Some(("-3", "5")), 0),
                ("k", None, 60),
            ],
        );
        let c = compare(&[a], &[n], false);
        assert_eq!(c.jumps.len(), 4, "{c:?}");
        assert!(
            c.jumps[0].contains("80 rows where the approved run had 172"),
            "{c:?}"
        );
        assert!(
            c.jumps[1].contains("\"share\": values +10^0 (approved run: +10^-1): ten times larger"),
            "{c:?}"
        );
        assert!(c.jumps[2].contains("\"n\""), "{c:?}");
        assert!(
            c.jumps[2].contains("the sign of its values changed"),
            "{c:?}"
        );
        assert!(
            c.jumps[3].contains("75 % of its cells are empty (approved run: 0 %)"),
            "{c:?}"
        );
    }

    #[test]
    fn a_missing_output_or_column_is_a_jump() {
        let a = t(10, &[("a", None, 0), ("b", None, 0)]);
        let n = t(10, &[("a", None, 0), ("c", None, 0)]);
        let c = compare(std::slice::from_ref(&a), &[n], false);
        assert_eq!(c.jumps.len(), 2, "{c:?}");
        let c = compare(&[a], &[], false);
        assert_eq!(
            c.jumps,
            vec!["output \"out.csv\" is missing (the approved run wrote it)"]
        );
    }

    #[test]
    fn a_declared_row_count_drift_tells_halved_rows_but_still_holds_an_empty_table() {
        let a = t(172, &[("k", None, 0)]);
        let c = compare(std::slice::from_ref(&a), &[t(80, &[("k", None, 0)])], true);
        assert!(c.jumps.is_empty(), "{c:?}");
        assert!(
            c.lines
                .iter()
                .any(|l| l.contains("80 rows where the approved run had 172 (halved or less)")),
            "{c:?}"
        );
        let c = compare(std::slice::from_ref(&a), &[t(400, &[("k", None, 0)])], true);
        assert!(c.jumps.is_empty(), "{c:?}");
        let c = compare(&[a], &[t(0, &[("k", None, 0)])], true);
        assert_eq!(
            c.jumps,
            vec!["output \"out.csv\": no rows where the approved run had 172"]
        );
    }
}
