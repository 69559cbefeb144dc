//! Issue 18 through the HTTP router: restoring an earlier version (tested on
//! the real files, then approved), two-step safe deletes of workflows, flow
//! runs and backups, and the database backups a user can list and restore.

mod support {
    use std::path::Path;
    use std::sync::Arc;

    use axum::Router;
    use axum::http::StatusCode;
    use maskflow_core::{Event, Service, ServiceConfig, Status};
    use maskflow_llm::Roles;
    use serde_json::{Value, json};

    pub use crate::common::{call, send};

    pub fn open(home: &Path, doc: Value) -> (Router, Service) {
        let roles = Roles::all(Arc::new(
            maskflow_llm::ReplayProvider::from_value(&doc).expect("replay doc"),
        ));
        let service = Service::open(ServiceConfig::from_settings(home).overriding(roles))
            .expect("open service");
        (crate::common::app(service.clone()), service)
    }

    /// Uploads one CSV; returns its file id.
    pub async fn upload(app: &Router, name: &str, content: &str) -> String {
        let (s, r) = send(app, crate::common::upload(&[(name, content.as_bytes())])).await;
        assert_eq!(s, StatusCode::OK, "{r}");
        r[0]["file_id"].as_str().expect("file id").to_owned()
    }

    /// A builder reply whose script writes `text` to `outputs/result.txt`.
    pub fn spec(name: &str, text: &str) -> Value {
        json!({
            "name": name,
            "description": "Counts the rows",
            "script": format!("import json, sys\nfields = json.load(open(sys.argv[1]))['fields']\nopen('outputs/result.txt', 'w').write({text:?})\n"),
            "fields": [{"name": "rows", "label": "Rows", "type": "file", "required": true, "accept": [".csv"]}],
            "execution": {"runtime": "python3", "entrypoint": "script.py", "requirements": [],
                          "outputs": [{"name": "result.txt", "description": "the result"}]}
        })
    }

    /// Follows the event stream until the version's build ends.
    pub async fn build_done(
        rx: &mut tokio::sync::broadcast::Receiver<Event>,
        version_id: &str,
    ) -> Status {
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

    /// A workflow over one uploaded CSV with two approved versions (scripts
    /// writing "first" and "second"); returns (workflow, v1, v2).
    pub async fn two_approved_versions(
        app: &Router,
        service: &Service,
    ) -> (String, String, String) {
        // Scripts run where isolation is missing too (this test is about history).
        let (s, r) = call(
            app,
            "PUT",
            "/api/settings/isolation",
            Some(json!({"allow_unisolated": true})),
        )
        .await;
        assert_eq!(s, StatusCode::OK, "{r}");
        let mut events = service.subscribe();
        let file = upload(app, "rows.csv", "name,amount\nAda,12\nGrace,30\n").await;
        let (s, c) = call(
            app,
            "POST",
            "/api/workflows",
            Some(json!({"file_ids": [file]})),
        )
        .await;
        assert_eq!(s, StatusCode::CREATED, "{c}");
        let wf = c["workflow_id"].as_str().expect("wf").to_owned();
        let msg = format!("/api/workflows/{wf}/messages");
        let mut ids = Vec::new();
        for text in ["count the rows", "write it differently"] {
            let (s, r) = call(app, "POST", &msg, Some(json!({"content": text}))).await;
            assert_eq!(
                (s, r["status"].as_str()),
                (StatusCode::OK, Some("building"))
            );
            let (_, w) = call(app, "GET", &format!("/api/workflows/{wf}"), None).await;
            let v = w["current_version"]["id"].as_str().expect("v").to_owned();
            assert_eq!(
                build_done(&mut events, &v).await,
                Status::PendingUserApproval
            );
            let (s, w) = call(
                app,
                "POST",
                &format!("/api/workflows/{wf}/versions/{v}/approve"),
                None,
            )
            .await;
            assert_eq!(s, StatusCode::OK, "{w}");
            ids.push(v);
        }
        (wf, ids[0].clone(), ids[1].clone())
    }

    /// The replay answers for [`two_approved_versions`].
    pub fn two_builds() -> Value {
        json!({
            "validator": [{"feasible": true}],
            "clarifier": [{"needs_clarification": false}, {"needs_clarification": false}],
            "builder": [spec("Row counter", "first"), spec("Row counter 2", "second")]
        })
    }
}

mod restore {
    use super::support::*;
    use axum::http::StatusCode;
    use maskflow_core::Status;
    use serde_json::Value;

    #[tokio::test]
    async fn an_earlier_version_is_restored_tested_on_the_real_files_and_approved() {
        let home = tempfile::tempdir().expect("tmp");
        let (app, service) = open(home.path(), two_builds());
        let (wf, v1, v2) = two_approved_versions(&app, &service).await;
        let (_, old) = call(
            &app,
            "GET",
            &format!("/api/workflows/{wf}/versions/{v1}"),
            None,
        )
        .await;
        assert_eq!(old["status"], "archived");

        let mut events = service.subscribe();
        let (s, r) = call(
            &app,
            "POST",
            &format!("/api/workflows/{wf}/versions/{v1}/restore"),
            None,
        )
        .await;
        assert_eq!(s, StatusCode::CREATED, "{r}");
        assert_eq!(r["status"], "building");
        let v3 = r["version_id"].as_str().expect("v3").to_owned();
        // The old version stays in use until the restored one is approved.
        let (_, w) = call(&app, "GET", &format!("/api/workflows/{wf}"), None).await;
        assert_eq!(w["active_version_id"], v2.as_str());
        assert_eq!(
            build_done(&mut events, &v3).await,
            Status::PendingUserApproval
        );

        let (_, new) = call(
            &app,
            "GET",
            &format!("/api/workflows/{wf}/versions/{v3}"),
            None,
        )
        .await;
        assert_eq!(new["version"], 3);
        assert_eq!(new["script"], old["script"], "the restored script is v1's");
        assert_eq!(new["fields"], old["fields"]);
        assert_eq!(new["execution"], old["execution"]);
        assert_eq!(new["file_ids"], old["file_ids"]);
        let report = &new["test_report"];
        assert_eq!(report["status"], "passed", "{report}");
        assert!(
            report["message"]
                .as_str()
                .unwrap_or("")
                .contains("real input files"),
            "{report}"
        );
        let outputs: Vec<&str> = report["run"]["outputs"]
            .as_array()
            .expect("outputs")
            .iter()
            .filter_map(|o| o["name"].as_str())
            .collect();
        assert_eq!(outputs, ["result.txt"]);
        let script = std::fs::read_to_string(
            home.path()
                .join("sessions")
                .join(&v3)
                .join("iteration-1/code/script.py"),
        )
        .expect("the session folder holds the script under test");
        assert_eq!(Some(script.as_str()), old["script"].as_str());

        // The history says where each version came from.
        let (_, w) = call(&app, "GET", &format!("/api/workflows/{wf}"), None).await;
        let origins: Vec<(Value, Value)> = w["versions"]
            .as_array()
            .expect("versions")
            .iter()
            .map(|v| (v["origin"].clone(), v["origin_version"].clone()))
            .collect();
        assert_eq!(
            origins,
            [
                ("created".into(), Value::Null),
                ("edited".into(), 1.into()),
                ("restored".into(), 1.into())
            ]
        );
        let last = w["messages"].as_array().expect("messages").last().cloned();
        assert!(
            last.and_then(|m| m["content"].as_str().map(str::to_owned))
                .is_some_and(|c| c.starts_with("Built") || c.contains("Restored version 1")),
        );

        // Normal approval: v3 becomes active, v2 is archived.
        let (s, w) = call(
            &app,
            "POST",
            &format!("/api/workflows/{wf}/versions/{v3}/approve"),
            None,
        )
        .await;
        assert_eq!(s, StatusCode::OK, "{w}");
        assert_eq!(w["active_version_id"], v3.as_str());
        let statuses: Vec<&str> = w["versions"]
            .as_array()
            .expect("versions")
            .iter()
            .filter_map(|v| v["status"].as_str())
            .collect();
        assert_eq!(statuses, ["archived", "archived", "approved"]);
    }

    #[tokio::test]
    async fn only_an_archived_built_version_can_be_restored() {
        let home = tempfile::tempdir().expect("tmp");
        let (app, service) = open(home.path(), two_builds());
        let (wf, _v1, v2) = two_approved_versions(&app, &service).await;
        // The active version is in use already: the table refuses it.
        let (s, e) = call(
            &app,
            "POST",
            &format!("/api/workflows/{wf}/versions/{v2}/restore"),
            None,
        )
        .await;
        assert_eq!(
            (s, e["error"].as_str()),
            (StatusCode::CONFLICT, Some("conflict")),
            "{e}"
        );
        assert!(
            e["message"]
                .as_str()
                .unwrap_or("")
                .contains("cannot be restored"),
            "{e}"
        );
        let (s, _) = call(
            &app,
            "POST",
            &format!("/api/workflows/{wf}/versions/wv_nope/restore"),
            None,
        )
        .await;
        assert_eq!(s, StatusCode::NOT_FOUND);
    }
}

mod deletes {
    use super::support::*;
    use axum::http::StatusCode;

    fn ledger_rows_of(home: &std::path::Path, wf: &str) -> Vec<Option<String>> {
        maskflow_core::store::inspect::ledger_deleted_marks(&home.join("maskflow.db"), wf)
            .expect("ledger rows")
    }

    #[tokio::test]
    async fn a_workflow_is_deleted_in_two_steps_and_its_ledger_entries_stay_marked() {
        let home = tempfile::tempdir().expect("tmp");
        let (app, service) = open(home.path(), two_builds());
        let (wf, _, _) = two_approved_versions(&app, &service).await;
        let (_, w) = call(&app, "GET", &format!("/api/workflows/{wf}"), None).await;
        let messages = w["messages"].as_array().expect("messages").len();
        let ledger = ledger_rows_of(home.path(), &wf);
        assert!(
            !ledger.is_empty(),
            "the build's LLM calls are on the ledger"
        );

        // Step 1: nothing is deleted; the counts and a token come back.
        let uri = format!("/api/workflows/{wf}");
        let (s, preview) = call(&app, "DELETE", &uri, None).await;
        assert_eq!(s, StatusCode::CONFLICT, "{preview}");
        assert_eq!(preview["error"], "confirmation_required");
        assert_eq!(preview["deleted"], false);
        let counts = &preview["would_delete"];
        assert_eq!(counts["workflows"], 1);
        assert_eq!(counts["versions"], 2);
        assert_eq!(counts["messages"], messages);
        assert_eq!(counts["runs"], 0);
        assert_eq!(counts["ledger_entries_kept"], ledger.len());
        assert!(
            preview["expires_at"]
                .as_str()
                .is_some_and(|t| t.ends_with('Z'))
        );
        let token = preview["confirm_token"].as_str().expect("token").to_owned();
        assert_eq!(call(&app, "GET", &uri, None).await.0, StatusCode::OK);

        // A wrong token deletes nothing either; it gets a fresh preview.
        let (s, again) = call(&app, "DELETE", &format!("{uri}?confirm=nope"), None).await;
        assert_eq!(s, StatusCode::CONFLICT);
        assert!(
            again["message"]
                .as_str()
                .unwrap_or("")
                .contains("unknown or has expired")
        );
        assert_ne!(again["confirm_token"], token.as_str());
        // A token is bound to its target.
        let (s, other) = call(
            &app,
            "DELETE",
            &format!("/api/workflows/wf_other?confirm={token}"),
            None,
        )
        .await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{other}");
        assert_eq!(call(&app, "GET", &uri, None).await.0, StatusCode::OK);

        // Step 2: the token deletes.
        let (s, done) = call(&app, "DELETE", &format!("{uri}?confirm={token}"), None).await;
        assert_eq!(s, StatusCode::OK, "{done}");
        assert_eq!(done["deleted"], true);
        assert_eq!(done["would_delete"], *counts);
        assert_eq!(call(&app, "GET", &uri, None).await.0, StatusCode::NOT_FOUND);
        let (s, _) = call(&app, "DELETE", &format!("{uri}?confirm={token}"), None).await;
        assert_eq!(s, StatusCode::NOT_FOUND, "a token is used once");

        // The privacy ledger is never deleted: each row stays, marked.
        let kept = ledger_rows_of(home.path(), &wf);
        assert_eq!(kept.len(), ledger.len());
        assert!(
            kept.iter().all(|n| n.as_deref() == Some("Row counter")),
            "{kept:?}"
        );
        let (_, entries) = call(&app, "GET", "/api/ledger?limit=200", None).await;
        let listed = entries
            .as_array()
            .expect("ledger")
            .iter()
            .filter(|e| e["workflow_id"] == wf.as_str())
            .count();
        assert_eq!(listed, ledger.len());
    }
}

mod backups {
    use super::support::*;
    use axum::Router;
    use axum::http::StatusCode;
    use maskflow_core::{Event, Service};
    use maskflow_flows::RunStatus;
    use serde_json::{Value, json};

    const FLOW: &str = r#"{"description": "One step.", "steps": [
        {"type": "llm", "label": "Say", "agentType": "writer", "identifier": "w",
         "messages": [{"role": "user", "content": ["Say something."]}]}]}"#;

    fn home_with_flow() -> tempfile::TempDir {
        let home = tempfile::tempdir().expect("tmp");
        std::fs::create_dir_all(home.path().join("flows")).expect("flows");
        std::fs::create_dir_all(home.path().join("agents")).expect("agents");
        std::fs::write(home.path().join("flows/one.json"), FLOW).expect("flow");
        std::fs::write(
            home.path().join("agents/writer.json"),
            r#"{"prompt": "You write."}"#,
        )
        .expect("agent");
        home
    }

    async fn run_flow(app: &Router, service: &Service) -> (String, RunStatus) {
        let mut events = service.subscribe();
        let (s, started) = call(app, "POST", "/api/flows/one/run", Some(json!({}))).await;
        assert_eq!(s, StatusCode::ACCEPTED, "{started}");
        let id = started["conversationId"].as_str().expect("id").to_owned();
        loop {
            if let Event::FlowStatus {
                conversation_id,
                status,
                ..
            } = events.recv().await.expect("event")
                && conversation_id == id
                && status != RunStatus::Running
            {
                return (id, status);
            }
        }
    }

    fn of_reason<'a>(view: &'a Value, reason: &str) -> Vec<&'a Value> {
        view["backups"]
            .as_array()
            .expect("backups")
            .iter()
            .filter(|b| b["reason"] == reason)
            .collect()
    }

    #[tokio::test]
    async fn a_backup_is_recorded_before_each_flow_run_and_kept_per_retention() {
        let home = home_with_flow();
        let (app, service) = open(
            home.path(),
            json!({"agent:writer": ["Hello.", "Hello again.", "Third."]}),
        );
        let (run, status) = run_flow(&app, &service).await;
        assert_eq!(status, RunStatus::Completed);
        let (s, view) = call(&app, "GET", "/api/backups", None).await;
        assert_eq!(s, StatusCode::OK, "{view}");
        let before_run = of_reason(&view, "pre_flow_run");
        assert_eq!(before_run.len(), 1, "{view}");
        let b = before_run[0];
        assert_eq!(b["workflow_run_id"], run.as_str());
        assert!(b["id"].as_str().is_some_and(|id| id.starts_with("bak_")));
        let path = b["path"].as_str().expect("path");
        assert!(path.starts_with(&home.path().join("backups").display().to_string()));
        let size = std::fs::metadata(path).expect("the file exists").len();
        assert_eq!(b["size_bytes"], size);
        // The backup holds the database as it was before the run's first
        // step: its row is there (taken once the request was checked), no
        // checkpoint or turn yet.
        let steps =
            maskflow_core::store::inspect::flow_run_step_rows(std::path::Path::new(path), &run)
                .expect("count");
        assert_eq!(steps, 0);

        // Retention: one pre-run backup kept, apart from the others.
        let (s, r) = call(
            &app,
            "PUT",
            "/api/backups/retention",
            Some(json!({"pre_migration": 3, "pre_flow_run": 1})),
        )
        .await;
        assert_eq!(s, StatusCode::OK, "{r}");
        assert_eq!(
            r["retention"],
            json!({"pre_migration": 3, "pre_flow_run": 1})
        );
        let (s, manual) = call(&app, "POST", "/api/backups", None).await;
        assert_eq!(s, StatusCode::CREATED, "{manual}");
        let (second, _) = run_flow(&app, &service).await;
        let (_, view) = call(&app, "GET", "/api/backups", None).await;
        let kept = of_reason(&view, "pre_flow_run");
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0]["workflow_run_id"], second.as_str());
        assert!(
            !std::path::Path::new(path).exists(),
            "the pruned file is removed"
        );
        assert_eq!(
            of_reason(&view, "manual").len(),
            1,
            "a manual backup is not pruned"
        );
        let (s, bad) = call(
            &app,
            "PUT",
            "/api/backups/retention",
            Some(json!({"pre_migration": 0, "pre_flow_run": 1})),
        )
        .await;
        assert_eq!(
            (s, bad["error"].as_str()),
            (StatusCode::BAD_REQUEST, Some("invalid_request"))
        );

        // A flow run is deleted in two steps, with its counts.
        let uri = format!("/api/flow-runs/{run}");
        let (s, preview) = call(&app, "DELETE", &uri, None).await;
        assert_eq!(s, StatusCode::CONFLICT, "{preview}");
        assert_eq!(preview["would_delete"]["flow_runs"], 1);
        assert!(
            preview["would_delete"]["turns"].as_u64().unwrap_or(0) > 0,
            "{preview}"
        );
        assert!(
            preview["would_delete"]["checkpoints"].as_u64().unwrap_or(0) > 0,
            "{preview}"
        );
        assert_eq!(call(&app, "GET", &uri, None).await.0, StatusCode::OK);
        let token = preview["confirm_token"].as_str().expect("token");
        let (s, _) = call(&app, "DELETE", &format!("{uri}?confirm={token}"), None).await;
        assert_eq!(s, StatusCode::OK);
        assert_eq!(call(&app, "GET", &uri, None).await.0, StatusCode::NOT_FOUND);
    }

    #[tokio::test]
    async fn settings_restores_a_backup_after_backing_up_the_current_database() {
        let home = home_with_flow();
        let (app, service) = open(home.path(), json!({"agent:writer": ["Hello."]}));
        let extract =
            json!({"filename": "a.csv", "columns": ["x"], "sample_rows": [["#"]], "row_count": 1});
        let create = |app: Router| {
            let extract = extract.clone();
            async move {
                let (s, c) = call(
                    &app,
                    "POST",
                    "/api/workflows",
                    Some(json!({"file_extracts": [extract]})),
                )
                .await;
                assert_eq!(s, StatusCode::CREATED, "{c}");
                c["workflow_id"].as_str().expect("wf").to_owned()
            }
        };
        let a = create(app.clone()).await;
        call(
            &app,
            "PATCH",
            &format!("/api/workflows/{a}"),
            Some(json!({"name": "Before"})),
        )
        .await;
        let (run, _) = run_flow(&app, &service).await;
        let (_, manual) = call(&app, "POST", "/api/backups", None).await;
        assert_eq!(manual["reason"], "manual");
        let manual_id = manual["id"].as_str().expect("id").to_owned();

        // Changes after the backup.
        let b = create(app.clone()).await;
        call(
            &app,
            "PATCH",
            &format!("/api/workflows/{a}"),
            Some(json!({"name": "After"})),
        )
        .await;

        let (s, r) = call(
            &app,
            "POST",
            &format!("/api/backups/{manual_id}/restore"),
            None,
        )
        .await;
        assert_eq!(s, StatusCode::OK, "{r}");
        assert_eq!(r["restored"]["id"], manual_id.as_str());
        assert_eq!(r["previous"]["reason"], "pre_restore");

        // The service works on the restored database at once.
        let (_, list) = call(&app, "GET", "/api/workflows", None).await;
        let ids: Vec<&str> = list
            .as_array()
            .expect("list")
            .iter()
            .filter_map(|w| w["id"].as_str())
            .collect();
        assert_eq!(ids, [a.as_str()], "{list}");
        let (_, w) = call(&app, "GET", &format!("/api/workflows/{a}"), None).await;
        assert_eq!(w["name"], "Before");
        assert_eq!(
            call(&app, "GET", &format!("/api/flow-runs/{run}"), None)
                .await
                .0,
            StatusCode::OK
        );
        let c = create(app.clone()).await;
        assert_ne!(c, b);
        // The backup taken just before holds what the restore replaced.
        let previous = std::path::Path::new(r["previous"]["path"].as_str().expect("path"));
        let name = maskflow_core::store::inspect::workflow_name(previous, &a).expect("read");
        assert_eq!(name.as_deref(), Some("After"));
        // Every backup is still listed, the ones newer than the restored file too.
        let (_, view) = call(&app, "GET", "/api/backups", None).await;
        assert_eq!(of_reason(&view, "manual").len(), 1);
        assert_eq!(of_reason(&view, "pre_restore").len(), 1);
        assert_eq!(of_reason(&view, "pre_flow_run").len(), 1);
        // A reopened service sees the restored data.
        drop((app, service));
        let (app, _) = open(home.path(), json!({}));
        let (_, w) = call(&app, "GET", &format!("/api/workflows/{a}"), None).await;
        assert_eq!(w["name"], "Before");
        let (_, list) = call(&app, "GET", "/api/workflows", None).await;
        assert_eq!(list.as_array().map(Vec::len), Some(2));

        // Errors: unknown, missing file; a backup is deleted in two steps.
        assert_eq!(
            call(&app, "POST", "/api/backups/bak_nope/restore", None)
                .await
                .0,
            StatusCode::NOT_FOUND
        );
        let (s, preview) = call(&app, "DELETE", &format!("/api/backups/{manual_id}"), None).await;
        assert_eq!(s, StatusCode::CONFLICT);
        assert_eq!(preview["would_delete"]["backups"], 1);
        assert_eq!(preview["would_delete"]["bytes"], manual["size_bytes"]);
        let path = manual["path"].as_str().expect("path").to_owned();
        assert!(std::path::Path::new(&path).exists());
        let token = preview["confirm_token"].as_str().expect("token");
        let (s, _) = call(
            &app,
            "DELETE",
            &format!("/api/backups/{manual_id}?confirm={token}"),
            None,
        )
        .await;
        assert_eq!(s, StatusCode::OK);
        assert!(!std::path::Path::new(&path).exists());
        let (_, view) = call(&app, "GET", "/api/backups", None).await;
        assert!(of_reason(&view, "manual").is_empty());
        let previous_id = r["previous"]["id"].as_str().expect("id");
        std::fs::remove_file(r["previous"]["path"].as_str().expect("path")).expect("rm");
        let (s, e) = call(
            &app,
            "POST",
            &format!("/api/backups/{previous_id}/restore"),
            None,
        )
        .await;
        assert_eq!(
            (s, e["error"].as_str()),
            (StatusCode::BAD_REQUEST, Some("invalid_request")),
            "{e}"
        );
        assert!(
            e["message"].as_str().unwrap_or("").contains("missing"),
            "{e}"
        );
    }
}
