// Issue #28 point 1 in the real UI: a file with category columns (species,
// island, sex) beside people's names and numbers. The approval view shows
// the extract's profile and one switch per category column, off by
// default; with it off nothing of the column is in what will be sent, with
// it on exactly its values and counts are, and approving freezes exactly
// that. Screenshots: tests/e2e/artifacts/30-approval-*.png.
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

const sent = async () => {
  await page.getByRole("button", { name: "Show exactly what will be sent" }).click();
  const json = JSON.parse(await page.getByTestId("payload-json").innerText());
  await page.getByRole("button", { name: "Hide JSON" }).click();
  return json.file_extracts[0];
};

test("the approval view shows the profile and a switch per category column, off by default", async () => {
  await page.goto(server.url);
  await dropFiles(page, '[data-testid="dropzone"]', ["penguins.csv"]);
  await page.locator(".chip-ready").first().waitFor();
  const group = page.getByRole("group", { name: "Category columns" });
  await group.waitFor();
  const columns = group.getByTestId("category-column");
  assert.equal(await columns.count(), 4, await group.innerText()); // species, island, year, sex
  const island = columns.filter({ hasText: "column island" });
  assert.match(await island.innerText(), /Show these 3 values to the AI/);
  assert.match(await island.innerText(), /Biscoe × 12/);
  assert.match(await island.innerText(), /Torgersen × 12/);
  assert.doesNotMatch(await group.innerText(), /Ada Lovelace/, "a column of names is no category");
  const switches = group.getByRole("switch");
  for (let i = 0; i < 4; i++) assert.equal(await switches.nth(i).isChecked(), false, "off by default");

  const profile = page.getByTestId("profile-table");
  await profile.waitFor();
  const rows = await profile.innerText();
  assert.match(rows, /island/);
  assert.match(rows, /Aaaaaa × 12/);
  assert.match(rows, /36 rows profiled/);

  const off = await sent();
  assert.equal(off.categories, undefined);
  assert.ok(!JSON.stringify(off).includes("Biscoe"), "nothing of a switched-off column is sent");
  await island.scrollIntoViewIfNeeded();
  await shot(page, "30-approval-categories.png");
  await profile.scrollIntoViewIfNeeded();
  await shot(page, "30-approval-profile.png");
});

test("switching a column on sends exactly its values, and approving freezes exactly that", async () => {
  const group = page.getByRole("group", { name: "Category columns" });
  const island = group.getByTestId("category-column").filter({ hasText: "column island" });
  await island.getByRole("switch").check();
  const on = await sent();
  assert.deepEqual(on.categories, [
    { column: "island", values: [{ value: "Biscoe", count: 12 }, { value: "Dream", count: 12 }, { value: "Torgersen", count: 12 }] },
  ]);
  const text = JSON.stringify(on);
  for (const other of ["Adelie", "Gentoo", "female"]) assert.ok(!text.includes(other), `${other} was not switched on`);
  await shot(page, "31-approval-category-on.png");

  await page.getByRole("button", { name: "Approve and start chatting" }).click();
  await page.waitForURL(/#\/builder\/wf_/);
  await page.getByText("Approved extract").waitFor();
  const approved = await sent();
  assert.deepEqual(approved.categories, on.categories);
  assert.ok(!JSON.stringify(approved).includes("Gentoo"));
});
