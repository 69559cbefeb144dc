// The Flows page's Resume can pick the step path (issue 31, point 6): a run
// stopped at its gate offers "Resume from a step…" with the flow's steps and
// their seed 004 paths, the last completed one preselected; a path the
// server refuses (seed 004's `400 invalid_request`) is said in words, and a
// valid one runs that step again. The run came over the WebSocket the page
// asks `flow_turn`/`flow_status` of. Screenshots go to
// tests/e2e/artifacts/flows-resume-*.png.
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { after, before, test } from "node:test";
import { join } from "node:path";
import { HERE, launchBrowser, shot, startServer } from "./harness.mjs";

let server;
let browser;
let page;

const FLOW = {
  description: "Draft, approve, publish.",
  steps: [
    {
      type: "llm",
      label: "Draft notes",
      agentType: "writer",
      identifier: "notes",
      messages: [{ role: "user", content: ["Draft the release notes."] }],
    },
    {
      type: "gate",
      label: "Approve the draft",
      prompt: "Publish this draft?",
      context: ["output.text"],
      options: [{ label: "Approve" }, { label: "Drop" }],
    },
    {
      type: "llm",
      label: "Publish",
      agentType: "writer",
      identifier: "notes",
      messages: [{ role: "user", content: ["Publish it."] }],
    },
  ],
};

before(async () => {
  server = await startServer(join(HERE, "flows-resume-replay.json"));
  mkdirSync(join(server.home, "flows"), { recursive: true });
  mkdirSync(join(server.home, "agents"), { recursive: true });
  writeFileSync(join(server.home, "agents/writer.json"), JSON.stringify({ prompt: "You write release notes." }));
  writeFileSync(join(server.home, "flows/release.json"), JSON.stringify(FLOW));
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

const statusIs = (s) =>
  page.waitForFunction((want) => document.querySelector('[data-testid="run-status"]')?.textContent === want, s);

test("a stopped run resumes from a chosen step; a refused path is said in words", async () => {
  await page.goto(`${server.url}#/flows/release`);
  await page.getByRole("button", { name: "Run", exact: true }).click();
  await page.getByRole("group", { name: "Your decision" }).waitFor();
  await statusIs("waiting");
  await page.getByRole("button", { name: "Stop" }).click();
  await statusIs("stopped");

  await page.getByText("Resume from a step…").click();
  const select = page.getByLabel("Resume from step");
  const options = await select.locator("option").allInnerTexts();
  assert.deepEqual(
    options.map((o) => o.trim()),
    ["0 · Draft notes", "1 · Approve the draft", "2 · Publish"],
  );
  // The last completed step is preselected.
  assert.equal(await select.inputValue(), "0");
  assert.equal(await page.getByLabel("Step path").inputValue(), "0");
  await select.selectOption({ label: "2 · Publish" });
  assert.equal(await page.getByLabel("Step path").inputValue(), "2");

  // A path the flow does not have: the server's 400, in words.
  await page.getByLabel("Step path").fill("7.1");
  assert.equal(await select.inputValue(), "");
  await page.getByRole("button", { name: "Resume from this step" }).click();
  const notice = page.getByRole("alert").filter({ hasText: "That did not work" });
  await notice.waitFor();
  const said = await notice.innerText();
  assert.match(said, /Cannot resume at step path 7\.1: resumeStepPath \[7, 1\] does not name a step of this flow/);
  await statusIs("stopped");
  await shot(page, "flows-resume-1-refused.png");

  // The first step again: it runs, and the run waits at its gate once more.
  await select.selectOption({ label: "0 · Draft notes" });
  await page.getByRole("button", { name: "Resume from this step" }).click();
  await page.locator(".bubble-text", { hasText: "A second draft of the notes." }).waitFor();
  await statusIs("waiting");
  const gate = await page.getByRole("group", { name: "Your decision" }).innerText();
  assert.match(gate, /A second draft of the notes\./);
  await shot(page, "flows-resume-2-resumed.png");
});
