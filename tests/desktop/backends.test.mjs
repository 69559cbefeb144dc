// Issue 12: the desktop window talks to the back end the user chose in its
// Settings page. A recording OpenAI-compatible server on loopback answers
// the clarifier and the builder; the validator and one flow agent are
// mapped to the manual back end, whose prompts are answered by pasting in
// the window. The walk: Settings, drop two CSVs, approve, converse to a
// built workflow, approve it, run it, then a flow step on the manual back
// end. Every recorded request is checked against the raw values of the
// files, and every call must be in the ledger. Screenshots of each screen
// go to tests/desktop/artifacts/.
import assert from "node:assert/strict";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { after, before, test as nodeTest } from "node:test";
import { fileURLToPath } from "node:url";
import * as driver from "../lib/desktop-driver.mjs";
import { leaks, rawValuesOf, startLlmServer } from "../lib/llm-server.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "../..");
const ARTIFACTS = join(HERE, "artifacts");
const E2E = join(ROOT, "tests/e2e");
const FILES = ["customers.csv", "orders.csv"].map((f) => join(E2E, "fixtures", f));
const APP =
  process.env.MASKFLOW_DESKTOP_BIN ||
  join(process.env.CARGO_TARGET_DIR || join(ROOT, "target"), "debug", "maskflow-desktop");

mkdirSync(ARTIFACTS, { recursive: true });

const test = nodeTest;

let llm;
/** The window (tests/lib/desktop-driver.mjs). */
let d;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const until = (what, check) => driver.until(d, what, check);
const js = (body, ...args) => driver.js(d, body, ...args);
const waitFor = (sel, text = "") => driver.waitFor(d, sel, text);
const fill = (sel, value) => driver.fill(d, sel, value);
const click = (text, within = "body", last = false) => driver.click(d, text, within, last);
const go = (hash) => driver.go(d, hash);
const screenshot = (name) => driver.screenshot(d, name);
const invoke = (command, args) => driver.invoke(d, command, args);

/** Answers the first manual prompt on screen by pasting `answer`. */
async function paste(answer) {
  await waitFor("[data-testid=manual-prompt]");
  const id = await js("return document.querySelector('[data-testid=manual-prompt]').dataset.promptId;");
  await fill("[data-testid=manual-answer]", answer);
  await click("Send answer", "[data-testid=manual-prompt]");
  await until("the prompt to close", () => js("return !document.querySelector(`[data-prompt-id='${args[0]}']`);", id));
}

before(async () => {
  assert.ok(existsSync(APP), `build the desktop app first: ${APP} is missing`);
  const replay = JSON.parse(readFileSync(join(E2E, "replay.json"), "utf8"));
  llm = await startLlmServer({
    clarifier: [{ needs_clarification: true, question: "Should I keep every column from both files?" }, { needs_clarification: false }],
    builder: [replay.builder[0]],
  });
  const home = mkdtempSync(join(tmpdir(), "maskflow-desktop-backends-"));
  mkdirSync(join(home, "flows"));
  mkdirSync(join(home, "agents"));
  writeFileSync(join(home, "agents/writer.json"), JSON.stringify({ prompt: "You write short notes." }));
  writeFileSync(
    join(home, "flows/notes.json"),
    JSON.stringify({
      description: "One step on the manual back end.",
      steps: [{ type: "llm", label: "Draft", agentType: "writer", identifier: "n", messages: [{ role: "user", content: ["Draft the weekly notes."] }] }],
    }),
  );
  // Seed 004's example flow, as a user would copy it into the flows folder:
  // its agents name no provider, so they fall back to the builder's back end.
  const seed = join(ROOT, "tests/fixtures/flows/seed004");
  cpSync(join(seed, "flows"), join(home, "flows"), { recursive: true });
  cpSync(join(seed, "agents"), join(home, "agents"), { recursive: true });
  d = await driver.startDesktop({ app: APP, env: { MASKFLOW_HOME: home, MASKFLOW_REPLAY: "" }, artifacts: ARTIFACTS });
  await waitFor(".chat-pane h2", "New workflow");
});

after(async () => {
  await driver.stopDesktop(d);
  llm?.close();
});

test("Settings: the recording server answers the clarifier and builder, the validator and a flow agent stay manual", async () => {
  await go("#/settings");
  await click("+ Add back end");
  await fill("form[aria-label='Back end'] input[name=id]", "recorder");
  await fill("form[aria-label='Back end'] select[name=kind]", "openai");
  await fill("form[aria-label='Back end'] input[name=base_url]", llm.baseUrl);
  await fill("form[aria-label='Back end'] input[name=model]", "e2e-model");
  await click("Save back end");
  await waitFor("[data-testid=provider]", "recorder");
  for (const role of ["clarifier", "builder"]) {
    await fill(`select[name="role-${role}"]`, "recorder");
    await until(`${role} saved`, async () => (await invoke("settings")).roles[role] === "recorder");
  }
  await waitFor("select[name='role-agent:writer']");
  await fill("select[name='role-agent:writer']", "manual");
  await until("writer saved", async () => (await invoke("settings")).roles["agent:writer"] === "manual");
  await screenshot("20-backends-settings.png");
});

test("drop, approve, one manual turn pasted, converse, build, approve and run", async () => {
  await go("#/builder");
  await waitFor("[data-testid=dropzone]");
  const files = FILES.map((p) => ({ name: p.split("/").pop(), text: readFileSync(p, "utf8") }));
  // Dropped again only while no chip shows: right after navigating, the
  // page may still be replacing the drop zone that got the first drop.
  await until("the drop to be taken", async () => {
    await js(
      `if (document.querySelector("[data-testid=chip]")) return true;
       const dt = new DataTransfer();
       for (const f of args[0]) dt.items.add(new File([f.text], f.name, { type: "text/csv" }));
       const zone = document.querySelector("[data-testid=dropzone]");
       zone.dispatchEvent(new DragEvent("dragover", { bubbles: true, dataTransfer: dt }));
       zone.dispatchEvent(new DragEvent("drop", { bubbles: true, cancelable: true, dataTransfer: dt }));
       return true;`,
      files,
    );
    await sleep(500);
    return js("return !!document.querySelector('[data-testid=chip]');");
  });
  await until("two ready files", () => js("return document.querySelectorAll('.chip-ready').length === 2;"));
  await screenshot("21-backends-extracts.png");
  await click("Approve and start chatting");
  await until("the chat to open", () => js("return !document.querySelector('#message')?.disabled;"));
  await fill("#message", "merge these files by customer_id");
  await click("Send");
  // The validator is on the manual back end: its prompt shows in the window
  // while the message waits, and the answer is pasted there.
  await waitFor("[data-testid=manual-prompt]");
  await screenshot("22-backends-manual-turn.png");
  await paste('{"feasible": true}');
  await waitFor("[data-testid=messages]", "Should I keep every column from both files?");
  await screenshot("23-backends-chat.png");
  await fill("#message", "keep every column");
  await click("Send");
  await until("the review", () => js("return location.hash.startsWith('#/workflows/wf_');"));
  await waitFor('.versions [data-status="pending_user_approval"]');
  await screenshot("24-backends-review.png");
  await click("Approve");
  await waitFor('.versions [data-status="approved"]');
  await click("▶ Run");
  await waitFor("[data-testid=run-file-customers]");
  await waitFor("[data-testid=run-file-orders]");
  const runFiles = ["customers-new.csv", "orders-new.csv"].map((n) => ({ name: n, text: readFileSync(join(E2E, "fixtures", n), "utf8") }));
  await js(
    `for (const [field, f] of [["customers", args[0][0]], ["orders", args[0][1]]]) {
       const input = document.querySelector("[data-testid=run-file-" + field + "]");
       const dt = new DataTransfer();
       dt.items.add(new File([f.text], f.name, { type: "text/csv" }));
       input.files = dt.files;
       input.dispatchEvent(new Event("change", { bubbles: true }));
     }
     return true;`,
    runFiles,
  );
  await waitFor("body", "orders-new.csv ✓");
  await waitFor("body", "customers-new.csv ✓");
  await click("▶ Run", "body", true);
  await waitFor("[data-testid=run]", "succeeded");
  await screenshot("25-backends-run.png");
});

test("a flow step on the manual back end: its prompt is pasted in the Flows page", async () => {
  await go("#/flows/notes");
  await click("Run");
  await paste("Pasted weekly notes.");
  await waitFor("[data-testid=run-status]", "completed");
  await waitFor("[data-testid=flow-bubble]", "Pasted weekly notes.");
  await screenshot("26-backends-flow-manual.png");
});

test("seed 004's example flow runs on the builder's back end, chosen in Settings", async () => {
  const before = llm.requests.length;
  await go("#/flows/seed_example");
  await click("Run");
  await waitFor("[data-testid=run-status]", "completed");
  await screenshot("27-backends-seed004.png");
  const mine = llm.requests.slice(before);
  // Draft summary, Improve plan and the break question: one loop pass, since
  // the recording server answers the question with {"answer":"yes"}.
  assert.equal(mine.length, 3, JSON.stringify(mine.map((r) => r.body.messages.at(-1))));
  for (const r of mine) assert.equal(r.body.model, "e2e-model");
  const ledger = await invoke("ledger", { q: null, limit: 500, offset: 0 });
  // The ledger names the back end by its kind.
  const agents = ledger.filter((e) => e.role.startsWith("agent:") && e.role !== "agent:writer");
  assert.deepEqual(
    agents.map((e) => [e.role, e.provider, e.outcome]).sort(),
    [
      ["agent:coding_agent", "openai", "ok"],
      ["agent:coding_agent", "openai", "ok"],
      ["agent:planning_agent", "openai", "ok"],
    ],
  );
});

test("every request went to the chosen model without a raw value, and every call is in the ledger", async () => {
  const roles = new Set(llm.requests.map((r) => r.role));
  assert.ok(roles.has("clarifier") && roles.has("builder"), [...roles].join());
  assert.ok(!roles.has("validator"), "the validator was answered by pasting");
  for (const r of llm.requests) assert.equal(r.body.model, "e2e-model");
  assert.deepEqual(leaks(llm.requests, rawValuesOf(FILES)), []);
  const ledger = await invoke("ledger", { q: null, limit: 500, offset: 0 });
  const ok = ledger.filter((e) => e.outcome === "ok");
  const manual = ok.filter((e) => e.provider === "manual").map((e) => e.role);
  assert.deepEqual(manual.sort(), ["agent:writer", "validator"]);
  assert.equal(ok.length - manual.length, llm.requests.length, JSON.stringify(ledger.map((e) => [e.role, e.provider, e.outcome])));
});

