// The privacy guard's confirmation: a message holds values from the user's
// files. The user's own words are shown as typed, in place, with where each
// value comes from ("'Biscoe' is a value of penguins.csv, column island");
// one confirmation covers those values for this workflow from then on.
import { useEffect, useRef } from "preact/hooks";
import type { GuardMatch } from "../generated";

/** Masks like the extractors do (letters to A/a, digits to #): to check a located value. */
function maskLike(s: string): string {
  return s.replace(/[\p{L}\p{N}]/gu, (c) => (/\p{Lu}/u.test(c) ? "A" : /\p{L}/u.test(c) ? "a" : "#"));
}

/**
 * The user's own words each match points at in `content` (the guard says
 * where, never what). A match whose place does not hold a value of its
 * shape (it was in an earlier message) is left out: it is listed masked.
 */
export function typedValues(content: string, matches: GuardMatch[]): (string | null)[] {
  return matches.map((m) => {
    if (!m.at) return null;
    const [a, b] = m.at;
    const words = content.slice(a, b);
    return b <= content.length && a < b && maskLike(words) === m.masked ? words : null;
  });
}

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
  const words = typedValues(content ?? "", matches);
  const typed = matches.flatMap((m, i) => (words[i] ? [{ words: words[i]!, source: m.source }] : []));
  const other = matches.filter((_, i) => !words[i]);
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
              typed.map((t) => t.words),
            ).map((p, i) => (typeof p === "string" ? p : <mark key={i}>{p.mark}</mark>))}
          </p>
        )}
        <ul class="matches">
          {typed
            .filter((t, i) => typed.findIndex((u) => u.words === t.words && u.source === t.source) === i)
            .map((t, i) => (
              <li key={`t${i}`} data-testid="privacy-value">
                ‘{t.words}’ is a value of {t.source}
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
