// Settings → Run limits (issue 43 point 4): the memory and time a script run
// gets, shown with this computer's defaults, set, kept across a reload,
// refused out of bounds with the bounds said, and cleared back to the
// default — in the real UI in Chromium against `maskflow serve`.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { launchBrowser, shot, startServer } from "./harness.mjs";

let server;
let browser;
let page;

before(async () => {
  server = await startServer(null);
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.on("pageerror", (e) => console.error("page error:", e));
});

after(async () => {
  await browser?.close();
  server?.stop();
});

async function limits() {
  const r = await fetch(`${server.origin}/api/settings/run-limits`, { headers: { authorization: `Bearer ${server.token}` } });
  assert.equal(r.status, 200);
  return r.json();
}

test("Run limits are set, kept across a reload, refused out of bounds and cleared", async () => {
  const before = await limits();
  assert.equal(before.time_seconds, 300);
  assert.equal(before.memory_bytes, before.default_memory_bytes);

  await page.goto(server.url);
  await page.getByRole("link", { name: "Settings" }).click();
  const card = page.getByTestId("run-limits-setting");
  await card.getByText("Each run of a workflow's script gets").waitFor();
  await card.getByText("5 min;").waitFor();
  const memory = card.getByLabel("Memory (GiB)");
  const time = card.getByLabel("Time (minutes)");
  const save = card.getByRole("button", { name: "Save", exact: true });
  assert.equal(await memory.inputValue(), "");
  assert.equal(await save.isDisabled(), true, "nothing to save yet");

  // Out of bounds: said at once, nothing sent.
  await memory.fill("0.1");
  await card.getByRole("alert").getByText("at least 0.25").waitFor();
  assert.equal(await save.isDisabled(), true);

  await memory.fill("1.5");
  await time.fill("30");
  await save.click();
  await card.getByText("gets 1.5 GiB of memory and 30 min").waitFor();
  await shot(page, "96-run-limits.png");
  const set = await limits();
  assert.equal(set.memory_bytes, 1.5 * 2 ** 30);
  assert.equal(set.time_seconds, 1800);

  await page.reload();
  await page.getByTestId("run-limits-setting").getByText("gets 1.5 GiB of memory and 30 min").waitFor();
  assert.equal(await card.getByLabel("Memory (GiB)").inputValue(), "1.5");

  // The server refuses what the form would, naming the bounds.
  const bad = await fetch(`${server.origin}/api/settings/run-limits`, {
    method: "PUT",
    headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
    body: JSON.stringify({ time_seconds: 5 }),
  });
  assert.equal(bad.status, 400);
  assert.match((await bad.json()).message, /10–86400 seconds/);

  // Cleared: back to this computer's default.
  await card.getByLabel("Memory (GiB)").fill("");
  await card.getByLabel("Time (minutes)").fill("");
  await card.getByRole("button", { name: "Save", exact: true }).click();
  await card.getByText("5 min;").waitFor();
  const cleared = await limits();
  assert.equal(cleared.memory_bytes, cleared.default_memory_bytes);
  assert.deepEqual(cleared.stored, { memory_mib: null, time_seconds: null });
});
