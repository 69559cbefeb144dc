// Settings card of the run limits (issue 43 point 4): the memory and the
// time a workflow's script gets on each run, by default a share of this
// computer's memory and five minutes. The builder is told the limits in
// force, so a script is written for them.
import { useEffect, useState } from "preact/hooks";
import { NoticeBanner } from "../components/ui";
import { useTransport } from "../context";
import type { RunLimitsView } from "../generated";
import { noticeOf, type Notice } from "../lib/errors";
import { fieldsOf, gibLabel, inputOf, timeLabel, type LimitFields } from "../lib/runLimits";
import { toApiError } from "../transport";

/** The run limits' card. */
export function RunLimitsCard() {
  const transport = useTransport();
  const [view, setView] = useState<RunLimitsView | null>(null);
  const [fields, setFields] = useState<LimitFields>({ memoryGib: "", timeMinutes: "" });
  const [notice, setNotice] = useState<Notice | null>(null);
  const [saving, setSaving] = useState(false);

  function show(v: RunLimitsView) {
    setView(v);
    setFields(fieldsOf(v));
  }

  useEffect(() => {
    transport.runLimits().then(show, (e) => setNotice(noticeOf(toApiError(e))));
  }, [transport]);

  const parsed = view ? inputOf(fields, view) : null;
  const problem = parsed && "problem" in parsed ? parsed.problem : null;
  const unchanged = view != null && JSON.stringify(fields) === JSON.stringify(fieldsOf(view));

  async function save(e: Event) {
    e.preventDefault();
    if (!parsed || !("input" in parsed)) return;
    setSaving(true);
    try {
      show(await transport.setRunLimits(parsed.input));
      setNotice(null);
    } catch (err) {
      setNotice(noticeOf(toApiError(err)));
    } finally {
      setSaving(false);
    }
  }

  const machine = view?.machine_memory_bytes;
  return (
    <section class="card" aria-labelledby="run-limits-h" data-testid="run-limits-setting">
      <div class="card-head">
        <h2 id="run-limits-h">Run limits</h2>
      </div>
      {notice && <NoticeBanner notice={notice} onClose={() => setNotice(null)} />}
      {view && (
        <form class="limits-form" onSubmit={save}>
          <p class="small" data-testid="run-limits-status">
            Each run of a workflow's script gets {gibLabel(view.memory_bytes)} of memory and {timeLabel(view.time_seconds)}; past either it is
            stopped and the run says which. The AI writing a script is told these limits. Used from the next run and build.
          </p>
          <label>
            <span>Memory (GiB)</span>
            <input
              name="memory_gib"
              inputMode="decimal"
              placeholder={`default: ${gibLabel(view.default_memory_bytes)}`}
              value={fields.memoryGib}
              onInput={(e) => setFields({ ...fields, memoryGib: e.currentTarget.value })}
            />
            <span class="small muted">
              Empty: {gibLabel(view.default_memory_bytes)}
              {machine != null && <>, a share of this computer's {gibLabel(machine)}</>}.
            </span>
          </label>
          <label>
            <span>Time (minutes)</span>
            <input
              name="time_minutes"
              inputMode="decimal"
              placeholder={`default: ${timeLabel(view.default_time_seconds)}`}
              value={fields.timeMinutes}
              onInput={(e) => setFields({ ...fields, timeMinutes: e.currentTarget.value })}
            />
            <span class="small muted">Empty: {timeLabel(view.default_time_seconds)} (wall clock, and as much CPU time).</span>
          </label>
          {problem && (
            <p class="form-problem" role="alert">
              {problem}
            </p>
          )}
          <div class="form-actions">
            <button type="submit" class="button" disabled={saving || !!problem || unchanged}>
              {saving ? "Saving…" : "Save"}
            </button>
          </div>
        </form>
      )}
    </section>
  );
}
