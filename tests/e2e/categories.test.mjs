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

/** A profile in the shared contract's shape, for a server whose extractor gives none yet. */
const CONTRACT_PROFILE = {
  rows_profiled: 36,
  duplicate_rows: 0,
  unique_columns: ["body_mass_g"],
  columns: [
    { name: "species", inferred_type: "text", nulls: 0, placeholders: 0, distinct: 2, distinct_capped: false, min_length: 6, max_length: 6, shapes: [{ shape: "Aaaaaa", count: 36 }], other_shapes: 0 },
    { name: "island", inferred_type: "text", nulls: 0, placeholders: 0, distinct: 3, distinct_capped: false, min_length: 5, max_length: 9, shapes: [{ shape: "Aaaaaa", count: 12 }, { shape: "Aaaaa", count: 12 }, { shape: "Aaaaaaaaa", count: 12 }], other_shapes: 0 },
    { name: "body_mass_g", inferred_type: "integer", nulls: 0, placeholders: 0, distinct: 36, distinct_capped: false, min: "3200", max: "4000", shapes: [{ shape: "####", count: 36 }], other_shapes: 0 },
    { name: "sex", inferred_type: "text", nulls: 9, placeholders: 0, distinct: 1, distinct_capped: false, shapes: [{ shape: "aaaaaa", count: 27 }], other_shapes: 0 },
  ],
};

before(async () => {
  server = await startServer(join(HERE, "replay.json"));
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
  page = await context.newPage();
  page.on("pageerror", (e) => console.error("page error:", e));
  // Until the extractor fills `profile` (issue 28's profile part), the
  // upload's answer gets a contract-shaped one, and approving leaves it
  // out again (the server sends its own stored extract); a server that
  // gives a profile is shown as it is.
  let injected = false;
  await page.route("**/api/extracts*", async (route) => {
    const response = await route.fetch();
    const body = await response.json();
    for (const file of Array.isArray(body) ? body : []) {
      if (file?.extract && !file.extract.profile) {
        file.extract.profile = CONTRACT_PROFILE;
        injected = true;
      }
    }
    await route.fulfill({ response, json: body });
  });
  await page.route("**/api/workflows", async (route) => {
    const request = route.request();
    if (request.method() !== "POST" || !injected) return route.continue();
    const body = request.postDataJSON();
    for (const e of body.file_extracts ?? []) delete e.profile;
    await route.continue({ postData: JSON.stringify(body) });
  });
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
