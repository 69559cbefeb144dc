//! Context windows: how many tokens a model can take, and how many a prompt
//! uses, so a prompt that cannot fit is refused before it is sent (with the
//! numbers) instead of being cut by the server or failing with an opaque
//! upstream error.
//!
//! The window comes from the server where it says (llama.cpp's `/v1/models`
//! `meta.n_ctx`, Ollama's `/api/show`), else from [`KNOWN`], a small table
//! of cloud models; unknown means no check. Prompts are measured with an
//! estimate, not a tokenizer: [`BYTES_PER_TOKEN`] bytes a token, which
//! over-counts English (~4 bytes/token with BPE tokenizers) and is close for
//! the JSON-heavy, masked extracts (`####-##-##` splits into many tokens), so
//! a prompt estimated to fit does fit. (`tiktoken-rs` would be exact only for
//! OpenAI's own models and adds its BPE tables to every build.)

use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::{ChatMessage, LlmRequest, ProviderError};

/// A back end's learned window, fetched once per back end (shared by clones).
#[derive(Debug, Clone, Default)]
pub struct WindowCache(Arc<Mutex<Option<Option<u32>>>>);

impl WindowCache {
    /// The cached window, when it was learned (`Some(None)`: unknown).
    pub fn get(&self) -> Option<Option<u32>> {
        *self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Remembers the window.
    pub fn set(&self, window: Option<u32>) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(window);
    }
}

/// Checks `request` fits `window` and returns the reply budget to ask for
/// (the role's `budget`, lowered to the room left); refuses with the numbers.
pub fn check(
    request: &LlmRequest,
    model: &str,
    window: Option<u32>,
    budget: u32,
) -> Result<u32, ProviderError> {
    let prompt = estimate_tokens(&request.messages, request.schema.as_ref());
    fit(prompt, window, budget).map_err(|o| ProviderError::ContextOverflow {
        role: request.role.key(),
        model: model.to_owned(),
        prompt_tokens: o.prompt_tokens,
        window: o.window,
    })
}

/// Bytes per token assumed by [`estimate_tokens`] (conservative; see above).
pub const BYTES_PER_TOKEN: usize = 3;
/// Tokens assumed per message for the chat template's role markers.
pub const PER_MESSAGE_OVERHEAD: usize = 8;
/// The fewest reply tokens a call must leave room for.
pub const MIN_REPLY_TOKENS: u32 = 64;

/// Known cloud models' context windows, by model-name prefix (longest wins).
pub const KNOWN: &[(&str, u32)] = &[
    ("claude-", 200_000),
    ("gpt-4o", 128_000),
    ("gpt-4.1", 1_000_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-4", 8_192),
    ("gpt-3.5-turbo", 16_385),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
];

/// The window of a known cloud model.
pub fn known_window(model: &str) -> Option<u32> {
    KNOWN
        .iter()
        .filter(|(prefix, _)| model.starts_with(prefix))
        .max_by_key(|(prefix, _)| prefix.len())
        .map(|(_, n)| *n)
}

/// The estimated prompt tokens of `messages` (plus `schema` when it is sent
/// beside them, as a tool or response format).
pub fn estimate_tokens(messages: &[ChatMessage], schema: Option<&Value>) -> u32 {
    let bytes: usize = messages.iter().map(|m| m.content.len()).sum::<usize>()
        + schema.map_or(0, |s| s.to_string().len());
    let tokens = bytes.div_ceil(BYTES_PER_TOKEN) + messages.len() * PER_MESSAGE_OVERHEAD;
    u32::try_from(tokens).unwrap_or(u32::MAX)
}

/// The window llama.cpp reports in `GET /v1/models` for `model` (or its
/// only model).
pub fn window_from_models_list(body: &Value, model: &str) -> Option<u32> {
    let data = body["data"].as_array()?;
    let entry = data
        .iter()
        .find(|m| m["id"] == model)
        .or_else(|| (data.len() == 1).then(|| &data[0]))?;
    let n = entry
        .pointer("/meta/n_ctx")
        .or_else(|| entry.get("context_length"))
        .or_else(|| entry.get("max_context_length"))?;
    n.as_u64().and_then(|n| u32::try_from(n).ok())
}

/// The window Ollama reports in `POST /api/show`: `num_ctx` in the
/// parameters when set, else the model's `<arch>.context_length`.
pub fn window_from_ollama_show(body: &Value) -> Option<u32> {
    let from_params = body["parameters"].as_str().and_then(|p| {
        p.lines().find_map(|l| {
            let mut it = l.split_whitespace();
            (it.next() == Some("num_ctx"))
                .then(|| it.next()?.parse::<u32>().ok())
                .flatten()
        })
    });
    from_params.or_else(|| {
        body["model_info"].as_object()?.iter().find_map(|(k, v)| {
            k.ends_with(".context_length")
                .then(|| v.as_u64().and_then(|n| u32::try_from(n).ok()))
                .flatten()
        })
    })
}

/// Why a prompt cannot be sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Overflow {
    /// The prompt's estimated tokens.
    pub prompt_tokens: u32,
    /// The model's window.
    pub window: u32,
}

/// Checks that a prompt of `prompt_tokens` leaves room for a reply in
/// `window`; returns the reply budget to ask for: `budget`, lowered to the
/// room left when that is smaller.
pub fn fit(prompt_tokens: u32, window: Option<u32>, budget: u32) -> Result<u32, Overflow> {
    let Some(window) = window else {
        return Ok(budget);
    };
    let room = window.saturating_sub(prompt_tokens);
    if room < MIN_REPLY_TOKENS {
        return Err(Overflow {
            prompt_tokens,
            window,
        });
    }
    Ok(budget.min(room))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ChatRole;
    use serde_json::json;

    #[test]
    fn known_models_match_the_longest_prefix() {
        assert_eq!(known_window("claude-sonnet-4-5"), Some(200_000));
        assert_eq!(known_window("gpt-4o-mini"), Some(128_000));
        assert_eq!(known_window("gpt-4-0613"), Some(8_192));
        assert_eq!(known_window("smollm2"), None);
    }

    #[test]
    fn the_estimate_counts_bytes_messages_and_schema() {
        let m = [ChatMessage::new(ChatRole::User, "a".repeat(300))];
        assert_eq!(estimate_tokens(&m, None), 100 + PER_MESSAGE_OVERHEAD as u32);
        assert!(estimate_tokens(&m, Some(&json!({"type": "object"}))) > 108);
    }

    #[test]
    fn servers_report_windows() {
        let llama =
            json!({"data": [{"id": "smollm2", "meta": {"n_ctx": 2048, "n_ctx_train": 8192}}]});
        assert_eq!(window_from_models_list(&llama, "smollm2"), Some(2048));
        assert_eq!(window_from_models_list(&json!({"data": []}), "x"), None);
        let ollama = json!({"parameters": "stop \"<|im_end|>\"\nnum_ctx 4096", "model_info": {"llama.context_length": 131072}});
        assert_eq!(window_from_ollama_show(&ollama), Some(4096));
        let ollama = json!({"model_info": {"qwen2.context_length": 32768}});
        assert_eq!(window_from_ollama_show(&ollama), Some(32768));
    }

    #[test]
    fn a_prompt_that_does_not_fit_is_refused_and_the_budget_shrinks_to_the_room() {
        assert_eq!(fit(100, None, 512), Ok(512));
        assert_eq!(fit(1800, Some(2048), 512), Ok(248));
        assert_eq!(
            fit(500, Some(512), 512),
            Err(Overflow {
                prompt_tokens: 500,
                window: 512
            })
        );
    }
}
