//! Break 5: processes that outlive the run. The builder's script writes
//! `outputs/out.csv` and `outputs/link.csv`, then leaves a double-forked
//! `setsid` grandchild that waits, swaps them for a symlink and a hard link
//! to the data folder's `maskflow.db`, and lingers (on a build's test run
//! and on a run of the approved workflow; it lets go of the run's pipes
//! first, so nothing waits for it). After each, no process carrying the
//! grandchild's marker may be alive, and neither the download nor the
//! preview of either may serve database bytes.

use std::time::Duration;

use super::{ASK, Folders, backend_with, spec};
use crate::common::spawned::http;

fn script(db: &str, marker: &str) -> String {
    format!(
        r#"import os, sys
later = '''
import os, sys, time
time.sleep(3)
log = open("swap.log", "a")
for name, swap in (("outputs/out.csv", os.symlink), ("outputs/link.csv", os.link)):
    try:
        os.remove(name)
        swap({db:?}, name)
        log.write("swapped %s in %s: %s\\n" % (name, os.getcwd(), os.path.isfile(name)))
    except OSError as e:
        log.write("%s: %s\\n" % (name, e))
log.close()
time.sleep(120)
'''
for name in ("outputs/out.csv", "outputs/link.csv"):
    with open(name, "w") as f:
        f.write("month,total\n2024-03,1.00\n")
pid = os.fork()
if pid == 0:
    os.setsid()
    if os.fork() == 0:
        # Let go of the run's pipes, so nothing waits for this process.
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.closerange(3, 4096)
        os.execv(sys.executable, [sys.executable, "-c", later, {marker:?}])
    os._exit(0)
os.waitpid(pid, 0)
print("done")
"#
    )
}

/// The processes whose command line carries `marker`.
fn alive_with(marker: &str) -> Vec<i32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if cmdline
            .split(|b| *b == 0)
            .any(|arg| arg == marker.as_bytes())
        {
            out.push(pid);
        }
    }
    out
}

/// After the grandchild's swap: the survivors (killed now, by their id:
/// they are this test's own), and each route that served database bytes.
fn after_the_swap(port: u16, marker: &str, routes: &[String]) -> Vec<String> {
    // Longer than the grandchild waits before its swap.
    std::thread::sleep(Duration::from_secs(5));
    let mut problems = Vec::new();
    let survivors = alive_with(marker);
    for pid in &survivors {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }
    if !survivors.is_empty() {
        problems.push(format!("processes of the run outlived it: {survivors:?}"));
    }
    for path in routes {
        let (status, body) = http(port, "GET", path, "text/plain", b"");
        if String::from_utf8_lossy(&body).contains("SQLite format 3") {
            problems.push(format!("{path} ({status}) served the database"));
        }
    }
    problems
}

/// The grandchildren's notes (`swap.log` in their run folders).
fn swap_logs(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = entry.path();
        if p.is_dir() && !p.is_symlink() {
            out.extend(swap_logs(&p));
        } else if p.file_name().is_some_and(|n| n == "swap.log") {
            out.push(std::fs::read_to_string(&p).unwrap_or_default());
        }
    }
    out
}

#[test]
fn no_process_of_a_run_outlives_it_and_no_database_is_served() {
    let dirs = Folders::new();
    let marker = format!("maskflow-hostile-grandchild-{}", std::process::id());
    let db = dirs.data().join("maskflow.db");
    let llm = backend_with(spec(
        &script(&db.display().to_string(), &marker),
        &[],
        &["out.csv", "link.csv"],
    ));
    let mf = dirs.serve(&llm, &[]);
    let (view, wf, vid) = mf.build_people(ASK);
    assert_eq!(
        view["current_version"]["status"], "pending_user_approval",
        "the build's test run succeeded: {view}"
    );
    let base = format!("/api/workflows/{wf}/versions/{vid}");
    let mut problems = after_the_swap(
        mf.port,
        &marker,
        &[
            format!("{base}/outputs/out.csv"),
            format!("{base}/previews/out.csv"),
            format!("{base}/outputs/link.csv"),
            format!("{base}/previews/link.csv"),
        ],
    );

    // The same on a run of the approved workflow.
    let (s, v) = mf.call("POST", &format!("{base}/approve"), None);
    assert_eq!(s, 200, "{v}");
    let id = mf.upload_csv("customers-q3.csv", super::PEOPLE);
    let (s, run) = mf.call(
        "POST",
        &format!("/api/workflows/{wf}/runs"),
        Some(serde_json::json!({"inputs": {"people": id}})),
    );
    assert_eq!(s, 201, "{run}");
    let run_id = run["id"].as_str().expect("run id");
    problems.extend(after_the_swap(
        mf.port,
        &marker,
        &[
            format!("/api/runs/{run_id}/outputs/out.csv"),
            format!("/api/runs/{run_id}/previews/out.csv"),
            format!("/api/runs/{run_id}/outputs/link.csv"),
            format!("/api/runs/{run_id}/previews/link.csv"),
        ],
    ));
    super::assert_no_customer_value(&llm);
    assert!(
        problems.is_empty(),
        "{problems:#?}\nwhat the grandchildren did: {:?}",
        swap_logs(&dirs.data())
    );
}
