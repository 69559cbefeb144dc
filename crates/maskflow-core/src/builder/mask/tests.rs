//! The repair feedback as a friend needs it: real Python runs of honest
//! scripts that fail the usual ways (a missing column, a string that is no
//! number, a missing module, a wrong relative path, a standard-library
//! error, pandas' `ParserError`) still say what to fix, with no absolute
//! path of the machine in them, nor in the prompts that carry them.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::*;

/// The input file every test run reads.
pub(super) const PEOPLE: &str = "name,email,amount
Zebulon Quagmire,zeb.quag@mail-7.org,1234.50
Ottoline Fairweather,otto@fair.example,99.10
";

/// The approved extract's column names.
pub(super) fn columns() -> Vec<String> {
    ["name", "email", "amount"].map(String::from).to_vec()
}

/// What every test script starts with (three lines).
pub(super) const PRELUDE: &str = "import csv, json, sys
f = json.load(open(sys.argv[1]))[\"fields\"]
rows = list(csv.DictReader(open(f[\"people\"])))
";

/// One real run of a script on [`PEOPLE`], as the runner lays it out.
pub(super) struct Run {
    /// Holds the run folder.
    pub dir: tempfile::TempDir,
    /// The run folder.
    pub work: PathBuf,
    /// What the script wrote to stderr.
    pub stderr: String,
    /// The run's paths.
    pub machine: Machine,
    /// The script and columns.
    pub grammar: Grammar,
}

impl Run {
    /// The repair feedback of this run.
    pub fn feedback(&self) -> String {
        repair_feedback(&self.stderr, &self.grammar, &self.machine)
    }
}

/// Runs `body` (after [`PRELUDE`]) with the machine's `python3`, in a fresh
/// run folder whose `inputs.json` names the input by its absolute path.
pub(super) fn run(body: &str) -> Run {
    let script = format!("{PRELUDE}{body}");
    let dir = tempfile::tempdir().expect("tmp");
    let work = dir.path().join("test-runs").join("iteration-1");
    let inputs = work.join("inputs").join("people");
    std::fs::create_dir_all(&inputs).expect("inputs");
    std::fs::create_dir_all(work.join("outputs")).expect("outputs");
    let people = inputs.join("people.csv");
    std::fs::write(&people, PEOPLE).expect("csv");
    let doc = serde_json::json!({"fields": {"people": people.display().to_string()}});
    std::fs::write(work.join("inputs.json"), doc.to_string()).expect("inputs.json");
    std::fs::write(work.join("script.py"), &script).expect("script");
    let python = maskflow_runner::find_python(None).expect("python3 on PATH");
    let out = Command::new(&python.executable)
        .args(["script.py", "inputs.json"])
        .current_dir(&work)
        .output()
        .expect("python runs");
    assert!(!out.status.success(), "the script was meant to fail");
    Run {
        machine: Machine::new(&work, &python.runtime),
        grammar: Grammar::new(&script, &columns()),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        work,
        dir,
    }
}

/// Fails when `text` holds an absolute path of the machine.
pub(super) fn assert_no_machine_path(text: &str, run: &Run) {
    let home = std::env::var("HOME").unwrap_or_default();
    let mut paths = vec![
        run.dir.path().display().to_string(),
        run.work.display().to_string(),
    ];
    if home.len() > 1 {
        paths.push(home);
    }
    if let Ok(python) = maskflow_runner::find_python(None) {
        paths.extend(python.runtime.iter().map(|p| p.display().to_string()));
    }
    for p in paths {
        assert!(!text.contains(&p), "the path {p} is in: {text}");
    }
    for marker in ["/tmp/", "/root", "/home/", "/usr/", "/opt/"] {
        assert!(!text.contains(marker), "{marker} is in: {text}");
    }
}

#[test]
fn a_missing_column_names_the_key_and_the_script_line() {
    let run = run("total = sum(float(r[\"amount_total\"]) for r in rows)\n");
    let out = run.feedback();
    assert!(
        out.starts_with("Traceback (most recent call last):"),
        "{out}"
    );
    assert!(
        out.contains("  File \"script.py\", line 4, in <module>\n    total = sum(float(r[\"amount_total\"]) for r in rows)"),
        "{out}"
    );
    assert!(out.ends_with("KeyError: 'amount_total'"), "{out}");
    assert_no_machine_path(&out, &run);
}

#[test]
fn a_known_column_in_a_key_error_stays_as_it_is() {
    let run = run("del rows[0][\"amount\"]\nprint(rows[0][\"amount\"])\n");
    assert!(
        run.feedback().ends_with("KeyError: 'amount'"),
        "{}",
        run.feedback()
    );
}

#[test]
fn a_string_that_is_no_number_shows_its_shape() {
    let run = run(
        "def parse(r):\n    return float(r[\"name\"])\n\ntotal = sum(parse(r) for r in rows)\n",
    );
    let out = run.feedback();
    assert!(
        out.contains("  File \"script.py\", line 5, in parse\n    return float(r[\"name\"])"),
        "{out}"
    );
    assert!(
        out.ends_with("ValueError: could not convert string to float: 'Aaaaaaa Aaaaaaaa'"),
        "{out}"
    );
    assert!(!out.contains("Zebulon"), "{out}");
}

#[test]
fn a_missing_module_is_named() {
    let run = run("import openpyxl\n");
    let out = run.feedback();
    assert!(
        out.contains("line 4, in <module>\n    import openpyxl"),
        "{out}"
    );
    assert!(
        out.ends_with("ModuleNotFoundError: No module named 'openpyxl'"),
        "{out}"
    );
}

#[test]
fn a_wrong_relative_path_is_named_and_an_input_path_is_relative() {
    let run = run("open(\"data/people.csv\")\n");
    let out = run.feedback();
    assert!(
        out.ends_with("FileNotFoundError: [Errno 2] No such file or directory: 'data/people.csv'"),
        "{out}"
    );
    let run = self::run("open(f[\"people\"] + \".bak\")\n");
    let out = run.feedback();
    assert!(
        out.ends_with("FileNotFoundError: [Errno 2] No such file or directory: './inputs/aaaaaa/aaaaaa.csv.aaa'"),
        "{out}"
    );
    assert_no_machine_path(&out, &run);
}

#[test]
fn a_standard_library_frame_is_kept_relative_with_its_line_from_disk() {
    let run = run("json.loads(rows[0][\"name\"])\n");
    let out = run.feedback();
    assert!(
        out.contains(
            "  File \"script.py\", line 4, in <module>\n    json.loads(rows[0][\"name\"])"
        ),
        "{out}"
    );
    let decoder = format!(
        "  File \"python3.{}/json/decoder.py\", line ",
        maskflow_runner::find_python(None)
            .expect("python")
            .version
            .1
    );
    assert!(out.contains(&decoder), "{out}");
    assert!(
        out.contains(", in raw_decode\n    raise JSONDecodeError("),
        "{out}"
    );
    assert!(
        out.ends_with("json.decoder.JSONDecodeError: Expecting value: line # column # (char #)"),
        "{out}"
    );
    assert_no_machine_path(&out, &run);
}

#[test]
fn a_syntax_error_quotes_the_line_from_the_script() {
    let run = run("total = = 3\n");
    let out = run.feedback();
    assert!(
        out.contains("  File \"script.py\", line 4\n    total = = 3"),
        "{out}"
    );
    assert!(out.ends_with("SyntaxError: invalid syntax"), "{out}");
}

/// A package folder laid out as an environment's (`lib/python3.X/site-packages`).
fn fake_site_packages(root: &Path) -> PathBuf {
    let site = root.join("env/lib/python3.12/site-packages");
    let parsers = site.join("pandas/io/parsers");
    std::fs::create_dir_all(&parsers).expect("dirs");
    std::fs::create_dir_all(site.join("pandas/errors")).expect("dirs");
    std::fs::write(
        site.join("pandas/errors/__init__.py"),
        "\"\"\"Errors.\"\"\"\n\n\nclass ParserError(ValueError):\n    pass\n",
    )
    .expect("errors");
    std::fs::write(
        parsers.join("c_parser_wrapper.py"),
        "class CParserWrapper:\n    def read(self, nrows=None):\n        if self.low_memory:\n            chunks = self._reader.read_low_memory(nrows)\n",
    )
    .expect("wrapper");
    site
}

#[test]
fn a_pandas_parser_error_keeps_its_class_frame_and_wording() {
    let dir = tempfile::tempdir().expect("tmp");
    let site = fake_site_packages(dir.path());
    let work = dir.path().join("run");
    std::fs::create_dir_all(&work).expect("run");
    let script = "import pandas as pd\ndf = pd.read_csv(\"inputs/people.csv\")\n";
    let stderr = format!(
        "Traceback (most recent call last):
  File \"{w}/script.py\", line 2, in <module>
    df = pd.read_csv(\"inputs/people.csv\")
         ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File \"{s}/pandas/io/parsers/c_parser_wrapper.py\", line 4, in read
    chunks = self._reader.read_low_memory(nrows)
  File \"parsers.pyx\", line 838, in pandas._libs.parsers.TextReader.read_low_memory
pandas.errors.ParserError: Error tokenizing data. C error: Expected 3 fields in line 7, saw 4",
        w = work.display(),
        s = site.display()
    );
    let out = repair_feedback(
        &stderr,
        &Grammar::new(script, &columns()),
        &Machine::new(&work, std::slice::from_ref(&site)),
    );
    assert_eq!(
        out,
        "Traceback (most recent call last):
  File \"script.py\", line 2, in <module>
    df = pd.read_csv(\"inputs/people.csv\")
  File \"site-packages/pandas/io/parsers/c_parser_wrapper.py\", line 4, in read
    chunks = self._reader.read_low_memory(nrows)
  [frames outside script.py and the installed packages, not shown]
pandas.errors.ParserError: Error tokenizing data. C error: Expected # fields in line #, saw #"
    );
}

#[test]
fn an_exception_class_the_script_defines_is_named() {
    let run = run(
        "class MissingTotal(Exception):\n    pass\n\nraise MissingTotal(\"no total for \" + rows[0][\"name\"])\n",
    );
    let out = run.feedback();
    assert!(
        out.ends_with("MissingTotal: aa aaaaa aaa Aaaaaaa Aaaaaaaa"),
        "{out}"
    );
}

#[test]
fn output_without_a_traceback_shows_its_last_lines_masked() {
    let run = run("print(\"no rows for\", rows[0][\"name\"], file=sys.stderr)\nsys.exit(2)\n");
    assert_eq!(run.feedback(), "aa aaaa aaa Aaaaaaa Aaaaaaaa");
}

#[test]
fn the_runner_sentence_loses_its_absolute_paths() {
    let run = run("sys.exit(3)\n");
    let sentence = format!(
        "the script needs Python packages that are not installed: openpyxl (install them with `{}/bin/python3 -m pip install openpyxl`) in {}/script.py",
        "/home/ada/.local/share/maskflow/python/ab12",
        run.work.display()
    );
    let out = without_paths(&sentence, &run.machine);
    assert_eq!(
        without_paths(
            "could not open C:\\Users\\ada\\x.py or '/home/ada/y'",
            &run.machine
        ),
        "could not open <path> or '<path>'"
    );
    assert_eq!(
        out,
        "the script needs Python packages that are not installed: openpyxl (install them with `<path> -m pip install openpyxl`) in ./script.py"
    );
}

#[test]
fn no_prompt_of_a_build_holds_an_absolute_path_of_the_machine() {
    use crate::builder::profile::{Profile, ProfileContext, TestOutcome};
    use crate::builder::script_builder::ScriptBuilder;
    let run = run("open(f[\"people\"] + \".bak\")\n");
    let extracts = serde_json::json!([{"filename": "people.csv", "columns": columns(),
        "sample_rows": [["Aaaaaaa Aaaaaaaa", "aaa.aaaa@aaaa-#.aaa", "####.##"]], "row_count": 2}]);
    let mut ctx = ProfileContext {
        extracts,
        history: vec![maskflow_llm::ChatMessage::new(
            maskflow_llm::ChatRole::User,
            "Sum the amounts",
        )],
        previous: None,
        feedback: None,
        iteration: 1,
        house_rules: Default::default(),
        current: None,
        sizes: None,
        out_of_memory: false,
        compact: None,
    };
    let generation = ScriptBuilder.generation_prompt(&ctx);
    let review = ScriptBuilder.process_review(
        &ctx,
        &TestOutcome {
            passed: false,
            summary: without_paths(
                &format!(
                    "the script failed with exit status 1 in {}",
                    run.work.display()
                ),
                &run.machine,
            ),
            masked_error: run.feedback(),
            output_names: vec![],
            inputs: Default::default(),
            output_shape: None,
        },
    );
    ctx.feedback = review.metadata["feedback"].as_str().map(str::to_owned);
    ctx.iteration = 2;
    let revision = ScriptBuilder.revision_prompt(&ctx);
    assert!(
        revision
            .messages
            .iter()
            .any(|m| m.content.contains("./inputs/aaaaaa")),
        "the feedback reached the revision prompt"
    );
    for request in [generation, revision] {
        for m in &request.messages {
            assert_no_machine_path(&m.content, &run);
        }
    }
}

#[test]
fn the_feedback_is_capped_keeping_its_end() {
    let frames: String = (0..400)
        .map(|_| "  File \"script.py\", line 4, in <module>\n    x\n")
        .collect();
    let long = format!("{HEADER}\n{frames}ValueError: end");
    let grammar = Grammar::new(&format!("{PRELUDE}{}\n", "x = 1 # ".repeat(60)), &columns());
    let out = repair_feedback(&long, &grammar, &Machine::default());
    assert!(out.chars().count() <= MAX_FEEDBACK_CHARS + 40, "{out}");
    assert_eq!(
        out.matches("File \"script.py\"").count(),
        MAX_FRAMES,
        "{out}"
    );
    assert!(out.ends_with("ValueError: aaa"), "{out}");
}
