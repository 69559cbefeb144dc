import { describe, expect, it } from "vitest";
import { dueRetries } from "./labels";

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
