// Plan and review in builds (issue 31 point 3) in the real UI, in Chromium,
// against `maskflow serve --replay`: the workflow's build choices turn on
// the plan step and the AI review; the builder proposes a plan, the person
// edits it and approves the edit; the script is built from the edited plan
// (the builder's prompt carries it) and tested; the reviewer's verdict and
// notes, and the approved plan, are shown with the finished build.
// Screenshots go to tests/e2e/artifacts/.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { dropFiles, launchBrowser, shot, startServer } from "./harness.mjs";

const EDIT = "Skip customers without an email";
const NOTES = "Reads the customers file and writes one row per customer, as planned.";

let server;
let browser;
let page;
let replayDir;

before(async () => {
  replayDir = mkdtempSync(join(tmpdir(), "maskflow-plan-"));
  const replay = join(replayDir, "replay.json");
  writeFileSync(
    replay,
    JSON.stringify({
      validator: [{ feasible: true }],
      clarifier: [{ needs_clarification: false }],
      // The builder's back end answers the planner, the builder, then the reviewer.
      builder: [
        {
          steps: ["Read the customers file", "Write each customer's id and name"],
          inputs: ["customers.csv"],
          outputs: ["names.csv"],
        },
        {
          name: "Customer names",
          description: "Lists each customer's id and name",
          script:
            "import csv, json, sys\n\nf = json.load(open(sys.argv[1]))['fields']\nwith open('outputs/names.csv', 'w', newline='') as out:\n    w = csv.writer(out)\n    w.writerow(['customer_id', 'name'])\n    for r in csv.DictReader(open(f['customers'])):\n        if r['email'].strip():\n            w.writerow([r['customer_id'], r['name']])\n",
          fields: [{ name: "customers", label: "Customers file", type: "file", required: true, accept: [".csv"] }],
          execution: {
            runtime: "python3",
            entrypoint: "script.py",
            requirements: [],
            outputs: [{ name: "names.csv", description: "each customer's id and name" }],
          },
        },
        { verdict: "approve", notes: NOTES },
      ],
    }),
  );
  server = await startServer(replay);
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.on("pageerror", (e) => console.error("page error:", e));
});

after(async () => {
  await browser?.close();
  server?.stop();
  if (replayDir) rmSync(replayDir, { recursive: true, force: true });
});

async function ledger() {
  const res = await fetch(`${server.origin}/api/ledger?limit=100`, {
    headers: { authorization: `Bearer ${server.token}` },
  });
  assert.equal(res.status, 200);
  return res.json();
}

test("the plan step is turned on for the workflow, and its plan waits at the gate", async () => {
  await page.goto(server.url);
  await page.getByRole("heading", { name: "New workflow" }).waitFor();
  await dropFiles(page, '[data-testid="dropzone"]', ["customers.csv"]);
  await page.locator(".chip-ready").first().waitFor();
  await page.getByRole("button", { name: "Approve and start chatting" }).click();
  await page.waitForURL(/#\/builder\/wf_/);
  await page.waitForFunction(() => !document.querySelector("#message")?.disabled);

  const options = page.getByTestId("build-options");
  await options.waitFor();
  for (const key of ["plan", "review"]) {
    const box = page.getByTestId(`build-option-${key}`);
    await box.check();
    // Stored: the switch reads back what the server kept.
    await page.waitForFunction((k) => document.querySelector(`[data-testid="build-option-${k}"]`)?.checked, key);
  }
  assert.equal(await page.getByTestId("build-option-ai_approver").isChecked(), false);
  await shot(page, "60-build-plan-options.png");

  const composer = page.getByLabel("Message", { exact: true });
  await composer.fill("list each customer's id and name");
  await composer.press("Enter");
  const gate = page.getByTestId("plan-gate");
  await gate.waitFor();
  const proposed = await page.getByTestId("plan-text").inputValue();
  assert.match(proposed, /Read the customers file/);
  assert.match(proposed, /names\.csv/);
  // No code yet: the plan comes first, and nothing runs while it waits.
  assert.equal(await page.getByRole("button", { name: "Cancel build" }).count(), 0);
  await page.getByText("Planning · the plan waits for you").waitFor();
  assert.match(await page.getByTestId("building").innerText(), /No code is written yet/);
  assert.equal(await page.getByRole("button", { name: "Approve the plan" }).isEnabled(), true);
  assert.equal(await page.getByRole("button", { name: "Ask for another plan" }).isDisabled(), true, "asking again needs what to change");
  await shot(page, "61-build-plan-proposed.png");
});

test("the person edits the plan and approves the edit; the script is built from it", async () => {
  const text = page.getByTestId("plan-text");
  const proposed = await text.inputValue();
  const step = "2. Write each customer's id and name";
  assert.ok(proposed.includes(step), proposed);
  await text.fill(proposed.replace(step, `${step}\n3. ${EDIT}`));
  const approve = page.getByRole("button", { name: "Approve my edit" });
  await approve.waitFor();
  await shot(page, "62-build-plan-edited.png");
  await approve.click();
  // The build goes on and finishes: the page opens the version to review.
  await page.waitForURL(/#\/workflows\/wf_/);
  await page.locator('.versions [data-status="pending_user_approval"]').waitFor();
  const code = page.getByLabel("Script of version 1");
  await code.waitFor();
  assert.match(await code.innerText(), /if r\['email'\]\.strip\(\):/);

  // The builder was asked with the edited plan, through the guard and the ledger.
  const calls = (await ledger()).filter((e) => e.role === "builder");
  assert.equal(calls.length, 3, calls.map((c) => c.request_body.slice(0, 80)).join("\n"));
  const generation = calls.find((c) => c.request_body.includes("Follow this plan, which I approved"));
  assert.ok(generation, "the builder's prompt carries the approved plan");
  assert.ok(generation.request_body.includes(EDIT), "with the person's edit");
});

test("the reviewer's verdict and notes, and the approved plan, are shown with the build", async () => {
  const panel = page.getByTestId("build-reviews");
  await panel.waitFor();
  const review = panel.getByTestId("review");
  assert.equal(await review.count(), 1);
  assert.equal(await review.getAttribute("data-verdict"), "approve");
  const said = await review.innerText();
  assert.match(said, /The reviewer approved the script \(iteration 1\)/);
  assert.match(said, /advice/);
  assert.ok(said.includes(NOTES), said);
  await panel.getByText("The approved plan").click();
  const plan = await panel.getByTestId("approved-plan").innerText();
  assert.ok(plan.includes(EDIT), plan);
  await shot(page, "63-build-plan-review-workflows.png");

  // Back in the builder, the same panel sits under the conversation.
  await page.goto(server.origin + "/" + new URL(page.url()).hash.replace("#/workflows/", "#/builder/"));
  const inChat = page.getByTestId("build-reviews");
  await inChat.waitFor();
  assert.ok((await inChat.getByTestId("review").innerText()).includes(NOTES));
  await shot(page, "64-build-plan-review-builder.png");
});
