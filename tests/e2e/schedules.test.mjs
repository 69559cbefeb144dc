// Settings → Schedules (issue 30): a flow is scheduled by cron from the
// form, a bad cron expression is refused with its reason, and the listed
// schedule shows its next run and is paused, resumed and removed — in the
// real UI in Chromium against `maskflow serve`.
import assert from "node:assert/strict";
import { cpSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { ROOT, launchBrowser, shot, startServer } from "./harness.mjs";

let server;
let browser;
let page;

before(async () => {
  server = await startServer(null);
  cpSync(join(ROOT, "tests/fixtures/flows/seed004"), server.home, { recursive: true });
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.on("pageerror", (e) => console.error("page error:", e));
});

after(async () => {
  await browser?.close();
  server?.stop();
});

async function schedules() {
  const r = await fetch(`${server.origin}/api/schedules`, { headers: { authorization: `Bearer ${server.token}` } });
  return r.json();
}

test("A flow is scheduled, paused, resumed and removed from Settings", async () => {
  await page.goto(server.url);
  await page.getByRole("link", { name: "Settings" }).click();
  const card = page.getByTestId("schedules-card");
  await card.getByTestId("schedules-empty").waitFor();
  const form = card.getByTestId("schedule-form");
  await form.locator("input[name=name]").fill("weekday");
  await form.locator("select[name=target]").selectOption("flow:seed_example");

  // A bad expression is refused, naming it.
  await form.locator("input[name=cron]").fill("0 25 * * *");
  await form.getByRole("button", { name: "Add schedule" }).click();
  await card.getByRole("alert").getByText('cron "0 25 * * *"').waitFor();
  assert.deepEqual(await schedules(), []);

  await form.locator("input[name=cron]").fill("30 8 * * 1-5");
  await form.getByRole("button", { name: "Add schedule" }).click();
  const row = card.getByTestId("schedule-weekday");
  await row.getByText("flow seed_example").waitFor();
  await row.getByText("30 8 * * 1-5").waitFor();
  const [made] = await schedules();
  assert.equal(made.name, "weekday");
  assert.ok(made.next_run_at, "the next run is known");
  assert.equal(new Date(made.next_run_at).getMinutes(), 30, "at half past, local time");
  await card.scrollIntoViewIfNeeded();
  await shot(page, "80-schedules.png");

  await row.getByRole("button", { name: "Pause" }).click();
  await row.getByTestId("schedule-next").getByText("paused").waitFor();
  assert.equal((await schedules())[0].paused, true);
  await row.getByRole("button", { name: "Resume" }).click();
  await row.getByRole("button", { name: "Pause" }).waitFor();
  assert.equal((await schedules())[0].paused, false);

  await row.getByRole("button", { name: "Remove" }).click();
  await card.getByTestId("schedules-empty").waitFor();
  assert.deepEqual(await schedules(), []);
});
