// A person's decision in a flow (issue 31 point 2) in Chromium against
// `maskflow serve --replay`: seed 003's PR Review example, its human step
// routed on the reviewer's decision (tests/fixtures/flows/mermaid/
// pr-review-human.mmd), is imported through the Flows page and run; the
// middling score stops at the human review, whose form offers approve,
// request changes and reject with an optional result; a result that is not
// JSON is refused before it is sent; "Request changes" with a JSON result
// routes the run to the feedback step and the close, never the merge.
// Screenshots go to tests/e2e/artifacts/manual-task-*.png.
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { HERE, ROOT, launchBrowser, shot, startServer } from "./harness.mjs";

let server;
let browser;
let page;

before(async () => {
  server = await startServer(join(HERE, "manual-task-replay.json"));
  browser = await launchBrowser();
  page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  page.setDefaultTimeout(15000);
  page.on("pageerror", (e) => console.error("page error:", e));
  await page.goto(server.url);
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Flows", exact: true }).click();
});

after(async () => {
  await browser?.close();
  server?.stop();
});

const status = () => page.locator('[data-testid="run-status"]');
const bubbles = () => page.locator('[data-testid="flow-bubble"]');
const form = () => page.getByRole("group", { name: "Your decision" });

test("the PR Review's human step asks for a decision and a result", async () => {
  await page.locator('[data-testid="flow-import"]').setInputFiles(join(ROOT, "tests/fixtures/flows/mermaid/pr-review-human.mmd"));
  await page.waitForURL(/#\/flows\/pr-review-human$/);
  await page.getByRole("button", { name: "Run", exact: true }).click();
  await page.waitForFunction(() => document.querySelector('[data-testid="run-status"]')?.textContent === "waiting");
  await form().waitFor();
  assert.match(await form().locator("h3").innerText(), /Approve, request changes, or reject/);
  const buttons = await form().locator(".actions button").allInnerTexts();
  assert.deepEqual(buttons, ["Approve", "Request changes", "Reject"]);
  await shot(page, "manual-task-1-decision.png");
});

test("a result that is not JSON is refused before it is sent", async () => {
  await form().getByRole("radio", { name: "JSON" }).check();
  await form().getByRole("textbox", { name: "Your result" }).fill("{notes: rename the parser}");
  await form().getByRole("alert").waitFor();
  assert.match(await form().getByRole("alert").innerText(), /not valid JSON/);
  assert.equal(await form().getByRole("button", { name: "Request changes" }).isDisabled(), true);
  assert.equal(await status().textContent(), "waiting");
  await shot(page, "manual-task-2-bad-json.png");
});

test('"Request changes" routes the run to the feedback and the close', async () => {
  await form().getByRole("textbox", { name: "Your result" }).fill('{"notes": "rename the parser"}');
  assert.equal(await form().getByRole("alert").count(), 0);
  await form().getByRole("button", { name: "Request changes" }).click();
  await page.waitForFunction(() => document.querySelector('[data-testid="run-status"]')?.textContent === "completed");
  const said = (await bubbles().allInnerTexts()).join("\n---\n");
  assert.match(said, /request changes/);
  assert.match(said, /rename the parser/);
  assert.match(said, /Generate constructive feedback requesting changes/);
  assert.match(said, /Closed the PR: changes requested\./);
  assert.doesNotMatch(said, /Merge the PR/);
  await shot(page, "manual-task-3-routed.png");
});
