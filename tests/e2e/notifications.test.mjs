// Notifications and the waiting badge (issue 30, point 3) in Chromium
// against `maskflow serve`: a flow started elsewhere (the API, as a schedule
// or an MCP client would) reaches a gate; the sidebar's badge counts it, the
// page asks for the notification permission once, shows a notification, and
// a click on it opens the run's gate. An item on screen is not announced
// again, and a page whose question was dismissed never asks unprompted
// again — only the user's click on "Notify me" does.
//
// The browser's permission is granted through Playwright's context; an init
// script wraps the Notification constructor to record every `new
// Notification(...)`, and plays a fresh browser's user: the permission reads
// "default" until the page asks, then the user's answer (grant or dismiss).
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { launchBrowser, shot, startServer } from "./harness.mjs";

let server;
let browser;

const FLOW = {
  steps: [
    { type: "gate", id: "g1", label: "First", prompt: "First check?", options: [{ label: "Approve" }, { label: "Reject", next: null }] },
    { type: "gate", id: "g2", label: "Second", prompt: "Second check?", options: [{ label: "Approve" }] },
  ],
};

before(async () => {
  server = await startServer(null);
  mkdirSync(join(server.home, "flows"), { recursive: true });
  writeFileSync(join(server.home, "flows/review.json"), JSON.stringify(FLOW));
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  server?.stop();
});

async function api(method, path, body) {
  const res = await fetch(server.origin + path, {
    method,
    headers: { Authorization: `Bearer ${server.token}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  assert.ok(res.ok, `${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

/** Starts a run of the flow from outside the page; resolves with its id once it waits at its gate. */
async function startRun() {
  const started = await api("POST", "/api/flows/review/run", {});
  return started.conversationId;
}

/** A page whose user answers the permission question with `answer` (`grant` or `dismiss`). */
async function openPage(answer) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await context.grantPermissions(["notifications"], { origin: server.origin });
  await context.addInitScript((answer) => {
    const Real = window.Notification;
    const count = (k) => Number(localStorage.getItem(k) || 0);
    window.__notes = [];
    class Recorded {
      constructor(title, options) {
        this.title = title;
        this.options = options ?? {};
        this.onclick = null;
        this.closed = false;
        window.__notes.push(this);
      }
      close() {
        this.closed = true;
      }
      static get permission() {
        return localStorage.getItem("__answer") === "granted" ? Real.permission : "default";
      }
      static async requestPermission() {
        localStorage.setItem("__asked", String(count("__asked") + 1));
        if (answer === "grant") {
          localStorage.setItem("__answer", "granted");
          return Real.requestPermission();
        }
        return "default";
      }
    }
    window.Notification = Recorded;
  }, answer);
  const page = await context.newPage();
  page.setDefaultTimeout(15000);
  page.on("pageerror", (e) => console.error("page error:", e));
  return page;
}

const count = (page) => page.locator('[data-testid="waiting-count"]');
const asked = (page) => page.evaluate(() => Number(localStorage.getItem("__asked") || 0));
const notes = (page) => page.evaluate(() => window.__notes.map((n) => ({ title: n.title, body: n.options.body })));
const waitNotes = (page, n) => page.waitForFunction((n) => window.__notes.length >= n, n);

test("a gate counts on the badge, asks once, notifies, and the click opens it", async () => {
  const page = await openPage("grant");
  await page.goto(server.url + "#/workflows");
  await page.getByRole("navigation", { name: "Main" }).waitFor();
  assert.equal(await count(page).count(), 0, "nothing waits yet: no badge");
  assert.equal(await asked(page), 0, "no question before anything waits");

  const runId = await startRun();
  await page.waitForFunction(() => document.querySelector('[data-testid="waiting-count"]')?.textContent === "1");
  await waitNotes(page, 1);
  assert.equal(await asked(page), 1, "asked at the first waiting item");
  assert.deepEqual(await notes(page), [{ title: "Flow: review waits for your decision", body: "Open it to answer the gate." }]);
  await shot(page, "notifications-1-badge.png");

  // A click on the notification opens the run's gate.
  await page.evaluate(() => window.__notes[0].onclick());
  await page.waitForURL(new RegExp(`#/flows/review/${runId}$`));
  await page.getByRole("group", { name: "Your decision" }).getByText("First check?").waitFor();
  assert.equal(await page.evaluate(() => window.__notes[0].closed), true);

  // The run's next gate, while the user looks at the run: on screen, not announced.
  const first = await page.locator('[data-testid="waiting"] li').getAttribute("data-key");
  await api("POST", `/api/flow-runs/${runId}/gate`, { option: "Approve" });
  await page.getByRole("group", { name: "Your decision" }).getByText("Second check?").waitFor();
  await page.waitForFunction((k) => {
    const li = document.querySelector('[data-testid="waiting"] li');
    return li && li.getAttribute("data-key") !== k;
  }, first);
  assert.equal((await notes(page)).length, 1, "the gate on screen was not announced");

  // Elsewhere in the app, a second run's gate is announced; the badge counts both.
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Workflows", exact: true }).click();
  const second = await startRun();
  await page.waitForFunction(() => document.querySelector('[data-testid="waiting-count"]')?.textContent === "2");
  await waitNotes(page, 2);
  assert.equal((await notes(page)).length, 2, "one notification per waiting item");
  assert.equal(await asked(page), 1, "the permission is asked once");
  await page.locator('[data-testid="waiting"] summary').click();
  const listed = page.getByRole("list", { name: "Waiting for you" }).getByRole("link");
  assert.equal(await listed.count(), 2);
  await shot(page, "notifications-2-list.png");

  // Answered elsewhere, the items leave the badge, and it goes when nothing waits.
  await api("POST", `/api/flow-runs/${runId}/gate`, { option: "Approve" });
  await page.waitForFunction(() => document.querySelector('[data-testid="waiting-count"]')?.textContent === "1");
  await api("POST", `/api/flow-runs/${second}/gate`, { option: "Reject" });
  await count(page).waitFor({ state: "detached" });
  assert.equal((await notes(page)).length, 2, "answers are not news");
  await page.context().close();
});

test("a dismissed question is never asked again unprompted; the user's click asks", async () => {
  const page = await openPage("dismiss");
  await page.goto(server.url + "#/workflows");
  await page.getByRole("navigation", { name: "Main" }).waitFor();
  const runId = await startRun();
  await page.waitForFunction(() => document.querySelector('[data-testid="waiting-count"]')?.textContent === "1");
  await page.waitForFunction(() => Number(localStorage.getItem("__asked") || 0) === 1);

  // A reload and a new waiting item: no second question, no notification.
  await page.reload();
  await page.waitForFunction(() => document.querySelector('[data-testid="waiting-count"]')?.textContent === "1");
  const other = await startRun();
  await page.waitForFunction(() => document.querySelector('[data-testid="waiting-count"]')?.textContent === "2");
  assert.equal(await asked(page), 1, "not asked again after a reload");
  assert.equal((await notes(page)).length, 0, "no permission, no notification");

  // The user asks for notifications themselves.
  await page.locator('[data-testid="waiting"] summary').click();
  await page.getByRole("button", { name: "Notify me when something waits" }).click();
  await page.waitForFunction(() => Number(localStorage.getItem("__asked") || 0) === 2);
  await api("POST", `/api/flow-runs/${runId}/gate`, { option: "Reject" });
  await api("POST", `/api/flow-runs/${other}/gate`, { option: "Reject" });
  await count(page).waitFor({ state: "detached" });
  await page.context().close();
});

test("a run the user ended by dismissing its prompt is not announced; one ended elsewhere is", async () => {
  // A flow may only name agents Maskflow knows: each gets its file.
  mkdirSync(join(server.home, "agents"), { recursive: true });
  writeFileSync(join(server.home, "agents", "writer.json"), "{}");
  writeFileSync(
    join(server.home, "flows/draft.json"),
    JSON.stringify({
      steps: [{ type: "llm", label: "Draft", agentType: "writer", identifier: "x", messages: [{ role: "user", content: ["Draft the weekly notes."] }] }],
    }),
  );
  const page = await openPage("grant");
  await page.goto(server.url + "#/builder");
  await page.getByRole("navigation", { name: "Main" }).waitFor();
  const status = async (id) => (await api("GET", `/api/flow-runs/${id}`)).status;
  const untilStatus = async (id, want) => {
    for (let i = 0; i < 300 && (await status(id)) !== want; i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal(await status(id), want);
  };

  // The step's manual prompt waits: counted and announced.
  const mine = (await api("POST", "/api/flows/draft/run", {})).conversationId;
  await page.waitForFunction(() => document.querySelector('[data-testid="waiting-count"]')?.textContent === "1");
  await waitNotes(page, 1);
  assert.equal((await notes(page))[0].title, "The writer needs an answer");

  // The user dismisses it here (the builder lists prompts of no workflow): the run fails, quietly.
  await page.locator('[data-testid="manual-prompt"]').getByRole("button", { name: "Dismiss" }).click();
  await untilStatus(mine, "failed");
  await count(page).waitFor({ state: "detached" });

  // Dismissed elsewhere (another client), the same kind of end is news.
  const other = (await api("POST", "/api/flows/draft/run", {})).conversationId;
  await page.waitForFunction(() => document.querySelector('[data-testid="waiting-count"]')?.textContent === "1");
  const asked = (await api("GET", "/api/manual")).find((p) => p.waiter?.run_id === other);
  await api("DELETE", `/api/manual/${asked.id}`);
  await untilStatus(other, "failed");
  await page.waitForFunction(() => window.__notes.some((n) => n.title === "Flow draft failed"));
  // Events arrive in order: the user's own run's failure came before, and was not told.
  const titles = (await notes(page)).map((n) => n.title);
  assert.deepEqual(titles, ["The writer needs an answer", "The writer needs an answer", "Flow draft failed"]);
  await page.context().close();
});

test("a run that starts before the event stream connects is still counted once it does", async () => {
  // The page's socket to /api/events is held back until the run waits at
  // its gate, as on a slow start or a reconnect: the events of that moment
  // never reach the page, so the badge must read the list again on connect.
  const page = await openPage("grant");
  let connect;
  const connected = new Promise((r) => (connect = r));
  await page.routeWebSocket(/\/api\/events/, async (ws) => {
    await connected;
    ws.connectToServer();
  });
  await page.goto(server.url + "#/workflows");
  await page.getByRole("navigation", { name: "Main" }).waitFor();
  const runId = await startRun();
  for (let i = 0; i < 300; i++) {
    const run = await api("GET", `/api/flow-runs/${runId}`);
    if (run.status === "waiting") break;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal(await count(page).count(), 0, "the page has not heard of the run yet");
  connect();
  await page.waitForFunction(() => document.querySelector('[data-testid="waiting-count"]')?.textContent === "1");
  await api("POST", `/api/flow-runs/${runId}/gate`, { option: "Reject" });
  await count(page).waitFor({ state: "detached" });
  await page.context().close();
});
