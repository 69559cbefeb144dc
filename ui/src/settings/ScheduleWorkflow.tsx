// "Schedule this workflow" on a workflow's Run tab: the Settings card's
// form with the workflow chosen; the new schedule is then listed (paused,
// removed) in Settings → Schedules.
import { useState } from "preact/hooks";
import { useTransport } from "../context";
import type { ScheduleInput } from "../generated";
import { noticeOf, type Notice } from "../lib/errors";
import { toApiError } from "../transport";
import { NoticeBanner } from "../components/ui";
import { ScheduleForm } from "./SchedulesCard";

/** A folded section that schedules the approved workflow `workflowId`. */
export function ScheduleWorkflow({ workflowId }: { workflowId: string }) {
  const transport = useTransport();
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState<Notice | null>(null);
  const [made, setMade] = useState<string | null>(null);

  async function create(input: ScheduleInput) {
    setBusy(true);
    try {
      const view = await transport.createSchedule(input);
      setMade(view.name);
      setNotice(null);
    } catch (e) {
      setNotice(noticeOf(toApiError(e)));
    } finally {
      setBusy(false);
    }
  }

  return (
    <details class="schedule-workflow" data-testid="schedule-workflow">
      <summary>Schedule this workflow</summary>
      {notice && <NoticeBanner notice={notice} onClose={() => setNotice(null)} />}
      {made && (
        <p class="small" role="status">
          Scheduled “{made}”. Settings → Schedules lists it, with its next run.
        </p>
      )}
      <ScheduleForm busy={busy} onCreate={create} workflowId={workflowId} />
    </details>
  );
}
