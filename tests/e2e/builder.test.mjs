// The seed 000 flow in the real UI, in Chromium, against `maskflow serve`
// with the replay provider: drop two CSVs, check the masked samples, chat
// disabled until approval, approve, converse, build, review the script,
// approve, edit and rebuild, compare versions; plus removing a chip, an
// unsupported file's error and a 409 shown politely. Screenshots of every
// screen go to tests/e2e/artifacts/.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { join } from "node:path";
import { HERE, dropFiles, launchBrowser, shot, startServer } from "./harness.mjs";

let server;
let browser;
let page;

before(async () => {
  server = await startServer(join(HERE, "replay.json"));
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  page = await context.newPage();
  page.on("pageerror", (e) => console.error("page error:", e));
});

after(async () => {
  await browser?.close();
  server?.stop();
});

const chips = () => page.locator('[data-testid="chip"]');
const composer = () => page.getByLabel("Message", { exact: true });

test("opening the printed URL shows the builder with an empty state and the chat closed", async () => {
  await page.goto(server.url);
  await page.getByRole("heading", { name: "New workflow" }).waitFor();
  await page.getByText("No files yet").waitFor();
  assert.equal(await composer().isDisabled(), true);
  const nav = await page.getByRole("navigation", { name: "Main" }).innerText();
  assert.match(nav, /Workflows/);
  await shot(page, "01-builder-empty.png");
});

test("two dropped CSVs show their columns and masked samples, never a raw value", async () => {
  await dropFiles(page, '[data-testid="dropzone"]', ["customers.csv", "orders.csv"]);
  await page.locator(".chip-ready").nth(1).waitFor();
  assert.equal(await chips().count(), 2);
  const approval = page.getByLabel("Approval");
  await approval.getByRole("columnheader", { name: "email" }).waitFor();
  const text = await approval.innerText();
  assert.match(text, /Aaaa Aaaaa/); // "John Smith"
  assert.match(text, /aaaa\.aaaaa@aaaa\.aaa/); // "john.smith@acme.com"
  assert.match(text, /AAAA-######/); // "PROD-194211"
  assert.match(text, /4 rows in the file/);
  const page_text = await page.locator("body").innerText();
  for (const raw of ["John Smith", "john.smith@acme.com", "PROD-194211", "1,234.56"]) {
    assert.ok(!page_text.includes(raw), `raw value ${raw} is on the page`);
  }
  assert.equal(await composer().isDisabled(), true, "chat must stay closed before approval");
  await page.getByRole("button", { name: "Show exactly what will be sent" }).click();
  const json = JSON.parse(await page.getByTestId("payload-json").innerText());
  assert.deepEqual(
    json.file_extracts.map((e) => e.filename),
    ["customers.csv", "orders.csv"],
  );
  assert.deepEqual(json.file_extracts[1].sample_rows[0], ["####-##-##", "A-####", "AAAA-######", "$#,###.##"]);
  await shot(page, "02-builder-extracts.png");
  await page.getByRole("button", { name: "Hide JSON" }).click();
});

test("a chip can be removed, and an unsupported file says why it cannot be read", async () => {
  await page.getByTestId("file-input").setInputFiles([join(HERE, "fixtures", "extra.csv"), join(HERE, "fixtures", "notes.bin")]);
  await page.locator(".chip-error").waitFor();
  await page.locator(".chip-ready").nth(2).waitFor();
  const error = await page.locator(".chip-problem").innerText();
  assert.match(error, /unsupported file type/);
  assert.match(error, /notes\.bin/);
  await shot(page, "03-builder-unsupported.png");
  await page.getByRole("button", { name: "Remove extra.csv" }).click();
  await page.getByRole("button", { name: "Remove notes.bin" }).click();
  assert.equal(await chips().count(), 2);
  assert.deepEqual(await page.locator(".chip-name").allInnerTexts(), ["customers.csv", "orders.csv"]);
});

test("approving opens the chat; the conversation clarifies and builds", async () => {
  await page.getByRole("button", { name: "Approve and start chatting" }).click();
  await page.waitForURL(/#\/builder\/wf_/);
  await page.locator('[data-testid="draft-status"] [data-status="validating"]').waitFor();
  await page.waitForFunction(() => !document.querySelector("#message")?.disabled);
  await composer().fill("merge these files by customer_id");
  await composer().press("Enter");
  await page.getByText("Should I keep every column from both files").waitFor();
  await page.locator('[data-testid="draft-status"] [data-status="clarifying"]').waitFor();
  await shot(page, "04-builder-chat.png");
  await composer().fill("keep every column");
  await page.getByRole("button", { name: "Send" }).click();
  // The replay build finishes at once: the builder goes to the review.
  await page.waitForURL(/#\/workflows\/wf_/);
});

test("the built workflow shows its highlighted script and fields, and can be approved", async () => {
  await page.getByRole("heading", { name: "Orders by customer" }).waitFor();
  await page.locator('.versions [data-status="pending_user_approval"]').waitFor();
  const code = page.getByLabel("Script of version 1");
  await code.waitFor();
  assert.ok((await code.locator(".hljs-keyword").count()) > 3, "the script is highlighted");
  assert.match(await code.innerText(), /def main\(\):/);
  await shot(page, "05-workflows-review.png");
  await page.getByRole("tab", { name: /Fields/ }).click();
  await page.getByRole("cell", { name: "Customers file" }).waitFor();
  await page.getByRole("tab", { name: "Script" }).click();
});

test("a second window that missed the approval gets a polite 409, not a failure", async () => {
  const other = await page.context().newPage();
  // This window hears no events, so it still shows the version as pending.
  await other.routeWebSocket(/\/api\/events/, () => {});
  // A new tab has no token of its own: it opens the printed URL, at the same screen.
  await other.goto(server.url + new URL(page.url()).hash);
  await other.getByRole("button", { name: "Approve" }).waitFor();
  await page.getByRole("button", { name: "Approve" }).click();
  await page.locator('.versions [data-status="approved"]').waitFor();
  await other.getByRole("button", { name: "Approve" }).click();
  const notice = other.locator(".notice-warning");
  await notice.waitFor();
  assert.match(await notice.innerText(), /One moment/);
  assert.equal(await other.locator(".notice-error").count(), 0);
  await shot(other, "06-conflict-409.png");
  await other.close();
  await shot(page, "07-workflows-approved.png");
});

test("edit opens the builder with the conversation continued, and the new version can be compared", async () => {
  await page.getByRole("button", { name: "Edit" }).click();
  await page.waitForURL(/#\/builder\/wf_/);
  await page.locator('[data-testid="draft-status"] [data-status="validated"]').waitFor();
  const history = await page.getByTestId("messages").innerText();
  assert.match(history, /merge these files by customer_id/);
  assert.match(history, /keep every column/);
  await page.waitForFunction(() => !document.querySelector("#message")?.disabled);
  await composer().fill("also drop orders without revenue");
  await composer().press("Enter");
  await page.waitForURL(/#\/workflows\/wf_/);
  await page.locator('.versions [data-status="pending_user_approval"]').waitFor();
  assert.equal(await page.getByTestId("version").count(), 2);
  await page.getByRole("tab", { name: "Compare versions" }).click();
  const diff = page.getByLabel("Changes from v1 to v2");
  await diff.waitFor();
  const added = await diff.locator(".dl-added").allInnerTexts();
  assert.ok(added.some((l) => l.includes("if not order['revenue'].strip():")), added.join("\n"));
  await shot(page, "08-workflows-compare.png");
  await page.goto(server.origin + "/#/workflows");
  await page.getByTestId("workflow-card").first().waitFor();
  await shot(page, "09-workflows-list.png");
});
