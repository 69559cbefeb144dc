// The privacy guard's confirmation: a message holds values from the user's
// files. The user's own words are shown as typed, in place, with where each
// value comes from ("'Biscoe' is a value of penguins.csv, column island");
// one confirmation covers those values for this workflow from then on.
import { useEffect, useRef } from "preact/hooks";
import type { GuardMatch } from "../generated";

/** The message with each typed value marked, for the dialog. */
export function marked(content: string, typed: string[]): (string | { mark: string })[] {
  const words = [...new Set(typed.filter((t) => t.length > 0))].sort((a, b) => b.length - a.length);
  if (words.length === 0) return [content];
  const escaped = words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  const parts = content.split(new RegExp(`(${escaped.join("|")})`, "i"));
  const lower = new Set(words.map((w) => w.toLowerCase()));
  return parts.filter((p) => p !== "").map((p) => (lower.has(p.toLowerCase()) ? { mark: p } : p));
}

/** Asks before a message with values from the user's files is sent. */
export function PrivacyDialog({
  matches,
  content,
  onConfirm,
  onCancel,
}: {
  matches: GuardMatch[];
  /** The message as the user typed it (shown back to them only). */
  content?: string;
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
  const typed = matches.filter((m) => m.typed);
  const other = matches.filter((m) => !m.typed);
  return (
    <div class="overlay">
      <div class="dialog" role="alertdialog" aria-modal="true" aria-labelledby="privacy-title" aria-describedby="privacy-desc" data-testid="privacy-dialog">
        <h2 id="privacy-title">Your message names values from your files</h2>
        <p id="privacy-desc" class="muted">
          The privacy guard stopped this message before it left the machine.
        </p>
        {content && typed.length > 0 && (
          <p class="privacy-typed" data-testid="privacy-typed">
            {marked(
              content,
              typed.map((m) => m.typed!),
            ).map((p, i) => (typeof p === "string" ? p : <mark key={i}>{p.mark}</mark>))}
          </p>
        )}
        <ul class="matches">
          {typed.map((m, i) => (
            <li key={`t${i}`} data-testid="privacy-value">
              ‘{m.typed}’ is a value of {m.source}
            </li>
          ))}
          {other.map((m, i) => (
            <li key={`o${i}`}>
              <code>{m.masked}</code> <span class="muted">from {m.source}</span>
            </li>
          ))}
        </ul>
        <p>
          Send it? Only the text you typed is sent; your files are not.
          {typed.length > 0 && " You will not be asked again about these values in this workflow."}
        </p>
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
