//! Break 10: flow steps that read local files. A flow's script step reads
//! a payroll file that was never uploaded and prints what it read (as JSON
//! values, as JSON keys and as plain text); the next step is an llm step
//! whose prompt interpolates that output, against the hostile back end. No
//! raw value of the payroll file may reach the back end.

use serde_json::{Value, json};

use super::checks::{assert_none_found, raw_needles};
use super::{Folders, backend_with, spec};

const PAYROLL: &str = "employee,email,salary,bank_account\n\
Philippa Drummond-Hayes,p.drummond@kestrelworks.co.uk,84250.00,GB29NWBK60161331926819\n\
Osvaldo Quintanilla,osvaldo.q@ferrolinea.es,61780.50,ES9121000418450200051332\n";

const READ: &str = r#"import csv, json
rows = list(csv.DictReader(open("private/payroll.csv", newline="")))
by_name = {r["employee"]: r["salary"] for r in rows}
open("read-done.txt", "w").write("%d rows" % len(rows))
print(json.dumps({"rows": rows, "by_name": by_name, "text": open("private/payroll.csv").read()}))
"#;

#[test]
fn a_flow_step_that_reads_a_local_file_sends_none_of_it_to_an_llm_step() {
    let dirs = Folders::new();
    let work = dirs.root.path().join("work");
    std::fs::create_dir_all(work.join("private")).expect("work");
    std::fs::write(work.join("private/payroll.csv"), PAYROLL).expect("payroll");
    std::fs::write(work.join("read.py"), READ).expect("script");
    let data = dirs.data();
    std::fs::create_dir_all(data.join("flows")).expect("flows");
    std::fs::create_dir_all(data.join("agents")).expect("agents");
    std::fs::write(
        data.join("agents/coding_agent.json"),
        r#"{"prompt": "You write clear, short summaries."}"#,
    )
    .expect("agent");
    let flow = json!({"steps": [
        {"type": "script", "id": "read", "label": "Read payroll", "path": "read.py"},
        {"type": "llm", "label": "Summarise", "agentType": "coding_agent", "identifier": "summary",
         "messages": [{"role": "user", "content": [
            "Summarise this payroll: {{steps.read}}\nBy name: {{steps.read.by_name}}\nText: {{steps.read.text}}\nLast: {{output}}"
         ]}]}
    ]});
    std::fs::write(data.join("flows/payroll.json"), flow.to_string()).expect("flow");
    let llm = backend_with(spec("print('unused')\n", &[], &[]));
    let mf = dirs.serve(&llm, &[]);

    let (s, started) = mf.call(
        "POST",
        "/api/flows/payroll/run",
        Some(json!({"working_folder": work.display().to_string()})),
    );
    assert_eq!(s, 202, "{started}");
    let mut runs = Value::Null;
    for _ in 0..600 {
        let (_, v) = mf.call("GET", "/api/flows/payroll/runs", None);
        let running = v["runs"][0]["status"]
            .as_str()
            .is_none_or(|s| s == "running");
        runs = v;
        if !running {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_ne!(
        runs["runs"][0]["status"], "running",
        "the flow run ended: {runs}"
    );
    assert_eq!(
        std::fs::read_to_string(work.join("read-done.txt"))
            .ok()
            .as_deref(),
        Some("2 rows"),
        "the script step read the file and wrote to its working folder: {runs}"
    );
    let bodies = llm.bodies();
    assert_none_found(
        "a value of a file the flow read but nobody uploaded",
        &bodies,
        &raw_needles(PAYROLL),
    );
}
