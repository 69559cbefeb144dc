import { useEffect, useState } from "preact/hooks";
import { useTransport } from "../context";
import type { IsolationView } from "../generated";
import { noticeOf, type Notice } from "../lib/errors";
import { toApiError } from "../transport";
import { NoticeBanner } from "./ui";

/** Settings card: how scripts are isolated here, and the per-machine switch to run them without isolation. */
export function IsolationSetting() {
  const transport = useTransport();
  const [view, setView] = useState<IsolationView | null>(null);
  const [notice, setNotice] = useState<Notice | null>(null);
  const [saving, setSaving] = useState(false);

  useEffect(() => {
    transport.isolation().then(setView, (e) => setNotice(noticeOf(toApiError(e))));
  }, [transport]);

  async function toggle(allow: boolean) {
    setSaving(true);
    try {
      setView(await transport.setIsolation({ allow_unisolated: allow }));
      setNotice(null);
    } catch (e) {
      setNotice(noticeOf(toApiError(e)));
    } finally {
      setSaving(false);
    }
  }

  return (
    <section class="card" aria-labelledby="isolation-h" data-testid="isolation-setting">
      <div class="card-head">
        <h2 id="isolation-h">Script isolation</h2>
      </div>
      {notice && <NoticeBanner notice={notice} onClose={() => setNotice(null)} />}
      {view && (
        <>
          <p class="small" data-testid="isolation-status">
            {view.available ? (
              <>Generated scripts see only their own folder, their inputs and Python, and have no network: {view.detail}.</>
            ) : (
              <span class="warn-text">{view.detail}</span>
            )}
          </p>
          <label class="check">
            <input
              type="checkbox"
              name="allow_unisolated"
              checked={view.allow_unisolated}
              disabled={saving}
              onChange={(e) => toggle(e.currentTarget.checked)}
            />
            <span>
              Run scripts without isolation on this machine{" "}
              {view.allow_unisolated && <strong class="warn-text">(on: every run says so in red)</strong>}
            </span>
          </label>
        </>
      )}
    </section>
  );
}
