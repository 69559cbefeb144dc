//! Issue 28, point 6, through the real binary: `maskflow run` (and the run
//! route) compare each new file with the one the workflow was approved
//! with. A renamed column exits 2 naming both names before any script
//! runs; `--force` runs anyway; a file of the same shape with other values
//! runs; a renamed workbook sheet is named.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::json;

use crate::common::spawned::{BIN, Serve, upload};

const CSV_SCRIPT: &str = r#"import json, sys
f = json.load(open(sys.argv[1]))["fields"]
lines = open(f["sales"]).read().splitlines()
open("outputs/summary.txt", "w").write("%s: %d rows\n" % (lines[0], len(lines) - 1))
"#;

const BOOK_SCRIPT: &str = r#"import json, os, sys
f = json.load(open(sys.argv[1]))["fields"]
open("outputs/size.txt", "w").write("%d bytes\n" % os.path.getsize(f["book"]))
"#;

const XLSX: &str = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";

fn spec(name: &str, field: &str, script: &str, output: &str) -> serde_json::Value {
    json!({
        "name": name,
        "description": name,
        "script": script,
        "fields": [{"name": field, "label": field, "type": "file", "required": true}],
        "execution": {"runtime": "python3", "entrypoint": "script.py", "requirements": [],
                      "outputs": [{"name": output, "description": output}]}
    })
}

/// A workbook with one small table on each named sheet.
fn workbook(path: &Path, sheets: &[&str]) {
    let mut book = rust_xlsxwriter::Workbook::new();
    for name in sheets {
        let sheet = book.add_worksheet();
        sheet.set_name(*name).expect("name");
        sheet.write_string(0, 0, "Item").expect("header");
        sheet.write_string(1, 0, "Pens").expect("cell");
    }
    book.save(path).expect("save xlsx");
}

/// Creates, builds (said "go ahead" to the preflight) and approves a
/// workflow on `file_id`.
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
        Some(json!({"content": "summarise it", "go_ahead": true})),
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

fn run(data: &Path, work: &Path, workflow: &str, input: &str, force: bool) -> Output {
    let mut args = vec!["run", workflow, "--input", input];
    if force {
        args.push("--force");
    }
    Command::new(BIN)
        .args(&args)
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
fn a_file_of_another_shape_is_named_before_any_script_runs() {
    let home = tempfile::tempdir().expect("home");
    let data = home.path().join("data");
    let replay = home.path().join("replay.json");
    std::fs::write(
        &replay,
        json!({
            "validator": [{"feasible": true}, {"feasible": true}],
            "clarifier": [{"needs_clarification": false}, {"needs_clarification": false}],
            "builder": [
                spec("Sales summary", "sales", CSV_SCRIPT, "summary.txt"),
                spec("Book size", "book", BOOK_SCRIPT, "size.txt"),
            ],
        })
        .to_string(),
    )
    .expect("replay");
    let server = Serve::start(&data, Some(&replay), &[]);
    let ids = upload(
        server.port,
        &[(
            "sales.csv",
            "text/csv",
            b"Region,Amount\nEast,10\nWest,20\n",
        )],
    );
    let sales = approved(&server, &ids[0]);
    let book = home.path().join("book.xlsx");
    workbook(&book, &["Sales", "Costs"]);
    let ids = upload(
        server.port,
        &[("book.xlsx", XLSX, &std::fs::read(&book).expect("read"))],
    );
    let books = approved(&server, &ids[0]);

    // The run route: a 400 listing the difference, unless forced.
    let renamed = upload(
        server.port,
        &[("renamed.csv", "text/csv", b"Region,Amt\nNorth,5\n")],
    );
    let runs = format!("/api/workflows/{sales}/runs");
    let (status, refused) = server.call(
        "POST",
        &runs,
        Some(json!({"inputs": {"sales": renamed[0]}})),
    );
    assert_eq!(status, 400, "{refused}");
    assert_eq!(refused["detail"], "INPUTS_DIFFER", "{refused}");
    assert!(
        refused["message"].as_str().unwrap_or("").contains(
            "input sales: column \"Amount\" is missing (the approved file had it); column \"Amt\" is new"
        ),
        "{refused}"
    );
    let (status, forced) = server.call(
        "POST",
        &runs,
        Some(json!({"inputs": {"sales": renamed[0]}, "force": true})),
    );
    assert_eq!(status, 201, "{forced}");
    assert_eq!(forced["status"], "succeeded", "{forced}");
    drop(server);

    let work = home.path().join("cli");
    std::fs::create_dir_all(&work).expect("mkdir");
    std::fs::write(work.join("renamed.csv"), "Region,Amt\nNorth,5\n").expect("write");
    std::fs::write(
        work.join("other.csv"),
        "Region,Amount\nSouth,7\nNorth,8\nEast,9\n",
    )
    .expect("write");
    workbook(&work.join("book2.xlsx"), &["Sales", "Expenses"]);

    // A renamed column: exit 2, both names, and no run was made.
    let before = runs_of(&data);
    let out = run(&data, &work, &sales, "sales=renamed.csv", false);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("input sales: column \"Amount\" is missing (the approved file had it); column \"Amt\" is new"),
        "{err}"
    );
    assert!(err.contains("--force"), "{err}");
    assert!(out.stdout.is_empty());
    assert_eq!(runs_of(&data), before, "no script ran");

    // `--force` runs it anyway.
    let out = run(&data, &work, &sales, "sales=renamed.csv", true);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("running anyway"), "{err}");
    assert_eq!(runs_of(&data), before + 1);

    // The same shape with other values runs without a word about shapes.
    let out = run(&data, &work, &sales, "sales=other.csv", false);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("differ"), "{err}");
    let summary = std::fs::read_to_string(Path::new(String::from_utf8_lossy(&out.stdout).trim()))
        .expect("summary output");
    assert_eq!(summary, "Region,Amount: 3 rows\n");

    // A workbook whose sheet was renamed.
    let out = run(&data, &work, &books, "book=book2.xlsx", false);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("input book: sheet \"Costs\" is missing (the approved file had it)"),
        "{err}"
    );
    assert!(
        err.contains("input book: sheet \"Expenses\" is new"),
        "{err}"
    );
}
