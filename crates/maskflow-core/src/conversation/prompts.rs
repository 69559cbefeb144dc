//! The prompts of the validator, clarifier and builder, and the JSON schemas
//! of their replies. Pure functions: built only from the approved (masked)
//! extracts and the conversation, never from files or the database.
//!
//! Each system prompt is assembled from typed parts ([`Part`], issue #38):
//! Maskflow's fixed wording is [`Part::instructions`], what is rendered from
//! the approved masked extracts (their samples, names and profile figures)
//! is [`Part::extract`], the user's house rules are their words and the
//! workflow as it stands is the LLM's earlier reply. The guard judges each
//! part by its kind, so a figure of the profile that equals a cell, or a
//! word of the instructions, is never taken for a value of the files.

use serde_json::{Value, json};

use maskflow_llm::{ChatMessage, ChatRole, LlmRequest, Part, Role};

/// How a generated script is run: the runner's contract, written once in
/// [`maskflow_runner::CONTRACT`].
pub const RUNNER_CONTRACT: &str = maskflow_runner::CONTRACT;

/// The extracts block as parts: Maskflow's wording, and the masked
/// extracts with their profile (masked samples, names as sent, figures
/// Maskflow computed) and join keys.
pub(crate) fn extracts_parts(extracts: &Value) -> Vec<Part> {
    let mut extracts = extracts.clone();
    let notes = crate::data_notes::take(&mut extracts);
    let joins = super::profile_text::join_keys(&extracts);
    let shown = super::profile_text::compact(&extracts);
    // One compact line per file: indentation costs a small model's context
    // window tokens and tells it nothing.
    let pretty = match shown.as_array() {
        Some(files) => format!(
            "[\n{}\n]",
            files
                .iter()
                .map(Value::to_string)
                .collect::<Vec<_>>()
                .join(",\n")
        ),
        None => shown.to_string(),
    };
    let profiled = if pretty.contains("\"profile\":") {
        ". A table's `profile` covers every row, not only the samples: rows read, duplicate rows, unique keys, \
and per column its type (with the date format), empty cells (null), placeholders meaning missing (by Maskflow's word for them), distinct values, \
lengths, the numeric range rounded to two significant figures (~), every date and number format with its count, \
and masked shapes with counts — a format or shape held by few rows is a minority the script must parse too, never drop or misread"
    } else {
        ""
    };
    let titled = if pretty.contains("\"header_row\":") {
        ". A table with `header_row` has a title block: its header is that row (1-based; a sheet's rows as Excel numbers them, a delimited file's records), \
the rows above it (`rows_above`, masked) are titles and notes, not data — read the table from that header (pandas `header=`/`skiprows=`), never the first row"
    } else {
        ""
    };
    let united = if pretty.contains("\"units\":") {
        ". `units` are the units and scale the title block or the header names (`in thousands`: every amount is in thousands; `per tonne`; a currency) — \
say them in the output's column names or scale the values as the request asks"
    } else {
        ""
    };
    let switchable = if pretty.contains("\"switchable_categories\":") {
        ". `switchable_categories` names columns of few values whose real values the user can show you with a switch in the approval view \
(the column and its number of values): their spellings are not guessed — the clarifier may ask the user to switch one on"
    } else {
        ""
    };
    let mut parts = vec![
        Part::instructions(format!(
            "The user's files, as masked extracts. Every sample value is masked \
(uppercase letters became A, lowercase a, digits #, punctuation kept), so you see the shape of the data, never its values. \
Column and sheet names are real, except a name that looked like a value (a person, a company, an e-mail address, a date, an ID, a number): \
it is masked the same way (e.g. `Aaaa Aaaaa`), so it is not the file's real name and must never be written literally in the script; \
refer to such a column by its position (`df.columns[2]`, `df.iloc[:, 2]`) or by iterating over the columns, and to such a sheet by its index{titled}{united}{switchable}{profiled}:\n```json\n"
        )),
        Part::extract(pretty),
        Part::instructions("\n```"),
    ];
    if !joins.is_empty() {
        parts.push(Part::instructions("\n"));
        parts.push(Part::extract(joins));
    }
    if !notes.is_empty() {
        parts.push(Part::instructions(
            "\nThe user's notes on their data, in their own words: what they know that the extracts cannot show \
(units, scale, what codes mean, what to leave out); the script follows them:\n",
        ));
        for n in notes {
            parts.push(Part::instructions("- "));
            parts.push(Part::extract(n.place));
            parts.push(Part::instructions(": "));
            parts.push(Part::user_words(n.text));
            parts.push(Part::instructions("\n"));
        }
    }
    parts
}

fn schema_block(schema: &Value) -> String {
    format!(
        "Reply with only one JSON object, no prose and no code fence, matching this JSON schema:\n```json\n{schema}\n```"
    )
}

/// How a builder prompt short of room (a small model's context window) is
/// cut: the packages named in one line, and the reply's schema given by
/// reference when the back end gives the model the schema itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Compact {
    /// Whether the schema's written copy goes (`Provider::takes_schema`).
    pub schema_by_reference: bool,
}

/// The reply's instruction without the schema written out, for a back end
/// that gives the model the schema itself (`Provider::takes_schema`) when
/// the prompt is short of room.
const SCHEMA_BY_REFERENCE: &str = "Reply with only one JSON object, no prose and no code fence, matching the JSON schema \
this request gives as the reply's format (its `execution.reads` lists every column the script reads, per table).";

fn request(role: Role, system: Vec<Part>, history: &[ChatMessage], schema: Value) -> LlmRequest {
    let mut messages = Vec::with_capacity(history.len() + 1);
    messages.push(ChatMessage::from_parts(ChatRole::System, system));
    messages.extend(
        history
            .iter()
            .filter(|m| m.role != ChatRole::System)
            .cloned(),
    );
    LlmRequest {
        role,
        messages,
        schema: Some(schema),
    }
}

/// The longest reason or question a user is shown: a few sentences. The
/// bound is in the schema so a back end sampling under it (the local
/// grammar) cannot ramble past the role's token budget (seen: SmolLM2
/// listing dates in `reason` until 512 tokens were spent); a digit can be
/// a token of its own, so it stays under the validator's default 512.
const MAX_VERDICT_CHARS: usize = 400;

/// The schema of the validator's reply.
pub fn feasibility_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "feasible": {"type": "boolean"},
            "reason": {"type": "string", "maxLength": MAX_VERDICT_CHARS, "description": "Why the task cannot be done (required when feasible is false)."}
        },
        "required": ["feasible"],
        "additionalProperties": false
    })
}

/// The schema of the clarifier's reply.
pub fn clarification_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "needs_clarification": {"type": "boolean"},
            "question": {"type": "string", "maxLength": MAX_VERDICT_CHARS, "description": "One question for the user (required when needs_clarification is true)."}
        },
        "required": ["needs_clarification"],
        "additionalProperties": false
    })
}

/// The schema of the builder's reply.
pub fn workflow_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": crate::conversation::spec::MAX_NAME_CHARS},
            "description": {"type": "string"},
            "script": {"type": "string", "description": "The complete Python source of script.py."},
            "fields": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$"},
                        "label": {"type": "string"},
                        "type": {"enum": ["file", "files", "text", "number", "boolean", "date", "choice"]},
                        "required": {"type": "boolean"},
                        "options": {"type": "array", "items": {"type": "string"}},
                        "accept": {"type": "array", "items": {"type": "string"}}
                    },
                    "required": ["name", "label", "type", "required"],
                    "additionalProperties": false
                }
            },
            "execution": {
                "type": "object",
                "properties": {
                    "runtime": {"const": "python3"},
                    "entrypoint": {"const": "script.py"},
                    "requirements": {"type": "array", "items": {"type": "string"}},
                    "outputs": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {"name": {"type": "string"}, "description": {"type": "string"}},
                            "required": ["name", "description"],
                            "additionalProperties": false
                        }
                    },
                    "reads": {
                        "type": "array",
                        "description": "Every table the script opens (a file's own; a sheet by `sheet` or `sheet_index`; a PDF or Word table by `table`; 0-based) with every column it uses, by `name`, or by `position` where the script indexes it. Maskflow checks them before each re-run on next period's files and refuses only when something read changed; a column used but not listed fails the test.",
                        "items": {
                            "type": "object",
                            "properties": {
                                "input": {"type": "string"},
                                "sheet": {"type": "string"},
                                "sheet_index": {"type": "integer", "minimum": 0},
                                "table": {"type": "integer", "minimum": 0},
                                "columns": {
                                    "type": "array",
                                    "items": {
                                        "type": "object",
                                        "properties": {
                                            "name": {"type": "string"},
                                            "position": {"type": "integer", "minimum": 0},
                                            "mapped": {"type": "boolean", "description": "The script maps this column's values one by one (categories)."},
                                            "format": {"type": "string", "description": "The date layout the script parses, e.g. %d/%m/%Y."},
                                            "unique": {"type": "boolean", "description": "The script expects this column to be a unique key."}
                                        },
                                        "additionalProperties": false
                                    }
                                }
                            },
                            "required": ["input", "columns"],
                            "additionalProperties": false
                        }
                    },
                    "drift": {
                        "type": "array",
                        "description": "What the request says changes every period: new_categories (a mapped column gains values), row_count (the output's size varies a lot).",
                        "items": {"enum": crate::conversation::spec::DRIFTS}
                    }
                },
                "required": ["runtime", "entrypoint", "requirements", "outputs"],
                "additionalProperties": false
            }
        },
        "required": ["name", "description", "script", "fields", "execution"],
        "additionalProperties": false
    })
}

/// The validator's request: can a local Python script do this task?
pub fn validator_request(extracts: &Value, history: &[ChatMessage]) -> LlmRequest {
    let schema = feasibility_schema();
    let mut system = vec![Part::instructions(format!(
        "You are Maskflow's validator. Maskflow turns a user's request into a Python script that runs locally on the user's files, \
with the Python standard library and a curated set of packages ({}) and no network access.\n\
Decide whether such a script can do the user's task. It is NOT feasible when it needs machine-learning training or inference, \
image or speech recognition, an LLM, anything from the internet (APIs, web pages, downloads), or data that is not in the files. \
Data cleaning, filtering, merging, reshaping, aggregating, computing, charts, and reading or writing CSV, Excel, PDF and Word files are feasible.\n\n",
        curated_names(),
    ))];
    system.extend(extracts_parts(extracts));
    system.push(Part::instructions(format!("\n\n{}", schema_block(&schema))));
    request(Role::Validator, system, history, schema)
}

/// The clarifier's request: is anything unclear before building?
pub fn clarifier_request(extracts: &Value, history: &[ChatMessage]) -> LlmRequest {
    let schema = clarification_schema();
    let mut system = vec![Part::instructions(
        "You are Maskflow's clarifier. The user wants a Python script that runs locally on files like these. \
Read the whole conversation. If something essential to write the script is still ambiguous (which columns, how to match rows, \
what to do with missing values, the output format), ask exactly one short question. If you know enough, say so.\n\n",
    )];
    let checklist = clarifier_checklist(extracts);
    if !checklist.is_empty() {
        system.push(Part::instructions(checklist));
    }
    system.extend(extracts_parts(extracts));
    system.push(Part::instructions(format!("\n\n{}", schema_block(&schema))));
    request(Role::Clarifier, system, history, schema)
}

/// What the clarifier checks besides the request itself, when the
/// profiles show it (#40 point 8): duplicate rows, and columns written in
/// more than one date or number format. Maskflow's wording only.
fn clarifier_checklist(extracts: &Value) -> String {
    let mut duplicates = false;
    let mut minority = false;
    let mut visit = |p: &Value| {
        duplicates |= p["duplicate_rows"].as_u64().unwrap_or(0) > 0;
        minority |= p["columns"].as_array().into_iter().flatten().any(|c| {
            c["formats"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|f| {
                    let f = f["format"].as_str().unwrap_or("");
                    !f.starts_with("text, ") && f != "not a date" && f != "not a number"
                })
                .count()
                >= 2
        });
    };
    for f in extracts.as_array().into_iter().flatten() {
        visit(&f["profile"]);
        for s in f["sheets"].as_array().into_iter().flatten() {
            visit(&s["profile"]);
        }
    }
    let mut items = Vec::new();
    if duplicates {
        items.push("the profile shows duplicate rows: if the answer depends on whether they are kept or dropped, and the conversation does not say, ask");
    }
    if minority {
        items.push("a column is written in more than one date or number format (see its `formats`): if the request does not settle how to read the minority one (day or month first, a decimal comma), ask");
    }
    if items.is_empty() {
        return String::new();
    }
    format!(
        "Check also: {}. Ask only what the extracts below cannot answer.\n\n",
        items.join("; ")
    )
}

/// The curated packages' names, comma-separated.
fn curated_names() -> String {
    maskflow_pyenv::CURATED
        .iter()
        .map(|(n, _)| *n)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The builder's request: write the workflow.
pub fn builder_request(extracts: &Value, history: &[ChatMessage]) -> LlmRequest {
    builder_request_with_rules(extracts, history, "")
}

/// The builder's request with the user's house rules that apply to it
/// (rendered by [`crate::conversation::house_rules::for_request`]; "" for none).
pub fn builder_request_with_rules(
    extracts: &Value,
    history: &[ChatMessage],
    house_rules: &str,
) -> LlmRequest {
    builder_request_for(extracts, history, house_rules, None, None, None)
}

/// The builder's request, with the workflow as it stands when an edit or
/// a repair starts from one (its script, inputs and outputs), and the
/// inputs' sizes and the run's limits when the engine knows them.
/// `compact` cuts Maskflow's own text for a prompt short of room.
pub fn builder_request_for(
    extracts: &Value,
    history: &[ChatMessage],
    house_rules: &str,
    current: Option<&crate::conversation::spec::WorkflowSpec>,
    sizes: Option<&super::sizes::RunSizes>,
    compact: Option<Compact>,
) -> LlmRequest {
    let schema = workflow_schema();
    // A prompt short of room names the packages without what each is for.
    let packages = match compact {
        None => maskflow_pyenv::curated::prompt_text(),
        Some(_) => maskflow_pyenv::curated::prompt_line(),
    };
    let mut system = vec![Part::instructions(format!(
        "You are Maskflow's builder. Write the workflow the conversation asks for: a short name, a one-sentence description, \
the complete Python script, its inputs (`fields`, usually one `file` field per uploaded file) and its `execution`.\n\
{RUNNER_CONTRACT}\n\n{packages}\n\n"
    ))];
    // After the contract and the packages, which the rules may not override.
    if !house_rules.is_empty() {
        system.push(Part::user_words(house_rules));
        system.push(Part::instructions("\n\n"));
    }
    system.extend(extracts_parts(extracts));
    system.push(Part::instructions("\n\n"));
    if let Some(sizes) = sizes {
        system.extend(super::sizes::sizes_parts(extracts, sizes));
        system.push(Part::instructions("\n\n"));
    }
    system.extend(workflow_blocks(extracts, current));
    system.push(Part::instructions(match compact {
        Some(Compact {
            schema_by_reference: true,
        }) => SCHEMA_BY_REFERENCE.to_owned(),
        _ => schema_block(&schema),
    }));
    let mut req = request(Role::Builder, system, history, schema);
    req.messages.push(ChatMessage::from_parts(
        ChatRole::User,
        vec![Part::instructions("Build the workflow now.")],
    ));
    req
}

/// The input name of each file and the workflow as it stands, each
/// followed by a blank line (nothing when neither applies).
fn workflow_blocks(
    extracts: &Value,
    current: Option<&crate::conversation::spec::WorkflowSpec>,
) -> Vec<Part> {
    let mut out = Vec::new();
    let inputs = super::current::inputs_parts(extracts);
    if !inputs.is_empty() {
        out.extend(inputs);
        out.push(Part::instructions("\n\n"));
    }
    if let Some(c) = current {
        out.extend(super::current::current_parts(c));
        out.push(Part::instructions("\n\n"));
    }
    out
}

/// The repair message lives with the structured replies it serves.
pub use maskflow_llm::structured::repair_prompt;

#[cfg(test)]
mod tests {
    use super::*;

    fn history() -> Vec<ChatMessage> {
        vec![
            ChatMessage::new(ChatRole::User, "merge these files by the date column"),
            ChatMessage::new(ChatRole::Assistant, "Keep all columns?"),
            ChatMessage::new(ChatRole::User, "yes"),
        ]
    }

    #[test]
    fn prompts_carry_extracts_history_and_schema() {
        let extracts = json!([{"filename": "sales.csv", "columns": ["date", "revenue"], "sample_rows": [["####-##-##", "$#,###.##"]], "row_count": 3}]);
        for req in [
            validator_request(&extracts, &history()),
            clarifier_request(&extracts, &history()),
            builder_request(&extracts, &history()),
        ] {
            let system = &req.messages[0];
            assert_eq!(system.role, ChatRole::System);
            assert!(system.content.contains("sales.csv"));
            assert!(system.content.contains("\"$#,###.##\""));
            assert!(system.content.contains("\"type\":\"object\""));
            assert_eq!(req.messages[1..4], history()[..]);
            assert!(req.schema.is_some());
        }
        let builder = builder_request(&extracts, &history());
        assert!(builder.messages[0].content.contains("inputs.json"));
        for (name, _) in maskflow_pyenv::CURATED {
            assert!(builder.messages[0].content.contains(name), "{name}");
        }
        assert!(builder.messages[0].content.contains("approval"));
        assert_eq!(builder.role, Role::Builder);
    }

    #[test]
    fn the_builder_prompt_carries_the_house_rules_before_the_extracts() {
        let extracts = json!([{"filename": "sales.csv", "columns": ["date"], "sample_rows": [], "row_count": 0}]);
        let plain = builder_request(&extracts, &history());
        let rules = "The user's house rules: …\n\n### python\nUse pathlib.";
        let with = builder_request_with_rules(&extracts, &history(), rules);
        let system = &with.messages[0].content;
        let at = system
            .find("Use pathlib.")
            .expect("rules in the system prompt");
        assert!(at < system.find("sales.csv").expect("extracts"));
        assert!(at > system.find("inputs.json").expect("contract"));
        assert_eq!(
            system.replace(&format!("{rules}\n\n"), ""),
            plain.messages[0].content
        );
        assert_eq!(with.messages[1..], plain.messages[1..]);
    }
}

#[cfg(test)]
mod snapshots;
