// What the AI reviewer said about a build (issue 31 point 3): each review
// of the plan or of a script, its verdict, whether it decided the gate,
// and its notes; and the approved plan the builder followed. The notes
// are the LLM's words: shown as plain text, never as markup or links.
import type { BuildView, ReviewNote, Verdict } from "../generated";

const VERDICT: Record<Verdict, string> = {
  approve: "approved",
  request_changes: "asked for changes",
};

function verdictOf(r: ReviewNote): string {
  return r.verdict ? VERDICT[r.verdict] : "gave no usable verdict";
}

/** The reviews and the approved plan of a build (nothing when it has neither). */
export function BuildReviews({ build }: { build: BuildView | undefined }) {
  const reviews = build?.reviews ?? [];
  if (!build || (reviews.length === 0 && !build.plan)) return null;
  return (
    <div class="build-reviews" data-testid="build-reviews">
      {build.plan && (
        <details>
          <summary>The approved plan</summary>
          <pre class="plan" data-testid="approved-plan">
            {build.plan}
          </pre>
        </details>
      )}
      {reviews.length > 0 && (
        <ul class="reviews" aria-label="AI reviews">
          {reviews.map((r, i) => (
            <li key={i} data-testid="review" data-verdict={r.verdict ?? "none"}>
              <strong>
                The reviewer {verdictOf(r)} the {r.subject} (iteration {r.iteration})
              </strong>
              <span class="muted small">{r.decided_gate ? " · it decided the gate" : " · advice"}</span>
              <p class="review-notes">{r.notes}</p>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
