//! Seed 004's event contract, followed by a client that knows only the
//! seed: `maskflow serve` on a TCP port, a real WebSocket, a loopback
//! OpenAI-compatible back end. The client starts a flow run and reads
//! nothing but `user_turn`, `assistant_delta`, `tool_event` and `turn_final`
//! with the seed's field names (`conversationId`, `inflightId`, `content`,
//! `createdAt`, `delta`, `status`): one run reaches `turn_final` completed,
//! another is stopped with `cancel_inflight` and ends `turn_final` stopped.
//! The step's prompt is also kept in the run's transcript as a user turn.

use std::path::Path;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

use crate::common::TOKEN;
use crate::common::spawned::{Serve, json_call};
use crate::common::stalling::slow_server;

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// The event types seed 004 names; anything else on the socket is ignored.
const SEED_TYPES: [&str; 4] = ["user_turn", "assistant_delta", "tool_event", "turn_final"];

async fn call(port: u16, method: &'static str, path: String, body: Option<Value>) -> (u16, Value) {
    tokio::task::spawn_blocking(move || json_call(port, method, &path, body))
        .await
        .expect("http task")
}

async fn connect(port: u16) -> Socket {
    connect_to(port, "/api/events").await
}

/// A socket on `path` (the events route, maybe with a query).
async fn connect_to(port: u16, path: &str) -> Socket {
    let mut request = format!("ws://127.0.0.1:{port}{path}")
        .into_client_request()
        .expect("ws request");
    request.headers_mut().insert(
        "authorization",
        format!("Bearer {TOKEN}").parse().expect("header"),
    );
    tokio_tungstenite::connect_async(request)
        .await
        .expect("WebSocket connects")
        .0
}

/// The next seed event of conversation `id` (30 s at most; `Null` if none).
async fn next_seed_event(ws: &mut Socket, id: &str) -> Value {
    let wait = async {
        while let Some(frame) = ws.next().await {
            if let Ok(Message::Text(text)) = frame
                && let Ok(v) = serde_json::from_str::<Value>(text.as_str())
                && v["type"].as_str().is_some_and(|t| SEED_TYPES.contains(&t))
                && v["conversationId"] == id
            {
                return v;
            }
        }
        Value::Null
    };
    tokio::time::timeout(Duration::from_secs(30), wait)
        .await
        .unwrap_or(Value::Null)
}

/// Seed events of run `id` up to and including its `turn_final`.
async fn follow_to_final(ws: &mut Socket, id: &str) -> Vec<Value> {
    let mut seen = Vec::new();
    loop {
        let v = next_seed_event(ws, id).await;
        assert_ne!(v, Value::Null, "no turn_final; saw {seen:?}");
        let last = v["type"] == "turn_final";
        seen.push(v);
        if last {
            return seen;
        }
    }
}

/// A data folder with one agent and `flow` as `flows/notes.json`, served
/// with the loopback back end at `base`.
async fn serve_with(home: &Path, base: &str, flow: Value) -> Serve {
    let data = home.join("data");
    std::fs::create_dir_all(data.join("flows")).expect("flows");
    std::fs::create_dir_all(data.join("agents")).expect("agents");
    std::fs::write(
        data.join("agents/coding_agent.json"),
        r#"{"prompt": "You write clear, short summaries."}"#,
    )
    .expect("agent");
    std::fs::write(data.join("flows/notes.json"), flow.to_string()).expect("flow");
    let server = Serve::start(&data, None, &[]);
    let (s, v) = call(
        server.port,
        "PUT",
        "/api/settings".into(),
        Some(json!({
            "providers": [{"id": "local", "kind": "openai", "base_url": base, "model": "slow-model"}],
            "roles": {"validator": "local", "clarifier": "local", "builder": "local", "flows": "local"}
        })),
    )
    .await;
    assert_eq!(s, 200, "{v}");
    server
}

fn llm_step(label: &str, text: &str) -> Value {
    json!({"type": "llm", "label": label, "agentType": "coding_agent", "identifier": "summary",
           "messages": [{"role": "user", "content": [text]}]})
}

/// Starts the flow the seed's way: `202 {status: "started", conversationId, inflightId}`.
async fn start(port: u16) -> (String, String) {
    let (s, started) = call(port, "POST", "/api/flows/notes/run".into(), Some(json!({}))).await;
    assert_eq!(
        (s, &started["status"]),
        (202, &json!("started")),
        "{started}"
    );
    let id = started["conversationId"].as_str().expect("id").to_owned();
    let inflight = started["inflightId"].as_str().expect("inflight").to_owned();
    (id, inflight)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seed_client_follows_a_flow_run_to_turn_final_completed() {
    let (base, _slow) = slow_server().await;
    let home = tempfile::tempdir().expect("home");
    let flow = json!({"steps": [llm_step("Summarise", "Summarise the notes.")]});
    let server = serve_with(home.path(), &base, flow).await;
    let mut ws = connect(server.port).await;
    let (id, inflight) = start(server.port).await;

    let events = follow_to_final(&mut ws, &id).await;
    for e in &events {
        assert_eq!(e["inflightId"], inflight.as_str(), "{e}");
    }
    let user = &events[0];
    assert_eq!(user["type"], "user_turn", "{events:?}");
    assert!(
        user["content"]
            .as_str()
            .is_some_and(|c| c.contains("Summarise the notes.")),
        "{user}"
    );
    assert!(
        user["createdAt"].as_str().is_some_and(|t| !t.is_empty()),
        "{user}"
    );
    assert_eq!(user["command"]["name"], "flow", "{user}");
    assert_eq!(user["command"]["label"], "Summarise", "{user}");
    let streamed: String = events
        .iter()
        .filter(|e| e["type"] == "assistant_delta")
        .filter_map(|e| e["delta"].as_str())
        .collect();
    assert_eq!(
        streamed, "The notes list three open invoices.",
        "{events:?}"
    );
    let last = events.last().expect("final");
    assert_eq!(last["status"], "completed", "{last}");
    assert!(last.get("error").is_none(), "{last}");

    // The prompt is kept as the transcript's user turn, before the reply.
    let (s, run) = call(server.port, "GET", format!("/api/flow-runs/{id}"), None).await;
    assert_eq!(s, 200, "{run}");
    let turns: Vec<(&str, &str)> = run["turns"]
        .as_array()
        .expect("turns")
        .iter()
        .map(|t| {
            (
                t["role"].as_str().unwrap_or(""),
                t["content"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        turns,
        [
            ("user", user["content"].as_str().expect("content")),
            ("assistant", "The notes list three open invoices.")
        ],
        "{run}"
    );
    let _ = ws.close(None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seed_client_stops_a_flow_run_and_gets_turn_final_stopped() {
    let (base, slow) = slow_server().await;
    let home = tempfile::tempdir().expect("home");
    let flow = json!({"steps": [
        llm_step("Summarise", "Summarise the notes."),
        llm_step("Plan", "Write the plan.")
    ]});
    let server = serve_with(home.path(), &base, flow).await;
    let mut ws = connect(server.port).await;
    let (id, inflight) = start(server.port).await;

    // The second step's prompt, then the first piece of its (stalled) reply.
    let mut prompts = 0;
    loop {
        let e = next_seed_event(&mut ws, &id).await;
        assert_ne!(e, Value::Null, "the second step never streamed");
        assert_ne!(e["type"], "turn_final", "{e}");
        if e["type"] == "user_turn" {
            prompts += 1;
        }
        if prompts == 2 && e["type"] == "assistant_delta" {
            assert_eq!(e["delta"], "The plan is", "{e}");
            break;
        }
    }
    ws.send(Message::text(
        json!({"type": "cancel_inflight", "conversationId": id, "inflightId": inflight})
            .to_string(),
    ))
    .await
    .expect("send");
    let events = follow_to_final(&mut ws, &id).await;
    let last = events.last().expect("final");
    assert_eq!(
        (&last["status"], &last["inflightId"]),
        (&json!("stopped"), &json!(inflight)),
        "{last}"
    );
    assert!(
        crate::common::stalling::until(&slow.dropped).await,
        "the agent's request was dropped"
    );
    let _ = ws.close(None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_script_step_is_a_tool_event_request_then_result() {
    let (base, _slow) = slow_server().await;
    let home = tempfile::tempdir().expect("home");
    let work = home.path().join("work");
    std::fs::create_dir_all(&work).expect("work");
    std::fs::write(
        work.join("count.py"),
        "import json\nprint(json.dumps({'rows': 3}))\n",
    )
    .expect("script");
    let flow = json!({"steps": [{"type": "script", "label": "Count rows", "path": "count.py"}]});
    let server = serve_with(home.path(), &base, flow).await;
    let mut ws = connect(server.port).await;
    let (s, started) = call(
        server.port,
        "POST",
        "/api/flows/notes/run".into(),
        Some(json!({"working_folder": work.display().to_string()})),
    )
    .await;
    assert_eq!(s, 202, "{started}");
    let id = started["conversationId"].as_str().expect("id").to_owned();

    let events = follow_to_final(&mut ws, &id).await;
    let tools: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "tool_event")
        .map(|e| &e["event"])
        .collect();
    assert_eq!(tools.len(), 2, "{events:?}");
    assert_eq!(
        (
            &tools[0]["type"],
            &tools[0]["name"],
            &tools[0]["parameters"]["script"]
        ),
        (
            &json!("tool-request"),
            &json!("Count rows"),
            &json!("count.py")
        ),
        "{events:?}"
    );
    assert_eq!(tools[1]["type"], "tool-result", "{events:?}");
    assert_eq!(tools[1]["callId"], tools[0]["callId"], "{events:?}");
    assert_eq!(tools[1]["result"]["rows"], 3, "{events:?}");
    let last = events.last().expect("final");
    assert_eq!(last["status"], "completed", "{last}");
    let _ = ws.close(None).await;
}

/// Every frame's type up to and including run `id`'s `turn_final`.
async fn types_to_final(ws: &mut Socket, id: &str) -> Vec<String> {
    let wait = async {
        let mut types = Vec::new();
        while let Some(frame) = ws.next().await {
            if let Ok(Message::Text(text)) = frame
                && let Ok(v) = serde_json::from_str::<Value>(text.as_str())
            {
                let t = v["type"].as_str().unwrap_or("").to_owned();
                let last = t == "turn_final" && v["conversationId"] == id;
                types.push(t);
                if last {
                    break;
                }
            }
        }
        types
    };
    tokio::time::timeout(Duration::from_secs(30), wait)
        .await
        .expect("the run reached turn_final")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flow_turn_and_flow_status_come_only_to_a_client_that_asks() {
    let (base, _slow) = slow_server().await;
    let home = tempfile::tempdir().expect("home");
    let flow = json!({"steps": [llm_step("Summarise", "Summarise the notes.")]});
    let server = serve_with(home.path(), &base, flow).await;

    // An unknown event name is refused before the upgrade, by name.
    let refused = tokio_tungstenite::connect_async({
        let mut r = format!(
            "ws://127.0.0.1:{}/api/events?events=flow_turn,bogus",
            server.port
        )
        .into_client_request()
        .expect("ws request");
        r.headers_mut().insert(
            "authorization",
            format!("Bearer {TOKEN}").parse().expect("header"),
        );
        r
    })
    .await;
    match refused {
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
            assert_eq!(response.status(), 400);
            let body = String::from_utf8_lossy(response.body().as_deref().unwrap_or_default())
                .into_owned();
            assert!(
                body.contains("invalid_request") && body.contains("bogus"),
                "{body}"
            );
        }
        other => panic!("expected a 400 refusal, got {other:?}"),
    }

    let mut plain = connect(server.port).await;
    let mut asking = connect_to(server.port, "/api/events?events=flow_turn,flow_status").await;
    let mut status_only = connect_to(server.port, "/api/events?events=flow_status").await;
    let mut calls = connect_to(
        server.port,
        "/api/events?events=llm_call_started,ledger_entry",
    )
    .await;
    let (id, _) = start(server.port).await;

    let seen = types_to_final(&mut plain, &id).await;
    assert!(seen.iter().any(|t| t == "user_turn"), "{seen:?}");
    assert!(
        !seen.iter().any(|t| t == "flow_turn" || t == "flow_status"),
        "a seed client gets only the seed's flow events: {seen:?}"
    );
    assert!(
        !seen
            .iter()
            .any(|t| t == "llm_call_started" || t == "ledger_entry"),
        "nor the flow's LLM calls: {seen:?}"
    );
    let seen = types_to_final(&mut calls, &id).await;
    assert!(seen.iter().any(|t| t == "llm_call_started"), "{seen:?}");
    assert!(seen.iter().any(|t| t == "ledger_entry"), "{seen:?}");
    let seen = types_to_final(&mut asking, &id).await;
    assert!(seen.iter().any(|t| t == "flow_turn"), "{seen:?}");
    assert!(seen.iter().any(|t| t == "flow_status"), "{seen:?}");
    assert!(seen.iter().any(|t| t == "turn_final"), "{seen:?}");
    let seen = types_to_final(&mut status_only, &id).await;
    assert!(seen.iter().any(|t| t == "flow_status"), "{seen:?}");
    assert!(!seen.iter().any(|t| t == "flow_turn"), "{seen:?}");
    for ws in [&mut plain, &mut asking, &mut status_only, &mut calls] {
        let _ = ws.close(None).await;
    }
}
