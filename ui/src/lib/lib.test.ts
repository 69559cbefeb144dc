// Unit tests of the UI's pure logic: diff, chips, statuses, routes, errors, payload.
import { describe, expect, it } from "vitest";
import type { FileExtract, UploadedFile } from "../generated";
import { ApiError } from "../transport";
import { errorFromResponse } from "../transport/http";
import { approvable, chipsReducer, type Chip } from "./chips";
import { diffLines, diffStats } from "./diff";
import { noticeOf, reducedNotice } from "./errors";
import { approvalRequest, asSent, bytesLabel, payloadJson, rowsLabel, summary } from "./extracts";
import { parseRoute, routeHref } from "./router";
import { STATUS, canApprove, canChat, canEdit, stepOf } from "./status";

const extract = (filename: string, rows = 3): FileExtract => ({
  filename,
  kind: "csv",
  columns: ["date", "revenue"],
  sample_rows: [["####-##-##", "$#.##"]],
  row_count: rows,
});

describe("diffLines", () => {
  it("marks added, removed and unchanged lines with both line numbers", () => {
    const d = diffLines("a\nb\nc", "a\nx\nc\nd");
    expect(d).toEqual([
      { kind: "same", text: "a", a: 1, b: 1 },
      { kind: "removed", text: "b", a: 2 },
      { kind: "added", text: "x", b: 2 },
      { kind: "same", text: "c", a: 3, b: 3 },
      { kind: "added", text: "d", b: 4 },
    ]);
    expect(diffStats(d)).toEqual({ added: 2, removed: 1 });
  });
  it("handles empty sides and identical texts", () => {
    expect(diffLines("", "a")).toEqual([{ kind: "added", text: "a", b: 1 }]);
    expect(diffLines("a", "")).toEqual([{ kind: "removed", text: "a", a: 1 }]);
    expect(diffStats(diffLines("x\ny", "x\ny"))).toEqual({ added: 0, removed: 0 });
  });
  it("keeps the longest common subsequence", () => {
    const d = diffLines("1\n2\n3\n4\n5", "0\n1\n3\n5\n6");
    expect(d.filter((l) => l.kind === "same").map((l) => l.text)).toEqual(["1", "3", "5"]);
  });
});

describe("chips", () => {
  const uploaded = (name: string): UploadedFile => ({ file_id: "file_" + name, extract: extract(name) });
  it("walks a file from reading to ready, with upload then count progress", () => {
    let c: Chip[] = chipsReducer([], { type: "add", key: "k", name: "a.csv", size: 10 });
    expect(c[0]).toMatchObject({ status: "reading", phase: "uploading", progress: 0 });
    c = chipsReducer(c, { type: "upload", key: "k", fraction: 1 });
    expect(c[0]).toMatchObject({ phase: "counting" });
    c = chipsReducer(c, { type: "count", name: "a.csv", fraction: 0, waiting: true });
    expect(c[0]).toMatchObject({ phase: "waiting", progress: 0 });
    c = chipsReducer(c, { type: "count", name: "a.csv", fraction: 0.5 });
    expect(c[0]).toMatchObject({ phase: "counting", progress: 0.5 });
    c = chipsReducer(c, { type: "done", key: "k", file: uploaded("a.csv") });
    expect(c[0]).toMatchObject({ status: "ready", fileId: "file_a.csv" });
  });
  it("records a failure and removes chips", () => {
    let c = chipsReducer([], { type: "add", key: "1", name: "x.bin" });
    c = chipsReducer(c, { type: "fail", key: "1", message: "unsupported file type" });
    expect(c[0]).toMatchObject({ status: "error", error: "unsupported file type" });
    expect(chipsReducer(c, { type: "remove", key: "1" })).toEqual([]);
  });
  it("allows approval only when nothing is reading and something is ready", () => {
    expect(approvable([]).canApprove).toBe(false);
    let c = chipsReducer([], { type: "add", key: "1", name: "a.csv" });
    expect(approvable(c)).toMatchObject({ canApprove: false, reason: "Wait until every file is read." });
    c = chipsReducer(c, { type: "done", key: "1", file: uploaded("a.csv") });
    c = chipsReducer(c, { type: "add", key: "2", name: "b.bin" });
    c = chipsReducer(c, { type: "fail", key: "2", message: "no" });
    const a = approvable(c);
    expect(a.canApprove).toBe(true);
    expect(a.ready.map((r) => r.name)).toEqual(["a.csv"]);
  });
});

describe("statuses", () => {
  it("opens the chat only while drafting and offers approve/edit per seed 000", () => {
    const all = Object.keys(STATUS) as (keyof typeof STATUS)[];
    expect(all.filter(canChat)).toEqual(["validating", "validated", "clarifying"]);
    expect(all.filter(canApprove)).toEqual(["pending_user_approval"]);
    expect(all.filter(canEdit)).toEqual(["pending_user_approval", "approved", "failed"]);
    expect(stepOf("building")).toBe(2);
    expect(stepOf("archived")).toBe(-1);
  });
});

describe("routes", () => {
  it("round-trips every route", () => {
    for (const r of [
      { screen: "builder" as const },
      { screen: "builder" as const, workflowId: "wf_1" },
      { screen: "workflows" as const },
      { screen: "workflows" as const, workflowId: "wf/odd id" },
      { screen: "agents" as const },
    ]) {
      expect(parseRoute(routeHref(r))).toEqual(r);
    }
    expect(parseRoute("")).toEqual({ screen: "builder" });
    expect(parseRoute("#/nonsense/x")).toEqual({ screen: "builder" });
  });
});

describe("errors", () => {
  it("shows a conflict as a polite warning, other errors as errors", () => {
    const n = noticeOf(new ApiError("conflict", "workflow wf_1 is already handling a message; wait for its reply"));
    expect(n.tone).toBe("warning");
    expect(n.title).toMatch(/One moment/);
    expect(noticeOf(new ApiError("invalid_request", "bad")).tone).toBe("error");
  });
  it("says what a prompt left out to fit the model", () => {
    const r = { role: "validator", window: 2048, prompt_tokens_before: 5000, prompt_tokens: 1400, left_out: ["12 of 15 sample rows"], summary: "To fit the model's 2,048-token context window, …" };
    const n = reducedNotice([r, { ...r, role: "clarifier", summary: "Clarifier too." }]);
    expect(n.tone).toBe("warning");
    expect(n.detail).toBe("To fit the model's 2,048-token context window, … Clarifier too.");
  });
  it("reads the HTTP API's {error, message} body", () => {
    const e = errorFromResponse(409, { error: "conflict", message: "busy" });
    expect([e.code, e.message]).toEqual(["conflict", "busy"]);
    expect(errorFromResponse(502, "<html>").code).toBe("http_502");
  });
});

describe("extracts", () => {
  it("sends exactly the approved extracts and their file ids", () => {
    const req = approvalRequest([{ fileId: "file_1", extract: extract("a.csv") }]);
    expect(req).toEqual({ file_extracts: [extract("a.csv")], file_ids: ["file_1"] });
    expect(JSON.parse(payloadJson([extract("a.csv")]))).toEqual({ file_extracts: [extract("a.csv")] });
  });
  it("sends a flagged name masked unless the user chose to send it as it is", () => {
    const masked: FileExtract = {
      ...extract("hours.xlsx"),
      columns: ["Week", "Aaaa Aaaaa", "Aaaaa Aaaaaa"],
      sheets: [{ name: "Aaaa Aaaa", columns: ["Week", "Aaaa Aaaaa", "Aaaaa Aaaaaa"], sample_rows: [], row_count: 1 }],
    };
    const flagged = [
      { at: "/columns/1", name: "John Smith", masked: "Aaaa Aaaaa", reason: "looks like a person's name" },
      { at: "/columns/2", name: "Maria Garcia", masked: "Aaaaa Aaaaaa", reason: "looks like a person's name" },
      { at: "/sheets/0/name", name: "Acme Corp", masked: "Aaaa Aaaa", reason: "looks like a company's name" },
      { at: "/sheets/0/columns/1", name: "John Smith", masked: "Aaaa Aaaaa", reason: "looks like a person's name" },
    ];
    const file = { fileId: "file_1", extract: masked, flagged };
    expect(approvalRequest([file])).toEqual({ file_extracts: [masked], file_ids: ["file_1"] });
    const req = approvalRequest([file], new Set(["John Smith", "not flagged"]));
    expect(req.send_as_is).toEqual(["John Smith"]);
    const sent = req.file_extracts[0]!;
    expect(sent.columns).toEqual(["Week", "John Smith", "Aaaaa Aaaaaa"]);
    expect(sent.sheets?.[0]).toMatchObject({ name: "Aaaa Aaaa", columns: ["Week", "John Smith", "Aaaaa Aaaaaa"] });
    expect(masked.columns[1]).toBe("Aaaa Aaaaa");
    expect(asSent(masked, flagged, new Set(["Acme Corp"])).sheets?.[0]?.name).toBe("Acme Corp");
  });
  it("labels sizes and counts for people", () => {
    expect(rowsLabel(1)).toBe("1 row");
    expect(rowsLabel(1542)).toBe("1,542 rows");
    expect(bytesLabel(512)).toBe("512 B");
    expect(bytesLabel(2_500_000)).toBe("2.4 MB");
    expect(summary(extract("a.csv", 2))).toBe("2 rows · 2 columns");
    const table = { columns: ["Name", "Total"], sample_rows: [["Aaa", "#.##"]], row_count: 3 };
    const pdf: FileExtract = {
      ...extract("r.pdf"),
      kind: "pdf",
      columns: [],
      sample_rows: [],
      document: { page_count: 2, headings: [], text_preview: "", tables: [table, table] },
    };
    expect(summary(pdf)).toBe("2 pages · 2 tables");
  });
});
