// Unit tests of the settings, ledger, manual-prompt and run-form logic.
import { describe, expect, it } from "vitest";
import type { Field, LedgerEntry, LlmSettings, ManualPrompt, SettingsView } from "../generated";
import { ApiError } from "../transport";
import { errorFromResponse } from "../transport/http";
import { destination, matchesQuery, mergeEntry, outcomeBadge, prettyBody } from "./ledger";
import { addPrompt, canAnswer, manualPromptText, promptsFor } from "./manual";
import { parseRoute, routeHref } from "./router";
import { durationLabel, initialValues, phaseIndex, runRequest } from "./runs";
import { assignRole, idleProblem, parseWindow, providerFromDetected, providerProblem, providerSummary, removeProvider, toSettings, upsertProvider, windowLabel } from "./settings";

const base: LlmSettings = {
  providers: [
    { id: "manual", kind: "manual" },
    { id: "llama", kind: "ollama", base_url: "http://127.0.0.1:11434", model: "llama3" },
  ],
  roles: { validator: "llama", clarifier: "manual", builder: "llama" },
};

describe("settings", () => {
  it("strips key sources from a view", () => {
    const view: SettingsView = {
      providers: [{ id: "o", kind: "openai", model: "gpt", key: "keyring", key_error: null }],
      roles: { builder: "o" },
    };
    expect(toSettings(view)).toEqual({ providers: [{ id: "o", kind: "openai", model: "gpt" }], roles: { builder: "o" } });
  });
  it("checks a provider form", () => {
    expect(providerProblem({ id: "", kind: "manual" }, [])).toMatch(/short id/);
    expect(providerProblem({ id: "x", kind: "ollama", model: " " }, [])).toMatch(/model/);
    expect(providerProblem({ id: "llama", kind: "manual" }, base.providers)).toMatch(/already exists/);
    expect(providerProblem({ id: "x", kind: "openai", model: "m", base_url: "ftp://a" }, [])).toMatch(/http/);
    expect(providerProblem({ id: "x", kind: "openai", model: "m", base_url: "http://127.0.0.1:9" }, [])).toBeNull();
    expect(providerProblem({ id: "x", kind: "openai", model: "m", context_window: 100 }, [])).toMatch(/context window.*256/);
    expect(providerProblem({ id: "x", kind: "openai", model: "m", context_window: 2048.5 }, [])).toMatch(/whole number/);
    expect(providerProblem({ id: "x", kind: "openai", model: "m", context_window: 4096 }, [])).toBeNull();
    expect(providerProblem({ id: "x", kind: "local", model: "" }, [])).toMatch(/\.gguf/);
    expect(providerProblem({ id: "x", kind: "local", model: "models/m.gguf" }, [])).toMatch(/absolute/);
    expect(providerProblem({ id: "x", kind: "local", model: "/m/m.gguf", base_url: "http://x" }, [])).toMatch(/base URL/);
    expect(providerProblem({ id: "x", kind: "local", model: "/m/m.gguf" }, [])).toBeNull();
    expect(providerSummary({ id: "x", kind: "local", model: "/m/m.gguf" })).toMatch(/nothing leaves this computer/);
    expect(idleProblem("10")).toBeNull();
    expect(idleProblem("0")).toMatch(/1 to 1440/);
    expect(idleProblem("2.5")).toMatch(/whole number/);
    expect(idleProblem("")).toMatch(/minutes/);
  });
  it("reads and shows a provider's context window", () => {
    expect(parseWindow(" ")).toBeNull();
    expect(parseWindow("4096")).toBe(4096);
    expect(windowLabel({ id: "x", kind: "openai", context_window: 4096 })).toBe(" · 4,096-token context window (set)");
    expect(windowLabel({ id: "x", kind: "openai" })).toBe("");
  });
  it("adds, renames and removes providers, keeping roles pointing somewhere", () => {
    const added = upsertProvider(base, { id: " gpt ", kind: "openai", model: "gpt-4o", base_url: "" });
    expect(added.providers[2]).toEqual({ id: "gpt", kind: "openai", model: "gpt-4o", base_url: null });
    const renamed = upsertProvider(base, { id: "big", kind: "ollama", model: "llama3" }, "llama");
    expect(renamed.roles).toEqual({ validator: "big", clarifier: "manual", builder: "big" });
    const removed = removeProvider(base, "llama");
    expect(removed.providers.map((p) => p.id)).toEqual(["manual"]);
    expect(removed.roles).toEqual({ validator: "manual", clarifier: "manual", builder: "manual" });
    expect(assignRole(base, "clarifier", "llama").roles.clarifier).toBe("llama");
  });
  it("names a detected server uniquely", () => {
    const d = { kind: "ollama" as const, base_url: "http://127.0.0.1:11434", models: ["qwen", "llama"] };
    expect(providerFromDetected(d, [])).toEqual({ id: "local-ollama", kind: "ollama", base_url: d.base_url, model: "qwen" });
    expect(providerFromDetected(d, ["local-ollama"]).id).toBe("local-ollama-2");
  });
});

const entry = (id: string, over: Partial<LedgerEntry> = {}): LedgerEntry => ({
  id,
  created_at: "2026-01-01T00:00:00Z",
  role: "validator",
  provider: "openai",
  model: "gpt",
  workflow_id: null,
  url: null,
  request_body: '{"a":1}',
  reply: null,
  input_tokens: null,
  output_tokens: null,
  latency_ms: 3n,
  outcome: "ok",
  blocked: false,
  error: null,
  local: false,
  ...over,
});

describe("ledger", () => {
  it("badges outcomes, blocked first", () => {
    expect(outcomeBadge({ outcome: "ok", blocked: false }).label).toBe("Sent");
    expect(outcomeBadge({ outcome: "in_flight", blocked: false }).label).toBe("Waiting for the reply");
    expect(outcomeBadge({ outcome: "blocked", blocked: true }).tone).toBe("bad");
    expect(outcomeBadge({ outcome: "cancelled", blocked: false }).tone).toBe("muted");
    expect(outcomeBadge({ outcome: "ok", blocked: false, local: true }).label).toBe("Answered on this computer");
  });
  it("says where a call went: the embedded model sent nothing anywhere", () => {
    expect(destination(entry("a", { local: true, provider: "local" }))).toMatch(/nothing left the machine/);
    expect(destination(entry("b", { url: "http://127.0.0.1:8080/v1/chat/completions" }))).toBe("http://127.0.0.1:8080/v1/chat/completions");
    expect(destination(entry("c", { provider: "manual" }))).toBe("You (copied by hand)");
  });
  it("pretty-prints JSON bodies and leaves text", () => {
    expect(prettyBody('{"a":1}')).toBe('{\n  "a": 1\n}');
    expect(prettyBody("plain")).toBe("plain");
    expect(prettyBody(null)).toBe("");
  });
  it("merges live entries first, once, and filters by the search", () => {
    const list = mergeEntry([entry("a"), entry("b")], entry("b", { outcome: "error" }));
    expect(list.map((e) => e.id)).toEqual(["b", "a"]);
    expect(list[0]!.outcome).toBe("error");
    expect(matchesQuery(entry("c", { reply: "Hello World" }), "world")).toBe(true);
    expect(matchesQuery(entry("c"), "nothing")).toBe(false);
    expect(matchesQuery(entry("c"), " ")).toBe(true);
  });
});

describe("manual prompts", () => {
  const p = (id: string, workflow_id: string | null): ManualPrompt => ({
    id,
    role: "builder",
    workflow_id,
    messages: [
      { role: "system", content: "Be brief. " },
      { role: "user", content: "Hi" },
    ],
    schema: { type: "object" },
    created_at: "",
  });
  it("makes one text to copy with the schema", () => {
    expect(manualPromptText(p("1", null))).toBe(
      '### system\nBe brief.\n\n### user\nHi\n\n### Answer with JSON matching this schema\n{\n  "type": "object"\n}',
    );
    expect(manualPromptText({ ...p("1", null), schema: null })).not.toMatch(/schema/);
  });
  it("adds once and filters by workflow", () => {
    const list = addPrompt(addPrompt([p("1", "w1")], p("1", "w1")), p("2", "w2"));
    expect(list.map((x) => x.id)).toEqual(["1", "2"]);
    expect(promptsFor([...list, p("3", null)], "w1").map((x) => x.id)).toEqual(["1", "3"]);
    const { workflow_id: _, ...noWorkflow } = p("4", null);
    expect(promptsFor([noWorkflow as ManualPrompt], "w1").map((x) => x.id)).toEqual(["4"]);
  });
  it("lets a prompt cut off by a restart be answered only while its work can continue", () => {
    expect(canAnswer(p("1", null))).toBe(true);
    expect(canAnswer({ interrupted: { resumes: true, reason: "Maskflow stopped…" } })).toBe(true);
    expect(canAnswer({ interrupted: { resumes: false, reason: "The run was deleted…" } })).toBe(false);
  });
});

describe("run form", () => {
  const fields: Field[] = [
    { name: "sales", label: "Sales", type: "file", required: true },
    { name: "more", label: "More", type: "files", required: false },
    { name: "n", label: "Top N", type: "number", required: true },
    { name: "flag", label: "Flag", type: "boolean", required: false },
    { name: "mode", label: "Mode", type: "choice", required: true, options: ["a", "b"] },
    { name: "note", label: "Note", type: "text", required: false },
  ];
  it("starts each type sensibly", () => {
    expect(initialValues(fields)).toEqual({ sales: [], more: [], n: "", flag: false, mode: "a", note: "" });
  });
  it("builds RunInputs and names the first problem", () => {
    const v = initialValues(fields);
    expect(runRequest(fields, v)).toEqual({ problem: "Add a file for “Sales”." });
    expect(runRequest(fields, { ...v, sales: ["file_1"] })).toEqual({ problem: "Fill in “Top N”." });
    expect(runRequest(fields, { ...v, sales: ["file_1"], n: "x" })).toEqual({ problem: "“Top N” must be a number." });
    expect(runRequest(fields, { ...v, sales: ["file_1"], more: ["file_2", "file_3"], n: "5", note: " hi " })).toEqual({
      request: { inputs: { sales: "file_1", more: ["file_2", "file_3"], n: 5, flag: false, mode: "a", note: "hi" } },
    });
  });
  it("labels durations and phases", () => {
    expect(durationLabel(850)).toBe("850 ms");
    expect(durationLabel(2400n)).toBe("2.4 s");
    expect(durationLabel(65_000)).toBe("1 min 5 s");
    expect(durationLabel(null)).toBe("—");
    expect(phaseIndex("review")).toBe(1);
    expect(phaseIndex("init")).toBe(0);
    expect(phaseIndex("failed")).toBe(-1);
  });
});

describe("routes and errors", () => {
  it("routes settings and the ledger", () => {
    expect(parseRoute("#/settings")).toEqual({ screen: "settings" });
    expect(parseRoute("#/ledger")).toEqual({ screen: "ledger" });
    expect(routeHref({ screen: "ledger" })).toBe("#/ledger");
  });
  it("keeps the privacy guard's matches on the error", () => {
    const e = errorFromResponse(422, {
      error: "privacy_blocked",
      message: "blocked",
      matches: [{ masked: "Aaaa", source: "a.csv, column \"name\"" }],
    });
    expect(e).toBeInstanceOf(ApiError);
    expect(e.code).toBe("privacy_blocked");
    expect(e.matches).toEqual([{ masked: "Aaaa", source: "a.csv, column \"name\"" }]);
    expect(errorFromResponse(409, { error: "conflict", message: "busy" }).matches).toEqual([]);
  });
});
