// Settings card (issue 18): the database backups — taken before migrations,
// before each flow run, before a restore and on demand — with Restore
// (the current database is backed up first) and Delete (two steps), and how
// many automatic backups of each kind are kept.
import { useCallback, useEffect, useState } from "preact/hooks";
import { useTransport } from "../context";
import type { Backup, BackupReason, BackupsView } from "../generated";
import { noticeOf, type Notice } from "../lib/errors";
import { toApiError } from "../transport";
import { SafeDeleteDialog, formatBytes } from "./SafeDelete";
import { NoticeBanner } from "./ui";

const REASON: Record<BackupReason, string> = {
  pre_migration: "Before an upgrade",
  pre_flow_run: "Before a flow run",
  manual: "Taken by you",
  pre_restore: "Before a restore",
};

function when(rfc3339: string): string {
  const d = new Date(rfc3339);
  return Number.isNaN(d.getTime()) ? rfc3339 : d.toLocaleString("en-GB", { dateStyle: "medium", timeStyle: "medium" });
}

export function BackupsSetting() {
  const transport = useTransport();
  const [view, setView] = useState<BackupsView | null>(null);
  const [notice, setNotice] = useState<Notice | null>(null);
  const [busy, setBusy] = useState(false);
  const [deleting, setDeleting] = useState<Backup | null>(null);
  const [confirmRestore, setConfirmRestore] = useState<Backup | null>(null);
  const [keepMigration, setKeepMigration] = useState("");
  const [keepRun, setKeepRun] = useState("");

  const show = useCallback((v: BackupsView) => {
    setView(v);
    setKeepMigration(String(v.retention.pre_migration));
    setKeepRun(String(v.retention.pre_flow_run));
  }, []);
  const refresh = useCallback(() => {
    transport.backups().then(show, (e) => setNotice(noticeOf(toApiError(e))));
  }, [transport, show]);
  useEffect(refresh, [refresh]);

  async function work(f: () => Promise<Notice | null>) {
    setBusy(true);
    setNotice(null);
    try {
      setNotice(await f());
    } catch (e) {
      setNotice(noticeOf(toApiError(e)));
    } finally {
      setBusy(false);
      refresh();
    }
  }

  const backUpNow = () =>
    work(async () => {
      const b = await transport.createBackup();
      return { tone: "info", title: "Backed up", detail: `${formatBytes(b.size_bytes)} saved.` };
    });
  const restore = (b: Backup) =>
    work(async () => {
      setConfirmRestore(null);
      const r = await transport.restoreBackup(b.id);
      return {
        tone: "info",
        title: "Backup restored",
        detail: `Maskflow now uses the database of ${when(r.restored.created_at)}. The database as it was just before is kept as a backup too.`,
      };
    });
  const saveRetention = (e: Event) => {
    e.preventDefault();
    void work(async () => {
      show(
        await transport.setBackupRetention({
          pre_migration: Number(keepMigration),
          pre_flow_run: Number(keepRun),
        }),
      );
      return { tone: "info", title: "Saved", detail: "Older automatic backups beyond these counts were removed." };
    });
  };

  return (
    <section class="card" aria-labelledby="backups-h" data-testid="backups-setting">
      <div class="card-head">
        <h2 id="backups-h">Database backups</h2>
        <button type="button" class="button" disabled={busy} onClick={() => void backUpNow()}>
          Back up now
        </button>
      </div>
      {notice && <NoticeBanner notice={notice} onClose={() => setNotice(null)} />}
      {view && (
        <>
          <p class="small muted">
            Kept in <code>{view.folder}</code>. A backup is taken before every upgrade of the database and before every
            flow run.
          </p>
          {view.backups.length === 0 ? (
            <p class="muted">No backups yet.</p>
          ) : (
            <ul class="backup-list" aria-label="Backups">
              {view.backups.map((b) => (
                <li class="backup-row" key={b.id} data-testid="backup">
                  <span>
                    <strong>{REASON[b.reason]}</strong> <span class="muted small">{when(b.created_at)}</span>
                    <br />
                    <span class="muted small">
                      {formatBytes(b.size_bytes)}
                      {b.workflow_run_id && <> · flow run <code>{b.workflow_run_id}</code></>}
                    </span>
                  </span>
                  <span class="actions">
                    <button type="button" class="button small" disabled={busy} onClick={() => setConfirmRestore(b)}>
                      Restore
                    </button>
                    <button type="button" class="button small danger" disabled={busy} onClick={() => setDeleting(b)}>
                      Delete
                    </button>
                  </span>
                </li>
              ))}
            </ul>
          )}
          <form class="retention-form" onSubmit={saveRetention}>
            <label>
              <span>Keep before upgrades</span>
              <input type="number" min={1} max={1000} name="pre_migration" value={keepMigration} onInput={(e) => setKeepMigration(e.currentTarget.value)} />
            </label>
            <label>
              <span>Keep before flow runs</span>
              <input type="number" min={1} max={1000} name="pre_flow_run" value={keepRun} onInput={(e) => setKeepRun(e.currentTarget.value)} />
            </label>
            <button type="submit" class="button" disabled={busy}>
              Save
            </button>
          </form>
        </>
      )}
      {confirmRestore && (
        <div class="overlay">
          <div class="dialog" role="alertdialog" aria-modal="true" aria-labelledby="restore-title" data-testid="restore-dialog">
            <h2 id="restore-title">Restore the backup of {when(confirmRestore.created_at)}?</h2>
            <p>
              Maskflow switches to this backup's workflows, versions, runs and settings. The database as it is now is backed
              up first, so you can come back to it.
            </p>
            <div class="form-actions">
              <button type="button" class="button" onClick={() => setConfirmRestore(null)}>
                Cancel
              </button>
              <button type="button" class="button primary" disabled={busy} onClick={() => void restore(confirmRestore)}>
                Restore
              </button>
            </div>
          </div>
        </div>
      )}
      {deleting && (
        <SafeDeleteDialog
          title={`Delete the backup of ${when(deleting.created_at)}?`}
          run={(confirm) => transport.deleteBackup(deleting.id, confirm)}
          onCancel={() => setDeleting(null)}
          onDone={() => {
            setDeleting(null);
            refresh();
          }}
        />
      )}
    </section>
  );
}
