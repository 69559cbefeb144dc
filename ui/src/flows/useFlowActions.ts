// What the user can do on the Flows page: run, resume, stop and answer a run;
// import and export a flow; rename, archive and delete a run. Each action
// marks the page busy and shows what went wrong.
import { useState } from "preact/hooks";
import type { FlowRunSummary, FlowSummary } from "../generated";
import { ApiError, toApiError } from "../transport";
import { download } from "../lib/download";
import { go } from "../lib/router";
import { importedNotice, readImport } from "./importFile";
import type { FlowsData } from "./useFlowsData";
import { decisionAnswer } from "./decision";
import { refusedResume } from "./resumePath";

/** The Flows page's actions on the route's flow, with `folder` as the working folder of a new run. */
export function useFlowActions(data: FlowsData, flowName: string | undefined, folder: string) {
  const { api, run, setRun, mermaid, currentId, fail, setError, refreshFlows, refreshRuns, refreshRun } = data;
  const [busy, setBusy] = useState(false);
  const [deleting, setDeleting] = useState<FlowRunSummary | null>(null);
  // What the last import brought in, shown until the next action.
  const [imported, setImported] = useState<string | null>(null);

  const act = async (f: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    setImported(null);
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
  // From a chosen step: a path the server refuses (seed 004's 400) is said in words.
  const resumeAt = (path: number[], text: string) =>
    act(async () => {
      if (!api || !flowName || !run) return;
      // `resumeStepPath` is i64 on the wire; plain numbers serialise as JSON numbers.
      const resumeStepPath = path as unknown as bigint[];
      try {
        await api.runFlow(flowName, { working_folder: null, conversationId: run.conversationId, resumeStepPath });
      } catch (e) {
        const err = toApiError(e);
        if (err.code !== "invalid_request") throw e;
        throw new ApiError(err.code, refusedResume(text, err.message), err.matches);
      }
      refreshRun(run.conversationId);
    });
  const stop = () =>
    act(async () => {
      if (api && run) setRun(await api.stopFlowRun(run.conversationId));
      refreshRuns();
    });
  const answer = (option: string, input?: string, result?: unknown) =>
    act(async () => {
      if (!api || !run) return;
      await api.answerFlowRun(run.conversationId, decisionAnswer(option, input, result));
      refreshRun(run.conversationId);
    });

  const onImport = (file: File) =>
    act(async () => {
      if (!api) return;
      const read = readImport(file.name, await file.text());
      const base = read.request;
      let summary: FlowSummary;
      try {
        summary = await api.importFlow(base);
      } catch (e) {
        const err = toApiError(e);
        if (err.code !== "conflict") throw new ApiError(err.code, `${file.name} was not imported: ${err.message}`, err.matches);
        if (!window.confirm(`${err.message}\n\nReplace it?`)) return;
        summary = await api.importFlow({ ...base, overwrite: true });
      }
      await refreshFlows();
      setImported(importedNotice(summary.name, read));
      go(`#/flows/${encodeURIComponent(summary.name)}`);
    });

  const exportMermaid = () => flowName && download(`${flowName}.mmd`, mermaid, "text/plain");
  const exportBundle = () =>
    act(async () => {
      if (api && flowName) download(`${flowName}.json`, JSON.stringify(await api.exportFlow(flowName), null, 2), "application/json");
    });
  // Seed 003's own shape (workflow.steps, agents), which re-imports to the same flow.
  const exportSeed003 = () =>
    act(async () => {
      if (api && flowName) {
        const bundle = await api.exportFlow(flowName, "seed003");
        download(`${flowName}.seed003.json`, JSON.stringify(bundle, null, 2), "application/json");
      }
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

  return { busy, deleting, setDeleting, start, resume, resumeAt, stop, answer, onImport, imported, setImported, exportMermaid, exportBundle, exportSeed003, rename, archive, remove, removed };
}

/** What useFlowActions returns. */
export type FlowActions = ReturnType<typeof useFlowActions>;
