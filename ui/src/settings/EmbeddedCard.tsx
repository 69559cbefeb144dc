// Settings card of the embedded model (issue 32): whether this build runs a
// model in the process, with how many threads and whether on a GPU, and how
// many idle minutes a loaded model stays in memory, and the context size its
// model gets (from the GGUF header and this computer's free memory).
import { useEffect, useState } from "preact/hooks";
import { NoticeBanner } from "../components/ui";
import { useTransport } from "../context";
import type { EmbeddedView, SettingsView } from "../generated";
import { noticeOf, type Notice } from "../lib/errors";
import { idleProblem } from "../lib/settings";
import { toApiError } from "../transport";
import { contextLine } from "./embedded";

/** The embedded model's card; read again whenever `settings` (the back ends
 * and roles) change, since the context is that of the embedded back end's model. */
export function EmbeddedCard({ settings }: { settings?: SettingsView }) {
  const transport = useTransport();
  const [view, setView] = useState<EmbeddedView | null>(null);
  const [minutes, setMinutes] = useState("");
  const [notice, setNotice] = useState<Notice | null>(null);
  const [saving, setSaving] = useState(false);

  useEffect(() => {
    transport.embedded().then(
      (v) => {
        setView(v);
        setMinutes(String(v.idle_minutes));
      },
      (e) => setNotice(noticeOf(toApiError(e))),
    );
  }, [transport, settings]);

  const problem = idleProblem(minutes);
  const context = contextLine(view?.context ?? null);
  async function save(e: Event) {
    e.preventDefault();
    if (problem) return;
    setSaving(true);
    try {
      const v = await transport.setEmbedded({ idle_minutes: Number(minutes) });
      setView(v);
      setMinutes(String(v.idle_minutes));
      setNotice(null);
    } catch (err) {
      setNotice(noticeOf(toApiError(err)));
    } finally {
      setSaving(false);
    }
  }

  return (
    <section class="card" aria-labelledby="embedded-h" data-testid="embedded-setting">
      <div class="card-head">
        <h2 id="embedded-h">Embedded model</h2>
      </div>
      {notice && <NoticeBanner notice={notice} onClose={() => setNotice(null)} />}
      {view && !view.supported && (
        <p class="small warn-text">This build has no embedded model support; choose another back end.</p>
      )}
      {view?.supported && (
        <form onSubmit={save}>
          <p class="small" data-testid="embedded-status">
            A back end of kind “Embedded model” runs its GGUF file inside Maskflow: nothing leaves this computer. It runs on {view.threads} CPU
            thread{view.threads === 1 ? "" : "s"}
            {view.gpu_offload ? " and offloads to the GPU" : " (no GPU offload in this build)"}; the context size comes from the model and
            this computer's memory.
          </p>
          <p class={context.problem ? "small warn-text" : "small"} data-testid="embedded-context">
            {context.text}
          </p>
          <label>
            <span>Unload an idle model after (minutes)</span>
            <input name="idle_minutes" inputMode="numeric" value={minutes} onInput={(e) => setMinutes(e.currentTarget.value)} />
          </label>
          {problem && (
            <p class="form-problem" role="alert">
              {problem}
            </p>
          )}
          <div class="form-actions">
            <button type="submit" class="button" disabled={saving || !!problem || minutes === String(view.idle_minutes)}>
              {saving ? "Saving…" : "Save"}
            </button>
          </div>
        </form>
      )}
    </section>
  );
}
