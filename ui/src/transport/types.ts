// The transport's types and helpers, apart from `pickTransport` so that the
// two implementations can import them without an import cycle. `Transport`
// itself is in ./client.ts, read from the list of calls.
import type { GuardMatch, NextStep } from "../generated";

/** An error from either shell: a stable code and a sentence for people. */
export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
    /** For `privacy_blocked`: what the guard found, masked, and where from. */
    readonly matches: GuardMatch[] = [],
    /** A finer code the UI branches on, e.g. `RUN_IN_PROGRESS`, `INPUTS_DIFFER`. */
    readonly detail: string | null = null,
    /** The ways on offered as buttons (`try_again`, `choose_another_model`). */
    readonly nextSteps: NextStep[] = [],
  ) {
    super(message);
    this.name = "ApiError";
  }
}

/** A file to extract: picked or dropped in a browser, or dropped natively (a path). */
export type FileSource =
  | { kind: "file"; file: File }
  | { kind: "path"; path: string };

/** Upload progress of one file, 0..1. */
export type OnProgress = (fraction: number) => void;

/** Where a run's output file can be had: a download the browser saves
 * (`href` is the API's address, for reading only: it opens nothing without
 * the token, so `save` fetches it with the token), or a path on this machine. */
export type OutputLocation =
  | { kind: "download"; href: string; name: string; save: () => Promise<void> }
  | { kind: "path"; path: string };

/** The file name of a source, for chips and messages. */
export function sourceName(source: FileSource): string {
  if (source.kind === "file") return source.file.name;
  const parts = source.path.split(/[\\/]/);
  return parts[parts.length - 1] || source.path;
}

/** The size of a source in bytes, when known before reading it. */
export function sourceSize(source: FileSource): number | undefined {
  return source.kind === "file" ? source.file.size : undefined;
}

/** Turns anything thrown into an ApiError. */
export function toApiError(e: unknown): ApiError {
  if (e instanceof ApiError) return e;
  if (e && typeof e === "object" && "code" in e && "message" in e) {
    const { code, message, matches, detail, next_steps } = e as {
      code: unknown;
      message: unknown;
      matches?: unknown;
      detail?: unknown;
      next_steps?: unknown;
    };
    return new ApiError(
      String(code),
      String(message),
      Array.isArray(matches) ? (matches as GuardMatch[]) : [],
      typeof detail === "string" ? detail : null,
      Array.isArray(next_steps) ? (next_steps as NextStep[]) : [],
    );
  }
  if (e instanceof Error) return new ApiError("network", e.message);
  return new ApiError("unknown", String(e));
}

/** Whether this page runs inside the Tauri window. */
export function inTauri(): boolean {
  return typeof window !== "undefined" && "__TAURI_INTERNALS__" in window;
}
