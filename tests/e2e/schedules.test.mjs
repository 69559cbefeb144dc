// Settings → Schedules (issue 30): a flow is scheduled by cron from the
// form, a bad cron expression is refused with its reason, and the listed
// schedule shows its next run and is paused, resumed and removed — in the
// real UI in Chromium against `maskflow serve`. Issue 41 point 4: a watched
// folder's file whose columns differ from the approved file's is refused
// before any script runs, and the card shows it, its last good output kept
// and marked stale, as it happens.
import assert from "node:assert/strict";
import { cpSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
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

test("A watched file whose columns changed is refused, and the card marks the last output stale", async () => {
  const dir = mkdtempSync(join(tmpdir(), "maskflow-e2e-refused-"));
  const replay = join(dir, "replay.json");
  writeFileSync(
    replay,
    JSON.stringify({
      validator: [{ feasible: true }],
      clarifier: [{ needs_clarification: false }],
      builder: [
        {
          name: "Line counter",
          description: "Counts the lines of the sales export",
          script: "import json, sys\nf = json.load(open(sys.argv[1]))['fields']\nopen('outputs/count.txt', 'w').write(str(len(open(f['sales']).read().splitlines())))\n",
          fields: [{ name: "sales", label: "Sales", type: "file", required: true, accept: [".csv"] }],
          execution: { runtime: "python3", entrypoint: "script.py", requirements: [], outputs: [{ name: "count.txt", description: "the count" }] },
        },
      ],
    }),
  );
  const own = await startServer(replay);
  const api = async (method, path, body) => {
    const r = await fetch(own.origin + path, {
      method,
      headers: { authorization: `Bearer ${own.token}`, ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await r.text();
    return { status: r.status, body: text ? JSON.parse(text) : null };
  };
  try {
    assert.equal((await api("PUT", "/api/settings/isolation", { allow_unisolated: true })).status, 200);
    const form = new FormData();
    form.append("file", new Blob(["Region,Amount\nEast,10\nWest,20\n"], { type: "text/csv" }), "sales-2026-01.csv");
    const [uploaded] = await fetch(own.origin + "/api/extracts", { method: "POST", headers: { authorization: `Bearer ${own.token}` }, body: form }).then((r) => r.json());
    const created = await api("POST", "/api/workflows", { file_ids: [uploaded.file_id] });
    const wf = created.body.workflow_id;
    assert.equal((await api("POST", `/api/workflows/${wf}/messages`, { content: "count the lines", go_ahead: true })).status, 200);
    let view;
    for (let i = 0; i < 600; i++) {
      view = (await api("GET", `/api/workflows/${wf}`)).body;
      if (view.current_version.status !== "building") break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(view.current_version.status, "pending_user_approval", JSON.stringify(view.current_version));
    assert.equal((await api("POST", `/api/workflows/${wf}/versions/${view.current_version.id}/approve`)).status, 200);

    const inbox = mkdtempSync(join(tmpdir(), "maskflow-e2e-inbox-"));
    const out = mkdtempSync(join(tmpdir(), "maskflow-e2e-out-"));
    assert.equal((await api("POST", "/api/schedules", { name: "monthly sales", workflow: wf, folder: inbox, output_folder: out })).status, 201);
    const until = async (what, ok) => {
      for (let i = 0; i < 300; i++) {
        const [s] = (await api("GET", "/api/schedules")).body;
        if (ok(s)) return s;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`${what} did not happen: ${JSON.stringify((await api("GET", "/api/schedules")).body)}`);
    };
    writeFileSync(join(inbox, "sales-2026-02.csv"), "Region,Amount\nNorth,5\n");
    await until("the first run", (s) => s.last_status === "succeeded");
    assert.equal(readFileSync(join(out, "sales-2026-02.count.txt"), "utf8"), "2");

    await page.goto(own.url);
    await page.getByRole("link", { name: "Settings" }).click();
    const row = page.getByTestId("schedule-monthly sales");
    await row.getByText("(succeeded)").waitFor();
    // Next month's file renamed the amount column, while the card is open.
    writeFileSync(join(inbox, "sales-2026-03.csv"), "Region,Total\nNorth,7\nSouth,8\n");
    await row.getByTestId("schedule-stale").waitFor({ timeout: 30_000 });
    await row.getByText("(refused)").waitFor();
    await row.getByTestId("schedule-error").getByText(/sales-2026-03\.csv: not run: .*Amount/).waitFor();
    await row.scrollIntoViewIfNeeded();
    await shot(page, "81-schedule-refused-stale.png");
    assert.equal(existsSync(join(out, "sales-2026-03.count.txt")), false, "no output for the refused file");
    assert.equal(readFileSync(join(out, "sales-2026-02.count.txt"), "utf8"), "2", "the last good output is kept");
    assert.equal((await api("GET", `/api/workflows/${wf}/runs`)).body.length, 1, "no script ran on it");
  } finally {
    own.stop();
  }
});
