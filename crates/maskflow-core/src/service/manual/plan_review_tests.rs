//! A build's plan and review prompts cut off by a restart (issue 31 point
//! 3 on the manual back end): the planner's prompt, then the reviewer's,
//! are each left behind by a service that stopped; the next service lists
//! them as resumable, and the answer pasted there goes to the same call made
//! again, and the build goes on from it without asking anew.

use std::time::Duration;

use serde_json::json;

use super::tests::{create, open, prompt, runtime, send};
use crate::builder::options::BuildOptions;
use crate::builder::review::Verdict;
use crate::service::{GateChoice, GateRequest, Service};
use crate::versions::Status;
use crate::views::BuildView;
use maskflow_llm::manual::ManualPrompt;

/// The build's view once `done` holds (bounded wait; no timing asserted).
async fn build_when(s: &Service, wf: &str, done: impl Fn(&BuildView) -> bool) -> BuildView {
    for _ in 0..500 {
        let view = s.get_workflow(wf).expect("view");
        if let Some(b) = view.current_version.build.filter(|b| done(b)) {
            return b;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the build never got there: {:?}", s.get_workflow(wf));
}

fn text(p: &ManualPrompt) -> String {
    serde_json::to_string(&p.messages).expect("json")
}

/// The prompt left behind, listed again after the restart as resumable.
async fn listed_again(s: &Service, asked: &ManualPrompt) {
    let listed = prompt(s, "builder", &[]).await;
    assert_eq!(listed.id, asked.id, "{:?}", s.manual_prompts());
    let note = listed
        .interrupted
        .expect("listed as cut off by the restart");
    assert!(note.resumes, "{}", note.reason);
}

/// The ledgered builder call that took `reply`.
async fn taken(s: &Service, reply: &str) {
    for _ in 0..500 {
        let calls = s.ledger(None, 100, 0).expect("ledger");
        if calls
            .iter()
            .any(|e| e.role == "builder" && e.reply.as_deref() == Some(reply))
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("no builder call took {reply}");
}

#[test]
fn plan_and_review_prompts_cut_by_a_restart_resume_their_build() {
    let home = tempfile::tempdir().expect("tmp");
    let options = BuildOptions {
        plan: true,
        review: true,
        ai_approver: false,
    };
    // First run: the planner asks, and Maskflow stops.
    let (wf, planner) = runtime().block_on(async {
        let s = open(home.path());
        let (wf, _) = create(&s);
        s.set_build_options(&wf, options).expect("options");
        let message = send(&s, &wf, "Sum the amounts per client");
        let v = prompt(&s, "validator", &[]).await;
        s.answer_manual(&v.id, r#"{"feasible": true}"#)
            .expect("answer");
        let c = prompt(&s, "clarifier", &[]).await;
        s.answer_manual(&c.id, r#"{"needs_clarification": false}"#)
            .expect("answer");
        let _ = message.await;
        let planner = prompt(&s, "builder", &[]).await;
        assert!(text(&planner).contains("Maskflow's planner"), "{planner:?}");
        s.stopping();
        (wf, planner)
    });

    // Second run: the plan's answer resumes the build at its plan gate;
    // the code is built from it, and the reviewer asks; Maskflow stops.
    let plan = json!({"steps": ["Read the amounts", "Sum them per client"],
                      "inputs": ["amounts.csv"], "outputs": ["totals.csv"]})
    .to_string();
    let reviewer = runtime().block_on(async {
        let s = open(home.path());
        listed_again(&s, &planner).await;
        s.answer_manual(&planner.id, &plan).expect("answer");
        taken(&s, &plan).await;
        let gate = build_when(&s, &wf, |b| b.pending_gate).await;
        let proposed = gate.pending_plan.expect("the plan waits for the person");
        assert!(proposed.contains("Sum them per client"), "{proposed}");
        assert!(s.manual_prompts().is_empty(), "nothing asked again");
        let vid = s.get_workflow(&wf).expect("view").current_version.id;
        let edited = format!("{proposed}\n- Round the totals to cents");
        let request = GateRequest {
            decision: GateChoice::Approve,
            feedback: None,
            bindings: None,
            plan: Some(edited),
        };
        s.resolve_gate(&wf, &vid, request)
            .expect("approve the plan");
        let generation = prompt(&s, "builder", &[&planner.id]).await;
        assert!(
            text(&generation).contains("Round the totals to cents"),
            "the builder follows the edited plan: {generation:?}"
        );
        let code = crate::service::tests::good_build().to_string();
        s.answer_manual(&generation.id, &code).expect("answer");
        let reviewer = prompt(&s, "builder", &[&planner.id, &generation.id]).await;
        assert!(text(&reviewer).contains("review"), "{reviewer:?}");
        s.stopping();
        reviewer
    });

    // Third run: the review's answer resumes the build, which goes on to
    // its test and the person's approval with the reviewer's note.
    runtime().block_on(async {
        let s = open(home.path());
        listed_again(&s, &reviewer).await;
        let verdict = json!({"verdict": "approve", "notes": "Sums per client as asked."});
        s.answer_manual(&reviewer.id, &verdict.to_string())
            .expect("answer");
        for _ in 0..500 {
            if s.get_workflow(&wf).expect("view").current_version.status != Status::Building {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let view = s.get_workflow(&wf).expect("view");
        let v = &view.current_version;
        assert_eq!(v.status, Status::PendingUserApproval, "{view:?}");
        let build = v.build.as_ref().expect("build");
        let notes: Vec<_> = build
            .reviews
            .iter()
            .filter(|r| r.subject == "script")
            .collect();
        assert_eq!(notes.len(), 1, "one review, not two: {:?}", build.reviews);
        assert_eq!(notes[0].verdict, Some(Verdict::Approve));
        assert_eq!(notes[0].notes, "Sums per client as asked.");
        assert!(
            build
                .plan
                .as_deref()
                .is_some_and(|p| p.contains("Round the totals")),
            "{build:?}"
        );
        assert!(s.manual_prompts().is_empty(), "{:?}", s.manual_prompts());
    });
}
