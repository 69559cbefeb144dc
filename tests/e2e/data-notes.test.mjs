// Issue #40 point 7 in the real UI: the user's notes on their data. In the
// approval view a note is written on the whole file or on one column,
// listed, removable, shown in what will be sent; approving keeps it with
// the workflow, and the first message's validator request carries it in
// the user's words beside the masked extract. Screenshot:
// tests/e2e/artifacts/32-approval-notes.png.
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
  const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
  page = await context.newPage();
  page.on("pageerror", (e) => console.error("page error:", e));
});

after(async () => {
  await browser?.close();
  server?.stop();
});

async function api(method, path) {
  const response = await fetch(server.origin + path, { method, headers: { authorization: `Bearer ${server.token}` } });
  return response.json();
}

const sent = async () => {
  await page.getByRole("button", { name: "Show exactly what will be sent" }).click();
  const json = JSON.parse(await page.getByTestId("payload-json").innerText());
  await page.getByRole("button", { name: "Hide JSON" }).click();
  return json.file_extracts[0];
};

test("a note on the file and one on a column are listed, removable and in what will be sent", async () => {
  await page.goto(server.url);
  await dropFiles(page, '[data-testid="dropzone"]', ["penguins.csv"]);
  await page.locator(".chip-ready").first().waitFor();
  const group = page.getByRole("group", { name: "Notes on your data" });
  await group.waitFor();
  const add = group.getByRole("button", { name: "Add note" });
  assert.equal(await add.isDisabled(), true, "nothing to add yet");

  const box = group.getByLabel("A note on penguins.csv");
  await box.fill("Body mass is in grams; a 0 means it was not weighed.");
  await group.getByRole("combobox").selectOption({ label: "Column body_mass_g" });
  await add.click();
  await box.fill("A throwaway note.");
  await group.getByRole("combobox").selectOption({ label: "The whole file" });
  await add.click();
  await box.fill("Counts from the 2007–2009 field seasons only.");
  await add.click();

  const notes = group.getByTestId("data-note");
  assert.equal(await notes.count(), 3);
  await notes.filter({ hasText: "A throwaway note." }).getByRole("button", { name: "Remove" }).click();
  assert.equal(await notes.count(), 2);
  assert.match(await notes.nth(0).innerText(), /Column body_mass_g: Body mass is in grams/);
  assert.match(await notes.nth(1).innerText(), /The whole file: Counts from the 2007–2009 field seasons only\./);

  const extract = await sent();
  assert.deepEqual(extract.notes, [
    { column: "body_mass_g", note: "Body mass is in grams; a 0 means it was not weighed." },
    { note: "Counts from the 2007–2009 field seasons only." },
  ]);
  await group.scrollIntoViewIfNeeded();
  await shot(page, "32-approval-notes.png");
});

test("approving keeps the notes with the workflow and the validator is told them in the user's words", async () => {
  await page.getByRole("button", { name: "Approve and start chatting" }).click();
  await page.waitForURL(/#\/builder\/wf_/);
  await page.getByText("Approved extract").waitFor();
  const kept = page.getByRole("group", { name: "Your notes on the data" });
  await kept.waitFor();
  assert.match(await kept.innerText(), /penguins\.csv, column body_mass_g: Body mass is in grams/);
  const approved = await sent();
  assert.equal(approved.notes.length, 2, JSON.stringify(approved));

  const workflowId = page.url().match(/wf_[a-z0-9]+/)[0];
  await page.getByLabel("Message", { exact: true }).fill("average body mass per island");
  await page.getByRole("button", { name: "Send" }).click();
  let validator;
  for (let i = 0; i < 100 && !validator; i++) {
    const ledger = await api("GET", "/api/ledger?limit=50");
    validator = ledger.find((e) => e.workflow_id === workflowId && e.role === "validator");
    if (!validator) await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok(validator, "the validator was asked");
  const body = validator.request_body;
  assert.match(body, /The user's notes on their data, in their own words/);
  assert.match(body, /- penguins.csv, column \\"body_mass_g\\": Body mass is in grams; a 0 means it was not weighed\./);
  assert.match(body, /- penguins.csv: Counts from the 2007–2009 field seasons only\./);
});
