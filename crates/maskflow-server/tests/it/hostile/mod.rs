//! Issue 26's hostile back end: `maskflow serve` configured as a user
//! would (`--provider openai --base-url` on a loopback server), whose
//! builder answers with chosen attacks, while a [`recorder::Recorder`]
//! logs every request it gets. Each module is one break of the issue and
//! asserts on what the recorder received and on the machine, never on the
//! wording of a fix (only "names the requirement").
//!
//! Run as root and, through `scripts/test.sh`, as an unprivileged user
//! (`MASKFLOW_BIN` then names the copied `maskflow` binary).

pub mod checks;
mod recorder;

mod disk;
mod flow_scripts;
mod flows;
mod metadata;
mod processes;
mod prompts;
mod repair;
pub mod requirements;
#[cfg(target_os = "linux")]
mod schedules;
mod sockets;

use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

pub use recorder::{Recorder, Reply};

use crate::common::TOKEN;
use crate::common::spawned::{BIN, json_call};

/// The realistic customer file every test uploads: names, e-mails, dates,
/// amounts and a prose column.
pub const PEOPLE: &str = include_str!("data/people.csv");

/// What the user asks for (no value of the file in it).
pub const ASK: &str = "Total the amounts per month and list the customers who signed in spring.";

/// The `maskflow` binary: `MASKFLOW_BIN` when the suite runs from a copy
/// (as another user), else the one cargo built.
fn bin() -> PathBuf {
    std::env::var_os("MASKFLOW_BIN")
        .filter(|b| !b.is_empty())
        .map_or_else(|| PathBuf::from(BIN), PathBuf::from)
}

/// The builder's workflow: `script` with one `people` file field.
pub fn spec(script: &str, requirements: &[&str], outputs: &[&str]) -> Value {
    json!({
        "name": "Customer report",
        "description": "Summarises the customer file",
        "script": script,
        "fields": [{"name": "people", "label": "Customers", "type": "file", "required": true, "accept": [".csv"]}],
        "execution": {"runtime": "python3", "entrypoint": "script.py", "requirements": requirements,
                      "outputs": outputs.iter().map(|o| json!({"name": o, "description": o})).collect::<Vec<_>>()}
    })
}

/// One streamed chat-completions reply carrying `text`.
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

/// The hostile OpenAI-compatible back end: the validator says feasible, the
/// clarifier asks nothing, the builder answers `builder(request body)` (so a
/// test can choose by what the user asked), and anything else (a flow's llm
/// step) gets a short note.
pub fn backend(builder: impl Fn(&str) -> Value + Send + Sync + 'static) -> Recorder {
    Recorder::start(move |req, _| {
        if req.method != "POST" || !req.path.ends_with("/chat/completions") {
            return Reply::not_found();
        }
        let body = req.text();
        let reply = if body.contains("You are Maskflow's validator") {
            json!({"feasible": true}).to_string()
        } else if body.contains("You are Maskflow's clarifier") {
            json!({"needs_clarification": false}).to_string()
        } else if body.contains("You are Maskflow's builder") {
            builder(&body).to_string()
        } else {
            "Noted: the summary is ready.".to_owned()
        };
        sse(&reply)
    })
}

/// A back end whose builder always answers `spec`.
pub fn backend_with(spec: Value) -> Recorder {
    backend(move |_| spec.clone())
}

/// How many of the recorder's requests were the builder's.
pub fn builder_calls(llm: &Recorder) -> usize {
    llm.bodies()
        .iter()
        .filter(|b| b.contains("You are Maskflow's builder"))
        .count()
}

/// Whatever else a test attacks, no value of the customer file may have
/// reached the back end.
pub fn assert_no_customer_value(llm: &Recorder) {
    checks::assert_none_found(
        "a value of the customer file",
        &llm.bodies(),
        &checks::raw_needles(PEOPLE),
    );
}

/// A spawned `maskflow serve` on the hostile back end; killed when dropped.
pub struct Maskflow {
    child: Child,
    /// Its port.
    pub port: u16,
}

impl Maskflow {
    /// `maskflow serve --provider openai --base-url http://127.0.0.1:PORT/v1
    /// --model x` on `data`, with `HOME` set to `home` and extra environment.
    pub fn start(data: &Path, home: &Path, llm_port: u16, envs: &[(&str, &OsStr)]) -> Maskflow {
        std::fs::create_dir_all(data).expect("data folder");
        let mut command = Command::new(bin());
        command
            .args(["serve", "--port", "0", "--token", TOKEN])
            .args(["--provider", "openai", "--model", "x", "--base-url"])
            .arg(format!("http://127.0.0.1:{llm_port}/v1"))
            .env("MASKFLOW_HOME", data)
            .env("HOME", home)
            .env_remove("MASKFLOW_TEST_NO_LANDLOCK")
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        for (k, v) in envs {
            command.env(k, v);
        }
        let mut child = command.spawn().expect("start maskflow serve");
        let mut out = BufReader::new(child.stdout.take().expect("stdout"));
        let mut line = String::new();
        out.read_line(&mut line).expect("the URL line");
        // Keep reading so later prints never meet a closed pipe.
        std::thread::spawn(move || {
            let _ = std::io::copy(&mut out, &mut std::io::sink());
        });
        let port = line
            .trim()
            .trim_start_matches("http://127.0.0.1:")
            .split('/')
            .next()
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("a port in the URL: {line:?}"));
        Maskflow { child, port }
    }

    /// A JSON call.
    pub fn call(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        json_call(self.port, method, path, body)
    }

    /// Uploads one CSV; its file id.
    pub fn upload_csv(&self, name: &str, text: &str) -> String {
        crate::common::spawned::upload(self.port, &[(name, "text/csv", text.as_bytes())]).remove(0)
    }

    /// Creates a workflow on `file_ids`, approves its extracts and sends
    /// `message`, which starts the build; (workflow, version).
    pub fn build(&self, file_ids: &[String], message: &str) -> (String, String) {
        let (s, created) = self.call(
            "POST",
            "/api/workflows",
            Some(json!({"file_ids": file_ids})),
        );
        assert_eq!(s, 201, "{created}");
        let wf = created["workflow_id"]
            .as_str()
            .expect("workflow id")
            .to_owned();
        let vid = created["version_id"]
            .as_str()
            .expect("version id")
            .to_owned();
        let (_, reply) = self.call(
            "POST",
            &format!("/api/workflows/{wf}/messages"),
            Some(json!({"content": message})),
        );
        assert_eq!(reply["status"], "building", "{reply}");
        (wf, vid)
    }

    /// Polls the workflow until its build ended (bounded; no timing asserted).
    pub fn wait_built(&self, wf: &str) -> Value {
        let mut last = Value::Null;
        for _ in 0..1800 {
            let (_, v) = self.call("GET", &format!("/api/workflows/{wf}"), None);
            if v["current_version"]["status"] != "building" {
                return v;
            }
            last = v;
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
        panic!("the build did not end: {last}");
    }

    /// Builds on the customer file, asking `message`; the
    /// workflow view once the build ended, with (workflow, version).
    pub fn build_people(&self, message: &str) -> (Value, String, String) {
        let id = self.upload_csv("customers.csv", PEOPLE);
        let (wf, vid) = self.build(&[id], message);
        (self.wait_built(&wf), wf, vid)
    }
}

impl Drop for Maskflow {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A test's folders: a temporary root with `data/` (`MASKFLOW_HOME`),
/// `home/` (the server's `HOME`) and `outside/` (files outside every run
/// folder that the test watches).
pub struct Folders {
    /// Removed when dropped.
    pub root: tempfile::TempDir,
}

impl Folders {
    /// Makes the folders.
    pub fn new() -> Folders {
        let root = tempfile::tempdir().expect("temporary folder");
        for d in ["data", "home", "outside"] {
            std::fs::create_dir_all(root.path().join(d)).expect("mkdir");
        }
        Folders { root }
    }
    /// `data/`.
    pub fn data(&self) -> PathBuf {
        self.root.path().join("data")
    }
    /// `home/`.
    pub fn home(&self) -> PathBuf {
        self.root.path().join("home")
    }
    /// `outside/`.
    pub fn outside(&self) -> PathBuf {
        self.root.path().join("outside")
    }
    /// Starts `maskflow serve` on these folders and the back end `llm`.
    pub fn serve(&self, llm: &Recorder, envs: &[(&str, &OsStr)]) -> Maskflow {
        Maskflow::start(&self.data(), &self.home(), llm.port, envs)
    }
}

/// The status of the build's test run, from the workflow view.
pub fn test_run(view: &Value) -> &Value {
    &view["current_version"]["test_report"]["run"]
}
