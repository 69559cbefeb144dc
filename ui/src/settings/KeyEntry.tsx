// Where an API key is pasted: it goes to the system keyring and is never
// shown again.
import { useState } from "preact/hooks";
import { useTransport } from "../context";
import type { ProviderView } from "../generated";
import { noticeOf, type Notice } from "../lib/errors";
import { toApiError } from "../transport";

/** The key box of one back end; `onStored` gets what to tell the user. */
export function KeyEntry({ provider, onStored }: { provider: ProviderView; onStored: (n: Notice) => void }) {
  const transport = useTransport();
  const [key, setKey] = useState("");
  const [busy, setBusy] = useState(false);
  async function save(e: Event) {
    e.preventDefault();
    if (!key.trim()) return;
    setBusy(true);
    try {
      await transport.setKey(provider.id, key.trim());
      setKey("");
      onStored({ tone: "info", title: "Key saved", detail: `The key for ${provider.id} is in the system keyring. It will not be shown again.` });
    } catch (err) {
      const e2 = toApiError(err);
      onStored(
        e2.code === "keyring_unavailable" || /keyring/i.test(e2.message)
          ? { tone: "warning", title: "No system keyring on this machine", detail: e2.message }
          : noticeOf(e2),
      );
    } finally {
      setBusy(false);
    }
  }
  return (
    <form class="key-entry" onSubmit={save}>
      <label class="sr-only" for={`key-${provider.id}`}>
        API key for {provider.id}
      </label>
      <input
        id={`key-${provider.id}`}
        type="password"
        autoComplete="off"
        placeholder={provider.key === "none" ? "Paste an API key" : "Replace the key"}
        value={key}
        onInput={(e) => setKey(e.currentTarget.value)}
      />
      <button type="submit" class="button small" disabled={busy || !key.trim()}>
        Save key
      </button>
    </form>
  );
}
