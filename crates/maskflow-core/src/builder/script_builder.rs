//! The script-builder profile: the builder LLM writes a workflow (name,
//! description, `script.py`, `fields`, `execution`); the auto-test on the
//! real files decides whether it passes. Pure, like every profile.

use serde_json::{Value, json};

use super::profile::{
    ProcessingResult, ProcessingStatus, Profile, ProfileContext, TestOutcome, WriteOp, WritePlan,
};
use crate::conversation::spec::WorkflowSpec;
use crate::conversation::{house_rules, prompts};
use maskflow_llm::{ChatMessage, ChatRole, LlmRequest, Part, parse_reply};

/// The profile's key.
pub const KEY: &str = "script-builder";

/// Builds a Python workflow script.
#[derive(Debug, Default, Clone, Copy)]
pub struct ScriptBuilder;

fn processed(reply: &str) -> ProcessingResult {
    match parse_reply::<WorkflowSpec>(reply, &WorkflowSpec::check) {
        Ok(spec) => {
            let fields = serde_json::to_string_pretty(&spec.fields).unwrap_or_default();
            ProcessingResult {
                status: ProcessingStatus::Success,
                write_plan: Some(WritePlan {
                    writes: vec![
                        WriteOp {
                            path: "script.py".into(),
                            content: spec.script.clone(),
                        },
                        WriteOp {
                            path: "fields.json".into(),
                            content: fields,
                        },
                    ],
                }),
                metadata: json!({ "spec": serde_json::to_value(&spec).unwrap_or(Value::Null) }),
            }
        }
        Err(reason) => ProcessingResult {
            status: ProcessingStatus::Failed,
            write_plan: None,
            metadata: json!({ "reason": reason }),
        },
    }
}

/// The house rules that apply to this build: its conversation, its files
/// and, when revising, the outputs of the workflow being revised.
fn rules_for(ctx: &ProfileContext) -> String {
    let outputs: Vec<String> = ctx
        .previous
        .iter()
        .flat_map(|p| p.execution.outputs.iter().map(|o| o.name.clone()))
        .collect();
    house_rules::for_request(&ctx.house_rules, &ctx.history, &ctx.extracts, &outputs)
}

/// The builder's request, with the workflow as it stands when there is one.
fn builder_request(ctx: &ProfileContext) -> LlmRequest {
    prompts::builder_request_for(
        &ctx.extracts,
        &ctx.history,
        &rules_for(ctx),
        ctx.current.as_ref(),
        ctx.sizes.as_ref(),
        ctx.compact,
    )
}

/// Which file fed which input of the failed run (a line each), so a file
/// read as the wrong input shows; "" when the run had no inputs.
fn inputs_fed(test: &TestOutcome) -> String {
    if test.inputs.is_empty() {
        return String::new();
    }
    format!(
        "The files it was given, by input name:\n{}\n",
        crate::builder::inputs::describe(&test.inputs)
    )
}

/// Adds the shapes of the tables the script wrote (issue #28, point 8),
/// when it wrote any, to a review note or a repair feedback.
fn with_output_shape(text: String, test: &TestOutcome) -> String {
    match &test.output_shape {
        Some(shape) => format!("{}\n\n{shape}", text.trim_end()),
        None => text,
    }
}

/// When the run was stopped at the memory limit (issue 43 point 3): that
/// fact, the limit and the inputs' sizes (typed parts: Maskflow's wording
/// and its figures), and to move to out-of-core work rather than guess.
fn out_of_memory_parts(ctx: &ProfileContext) -> Vec<Part> {
    if !ctx.out_of_memory {
        return Vec::new();
    }
    let mut parts = vec![Part::instructions(
        "\n\nIt ran out of memory: the run was stopped at its memory limit. Do not only trim the script: \
move the heavy part out of core.\n",
    )];
    if let Some(sizes) = &ctx.sizes {
        parts.extend(crate::conversation::sizes::sizes_parts(
            &ctx.extracts,
            sizes,
        ));
        if !crate::conversation::sizes::large_for_memory(sizes) {
            parts.push(Part::instructions("\n"));
            parts.push(Part::instructions(
                maskflow_pyenv::curated::DUCKDB_OR_PANDAS,
            ));
        }
    } else {
        parts.push(Part::instructions(
            maskflow_pyenv::curated::DUCKDB_OR_PANDAS,
        ));
    }
    parts
}

impl Profile for ScriptBuilder {
    fn key(&self) -> &'static str {
        KEY
    }

    fn generation_prompt(&self, ctx: &ProfileContext) -> LlmRequest {
        builder_request(ctx)
    }

    fn process_generation(&self, _ctx: &ProfileContext, reply: &str) -> ProcessingResult {
        processed(reply)
    }

    fn process_review(&self, _ctx: &ProfileContext, test: &TestOutcome) -> ProcessingResult {
        let verdict = if test.passed { "pass" } else { "fail" };
        let note = if test.passed {
            format!(
                "# Review: passed\n\n{}\n\nOutputs: {}\n",
                test.summary,
                if test.output_names.is_empty() {
                    "none".to_owned()
                } else {
                    test.output_names.join(", ")
                }
            )
        } else {
            format!(
                "# Review: failed\n\n{}\n\nError output (masked):\n```\n{}\n```\n",
                test.summary, test.masked_error
            )
        };
        let feedback = with_output_shape(
            format!(
                "The script was run on the user's real files and failed: {}.\n{}Its error output, with every data value masked \
(letters became A/a, digits #):\n```\n{}\n```",
                test.summary,
                inputs_fed(test),
                test.masked_error
            ),
            test,
        );
        let note = with_output_shape(note, test);
        ProcessingResult {
            status: ProcessingStatus::Success,
            write_plan: None,
            metadata: json!({ "verdict": verdict, "feedback": feedback, "note": note }),
        }
    }

    fn revision_prompt(&self, ctx: &ProfileContext) -> LlmRequest {
        let mut req = builder_request(ctx);
        if let Some(prev) = &ctx.previous {
            req.messages.push(ChatMessage::new(
                ChatRole::Assistant,
                serde_json::to_string(prev).unwrap_or_default(),
            ));
        }
        // The feedback is made at run time (a test's output): checked strictly.
        let mut parts = vec![match &ctx.feedback {
            Some(f) => Part::runtime(f.as_str()),
            None => Part::instructions("Please revise the workflow."),
        }];
        parts.extend(out_of_memory_parts(ctx));
        parts.push(Part::instructions(
            "\n\nFix the workflow and reply with the complete corrected workflow JSON (the whole script, not a diff).",
        ));
        req.messages
            .push(ChatMessage::from_parts(ChatRole::User, parts));
        req
    }
}

#[cfg(test)]
mod out_of_memory_tests {
    use super::*;
    use crate::conversation::sizes::RunSizes;

    fn ctx(out_of_memory: bool) -> ProfileContext {
        ProfileContext {
            extracts: json!([{"filename": "orders.csv", "kind": "csv", "columns": ["country", "amount"],
                "sample_rows": [], "row_count": 12_000_000u64}]),
            history: vec![ChatMessage::new(ChatRole::User, "Total the amount per country")],
            previous: None,
            feedback: Some("The script was run on the user's real files and failed: stopped at the memory limit.".into()),
            iteration: 1,
            house_rules: Default::default(),
            current: None,
            sizes: Some(RunSizes {
                bytes: [("orders.csv".to_owned(), 309_237_645u64)].into(),
                limits: maskflow_runner::Limits::default(),
            }),
            out_of_memory,
            compact: None,
        }
    }

    fn repair_message(ctx: &ProfileContext) -> String {
        let req = ScriptBuilder.revision_prompt(ctx);
        req.messages
            .last()
            .map(|m| m.content.clone())
            .unwrap_or_default()
    }

    #[test]
    fn a_run_out_of_memory_is_repaired_with_the_limit_and_the_sizes() {
        let text = repair_message(&ctx(true));
        assert!(text.contains("It ran out of memory"), "{text}");
        assert!(text.contains("memory 2.0 GiB"), "the limit: {text}");
        assert!(
            text.contains("- orders.csv: 295 MiB (309,237,645 bytes), 12,000,000 rows"),
            "the sizes: {text}"
        );
        assert!(text.contains("use duckdb"), "{text}");
        // Its figures are Maskflow's, typed as such, not runtime text.
        let req = ScriptBuilder.revision_prompt(&ctx(true));
        let last = req.messages.last().expect("repair");
        assert!(
            last.parts()
                .iter()
                .any(|(k, t)| *k == maskflow_llm::PartKind::Extract && t.contains("309,237,645"))
        );
        // Another failure says none of it.
        let other = repair_message(&ctx(false));
        assert!(!other.contains("ran out of memory"), "{other}");
        assert!(!other.contains("use duckdb"), "{other}");
    }
}
