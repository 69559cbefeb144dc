// Restart-safe waiting (issue 19) in Chromium: a flow step on the manual back
// end waits for a pasted answer, `maskflow serve` is stopped (Ctrl-C) and
// started again on the same data folder; the Flows page shows the prompt
// again with what happened, the answer is pasted there, and the run goes on
// to its gate. Screenshots go to tests/e2e/artifacts/manual-restart-*.png.
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { launchBrowser, shot, startServer } from "./harness.mjs";

let server;
let browser;
let page;

before(async () => {
  browser = await launchBrowser();
  page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  page.setDefaultTimeout(15000);
  page.on("pageerror", (e) => console.error("page error:", e));
});

after(async () => {
  await browser?.close();
  server?.stop();
});

async function api(method, path, body) {
  const token = server.token;
  const res = await fetch(server.origin + path, {
    method,
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

async function promptOf(runId) {
  for (let i = 0; i < 300; i++) {
    const { body } = await api("GET", "/api/manual");
    const found = body.find((p) => p.waiter?.run_id === runId);
    if (found) return found;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no prompt for run ${runId}`);
}

test("a flow step's manual prompt survives a restart and its answer resumes the run", async () => {
  server = await startServer(null);
  const home = server.home;
  mkdirSync(join(home, "flows"), { recursive: true });
  // A flow may only name agents Maskflow knows: each gets its file.
  mkdirSync(join(home, "agents"), { recursive: true });
  writeFileSync(join(home, "agents", "writer.json"), "{}");
  writeFileSync(
    join(home, "flows/review.json"),
    JSON.stringify({
      steps: [
        { type: "llm", label: "Draft", agentType: "writer", identifier: "x", messages: [{ role: "user", content: ["Draft the weekly notes."] }] },
        { type: "gate", id: "g", label: "Review", prompt: "Approve?", options: [{ label: "Approve" }, { label: "Reject", next: null }] },
      ],
    }),
  );
  const started = await api("POST", "/api/flows/review/run", {});
  assert.equal(started.status, 202, JSON.stringify(started.body));
  const runId = started.body.conversationId;
  const asked = await promptOf(runId);
  assert.equal(asked.interrupted, undefined);

  server.stop();
  await server.exited();
  server = await startServer(null, [], home);

  await page.goto(`${server.url}#/flows/review/${runId}`);
  const card = page.locator(`[data-testid="manual-prompt"][data-prompt-id="${asked.id}"]`);
  const notice = card.locator('[data-testid="manual-interrupted"]');
  await notice.waitFor();
  assert.match(await notice.innerText(), /Maskflow stopped while flow run .* waited for this answer/);
  assert.match(await notice.innerText(), /the run resumes at the step that asked/);
  assert.match(await card.locator("textarea.manual-prompt").inputValue(), /Draft the weekly notes\./);
  await shot(page, "manual-restart-1-restored.png");

  await card.locator('[data-testid="manual-answer"]').fill("My pasted draft.");
  await card.getByRole("button", { name: "Send answer" }).click();
  await page.waitForFunction(() => document.querySelector('[data-testid="run-status"]')?.textContent === "waiting");
  await card.waitFor({ state: "detached" });
  const run = await api("GET", `/api/flow-runs/${runId}`);
  assert.match(JSON.stringify(run.body.turns), /My pasted draft\./);
  await shot(page, "manual-restart-2-resumed.png");
});
