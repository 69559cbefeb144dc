//! Issue 41 through the real binary: a workflow approved on one period's
//! files, re-run with `maskflow run` on the next period's. What the script
//! declared it reads (`execution.reads`) is checked before it starts: a
//! column it reads dropped or renamed, or moved under a positional read,
//! refuses with exit 2 and one line each; a new sheet or column it does
//! not read is a `note:` line and the run goes on.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::common::spawned::{BIN, Serve, upload};

/// Maps the first column's regions and reads the second column by
/// position (`row[1]`), as a builder told to address a masked column by
/// position writes it; one output line per payment.
const POSITIONAL: &str = r#"import csv, json, sys
f = json.load(open(sys.argv[1]))["fields"]
rows = list(csv.reader(open(f["payments"])))[1:]
codes = {"East": "E", "West": "W"}
print("payment lines read: %d" % len(rows))
with open("outputs/lines.csv", "w") as out:
    out.write("region,amount\n")
    for r in rows:
        out.write("%s,%s\n" % (codes[r[0]], float(r[1])))
"#;

/// Stands for a script that reads the `Qty` column of the workbook's
/// `Jan` sheet (the base Python has no workbook reader): it declares that
/// read, and writes the file's size.
const BOOK: &str = r#"import json, os, sys
f = json.load(open(sys.argv[1]))["fields"]
open("outputs/stock.csv", "w").write("bytes\n%d\n" % os.path.getsize(f["stock"]))
"#;

const XLSX: &str = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";

fn spec(name: &str, field: &str, script: &str, output: &str, reads: Value) -> Value {
    json!({
        "name": name,
        "description": name,
        "script": script,
        "fields": [{"name": field, "label": field, "type": "file", "required": true}],
        "execution": {"runtime": "python3", "entrypoint": "script.py", "requirements": [],
                      "outputs": [{"name": output, "description": output}],
                      "reads": reads}
    })
}

/// A workbook with the named sheets, each a header and two rows.
fn workbook(path: &Path, sheets: &[(&str, &[&str])]) {
    let mut book = rust_xlsxwriter::Workbook::new();
    for (name, header) in sheets {
        let sheet = book.add_worksheet();
        sheet.set_name(*name).expect("name");
        for (c, h) in header.iter().enumerate() {
            let c = u16::try_from(c).expect("column");
            sheet.write_string(0, c, *h).expect("header");
            for r in 1..3u32 {
                if *h == "Qty" {
                    sheet.write_number(r, c, f64::from(r * 4)).expect("cell");
                } else {
                    sheet.write_string(r, c, "Pens").expect("cell");
                }
            }
        }
    }
    book.save(path).expect("save xlsx");
}

/// Creates, builds and approves a workflow on `file_id`.
fn approved(server: &Serve, file_id: &str) -> String {
    let (status, created) = server.call(
        "POST",
        "/api/workflows",
        Some(json!({"file_ids": [file_id]})),
    );
    assert_eq!(status, 201, "{created}");
    let wf = created["workflow_id"].as_str().expect("wf").to_owned();
    let vid = created["version_id"].as_str().expect("vid").to_owned();
    let (status, reply) = server.call(
        "POST",
        &format!("/api/workflows/{wf}/messages"),
        Some(json!({"content": "sum it every month", "go_ahead": true})),
    );
    assert_eq!(status, 200, "{reply}");
    let view = server.wait_for(&format!("/api/workflows/{wf}"), "the build", |v| {
        v["current_version"]["status"] != "building"
    });
    assert_eq!(
        view["current_version"]["status"], "pending_user_approval",
        "{view}"
    );
    let (status, _) = server.call(
        "POST",
        &format!("/api/workflows/{wf}/versions/{vid}/approve"),
        None,
    );
    assert_eq!(status, 200);
    wf
}

fn run(data: &Path, work: &Path, workflow: &str, input: &str) -> Output {
    Command::new(BIN)
        .args(["run", workflow, "--input", input])
        .current_dir(work)
        .env("MASKFLOW_HOME", data)
        .output()
        .expect("maskflow run")
}

fn runs_of(data: &Path) -> usize {
    std::fs::read_dir(data.join("runs"))
        .map(|d| d.count())
        .unwrap_or(0)
}

#[test]
fn the_next_period_runs_or_is_refused_for_what_the_script_reads() {
    let home = tempfile::tempdir().expect("home");
    let data = home.path().join("data");
    let replay = home.path().join("replay.json");
    std::fs::write(
        &replay,
        json!({
            "validator": [{"feasible": true}, {"feasible": true}],
            "clarifier": [{"needs_clarification": false}, {"needs_clarification": false}],
            "builder": [
                spec("Payments", "payments", POSITIONAL, "lines.csv",
                     json!([{"input": "payments", "columns": [{"position": 0, "mapped": true}, {"position": 1}]}])),
                spec("Stock", "stock", BOOK, "stock.csv",
                     json!([{"input": "stock", "sheet": "Jan", "columns": [{"name": "Qty"}]}])),
            ],
        })
        .to_string(),
    )
    .expect("replay");
    let server = Serve::start(&data, Some(&replay), &[]);
    let ids = upload(
        server.port,
        &[(
            "payments.csv",
            "text/csv",
            b"Region,Amount,Tip\nEast,10,1\nWest,20,2\nEast,15,1\nWest,25,2\n",
        )],
    );
    let payments = approved(&server, &ids[0]);
    let book = home.path().join("stock.xlsx");
    workbook(
        &book,
        &[("Jan", &["Item", "Qty"]), ("Notes", &["Stock report 2024"])],
    );
    let ids = upload(
        server.port,
        &[("stock.xlsx", XLSX, &std::fs::read(&book).expect("read"))],
    );
    let stock = approved(&server, &ids[0]);
    // The approved version shows its reads.
    let (_, view) = server.call("GET", &format!("/api/workflows/{payments}"), None);
    assert_eq!(
        view["current_version"]["execution"]["reads"][0]["columns"][1]["position"], 1,
        "{view}"
    );
    drop(server);

    let work = home.path().join("cli");
    std::fs::create_dir_all(&work).expect("mkdir");
    let period = |name: &str, text: &str| std::fs::write(work.join(name), text).expect("write");
    period("reordered.csv", "Region,Tip,Amount\nEast,1,10\n");
    period("dropped.csv", "Region,Tip\nEast,1\n");
    period("renamed.csv", "Region,Sale,Tip\nEast,10,1\n");
    period(
        "wider.csv",
        "Region,Amount,Tip,Note\nEast,30,1,x\nWest,40,2,y\nWest,35,1,x\nEast,20,2,y\n",
    );
    period(
        "north.csv",
        "Region,Amount,Tip\nEast,10,1\nNorth,20,2\nNorth,15,1\nWest,25,2\n",
    );
    period("halved.csv", "Region,Amount,Tip\nEast,10,1\nWest,20,2\n");

    let refused = |input: &str, line: &str| {
        let before = runs_of(&data);
        let out = run(&data, &work, &payments, input);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{input}: {err}");
        assert!(err.contains(line), "{input}: {err}");
        assert_eq!(runs_of(&data), before, "{input}: no script ran");
    };
    // Columns reordered under the positional read.
    refused(
        "payments=reordered.csv",
        "input payments: column 2 was \"Amount\" and is now \"Tip\" (\"Amount\" moved to column 3): the script reads it by its position",
    );
    // The column read dropped.
    refused(
        "payments=dropped.csv",
        "input payments: column 2 was \"Amount\" and is now \"Tip\": the script reads it by its position",
    );
    // The column read renamed.
    refused(
        "payments=renamed.csv",
        "input payments: column 2 was \"Amount\" and is now \"Sale\": the script reads it by its position",
    );

    // A new column the script does not read: a note, and the run goes on.
    let out = run(&data, &work, &payments, "payments=wider.csv");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("maskflow run: note: input payments: column \"Note\" is new — the script does not read it"),
        "{err}"
    );
    assert!(
        err.contains("maskflow run: script: payment lines read: 4"),
        "{err}"
    );
    assert!(
        err.contains("maskflow run: output: output \"lines.csv\": 4 rows, 2 columns (approved run: 4 rows, 2 columns)"),
        "{err}"
    );
    let lines = std::fs::read_to_string(Path::new(String::from_utf8_lossy(&out.stdout).trim()))
        .expect("lines output");
    assert_eq!(lines, "region,amount\nE,30.0\nW,40.0\nW,35.0\nE,20.0\n");

    // A new category in the column the script maps: refused, masked, with its count.
    refused(
        "payments=north.csv",
        "input payments: column \"Region\" has a category the approved file did not have: \"Aaaaa\" (2 rows); the script maps each category",
    );

    // Half the rows: the script succeeds, the output is held as "needs a look".
    let out = run(&data, &work, &payments, "payments=halved.csv");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("needs a look: output \"lines.csv\": 2 rows where the approved run had 4 (halved or less)"),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "held outputs are not copied");

    // A workbook that gained a month sheet, and whose notes sheet's title
    // changed its year: neither is read, so it runs, with the notes.
    let next = work.join("stock-feb.xlsx");
    workbook(
        &next,
        &[
            ("Jan", &["Item", "Qty"]),
            ("Feb", &["Item", "Qty"]),
            ("Notes", &["Stock report 2025"]),
        ],
    );
    let out = run(&data, &work, &stock, "stock=stock-feb.xlsx");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("note: input stock: sheet \"Feb\" is new"),
        "{err}"
    );
    assert!(
        err.contains("note: input stock: sheet \"Notes\": column"),
        "{err}"
    );
    // The notes are kept with the run.
    let server = Serve::start(&data, Some(&replay), &[]);
    let (_, runs) = server.call("GET", &format!("/api/workflows/{stock}/runs"), None);
    let notes = runs[0]["input_notes"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(notes.len(), 2, "{runs}");
    // The held run is in the payments workflow's history with its figures.
    let (_, runs) = server.call("GET", &format!("/api/workflows/{payments}/runs"), None);
    assert_eq!(runs[0]["status"], "needs_look", "{runs}");
    assert_eq!(runs[0]["stdout"], "payment lines read: 2\n", "{runs}");
    assert_eq!(
        runs[0]["output_jumps"].as_array().map(Vec::len),
        Some(1),
        "{runs}"
    );

    // A sheet it reads, gone: refused.
    let gone = work.join("stock-gone.xlsx");
    workbook(&gone, &[("Feb", &["Item", "Qty"])]);
    drop(server);
    let out = run(&data, &work, &stock, "stock=stock-gone.xlsx");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(
            "input stock: sheet \"Jan\" is missing (the approved file had it) — the script reads it"
        ),
        "{err}"
    );
}
