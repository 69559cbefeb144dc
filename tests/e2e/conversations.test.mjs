// The sidebar's "Conversations" section (issue 18, point 14) in Chromium
// against `maskflow serve --replay`: a builder conversation and a flow run
// listed together from `GET /api/conversations`, most recent first, filtered
// by the server to the builder's or one flow's, each opening its page.
// Screenshots go to tests/e2e/artifacts/conversations-*.png.
import assert from "node:assert/strict";
import { cpSync } from "node:fs";
import { after, before, test } from "node:test";
import { join } from "node:path";
import { HERE, ROOT, launchBrowser, shot, startServer } from "./harness.mjs";

let server;
let browser;
let page;

before(async () => {
  server = await startServer(join(HERE, "conversations-replay.json"));
  cpSync(join(ROOT, "tests/fixtures/flows/seed004"), server.home, { recursive: true });
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  page = await context.newPage();
  page.setDefaultTimeout(15000);
  page.on("pageerror", (e) => console.error("page error:", e));
});

after(async () => {
  await browser?.close();
  server?.stop();
});

/** A JSON call from the page, with the token the page keeps in its tab. */
const api = (method, path, body) =>
  page.evaluate(
    async ([method, path, body]) => {
      const r = await fetch(path, {
        method,
        headers: {
          Authorization: `Bearer ${sessionStorage.getItem("maskflow.token")}`,
          ...(body ? { "Content-Type": "application/json" } : {}),
        },
        body: body ? JSON.stringify(body) : undefined,
      });
      return { status: r.status, body: await r.json() };
    },
    [method, path, body],
  );

const list = () => page.getByRole("list", { name: "Conversations" });
const items = () => page.locator('[data-testid="conversation-item"]');
const titles = async () => (await items().allInnerTexts()).map((t) => t.split("\n")[0]);

let workflowId;
let runId;

test("a builder conversation and a flow run exist", async () => {
  await page.goto(server.url);
  const extract = { filename: "sales.csv", columns: ["date", "revenue"], sample_rows: [["####-##-##", "$#,###.##"]], row_count: 12 };
  const created = await api("POST", "/api/workflows", { file_extracts: [extract] });
  assert.equal(created.status, 201);
  workflowId = created.body.workflow_id;
  const sent = await api("POST", `/api/workflows/${workflowId}/messages`, { content: "merge these files by the date column" });
  assert.equal(sent.body.status, "clarifying");
  const started = await api("POST", "/api/flows/seed_example/run", { working_folder: server.home });
  assert.equal(started.status, 202);
  runId = started.body.conversationId;
  for (let i = 0; i < 150; i++) {
    const run = await api("GET", `/api/flow-runs/${runId}`);
    if (run.body.status === "completed") return;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.fail("the flow run did not complete");
});

test("the sidebar lists both, the latest activity first", async () => {
  // Collapsed until opened: the main navigation stays as it was.
  assert.equal(await list().count(), 0);
  await page.getByRole("button", { name: "Conversations" }).click();
  await items().nth(1).waitFor();
  assert.deepEqual(await titles(), ["Flow: seed_example", "merge these files by the date column"]);
  assert.deepEqual(await items().evaluateAll((as) => as.map((a) => a.dataset.kind)), ["flow", "builder"]);
  assert.match(await items().nth(0).innerText(), /seed_example · completed/);
  assert.match(await items().nth(1).innerText(), /Builder · Clarifying/);
  await shot(page, "conversations-01-all.png");
});

test("the filter asks the server for the builder's or one flow's", async () => {
  const filter = page.locator('[data-testid="conversations-filter"]');
  const asked = page.waitForRequest((r) => r.url().includes("/api/conversations?flowName=__none__"));
  await filter.selectOption({ label: "Builder only" });
  await asked;
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="conversation-item"]').length === 1);
  assert.deepEqual(await titles(), ["merge these files by the date column"]);
  await filter.selectOption({ label: "Flow: seed_example" });
  await page.waitForFunction(() => document.querySelector('[data-testid="conversation-item"]')?.dataset.kind === "flow");
  assert.deepEqual(await titles(), ["Flow: seed_example"]);
  await shot(page, "conversations-02-flow-filter.png");
  await filter.selectOption({ label: "All conversations" });
  await items().nth(1).waitFor();
});

test("each conversation opens its page and is marked as open", async () => {
  await list().getByRole("link", { name: /merge these files/ }).click();
  await page.waitForURL(new RegExp(`#/builder/${workflowId}$`));
  await page.getByText("Should I keep every column?").first().waitFor();
  assert.equal(await list().getByRole("link", { name: /merge these files/ }).getAttribute("aria-current"), "page");
  await list().getByRole("link", { name: /Flow: seed_example/ }).click();
  await page.waitForURL(new RegExp(`#/flows/seed_example/${runId}$`));
  await page.waitForFunction(() => document.querySelector('[data-testid="run-status"]')?.textContent === "completed");
  assert.equal(await list().getByRole("link", { name: /Flow: seed_example/ }).getAttribute("aria-current"), "page");
  await shot(page, "conversations-03-flow-open.png");
});
