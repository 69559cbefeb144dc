//! Break 9: names and paths in prompts. A timesheet pivot with one column
//! per employee (and one named by an e-mail address) and a workbook with a
//! sheet named after a customer are uploaded; the builder's script fails
//! printing its working folder (whole, its parent, split into parts), `HOME`,
//! `TMPDIR`, its arguments and its inputs' real paths,
//! then opening a missing file by absolute path. No request the back end
//! receives may carry an absolute path of the machine, nor those names and
//! that address raw, while ordinary headers still reach it.

use serde_json::json;

use super::checks::assert_none_found;
use super::{ASK, Folders, backend_with, builder_calls};

const HOURS: &str = "week,Emily Watson,Rajesh Venkataraman,james.hartley@example.com\n\
2024-W10,38,40,12\n2024-W11,36,41,15\n2024-W12,40,39,9\n";

const SCRIPT: &str = r#"import json, os, sys
fields = json.load(open(sys.argv[1]))["fields"]
sys.stderr.write("working in %s\n" % os.getcwd())
sys.stderr.write("home %s temp %s\n" % (os.environ.get("HOME"), os.environ.get("TMPDIR")))
sys.stderr.write("inputs %s\n" % json.dumps(fields))
sys.stderr.write("script %s\n" % os.path.abspath(__file__))
sys.stderr.write("parent %s\n" % os.path.dirname(os.getcwd()))
sys.stderr.write("real %s\n" % os.path.realpath(fields["hours"]))
sys.stderr.write("parts %r\n" % (os.getcwd().split(os.sep),))
sys.stderr.write("argv %r\n" % (sys.argv,))
open(os.path.join(os.getcwd(), "missing", "report.csv"))
"#;

/// A workbook whose second sheet is named after a customer.
fn accounts(path: &std::path::Path) {
    let mut book = rust_xlsxwriter::Workbook::new();
    let summary = book.add_worksheet();
    summary.set_name("Summary").expect("name");
    summary.write_string(0, 0, "invoice").expect("cell");
    summary.write_string(0, 1, "amount").expect("cell");
    summary.write_string(1, 0, "INV-1001").expect("cell");
    summary.write_number(1, 1, 120.5).expect("cell");
    let customer = book.add_worksheet();
    customer.set_name("Oliver Bennett").expect("name");
    customer.write_string(0, 0, "invoice").expect("cell");
    customer.write_string(0, 1, "amount").expect("cell");
    customer.write_string(1, 0, "INV-1002").expect("cell");
    customer.write_number(1, 1, 88.0).expect("cell");
    book.save(path).expect("save xlsx");
}

/// What gives the machine away: the test's folders, the working folder,
/// the usual roots of a user's files, and the temporary folder's random
/// name (a path in any spelling carries it).
fn machine_paths(dirs: &Folders) -> Vec<String> {
    let here = std::env::current_dir().expect("cwd");
    let mut paths: Vec<String> = [dirs.root.path(), &dirs.data(), &dirs.home(), &here]
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    paths.extend(["/root/", "/home/", "/tmp/"].map(str::to_owned));
    paths.extend(
        dirs.root
            .path()
            .file_name()
            .map(|n| n.to_string_lossy().into_owned()),
    );
    paths
}

#[test]
fn prompts_carry_no_machine_path_and_no_value_like_name() {
    let dirs = Folders::new();
    let spec = json!({
        "name": "Hours and accounts",
        "description": "Totals the hours per week",
        "script": SCRIPT,
        "fields": [
            {"name": "hours", "label": "Timesheet", "type": "file", "required": true, "accept": [".csv"]},
            {"name": "accounts", "label": "Accounts", "type": "file", "required": true, "accept": [".xlsx"]}
        ],
        "execution": {"runtime": "python3", "entrypoint": "script.py", "requirements": [],
                      "outputs": [{"name": "hours.csv", "description": "hours per week"}]}
    });
    let llm = backend_with(spec);
    let mf = dirs.serve(&llm, &[]);
    let book = dirs.outside().join("accounts.xlsx");
    accounts(&book);
    let ids = crate::common::spawned::upload(
        mf.port,
        &[
            ("hours.csv", "text/csv", HOURS.as_bytes()),
            (
                "accounts.xlsx",
                "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
                &std::fs::read(&book).expect("read xlsx"),
            ),
        ],
    );
    let (wf, _) = mf.build(&ids, ASK);
    let view = mf.wait_built(&wf);
    assert!(
        builder_calls(&llm) >= 2,
        "the failure went back to the builder: {view}"
    );
    let bodies = llm.bodies();

    assert_none_found(
        "an absolute path of the machine",
        &bodies,
        &machine_paths(&dirs),
    );

    let names = [
        "Emily Watson",
        "Rajesh Venkataraman",
        "Venkataraman",
        "james.hartley@example.com",
        "Oliver Bennett",
    ]
    .map(str::to_owned);
    assert_none_found("a value-like header or sheet name", &bodies, &names);
    for ordinary in ["week", "invoice", "amount"] {
        assert!(
            bodies.iter().any(|b| b.contains(ordinary)),
            "the ordinary header {ordinary:?} still reaches the builder"
        );
    }
}

/// A failure inside a package of the managed environment (which lives in
/// the data folder): its library frames must not carry the data folder.
const LIBRARY_FAILURE: &str = r#"import json, sys
import xlsxwriter
fields = json.load(open(sys.argv[1]))["fields"]
book = xlsxwriter.Workbook("outputs/report.xlsx")
book.add_worksheet("x" * 40)
book.close()
"#;

#[test]
fn a_library_frame_carries_no_machine_path() {
    let Some(uv) = super::requirements::skip_without_uv("a_library_frame_carries_no_machine_path")
    else {
        return;
    };
    let dirs = Folders::new();
    let llm = backend_with(super::spec(
        LIBRARY_FAILURE,
        &["xlsxwriter"],
        &["report.xlsx"],
    ));
    let cache = super::requirements::uv_cache();
    let mf = dirs.serve(
        &llm,
        &[
            ("MASKFLOW_UV", uv.as_os_str()),
            ("UV_CACHE_DIR", cache.as_os_str()),
        ],
    );
    let (view, _, _) = mf.build_people(ASK);
    let run = super::test_run(&view);
    assert!(
        run["stderr"]
            .as_str()
            .is_some_and(|e| e.contains("xlsxwriter")),
        "the script failed inside xlsxwriter: {view}"
    );
    assert!(
        builder_calls(&llm) >= 2,
        "the failure went back to the builder: {view}"
    );
    assert_none_found(
        "an absolute path of the machine",
        &llm.bodies(),
        &machine_paths(&dirs),
    );
}
