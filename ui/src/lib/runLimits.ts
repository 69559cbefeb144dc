// The run limits card's fields (issue 43 point 4): memory in GiB and time in
// minutes as a person types them, to and from the MiB and seconds the API
// stores. An empty field follows this computer's default.
import type { RunLimitsInput, RunLimitsView } from "../generated";

/** What the two fields hold. */
export type LimitFields = { memoryGib: string; timeMinutes: string };

const MIB_PER_GIB = 1024;

/** The fields for a stored setting: empty where the default is followed. */
export function fieldsOf(view: RunLimitsView): LimitFields {
  const mib = view.stored.memory_mib;
  const secs = view.stored.time_seconds;
  return {
    memoryGib: mib == null ? "" : String(Math.round((mib / MIB_PER_GIB) * 100) / 100),
    timeMinutes: secs == null ? "" : String(Math.round((secs / 60) * 100) / 100),
  };
}

/** The body to store, or the sentence saying what is wrong with a field. */
export function inputOf(fields: LimitFields, view: RunLimitsView): { input: RunLimitsInput } | { problem: string } {
  const input: RunLimitsInput = { memory_mib: null, time_seconds: null };
  const gib = fields.memoryGib.trim();
  if (gib !== "") {
    const n = Number(gib);
    const most = view.machine_memory_bytes == null ? null : view.machine_memory_bytes / 2 ** 30;
    if (!Number.isFinite(n) || n < 0.25 || (most != null && n > most)) {
      const upper = most == null ? "" : ` up to ${gibLabel(view.machine_memory_bytes ?? 0)} (this computer's memory)`;
      return { problem: `Give the memory in GiB: at least 0.25${upper}, or leave it empty for the default.` };
    }
    input.memory_mib = Math.round(n * MIB_PER_GIB);
  }
  const minutes = fields.timeMinutes.trim();
  if (minutes !== "") {
    const n = Number(minutes);
    if (!Number.isFinite(n) || n * 60 < 10 || n > 1440) {
      return { problem: "Give the time in minutes: from 0.2 (10 seconds) to 1440 (a day), or leave it empty for the default." };
    }
    input.time_seconds = Math.round(n * 60);
  }
  return { input };
}

/** "6 GiB", "1.5 GiB". */
export function gibLabel(bytes: number): string {
  return `${Math.round((bytes / 2 ** 30) * 10) / 10} GiB`;
}

/** "5 min", "1 h 30 min", "45 s". */
export function timeLabel(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  const h = Math.floor(seconds / 3600);
  const m = Math.round((seconds % 3600) / 60);
  if (h === 0) return `${m} min`;
  return m === 0 ? `${h} h` : `${h} h ${m} min`;
}
