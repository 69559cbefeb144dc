//! Schedules end to end in the service (issue 30): a watched folder runs
//! each new or changed file once (not again on a rewrite of the same
//! bytes) and puts the results where chosen; a cron schedule fires under a
//! clock the test moves; a failing schedule backs off and says why. The
//! workflow is built and approved through the replayed conversation and
//! runs its script in the real sandboxed runner.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};
use tokio::sync::broadcast;

use crate::events::Event;
use crate::service::tests::create;
use crate::service::{ScheduleInput, Service, ServiceConfig};
use crate::versions::Status;
use maskflow_clock::{Clock, UlidGen};
use maskflow_llm::{ReplayProvider, Roles};

/// 2023-11-14T22:13:20Z: 100 s before a quarter hour in every time zone.
const T0: u64 = 1_700_000_000_000;

/// Counts the lines of its optional `data` file into `outputs/summary.txt`;
/// fails when the file says FAIL.
const SCRIPT: &str = "import json, os, sys\n\
fields = json.load(open(sys.argv[1]))['fields']\n\
path = fields.get('data')\n\
text = open(path).read() if path else ''\n\
if 'FAIL' in text:\n    sys.exit('the file asks to fail')\n\
os.makedirs('outputs', exist_ok=True)\n\
open('outputs/summary.txt', 'w').write('lines=%d' % len(text.splitlines()))\n";

/// A clock the test moves; each reading also moves it on by 1 ms, as the
/// build and the runner expect time to pass between readings.
#[derive(Debug)]
struct HandClock(AtomicU64);

impl HandClock {
    fn advance(&self, ms: u64) {
        self.0.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for HandClock {
    fn now_ms(&self) -> u64 {
        self.0.fetch_add(1, Ordering::SeqCst) + 1
    }
}

fn service(home: &Path) -> (Service, Arc<HandClock>) {
    let hand = Arc::new(HandClock(AtomicU64::new(T0)));
    let clock: Arc<dyn Clock> = hand.clone();
    let replay = Arc::new(
        ReplayProvider::from_value(&json!({
            "validator": [{"feasible": true}],
            "clarifier": [{"needs_clarification": false}],
            "builder": [{
                "name": "Line Counter",
                "description": "Counts the lines of a file",
                "script": SCRIPT,
                "fields": [{"name": "data", "label": "Data", "type": "file", "required": false}],
                "execution": {"runtime": "python3", "entrypoint": "script.py", "requirements": [],
                              "outputs": [{"name": "summary.txt", "description": "the count"}]}
            }]
        }))
        .expect("replay"),
    );
    let s = Service::open(ServiceConfig {
        ids: Arc::new(UlidGen::new(clock.clone())),
        clock,
        ..ServiceConfig::from_settings(home).overriding(Roles::all(replay))
    })
    .expect("open service");
    (s, hand)
}

async fn approved(s: &Service) -> String {
    let rx = s.subscribe();
    let created = create(s);
    built_and_approved(s, rx, created).await
}

/// Approved on an uploaded CSV with the columns `Region,Amount`, so the
/// files a schedule gives it are checked against that one.
async fn approved_on_a_file(s: &Service) -> String {
    let file = s
        .add_upload_bytes("sales.csv", b"Region,Amount\nEast,10\nWest,20\n")
        .await
        .expect("upload");
    let rx = s.subscribe();
    let created = s
        .create_workflow(crate::service::CreateWorkflow {
            file_ids: vec![file.file_id],
            ..Default::default()
        })
        .expect("create");
    built_and_approved(s, rx, created).await
}

/// Asks for the line count, waits for the build (`rx` subscribed before
/// the workflow was made) and approves it.
async fn built_and_approved(
    s: &Service,
    mut rx: broadcast::Receiver<Event>,
    created: crate::service::CreatedVersion,
) -> String {
    s.send_message(&created.workflow_id, "count the lines")
        .await
        .expect("message");
    assert_eq!(
        built(&mut rx, &created.version_id).await,
        Status::PendingUserApproval,
        "{:?}",
        s.get_workflow(&created.workflow_id)
            .map(|w| w.current_version.failure_reason)
    );
    s.approve(&created.workflow_id, &created.version_id)
        .expect("approve");
    created.workflow_id
}

async fn built(rx: &mut broadcast::Receiver<Event>, version_id: &str) -> Status {
    loop {
        if let Event::StatusChanged {
            version_id: v,
            status,
            ..
        } = rx.recv().await.expect("event")
            && v == version_id
            && matches!(status, Status::PendingUserApproval | Status::Failed)
        {
            return status;
        }
    }
}

fn input(value: Value) -> ScheduleInput {
    serde_json::from_value(value).expect("schedule input")
}

/// Writes `text` to `path` with the modification time `at` seconds after T0.
fn write(path: &Path, text: &str, at: u64) {
    std::fs::write(path, text).expect("write");
    let file = std::fs::File::options()
        .write(true)
        .open(path)
        .expect("open");
    let when = SystemTime::UNIX_EPOCH + Duration::from_millis(T0) + Duration::from_secs(at);
    file.set_modified(when).expect("mtime");
}

fn triggers(s: &Service, wf: &str) -> Vec<(String, Option<String>)> {
    let mut seen: Vec<_> = s
        .list_runs(wf)
        .expect("runs")
        .into_iter()
        .map(|r| r.trigger.expect("a trigger"))
        .map(|t| {
            let file = t.file.map(|f| {
                Path::new(&f)
                    .file_name()
                    .expect("name")
                    .to_string_lossy()
                    .into_owned()
            });
            (t.kind, file)
        })
        .collect();
    seen.sort();
    seen
}

#[tokio::test]
async fn a_watched_folder_runs_each_new_file_once_and_puts_the_results_where_chosen() {
    let home = tempfile::tempdir().expect("home");
    let inbox = tempfile::tempdir().expect("inbox");
    let out = tempfile::tempdir().expect("out");
    let (s, _hand) = service(home.path());
    let wf = approved(&s).await;
    write(&inbox.path().join("old.csv"), "x\n1\n", 1);
    let schedule = s
        .create_schedule(input(json!({
            "name": "inbox", "workflow": wf,
            "folder": inbox.path(), "output_folder": out.path()
        })))
        .expect("create");
    assert_eq!(schedule.target_kind, "workflow");

    // Three files dropped one after another: each runs once.
    for (i, name) in ["a.csv", "b.csv", "c.csv"].iter().enumerate() {
        write(
            &inbox.path().join(name),
            &"row\n".repeat(i + 1),
            10 + i as u64,
        );
        let runs = s.scan_watched_folder("inbox").await.expect("scan");
        assert_eq!(runs.len(), 1, "{name} ran once: {runs:?}");
    }
    // Rewritten with the same bytes (a new mtime): not again.
    write(&inbox.path().join("a.csv"), "row\n", 50);
    assert!(
        s.scan_watched_folder("inbox")
            .await
            .expect("scan")
            .is_empty()
    );
    // Nothing new: nothing runs.
    assert!(
        s.scan_watched_folder("inbox")
            .await
            .expect("scan")
            .is_empty()
    );
    for (stem, lines) in [("a", 1), ("b", 2), ("c", 3)] {
        let summary = std::fs::read_to_string(out.path().join(format!("{stem}.summary.txt")))
            .expect("the result in the chosen folder");
        assert_eq!(summary, format!("lines={lines}"));
    }
    assert!(
        !out.path().join("old.summary.txt").exists(),
        "a file present before is not run"
    );
    // Changed content runs again.
    write(&inbox.path().join("a.csv"), "row\nrow\nrow\nrow\n", 60);
    assert_eq!(s.scan_watched_folder("inbox").await.expect("scan").len(), 1);
    assert_eq!(
        std::fs::read_to_string(out.path().join("a.summary.txt")).expect("a"),
        "lines=4"
    );
    let f = |n: &str| ("folder".to_owned(), Some(n.to_owned()));
    assert_eq!(
        triggers(&s, &wf),
        vec![f("a.csv"), f("a.csv"), f("b.csv"), f("c.csv")],
        "every run is in the history with its trigger, once per file content"
    );
    let view = s.get_schedule("inbox").expect("view");
    assert_eq!(view.last_status.as_deref(), Some("succeeded"));
    assert_eq!(view.failures, 0);

    // Results next to the file do not run the workflow themselves.
    s.delete_schedule("inbox").expect("delete");
    let beside = tempfile::tempdir().expect("beside");
    s.create_schedule(input(
        json!({"name": "beside", "workflow": wf, "folder": beside.path()}),
    ))
    .expect("create");
    write(&beside.path().join("d.csv"), "a\nb\n", 70);
    assert_eq!(
        s.scan_watched_folder("beside").await.expect("scan").len(),
        1
    );
    assert_eq!(
        std::fs::read_to_string(beside.path().join("d.summary.txt")).expect("beside the file"),
        "lines=2"
    );
    assert!(
        s.scan_watched_folder("beside")
            .await
            .expect("scan")
            .is_empty()
    );
}

#[tokio::test]
async fn a_cron_schedule_fires_under_a_hand_clock_and_a_failing_one_backs_off() {
    let home = tempfile::tempdir().expect("home");
    let out = tempfile::tempdir().expect("out");
    let (s, hand) = service(home.path());
    let wf = approved(&s).await;
    let view = s
        .create_schedule(input(json!({
            "name": "quarterly", "workflow": wf, "cron": "*/15 * * * *",
            "output_folder": out.path()
        })))
        .expect("create");
    assert_eq!(
        view.next_run_at.as_deref(),
        Some("2023-11-14T22:15:00.000Z")
    );
    assert!(
        s.run_due_schedules().await.expect("tick").is_empty(),
        "not yet"
    );
    hand.advance(100_000);
    assert_eq!(s.run_due_schedules().await.expect("tick").len(), 1, "due");
    assert!(
        s.run_due_schedules().await.expect("tick").is_empty(),
        "once"
    );
    assert_eq!(
        std::fs::read_to_string(out.path().join("summary.txt")).expect("output"),
        "lines=0"
    );
    // Three hours later: one run, not one per time missed.
    hand.advance(3 * 3_600_000);
    assert_eq!(s.run_due_schedules().await.expect("tick").len(), 1);
    assert_eq!(
        triggers(&s, &wf),
        vec![("cron".into(), None), ("cron".into(), None)]
    );

    // Paused: nothing runs; resumed: from its next time on.
    s.pause_schedule("quarterly").expect("pause");
    hand.advance(900_000);
    assert!(s.run_due_schedules().await.expect("tick").is_empty());
    let resumed = s.resume_schedule("quarterly").expect("resume");
    assert!(resumed.next_run_at.is_some());
    assert!(s.run_due_schedules().await.expect("tick").is_empty());

    // The output folder is gone: the run fails, the schedule backs off
    // (60 s, then 120 s) and says why; back, it succeeds and forgets.
    std::fs::remove_dir_all(out.path()).expect("remove");
    hand.advance(900_000);
    assert_eq!(s.run_due_schedules().await.expect("tick").len(), 1);
    let failed = s.get_schedule("quarterly").expect("view");
    assert_eq!(failed.failures, 1);
    let why = failed.last_error.clone().expect("the reason");
    assert!(why.contains("summary.txt"), "{why}");
    hand.advance(59_000);
    assert!(
        s.run_due_schedules().await.expect("tick").is_empty(),
        "backing off"
    );
    hand.advance(1_000);
    assert_eq!(
        s.run_due_schedules().await.expect("tick").len(),
        1,
        "retried"
    );
    assert_eq!(s.get_schedule("quarterly").expect("view").failures, 2);
    std::fs::create_dir_all(out.path()).expect("mkdir");
    hand.advance(119_000);
    assert!(
        s.run_due_schedules().await.expect("tick").is_empty(),
        "120 s now"
    );
    hand.advance(1_000);
    assert_eq!(s.run_due_schedules().await.expect("tick").len(), 1);
    let ok = s.get_schedule("quarterly").expect("view");
    assert_eq!((ok.failures, ok.last_error), (0, None));
    assert_eq!(ok.last_status.as_deref(), Some("succeeded"));
}

#[tokio::test]
async fn a_failing_file_backs_the_folder_off_and_runs_again_after() {
    let home = tempfile::tempdir().expect("home");
    let inbox = tempfile::tempdir().expect("inbox");
    let (s, hand) = service(home.path());
    let wf = approved(&s).await;
    s.create_schedule(input(
        json!({"name": "inbox", "workflow": wf, "folder": inbox.path()}),
    ))
    .expect("create");
    write(&inbox.path().join("bad.csv"), "FAIL\n", 1);
    let failed = s.scan_watched_folder("inbox").await.expect("scan");
    assert_eq!(failed.len(), 1);
    // Issue 39: the failed run's scratch folder is gone, its report stays.
    let scratch = maskflow_runner::run_folder(&home.path().join("runs").join(&failed[0]));
    assert!(!scratch.exists(), "{} is kept", scratch.display());
    let view = s.get_schedule("inbox").expect("view");
    assert_eq!(view.failures, 1);
    assert!(
        view.last_error
            .as_deref()
            .is_some_and(|e| e.contains("bad.csv")),
        "{view:?}"
    );
    assert!(view.next_run_at.is_some(), "the retry is shown");
    // A new file waits for the back-off too.
    write(&inbox.path().join("good.csv"), "ok\n", 2);
    assert!(
        s.scan_watched_folder("inbox")
            .await
            .expect("scan")
            .is_empty()
    );
    // Fixed, and the back-off over: both run, once.
    write(&inbox.path().join("bad.csv"), "fixed\n", 3);
    hand.advance(60_000);
    assert_eq!(s.run_due_schedules().await.expect("tick").len(), 2);
    assert!(s.run_due_schedules().await.expect("tick").is_empty());
    assert_eq!(s.get_schedule("inbox").expect("view").failures, 0);
}

/// Issue 41, point 4: a watched file whose columns differ from the approved
/// file's is refused before any script runs; the outputs of the last good
/// run stay and are shown as stale, the refusal is told as an event, and a
/// file of the approved shape runs and clears it.
#[tokio::test]
async fn a_refused_file_runs_nothing_and_leaves_the_last_good_output_marked_stale() {
    let home = tempfile::tempdir().expect("home");
    let inbox = tempfile::tempdir().expect("inbox");
    let out = tempfile::tempdir().expect("out");
    let (s, hand) = service(home.path());
    let wf = approved_on_a_file(&s).await;
    s.create_schedule(input(json!({
        "name": "monthly", "workflow": wf,
        "folder": inbox.path(), "output_folder": out.path()
    })))
    .expect("create");
    write(
        &inbox.path().join("2026-01.csv"),
        "Region,Amount\nNorth,5\n",
        1,
    );
    assert_eq!(
        s.scan_watched_folder("monthly").await.expect("scan").len(),
        1
    );
    let good = out.path().join("2026-01.summary.txt");
    assert_eq!(std::fs::read_to_string(&good).expect("output"), "lines=2");
    let view = s.get_schedule("monthly").expect("view");
    assert!(!view.stale && view.last_success_at.is_some(), "{view:?}");

    // Next month's file renamed a column the script may read.
    let mut rx = s.subscribe();
    write(
        &inbox.path().join("2026-02.csv"),
        "Region,Total\nNorth,7\nSouth,8\n",
        2,
    );
    let runs_before = s.list_runs(&wf).expect("runs").len();
    assert!(
        s.scan_watched_folder("monthly")
            .await
            .expect("scan")
            .is_empty()
    );
    assert_eq!(
        s.list_runs(&wf).expect("runs").len(),
        runs_before,
        "no script ran"
    );
    assert!(!out.path().join("2026-02.summary.txt").exists());
    assert_eq!(std::fs::read_to_string(&good).expect("kept"), "lines=2");
    let view = s.get_schedule("monthly").expect("view");
    assert_eq!(view.last_status.as_deref(), Some("refused"));
    assert!(view.stale, "{view:?}");
    let error = view.last_error.clone().unwrap_or_default();
    assert!(
        error.contains("2026-02.csv") && error.contains("Amount") && error.contains("kept"),
        "{error}"
    );
    let told = loop {
        if let Event::ScheduleRan {
            status,
            stale,
            error,
            ..
        } = rx.recv().await.expect("event")
        {
            break (status, stale, error);
        }
    };
    assert_eq!((told.0.as_str(), told.1), ("refused", true));
    assert_eq!(told.2.as_deref(), Some(error.as_str()));

    // The same file again after the back-off: refused again, never run.
    hand.advance(60_000);
    assert!(s.run_due_schedules().await.expect("tick").is_empty());
    assert_eq!(s.get_schedule("monthly").expect("view").failures, 2);
    // Replaced by one of the approved shape: it runs, and nothing is stale.
    write(
        &inbox.path().join("2026-02.csv"),
        "Region,Amount\nNorth,7\nSouth,8\n",
        3,
    );
    hand.advance(120_000);
    assert_eq!(s.run_due_schedules().await.expect("tick").len(), 1);
    assert_eq!(
        std::fs::read_to_string(out.path().join("2026-02.summary.txt")).expect("output"),
        "lines=3"
    );
    let view = s.get_schedule("monthly").expect("view");
    assert!(!view.stale && view.failures == 0, "{view:?}");
}

#[tokio::test]
async fn schedules_are_refused_clearly() {
    let home = tempfile::tempdir().expect("home");
    let (s, _hand) = service(home.path());
    let wf = approved(&s).await;
    let err = |v: Value| {
        s.create_schedule(input(v))
            .expect_err("refused")
            .to_string()
    };
    assert!(err(json!({"name": "x", "workflow": wf, "cron": "every day"})).contains("5 fields"));
    assert!(err(json!({"name": "x", "workflow": wf})).contains("cron expression or a folder"));
    assert!(err(json!({"name": "x", "cron": "* * * * *"})).contains("workflow or a flow"));
    // A name as people write it is fine (issue 44); a control character is not.
    assert!(err(json!({"name": "x\ty", "workflow": wf, "cron": "* * * * *"})).contains("name"));
    assert!(err(json!({"name": "x", "workflow": wf, "folder": "relative"})).contains("absolute"));
    assert!(err(json!({"name": "x", "workflow": "nope", "cron": "* * * * *"})).contains("nope"));
    s.create_schedule(input(
        json!({"name": "x", "workflow": wf, "cron": "0 7 * * *"}),
    ))
    .expect("create");
    assert!(err(json!({"name": "x", "workflow": wf, "cron": "0 7 * * *"})).contains("exists"));
    assert_eq!(s.list_schedules().expect("list").len(), 1);
}

/// Issue 44, point 4 (regression: "weekly sales report" was refused for
/// its spaces): a name as people write it is kept as written and shown
/// with its safe file and unit name; two names with one safe name clash.
#[tokio::test]
async fn a_schedule_named_as_people_write_it_gets_a_safe_name_shown_beside_it() {
    let home = tempfile::tempdir().expect("home");
    let (s, _hand) = service(home.path());
    let wf = approved(&s).await;
    let view = s
        .create_schedule(input(
            json!({"name": "weekly sales report", "workflow": wf, "cron": "0 7 * * 1"}),
        ))
        .expect("a name with spaces");
    assert_eq!(view.name, "weekly sales report");
    assert_eq!(view.slug, "weekly-sales-report");
    let view = s
        .create_schedule(input(
            json!({"name": "Relevé März", "workflow": wf, "cron": "0 7 1 * *"}),
        ))
        .expect("a name with accents");
    assert_eq!(view.slug, "releve-marz");
    assert_eq!(
        s.get_schedule("Relevé März").expect("by its name").id,
        view.id
    );
    let clash = s
        .create_schedule(input(
            json!({"name": "Weekly Sales Report!", "workflow": wf, "cron": "0 8 * * 1"}),
        ))
        .expect_err("the same safe name")
        .to_string();
    assert!(
        clash.contains("weekly-sales-report") && clash.contains("choose another name"),
        "{clash}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_scheduler_thread_watches_the_folder_and_runs_a_new_file() {
    let home = tempfile::tempdir().expect("home");
    let inbox = tempfile::tempdir().expect("inbox");
    let (s, _hand) = service(home.path());
    let wf = approved(&s).await;
    s.create_schedule(input(
        json!({"name": "inbox", "workflow": wf, "folder": inbox.path()}),
    ))
    .expect("create");
    s.start_scheduler();
    write(&inbox.path().join("new.csv"), "a\nb\nc\n", 1);
    // The watcher (or its first look at the folder) runs it; the schedule
    // records the outcome last, after the trigger and the result: wait for
    // that, however long the machine takes (no deadline asserted).
    while s.get_schedule("inbox").expect("view").last_run_at.is_none() {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(
        triggers(&s, &wf),
        vec![("folder".into(), Some("new.csv".into()))]
    );
    assert_eq!(
        std::fs::read_to_string(inbox.path().join("new.summary.txt")).expect("beside the file"),
        "lines=3"
    );
}

/// Runs `args` as the account `nobody` when the test is root (two real
/// accounts), else as this account (what the other account can do in a
/// folder it may write to is the same: make entries).
#[cfg(unix)]
fn as_other_account(args: &[&str]) {
    use std::os::unix::fs::MetadataExt;
    // Root when a file this process makes belongs to root.
    let probe = tempfile::NamedTempFile::new().expect("probe");
    let root = probe.as_file().metadata().expect("probe").uid() == 0;
    let status = if root {
        std::process::Command::new("runuser")
            .args(["-u", "nobody", "--"])
            .args(args)
            .status()
    } else {
        std::process::Command::new(args[0])
            .args(&args[1..])
            .status()
    };
    assert!(
        status.as_ref().is_ok_and(|s| s.success()),
        "{args:?}: {status:?}"
    );
}

/// Issue 39, finding 3: in a folder another account can write to, that
/// account drops `report.summary.txt -> the victim's file` and then
/// `report.csv`, and `invoice.csv -> the victim's private file` (0600).
/// Maskflow, as the victim, neither writes through the first link nor
/// reads through the second: the link is skipped and reported, the output
/// replaces the link (the victim's file is untouched) with the input's
/// permissions at most.
#[cfg(unix)]
#[tokio::test]
async fn a_watched_folder_another_account_writes_to_follows_no_link() {
    use std::os::unix::fs::PermissionsExt;
    let home = tempfile::tempdir().expect("home");
    let victim = tempfile::tempdir().expect("victim's files");
    let shared = tempfile::tempdir().expect("shared");
    let inbox = shared.path().join("inbox");
    std::fs::create_dir(&inbox).expect("inbox");
    // Anyone may drop files; only their owner may remove them (like /tmp).
    std::fs::set_permissions(shared.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    std::fs::set_permissions(&inbox, std::fs::Permissions::from_mode(0o1777)).expect("chmod");
    let bashrc = victim.path().join(".bashrc");
    std::fs::write(&bashrc, "alias ll='ls -l'\n").expect("bashrc");
    let private = victim.path().join("private.csv");
    std::fs::write(&private, "name,salary\nPhilippa Drummond-Hayes,84250\n").expect("private");
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o600)).expect("chmod");

    let (s, _hand) = service(home.path());
    let wf = approved(&s).await;
    s.create_schedule(input(
        json!({"name": "shared", "workflow": wf, "folder": &inbox}),
    ))
    .expect("create");

    let at = |name: &str| inbox.join(name).display().to_string();
    as_other_account(&[
        "ln",
        "-s",
        &bashrc.display().to_string(),
        &at("report.summary.txt"),
    ]);
    as_other_account(&[
        "ln",
        "-s",
        &private.display().to_string(),
        &at("invoice.csv"),
    ]);
    as_other_account(&[
        "sh",
        "-c",
        &format!("umask 022; printf 'a\\nb\\nc\\n' > '{}'", at("report.csv")),
    ]);

    let runs = s.scan_watched_folder("shared").await.expect("scan");
    assert_eq!(runs.len(), 1, "report.csv ran, the link did not: {runs:?}");
    assert_eq!(
        std::fs::read_to_string(&bashrc).expect("bashrc"),
        "alias ll='ls -l'\n",
        "the victim's file was written through a link in the watched folder"
    );
    let out = inbox.join("report.summary.txt");
    let meta = std::fs::symlink_metadata(&out).expect("the output");
    assert!(meta.is_file(), "the output replaced the link: {meta:?}");
    assert_eq!(std::fs::read_to_string(&out).expect("output"), "lines=3");
    assert_eq!(meta.permissions().mode() & 0o777 & !0o644, 0, "{meta:?}");

    assert!(
        !inbox.join("invoice.summary.txt").exists(),
        "a linked input was run"
    );
    let view = s.get_schedule("shared").expect("view");
    let said = view.last_error.unwrap_or_default();
    assert!(
        said.contains("invoice.csv") && said.contains("symbolic link"),
        "the skipped link is reported: {said}"
    );
    assert_eq!(view.failures, 0, "a skipped link backs nothing off");
    // Reported once: a second scan finds nothing new.
    assert!(
        s.scan_watched_folder("shared")
            .await
            .expect("scan")
            .is_empty()
    );
    // A private file dropped by its owner keeps its privacy in the output.
    std::fs::write(inbox.join("mine.csv"), "x\n").expect("mine");
    std::fs::set_permissions(
        inbox.join("mine.csv"),
        std::fs::Permissions::from_mode(0o600),
    )
    .expect("chmod");
    assert_eq!(
        s.scan_watched_folder("shared").await.expect("scan").len(),
        1
    );
    let mode = std::fs::metadata(inbox.join("mine.summary.txt"))
        .expect("mine's output")
        .permissions()
        .mode();
    assert_eq!(
        mode & 0o077,
        0,
        "the output of a 0600 file is private: {mode:o}"
    );
}
