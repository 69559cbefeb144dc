// Issue 18 in the real UI (Chromium against `maskflow serve --replay`): a
// workflow's name, description and label edited in place on the Workflows
// page (the label shown in the list), Restore of an earlier version (a new
// version, tested on the files, then approved), Delete with the counts of
// what goes, and Settings' backups card (back up now, restore, delete).
// Screenshots go to tests/e2e/artifacts/.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { after, before, test } from "node:test";
import { join } from "node:path";
import { FIXTURES, launchBrowser, shot, startServer } from "./harness.mjs";

const spec = (name, text) => ({
  name,
  description: "Counts the customers",
  script: `import json, sys\nfields = json.load(open(sys.argv[1]))['fields']\nopen('outputs/result.txt', 'w').write(${JSON.stringify(text)})\n`,
  fields: [{ name: "customers", label: "Customers", type: "file", required: true, accept: [".csv"] }],
  execution: { runtime: "python3", entrypoint: "script.py", requirements: [], outputs: [{ name: "result.txt", description: "the count" }] },
});

let server;
let browser;
let page;
let token;
let workflowId;

async function api(method, path, body) {
  const response = await fetch(server.origin + path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

/** Polls the workflow until its current version leaves `building`. */
async function built(id) {
  for (let i = 0; i < 600; i++) {
    const { body } = await api("GET", `/api/workflows/${id}`);
    if (body.current_version.status !== "building") return body;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("the build did not finish");
}

before(async () => {
  const replayFile = join(FIXTURES, "..", "artifacts", "history-replay.json");
  writeFileSync(
    replayFile,
    JSON.stringify({
      validator: [{ feasible: true }],
      clarifier: [{ needs_clarification: false }, { needs_clarification: false }],
      builder: [spec("Customer counter", "first"), spec("Customer counter 2", "second")],
    }),
  );
  server = await startServer(replayFile);
  token = server.token;
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  page = await context.newPage();
  page.on("pageerror", (e) => console.error("page error:", e));

  // A workflow with two approved versions, made over the API.
  assert.equal((await api("PUT", "/api/settings/isolation", { allow_unisolated: true })).status, 200);
  const form = new FormData();
  form.append("file", new Blob([readFileSync(join(FIXTURES, "customers.csv"))], { type: "text/csv" }), "customers.csv");
  const upload = await fetch(server.origin + "/api/extracts", {
    method: "POST",
    headers: { authorization: `Bearer ${token}` },
    body: form,
  }).then((r) => r.json());
  const created = await api("POST", "/api/workflows", { file_ids: [upload[0].file_id] });
  workflowId = created.body.workflow_id;
  for (const content of ["count the customers", "count them differently"]) {
    const reply = await api("POST", `/api/workflows/${workflowId}/messages`, { content });
    assert.equal(reply.body.status, "building", JSON.stringify(reply.body));
    const w = await built(workflowId);
    assert.equal(w.current_version.status, "pending_user_approval");
    await api("POST", `/api/workflows/${workflowId}/versions/${w.current_version.id}/approve`);
  }
});

after(async () => {
  await browser?.close();
  server?.stop();
});

test("name, description and label are edited in place; the label shows in the list", async () => {
  await page.goto(server.url);
  await page.goto(`${server.origin}/#/workflows/${workflowId}`);
  await page
    .getByTestId("edit-name")
    .waitFor()
    .catch(async (e) => {
      // Seen once in CI and never locally: keep what the page showed.
      await shot(page, "failed-history-open.png").catch(() => {});
      const text = await page.locator("body").innerText().catch(() => "");
      throw new Error(`${e.message}\nURL ${page.url()}\nPage text: ${text.slice(0, 1500)}\nServer log: ${server.log().slice(-1500)}`);
    });
  assert.match(await page.getByTestId("edit-name").innerText(), /Customer counter/);

  await page.getByTestId("edit-name").click();
  await page.getByTestId("input-name").fill("Customer census");
  await page.getByTestId("input-name").press("Enter");
  await page.getByTestId("edit-name").filter({ hasText: "Customer census" }).waitFor();

  await page.getByTestId("edit-description").click();
  await page.getByTestId("input-description").fill("Counts every customer in the file");
  await page.getByTestId("input-description").press("Enter");
  await page.getByTestId("edit-description").filter({ hasText: "Counts every customer" }).waitFor();

  await page.getByTestId("edit-label").click();
  await page.getByTestId("input-label").fill("finance");
  await page.getByTestId("input-label").press("Enter");
  const card = page.getByTestId("workflow-card").filter({ hasText: "Customer census" });
  await card.getByTestId("workflow-label").filter({ hasText: "finance" }).waitFor();
  // Escape puts a field back without saving.
  await page.getByTestId("edit-name").click();
  await page.getByTestId("input-name").fill("Not saved");
  await page.getByTestId("input-name").press("Escape");
  assert.match(await page.getByTestId("edit-name").innerText(), /Customer census/);

  const stored = await api("GET", `/api/workflows/${workflowId}`);
  assert.equal(stored.body.name, "Customer census");
  assert.equal(stored.body.description, "Counts every customer in the file");
  assert.equal(stored.body.label, "finance");
  await shot(page, "60-workflow-inline-edit.png");
});

test("Restore on an earlier version makes a tested version that is then approved", async () => {
  const version = (n) => page.getByTestId("version").filter({ has: page.locator(".vnum", { hasText: new RegExp(`^v${n}$`) }) });
  await version(1).click();
  await page.getByRole("button", { name: "Restore v1" }).click();
  const v3 = version(3);
  await v3.waitFor();
  await v3.getByTestId("version-origin").filter({ hasText: "restored from v1" }).waitFor();
  // The copy is tested on the real file before it can be approved.
  await page.getByRole("button", { name: "Approve" }).waitFor({ timeout: 60_000 });
  await page.getByRole("tab", { name: "Test report" }).click();
  await page.locator("#panel-test").filter({ hasText: /passed|ran on the real input files/i }).waitFor();
  await shot(page, "61-workflow-restored.png");
  await page.getByRole("button", { name: "Approve" }).click();
  await v3.filter({ hasText: "in use" }).waitFor();
  const w = (await api("GET", `/api/workflows/${workflowId}`)).body;
  assert.equal(w.active_version_id, w.versions[2].id);
  assert.deepEqual(
    w.versions.map((v) => [v.origin, v.origin_version]),
    [
      ["created", null],
      ["edited", 1],
      ["restored", 1],
    ],
  );
  const v1 = (await api("GET", `/api/workflows/${workflowId}/versions/${w.versions[0].id}`)).body;
  const restored = (await api("GET", `/api/workflows/${workflowId}/versions/${w.versions[2].id}`)).body;
  assert.equal(restored.script, v1.script);
});

test("Settings lists backups, takes one, restores one and deletes one with its size shown", async () => {
  await page.getByRole("link", { name: "Settings" }).click();
  const card = page.getByTestId("backups-setting");
  await card.waitFor();
  await card.getByRole("button", { name: "Back up now" }).click();
  await card.getByTestId("backup").filter({ hasText: "Taken by you" }).waitFor();
  // A change after the backup, undone by restoring it.
  await api("PATCH", `/api/workflows/${workflowId}`, { name: "Renamed after the backup" });
  await card.getByTestId("backup").filter({ hasText: "Taken by you" }).getByRole("button", { name: "Restore" }).click();
  await page.getByTestId("restore-dialog").getByRole("button", { name: "Restore" }).click();
  await card.locator(".notice").filter({ hasText: "Backup restored" }).waitFor();
  await card.getByTestId("backup").filter({ hasText: "Before a restore" }).waitFor();
  assert.equal((await api("GET", `/api/workflows/${workflowId}`)).body.name, "Customer census");
  await shot(page, "62-settings-backups.png");

  await card.getByTestId("backup").filter({ hasText: "Before a restore" }).getByRole("button", { name: "Delete" }).click();
  const dialog = page.getByTestId("delete-dialog");
  await dialog.getByTestId("delete-counts").waitFor();
  assert.match(await dialog.getByTestId("delete-counts").innerText(), /1 backup file \(\d+(\.\d)? (B|KB|MB)\)/);
  await dialog.getByRole("button", { name: "Delete" }).click();
  await dialog.waitFor({ state: "detached" });
  await card.getByTestId("backup").filter({ hasText: "Before a restore" }).waitFor({ state: "detached" });
});

test("Delete shows what goes (versions, messages, ledger entries kept) and deletes only when confirmed", async () => {
  await page.goto(`${server.origin}/#/workflows/${workflowId}`);
  await page.getByRole("button", { name: "Delete" }).click();
  const dialog = page.getByTestId("delete-dialog");
  await dialog.getByTestId("delete-counts").waitFor();
  const counts = await dialog.getByTestId("delete-counts").innerText();
  assert.match(counts, /1 workflow/);
  assert.match(counts, /3 versions/);
  assert.match(counts, /\d+ conversation messages/);
  assert.match(await dialog.getByTestId("ledger-kept").innerText(), /privacy-ledger entries stay/);
  await shot(page, "63-workflow-delete-dialog.png");
  // Cancel keeps it.
  await dialog.getByRole("button", { name: "Cancel" }).click();
  assert.equal((await api("GET", `/api/workflows/${workflowId}`)).status, 200);
  // Confirm deletes it.
  await page.getByRole("button", { name: "Delete" }).click();
  await dialog.getByTestId("delete-counts").waitFor();
  await dialog.getByRole("button", { name: "Delete" }).click();
  await page.getByText("No workflows yet").waitFor();
  assert.equal((await api("GET", `/api/workflows/${workflowId}`)).status, 404);
  const ledger = (await api("GET", "/api/ledger?limit=200")).body;
  const kept = ledger.filter((e) => e.workflow_id === workflowId);
  assert.ok(kept.length > 0, "the ledger keeps the deleted workflow's entries");
  assert.ok(kept.every((e) => typeof e.deleted_workflow === "string" && e.deleted_workflow.length > 0), "each marked with its name");
  // The ledger page shows the mark.
  await page.getByRole("link", { name: "Privacy ledger" }).click();
  const mark = page.getByTestId("ledger-deleted").first();
  await mark.waitFor();
  const text = await mark.innerText();
  assert.ok(text.includes(`deleted: ${kept[0].deleted_workflow}`), text);
  await shot(page, "64-ledger-deleted-workflow.png");
});
