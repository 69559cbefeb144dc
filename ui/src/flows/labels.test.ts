import { describe, expect, it } from "vitest";
import { dueRetries, runBadge } from "./labels";

describe("dueRetries", () => {
  it("reads each due item, counted from 1, with its last error", () => {
    const m =
      'foreach "Review files" stopped with 2 retries due; retry, skip or stop? item 1: retry 1 of 2 (last error: out of memory (GPU)); item 4: retry 2 of 2 (last error: timed out)';
    expect(dueRetries(m)).toEqual([
      { item: 2, retry: 1, limit: 2, error: "out of memory (GPU)" },
      { item: 5, retry: 2, limit: 2, error: "timed out" },
    ]);
  });
  it("gives null for a message of another shape", () => {
    expect(dueRetries("step failed: boom")).toBeNull();
  });
});

describe("runBadge", () => {
  it("tells a cut-off run and one run by another process from a live one", () => {
    expect(runBadge({ status: "running", interrupted: false })).toEqual({ label: "running", tone: "busy" });
    expect(runBadge({ status: "running", interrupted: true })).toEqual({ label: "interrupted", tone: "bad" });
    expect(runBadge({ status: "running", interrupted: false, runningElsewherePid: 4242 })).toEqual({ label: "running elsewhere", tone: "busy" });
    expect(runBadge({ status: "needs_attention", interrupted: false })).toEqual({ label: "needs attention", tone: "attention" });
  });
  it("ignores the flags once the run is no longer running", () => {
    expect(runBadge({ status: "stopped", interrupted: true })).toEqual({ label: "stopped", tone: "muted" });
  });
});
