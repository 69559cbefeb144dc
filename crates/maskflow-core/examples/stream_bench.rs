//! Benchmark of the OpenAI-compatible client's own cost per streamed reply:
//! COUNT requests to a local server that streams a fixed reply instantly.
//! Run: `bench/llm/run.sh`. Prints the mean milliseconds per reply.

use std::time::Instant;

use maskflow_llm::http::Endpoint;
use maskflow_llm::openai::OpenAiProvider;
use maskflow_llm::{ChatMessage, ChatRole, LlmRequest, Provider, Role};

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut args = std::env::args().skip(1);
    let base_url = args
        .next()
        .unwrap_or_else(|| "http://127.0.0.1:8765/v1".into());
    let count: u32 = args.next().and_then(|c| c.parse().ok()).unwrap_or(200);
    let provider = match OpenAiProvider::new(Endpoint::new(base_url, "bench")) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    let request = LlmRequest {
        role: Role::Validator,
        messages: vec![ChatMessage::new(ChatRole::User, "Say something.")],
        schema: None,
    };
    let mut chars = 0usize;
    let start = Instant::now();
    for _ in 0..count {
        match provider.complete(&request, &|_delta: &str| {}).await {
            Ok(reply) => chars += reply.text.len(),
            Err(e) => {
                eprintln!("error: {e}");
                std::process::exit(1);
            }
        }
    }
    let per = start.elapsed().as_secs_f64() * 1000.0 / f64::from(count);
    println!("{per:.3} ms per streamed reply ({count} replies, {chars} characters)");
}
