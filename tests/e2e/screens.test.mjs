// The manual back end (no --replay: what a new user gets) through the real
// UI in Chromium: Settings (add a back end, a dead URL's test says why), the
// privacy guard's dialog, the copy-and-paste flow through the build gate to
// an approved workflow, its test report and session files, a run on new
// files through the generated form, and the privacy ledger. Screenshots of
// each screen go to tests/e2e/artifacts/.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, test } from "node:test";
import { join } from "node:path";
import { HERE, downloadBytes, dropFiles, launchBrowser, shot, startServer } from "./harness.mjs";

let server;
let browser;
let page;
const replay = JSON.parse(readFileSync(join(HERE, "replay.json"), "utf8"));

before(async () => {
  server = await startServer(null);
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.origin });
  page = await context.newPage();
  page.on("pageerror", (e) => console.error("page error:", e));
});

after(async () => {
  await browser?.close();
  server?.stop();
});

const composer = () => page.getByLabel("Message", { exact: true });

test("settings: add a back end; testing a dead URL says clearly why it failed", async () => {
  await page.goto(server.url);
  await page.getByRole("link", { name: "Settings" }).click();
  await page.getByRole("heading", { name: "Settings" }).waitFor();
  // With no configuration every role uses the manual back end.
  assert.equal(await page.locator('select[name="role-builder"]').inputValue(), "manual");
  await page.getByRole("button", { name: "+ Add back end" }).click();
  const form = page.getByRole("form", { name: "Back end" });
  await form.getByLabel("Name").fill("dead-llm");
  await form.getByLabel("Kind").selectOption("openai");
  await form.getByLabel("Base URL").fill("http://127.0.0.1:9/v1");
  await form.getByLabel("Model", { exact: true }).fill("gpt-test");
  await form.getByRole("button", { name: "Save back end" }).click();
  const card = page.getByTestId("provider").filter({ hasText: "dead-llm" });
  await card.waitFor();
  assert.match(await card.innerText(), /gpt-test · http:\/\/127\.0\.0\.1:9\/v1/);
  assert.match(await card.getByTestId("key-source").innerText(), /No key|environment/);
  await card.getByRole("button", { name: "Test connection" }).click();
  const result = card.getByTestId("test-result");
  await result.waitFor();
  const text = await result.innerText();
  assert.match(text, /^✕/);
  assert.ok(text.length > 20, `a clear message, not a code: ${text}`);
  // A key goes to the keyring (or a clear message says there is none) and is never shown.
  await card.getByLabel("API key for dead-llm").fill("sk-secret-e2e-123");
  await card.getByRole("button", { name: "Save key" }).click();
  // The earlier "added" notice is replaced by what became of the key.
  const keyNotice = page.locator(".notice").filter({ hasText: /Key saved|keyring/i });
  await keyNotice.waitFor();
  assert.ok(!(await page.locator("body").innerText()).includes("sk-secret-e2e-123"));
  await page.locator(".notice .icon-button").click();
  await shot(page, "10-settings.png");
  // Roles stay on the manual back end; removing the dead one leaves them so.
  await card.getByRole("button", { name: "Remove dead-llm" }).click();
  await card.waitFor({ state: "detached" });
});

/** Answers what a person would paste for each prompt. */
function answerFor(prompt) {
  if (prompt.includes("needs_clarification")) return JSON.stringify(replay.clarifier[1]);
  if (prompt.includes("feasible")) return JSON.stringify(replay.validator[0]);
  return JSON.stringify(replay.builder[0]);
}

test("the privacy guard's dialog shows the user's own words in place with their source, and sends only when confirmed", async () => {
  await page.getByRole("link", { name: "New workflow" }).click();
  await dropFiles(page, '[data-testid="dropzone"]', ["customers.csv", "orders.csv"]);
  await page.locator(".chip-ready").nth(1).waitFor();
  await page.getByRole("button", { name: "Approve and start chatting" }).click();
  await page.waitForURL(/#\/builder\/wf_/);
  await page.waitForFunction(() => !document.querySelector("#message")?.disabled);
  await composer().fill("merge these files by customer_id, like the row of John Smith");
  await composer().press("Enter");
  const dialog = page.getByTestId("privacy-dialog");
  await dialog.waitFor();
  const said = await dialog.innerText();
  // #28 point 7: the user's own words are theirs: shown as typed, in place.
  assert.match(said, /John Smith’ is a value of customers\.csv/);
  assert.equal(await dialog.locator("mark").first().innerText(), "John Smith");
  await shot(page, "11-builder-privacy-dialog.png");
  await dialog.getByRole("button", { name: "Cancel and edit" }).click();
  await dialog.waitFor({ state: "detached" });
  assert.match(await composer().inputValue(), /John Smith/, "the message is kept for editing");
  await composer().press("Enter");
  await dialog.waitFor();
  await dialog.getByRole("button", { name: "Send anyway" }).click();
  await page.getByTestId("manual-prompt").waitFor();
});

test("the manual back end: copy each prompt, paste the answer, reach an approved workflow with no gate on what was pasted", async () => {
  let answered = 0;
  let gates = 0;
  // Whatever comes next: a prompt to answer, a gate to approve, or the review.
  const next = () =>
    page.waitForFunction(
      () =>
        document.querySelector("[data-testid=manual-prompt]") ||
        document.querySelector("[data-testid=gate]") ||
        location.hash.startsWith("#/workflows/"),
      null,
      { timeout: 60_000 },
    );
  for (let i = 0; i < 20; i++) {
    await next();
    if (/#\/workflows\/wf_/.test(page.url())) break;
    const prompt = page.getByTestId("manual-prompt").first();
    if (await prompt.count()) {
      const id = await prompt.getAttribute("data-prompt-id");
      const text = await prompt.getByLabel("The prompt to copy").inputValue();
      assert.ok(text.startsWith("### "), text.slice(0, 80));
      await prompt.getByRole("button", { name: "Copy prompt" }).click();
      await prompt.getByRole("button", { name: "Copied ✓" }).waitFor();
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), text);
      if (answered === 0) await shot(page, "12-builder-manual-prompt.png");
      await prompt.getByTestId("manual-answer").fill(answerFor(text));
      await prompt.getByRole("button", { name: "Send answer" }).click();
      await page.locator(`[data-prompt-id="${id}"]`).waitFor({ state: "detached" });
      answered++;
    } else {
      const gate = page.getByTestId("gate");
      await page.getByTestId("build-progress").waitFor();
      if (gates === 0) await shot(page, "13-builder-build-gate.png");
      await gate.getByRole("button", { name: "Approve and continue" }).click();
      await gate.waitFor({ state: "detached" });
      gates++;
    }
  }
  assert.match(page.url(), /#\/workflows\/wf_/);
  assert.ok(answered >= 3, `answered ${answered} prompts`);
  assert.equal(gates, 0, "nobody is asked to approve the reply they pasted (#28)");
  await page.getByRole("button", { name: "Approve", exact: true }).click();
  await page.locator('.versions [data-status="approved"]').waitFor();
});

test("the version's test report and build session files can be reviewed", async () => {
  await page.getByRole("tab", { name: "Test report" }).click();
  const report = page.getByTestId("test-report");
  await report.waitFor();
  assert.match(await report.innerText(), /Test (passed|failed|skipped)/);
  await page.getByRole("tab", { name: "Build session" }).click();
  await page.getByText("Iteration 1", { exact: true }).waitFor();
  await page.locator(".session-tree .link").first().click();
  const file = page.getByTestId("session-file");
  await file.waitFor();
  assert.ok((await file.innerText()).length > 0);
});

test("a run on new files through the generated form shows its output", async () => {
  await page.getByRole("tab", { name: "▶ Run" }).click();
  await page.getByTestId("run-file-customers").setInputFiles(join(HERE, "fixtures", "customers-new.csv"));
  await page.getByTestId("run-file-orders").setInputFiles(join(HERE, "fixtures", "orders-new.csv"));
  await page.getByText("customers-new.csv ✓").waitFor();
  await page.getByText("orders-new.csv ✓").waitFor();
  await page.getByRole("button", { name: "▶ Run" }).click();
  const run = page.getByTestId("run").first();
  await run.waitFor();
  const output = run.getByTestId("run-output");
  await output.waitFor();
  // The preview loads after the output is listed: wait for its rows.
  await output.getByText(/Ada Lovelace/).first().waitFor();
  const text = await run.innerText();
  assert.match(text, /succeeded/);
  assert.match(text, /merged\.csv/);
  assert.match(text, /3 rows/);
  assert.match(text, /Ada Lovelace/, "the preview shows the new files' rows (local only)");
  const body = (await downloadBytes(page, output.getByRole("link", { name: "Download" }))).toString("utf8");
  assert.match(body, /Alan Turing/);
  await run.getByRole("button", { name: "Output, errors and limits" }).click();
  await run.getByText("Limits").waitFor();
  await shot(page, "14-workflows-run.png");
});

test("the privacy ledger lists every request, searchable, each with its full body", async () => {
  await page.getByRole("link", { name: "Privacy ledger" }).click();
  await page.getByRole("heading", { name: "Privacy ledger" }).waitFor();
  const entries = page.getByTestId("ledger-entry");
  await entries.first().waitFor();
  const all = await entries.count();
  assert.ok(all >= 4, `${all} entries`);
  const list = await page.locator(".ledger-list").innerText();
  assert.match(list, /Blocked by privacy guard/);
  assert.match(list, /validator/);
  assert.match(list, /builder/);
  await entries.last().getByRole("button").click();
  await entries.last().getByTestId("ledger-request").waitFor();
  await shot(page, "15-ledger.png");
  await page.getByLabel("Search the ledger").fill("feasible");
  await page.waitForFunction((n) => document.querySelectorAll('[data-testid="ledger-entry"]').length < n, all);
  assert.match(await page.locator(".ledger-list").innerText(), /validator/);
});
