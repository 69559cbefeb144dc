// Turns API errors into what the user reads: a conflict (409) is a polite
// "wait a moment", not a failure.
import type { ContextReduction } from "../generated";
import type { ApiError } from "../transport";

export interface Notice {
  tone: "info" | "warning" | "error";
  title: string;
  detail: string;
}

export function noticeOf(e: ApiError): Notice {
  switch (e.code) {
    case "conflict":
      return {
        tone: "warning",
        title: "One moment — this workflow is busy or has just changed",
        detail: `${e.message}. Nothing was lost: the view is up to date again, so check it and try again if you still need to.`.replace(
          /\.\./g,
          ".",
        ),
      };
    case "archived":
      return {
        tone: "warning",
        title: "That version was replaced by a newer one",
        detail: "Reload to see the workflow's current version.",
      };
    case "not_found":
      return { tone: "error", title: "Not found", detail: e.message };
    case "invalid_request":
      return { tone: "error", title: "That did not work", detail: e.message };
    case "disk_full":
      return { tone: "error", title: "The disk is full", detail: e.message };
    case "provider_error":
      return { tone: "error", title: "The AI back end failed", detail: e.message };
    case "provider_timeout":
      return { tone: "error", title: "The AI back end did not answer in time", detail: e.message };
    case "cancelled":
      return { tone: "info", title: "Stopped", detail: e.message };
    case "network":
      return { tone: "error", title: "Maskflow cannot be reached", detail: e.message };
    case "unauthorized":
      return {
        tone: "error",
        title: "Not signed in",
        detail: "Open the URL that `maskflow serve` printed (it carries the access token).",
      };
    default:
      return { tone: "error", title: "Something went wrong", detail: e.message };
  }
}

/** What a prompt left out of the extracts to fit the model's context window. */
export function reducedNotice(reductions: ContextReduction[]): Notice {
  return {
    tone: "warning",
    title: "Part of the extract was left out to fit the model",
    detail: reductions.map((r) => r.summary).join(" "),
  };
}
