import { describe, expect, it } from "vitest";
import { countLines, formatBytes } from "./SafeDelete";

const zero = {
  workflows: 0,
  versions: 0,
  messages: 0,
  runs: 0,
  flow_runs: 0,
  checkpoints: 0,
  turns: 0,
  backups: 0,
  bytes: 0,
  ledger_entries_kept: 0,
  agents: 0,
};

describe("countLines", () => {
  it("names what goes, the non-zero counts only, singular or plural", () => {
    expect(countLines({ ...zero, workflows: 1, versions: 3, messages: 1, ledger_entries_kept: 5 })).toEqual([
      "1 workflow",
      "3 versions",
      "1 conversation message",
    ]);
    expect(countLines({ ...zero, flow_runs: 2, checkpoints: 7, turns: 1 })).toEqual([
      "2 flow runs",
      "7 checkpoints",
      "1 transcript turn",
    ]);
    expect(countLines({ ...zero, backups: 1, bytes: 2048 })).toEqual(["1 backup file (2.0 KB)"]);
    expect(countLines({ ...zero, agents: 1, bytes: 300 })).toEqual(["1 agent file"]);
  });
});

describe("formatBytes", () => {
  it("reads like people write sizes", () => {
    expect(formatBytes(512)).toBe("512 B");
    expect(formatBytes(1536)).toBe("1.5 KB");
    expect(formatBytes(5 * 1024 * 1024)).toBe("5.0 MB");
  });
});
