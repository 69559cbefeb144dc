import { useEffect, useState } from "preact/hooks";
import { useTransport } from "../context";
import type { EnvironmentsView } from "../generated";
import { bytesLabel } from "../lib/extracts";
import { noticeOf, type Notice } from "../lib/errors";
import { toApiError } from "../transport";
import { NoticeBanner } from "./ui";

/** Settings card: the managed Python environments with their sizes (unused ones removable), and uv. */
export function EnvironmentsSetting() {
  const transport = useTransport();
  const [view, setView] = useState<EnvironmentsView | null>(null);
  const [notice, setNotice] = useState<Notice | null>(null);
  const [busy, setBusy] = useState(false);
  const [progress, setProgress] = useState<string | null>(null);

  useEffect(() => {
    transport.environments().then(setView, (e) => setNotice(noticeOf(toApiError(e))));
    return transport.onEvent((e) => {
      if (e.type === "environment_progress" && !e.workflow_id) setProgress(e.message);
    });
  }, [transport]);

  async function act(f: () => Promise<EnvironmentsView>) {
    setBusy(true);
    try {
      setView(await f());
      setNotice(null);
    } catch (e) {
      setNotice(noticeOf(toApiError(e)));
    } finally {
      setBusy(false);
      setProgress(null);
    }
  }

  const total = view?.environments.reduce((n, e) => n + Number(e.size), 0) ?? 0;
  return (
    <section class="card" aria-labelledby="envs-h" data-testid="environments-setting">
      <div class="card-head">
        <h2 id="envs-h">Python environments</h2>
      </div>
      {notice && <NoticeBanner notice={notice} onClose={() => setNotice(null)} />}
      {view && (
        <>
          <p class="small">
            Scripts that need packages run in locked environments made with uv, one per pinned package set, in{" "}
            <code>{view.folder}</code>.
          </p>
          {view.uv ? (
            <p class="muted small">uv: {view.uv}</p>
          ) : (
            <div class="small">
              <p class="warn-text">{view.uv_error}</p>
              <button type="button" class="button small" disabled={busy} onClick={() => void act(() => transport.installUv())}>
                {busy ? "Installing uv…" : "Install uv from PyPI into Maskflow's folder"}
              </button>
              {progress && <p class="muted small">{progress}</p>}
            </div>
          )}
          {view.environments.length === 0 ? (
            <p class="muted small">No environment yet.</p>
          ) : (
            <>
              <p class="muted small">
                {view.environments.length} environment{view.environments.length === 1 ? "" : "s"}, {bytesLabel(total)} in all.
              </p>
              <ul class="environments">
                {view.environments.map((e) => (
                  <li key={e.id} data-testid="environment">
                    <div class="output-head">
                      <code>{e.id}</code>
                      <span class="muted small">
                        Python {e.python} · {bytesLabel(Number(e.size))} · {e.in_use ? "in use" : "not used by any version"}
                      </span>
                      {!e.in_use && (
                        <button
                          type="button"
                          class="button ghost small"
                          disabled={busy}
                          onClick={() => void act(() => transport.removeEnvironment(e.id))}
                        >
                          Remove
                        </button>
                      )}
                    </div>
                    <p class="muted small">{e.packages.join(", ")}</p>
                  </li>
                ))}
              </ul>
            </>
          )}
        </>
      )}
    </section>
  );
}
