// Settings card: the models of the embedded back end. Installed models
// (size, memory, speed measured here; use, remove), downloads in progress
// (a bar from `model_progress` events; cancel), the recommended list, any
// GGUF URL with its SHA-256, and a GGUF file already on this machine.
import { useEffect, useState } from "preact/hooks";
import { useTransport } from "../context";
import type { ModelsView } from "../generated";
import { bytesLabel } from "../lib/extracts";
import type { Notice } from "../lib/errors";
import { toApiError } from "../transport";
import { NoticeBanner, ProgressBar } from "../components/ui";
import {
  FINAL_STAGES,
  applyProgress,
  downloadsOf,
  fraction,
  installedSpeedLabel,
  isModelProgress,
  memoryLabel,
  parseSha256,
  progressLabel,
  speedLabel,
  type Progress,
} from "./models";

/** What a failed model call says. */
export function modelNotice(e: unknown): Notice {
  const err = toApiError(e);
  return { tone: err.code === "conflict" ? "warning" : "error", title: "That did not work", detail: err.message };
}

/** The Models card of Settings; `onSettingsChanged`: a model was put to use
 * (the back ends and roles changed). */
export function ModelsCard({ onSettingsChanged }: { onSettingsChanged?: () => unknown }) {
  const transport = useTransport();
  const [view, setView] = useState<ModelsView | null>(null);
  const [downloads, setDownloads] = useState<Record<string, Progress>>({});
  const [notice, setNotice] = useState<Notice | null>(null);
  const [busy, setBusy] = useState(false);
  const [url, setUrl] = useState("");
  const [sha, setSha] = useState("");
  const [urlName, setUrlName] = useState("");
  const [path, setPath] = useState("");

  function show(v: ModelsView) {
    setView(v);
    setDownloads((seen) => downloadsOf(v, seen));
  }

  useEffect(() => {
    transport.models().then(show, (e) => setNotice(modelNotice(e)));
    // Progress sent while the stream was down was missed: read the list again.
    const stopConnected = transport.onConnected(() => transport.models().then(show, () => undefined));
    const stopEvents = transport.onEvent((e) => {
      if (!isModelProgress(e)) return;
      setDownloads((d) => applyProgress(d, e));
      if (e.stage === "failed") setNotice({ tone: "error", title: `${e.name} was not installed`, detail: e.message });
      if (e.stage === "ready") setNotice({ tone: "info", title: `${e.name} is installed`, detail: e.message });
      if (FINAL_STAGES.includes(e.stage)) transport.models().then(setView, () => undefined);
    });
    return () => {
      stopConnected();
      stopEvents();
    };
  }, [transport]);

  // A pull asked to use its model has changed the back ends when it is ready.
  useEffect(
    () => transport.onEvent((e) => isModelProgress(e) && e.stage === "ready" && void onSettingsChanged?.()),
    [transport, onSettingsChanged],
  );

  async function act(f: () => Promise<ModelsView>) {
    setBusy(true);
    try {
      show(await f());
      setNotice(null);
      return true;
    } catch (e) {
      setNotice(modelNotice(e));
      return false;
    } finally {
      setBusy(false);
    }
  }

  const shaOk = parseSha256(sha);
  if (!view) {
    return (
      <section class="card" aria-labelledby="models-h" data-testid="models-card">
        <div class="card-head">
          <h2 id="models-h">Models on this machine</h2>
        </div>
        {notice && <NoticeBanner notice={notice} onClose={() => setNotice(null)} />}
      </section>
    );
  }
  return (
    <section class="card" aria-labelledby="models-h" data-testid="models-card">
      <div class="card-head">
        <h2 id="models-h">Models on this machine</h2>
      </div>
      {notice && <NoticeBanner notice={notice} onClose={() => setNotice(null)} />}
      <p class="small">
        A model here answers without anything leaving this machine. Models are kept in <code>{view.folder}</code>
        {view.total_memory_bytes ? <> · this machine has {bytesLabel(view.total_memory_bytes)} of memory</> : null}.
      </p>
      {!view.local_backend && (
        <p class="warn-text small">
          This Maskflow was built without the embedded back end: models can be downloaded, but not used here.
        </p>
      )}

      <h3>Installed</h3>
      {view.installed.length === 0 ? (
        <p class="muted small">No model yet.</p>
      ) : (
        <ul class="model-list">
          {view.installed.map((m) => (
            <li key={m.name} data-testid="installed-model">
              <div class="output-head">
                <code>{m.name}</code>
                <span class="muted small">
                  {bytesLabel(m.bytes)} · {memoryLabel(m.memory_bytes, view.total_memory_bytes)} · {installedSpeedLabel(m)}
                </span>
                {view.in_use === m.name ? (
                  <span class="badge">In use</span>
                ) : (
                  <>
                    <button
                      type="button"
                      class="button small"
                      disabled={busy || !view.local_backend}
                      onClick={() => void act(() => transport.useModel(m.name)).then((ok) => ok && onSettingsChanged?.())}
                    >
                      Use
                    </button>
                    <button
                      type="button"
                      class="button ghost small"
                      disabled={busy}
                      onClick={() => void act(() => transport.removeModel(m.name))}
                    >
                      Remove
                    </button>
                  </>
                )}
              </div>
              <p class="muted small">SHA-256 {m.sha256}</p>
            </li>
          ))}
        </ul>
      )}

      {Object.entries(downloads).map(([name, p]) => (
        <div key={name} class="small" data-testid="model-download">
          <div class="output-head">
            <code>{name}</code>
            <span class="muted small" data-testid="model-download-label">
              {progressLabel(p)}
            </span>
            <button
              type="button"
              class="button ghost small"
              disabled={busy || p.stage !== "downloading"}
              onClick={() => void act(() => transport.cancelModelPull(name))}
            >
              Cancel
            </button>
          </div>
          <ProgressBar value={fraction(p) ?? 0} label={`Downloading ${name}`} />
        </div>
      ))}

      <h3>Recommended</h3>
      <ul class="model-list">
        {view.catalog.map((c) => (
          <li key={c.name} data-testid="catalog-model">
            <div class="output-head">
              <strong>{c.title}</strong>
              <span class="muted small">
                {bytesLabel(c.bytes)} · {memoryLabel(c.memory_bytes, view.total_memory_bytes)}
                {view.recommended === c.name ? " · recommended for this machine" : ""}
                {!c.fits ? " · needs more memory than this machine can spare" : ""}
              </span>
              {!c.installed && !downloads[c.name] && (
                <button
                  type="button"
                  class="button small"
                  disabled={busy}
                  onClick={() => void act(() => transport.pullModel({ name: c.name }))}
                >
                  Download
                </button>
              )}
            </div>
            <p class="muted small">
              {c.note} {speedLabel(c)}
            </p>
          </li>
        ))}
      </ul>

      <h3>Another model</h3>
      <form
        class="small"
        onSubmit={(e) => {
          e.preventDefault();
          if (!shaOk) return;
          void act(() => transport.pullModel({ url: url.trim(), sha256: shaOk, name: urlName.trim() || undefined })).then(
            (ok) => ok && (setUrl(""), setSha(""), setUrlName("")),
          );
        }}
      >
        <label>
          GGUF file URL <input type="url" value={url} onInput={(e) => setUrl(e.currentTarget.value)} data-testid="model-url" />
        </label>
        <label>
          Its SHA-256{" "}
          <input value={sha} onInput={(e) => setSha(e.currentTarget.value)} data-testid="model-sha" aria-invalid={sha !== "" && !shaOk} />
        </label>
        <label>
          Name (optional) <input value={urlName} onInput={(e) => setUrlName(e.currentTarget.value)} data-testid="model-name" />
        </label>
        <button type="submit" class="button small" disabled={busy || !url.trim() || !shaOk}>
          Download
        </button>
        {sha !== "" && !shaOk && <p class="warn-text small">A SHA-256 is 64 hexadecimal digits.</p>}
      </form>
      <form
        class="small"
        onSubmit={(e) => {
          e.preventDefault();
          void act(() => transport.addModelFile({ path: path.trim() })).then((ok) => ok && setPath(""));
        }}
      >
        <label>
          A GGUF file on this machine{" "}
          <input value={path} placeholder="/path/to/model.gguf" onInput={(e) => setPath(e.currentTarget.value)} data-testid="model-path" />
        </label>
        <button type="submit" class="button small" disabled={busy || !path.trim()}>
          Add
        </button>
      </form>
    </section>
  );
}
