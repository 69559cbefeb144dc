// Retries of fan-out items (issue 18 point 8) in Chromium against the real
// `maskflow serve`: a foreach item fails and its retry is in flight when the
// process is killed (kill -9); after a restart, resuming the run does not
// retry it silently: the Flows page shows the due retry (which item, why),
// the person allows it, and the run goes on to the end. After the restart the
// run shows as interrupted (stored as running, its process gone) and is
// resumed directly. The back end is a
// small Ollama-compatible server in this file (item-b's first call fails,
// its second hangs, later calls answer). Screenshots go to
// tests/e2e/artifacts/fanout-retry-*.png.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { launchBrowser, shot, startServer } from "./harness.mjs";

let server;
let browser;
let page;
let backend;
const calls = { "item-a": 0, "item-b": 0, "item-c": 0 };
let hanging = null;
const hungOnce = new Promise((r) => (hanging = r));

const FLOW = {
  description: "Reviews three files, one at a time.",
  input: { files: ["item-a", "item-b", "item-c"] },
  steps: [
    {
      type: "foreach",
      label: "Review files",
      itemsPath: "input.files",
      itemVariable: "file",
      maxRetries: 2,
      step: { type: "llm", agentType: "rev", identifier: "r", messages: [{ role: "user", content: ["Review {{file}}"] }] },
    },
    { type: "join", id: "all", label: "All reviews" },
  ],
};

/** Ollama's `/api/chat` as NDJSON: fails, hangs or answers by item. */
function ollama(req, res) {
  let body = "";
  req.on("data", (d) => (body += d));
  req.on("end", () => {
    if (req.url !== "/api/chat") {
      res.writeHead(404).end();
      return;
    }
    const messages = JSON.parse(body).messages ?? [];
    const last = String(messages[messages.length - 1]?.content ?? "");
    const item = Object.keys(calls).find((k) => last.includes(k));
    const n = item ? calls[item]++ : 0;
    res.writeHead(200, { "Content-Type": "application/x-ndjson" });
    if (item === "item-b" && n === 0) {
      res.end(JSON.stringify({ error: "the model ran out of memory" }) + "\n");
    } else if (item === "item-b" && n === 1) {
      hanging(); // never answered: the process is killed meanwhile
    } else {
      res.write(JSON.stringify({ message: { role: "assistant", content: `Reviewed ${item}: fine.` }, done: false }) + "\n");
      res.end(JSON.stringify({ done: true, done_reason: "stop", prompt_eval_count: 5, eval_count: 4 }) + "\n");
    }
  });
}

before(async () => {
  backend = createServer(ollama);
  await new Promise((r) => backend.listen(0, "127.0.0.1", r));
  browser = await launchBrowser();
  page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  page.setDefaultTimeout(15000);
  page.on("pageerror", (e) => console.error("page error:", e));
});

after(async () => {
  await browser?.close();
  server?.stop();
  backend?.closeAllConnections();
  backend?.close();
});

const args = () => ["--provider", "ollama", "--base-url", `http://127.0.0.1:${backend.address().port}`, "--model", "reviewer"];
const status = () => page.locator('[data-testid="run-status"]');
const statusIs = (s) => page.waitForFunction((s) => document.querySelector('[data-testid="run-status"]')?.textContent === s, s);

test("a retry due when the process died is shown on resume, and allowing it finishes the run", async () => {
  server = await startServer(null, args());
  const home = server.home;
  mkdirSync(join(home, "flows"), { recursive: true });
  // A flow may only name agents Maskflow knows: each gets its file.
  mkdirSync(join(home, "agents"), { recursive: true });
  writeFileSync(join(home, "agents", "rev.json"), "{}");
  writeFileSync(join(home, "flows", "review_files.json"), JSON.stringify(FLOW));

  await page.goto(server.url);
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Flows", exact: true }).click();
  await page.getByRole("link", { name: /review_files/ }).click();
  await page.getByRole("button", { name: "Run", exact: true }).click();
  await hungOnce; // item-b failed once; its retry is in flight
  await page.getByText("Reviewed item-a: fine.").waitFor();
  await shot(page, "fanout-retry-1-in-flight.png");
  const runUrl = page.url();
  assert.equal(calls["item-c"], 0);

  server.kill();
  await server.exited();
  server = await startServer(null, args(), home);

  await page.goto(`${server.url}${new URL(runUrl).hash}`);
  // Nothing runs it any more: the page says it was interrupted (not
  // "Working…") and offers Resume and Stop, without a Stop needed first.
  await page.getByText("Reviewed item-a: fine.").waitFor();
  await statusIs("interrupted");
  const cut = page.getByTestId("run-interrupted");
  assert.match(await cut.innerText(), /Interrupted — Maskflow stopped while this run was going\./);
  assert.equal(await page.getByText("Working…").count(), 0);
  assert.ok(await page.getByRole("button", { name: "Stop", exact: true }).isEnabled());
  const resume = page.getByRole("button", { name: "Resume", exact: true });
  assert.ok(await resume.isEnabled());
  const listed = page.getByRole("list", { name: "Runs" }).getByText("interrupted", { exact: true });
  await listed.waitFor();
  // The sidebar's conversation list says so too.
  await page.getByRole("button", { name: "Conversations" }).click();
  const side = page.getByTestId("conversation-item").filter({ hasText: "review_files · interrupted" });
  await side.waitFor();
  assert.equal(calls["item-b"], 2);
  await shot(page, "fanout-retry-2-interrupted.png");
  await resume.click();

  const panel = page.getByRole("group", { name: "A retry is waiting for you" });
  await panel.waitFor();
  assert.equal(await status().innerText(), "needs attention");
  assert.equal(calls["item-b"], 2, "not retried silently");
  const shown = await panel.innerText();
  assert.match(shown, /An item of step “Review files” failed, and the run stopped before its retry ran\./);
  assert.match(shown, /Item 2 of the list: retry 1 of 2 is due\. Last error: agent "rev" failed: .*the model ran out of memory/);
  assert.match(shown, /the model ran out of memory/);
  await shot(page, "fanout-retry-3-shown.png");

  assert.match(shown, /Retry now: run the failed item again\./);
  await panel.getByRole("button", { name: "Retry now", exact: true }).click();
  await statusIs("completed");
  assert.equal(calls["item-b"], 3);
  assert.equal(calls["item-c"], 1);
  const transcript = await page.locator('[data-testid="flow-bubble"]').allInnerTexts();
  for (const item of ["item-a", "item-b", "item-c"]) {
    assert.ok(transcript.some((t) => t.includes(`Reviewed ${item}: fine.`)), transcript.join("\n---\n"));
  }
  await shot(page, "fanout-retry-4-completed.png");
});
