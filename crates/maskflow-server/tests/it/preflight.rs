//! Issue 28, point 5, through the real binary: with `uv` unavailable
//! (`MASKFLOW_UV` naming a missing file, no `uv` on `PATH`) the preflight
//! says so with its fix, a workflow's first message is refused before any
//! LLM call (the ledger stays empty), "go ahead" sends it, the build fails
//! on its environment, and once uv is back (where the one-click install
//! puts it) a retry builds with the builder's script — no new builder call.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common::spawned::{Serve, upload};

const SCRIPT: &str = r#"import json, sys
import pypdf
f = json.load(open(sys.argv[1]))["fields"]
rows = open(f["table"]).read().splitlines()
open("outputs/count.txt", "w").write("%d rows, pypdf %s\n" % (len(rows) - 1, pypdf.__version__))
"#;

/// A real `uv` for the part where it is back, or `None` (skipped loudly,
/// failed under `MASKFLOW_REQUIRE_LLM_SERVERS=1`).
fn real_uv() -> Option<PathBuf> {
    let candidates = [
        std::env::var_os("MASKFLOW_UV").map(PathBuf::from),
        std::env::var_os("HOME")
            .map(|h| PathBuf::from(h).join(".cache/maskflow-test/uv-tool/bin/uv")),
    ];
    let found = candidates.into_iter().flatten().find(|p| p.is_file());
    if found.is_none() {
        if std::env::var("MASKFLOW_REQUIRE_LLM_SERVERS").is_ok_and(|v| v == "1") {
            panic!("uv is needed: python3 -m pip install uv (or set MASKFLOW_UV)");
        }
        eprintln!("SKIPPED: uv was not found (set MASKFLOW_UV)");
    }
    found
}

/// `PATH` without the folders that hold a `uv`.
fn path_without_uv() -> OsString {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let kept: Vec<PathBuf> = std::env::split_paths(&path)
        .filter(|d| !d.join("uv").exists())
        .collect();
    std::env::join_paths(kept).expect("PATH")
}

fn uv_cache() -> PathBuf {
    std::env::var_os("UV_CACHE_DIR")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/maskflow-test/uv"))
        })
        .unwrap_or_else(std::env::temp_dir)
}

fn replay(dir: &Path) -> PathBuf {
    let spec = json!({
        "name": "Row count",
        "description": "Counts the rows",
        "script": SCRIPT,
        "fields": [{"name": "table", "label": "Table", "type": "file", "required": true, "accept": [".csv"]}],
        "execution": {"runtime": "python3", "entrypoint": "script.py", "requirements": ["pypdf"],
                      "outputs": [{"name": "count.txt", "description": "the count"}]}
    });
    let path = dir.join("replay.json");
    std::fs::write(
        &path,
        json!({"validator": [{"feasible": true}], "clarifier": [{"needs_clarification": false}], "builder": [spec]})
            .to_string(),
    )
    .expect("replay");
    path
}

/// The roles of the ledger's entries (every request that left the machine).
fn ledger_roles(server: &Serve) -> Vec<String> {
    let (status, entries) = server.call("GET", "/api/ledger?limit=500", None);
    assert_eq!(status, 200, "{entries}");
    entries
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| e["role"].as_str().unwrap_or("").to_owned())
        .collect()
}

fn uv_item(preflight: &Value) -> Value {
    preflight["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|i| i["check"] == "uv")
        .cloned()
        .expect("a uv item")
}

#[test]
fn missing_uv_holds_the_first_message_and_a_failed_environment_retries_without_the_builder() {
    let Some(uv) = real_uv() else { return };
    let home = tempfile::tempdir().expect("home");
    let data = home.path().join("data");
    let missing = home.path().join("no-such-uv");
    let path = path_without_uv();
    let cache = uv_cache();
    let server = Serve::start(
        &data,
        Some(&replay(home.path())),
        &[
            ("MASKFLOW_UV", missing.as_os_str()),
            ("PATH", path.as_os_str()),
            ("UV_CACHE_DIR", cache.as_os_str()),
            // Nor python3's own uv package, when one is installed for the user.
            ("PYTHONNOUSERSITE", std::ffi::OsStr::new("1")),
        ],
    );

    // The preflight, on its own and with the new workflow.
    let (status, preflight) = server.call("GET", "/api/preflight", None);
    assert_eq!(status, 200, "{preflight}");
    assert_eq!(preflight["ready"], false, "{preflight}");
    let item = uv_item(&preflight);
    assert_eq!(item["ok"], false, "{item}");
    assert_eq!(item["action"], "install_uv", "{item}");
    assert!(
        item["fix"].as_str().unwrap_or("").contains("install uv"),
        "{item}"
    );
    for check in ["python", "isolation", "disk"] {
        assert!(
            preflight["items"]
                .as_array()
                .expect("items")
                .iter()
                .any(|i| i["check"] == check),
            "{check} is checked: {preflight}"
        );
    }
    let ids = upload(
        server.port,
        &[("people.csv", "text/csv", b"name,age\nAda,36\nAlan,41\n")],
    );
    let (status, created) = server.call("POST", "/api/workflows", Some(json!({"file_ids": ids})));
    assert_eq!(status, 201, "{created}");
    assert_eq!(uv_item(&created["preflight"])["ok"], false, "{created}");
    let wf = created["workflow_id"].as_str().expect("wf").to_owned();
    let vid = created["version_id"].as_str().expect("vid").to_owned();

    // Without "go ahead": refused, naming uv, and nothing left the machine.
    let messages = format!("/api/workflows/{wf}/messages");
    let (status, refused) = server.call(
        "POST",
        &messages,
        Some(json!({"content": "count the rows"})),
    );
    assert_eq!(status, 409, "{refused}");
    assert_eq!(refused["detail"], "PREFLIGHT_MISSING", "{refused}");
    let text = refused["message"].as_str().unwrap_or("");
    assert!(
        text.contains("uv") && text.contains("go ahead"),
        "{refused}"
    );
    assert!(
        ledger_roles(&server).is_empty(),
        "no request reached the back end"
    );

    // With it: the conversation goes on and the build fails on its environment.
    let (status, reply) = server.call(
        "POST",
        &messages,
        Some(json!({"content": "count the rows", "go_ahead": true})),
    );
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply["status"], "building", "{reply}");
    let view = server.wait_for(&format!("/api/workflows/{wf}"), "the build to end", |v| {
        v["current_version"]["status"] != "building"
    });
    assert_eq!(view["current_version"]["status"], "failed", "{view}");
    assert_eq!(
        view["current_version"]["build"]["retryable"], true,
        "the UI offers the retry: {view}"
    );
    let builder_calls = |roles: Vec<String>| roles.iter().filter(|r| *r == "builder").count();
    assert_eq!(builder_calls(ledger_roles(&server)), 1);

    // uv is back where the one-click install puts it; the retry builds
    // with the same script, without asking the builder again.
    let bin = data.join("tools").join("uv").join("bin");
    std::fs::create_dir_all(&bin).expect("tools dir");
    std::os::unix::fs::symlink(&uv, bin.join("uv")).expect("link uv");
    let (_, preflight) = server.call("GET", "/api/preflight", None);
    assert_eq!(uv_item(&preflight)["ok"], true, "{preflight}");
    let retry = format!("/api/workflows/{wf}/versions/{vid}/retry");
    let (status, retried) = server.call("POST", &retry, None);
    assert_eq!(status, 200, "{retried}");
    let mut view = Value::Null;
    for _ in 0..2400 {
        let (_, v) = server.call("GET", &format!("/api/workflows/{wf}"), None);
        if v["current_version"]["status"] != "building" {
            view = v;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(250));
    }
    let current = &view["current_version"];
    assert_eq!(current["status"], "pending_user_approval", "{view}");
    assert_eq!(current["test_report"]["status"], "passed", "{view}");
    assert_eq!(
        builder_calls(ledger_roles(&server)),
        1,
        "the retry did not ask the builder"
    );
    // Only a failed build is retried.
    let (status, again) = server.call("POST", &retry, None);
    assert_eq!(status, 409, "{again}");
}
