// What each version status means to a person: its label, its colour tone,
// and what the UI allows in it (seed 000's status table).
import type { Status } from "../generated";

export type Tone = "neutral" | "busy" | "attention" | "good" | "bad" | "muted";

interface StatusInfo {
  label: string;
  tone: Tone;
  hint: string;
}

export const STATUS: Record<Status, StatusInfo> = {
  validating: { label: "Validating", tone: "busy", hint: "Describe the task: the validator checks it can be done." },
  validated: { label: "Validated", tone: "busy", hint: "The task is feasible; tell Maskflow more or answer its questions." },
  clarifying: { label: "Clarifying", tone: "busy", hint: "Maskflow is asking questions before it writes the script." },
  building: { label: "Building", tone: "busy", hint: "The script is being written and tested on your files." },
  pending_user_approval: { label: "Ready for review", tone: "attention", hint: "Review the script, then approve or edit it." },
  approved: { label: "Approved", tone: "good", hint: "This version is in use." },
  rejected: { label: "Rejected", tone: "bad", hint: "The task cannot be done by a local script." },
  failed: { label: "Failed", tone: "bad", hint: "The build failed; edit to try again." },
  archived: { label: "Archived", tone: "muted", hint: "Superseded by a newer version." },
};

/** Whether the user may type a message to a workflow in this status. */
export function canChat(status: Status): boolean {
  return status === "validating" || status === "validated" || status === "clarifying";
}

/** Whether a version in this status can be approved. */
export function canApprove(status: Status): boolean {
  return status === "pending_user_approval";
}

/** Whether "Edit" (start version N+1) is offered for this status. */
export function canEdit(status: Status): boolean {
  return status === "pending_user_approval" || status === "approved" || status === "failed";
}

/** The steps of making a workflow, for the progress strip. */
export const STEPS = ["Describe", "Clarify", "Build", "Review", "Approved"] as const;

/** Which of STEPS a status is at (index), or -1 when it left the path. */
export function stepOf(status: Status): number {
  switch (status) {
    case "validating":
      return 0;
    case "validated":
    case "clarifying":
      return 1;
    case "building":
      return 2;
    case "pending_user_approval":
      return 3;
    case "approved":
      return 4;
    default:
      return -1;
  }
}
