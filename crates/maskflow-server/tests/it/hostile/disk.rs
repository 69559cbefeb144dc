//! Break 6: disk. Only `outputs/` counted against the output limit, so a
//! script could fill its run folder's `tmp/` and `home/`. Maskflow has no
//! setting for the limit: the runner's default is 1 GiB for the run
//! (`Limits::output_bytes`), so the script here writes 1.25 GiB, in two
//! files each under that limit (a per-file limit alone must not be what
//! stops it). The workflow is built and approved on a small file, on which
//! the script writes nothing big; the run on a larger file must fail.

use serde_json::json;

use super::{ASK, Folders, backend_with, spec};

/// The runner's default disk limit for a run (1 GiB).
const DEFAULT_LIMIT: u64 = 1 << 30;

fn script() -> String {
    format!(
        r#"import csv, json, os, sys
fields = json.load(open(sys.argv[1]))["fields"]
rows = list(csv.DictReader(open(fields["people"], newline="")))
with open("outputs/count.csv", "w") as f:
    f.write("rows\n%d\n" % len(rows))
if len(rows) > 10:
    block = os.urandom(1 << 20) * 8
    each = {each}
    for folder in ("tmp", "home"):
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "fill.bin"), "wb") as out:
            written = 0
            while written < each:
                out.write(block)
                written += len(block)
print("ok")
"#,
        each = DEFAULT_LIMIT * 5 / 8
    )
}

#[test]
fn the_whole_run_folder_counts_against_the_disk_limit() {
    let dirs = Folders::new();
    let llm = backend_with(spec(&script(), &[], &["count.csv"]));
    let mf = dirs.serve(&llm, &[]);
    let (view, wf, vid) = mf.build_people(ASK);
    let version = &view["current_version"];
    assert_eq!(version["status"], "pending_user_approval", "{view}");
    let (s, v) = mf.call(
        "POST",
        &format!("/api/workflows/{wf}/versions/{vid}/approve"),
        None,
    );
    assert_eq!(s, 200, "{v}");

    super::assert_no_customer_value(&llm);
    // A file of more than ten rows: the script now fills its folder.
    let mut big = super::PEOPLE.to_owned();
    for line in super::PEOPLE.lines().skip(1) {
        big.push_str(line);
        big.push('\n');
    }
    let id = mf.upload_csv("customers-q3.csv", &big);
    let (s, run) = mf.call(
        "POST",
        &format!("/api/workflows/{wf}/runs"),
        Some(json!({"inputs": {"people": id}})),
    );
    assert!(s == 201 || s >= 400, "{s}: {run}");
    assert_ne!(
        run["status"], "succeeded",
        "a run that left 1.25 GiB in tmp/ and home/ succeeded: {run}"
    );
}
