// Settings → Storage (issue 19): the data folder's use by kind, a safe
// Clear (asked twice, leaving new uploads alone), the upload expiry and the
// flow runs' checkpoint retention (issue 18 point 7), in the real UI in Chromium against `maskflow serve`. Screenshots go to
// tests/e2e/artifacts/.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { dropFiles, launchBrowser, shot, startServer } from "./harness.mjs";

let server;
let browser;
let page;

before(async () => {
  server = await startServer(null);
  // What a crashed upload leaves behind: a folder with no record, a day old.
  const orphan = join(server.home, "files", "file_crashed");
  mkdirSync(orphan, { recursive: true });
  writeFileSync(join(orphan, "half.csv"), "x".repeat(300_000));
  const dayAgo = new Date(Date.now() - 24 * 3600 * 1000);
  utimesSync(orphan, dayAgo, dayAgo);
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.on("pageerror", (e) => console.error("page error:", e));
});

after(async () => {
  await browser?.close();
  server?.stop();
});

test("Storage shows what the data folder keeps and clears old uploads, keeping new ones", async () => {
  await page.goto(server.url);
  await page.getByRole("heading", { name: "New workflow" }).waitFor();
  // A new upload: it must survive the Clear below.
  await dropFiles(page, '[data-testid="dropzone"]', ["customers.csv"]);
  await page.locator(".chip-ready").first().waitFor();

  await page.getByRole("link", { name: "Settings" }).click();
  const card = page.getByTestId("storage-settings");
  await card.getByText(/^Data folder/).waitFor();
  const uploads = card.locator('tr[data-kind="uploads"]');
  await uploads.getByRole("button", { name: /^Clear 29\d KB$/ }).waitFor();
  await shot(page, "40-storage.png");

  await uploads.getByRole("button", { name: /^Clear/ }).click();
  await uploads.getByText(/Remove 29\d KB\?/).waitFor();
  await uploads.getByRole("button", { name: "Yes, clear" }).click();
  await card.getByText("Removed 1 item, 29").waitFor();
  assert.equal(existsSync(join(server.home, "files", "file_crashed")), false);
  // The new upload is still there, and nothing is left to clear.
  await assert.doesNotReject(uploads.locator("td.num", { hasText: /B$/ }).waitFor());
  assert.equal(await uploads.getByRole("button", { name: /^Clear/ }).count(), 0);

  await card.locator("input[name=upload_expiry_hours]").fill("48");
  await card.getByRole("button", { name: "Save", exact: true }).click();
  await card.getByText("removed after 48 h").waitFor();
  await shot(page, "41-storage-cleared.png");
  const r = await fetch(`${server.origin}/api/settings/storage`, { headers: { authorization: `Bearer ${server.token}` } });
  assert.equal((await r.json()).upload_expiry_hours, 48);
});

test("Storage sets how many checkpoints a flow run keeps, saved across a reload", async () => {
  await page.goto(server.url);
  await page.getByRole("link", { name: "Settings" }).click();
  const card = page.getByTestId("storage-settings");
  const form = card.getByTestId("checkpoint-settings");
  const keep = form.getByLabel("Full snapshots kept per run in progress");
  const every = form.getByLabel(/Write a full snapshot after at most/);
  // The defaults, shown as stored.
  assert.equal(await keep.inputValue(), "2");
  assert.equal(await every.inputValue(), "256");
  await form.getByText("resumes where it stopped").waitFor();

  await keep.fill("5");
  await every.fill("20");
  await form.getByRole("button", { name: "Save checkpoints" }).click();
  await card.getByText("keep their last 5 full snapshots").waitFor();

  // A value the service refuses is a sentence naming the setting.
  await keep.fill("5000");
  await form.getByRole("button", { name: "Save checkpoints" }).click();
  await card.getByText(/checkpoint_keep_full_snapshots must be between 0/).waitFor();

  await page.reload();
  await page.getByTestId("checkpoint-settings").waitFor();
  const reloaded = page.getByTestId("checkpoint-settings");
  assert.equal(await reloaded.getByLabel("Full snapshots kept per run in progress").inputValue(), "5");
  assert.equal(await reloaded.getByLabel(/Write a full snapshot after at most/).inputValue(), "20");
  await reloaded.scrollIntoViewIfNeeded();
  await shot(page, "42-storage-checkpoints.png");
  const r = await fetch(`${server.origin}/api/settings/storage`, { headers: { authorization: `Bearer ${server.token}` } });
  const view = await r.json();
  assert.equal(view.checkpoint_keep_full_snapshots, 5);
  assert.equal(view.checkpoint_full_every, 20);
  assert.equal(view.upload_expiry_hours, 48, "the expiry saved before is kept");
});

test("The largest upload is set in Storage, and a larger drop is refused saying where to raise it", async () => {
  await page.goto(server.url);
  await page.getByRole("link", { name: "Settings" }).click();
  const form = page.getByTestId("upload-limit");
  const limit = form.getByLabel("Largest upload");
  assert.equal(await limit.inputValue(), "1024", "1 GiB by default");
  await limit.fill("1");
  await form.getByRole("button", { name: "Save largest upload" }).click();
  await page.getByTestId("storage-settings").getByText("Uploads up to 1.0 MB are taken").waitFor();

  // A 1.4 MB CSV dropped in the browser: refused, with the limit and the way out.
  await page.getByRole("link", { name: "New workflow" }).click();
  const transfer = await page.evaluateHandle(() => {
    const dt = new DataTransfer();
    dt.items.add(new File(["when,amount\n" + "2024-01-15,12.50\n".repeat(80_000)], "orders.csv", { type: "text/csv" }));
    return dt;
  });
  await page.dispatchEvent('[data-testid="dropzone"]', "dragover", { dataTransfer: transfer });
  await page.dispatchEvent('[data-testid="dropzone"]', "drop", { dataTransfer: transfer });
  await page.getByText(/over the largest upload of 1 MiB; raise "Largest upload" in Settings → Storage/).first().waitFor();
  await shot(page, "43-upload-over-the-limit.png");
  const r = await fetch(`${server.origin}/api/settings/storage`, { headers: { authorization: `Bearer ${server.token}` } });
  assert.equal((await r.json()).upload_limit_mib, 1);
});
