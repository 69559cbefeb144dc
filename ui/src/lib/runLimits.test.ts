import { describe, expect, it } from "vitest";
import type { RunLimitsView } from "../generated";
import { fieldsOf, inputOf, timeLabel } from "./runLimits";

const GIB = 2 ** 30;

function view(stored: RunLimitsView["stored"] = {}): RunLimitsView {
  return {
    memory_bytes: 6 * GIB,
    default_memory_bytes: 6 * GIB,
    machine_memory_bytes: 24 * GIB,
    time_seconds: 300,
    default_time_seconds: 300,
    stored,
  };
}

describe("run limits (#43 point 4)", () => {
  it("empty fields follow the defaults, both ways", () => {
    expect(fieldsOf(view())).toEqual({ memoryGib: "", timeMinutes: "" });
    expect(inputOf({ memoryGib: " ", timeMinutes: "" }, view())).toEqual({ input: { memory_mib: null, time_seconds: null } });
  });

  it("turns GiB and minutes into MiB and seconds, and back", () => {
    expect(inputOf({ memoryGib: "1.5", timeMinutes: "30" }, view())).toEqual({ input: { memory_mib: 1536, time_seconds: 1800 } });
    expect(fieldsOf(view({ memory_mib: 1536, time_seconds: 1800 }))).toEqual({ memoryGib: "1.5", timeMinutes: "30" });
  });

  it("refuses what the server would, saying the bounds", () => {
    for (const fields of [
      { memoryGib: "0.1", timeMinutes: "" },
      { memoryGib: "25", timeMinutes: "" },
      { memoryGib: "six", timeMinutes: "" },
    ]) {
      const r = inputOf(fields, view());
      expect("problem" in r && r.problem).toContain("24 GiB");
    }
    const r = inputOf({ memoryGib: "", timeMinutes: "2000" }, view());
    expect("problem" in r && r.problem).toContain("1440");
  });

  it("says times as a person reads them", () => {
    expect(timeLabel(45)).toBe("45 s");
    expect(timeLabel(300)).toBe("5 min");
    expect(timeLabel(5400)).toBe("1 h 30 min");
    expect(timeLabel(7200)).toBe("2 h");
  });
});
