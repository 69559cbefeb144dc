// The Models card's logic: following download events, labels, the first
// start's model and reading a pasted SHA-256.
import { describe, expect, it } from "vitest";
import type { CatalogEntry, Event, ModelsView } from "../generated";
import {
  applyProgress,
  downloadsOf,
  firstStartModel,
  fraction,
  isModelProgress,
  memoryLabel,
  parseSha256,
  progressLabel,
  speedLabel,
  type Progress,
} from "./models";

type ModelEvent = Extract<Event, { type: "model_progress" }>;
const ev = (stage: string, done = 0, total: number | null = null, message = ""): ModelEvent => ({
  type: "model_progress",
  name: "qwen2.5-0.5b",
  stage,
  done,
  total,
  message,
});

const entry = (over: Partial<CatalogEntry> = {}): CatalogEntry => ({
  name: "qwen2.5-0.5b",
  title: "Qwen2.5 0.5B Instruct (Q4_K_M)",
  note: "Small.",
  url: "https://huggingface.co/x/resolve/main/q.gguf",
  bytes: 491_000_000,
  sha256: null,
  memory_bytes: 800_000_000,
  fits: true,
  installed: false,
  expected_tokens_per_second: null,
  speed_note: "not measured yet",
  ...over,
});

const view = (over: Partial<ModelsView> = {}): ModelsView => ({
  folder: "/data/models",
  total_memory_bytes: 8 * 2 ** 30,
  local_backend: true,
  in_use: null,
  first_start: true,
  recommended: "qwen2.5-0.5b",
  installed: [],
  catalog: [entry({ name: "smollm2-135m", bytes: 98_000_000 }), entry()],
  downloads: [],
  ...over,
});

describe("download progress", () => {
  it("follows bytes, keeps them through verifying, and drops a download that ended", () => {
    let d: Record<string, Progress> = {};
    d = applyProgress(d, ev("downloading", 100, 1000));
    expect(d["qwen2.5-0.5b"]).toEqual({ stage: "downloading", done: 100, total: 1000, message: "" });
    expect(fraction(d["qwen2.5-0.5b"] ?? { stage: "", done: 0, total: null, message: "" })).toBe(0.1);
    d = applyProgress(d, ev("downloading", 1000, 1000));
    d = applyProgress(d, ev("verifying", 0, null, "SHA-256 ab"));
    const verifying = d["qwen2.5-0.5b"];
    expect(verifying?.done).toBe(1000);
    expect(verifying?.total).toBe(1000);
    expect(verifying && progressLabel(verifying)).toContain("SHA-256");
    for (const end of ["ready", "failed", "cancelled"]) {
      expect(applyProgress(d, ev(end))).toEqual({});
    }
  });

  it("labels bytes with and without a known size", () => {
    expect(progressLabel({ stage: "downloading", done: 512 * 1024, total: 1024 * 1024, message: "" })).toBe(
      "512 KB of 1.0 MB (50%)",
    );
    const unknown = { stage: "downloading", done: 2048, total: null, message: "" };
    expect(fraction(unknown)).toBeNull();
    expect(progressLabel(unknown)).toBe("2.0 KB so far");
  });

  it("takes running downloads from the list, keeping what events said since", () => {
    const v = view({ downloads: [{ name: "a", done: 5, total: 10 }] });
    const seen = { a: { stage: "downloading", done: 7, total: 10, message: "" }, gone: { stage: "downloading", done: 1, total: 2, message: "" } };
    expect(downloadsOf(v, seen)).toEqual({ a: seen.a });
    expect(downloadsOf(v, {})).toEqual({ a: { stage: "downloading", done: 5, total: 10, message: "" } });
  });

  it("recognises model events only", () => {
    expect(isModelProgress(ev("ready"))).toBe(true);
    expect(isModelProgress({ type: "workflow_deleted", workflow_id: "w" } as Event)).toBe(false);
  });
});

describe("labels", () => {
  it("says a speed is unmeasured, measured or estimated", () => {
    expect(speedLabel(entry())).toBe("Speed: not measured yet");
    expect(speedLabel(entry({ expected_tokens_per_second: 48.6, speed_note: "measured here" }))).toBe(
      "About 49 tokens/s (measured here)",
    );
    expect(speedLabel(entry({ expected_tokens_per_second: 4.25, speed_note: "estimated from x" }))).toContain("4.3 tokens/s");
  });

  it("puts the memory need beside the machine's", () => {
    expect(memoryLabel(2 * 2 ** 30, 8 * 2 ** 30)).toBe("Needs about 2.0 GB of memory (this machine has 8.0 GB)");
    expect(memoryLabel(2 * 2 ** 30, null)).toBe("Needs about 2.0 GB of memory");
  });
});

describe("first start", () => {
  it("offers the recommended model, or none when nothing fits", () => {
    expect(firstStartModel(view())?.name).toBe("qwen2.5-0.5b");
    expect(firstStartModel(view({ recommended: null }))).toBeNull();
  });
});

describe("parseSha256", () => {
  it("accepts 64 hex digits in any case and nothing else", () => {
    const sha = "B179C9523D0E6A0F98A330C7562B682750A6F8C8C15E5BC70EA373728110DB53";
    expect(parseSha256(` ${sha} `)).toBe(sha.toLowerCase());
    expect(parseSha256(sha.slice(1))).toBeNull();
    expect(parseSha256(`${sha.slice(1)}g`)).toBeNull();
  });
});
