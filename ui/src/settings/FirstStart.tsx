// The first start's choice (no back end saved yet, no choice made): a
// model on this machine (recommended when it has the memory; downloaded
// and used in one step), a cloud API (Settings' back ends), or manual
// (paste prompts into any AI tool). Shown above the screens but Settings,
// which has the Models card; gone once a choice is made or a back end saved.
import { useEffect, useState } from "preact/hooks";
import { useTransport } from "../context";
import type { ModelsView, StartChoice } from "../generated";
import { bytesLabel } from "../lib/extracts";
import type { Notice } from "../lib/errors";
import { go } from "../lib/router";
import { NoticeBanner } from "../components/ui";
import { modelNotice } from "./ModelsCard";
import { firstStartModel } from "./models";

/** The first start's panel; renders nothing past the first start. */
export function FirstStart() {
  const transport = useTransport();
  const [view, setView] = useState<ModelsView | null>(null);
  const [notice, setNotice] = useState<Notice | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    // Without the call (an older server), there is simply no panel.
    transport.models().then(setView, () => undefined);
  }, [transport]);

  if (!view?.first_start) return null;
  const model = firstStartModel(view) ?? view.catalog[0] ?? null;
  const fits = model !== null && model.name === view.recommended;

  async function choose(choice: StartChoice) {
    setBusy(true);
    try {
      if (choice === "local" && model) {
        await transport.pullModel({ name: model.name, use_when_done: true });
      }
      setView(await transport.chooseFirstStart(choice));
      if (choice !== "manual") go("#/settings");
    } catch (e) {
      setNotice(modelNotice(e));
    } finally {
      setBusy(false);
    }
  }

  return (
    <section class="card first-start" aria-labelledby="first-start-h" data-testid="first-start">
      <div class="card-head">
        <h2 id="first-start-h">How should Maskflow reach an AI?</h2>
      </div>
      {notice && <NoticeBanner notice={notice} onClose={() => setNotice(null)} />}
      <p class="small">Only masked extracts you approve and your own messages ever go to an AI. You can change this in Settings at any time.</p>
      <ul class="model-list">
        <li>
          <div class="output-head">
            <strong>A model on this machine{fits ? " (recommended)" : ""}</strong>
            <button
              type="button"
              class="button small"
              disabled={busy || !model || !view.local_backend}
              onClick={() => void choose("local")}
            >
              Download and use it
            </button>
          </div>
          <p class="muted small">
            {model
              ? `${model.title}: ${bytesLabel(model.bytes)} to download, about ${bytesLabel(model.memory_bytes)} of memory. Nothing leaves this machine.`
              : "No model is listed."}
            {model && !fits ? " This machine may not have the memory to spare for it." : ""}
            {!view.local_backend ? " This Maskflow was built without the embedded back end." : ""}
          </p>
        </li>
        <li>
          <div class="output-head">
            <strong>A cloud API</strong>
            <button type="button" class="button small" disabled={busy} onClick={() => void choose("cloud")}>
              Set up a cloud API
            </button>
          </div>
          <p class="muted small">OpenAI, Anthropic or any compatible server, with your key kept in the system keyring.</p>
        </li>
        <li>
          <div class="output-head">
            <strong>Manual</strong>
            <button type="button" class="button small" disabled={busy} onClick={() => void choose("manual")}>
              Paste prompts myself
            </button>
          </div>
          <p class="muted small">Maskflow shows each prompt; you paste it into any AI tool and paste the answer back.</p>
        </li>
      </ul>
    </section>
  );
}
