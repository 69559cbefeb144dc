//! Issue 39, finding 2: a flow's `script` step names a file to run. Written
//! as `/…/secret.txt` (absolute), as `../outside/secret.txt` or as a link in
//! the working folder that leads out, the file was bound into the sandbox
//! as the script and Python's SyntaxError quoted its first line into the
//! run's error and transcript. Now the loader, `flows import` and the flow
//! editor refuse the first two naming the path (the rule postconditions
//! follow), a run refuses the link, and no word of the file comes back.

use serde_json::{Value, json};

use super::{Folders, Maskflow, backend_with, spec};

/// The first line of a file the flow must not read: a SyntaxError would
/// quote it.
const SECRET: &str = "Philippa Drummond-Hayes earns 84250 at GB29NWBK60161331926819\n";

fn flow(path: &str) -> Value {
    json!({"steps": [{"type": "script", "id": "run", "label": "Run", "path": path}]})
}

/// Starts `name` on `work` and waits until it is no longer running; every
/// answer it got, as text.
fn run_to_end(mf: &Maskflow, name: &str, work: &std::path::Path) -> String {
    let mut seen = String::new();
    let (s, started) = mf.call(
        "POST",
        &format!("/api/flows/{name}/run"),
        Some(json!({"working_folder": work.display().to_string()})),
    );
    seen.push_str(&format!("{s} {started}\n"));
    if s != 202 {
        return seen;
    }
    let mut runs = Value::Null;
    for _ in 0..600 {
        let (_, v) = mf.call("GET", &format!("/api/flows/{name}/runs"), None);
        let running = v["runs"][0]["status"]
            .as_str()
            .is_none_or(|s| s == "running");
        runs = v;
        if !running {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    seen.push_str(&format!("{runs}\n"));
    let run = &runs["runs"][0];
    if let Some(id) = run["conversationId"]
        .as_str()
        .or(run["conversation_id"].as_str())
    {
        let (_, detail) = mf.call("GET", &format!("/api/flow-runs/{id}"), None);
        seen.push_str(&format!("{detail}\n"));
    }
    seen
}

fn assert_no_secret(what: &str, text: &str) {
    for word in ["Drummond", "84250", "GB29NWBK"] {
        assert!(
            !text.contains(word),
            "{what}: a word of a file outside the working folder came back ({word}): {text}"
        );
    }
}

#[test]
fn a_script_step_runs_only_a_file_of_the_working_folder() {
    let dirs = Folders::new();
    let secret = dirs.outside().join("secret.txt");
    std::fs::write(&secret, SECRET).expect("secret");
    let work = dirs.root.path().join("work");
    std::fs::create_dir_all(&work).expect("work");
    std::os::unix::fs::symlink(&secret, work.join("link.py")).expect("link");
    let data = dirs.data();
    std::fs::create_dir_all(data.join("flows")).expect("flows");
    let absolute = secret.display().to_string();
    let relative = "../outside/secret.txt";
    std::fs::write(
        data.join("flows/absolute.json"),
        flow(&absolute).to_string(),
    )
    .expect("flow");
    std::fs::write(data.join("flows/relative.json"), flow(relative).to_string()).expect("flow");
    std::fs::write(data.join("flows/link.json"), flow("link.py").to_string()).expect("flow");
    let llm = backend_with(spec("print('unused')\n", &[], &[]));
    let mf = dirs.serve(&llm, &[]);

    // The loader: the flow is refused naming its path, and nothing runs.
    for (name, path) in [("absolute", absolute.as_str()), ("relative", relative)] {
        let (_, def) = mf.call("GET", &format!("/api/flows/{name}"), None);
        let said = run_to_end(&mf, name, &work);
        assert_no_secret(name, &said);
        assert!(
            def.to_string().contains(path) || said.contains(path),
            "{name}: the refusal names the path {path:?}: {def} {said}"
        );
        let started = said.starts_with("202");
        assert!(
            !started,
            "{name}: a flow whose script is {path:?} started: {said}"
        );
    }

    // `flows import` and the editor: refused with the path, nothing written.
    for path in [absolute.as_str(), relative] {
        let (s, err) = mf.call(
            "POST",
            "/api/flows/import",
            Some(json!({"name": "imported", "flow": flow(path)})),
        );
        assert_eq!(s, 400, "import of a script {path:?}: {err}");
        assert!(err.to_string().contains("working folder"), "{err}");
        let (s, err) = mf.call(
            "PUT",
            "/api/flows/edited",
            Some(json!({"text": flow(path).to_string()})),
        );
        assert_eq!(s, 400, "the editor saved a script {path:?}: {err}");
        assert!(err.to_string().contains("working folder"), "{err}");
    }
    for name in ["imported.json", "edited.json"] {
        assert!(
            !data.join("flows").join(name).exists(),
            "{name} was written"
        );
    }

    // A link in the working folder that leads out: the run refuses it.
    let said = run_to_end(&mf, "link", &work);
    assert_no_secret("link", &said);
    assert!(
        said.contains("not a file inside the run's working folder"),
        "the run says why: {said}"
    );
}
