//! Values a request was blocked for, and the sentences that list them.

use serde::Serialize;

/// A raw value found in an outbound request, shown masked.
//
// The privacy guard reports these (as `GuardMatch`, its name on the wire and
// in TypeScript); they live here so a provider error can carry them without
// the back ends depending on the guard.
#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "ts", ts(rename = "GuardMatch"))]
#[cfg_attr(feature = "openapi", schema(as = GuardMatch))]
pub struct BlockedValue {
    /// The matching text, masked (`John` → `Aaaa`).
    pub masked: String,
    /// Where the value came from: `sales.csv, column "customer"`.
    pub source: String,
    /// Whether it is in text the user typed (which the user may confirm).
    #[serde(skip)]
    pub in_user_text: bool,
    /// In text the user typed: where the value is in that message, as
    /// UTF-16 offsets `[start, end)`, so the confirmation can show the
    /// user's own words in place without this answer echoing them.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub at: Option<[u32; 2]>,
    /// Which part of the request holds it, in words (`your words`, `an
    /// earlier reply of the LLM`, `text Maskflow made while running…`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub part: Option<String>,
    /// Whether the value identifies someone or a record by its column's
    /// profile (an id, a name, an e-mail…), not a category or a measure.
    #[serde(skip)]
    pub identifying: bool,
}

/// The sentence for a blocked request.
pub fn blocked_message(matches: &[BlockedValue]) -> String {
    let hint = if !matches.is_empty() && matches.iter().all(|m| m.in_user_text) {
        "; if you meant to send it, send the message again with confirmation"
    } else {
        ""
    };
    format!(
        "the request was not sent: it contains values from your files: {}{hint}",
        listed(matches)
    )
}

/// The sentence for a blocked automatic step, one Maskflow takes by itself
/// (the builder's repair after a failed test or an unusable reply): there
/// is no message of the user's to confirm, so it says what the user can do.
pub fn blocked_repair_message(matches: &[BlockedValue]) -> String {
    format!(
        "the automatic repair was not sent to the LLM: its feedback (the test run's error \
         output, or the builder's reply it answers) contains values from your files: {}. \
         Nothing left your machine and the build stopped here. To go on, send a message \
         that says in your own words what to change, without those values: Maskflow then \
         builds a new version",
        listed(matches)
    )
}

/// The first matches, masked, with where they came from.
fn listed(matches: &[BlockedValue]) -> String {
    let shown: Vec<String> = matches
        .iter()
        .take(5)
        .map(|m| match &m.part {
            Some(part) => format!("{} (from {}; in {part})", m.masked, m.source),
            None => format!("{} (from {})", m.masked, m.source),
        })
        .collect();
    let more = matches.len().saturating_sub(5);
    if more > 0 {
        format!("{} and {more} more", shown.join(", "))
    } else {
        shown.join(", ")
    }
}
