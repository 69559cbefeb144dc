//! Structured replies: a JSON object asked of a model, parsed and checked,
//! with one repair round that sends the fault back.

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{
    ChatMessage, ChatRole, DeltaSink, LlmRequest, Provider, ProviderError, budget, context,
};

/// The message that sends an unusable reply back once, with what was wrong.
pub fn repair_prompt(reason: &str) -> String {
    format!(
        "Your reply could not be used: {reason}. Reply again with only one JSON object that matches the schema."
    )
}

/// Takes the JSON value out of a reply: the whole text, or the content of a
/// fenced code block, or the outermost `{…}`.
pub fn extract_json(text: &str) -> Result<Value, String> {
    let trimmed = text.trim();
    if let Ok(v) = serde_json::from_str(trimmed) {
        return Ok(v);
    }
    if let Some(start) = trimmed.find("```") {
        let after = &trimmed[start + 3..];
        let body = after.split_once('\n').map(|(_, b)| b).unwrap_or(after);
        if let Some(end) = body.find("```")
            && let Ok(v) = serde_json::from_str(body[..end].trim())
        {
            return Ok(v);
        }
    }
    if let (Some(a), Some(b)) = (trimmed.find('{'), trimmed.rfind('}'))
        && a < b
        && let Ok(v) = serde_json::from_str(&trimmed[a..=b])
    {
        return Ok(v);
    }
    Err(match serde_json::from_str::<Value>(trimmed) {
        Err(e) => format!("the reply is not valid JSON ({e})"),
        Ok(_) => "the reply is not valid JSON".to_owned(),
    })
}

/// Parses `text` as a `T` and runs `check` on it.
pub fn parse_reply<T: DeserializeOwned>(
    text: &str,
    check: &dyn Fn(&T) -> Result<(), String>,
) -> Result<T, String> {
    let value = extract_json(text)?;
    let parsed: T = serde_json::from_value(value)
        .map_err(|e| format!("the JSON does not match the schema: {e}"))?;
    check(&parsed)?;
    Ok(parsed)
}

/// Asks for a structured reply: sends `request`, parses and checks the reply,
/// and on failure sends it back once with the error ("repair"). A second
/// failure is [`ProviderError::InvalidReply`].
pub async fn ask_json<T: DeserializeOwned>(
    provider: &dyn Provider,
    mut request: LlmRequest,
    check: &(dyn Fn(&T) -> Result<(), String> + Sync),
    on_delta: DeltaSink<'_>,
) -> Result<T, ProviderError> {
    match provider.complete(&request, on_delta).await {
        Ok(first) => {
            let reason = match parse_reply(&first.text, check) {
                Ok(v) => return Ok(v),
                Err(reason) => reason,
            };
            // The reply goes back with the reason only when the window
            // leaves room for an answer as long again: a small model's
            // window often does not, and the reason alone still repairs.
            let reply = u32::try_from(first.text.len().div_ceil(context::BYTES_PER_TOKEN))
                .unwrap_or(u32::MAX);
            let with_reply = context::estimate_tokens(&request.messages, request.schema.as_ref())
                .saturating_add(reply.saturating_mul(2));
            if provider
                .context_window()
                .await
                .is_none_or(|window| with_reply <= window)
            {
                request
                    .messages
                    .push(ChatMessage::new(ChatRole::Assistant, first.text));
            }
            request
                .messages
                .push(ChatMessage::new(ChatRole::User, repair_prompt(&reason)));
        }
        // A reply cut at its budget is the role's one repair: the cut text
        // is not sent back (it is long and useless), only the instruction.
        // (When the context window set the limit, asking again cannot help.)
        Err(ProviderError::BudgetExceeded {
            budget,
            window: None,
            ..
        }) => {
            request.messages.push(ChatMessage::new(
                ChatRole::User,
                repair_prompt(&format!(
                    "it passed the limit of {} tokens without ending; be brief",
                    budget::thousands(u64::from(budget))
                )),
            ));
        }
        Err(e) => return Err(e),
    }
    let second = provider.complete(&request, on_delta).await?;
    parse_reply(&second.text, check).map_err(|reason| ProviderError::InvalidReply {
        role: request.role.key(),
        reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Answers each call with the next reply and records what it was sent.
    #[derive(Debug)]
    struct Scripted {
        window: Option<u32>,
        replies: std::sync::Mutex<Vec<String>>,
        sent: std::sync::Mutex<Vec<LlmRequest>>,
    }

    impl Provider for Scripted {
        fn name(&self) -> &str {
            "scripted"
        }
        fn context_window(&self) -> crate::BoxFuture<'_, Option<u32>> {
            let window = self.window;
            Box::pin(async move { window })
        }
        fn complete<'a>(
            &'a self,
            request: &'a LlmRequest,
            _: DeltaSink<'a>,
        ) -> crate::BoxFuture<'a, Result<crate::LlmReply, ProviderError>> {
            self.sent.lock().unwrap().push(request.clone());
            let text = self.replies.lock().unwrap().remove(0);
            Box::pin(async move { Ok(crate::LlmReply { text }) })
        }
    }

    /// The second request of a role whose first reply was `{"a": "…"}` of
    /// 4,000 bytes, asked of a model with `window`.
    async fn repair_after_a_long_reply(window: Option<u32>) -> LlmRequest {
        let long = json!({"a": "x".repeat(4_000)}).to_string();
        let p = Scripted {
            window,
            replies: std::sync::Mutex::new(vec![long, r#"{"b": 1}"#.into()]),
            sent: std::sync::Mutex::default(),
        };
        let request = LlmRequest {
            role: crate::Role::Builder,
            messages: vec![ChatMessage::new(ChatRole::User, "build it")],
            schema: None,
        };
        let need_b = |v: &Value| {
            if v.get("b").is_some() {
                Ok(())
            } else {
                Err("no b".to_owned())
            }
        };
        let got: Value = ask_json(&p, request, &need_b, &|_| {})
            .await
            .expect("repaired");
        assert_eq!(got, json!({"b": 1}));
        p.sent.lock().unwrap().remove(1)
    }

    #[tokio::test]
    async fn an_unusable_reply_goes_back_only_when_the_window_has_room_for_another() {
        let roomy = repair_after_a_long_reply(None).await;
        assert_eq!(roomy.messages.len(), 3);
        assert_eq!(roomy.messages[1].role, ChatRole::Assistant);
        // ~1,340 tokens of reply in a 2,048 window: the reason goes alone.
        let small = repair_after_a_long_reply(Some(2048)).await;
        assert_eq!(small.messages.len(), 2, "{small:?}");
        assert!(small.messages[1].content.contains("no b"));
    }

    #[test]
    fn json_is_found_in_fences_and_prose() {
        assert_eq!(extract_json(r#" {"a":1} "#), Ok(json!({"a":1})));
        assert_eq!(
            extract_json("Here:\n```json\n{\"a\":2}\n```\n"),
            Ok(json!({"a":2}))
        );
        assert_eq!(
            extract_json("Sure! {\"a\":3} Hope it helps"),
            Ok(json!({"a":3}))
        );
        assert!(extract_json("no json here").is_err());
    }
}
