//! The validator, clarifier and builder roles, with their real prompts and
//! checks, against a real llama.cpp server (xllamacpp + SmolLM2-135M, as in
//! `real_servers.rs`) through the OpenAI-compatible and Anthropic protocols.
//! Asserts that every structured reply is asked for natively (the recorded
//! bodies carry `json_schema` / `tool_choice`), that each role answers or
//! fails with a clear error (an unusable reply or its budget passed, never
//! an opaque upstream failure), and prints what happened (tokens, seconds,
//! fallbacks) for the budget defaults in `providers/budget.rs`.
//!
//! Skips loudly without the server unless `MASKFLOW_REQUIRE_LLM_SERVERS=1`.

use std::sync::Arc;
use std::time::Instant;

use maskflow_core::conversation::prompts;
use maskflow_core::conversation::spec::{Clarification, Feasibility, WorkflowSpec};
use maskflow_core::fit;
use maskflow_llm::anthropic::AnthropicProvider;
use maskflow_llm::call::{self, CallRecord};
use maskflow_llm::http::Endpoint;
use maskflow_llm::openai::OpenAiProvider;
use maskflow_llm::{ChatMessage, ChatRole, LlmRequest, Provider, ProviderError, ask_json};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::common::llamacpp::start;

fn extracts() -> Value {
    json!({"files": [{"name": "sales.csv", "kind": "csv", "columns": [
        {"name": "date", "samples": ["####-##-##", "####-##-##"]},
        {"name": "region", "samples": ["Aaaaa", "Aaaa"]},
        {"name": "amount", "samples": ["###.##", "##.##"]}
    ]}]})
}

fn history() -> Vec<ChatMessage> {
    vec![ChatMessage::new(
        ChatRole::User,
        "Sum the amount column by region and write the totals to a CSV file.",
    )]
}

/// One role's outcome: what was sent, tokens, seconds, and the result.
struct Outcome {
    bodies: Vec<Value>,
    output_tokens: Option<i64>,
    secs: f64,
    error: Option<ProviderError>,
}

async fn run_role<T: DeserializeOwned>(
    p: &dyn Provider,
    request: LlmRequest,
    check: &(dyn Fn(&T) -> Result<(), String> + Sync),
) -> Outcome {
    let record = CallRecord::new(None);
    let t = Instant::now();
    let result = call::scope(record.clone(), ask_json::<T>(p, request, check, &|_| {})).await;
    let r = record.recorded();
    Outcome {
        bodies: r
            .bodies
            .iter()
            .filter_map(|b| serde_json::from_str(b).ok())
            .collect(),
        output_tokens: r.output_tokens,
        secs: t.elapsed().as_secs_f64(),
        error: result.err(),
    }
}

fn assert_clear(name: &str, role: &str, o: &Outcome) {
    eprintln!(
        "[{name}] {role}: {} request(s), {:?} output tokens (last), {:.1} s, {}",
        o.bodies.len(),
        o.output_tokens,
        o.secs,
        o.error
            .as_ref()
            .map_or("answered".to_owned(), |e| format!("failed: {e}"))
    );
    match &o.error {
        None
        | Some(ProviderError::InvalidReply { .. })
        | Some(ProviderError::BudgetExceeded { .. }) => {}
        Some(other) => panic!("[{name}] {role}: an unclear failure: {other}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_role_asks_natively_and_ends_clearly_on_both_protocols() {
    let Some(server) = start().await else { return };
    let mut oa = Endpoint::new(format!("{}/v1", server.base), "smollm2");
    oa.temperature = Some(0.0);
    let mut an = Endpoint::new(server.base.clone(), "smollm2");
    an.temperature = Some(0.0);
    let openai = OpenAiProvider::new(oa).expect("openai");
    let anthropic = AnthropicProvider::new(an).expect("anthropic");
    // Both protocols learn the window the server runs with (llamacpp.py: 2,048).
    assert_eq!(openai.context_window().await, Some(2048));
    assert_eq!(anthropic.context_window().await, Some(2048));
    let providers: Vec<(&str, Arc<dyn Provider>, &str)> = vec![
        ("openai", Arc::new(openai), "json_schema"),
        ("anthropic", Arc::new(anthropic), "tool_choice"),
    ];
    for (name, p, native) in &providers {
        let t = Instant::now();
        let v = run_role::<Feasibility>(
            p.as_ref(),
            prompts::validator_request(&extracts(), &history()),
            &|f: &Feasibility| f.check(),
        )
        .await;
        assert_clear(name, "validator", &v);
        let first = v.bodies.first().expect("a request was sent");
        assert!(
            first.to_string().contains(native),
            "[{name}] the first request does not ask natively ({native}): {first}"
        );
        assert_eq!(first["max_tokens"], 512, "[{name}] the validator's budget");
        if v.bodies.len() > 1 {
            eprintln!(
                "[{name}] fallback: later requests carry {native}: {}",
                v.bodies[1..].iter().any(|b| b.to_string().contains(native))
            );
        }
        let c = run_role::<Clarification>(
            p.as_ref(),
            prompts::clarifier_request(&extracts(), &history()),
            &|c: &Clarification| c.check(),
        )
        .await;
        assert_clear(name, "clarifier", &c);
        // The builder's prompt fitted to the window as the build engine
        // fits it: the full one is over 2,048 tokens.
        let native = p.takes_schema();
        let build = |e: &Value, full: bool| {
            let compact = (!full).then_some(prompts::Compact {
                schema_by_reference: native,
            });
            prompts::builder_request_for(e, &history(), "", None, None, compact)
        };
        let window = p.context_window().await;
        let (request, reduction) = fit::fit_request_with(
            &extracts(),
            window,
            maskflow_llm::budget::BUILDER_DEFAULT,
            p.model(),
            &[fit::PACKAGES_LEFT_OUT, fit::SCHEMA_LEFT_OUT],
            &build,
        )
        .expect("the builder's prompt fits the window");
        assert!(reduction.is_some(), "[{name}] the builder's prompt was cut");
        let b = run_role::<WorkflowSpec>(p.as_ref(), request, &|w: &WorkflowSpec| w.check()).await;
        assert_clear(name, "builder", &b);
        eprintln!(
            "[{name}] the whole conversation: {:.1} s",
            t.elapsed().as_secs_f64()
        );
    }
}
