// What approving a version changes for the user's saved runs: its inputs
// or outputs differ from the approved version's (issue 28, point 3).
import type { InterfaceChange } from "../generated";

/** The warning's title, naming the approved version it differs from. */
export function interfaceChangeTitle(change: InterfaceChange): string {
  const n = change.changes.length;
  return `Approving this version changes what it takes or writes (${n} ${n === 1 ? "change" : "changes"} from v${change.approved_version})`;
}

/** The command lines to show, old then new; none when they are the same. */
export function commandLines(change: InterfaceChange): { label: string; line: string }[] {
  if (change.old_command === change.new_command) return [];
  return [
    { label: `Before (v${change.approved_version})`, line: change.old_command },
    { label: "After", line: change.new_command },
  ];
}
