// The "Schedules" card: approved workflows and flows run by a cron
// expression or by new files in a watched folder, while the app or
// `maskflow serve` is up. Lists them with their last run, last error, next
// run and whether the outputs they placed are stale;
// pauses, resumes and removes them; and creates one.
import { useEffect, useState } from "preact/hooks";
import { useTransport } from "../context";
import type { FlowSummary, ScheduleInput, ScheduleView, WorkflowSummary } from "../generated";
import { noticeOf, type Notice } from "../lib/errors";
import { toApiError } from "../transport";
import { NoticeBanner } from "../components/ui";

/** A time as the user's local date and time. */
function when(at: string | undefined | null): string {
  return at ? new Date(at).toLocaleString() : "—";
}

/** The Settings section listing and creating schedules. */
export function SchedulesCard() {
  const transport = useTransport();
  const [list, setList] = useState<ScheduleView[] | null>(null);
  const [notice, setNotice] = useState<Notice | null>(null);
  const [busy, setBusy] = useState(false);

  async function act(work: () => Promise<void>) {
    setBusy(true);
    try {
      await work();
      setNotice(null);
    } catch (e) {
      setNotice(noticeOf(toApiError(e)));
    } finally {
      setBusy(false);
    }
  }
  useEffect(() => {
    const load = () => transport.listSchedules().then(setList, (e) => setNotice(noticeOf(toApiError(e))));
    void load();
    // A schedule that fires while the card is open shows its outcome.
    return transport.onEvent((e) => {
      if (e.type === "schedule_ran") void load();
    });
  }, [transport]);

  const replace = (one: ScheduleView) => setList((all) => (all ?? []).map((s) => (s.id === one.id ? one : s)));

  return (
    <section class="card" aria-labelledby="schedules-h" data-testid="schedules-card">
      <div class="card-head">
        <h2 id="schedules-h">Schedules</h2>
      </div>
      <p class="small muted">
        Run an approved workflow or a flow at set times (cron, your local time) or on each new file in a folder, while Maskflow or <code>maskflow serve</code> is running.
        For a machine where neither stays up, <code>maskflow schedule install NAME</code> hands a timed schedule to the system's own scheduler.
      </p>
      {notice && <NoticeBanner notice={notice} onClose={() => setNotice(null)} />}
      {list && list.length === 0 && <p class="small" data-testid="schedules-empty">No schedules yet.</p>}
      {list && list.length > 0 && (
        <table class="table" data-testid="schedules-list">
          <thead>
            <tr>
              <th>Name</th>
              <th>Runs</th>
              <th>When</th>
              <th>Last run</th>
              <th>Next run</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {list.map((s) => (
              <tr key={s.id} data-testid={`schedule-${s.name}`}>
                <td>
                  {s.name} {s.slug !== s.name && <code class="small" title="Its safe file and unit name">{s.slug}</code>} {s.paused && <span class="badge">paused</span>}
                </td>
                <td>
                  {s.target_kind} {s.target_label}
                </td>
                <td>{s.cron ? <code>{s.cron}</code> : <>new files in {s.folder}</>}</td>
                <td>
                  {when(s.last_run_at)} {s.last_status && <span class="small">({s.last_status})</span>}
                  {s.last_error && (
                    <div class="small warn-text" data-testid="schedule-error">
                      {s.failures} failure{s.failures === 1 ? "" : "s"} in a row: {s.last_error}
                    </div>
                  )}
                  {s.stale && (
                    <div class="small" data-testid="schedule-stale">
                      <span class="badge">stale</span> The outputs it placed last are from {when(s.last_success_at)}, before the run that did not succeed.
                    </div>
                  )}
                </td>
                <td data-testid="schedule-next">{s.paused ? "paused" : s.next_run_at ? when(s.next_run_at) : s.folder ? "on a new file" : "—"}</td>
                <td>
                  <button
                    type="button"
                    class="button small"
                    disabled={busy}
                    onClick={() =>
                      void act(async () =>
                        replace(await (s.paused ? transport.resumeSchedule(s.id) : transport.pauseSchedule(s.id))),
                      )
                    }
                  >
                    {s.paused ? "Resume" : "Pause"}
                  </button>{" "}
                  <button
                    type="button"
                    class="button small danger"
                    disabled={busy}
                    onClick={() => void act(async () => setList(await transport.deleteSchedule(s.id)))}
                  >
                    Remove
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <ScheduleForm busy={busy} onCreate={(input) => act(async () => {
        const made = await transport.createSchedule(input);
        setList((all) => [...(all ?? []), made].sort((a, b) => a.name.localeCompare(b.name)));
      })} />
    </section>
  );
}

/** The small form that creates a schedule; `workflowId` preselects a workflow. */
export function ScheduleForm({ busy, onCreate, workflowId }: { busy: boolean; onCreate: (input: ScheduleInput) => Promise<void>; workflowId?: string }) {
  const transport = useTransport();
  const [workflows, setWorkflows] = useState<WorkflowSummary[]>([]);
  const [flows, setFlows] = useState<FlowSummary[]>([]);
  const [target, setTarget] = useState(workflowId ? `workflow:${workflowId}` : "");
  const [kind, setKind] = useState<"cron" | "folder">("cron");
  const [name, setName] = useState("");
  const [cron, setCron] = useState("0 7 * * *");
  const [folder, setFolder] = useState("");
  const [output, setOutput] = useState("");

  useEffect(() => {
    transport.listWorkflows().then((all) => setWorkflows(all.filter((w) => w.active_version_id)), () => setWorkflows([]));
    transport.listFlows().then((l) => setFlows(l.flows.filter((f) => !f.disabled)), () => setFlows([]));
  }, [transport]);

  async function submit(e: Event) {
    e.preventDefault();
    const [what, id] = [target.slice(0, target.indexOf(":")), target.slice(target.indexOf(":") + 1)];
    await onCreate({
      name: name.trim(),
      workflow: what === "workflow" ? id : undefined,
      flow: what === "flow" ? id : undefined,
      cron: kind === "cron" ? cron : undefined,
      folder: kind === "folder" ? folder : undefined,
      output_folder: output.trim() || undefined,
    });
  }

  return (
    <form class="schedule-form" data-testid="schedule-form" onSubmit={(e) => void submit(e)}>
      <h3>New schedule</h3>
      <label>
        <span>Name</span>
        <input name="name" value={name} required placeholder="morning report" onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <label>
        <span>Runs</span>
        <select name="target" value={target} required onChange={(e) => setTarget(e.currentTarget.value)}>
          <option value="">Choose an approved workflow or a flow…</option>
          {workflows.map((w) => (
            <option key={w.id} value={`workflow:${w.id}`}>
              Workflow: {w.name ?? w.id}
            </option>
          ))}
          {flows.map((f) => (
            <option key={f.name} value={`flow:${f.name}`}>
              Flow: {f.name}
            </option>
          ))}
        </select>
      </label>
      <fieldset>
        <label class="check">
          <input type="radio" name="kind" checked={kind === "cron"} onChange={() => setKind("cron")} />
          <span>At set times (cron)</span>
        </label>
        <label class="check">
          <input type="radio" name="kind" checked={kind === "folder"} onChange={() => setKind("folder")} />
          <span>On each new file in a folder (workflows)</span>
        </label>
      </fieldset>
      {kind === "cron" ? (
        <label>
          <span>Cron (minute hour day month weekday)</span>
          <input name="cron" value={cron} required onInput={(e) => setCron(e.currentTarget.value)} />
        </label>
      ) : (
        <label>
          <span>Folder to watch (absolute path)</span>
          <input name="folder" value={folder} required placeholder="/home/me/Inbox" onInput={(e) => setFolder(e.currentTarget.value)} />
        </label>
      )}
      <label>
        <span>Output folder (optional)</span>
        <input name="output" value={output} placeholder={kind === "folder" ? "next to each file" : "the run's own folder"} onInput={(e) => setOutput(e.currentTarget.value)} />
      </label>
      <button type="submit" class="button" disabled={busy}>
        Add schedule
      </button>
    </form>
  );
}
