// The Settings page's state: the settings and Python interpreter as the
// core has them, the local servers found, connection tests, and the notice
// that says how the last change went.
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { useTransport } from "../context";
import type { ConnectionTest, Detected, HouseRulesView, PythonView, SettingsView } from "../generated";
import { noticeOf, type Notice } from "../lib/errors";
import type { toSettings } from "../lib/settings";
import { toApiError } from "../transport";

/** Loads the settings once and offers the changes the page makes. */
export function useSettings() {
  const transport = useTransport();
  const [view, setView] = useState<SettingsView | null>(null);
  const [python, setPython] = useState<PythonView | null>(null);
  const [pythonPath, setPythonPath] = useState("");
  const [detected, setDetected] = useState<Detected[] | null>(null);
  const [notice, setNotice] = useState<Notice | null>(null);
  const [editing, setEditing] = useState<string | "new" | null>(null);
  const [tests, setTests] = useState<Record<string, ConnectionTest | "testing">>({});
  const [houseRules, setHouseRules] = useState<HouseRulesView | null>(null);
  const [rulesText, setRulesText] = useState("");

  // Every read or write of the settings takes a number; a reply is shown only
  // if nothing newer started meanwhile, so a reload that was under way when a
  // back end was removed cannot bring it back.
  const generation = useRef(0);

  const load = useCallback(async () => {
    const mine = ++generation.current;
    try {
      const [s, p, h] = await Promise.all([transport.settings(), transport.python(), transport.houseRules()]);
      if (mine !== generation.current) return;
      setView(s);
      setPython(p);
      setPythonPath(p.path ?? "");
      setHouseRules(h);
      setRulesText(h.text);
    } catch (e) {
      setNotice(noticeOf(toApiError(e)));
    }
  }, [transport]);

  useEffect(() => {
    void load();
    transport
      .detectProviders()
      .then(setDetected)
      .catch(() => setDetected([]));
  }, [transport, load]);

  async function save(next: ReturnType<typeof toSettings>, done?: string) {
    const mine = ++generation.current;
    try {
      const saved = await transport.updateSettings(next);
      if (mine === generation.current) setView(saved);
      setEditing(null);
      if (done) setNotice({ tone: "info", title: done, detail: "The new settings are in use." });
    } catch (e) {
      setNotice(noticeOf(toApiError(e)));
      throw e;
    }
  }

  async function test(id: string) {
    setTests((t) => ({ ...t, [id]: "testing" }));
    try {
      const r = await transport.testProvider(id);
      setTests((t) => ({ ...t, [id]: r }));
    } catch (e) {
      setTests((t) => ({ ...t, [id]: { ok: false, message: toApiError(e).message } }));
    }
  }

  async function removeKey(id: string) {
    try {
      await transport.deleteKey(id);
      setNotice({ tone: "info", title: "Key removed", detail: `The key for ${id} is no longer in the keyring.` });
    } catch (e) {
      setNotice(noticeOf(toApiError(e)));
    }
    await load();
  }

  async function savePython(e: Event) {
    e.preventDefault();
    try {
      const p = await transport.setPython({ path: pythonPath.trim() || null });
      setPython(p);
      setNotice({ tone: "info", title: "Python saved", detail: `Python ${p.version ?? ""} at ${p.program ?? "PATH"}; used from the next run.` });
    } catch (err) {
      setNotice(noticeOf(toApiError(err)));
    }
  }

  async function saveHouseRules(e: Event) {
    e.preventDefault();
    try {
      const h = await transport.setHouseRules({ text: rulesText });
      setHouseRules(h);
      setRulesText(h.text);
      const scopes = h.scopes.length ? h.scopes.join(", ") : "none yet";
      setNotice({ tone: "info", title: "House rules saved", detail: `Scopes: ${scopes}. The next build's prompt carries the sections that apply.` });
    } catch (err) {
      setNotice(noticeOf(toApiError(err)));
    }
  }

  return {
    view,
    python,
    pythonPath,
    setPythonPath,
    detected,
    notice,
    setNotice,
    editing,
    setEditing,
    tests,
    load,
    save,
    test,
    removeKey,
    savePython,
    houseRules,
    rulesText,
    setRulesText,
    saveHouseRules,
  };
}

/** What useSettings returns. */
export type SettingsState = ReturnType<typeof useSettings>;
