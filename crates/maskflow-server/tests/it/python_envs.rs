//! Issue 16's "done when", through the real binary: `maskflow serve
//! --replay` builds a workflow whose script reads an xlsx (written here by
//! a real writer) with pandas/openpyxl and writes a matplotlib PNG and an
//! xlsxwriter workbook; its environment is made with uv from PyPI (uv's
//! cache under `~/.cache/maskflow-test/uv`), the sandboxed test passes, and
//! `maskflow run` re-runs it on a new workbook with no network at all.
//! A package outside the curated set waits for approval; refused, the
//! build ends with a clear message.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::common::spawned::{BIN, Serve, http, json_call, upload};

const XLSX: &str = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";

const SCRIPT: &str = r#"import json, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd
f = json.load(open(sys.argv[1]))["fields"]
df = pd.read_excel(f["workbook"], sheet_name="Sales", engine="openpyxl")
totals = df.groupby("Region", as_index=False)["Revenue"].sum().sort_values("Region")
fig, ax = plt.subplots(figsize=(6, 4))
ax.bar(totals["Region"], totals["Revenue"])
ax.set_title("Revenue per region")
fig.savefig("outputs/revenue.png", dpi=80)
by_month = df.pivot_table(index="Month", columns="Region", values="Revenue", aggfunc="sum").reset_index()
with pd.ExcelWriter("outputs/revenue.xlsx", engine="xlsxwriter") as xw:
    totals.to_excel(xw, sheet_name="Totals", index=False)
    by_month.to_excel(xw, sheet_name="By month", index=False)
print("regions:", len(totals))
"#;

fn uv_cache() -> PathBuf {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    home.join(".cache").join("maskflow-test").join("uv")
}

/// A sales workbook (sheet `Sales`: Region, Month, Revenue) written with
/// rust_xlsxwriter, and the revenue total of each region.
fn workbook(path: &Path, factor: f64) -> Vec<(String, f64)> {
    let mut book = rust_xlsxwriter::Workbook::new();
    let sheet = book.add_worksheet();
    sheet.set_name("Sales").expect("name");
    for (c, h) in ["Region", "Month", "Revenue"].iter().enumerate() {
        sheet.write_string(0, c as u16, *h).expect("header");
    }
    let regions = ["East", "North", "South", "West"];
    let mut totals = vec![0.0; regions.len()];
    let mut row = 1;
    for month in 1..=6 {
        for (i, r) in regions.iter().enumerate() {
            let revenue = ((i + 1) * 1000 + month * 37) as f64 * factor;
            sheet.write_string(row, 0, *r).expect("region");
            sheet
                .write_string(row, 1, format!("2024-{month:02}"))
                .expect("month");
            sheet.write_number(row, 2, revenue).expect("revenue");
            totals[i] += revenue;
            row += 1;
        }
    }
    book.save(path).expect("save xlsx");
    regions
        .iter()
        .map(|r| (*r).to_owned())
        .zip(totals)
        .collect()
}

fn replay(
    home: &Path,
    name: &str,
    script: &str,
    requirements: &[&str],
    outputs: &[&str],
) -> PathBuf {
    let path = home.join(format!("{name}.json"));
    let spec = json!({
        "name": name,
        "description": "Revenue per region as a chart and a workbook",
        "script": script,
        "fields": [{"name": "workbook", "label": "Sales workbook", "type": "file", "required": true, "accept": [".xlsx"]}],
        "execution": {"runtime": "python3", "entrypoint": "script.py", "requirements": requirements,
                      "outputs": outputs.iter().map(|o| json!({"name": o, "description": o})).collect::<Vec<_>>()}
    });
    std::fs::write(
        &path,
        json!({"validator": [{"feasible": true}], "clarifier": [{"needs_clarification": false}], "builder": [spec]}).to_string(),
    )
    .expect("replay");
    path
}

/// Creates a workflow on `file_id` and asks for the build; returns (wf, version).
fn start_build(port: u16, file_id: &str) -> (String, String) {
    let (status, created) = json_call(
        port,
        "POST",
        "/api/workflows",
        Some(json!({"file_ids": [file_id]})),
    );
    assert_eq!(status, 201, "{created}");
    let wf = created["workflow_id"].as_str().expect("wf").to_owned();
    let vid = created["version_id"].as_str().expect("vid").to_owned();
    let (_, reply) = json_call(
        port,
        "POST",
        &format!("/api/workflows/{wf}/messages"),
        Some(json!({"content": "monthly revenue per region as a bar chart and an Excel sheet"})),
    );
    assert_eq!(reply["status"], "building", "{reply}");
    (wf, vid)
}

/// Polls the workflow until `done` says so (bounded; no timing asserted).
fn wait_for(port: u16, wf: &str, done: impl Fn(&Value) -> bool) -> Value {
    for _ in 0..2400 {
        let (_, v) = json_call(port, "GET", &format!("/api/workflows/{wf}"), None);
        if done(&v) {
            return v;
        }
        std::thread::sleep(std::time::Duration::from_millis(250));
    }
    panic!("workflow {wf} did not get there");
}

fn env_dirs(data: &Path) -> Vec<String> {
    std::fs::read_dir(data.join("python"))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

fn zip_text(path: &Path, member: &str) -> String {
    let mut archive =
        zip::ZipArchive::new(std::fs::File::open(path).expect("open xlsx")).expect("zip");
    let mut text = String::new();
    archive
        .by_name(member)
        .expect("member")
        .read_to_string(&mut text)
        .expect("read member");
    text
}

#[test]
fn an_excel_workflow_builds_in_a_uv_environment_and_reruns_offline() {
    let home = tempfile::tempdir().expect("home");
    let data = home.path().join("data");
    let sales = home.path().join("sales.xlsx");
    workbook(&sales, 1.0);
    let replay = replay(
        home.path(),
        "Revenue per region",
        SCRIPT,
        &["pandas", "openpyxl", "matplotlib", "xlsxwriter"],
        &["revenue.png", "revenue.xlsx"],
    );
    let server = Serve::start(
        &data,
        Some(&replay),
        &[("UV_CACHE_DIR", uv_cache().as_os_str())],
    );
    let port = server.port;
    let id = upload(
        port,
        &[("sales.xlsx", XLSX, &std::fs::read(&sales).expect("read"))],
    )
    .remove(0);
    let (wf, vid) = start_build(port, &id);
    let view = wait_for(port, &wf, |v| v["current_version"]["status"] != "building");
    let current = &view["current_version"];
    assert_eq!(current["status"], "pending_user_approval", "{view}");
    let report = &current["test_report"];
    assert_eq!(report["status"], "passed", "{report}");
    let run = &report["run"];
    assert_eq!(run["isolated"], true, "the test ran in the sandbox: {run}");
    assert_eq!(run["network_isolated"], true, "{run}");
    assert!(
        run["stdout"].as_str().unwrap_or("").contains("regions: 4"),
        "{run}"
    );
    let names: Vec<&str> = run["outputs"]
        .as_array()
        .expect("outputs")
        .iter()
        .filter_map(|o| o["name"].as_str())
        .collect();
    assert_eq!(names, vec!["revenue.png", "revenue.xlsx"]);
    for o in run["outputs"].as_array().expect("outputs") {
        assert!(o["size"].as_u64().unwrap_or(0) > 1000, "{o}");
    }
    // The outputs as a person sees them: the chart inline, every sheet of
    // the workbook as a table with its row count, and a download.
    let base = format!("/api/workflows/{wf}/versions/{vid}");
    let (status, chart) = json_call(port, "GET", &format!("{base}/previews/revenue.png"), None);
    assert_eq!(status, 200, "{chart}");
    assert_eq!(chart["kind"], "image");
    assert!(
        chart["data_url"]
            .as_str()
            .unwrap_or("")
            .starts_with("data:image/png;base64,iVBORw0KGgo")
    );
    let (status, table) = json_call(port, "GET", &format!("{base}/previews/revenue.xlsx"), None);
    assert_eq!(status, 200, "{table}");
    assert_eq!(table["kind"], "table");
    assert_eq!(table["sheets"][0]["name"], "Totals");
    assert_eq!(table["sheets"][0]["row_count"], 5);
    assert_eq!(table["sheets"][0]["rows"][0], json!(["Region", "Revenue"]));
    assert_eq!(table["sheets"][0]["rows"][1][0], "East");
    assert_eq!(table["sheets"][1]["name"], "By month");
    assert_eq!(table["sheets"][1]["row_count"], 7);
    let (status, png) = http(
        port,
        "GET",
        &format!("{base}/outputs/revenue.png"),
        "text/plain",
        b"",
    );
    assert_eq!(status, 200);
    assert_eq!(&png[..4], b"\x89PNG");
    let (status, _) = json_call(
        port,
        "GET",
        &format!("{base}/previews/..%2Fscript.py"),
        None,
    );
    assert_eq!(status, 404, "only listed outputs are served");

    // The test report names the environment: Python and the pinned set.
    let env = &report["environment"];
    let env_id = env["id"].as_str().expect("environment id").to_owned();
    let packages: Vec<&str> = env["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for p in [
        "pandas==",
        "openpyxl==",
        "matplotlib==",
        "xlsxwriter==",
        "numpy==",
    ] {
        assert!(
            packages.iter().any(|x| x.starts_with(p)),
            "{p} in {packages:?}"
        );
    }
    assert!(env["size"].as_u64().unwrap_or(0) > 50_000_000, "{env}");
    assert_eq!(
        env_dirs(&data),
        vec![env_id.clone()],
        "one environment, nothing half-made"
    );
    let (status, envs) = json_call(port, "GET", "/api/environments", None);
    assert_eq!(status, 200, "{envs}");
    assert_eq!(envs["environments"][0]["id"], env_id.as_str());
    assert_eq!(envs["environments"][0]["in_use"], true, "{envs}");
    let (status, refused) = json_call(port, "DELETE", &format!("/api/environments/{env_id}"), None);
    assert_eq!(status, 409, "an environment in use stays: {refused}");

    let (status, _) = json_call(
        port,
        "POST",
        &format!("/api/workflows/{wf}/versions/{vid}/approve"),
        None,
    );
    assert_eq!(status, 200);
    drop(server);

    // `maskflow run` on a new workbook with no network at all: its own
    // network namespace where the machine allows one, and uv pointed at an
    // index nobody serves with an empty cache either way.
    let work = home.path().join("cli");
    std::fs::create_dir_all(&work).expect("mkdir");
    let expected = workbook(&work.join("sales-q3.xlsx"), 2.0);
    let empty_cache = home.path().join("empty-uv-cache");
    let isolated = Command::new("unshare")
        .args(["-rn", "true"])
        .status()
        .is_ok_and(|s| s.success());
    let mut cmd = if isolated {
        let mut c = Command::new("unshare");
        c.args(["-rn", BIN]);
        c
    } else {
        Command::new(BIN)
    };
    let output = cmd
        .args([
            "run",
            "Revenue per region",
            "--input",
            "workbook=sales-q3.xlsx",
            "--out",
            "out",
        ])
        .current_dir(&work)
        .env("MASKFLOW_HOME", &data)
        .env("UV_OFFLINE", "1")
        .env("UV_INDEX_URL", "http://127.0.0.1:9/simple")
        .env("UV_CACHE_DIR", &empty_cache)
        .output()
        .expect("maskflow run");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        !stderr.contains("python environment"),
        "nothing was installed: {stderr}"
    );
    assert_eq!(
        env_dirs(&data),
        vec![env_id.clone()],
        "the same environment was reused"
    );
    let png = std::fs::read(work.join("out").join("revenue.png")).expect("png");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let xlsx = work.join("out").join("revenue.xlsx");
    let book = zip_text(&xlsx, "xl/workbook.xml");
    assert!(
        book.contains("name=\"Totals\"") && book.contains("name=\"By month\""),
        "{book}"
    );
    let strings = zip_text(&xlsx, "xl/sharedStrings.xml");
    let sheet = zip_text(&xlsx, "xl/worksheets/sheet1.xml");
    for (region, total) in &expected {
        assert!(strings.contains(region.as_str()), "{region}");
        assert!(
            sheet.contains(&format!("<v>{total}</v>")),
            "{total} in {sheet}"
        );
    }

    // An environment removed from disk is made again from the lock stored
    // with the version — from uv's cache, uv forbidden the network — and
    // `maskflow run` shows the install's progress.
    // Environments are read-only (issue 26): the owner may write again first.
    let env_dir = data.join("python").join(&env_id);
    let thawed = Command::new("chmod")
        .args(["-R", "u+w"])
        .arg(&env_dir)
        .status()
        .expect("chmod");
    assert!(thawed.success());
    std::fs::remove_dir_all(&env_dir).expect("remove env");
    let output = Command::new(BIN)
        .args([
            "run",
            "Revenue per region",
            "--input",
            "workbook=sales-q3.xlsx",
            "--out",
            "out2",
        ])
        .current_dir(&work)
        .env("MASKFLOW_HOME", &data)
        .env("UV_OFFLINE", "1")
        .env("UV_CACHE_DIR", uv_cache())
        .output()
        .expect("maskflow run");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("python environment creating"), "{stderr}");
    assert!(stderr.contains("python environment ready"), "{stderr}");
    assert_eq!(
        env_dirs(&data),
        vec![env_id.clone()],
        "the same pinned set, the same id"
    );
    assert!(work.join("out2").join("revenue.png").is_file());
}

#[test]
fn a_package_outside_the_curated_set_waits_for_approval() {
    let home = tempfile::tempdir().expect("home");
    let data = home.path().join("data");
    let sales = home.path().join("sales.xlsx");
    workbook(&sales, 1.0);
    let script = "import json, sys, tabulate\nf = json.load(open(sys.argv[1]))['fields']\nopen('outputs/table.txt', 'w').write(tabulate.tabulate([[1, 2]], headers=['a', 'b']))\n";
    let replay_path = replay(
        home.path(),
        "Tabulated",
        script,
        &["tabulate"],
        &["table.txt"],
    );
    // The replay answers one build per workflow: two workflows, two files.
    let replay2 = home.path().join("two.json");
    let one: Value =
        serde_json::from_str(&std::fs::read_to_string(&replay_path).expect("read")).expect("json");
    std::fs::write(
        &replay2,
        json!({
            "validator": [one["validator"][0], one["validator"][0]],
            "clarifier": [one["clarifier"][0], one["clarifier"][0]],
            "builder": [one["builder"][0], one["builder"][0]],
        })
        .to_string(),
    )
    .expect("replay");
    let server = Serve::start(
        &data,
        Some(&replay2),
        &[("UV_CACHE_DIR", uv_cache().as_os_str())],
    );
    let port = server.port;
    let bytes = std::fs::read(&sales).expect("read");

    // Refused: the build ends, saying why; nothing was installed.
    let id = upload(port, &[("sales.xlsx", XLSX, &bytes)]).remove(0);
    let (wf, vid) = start_build(port, &id);
    let view = wait_for(port, &wf, |v| {
        v["current_version"]["build"]["pending_gate"] == true
    });
    let pending = &view["current_version"]["build"]["pending_packages"];
    assert_eq!(pending[0]["name"], "tabulate", "{view}");
    let configured = std::env::var("UV_INDEX_URL")
        .or_else(|_| std::env::var("UV_DEFAULT_INDEX"))
        .unwrap_or_else(|_| "https://pypi.org/simple".into());
    assert_eq!(
        pending[0]["index"], configured,
        "the approval names the index: {pending}"
    );
    assert!(
        pending[0]["version"]
            .as_str()
            .is_some_and(|v| !v.is_empty()),
        "{pending}"
    );
    assert!(
        pending[0]["size"].as_u64().is_some_and(|n| n > 1000),
        "the wheel's download size, from PyPI: {pending}"
    );
    assert!(
        env_dirs(&data).is_empty(),
        "nothing installed before the approval"
    );
    let (status, _) = json_call(
        port,
        "POST",
        &format!("/api/workflows/{wf}/versions/{vid}/gate"),
        Some(json!({"decision": "reject"})),
    );
    assert_eq!(status, 200);
    let view = wait_for(port, &wf, |v| v["current_version"]["status"] == "failed");
    let reason = view["current_version"]["failure_reason"]
        .as_str()
        .unwrap_or("");
    assert!(
        reason.contains("did not approve") && reason.contains("tabulate"),
        "{reason}"
    );
    assert!(env_dirs(&data).is_empty());

    // Approved: it is installed and the test passes.
    let id = upload(port, &[("sales.xlsx", XLSX, &bytes)]).remove(0);
    let (wf, vid) = start_build(port, &id);
    wait_for(port, &wf, |v| {
        v["current_version"]["build"]["pending_gate"] == true
    });
    let (status, _) = json_call(
        port,
        "POST",
        &format!("/api/workflows/{wf}/versions/{vid}/gate"),
        Some(json!({"decision": "approve"})),
    );
    assert_eq!(status, 200);
    let view = wait_for(port, &wf, |v| v["current_version"]["status"] != "building");
    let report = &view["current_version"]["test_report"];
    assert_eq!(report["status"], "passed", "{view}");
    assert!(
        report["environment"]["packages"][0]
            .as_str()
            .unwrap_or("")
            .starts_with("tabulate=="),
        "{report}"
    );

    // Settings: the environment is in use while its version is; once the
    // workflow is deleted it is unused, and removing it frees the folder.
    let env_id = report["environment"]["id"].as_str().expect("id").to_owned();
    let (_, envs) = json_call(port, "GET", "/api/environments", None);
    assert_eq!(envs["environments"][0]["in_use"], true, "{envs}");
    assert!(
        envs["environments"][0]["size"].as_u64().unwrap_or(0) > 10_000,
        "{envs}"
    );
    // Deleting takes two steps (issue 18): a preview with a token, then the delete.
    let (status, preview) = json_call(port, "DELETE", &format!("/api/workflows/{wf}"), None);
    assert_eq!(status, 409, "{preview}");
    let token = preview["confirm_token"].as_str().expect("token");
    let (status, done) = json_call(
        port,
        "DELETE",
        &format!("/api/workflows/{wf}?confirm={token}"),
        None,
    );
    assert_eq!(status, 200, "{done}");
    let (_, envs) = json_call(port, "GET", "/api/environments", None);
    assert_eq!(envs["environments"][0]["in_use"], false, "{envs}");
    let (status, left) = json_call(port, "DELETE", &format!("/api/environments/{env_id}"), None);
    assert_eq!(status, 200, "{left}");
    assert_eq!(left["environments"], json!([]));
    assert!(env_dirs(&data).is_empty(), "the folder is gone");
    let (status, _) = json_call(port, "DELETE", &format!("/api/environments/{env_id}"), None);
    assert_eq!(status, 404);
}

#[test]
fn an_install_that_fails_ends_the_build_clearly_and_the_workflow_can_be_retried() {
    let home = tempfile::tempdir().expect("home");
    let data = home.path().join("data");
    let sales = home.path().join("sales.xlsx");
    workbook(&sales, 1.0);
    let replay = replay(
        home.path(),
        "Unknown package",
        "import json\n",
        &["pandas", "surely-not-a-package-maskflow-xyz"],
        &[],
    );
    let server = Serve::start(
        &data,
        Some(&replay),
        &[("UV_CACHE_DIR", uv_cache().as_os_str())],
    );
    let port = server.port;
    let id = upload(
        port,
        &[("sales.xlsx", XLSX, &std::fs::read(&sales).expect("read"))],
    )
    .remove(0);
    let (wf, vid) = start_build(port, &id);
    // The requirements are resolved before anything is asked or made: the
    // unknown package ends the build at once.
    let view = wait_for(port, &wf, |v| v["current_version"]["status"] == "failed");
    let reason = view["current_version"]["failure_reason"]
        .as_str()
        .unwrap_or("");
    assert!(
        reason.contains(
            "resolving the Python packages pandas, surely-not-a-package-maskflow-xyz failed"
        ) && reason.contains("not found"),
        "{reason}"
    );
    assert!(env_dirs(&data).is_empty(), "nothing half-made is kept");
    // The workflow stays usable: editing makes a new version to retry with.
    let (status, edited) = json_call(
        port,
        "POST",
        &format!("/api/workflows/{wf}/versions/{vid}/edit"),
        None,
    );
    assert!(status == 200 || status == 201, "{edited}");
    let (_, view) = json_call(port, "GET", &format!("/api/workflows/{wf}"), None);
    assert_eq!(view["current_version"]["version"], 2, "{view}");
    assert_eq!(view["current_version"]["status"], "validated", "{view}");
}
