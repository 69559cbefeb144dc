// The Flows page (issue 8) in Chromium against `maskflow serve --replay`:
// seed 004's example dropped into the flows folder runs, its diagram colours
// its nodes and its bubbles show agent, identifier, label, step and loop
// depth; a Mermaid file is imported, run, stopped at its gate, resumed, and
// the gate answered with a note; the flow exports as Mermaid. Screenshots go
// to tests/e2e/artifacts/flows-*.png.
import assert from "node:assert/strict";
import { cpSync, writeFileSync } from "node:fs";
import { after, before, test } from "node:test";
import { join } from "node:path";
import { FIXTURES, HERE, ROOT, launchBrowser, shot, startServer } from "./harness.mjs";

let server;
let browser;
let page;

before(async () => {
  server = await startServer(join(HERE, "flows-replay.json"));
  cpSync(join(ROOT, "tests/fixtures/flows/seed004"), server.home, { recursive: true });
  // The imported diagram's steps go to a `writer` agent: a flow naming an
  // agent Maskflow does not know is listed disabled (issue 31), so the user
  // has one, as they would before importing such a flow.
  writeFileSync(join(server.home, "agents", "writer.json"), JSON.stringify({ prompt: "You write release notes." }));
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
  page = await context.newPage();
  page.setDefaultTimeout(15000);
  page.on("pageerror", (e) => console.error("page error:", e));
});

after(async () => {
  await browser?.close();
  server?.stop();
});

const bubbles = () => page.locator('[data-testid="flow-bubble"]');
const status = () => page.locator('[data-testid="run-status"]');
const nodeClass = (id) =>
  page.locator(`[data-testid="flow-diagram"] g.node[id*="-${id}-"]`).first().getAttribute("class");

test("seed 004's example is listed and drawn as a diagram", async () => {
  await page.goto(server.url);
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Flows", exact: true }).click();
  await page.getByRole("link", { name: /seed_example/ }).click();
  await page.locator('[data-testid="flow-diagram"] svg').waitFor();
  assert.match(await nodeClass("s0"), /pending/);
  assert.match(await page.locator('[data-testid="flow-diagram"]').innerText(), /Loop: Main loop/);
  await shot(page, "flows-01-diagram.png");
});

test("running it fills the transcript and colours the diagram", async () => {
  await page.getByRole("button", { name: "Run", exact: true }).click();
  await page.waitForFunction(() => document.querySelector('[data-testid="run-status"]')?.textContent === "completed");
  assert.ok((await bubbles().count()) >= 5);
  const first = await bubbles().first().innerText();
  assert.match(first, /coding_agent/);
  assert.match(first, /summary/);
  assert.match(first, /Draft summary/);
  assert.match(first, /step 1 \/ 3/);
  assert.match(first, /loop depth 1/);
  await page.waitForFunction(() => /done/.test(document.querySelector('[data-testid="flow-diagram"] g.node[id*="-s0_0-"]')?.getAttribute("class") ?? ""));
  const runs = await page.getByRole("list", { name: "Runs" }).innerText();
  assert.match(runs, /Flow: seed_example/);
  await shot(page, "flows-02-completed.png");
});

test("a run is renamed from the sidebar", async () => {
  page.once("dialog", (d) => void d.accept("Release summary"));
  await page.getByRole("button", { name: /^Rename Flow: seed_example/ }).click();
  await page.getByRole("list", { name: "Runs" }).getByText("Release summary").waitFor();
});

test("a Mermaid file imports, runs to its gate, stops, resumes and takes an answer", async () => {
  await page.locator('[data-testid="flow-import"]').setInputFiles(join(FIXTURES, "review.mmd"));
  await page.getByRole("link", { name: /^review/ }).waitFor();
  await page.waitForURL(/#\/flows\/review/);
  await page.locator('[data-testid="flow-diagram"] svg').waitFor();
  await page.getByRole("button", { name: "Run", exact: true }).click();
  await page.getByRole("group", { name: "Your decision" }).waitFor();
  assert.equal(await status().innerText(), "waiting");
  const gate = await page.getByRole("group", { name: "Your decision" }).innerText();
  assert.match(gate, /Publish this draft\?/);
  assert.match(gate, /A first draft of the release notes\./);
  await page.waitForFunction(() => /waiting/.test(document.querySelector('[data-testid="flow-diagram"] g.node[id*="-G-"]')?.getAttribute("class") ?? ""));
  assert.match(await nodeClass("A"), /done/);
  await shot(page, "flows-03-gate.png");

  await page.getByRole("button", { name: "Stop" }).click();
  await page.waitForFunction(() => document.querySelector('[data-testid="run-status"]')?.textContent === "stopped");
  await shot(page, "flows-04-stopped.png");
  await page.getByRole("button", { name: "Resume" }).click();
  await page.getByRole("group", { name: "Your decision" }).waitFor();

  const withNote = page.getByRole("button", { name: "Publish with a note" });
  assert.equal(await withNote.isDisabled(), true);
  await page.getByLabel("Your note").fill("Ship on Monday.");
  await withNote.click();
  await page.waitForFunction(() => document.querySelector('[data-testid="run-status"]')?.textContent === "completed");
  assert.match(await page.locator(".flow-transcript").innerText(), /Published/);
  await page.waitForFunction(() => /done/.test(document.querySelector('[data-testid="flow-diagram"] g.node[id*="-B-"]')?.getAttribute("class") ?? ""));
  await shot(page, "flows-05-answered.png");
});

test("the flow exports as Mermaid", async () => {
  const [download] = await Promise.all([
    page.waitForEvent("download"),
    page.getByRole("button", { name: "Export Mermaid" }).click(),
  ]);
  assert.equal(download.suggestedFilename(), "review.mmd");
});

test("a flow naming an agent that is missing is drawn, says why, and cannot run", async () => {
  writeFileSync(
    join(server.home, "flows", "drafts.json"),
    JSON.stringify({ steps: [{ type: "llm", label: "Draft", agentType: "editor", identifier: "d", messages: [{ role: "user", content: ["Draft it."] }] }] }),
  );
  await page.goto(server.url + "#/flows/drafts");
  await page.locator('[data-testid="flow-diagram"] svg').waitFor();
  assert.match(await page.locator('[data-testid="flow-diagram"]').innerText(), /Draft/);
  const reason = /names the agent "editor", which does not exist/;
  await page.getByTestId("flow-drafts").getByText(reason).waitFor();
  assert.equal(await page.getByRole("button", { name: "Run", exact: true }).isDisabled(), true);
  // Said once on the page, as a notice, not as an error of the page's own.
  assert.equal(await page.getByText("That did not work").count(), 0);
  await shot(page, "flows-06-missing-agent.png");
});
