//! Issue 31 point 4's "done when": `maskflow build` and `maskflow approve`
//! build and approve a workflow from a terminal. The command runs in a
//! tmux session against an OpenAI-compatible back end on loopback (the
//! recording server, configured with `--provider openai --base-url`); the
//! test reads the pane, approves the masked extracts and answers the
//! clarifier's question with `tmux send-keys`, asks for changes with
//! `maskflow reject`, then approves with `maskflow approve` and checks the approved version's input hashes, the
//! session folder's `state.json`, and that no value of the file reached
//! the back end.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};

use crate::common::spawned::BIN;
use crate::hostile::{Recorder, Reply};

const CSV: &str = "customer,city,amount\nZelda Quimby,Oslo,12.50\nXavier Yonder,Lyon,7.25\nZelda Quimby,Oslo,1.00\n";
/// `sha256sum` of [`CSV`].
const CSV_SHA256: &str = "c96dc81d697d4638ae08cf1cf3e62ccde4f0d1b737979c57fcc3fb10b01fadf9";
const QUESTION: &str = "Should the totals be rounded to cents?";
const ANSWER: &str = "yes, two decimals please";
const REVIEW_NOTES: &str = "Reads the sales through the contract and writes totals.csv only.";

const SCRIPT: &str = r#"import csv, json, sys
from collections import defaultdict
f = json.load(open(sys.argv[1]))["fields"]
totals = defaultdict(float)
for r in csv.DictReader(open(f["sales"])):
    totals[r["customer"]] += float(r["amount"])
with open("outputs/totals.csv", "w", newline="") as out:
    w = csv.writer(out)
    w.writerow(["customer", "total"])
    for name in sorted(totals):
        w.writerow([name, "%.2f" % totals[name]])
"#;

fn spec() -> Value {
    json!({
        "name": "Customer totals",
        "description": "Totals the amounts per customer",
        "script": SCRIPT,
        "fields": [{"name": "sales", "label": "Sales", "type": "file", "required": true, "accept": [".csv"]}],
        "execution": {"runtime": "python3", "entrypoint": "script.py", "requirements": [],
                      "outputs": [{"name": "totals.csv", "description": "totals per customer"}]}
    })
}

fn sse(text: &str) -> Reply {
    let body = format!(
        "data: {}\n\ndata: {}\n\ndata: [DONE]\n\n",
        json!({"choices":[{"index":0,"delta":{"content":text},"finish_reason":null}]}),
        json!({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":5}})
    );
    Reply {
        status: 200,
        content_type: "text/event-stream".into(),
        body: body.into_bytes(),
    }
}

/// The back end: feasible; one clarifying question, then enough; the spec.
fn backend() -> Recorder {
    let clarified = Arc::new(AtomicUsize::new(0));
    Recorder::start(move |req, _| {
        if req.method != "POST" || !req.path.ends_with("/chat/completions") {
            return Reply::not_found();
        }
        let body = req.text();
        let reply = if body.contains("You are Maskflow's validator") {
            json!({"feasible": true})
        } else if body.contains("You are Maskflow's clarifier") {
            if clarified.fetch_add(1, Ordering::SeqCst) == 0 {
                json!({"needs_clarification": true, "question": QUESTION})
            } else {
                json!({"needs_clarification": false})
            }
        } else if body.contains("You are Maskflow's builder") {
            spec()
        } else if body.contains("You are Maskflow's planner") {
            json!({"steps": ["Read the sales file", "Total the amount per customer"],
                   "inputs": ["sales.csv"], "outputs": ["totals.csv"]})
        } else if body.contains("You are Maskflow's reviewer") {
            json!({"verdict": "approve", "notes": REVIEW_NOTES})
        } else {
            json!({})
        };
        sse(&reply.to_string())
    })
}

/// A tmux server of this test's own (its own socket), killed when dropped.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn new(name: &str) -> Self {
        Self {
            socket: format!("maskflow-{name}-{}", std::process::id()),
        }
    }

    fn run(&self, args: &[&str]) -> Output {
        let out = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux (apt package tmux; scripts/setup.sh --test installs it)");
        assert!(
            out.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// The whole pane, wrapped lines joined.
    fn pane(&self) -> String {
        let out = self.run(&["capture-pane", "-p", "-J", "-S", "-", "-t", "cli"]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The pane once it shows `needle` (bounded: no timing is asserted).
    fn wait_for(&self, needle: &str) -> String {
        self.wait_for_any(&[needle])
    }

    /// The pane once it shows one of `needles`.
    fn wait_for_any(&self, needles: &[&str]) -> String {
        for _ in 0..2400 {
            let pane = self.pane();
            if needles.iter().any(|n| pane.contains(n)) {
                return pane;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("the pane never showed {needles:?}:\n{}", self.pane());
    }

    fn type_line(&self, text: &str) {
        self.run(&["send-keys", "-t", "cli", "-l", text]);
        self.run(&["send-keys", "-t", "cli", "Enter"]);
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .arg("kill-server")
            .output();
    }
}

fn quoted(p: &Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', "'\\''"))
}

/// The workflow id the command printed (`… workflow wf_… (version …)`).
fn workflow_id(pane: &str) -> String {
    pane.split_whitespace()
        .find(|w| w.starts_with("wf_"))
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric() && c != '_'))
        .unwrap_or_else(|| panic!("a workflow id in:\n{pane}"))
        .to_owned()
}

/// A terminal running `maskflow build sales.csv FLAGS --message …` against
/// the recording back end, in a fresh data folder (bind `_home`: `..`
/// would drop it, and the folders with it).
struct Session {
    _home: tempfile::TempDir,
    data: PathBuf,
    llm: Recorder,
    tmux: Tmux,
}

fn start_build(name: &str, flags: &str) -> Session {
    let home = tempfile::tempdir().expect("home");
    let data = home.path().join("data");
    let work = home.path().join("work");
    std::fs::create_dir_all(&work).expect("work");
    std::fs::write(work.join("sales.csv"), CSV).expect("csv");
    let llm = backend();
    let exe = std::fs::canonicalize(PathBuf::from(BIN)).expect("the maskflow binary");
    let command = format!(
        "cd {work} && env MASKFLOW_HOME={data} {exe} build sales.csv {flags} \
         --message 'total the amount per customer' \
         --provider openai --model x --base-url http://127.0.0.1:{port}/v1; \
         echo maskflow-exit=$?; sleep 3600",
        work = quoted(&work),
        data = quoted(&data),
        exe = quoted(&exe),
        port = llm.port
    );
    let tmux = Tmux::new(name);
    tmux.run(&[
        "new-session",
        "-d",
        "-s",
        "cli",
        "-x",
        "200",
        "-y",
        "50",
        "sh",
        "-c",
        &command,
    ]);
    Session {
        _home: home,
        data,
        llm,
        tmux,
    }
}

#[test]
fn maskflow_build_then_approve_on_a_terminal() {
    let Session {
        _home,
        data,
        llm,
        tmux,
    } = start_build("build", "");

    // The masked extract is shown, and nothing is sent before the yes.
    let pane = tmux.wait_for("Send these masked extracts");
    assert!(pane.contains("masked extract of"), "{pane}");
    assert!(pane.contains("Aaaaa Aaaaaa"), "the masked names: {pane}");
    assert!(
        !pane.contains("Zelda"),
        "a raw value in the extract: {pane}"
    );
    assert!(llm.bodies().is_empty(), "sent before the approval");
    tmux.type_line("y");

    // The clarifier's question, answered on the terminal (the preflight
    // never holds the conversation, issue 44).
    let pane = tmux.wait_for(QUESTION);
    assert!(pane.contains(QUESTION), "{pane}");
    tmux.type_line(ANSWER);

    let pane = tmux.wait_for("maskflow-exit=");
    assert!(pane.contains("maskflow-exit=0"), "{pane}");
    assert!(pane.contains("test on your files: passed"), "{pane}");
    assert!(pane.contains("maskflow approve wf_"), "{pane}");
    let wf = workflow_id(&pane);

    // Every request went to the loopback back end, none with a raw value.
    let bodies = llm.bodies();
    assert!(
        bodies.iter().any(|b| b.contains(ANSWER)),
        "the answer was sent"
    );
    for b in &bodies {
        for raw in ["Zelda", "Quimby", "Xavier", "Yonder", "Oslo", "Lyon"] {
            assert!(!b.contains(raw), "{raw} reached the back end: {b}");
        }
    }

    // The session folder's state.json follows the build.
    let service = maskflow_server::serve::open_service(&data, None).expect("open");
    let view = service.get_workflow(&wf).expect("workflow");
    let vid = view.current_version.id.clone();
    let state_path = data.join("sessions").join(&vid).join("state.json");
    let state: Value =
        serde_json::from_str(&std::fs::read_to_string(&state_path).expect("state.json"))
            .expect("state.json is JSON");
    assert_eq!(state["status"], "pending_user_approval", "{state}");
    assert_eq!(state["build"]["phase"], "complete", "{state}");
    assert_eq!(state["build"]["report"]["status"], "passed", "{state}");
    assert!(
        state["conversation"].to_string().contains(ANSWER),
        "{state}"
    );
    drop(service);

    // `maskflow reject` asks for changes: a new version, built again with
    // the feedback as the next message, on the same back end.
    let feedback = "sort the customers by their total";
    let rejected = Command::new(BIN)
        .args(["reject", &wf, "--feedback", feedback])
        .args(["--provider", "openai", "--model", "x", "--base-url"])
        .arg(format!("http://127.0.0.1:{}/v1", llm.port))
        .env("MASKFLOW_HOME", &data)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("maskflow reject");
    assert!(
        rejected.status.success(),
        "{}",
        String::from_utf8_lossy(&rejected.stderr)
    );
    let builder_calls = llm
        .bodies()
        .iter()
        .filter(|b| b.contains("You are Maskflow's builder"))
        .count();
    assert_eq!(builder_calls, 2, "built again");
    assert!(llm.bodies().last().is_some_and(|b| b.contains(feedback)));
    let service = maskflow_server::serve::open_service(&data, None).expect("open");
    let view = service.get_workflow(&wf).expect("workflow");
    assert_eq!(view.current_version.version, 2);
    assert_eq!(
        view.current_version.status,
        maskflow_core::Status::PendingUserApproval
    );
    let vid = view.current_version.id.clone();
    let state_path = data.join("sessions").join(&vid).join("state.json");
    drop(service);

    // `maskflow approve` by name: approved, with the file's SHA-256.
    let approved = Command::new(BIN)
        .args(["approve", "Customer totals"])
        .env("MASKFLOW_HOME", &data)
        .output()
        .expect("maskflow approve");
    let printed = String::from_utf8_lossy(&approved.stdout);
    assert!(
        approved.status.success(),
        "{printed}{}",
        String::from_utf8_lossy(&approved.stderr)
    );
    assert!(
        printed.contains(&format!("{CSV_SHA256}  sales.csv")),
        "{printed}"
    );
    let service = maskflow_server::serve::open_service(&data, None).expect("open");
    let view = service.get_workflow(&wf).expect("workflow");
    assert_eq!(view.active_version_id.as_deref(), Some(vid.as_str()));
    let version =
        serde_json::to_value(service.get_version(&wf, &vid).expect("version")).expect("json");
    assert_eq!(version["status"], "approved");
    assert_eq!(
        version["input_hashes"],
        json!([{"filename": "sales.csv", "sha256": CSV_SHA256}])
    );
    let state: Value =
        serde_json::from_str(&std::fs::read_to_string(&state_path).expect("state.json"))
            .expect("json");
    assert_eq!(state["status"], "approved", "{state}");

    // A second approve is refused, naming why.
    let again = Command::new(BIN)
        .args(["approve", &wf])
        .env("MASKFLOW_HOME", &data)
        .output()
        .expect("maskflow approve");
    assert!(!again.status.success());
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("no version waiting for approval"),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
}

/// `--plan --review`: the plan is shown on the terminal and approved there
/// before any code; the reviewer's verdict is printed with the outcome.
#[test]
fn maskflow_build_with_a_plan_and_a_review() {
    let Session {
        _home,
        data,
        llm,
        tmux,
    } = start_build("plan", "--yes --plan --review");
    let pane = tmux.wait_for(QUESTION);
    assert!(pane.contains(QUESTION), "{pane}");
    tmux.type_line(ANSWER);
    let pane = tmux.wait_for("Approve this plan?");
    assert!(pane.contains("2. Total the amount per customer"), "{pane}");
    let builder = |llm: &Recorder| {
        llm.bodies()
            .iter()
            .filter(|b| b.contains("You are Maskflow's builder"))
            .count()
    };
    assert_eq!(builder(&llm), 0, "no code before the plan is approved");
    tmux.type_line("y");
    let pane = tmux.wait_for("maskflow-exit=");
    assert!(pane.contains("maskflow-exit=0"), "{pane}");
    assert!(
        pane.contains(&format!(
            "the reviewer approved the script (iteration 1, advice): {REVIEW_NOTES}"
        )),
        "{pane}"
    );
    assert_eq!(builder(&llm), 1);
    let plan_sent = llm
        .bodies()
        .iter()
        .any(|b| b.contains("You are Maskflow's builder") && b.contains("which I approved"));
    assert!(plan_sent, "the builder got the approved plan");
    let wf = workflow_id(&pane);
    let service = maskflow_server::serve::open_service(&data, None).expect("open");
    let view = service.get_workflow(&wf).expect("workflow");
    let vid = view.current_version.id;
    for f in [
        "plan.md",
        "planning-prompt.md",
        "planning-response.md",
        "review-response.md",
    ] {
        assert!(
            data.join("sessions")
                .join(&vid)
                .join("iteration-1")
                .join(f)
                .is_file(),
            "{f}"
        );
    }
}

/// `--note` (#40 point 7): each note is shown where it sits before
/// anything is sent, and every role's prompt carries it in the user's
/// words; a note on a column the file does not have sends nothing.
#[test]
fn maskflow_build_sends_the_users_notes_on_the_data() {
    let Session {
        _home,
        data: _,
        llm,
        tmux,
    } = start_build(
        "notes",
        "--yes --note 'amount=in thousands of euros' --note 'Orders under one euro are tests'",
    );
    let pane = tmux.wait_for(QUESTION);
    assert!(
        pane.contains("your note on sales.csv, column \"amount\": in thousands of euros"),
        "{pane}"
    );
    assert!(
        pane.contains("your note on sales.csv: Orders under one euro are tests"),
        "{pane}"
    );
    tmux.type_line(ANSWER);
    let pane = tmux.wait_for("maskflow-exit=");
    assert!(pane.contains("maskflow-exit=0"), "{pane}");
    let bodies = llm.bodies();
    for role in ["validator", "clarifier", "builder"] {
        let told = bodies.iter().any(|b| {
            b.contains(&format!("You are Maskflow's {role}"))
                && b.contains(r#"- sales.csv, column \"amount\": in thousands of euros"#)
        });
        assert!(told, "the {role} was told the column's note: {bodies:?}");
    }
    assert!(
        bodies
            .iter()
            .any(|b| b.contains("- sales.csv: Orders under one euro are tests")),
        "{bodies:?}"
    );

    let home = tempfile::tempdir().expect("home");
    std::fs::write(home.path().join("sales.csv"), CSV).expect("csv");
    let refused = Command::new(BIN)
        .current_dir(home.path())
        .args(["build", "sales.csv", "--yes", "-m", "total per customer"])
        .args(["--note", "sales.csv:price=in euros", "--provider", "openai"])
        .args(["--model", "x", "--base-url"])
        .arg(format!("http://127.0.0.1:{}/v1", llm.port))
        .env("MASKFLOW_HOME", home.path().join("data"))
        .stdin(std::process::Stdio::null())
        .output()
        .expect("maskflow build");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "{stderr}");
    assert!(
        stderr.contains("sales.csv has no column \"price\""),
        "{stderr}"
    );
    assert_eq!(llm.bodies().len(), bodies.len(), "nothing more was sent");
}

/// Issue 44, point 5 on the command line: a weak model's two unusable
/// replies are told with the two ways on (try again, choose another
/// model), "Try again?" asks it again, and no ends the command as a
/// failure with nothing changed.
#[test]
fn maskflow_build_with_a_weak_model_offers_try_again_and_another_model() {
    let llm = Recorder::start(|req, _| {
        if req.method != "POST" || !req.path.ends_with("/chat/completions") {
            return Reply::not_found();
        }
        sse("I think that can be done!")
    });
    let home = tempfile::tempdir().expect("home");
    let data = home.path().join("data");
    let csv = home.path().join("sales.csv");
    std::fs::write(&csv, CSV).expect("csv");
    let mut child = Command::new(BIN)
        .arg("build")
        .arg(&csv)
        .args(["--yes", "--message", "total the amount per customer"])
        .args(["--provider", "openai", "--model", "tiny"])
        .arg("--base-url")
        .arg(format!("http://127.0.0.1:{}/v1", llm.port))
        .env("MASKFLOW_HOME", &data)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("maskflow build");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("stdin");
        // Yes to the first "Try again?", no to the second.
        stdin.write_all(b"y\nn\n").expect("answers");
    }
    let out = child.wait_with_output().expect("exit");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert_eq!(err.matches("Try again?").count(), 2, "{err}");
    assert!(
        err.contains("validator gave an unusable reply twice")
            && err.contains("choose another")
            && err.contains("--provider and --model"),
        "{err}"
    );
    // Two messages, each a first reply and its one repair.
    let validator = llm
        .bodies()
        .iter()
        .filter(|b| b.contains("You are Maskflow's validator"))
        .count();
    assert_eq!(validator, 4, "{err}");
}
