// The Builder's file chips as a small reducer: each file is read locally
// (uploading, then counting rows with progress), then ready or failed.
import type { CategoryCandidate, FileExtract, FlaggedName, UploadedFile } from "../generated";

export type ChipStatus = "reading" | "ready" | "error";

export interface Chip {
  key: string;
  name: string;
  size?: number;
  status: ChipStatus;
  /** 0..1 while reading: the upload, then the row count. */
  progress: number;
  /** What is happening while reading: "waiting" is queued behind other files' extraction. */
  phase: "uploading" | "waiting" | "counting";
  fileId?: string;
  extract?: FileExtract;
  /** Column and sheet names that look like values, masked in `extract`. */
  flagged?: FlaggedName[];
  /** Columns of few values that may be shown to the AI (raw values: local only). */
  categories?: CategoryCandidate[];
  error?: string;
}

export type ChipAction =
  | { type: "add"; key: string; name: string; size?: number }
  | { type: "upload"; key: string; fraction: number }
  | { type: "count"; name: string; fraction: number; waiting?: boolean }
  | { type: "done"; key: string; file: UploadedFile }
  | { type: "fail"; key: string; message: string }
  | { type: "remove"; key: string }
  | { type: "clear" };

export function chipsReducer(chips: Chip[], action: ChipAction): Chip[] {
  switch (action.type) {
    case "add":
      return [
        ...chips,
        { key: action.key, name: action.name, size: action.size, status: "reading", progress: 0, phase: "uploading" },
      ];
    case "upload":
      return chips.map((c) =>
        c.key === action.key && c.status === "reading" && c.phase === "uploading"
          ? { ...c, progress: action.fraction, phase: action.fraction >= 1 ? "counting" : "uploading" }
          : c,
      );
    case "count": {
      // Progress events name the file; the first reading chip of that name gets it.
      const target = chips.find((c) => c.status === "reading" && c.name === action.name);
      const phase = action.waiting ? "waiting" : "counting";
      return chips.map((c) => (c === target ? { ...c, phase, progress: action.fraction } : c));
    }
    case "done":
      return chips.map((c) =>
        c.key === action.key
          ? { ...c, status: "ready", progress: 1, fileId: action.file.file_id, extract: action.file.extract, flagged: action.file.flagged_names ?? [], categories: action.file.categories ?? [], name: action.file.extract.filename || c.name }
          : c,
      );
    case "fail":
      return chips.map((c) => (c.key === action.key ? { ...c, status: "error", error: action.message } : c));
    case "remove":
      return chips.filter((c) => c.key !== action.key);
    case "clear":
      return [];
  }
}

/** The chips that approval would send, and whether approval is possible now. */
export function approvable(chips: Chip[]): { ready: Chip[]; canApprove: boolean; reason?: string } {
  const ready = chips.filter((c) => c.status === "ready" && c.extract && c.fileId);
  if (chips.some((c) => c.status === "reading")) {
    return { ready, canApprove: false, reason: "Wait until every file is read." };
  }
  if (ready.length === 0) return { ready, canApprove: false, reason: "Add at least one file Maskflow can read." };
  return { ready, canApprove: true };
}
