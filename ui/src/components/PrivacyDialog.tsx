// The privacy guard's confirmation: a message holds values from the user's
// files, shown masked; send it anyway or go back and edit it.
import { useEffect, useRef } from "preact/hooks";
import type { GuardMatch } from "../generated";

/** Asks before a message with values from the user's files is sent. */
export function PrivacyDialog({
  matches,
  onConfirm,
  onCancel,
}: {
  matches: GuardMatch[];
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const cancel = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    cancel.current?.focus();
    const onKey = (e: KeyboardEvent) => e.key === "Escape" && onCancel();
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [onCancel]);
  return (
    <div class="overlay">
      <div class="dialog" role="alertdialog" aria-modal="true" aria-labelledby="privacy-title" aria-describedby="privacy-desc" data-testid="privacy-dialog">
        <h2 id="privacy-title">Your message contains values from your files</h2>
        <p id="privacy-desc" class="muted">
          The privacy guard stopped this message before it left the machine. It contains these values (shown masked) from your data:
        </p>
        <ul class="matches">
          {matches.map((m, i) => (
            <li key={i}>
              <code>{m.masked}</code> <span class="muted">from {m.source}</span>
            </li>
          ))}
        </ul>
        <p>Send it anyway? Only the text you typed is sent; your files are not.</p>
        <div class="form-actions">
          <button ref={cancel} type="button" class="button" onClick={onCancel}>
            Cancel and edit
          </button>
          <button type="button" class="button danger" onClick={onConfirm}>
            Send anyway
          </button>
        </div>
      </div>
    </div>
  );
}
