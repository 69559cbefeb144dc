// The flow editor's state: the document being edited, the loader's verdict
// on it (checked by core as it changes), the revision the editor opened,
// saving, and noticing a file changed outside Maskflow — by a look at the
// file now and then and when the window gets focus, and by the save's
// `conflict` — so it is never silently overwritten.
import { useEffect, useRef, useState } from "preact/hooks";
import { useTransport } from "../../context";
import type { FlowCheck, FlowEditorOptions } from "../../generated";
import { toApiError } from "../../transport";
import { type FlowJson, fromText, isListForm, toText } from "./model";

/** How often an open flow's file is looked at for changes made outside (ms). */
const WATCH_MS = 2000;
/** How long edits settle before the draft is checked (ms). */
const CHECK_MS = 250;

/** What the editor knows about the file on disk. */
export type Disk = { revision: string | null; removed: boolean };

const EMPTY: FlowJson = { description: "", steps: [] };

/** The editor for flow `name`, or for a new flow when `name` is absent. */
export function useFlowEditor(name: string | undefined) {
  const api = useTransport();
  // The document (list form), or the raw text when the structured editor cannot show it.
  const [doc, setDocState] = useState<FlowJson | null>(name ? null : EMPTY);
  const [text, setTextState] = useState<string>(name ? "" : toText(EMPTY));
  const [mode, setMode] = useState<"steps" | "json">("steps");
  const [check, setCheck] = useState<FlowCheck | null>(null);
  const [lastDiagram, setLastDiagram] = useState("");
  const [disk, setDisk] = useState<Disk>({ revision: null, removed: false });
  // The outside change the user chose to keep editing over (its revision, or "removed").
  const [dismissed, setDismissed] = useState<string | null>(null);
  const [dirty, setDirty] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const [options, setOptions] = useState<FlowEditorOptions | null>(null);
  const [flowNames, setFlowNames] = useState<string[]>([]);
  const [loaded, setLoaded] = useState(!name);
  const base = useRef<string | null>(null);

  const adopt = (t: string, revision: string | null) => {
    const d = fromText(t);
    setTextState(t);
    setDocState(isListForm(d) ? d : null);
    setMode(isListForm(d) ? "steps" : "json");
    base.current = revision;
    setDisk({ revision, removed: false });
    setDismissed(null);
    setDirty(false);
  };

  const reload = async () => {
    if (!name) return;
    setError(null);
    try {
      const source = await api.flowSource(name);
      adopt(source.text, source.revision);
      setCheck(source.check);
      setLoaded(true);
    } catch (e) {
      setError(toApiError(e).message);
    }
  };

  useEffect(() => {
    void reload();
    api.flowEditorOptions().then(setOptions).catch((e: unknown) => setError(toApiError(e).message));
    api.listFlows().then((l) => setFlowNames(l.flows.map((f) => f.name))).catch(() => setFlowNames([]));
    // Once per flow: reload closes over name and api only.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [api, name]);

  // The loader's verdict on the draft, once edits settle.
  useEffect(() => {
    if (!loaded) return;
    let live = true;
    const timer = setTimeout(() => {
      api
        .validateFlow(text)
        .then((c) => {
          if (!live) return;
          setCheck(c);
          if (c.mermaid) setLastDiagram(c.mermaid);
        })
        .catch((e: unknown) => live && setError(toApiError(e).message));
    }, CHECK_MS);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [api, text, loaded]);

  // The file on disk: changed or removed since it was opened?
  const look = async () => {
    if (!name || base.current === null) return;
    try {
      const source = await api.flowSource(name);
      setDisk({ revision: source.revision, removed: false });
    } catch (e) {
      if (toApiError(e).code === "not_found") setDisk({ revision: null, removed: true });
    }
  };
  useEffect(() => {
    if (!name) return;
    const timer = setInterval(() => void look(), WATCH_MS);
    window.addEventListener("focus", look);
    return () => {
      clearInterval(timer);
      window.removeEventListener("focus", look);
    };
    // look closes over name, api and a ref.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [api, name]);

  // Closing or reloading the window with unsaved edits asks first.
  useEffect(() => {
    if (!dirty) return;
    const ask = (e: BeforeUnloadEvent) => e.preventDefault();
    window.addEventListener("beforeunload", ask);
    return () => window.removeEventListener("beforeunload", ask);
  }, [dirty]);

  /** Replaces the document (structured editing). */
  const setDoc = (d: FlowJson) => {
    setDocState(d);
    setTextState(toText(d));
    setDirty(true);
    setSaved(null);
  };
  /** Replaces the text (JSON editing); the steps view follows when it can show it. */
  const setText = (t: string) => {
    setTextState(t);
    const d = fromText(t);
    if (isListForm(d)) setDocState(d);
    setDirty(true);
    setSaved(null);
  };

  /** Saves as `target`; `overwrite` saves over the file now on disk (the user chose to). */
  const save = async (target: string, overwrite = false): Promise<boolean> => {
    setBusy(true);
    setError(null);
    setSaved(null);
    try {
      // A new flow has no base; overwriting saves over what is on disk now
      // (or writes a removed file again), never over a change not yet seen.
      const baseRevision = !name ? undefined : overwrite ? (disk.removed ? undefined : disk.revision ?? undefined) : base.current ?? undefined;
      const r = await api.saveFlow(target, { text, baseRevision });
      base.current = r.revision;
      setDisk({ revision: r.revision, removed: false });
      setDismissed(null);
      setDirty(false);
      setCheck(r.check);
      if (r.check.mermaid) setLastDiagram(r.check.mermaid);
      setSaved(`Saved as flows/${r.name}.json.`);
      return true;
    } catch (e) {
      const err = toApiError(e);
      if (err.code === "conflict" && name) {
        // Show the choice again, with what is on disk now.
        setDismissed(null);
        await look();
      }
      setError(err.message);
      return false;
    } finally {
      setBusy(false);
    }
  };

  const marker = disk.removed ? "removed" : disk.revision;
  const changedOutside = !!name && base.current !== null && (disk.removed || disk.revision !== base.current);
  /** Leaves the outside change be for now (a save is still refused until the user overwrites). */
  const keepEditing = () => setDismissed(marker);

  return {
    doc,
    setDoc,
    text,
    setText,
    mode,
    setMode,
    check,
    lastDiagram,
    disk,
    dirty,
    busy,
    error,
    setError,
    saved,
    options,
    flowNames,
    loaded,
    save,
    reload,
    keepEditing,
    changedOutside,
    outsideChange: changedOutside && dismissed !== marker,
  };
}

/** What useFlowEditor returns. */
export type FlowEditorState = ReturnType<typeof useFlowEditor>;
