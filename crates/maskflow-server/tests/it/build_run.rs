//! The issue's "done when" flow through the real binary: `maskflow serve
//! --replay` — upload two real CSVs, converse, build (the test report shows
//! the script ran on the real files with the expected output), approve,
//! then `maskflow run` on two new files gives the right output.

use std::process::Command;

use serde_json::{Value, json};

use crate::common::spawned::{BIN, Serve, http, json_call, upload};

const SCRIPT: &str = r#"import csv, json, sys
f = json.load(open(sys.argv[1]))["fields"]
prices = {r["sku"]: float(r["price"]) for r in csv.DictReader(open(f["prices"]))}
with open("outputs/totals.csv", "w", newline="") as out:
    w = csv.writer(out)
    w.writerow(["order", "total"])
    for r in csv.DictReader(open(f["orders"])):
        w.writerow([r["order"], "%.2f" % (prices[r["sku"]] * int(r["qty"]))])
"#;

#[test]
fn build_on_real_files_then_run_on_new_ones() {
    let home = tempfile::tempdir().expect("home");
    let replay = home.path().join("replay.json");
    let spec = json!({
        "name": "Order totals",
        "description": "Prices each order line",
        "script": SCRIPT,
        "fields": [
            {"name": "orders", "label": "Orders", "type": "file", "required": true, "accept": [".csv"]},
            {"name": "prices", "label": "Prices", "type": "file", "required": true, "accept": [".csv"]}
        ],
        "execution": {"runtime": "python3", "entrypoint": "script.py", "requirements": [],
                      "outputs": [{"name": "totals.csv", "description": "order totals"}]}
    });
    std::fs::write(
        &replay,
        json!({
            "validator": [{"feasible": true}],
            "clarifier": [{"needs_clarification": true, "question": "Round to cents?"}, {"needs_clarification": false}],
            "builder": [spec],
        })
        .to_string(),
    )
    .expect("replay");
    let data = home.path().join("data");
    let server = Serve::start(&data, Some(&replay), &[]);
    let port = server.port;

    let ids = upload(
        port,
        &[
            (
                "orders.csv",
                "text/csv",
                "order,sku,qty\nA-1,X,2\nA-2,Y,1\n".as_bytes(),
            ),
            (
                "prices.csv",
                "text/csv",
                "sku,price\nX,1.50\nY,10.00\n".as_bytes(),
            ),
        ],
    );
    let (status, created) = json_call(
        port,
        "POST",
        "/api/workflows",
        Some(json!({"file_ids": ids})),
    );
    assert_eq!(status, 201, "{created}");
    let wf = created["workflow_id"].as_str().expect("wf").to_owned();
    let vid = created["version_id"].as_str().expect("vid").to_owned();
    let (_, reply) = json_call(
        port,
        "POST",
        &format!("/api/workflows/{wf}/messages"),
        Some(json!({"content": "total per order"})),
    );
    assert_eq!(reply["status"], "clarifying");
    let (_, reply) = json_call(
        port,
        "POST",
        &format!("/api/workflows/{wf}/messages"),
        Some(json!({"content": "yes, two decimals"})),
    );
    assert_eq!(reply["status"], "building");

    // Wait for the background build (bounded; no timing is asserted).
    let mut view = Value::Null;
    for _ in 0..600 {
        let (_, v) = json_call(port, "GET", &format!("/api/workflows/{wf}"), None);
        if v["current_version"]["status"] != "building" {
            view = v;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let current = &view["current_version"];
    assert_eq!(current["status"], "pending_user_approval", "{view}");
    let report = &current["test_report"];
    assert_eq!(report["status"], "passed", "{report}");
    assert_eq!(report["inputs"]["orders"], json!(["orders.csv"]));
    let out = &report["run"]["outputs"][0];
    assert_eq!(out["name"], "totals.csv");
    assert_eq!(out["row_count"], 2);
    assert_eq!(
        out["preview_rows"],
        json!([["order", "total"], ["A-1", "3.00"], ["A-2", "10.00"]])
    );
    assert_eq!(current["build"]["phase"], "complete");

    let (status, sessions) = json_call(
        port,
        "GET",
        &format!("/api/workflows/{wf}/versions/{vid}/sessions"),
        None,
    );
    assert_eq!(status, 200);
    assert_eq!(sessions[0]["iteration"], 1);
    let (status, script) = http(
        port,
        "GET",
        &format!("/api/workflows/{wf}/versions/{vid}/sessions/1/code/script.py"),
        "text/plain",
        b"",
    );
    assert_eq!(status, 200);
    assert_eq!(String::from_utf8_lossy(&script), SCRIPT);

    let (status, _) = json_call(
        port,
        "POST",
        &format!("/api/workflows/{wf}/versions/{vid}/approve"),
        None,
    );
    assert_eq!(status, 200);

    // A run through the API on uploaded files.
    let new_ids = upload(
        port,
        &[
            (
                "orders2.csv",
                "text/csv",
                // As many lines as the approved run's: half as many would
                // hold the run as "needs a look" (rerun.rs tests that).
                "order,sku,qty\nB-1,Y,3\nB-2,Y,1\n".as_bytes(),
            ),
            ("prices2.csv", "text/csv", "sku,price\nY,2.25\n".as_bytes()),
        ],
    );
    let (status, run) = json_call(
        port,
        "POST",
        &format!("/api/workflows/{wf}/runs"),
        Some(json!({"inputs": {"orders": new_ids[0], "prices": new_ids[1]}})),
    );
    assert_eq!(status, 201, "{run}");
    assert_eq!(run["status"], "succeeded");
    let run_id = run["id"].as_str().expect("run id");
    let (status, bytes) = http(
        port,
        "GET",
        &format!("/api/runs/{run_id}/outputs/totals.csv"),
        "text/plain",
        b"",
    );
    assert_eq!(status, 200);
    assert_eq!(
        String::from_utf8_lossy(&bytes).replace("\r\n", "\n"),
        "order,total\nB-1,6.75\nB-2,2.25\n"
    );
    let (_, runs) = json_call(port, "GET", &format!("/api/workflows/{wf}/runs"), None);
    assert_eq!(runs.as_array().map(Vec::len), Some(1));
    drop(server);

    // `maskflow run` on two new local files.
    let work = home.path().join("cli");
    std::fs::create_dir_all(&work).expect("mkdir");
    std::fs::write(work.join("o.csv"), "order,sku,qty\nC-1,X,4\nC-2,Z,1\n").expect("write");
    std::fs::write(work.join("p.csv"), "sku,price\nX,0.25\nZ,7\n").expect("write");
    let output = Command::new(BIN)
        .args([
            "run",
            "Order totals",
            "--input",
            "orders=o.csv",
            "--input",
            "prices=p.csv",
        ])
        .current_dir(&work)
        .env("MASKFLOW_HOME", &data)
        .output()
        .expect("maskflow run");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let printed = String::from_utf8_lossy(&output.stdout);
    let path = printed.lines().next().expect("an output path");
    assert!(path.contains("maskflow-run-run_"), "{path}");
    assert_eq!(
        std::fs::read_to_string(path)
            .expect("output")
            .replace("\r\n", "\n"),
        "order,total\nC-1,1.00\nC-2,7.00\n"
    );

    // A failing run exits non-zero.
    std::fs::write(work.join("bad.csv"), "order,sku,qty\nD-1,NOPE,1\n").expect("write");
    let failed = Command::new(BIN)
        .args([
            "run",
            &wf,
            "--input",
            "orders=bad.csv",
            "--input",
            "prices=p.csv",
            "--out",
        ])
        .arg(work.join("out"))
        .current_dir(&work)
        .env("MASKFLOW_HOME", &data)
        .output()
        .expect("maskflow run");
    assert!(!failed.status.success());
    assert!(String::from_utf8_lossy(&failed.stderr).contains("KeyError"));
}
