//! The one list of calls ([`maskflow_core::api_calls!`]) against what is
//! served: every call is a route of the HTTP API with its OpenAPI entry
//! (the method and path the list gives, named after the call), a handler
//! generated here, and a call of the UI's typed client
//! (`ui/src/generated/api.ts`) that the UI's one `Transport` makes. The
//! desktop's unit tests check the Tauri side the same way.

use std::path::Path;

use maskflow_core::api::Call;
use maskflow_server::api::{calls, openapi};

/// The list as core reads it.
fn listed() -> Vec<Call> {
    maskflow_core::api::calls()
}

fn ui_file(path: &str) -> String {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../ui/src")
        .join(path);
    std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

#[test]
fn every_call_of_the_list_is_served_documented_and_in_the_ui_client() {
    let calls_listed = listed();
    assert!(calls_listed.len() > 40);
    let doc = serde_json::to_value(openapi()).expect("OpenAPI as JSON");
    let client = ui_file("generated/api.ts");
    let transport = ui_file("transport/client.ts");
    for call in &calls_listed {
        assert!(
            calls::CALL_NAMES.contains(&call.name),
            "{}: no HTTP handler",
            call.name
        );
        let operation = &doc["paths"][call.path][call.method];
        assert!(
            operation.is_object(),
            "{}: {} {} is not in the OpenAPI document",
            call.name,
            call.method,
            call.path
        );
        assert_eq!(operation["operationId"], call.name, "{}", call.path);
        for (status, _) in &call.errors {
            assert!(
                operation["responses"][status.to_string()]["content"].is_object(),
                "{}: its {status} answer is not documented with the error body",
                call.name
            );
        }
        let entry = format!(
            "  {}: {{ method: \"{}\", path: \"{}\",",
            call.name,
            call.method.to_uppercase(),
            call.path
        );
        assert!(
            client.contains(&entry),
            "{}: not in ui/src/generated/api.ts",
            call.name
        );
        assert!(
            transport.contains(&format!("\"{}\"", call.name)),
            "{}: the UI's Transport never makes this call",
            call.name
        );
    }
    assert_eq!(calls::CALL_NAMES.len(), calls_listed.len());
}

#[test]
fn every_path_parameter_says_what_it_holds() {
    let doc = serde_json::to_value(openapi()).expect("openapi json");
    let mut undescribed = Vec::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, op) in item.as_object().expect("item") {
            for p in op["parameters"].as_array().into_iter().flatten() {
                let described = p["description"].as_str().is_some_and(|d| !d.is_empty());
                if p["in"] == "path" && !described {
                    undescribed.push(format!("{method} {path}: {}", p["name"]));
                }
            }
        }
    }
    assert!(undescribed.is_empty(), "no description: {undescribed:?}");
}
