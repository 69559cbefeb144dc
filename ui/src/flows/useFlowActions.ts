// What the user can do on the Flows page: run, resume, stop and answer a run;
// import and export a flow; rename, archive and delete a run. Each action
// marks the page busy and shows what went wrong.
import { useState } from "preact/hooks";
import type { FlowBundle, FlowRunSummary, FlowSummary } from "../generated";
import { toApiError } from "../transport";
import { download } from "../lib/download";
import { go } from "../lib/router";
import type { FlowsData } from "./useFlowsData";

/** The Flows page's actions on the route's flow, with `folder` as the working folder of a new run. */
export function useFlowActions(data: FlowsData, flowName: string | undefined, folder: string) {
  const { api, run, setRun, mermaid, currentId, fail, setError, refreshFlows, refreshRuns, refreshRun } = data;
  const [busy, setBusy] = useState(false);
  const [deleting, setDeleting] = useState<FlowRunSummary | null>(null);

  const act = async (f: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await f();
    } catch (e) {
      fail(e);
    } finally {
      setBusy(false);
    }
  };

  const start = () =>
    act(async () => {
      if (!api || !flowName) return;
      const s = await api.runFlow(flowName, { working_folder: folder.trim() || null, conversationId: null, resumeStepPath: null });
      refreshRuns();
      go(`#/flows/${encodeURIComponent(flowName)}/${encodeURIComponent(s.conversationId)}`);
    });
  const resume = () =>
    act(async () => {
      if (!api || !flowName || !run) return;
      await api.runFlow(flowName, { working_folder: null, conversationId: run.conversationId, resumeStepPath: null });
      refreshRun(run.conversationId);
    });
  const stop = () =>
    act(async () => {
      if (api && run) setRun(await api.stopFlowRun(run.conversationId));
      refreshRuns();
    });
  const answer = (option: string, input?: string) =>
    act(async () => {
      if (!api || !run) return;
      await api.answerFlowRun(run.conversationId, { option, input: input ?? null });
      refreshRun(run.conversationId);
    });

  const onImport = (file: File) =>
    act(async () => {
      if (!api) return;
      const text = await file.text();
      const isBundle = text.trimStart().startsWith("{");
      const stem = file.name.replace(/\.[^.]+$/, "").replace(/[^A-Za-z0-9_-]/g, "_");
      // A JSON file is a bundle (it has `workflow`) or a flow file as kept in flows/.
      const json: unknown = isBundle ? JSON.parse(text) : null;
      const base =
        json === null
          ? { mermaid: text, name: stem }
          : typeof json === "object" && "workflow" in json
            ? { bundle: json as FlowBundle }
            : { flow: json, name: stem };
      let imported: FlowSummary;
      try {
        imported = await api.importFlow(base);
      } catch (e) {
        const err = toApiError(e);
        if (err.code !== "conflict" || !window.confirm(`${err.message}\n\nReplace it?`)) throw e;
        imported = await api.importFlow({ ...base, overwrite: true });
      }
      await refreshFlows();
      go(`#/flows/${encodeURIComponent(imported.name)}`);
    });

  const exportMermaid = () => flowName && download(`${flowName}.mmd`, mermaid, "text/plain");
  const exportBundle = () =>
    act(async () => {
      if (api && flowName) download(`${flowName}.json`, JSON.stringify(await api.exportFlow(flowName), null, 2), "application/json");
    });

  const rename = (r: FlowRunSummary) =>
    act(async () => {
      const title = window.prompt("Rename this run", r.title);
      if (api && title && title.trim()) await api.patchFlowRun(r.conversationId, { title: title.trim(), archived: null });
      refreshRuns();
    });
  const archive = (r: FlowRunSummary) =>
    act(async () => {
      if (api) await api.patchFlowRun(r.conversationId, { title: null, archived: !r.archived });
      refreshRuns();
    });
  // Two steps: the dialog shows what would be deleted, then confirms.
  const remove = (r: FlowRunSummary) => setDeleting(r);
  const removed = (r: FlowRunSummary) => {
    setDeleting(null);
    if (r.conversationId === currentId && flowName) go(`#/flows/${encodeURIComponent(flowName)}`);
    refreshRuns();
  };

  return { busy, deleting, setDeleting, start, resume, stop, answer, onImport, exportMermaid, exportBundle, rename, archive, remove, removed };
}

/** What useFlowActions returns. */
export type FlowActions = ReturnType<typeof useFlowActions>;
