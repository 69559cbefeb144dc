import { useEffect, useState } from "preact/hooks";
import { useTransport } from "../context";
import type { StorageKind, StorageView } from "../generated";
import { noticeOf, type Notice } from "../lib/errors";
import { bytesLabel } from "../lib/extracts";
import { toApiError } from "../transport";
import { NoticeBanner } from "./ui";

/** Settings card: what the data folder keeps by kind, with a safe Clear for each, the upload expiry, the largest upload and the flow runs' checkpoint retention. */
export function StorageSettings() {
  const transport = useTransport();
  const [view, setView] = useState<StorageView | null>(null);
  const [notice, setNotice] = useState<Notice | null>(null);
  const [asking, setAsking] = useState<StorageKind | null>(null);
  const [busy, setBusy] = useState(false);
  const [hours, setHours] = useState("");
  const [uploadMib, setUploadMib] = useState("");
  const [keepFull, setKeepFull] = useState("");
  const [fullEvery, setFullEvery] = useState("");

  const load = () =>
    transport.storage().then(
      (v) => {
        setView(v);
        setHours(String(v.upload_expiry_hours));
        setUploadMib(String(v.upload_limit_mib));
        setKeepFull(String(v.checkpoint_keep_full_snapshots));
        setFullEvery(String(v.checkpoint_full_every));
      },
      (e) => setNotice(noticeOf(toApiError(e))),
    );
  useEffect(() => {
    void load();
    // load is new on every render and only closes over transport.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [transport]);

  async function act(f: () => Promise<string>) {
    setBusy(true);
    try {
      const done = await f();
      setNotice({ tone: "info", title: "Storage", detail: done });
      await load();
    } catch (e) {
      setNotice(noticeOf(toApiError(e)));
    } finally {
      setBusy(false);
      setAsking(null);
    }
  }

  const clear = (kind: StorageKind) =>
    act(async () => {
      const r = await transport.clearStorage(kind);
      return r.removed === 0 ? "Nothing to clear." : `Removed ${r.removed} item${r.removed === 1 ? "" : "s"}, ${bytesLabel(r.freed_bytes)} freed.`;
    });

  const saveExpiry = (e: Event) => {
    e.preventDefault();
    const n = Number(hours);
    if (!Number.isInteger(n) || n < 0) {
      setNotice({ tone: "error", title: "That did not work", detail: "The expiry is a whole number of hours (0 keeps uploads until you clear them)." });
      return;
    }
    void act(async () => {
      await transport.setStorage({ upload_expiry_hours: n });
      return n === 0 ? "Uploads are kept until you clear them." : `Uploads that join no workflow are removed after ${n} h.`;
    });
  };

  const saveUploadLimit = (e: Event) => {
    e.preventDefault();
    if (!view) return;
    const n = Number(uploadMib);
    if (!Number.isInteger(n) || n < 1 || n > 16 * 2 ** 20) {
      setNotice({ tone: "error", title: "That did not work", detail: "The largest upload is a whole number of MiB, from 1 to 16777216 (16 TiB)." });
      return;
    }
    void act(async () => {
      // The expiry is sent as stored: an unsaved edit of it stays unsaved.
      await transport.setStorage({ upload_expiry_hours: view.upload_expiry_hours, upload_limit_mib: n });
      return `Uploads up to ${bytesLabel(n * 2 ** 20)} are taken; free space is checked for each.`;
    });
  };

  const saveCheckpoints = (e: Event) => {
    e.preventDefault();
    if (!view) return;
    const keep = Number(keepFull);
    const every = Number(fullEvery);
    if (!Number.isInteger(keep) || keep < 0 || !Number.isInteger(every) || every < 0) {
      setNotice({ tone: "error", title: "That did not work", detail: "Both checkpoint settings are whole numbers, 0 or more." });
      return;
    }
    void act(async () => {
      // The expiry is sent as stored: an unsaved edit of it stays unsaved.
      await transport.setStorage({
        upload_expiry_hours: view.upload_expiry_hours,
        checkpoint_keep_full_snapshots: keep,
        checkpoint_full_every: every,
      });
      return keep === 0
        ? "Flow runs keep every checkpoint."
        : `Flow runs in progress keep their last ${keep} full snapshot${keep === 1 ? "" : "s"}; finished runs keep their final state.`;
    });
  };

  return (
    <section class="card" aria-labelledby="storage-h" data-testid="storage-settings">
      <div class="card-head">
        <h2 id="storage-h">Storage</h2>
      </div>
      {notice && <NoticeBanner notice={notice} onClose={() => setNotice(null)} />}
      {!view && !notice && <p class="muted small">Measuring the data folder…</p>}
      {view && (
        <>
          <p class="small">
            Data folder <code>{view.folder}</code> · {bytesLabel(view.free_bytes)} free on its disk
          </p>
          <table class="storage" data-testid="storage-kinds">
            <tbody>
              {view.kinds.map((k) => (
                <tr key={k.kind} data-kind={k.kind}>
                  <th scope="row">{k.label}</th>
                  <td class="num">{bytesLabel(k.bytes)}</td>
                  <td class="small muted">{k.clear_note}</td>
                  <td>
                    {asking === k.kind ? (
                      <span class="confirm">
                        <span class="small">Remove {bytesLabel(k.clearable_bytes)}?</span>{" "}
                        <button type="button" class="button danger" disabled={busy} onClick={() => clear(k.kind)}>
                          Yes, clear
                        </button>{" "}
                        <button type="button" class="button" disabled={busy} onClick={() => setAsking(null)}>
                          Keep
                        </button>
                      </span>
                    ) : (
                      k.clearable_bytes > 0 && (
                        <button type="button" class="button" disabled={busy} onClick={() => setAsking(k.kind)}>
                          Clear {bytesLabel(k.clearable_bytes)}
                        </button>
                      )
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <form class="inline" onSubmit={saveExpiry}>
            <label>
              Remove uploads that join no workflow after{" "}
              <input name="upload_expiry_hours" type="number" min="0" step="1" value={hours} onInput={(e) => setHours(e.currentTarget.value)} /> hours
            </label>{" "}
            <button type="submit" class="button" disabled={busy}>
              Save
            </button>
          </form>
          <form class="inline" onSubmit={saveUploadLimit} data-testid="upload-limit">
            <label>
              Largest upload{" "}
              <input name="upload_limit_mib" type="number" min="1" step="1" value={uploadMib} onInput={(e) => setUploadMib(e.currentTarget.value)} /> MiB
            </label>{" "}
            <button type="submit" class="button" disabled={busy || uploadMib === String(view.upload_limit_mib)}>
              Save largest upload
            </button>
            <p class="small muted">
              A file dropped in the browser is copied into the data folder, up to this size. One dropped in the desktop window, or named on the command line (
              <code>maskflow build</code>, <code>maskflow extract</code>), is read where it is, at any size.
            </p>
          </form>
          <form onSubmit={saveCheckpoints} data-testid="checkpoint-settings">
            <h3>Flow run checkpoints</h3>
            <p class="small muted">
              A flow run saves a checkpoint after each step, so an interrupted run resumes where it stopped instead of starting over. A full snapshot holds the whole
              run; the checkpoints between two full ones hold only what changed. Resuming needs only the latest full snapshot and the changes after it: older
              checkpoints are the run's step-by-step history, kept as a margin and then removed. A finished run keeps only its final state, unless you keep every
              checkpoint (0), which uses the most disk.
            </p>
            <label class="inline">
              Full snapshots kept per run in progress{" "}
              <input name="checkpoint_keep_full_snapshots" type="number" min="0" step="1" value={keepFull} onInput={(e) => setKeepFull(e.currentTarget.value)} />{" "}
              <span class="small muted">0 to 1000; 0 keeps every checkpoint</span>
            </label>
            <label class="inline">
              Write a full snapshot after at most{" "}
              <input name="checkpoint_full_every" type="number" min="0" step="1" value={fullEvery} onInput={(e) => setFullEvery(e.currentTarget.value)} /> smaller
              checkpoints <span class="small muted">0 to 10000; 0 makes every checkpoint a full one</span>
            </label>
            <p class="small muted">Fewer smaller checkpoints between full ones make resuming read less, at the cost of more disk.</p>
            <div>
              <button type="submit" class="button" disabled={busy}>
                Save checkpoints
              </button>
            </div>
          </form>
        </>
      )}
    </section>
  );
}
