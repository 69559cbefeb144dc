//! Issue #28 over HTTP against an OpenAI-compatible back end that records
//! what it receives: a category column switched off reaches it in no
//! request (and nothing is refused); switched on, exactly its values do,
//! and a value of another column is still stopped. The user's own words
//! (point 7): a typed value is located, not echoed, in the 422 answer; one
//! confirmation covers it in that workflow only; a year passes.

use std::sync::Arc;

use axum::http::StatusCode;
use maskflow_core::ServiceConfig;
use maskflow_llm::keys::KeyringCredentials;
use serde_json::{Value, json};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use super::open_with;
use crate::api::support::*;

/// Validator: feasible; clarifier: always one more question. As a stream.
struct Asks;

impl Respond for Asks {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body = String::from_utf8_lossy(&request.body);
        let text = if body.contains("needs_clarification") {
            json!({"needs_clarification": true, "question": "Which rows?"})
        } else {
            json!({"feasible": true})
        }
        .to_string();
        let chunk = json!({"choices":[{"index":0,"delta":{"content":text},"finish_reason":null}]});
        let out = format!(
            "data: {chunk}\n\ndata: {{\"choices\":[{{\"index\":0,\"delta\":{{}},\"finish_reason\":\"stop\"}}]}}\n\ndata: [DONE]\n\n"
        );
        ResponseTemplate::new(200).set_body_raw(out, "text/event-stream")
    }
}

fn penguins() -> String {
    let mut t = String::from("species,island,observer,body_mass_g\n");
    for i in 0..36 {
        t.push_str(&format!(
            "{},{},{},{}\n",
            ["Adelie", "Gentoo"][i % 2],
            ["Biscoe", "Dream", "Torgersen"][i % 3],
            ["Ada Lovelace", "Alan Turing", "Grace Hopper"][i % 3],
            3150 + i * 25,
        ));
    }
    t
}

async fn received(server: &MockServer) -> Vec<String> {
    server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .map(|r| String::from_utf8_lossy(&r.body).into_owned())
        .collect()
}

#[tokio::test]
async fn exactly_the_switched_on_categories_and_the_confirmed_words_reach_the_back_end() {
    let server = MockServer::start().await;
    Mock::given(wiremock::matchers::method("POST"))
        .and(wiremock::matchers::path("/v1/chat/completions"))
        .respond_with(Asks)
        .mount(&server)
        .await;
    let home = tempfile::tempdir().expect("tmp");
    let config = ServiceConfig {
        keys: Arc::new(KeyringCredentials::with_store(
            keyring_core::mock::Store::new().expect("mock"),
        )),
        ..ServiceConfig::from_settings(home.path())
    };
    let (app, _service) = open_with(home.path(), config);
    let (s, v) = call(&app, "PUT", "/api/settings", Some(json!({
        "providers": [{"id": "llm", "kind": "openai", "base_url": format!("{}/v1", server.uri()), "model": "m"}],
        "roles": {"validator": "llm", "clarifier": "llm", "builder": "llm"}
    }))).await;
    assert_eq!(s, StatusCode::OK, "{v}");

    let (s, up) = crate::common::send(
        &app,
        crate::common::upload(&[("penguins.csv", penguins().as_bytes())]),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{up}");
    let file = &up[0];
    let id = file["file_id"].as_str().expect("id").to_owned();
    let offered: Vec<&str> = file["categories"]
        .as_array()
        .expect("categories offered")
        .iter()
        .filter_map(|c| c["column"].as_str())
        .collect();
    assert_eq!(offered, ["species", "island"], "{file}");
    assert!(!file["extract"].to_string().contains("Biscoe"));

    let create = |body: Value| {
        let app = app.clone();
        async move {
            let (s, c) = call(&app, "POST", "/api/workflows", Some(body)).await;
            assert_eq!(s, StatusCode::CREATED, "{c}");
            format!(
                "/api/workflows/{}/messages",
                c["workflow_id"].as_str().expect("wf")
            )
        }
    };
    let say = |msg: String, content: &'static str, confirm: bool| {
        let app = app.clone();
        async move {
            call(
                &app,
                "POST",
                &msg,
                Some(json!({"content": content, "confirm_privacy": confirm})),
            )
            .await
        }
    };

    // Off: none of the values is sent, nothing is refused; a year passes.
    let off = create(json!({"file_ids": [id]})).await;
    let (s, r) = say(off.clone(), "mean body mass per island in 2008", false).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    let sent = received(&server).await.join("\n");
    for v in ["Biscoe", "Torgersen", "Adelie", "Gentoo"] {
        assert!(!sent.contains(v), "{v} reached the back end");
    }

    // A category word identifies no one (#38): sent as the user wrote it.
    let (s, r) = say(off.clone(), "only Biscoe", false).await;
    assert_eq!(s, StatusCode::OK, "a category word passes: {r}");
    assert!(received(&server).await.join("\n").contains("only Biscoe"));

    // A person's name: located, not echoed; confirmed once per workflow.
    let (s, r) = say(off.clone(), "rows seen by Ada Lovelace", false).await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{r}");
    let located =
        r["matches"].as_array().expect("matches").iter().any(|m| {
            m["at"] == json!([13, 25]) && m["source"] == "penguins.csv, column \"observer\""
        });
    assert!(located, "{r}");
    assert!(!r.to_string().contains("Ada Lovelace"), "{r}");
    let (s, r) = say(off.clone(), "rows seen by Ada Lovelace", true).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    let (s, r) = say(off.clone(), "Ada Lovelace, heaviest first", false).await;
    assert_eq!(s, StatusCode::OK, "confirmed once: {r}");
    let other = create(json!({"file_ids": [id]})).await;
    let (s, _) = say(other, "rows seen by Ada Lovelace", false).await;
    assert_eq!(
        s,
        StatusCode::UNPROCESSABLE_ENTITY,
        "another workflow asks again"
    );

    // On (island): exactly its values are sent; species' are still stopped.
    let before = received(&server).await.len();
    let on = create(json!({"file_ids": [id],
        "show_categories": [{"file_id": id, "column": "island"}]}))
    .await;
    let (s, r) = say(on.clone(), "mean body mass per island", false).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    let sent = received(&server).await[before..].join("\n");
    for v in ["Biscoe", "Dream", "Torgersen"] {
        assert!(sent.contains(v), "{v} was switched on");
    }
    for v in ["Adelie", "Gentoo", "Alan Turing"] {
        assert!(!sent.contains(v), "{v} was not switched on");
    }
    let (s, r) = say(on.clone(), "only Torgersen", false).await;
    assert_eq!(s, StatusCode::OK, "a switched-on value passes: {r}");
    let (s, r) = say(on, "rows seen by Alan Turing", false).await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{r}");
    assert!(!received(&server).await.join("\n").contains("Alan Turing"));
}
