// Issue 12: the browser against plain `maskflow serve` (no --replay), with
// an OpenAI-compatible back end chosen in the Settings page as a user does:
// a recording server on loopback answers. Drop two CSVs, approve, converse
// to a built workflow, approve it, run it; every recorded request is checked
// against the raw values of the files, and every call is in the ledger.
// Screenshots of each screen go to tests/e2e/artifacts/.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, test } from "node:test";
import { join } from "node:path";
import { leaks, rawValuesOf, startLlmServer } from "../lib/llm-server.mjs";
import { HERE, dropFiles, launchBrowser, shot, startServer } from "./harness.mjs";

const replay = JSON.parse(readFileSync(join(HERE, "replay.json"), "utf8"));
const FILES = ["customers.csv", "orders.csv"].map((f) => join(HERE, "fixtures", f));
let llm;
let server;
let browser;
let page;

before(async () => {
  llm = await startLlmServer({
    validator: [{ feasible: true }],
    clarifier: [{ needs_clarification: true, question: "Should I keep every column from both files?" }, { needs_clarification: false }],
    builder: [replay.builder[0]],
  });
  server = await startServer(null);
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  page = await context.newPage();
  page.on("pageerror", (e) => console.error("page error:", e));
});

after(async () => {
  await browser?.close();
  server?.stop();
  llm?.close();
});

const composer = () => page.getByLabel("Message", { exact: true });

test("the back end chosen in Settings answers every role", async () => {
  await page.goto(server.url);
  await page.getByRole("link", { name: "Settings" }).click();
  await page.getByRole("heading", { name: "Settings" }).waitFor();
  await page.getByRole("button", { name: "+ Add back end" }).click();
  const form = page.getByRole("form", { name: "Back end" });
  await form.getByLabel("Name").fill("recorder");
  await form.getByLabel("Kind").selectOption("openai");
  await form.getByLabel("Base URL").fill(llm.baseUrl);
  await form.getByLabel("Model", { exact: true }).fill("e2e-model");
  await form.getByRole("button", { name: "Save back end" }).click();
  await page.getByTestId("provider").filter({ hasText: "recorder" }).waitFor();
  for (const role of ["validator", "clarifier", "builder"]) {
    await page.locator(`select[name="role-${role}"]`).selectOption("recorder");
    await page.waitForFunction((r) => document.querySelector(`select[name="role-${r}"]`)?.value === "recorder", role);
  }
  await page.getByTestId("agent-roles").waitFor();
  await shot(page, "30-backends-settings.png");
});

test("drop, approve, converse, build, approve and run on the recording back end", async () => {
  await page.getByRole("link", { name: "New workflow" }).click().catch(() => page.goto(server.url));
  await page.getByRole("heading", { name: "New workflow" }).waitFor();
  await dropFiles(page, '[data-testid="dropzone"]', ["customers.csv", "orders.csv"]);
  await page.locator(".chip-ready").nth(1).waitFor();
  await shot(page, "31-backends-extracts.png");
  await page.getByRole("button", { name: "Approve and start chatting" }).click();
  await page.waitForURL(/#\/builder\/wf_/);
  await page.waitForFunction(() => !document.querySelector("#message")?.disabled, null, { timeout: 60_000 });
  await composer().fill("merge these files by customer_id");
  await composer().press("Enter");
  await page.getByText("Should I keep every column from both files?").waitFor({ timeout: 60_000 });
  await shot(page, "32-backends-chat.png");
  await composer().fill("keep every column");
  await page.getByRole("button", { name: "Send" }).click();
  await page.waitForURL(/#\/workflows\/wf_/, { timeout: 120_000 });
  await page.locator('.versions [data-status="pending_user_approval"]').waitFor({ timeout: 120_000 });
  await shot(page, "33-backends-review.png");
  await page.getByRole("button", { name: "Approve", exact: true }).click();
  await page.locator('.versions [data-status="approved"]').waitFor();
  await page.getByRole("tab", { name: "▶ Run" }).click();
  await page.getByTestId("run-file-customers").setInputFiles(join(HERE, "fixtures", "customers-new.csv"));
  await page.getByTestId("run-file-orders").setInputFiles(join(HERE, "fixtures", "orders-new.csv"));
  await page.getByText("customers-new.csv ✓").waitFor();
  await page.getByText("orders-new.csv ✓").waitFor();
  await page.getByRole("button", { name: "▶ Run" }).click();
  const run = page.getByTestId("run").first();
  await run.getByTestId("run-output").waitFor({ timeout: 60_000 });
  assert.match(await run.innerText(), /succeeded/);
  await shot(page, "34-backends-run.png");
});

test("every request went to the chosen model, none carried a raw value, and each is in the ledger", async () => {
  const roles = new Set(llm.requests.map((r) => r.role));
  for (const role of ["validator", "clarifier", "builder"]) assert.ok(roles.has(role), `no ${role} request: ${[...roles]}`);
  for (const r of llm.requests) assert.equal(r.body.model, "e2e-model");
  assert.deepEqual(leaks(llm.requests, rawValuesOf(FILES)), []);
  const token = server.token;
  const ledger = await fetch(`${server.origin}/api/ledger?limit=500`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.json());
  const sent = ledger.filter((e) => e.outcome === "ok");
  assert.equal(sent.length, llm.requests.length, JSON.stringify(ledger.map((e) => [e.role, e.outcome])));
  assert.ok(sent.every((e) => e.provider !== "manual"));
});
