//! The curated package set: what a generated script may ask for without the
//! user's approval, and what the builder's prompt says is available.
//!
//! Chosen for the jobs people bring (Excel in and out, a chart, a PDF or
//! Word table, tables too big for the standard library) and kept small
//! enough that the whole set installs in well under a minute from PyPI
//! (about 340 MB on disk, DuckDB's 60 MB included; each environment holds
//! only what its script lists). DuckDB is the out-of-core engine: SQL over
//! files larger than memory, spilling to disk. polars and pyarrow are left
//! out: DuckDB and pandas cover the same work and the two add about 150 MB;
//! a script may still ask for them, with the user's approval.

use super::requirement::Requirement;

/// The curated packages and what each is for (the builder is told this).
pub const CURATED: &[(&str, &str)] = &[
    (
        "pandas",
        "tables: read/write CSV and Excel (`pd.read_excel`, `to_excel`), group, join, aggregate",
    ),
    (
        "openpyxl",
        "read and write .xlsx workbooks (cells, sheets, styles)",
    ),
    (
        "xlsxwriter",
        "write .xlsx workbooks with formats and native charts",
    ),
    (
        "matplotlib",
        "charts saved as PNG or SVG (use `matplotlib.use(\"Agg\")`)",
    ),
    (
        "duckdb",
        "SQL on CSV/Parquet files in place, out of core: large files, joins, aggregations",
    ),
    ("pypdf", "read PDF text and pages"),
    ("python-docx", "read and write Word .docx (import `docx`)"),
];

/// A requirement's normalised distribution name (PEP 503): `Python_Docx>=1`
/// → `python-docx`, read with the requirement grammar
/// ([`Requirement::parse`]). Empty when the text is not a valid requirement.
pub fn dist_name(requirement: &str) -> String {
    Requirement::parse(requirement)
        .map(|r| r.dist_name())
        .unwrap_or_default()
}

/// Whether `requirement` is a valid requirement naming a curated package.
pub fn is_curated(requirement: &str) -> bool {
    let name = dist_name(requirement);
    !name.is_empty() && CURATED.iter().any(|(n, _)| *n == name)
}

/// The requirements that name no curated package (they need the user's
/// approval), in the order given, without duplicates. A requirement the
/// grammar refuses is never curated: it is listed as it is.
pub fn outside_curated(requirements: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in requirements {
        let r = r.trim();
        if r.is_empty() || is_curated(r) {
            continue;
        }
        let name = dist_name(r);
        let seen = out.iter().any(|o| {
            if name.is_empty() {
                o == r
            } else {
                dist_name(o) == name
            }
        });
        if !seen {
            out.push(r.to_owned());
        }
    }
    out
}

/// When the builder should reach for DuckDB rather than pandas (issue 43),
/// told beside the sizes when an input is large for the memory limit:
/// pandas holds a whole table in memory, several times the file's size.
pub const DUCKDB_OR_PANDAS: &str = "pandas holds a whole table in memory, often 5–10 times the file's size: for an input \
over about a tenth of the memory limit, and for joins or aggregations of large files, use duckdb — SQL reading the file in place, \
e.g. `duckdb.connect().execute(\"select country, sum(amount) from read_csv(?) group by country\", [path]).fetchall()`, \
or `copy (select …) to 'outputs/result.csv' (HEADER)`; it sizes itself to the memory limit and spills to `.tmp` in the working \
folder. Fetch only the small result (`.df()` gives pandas). Keep pandas for small tables and for writing Excel files.";

/// The prompt's paragraph on packages.
pub fn prompt_text() -> String {
    let mut text = String::from(
        "Python packages: the standard library is always there. These packages are also available — list the ones the script \
imports in `execution.requirements` (plain names, e.g. \"pandas\"; Maskflow installs them locally before the script runs, \
the script itself has no network):\n",
    );
    for (name, what) in CURATED {
        text.push_str(&format!("- {name}: {what}\n"));
    }
    text.push_str(
        "Prefer these. Any other package needs the user's approval before it is installed, so ask for one only when the task \
cannot be done without it. Charts: save them into `outputs/` as PNG or SVG; tables: CSV or .xlsx in `outputs/`.",
    );
    text
}

/// The packages in one sentence, for a prompt short of room (a small
/// model's context window): the names without what each is for.
pub fn prompt_line() -> String {
    let names: Vec<&str> = CURATED.iter().map(|(name, _)| *name).collect();
    format!(
        "Python packages: the standard library, and {} (import `docx` for python-docx) — list the ones the script imports \
in `execution.requirements`; any other needs the user's approval. Save charts (PNG, SVG) and tables (CSV, .xlsx) into `outputs/`.",
        names.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_normalised() {
        assert_eq!(dist_name("Python_Docx>=1.0"), "python-docx");
        assert_eq!(dist_name(" pandas [excel] >=2"), "pandas");
        assert_eq!(
            dist_name("pandas ; python_version>'3'"),
            "",
            "a marker is refused"
        );
        assert_eq!(dist_name("zope..interface"), "zope-interface");
        assert_eq!(dist_name(">=1"), "");
    }

    #[test]
    fn only_packages_outside_the_set_need_approval() {
        let reqs: Vec<String> = [
            "pandas>=2",
            "OpenPyXL",
            "requests",
            "Requests==2",
            "tqdm",
            "",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        assert_eq!(outside_curated(&reqs), vec!["requests", "tqdm"]);
        assert!(outside_curated(&["matplotlib".into(), "xlsxwriter".into()]).is_empty());
        // The break of issue 26: the leading name was curated, the rest a URL.
        let hostile = vec!["xlsxwriter @ http://127.0.0.1:1/x.whl".to_owned()];
        assert!(!is_curated(&hostile[0]));
        assert_eq!(outside_curated(&hostile), hostile);
    }

    #[test]
    fn the_prompt_names_every_curated_package() {
        let text = prompt_text();
        for (name, _) in CURATED {
            assert!(text.contains(name), "{name}");
        }
        assert!(text.contains("approval"));
        assert!(text.contains("duckdb: SQL on CSV"));
        assert!(DUCKDB_OR_PANDAS.contains("over about a tenth of the memory limit"));
        assert!(DUCKDB_OR_PANDAS.contains("Keep pandas for small tables and for writing Excel"));
    }
}
