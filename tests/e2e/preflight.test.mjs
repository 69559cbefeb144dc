// Issue 28, points 5 and 6, and issue 44, point 2, in the real UI, in
// Chromium, against `maskflow serve --replay` with uv unavailable
// (MASKFLOW_UV names a missing file, no uv on PATH): the Builder shows the
// preflight with "Install uv" before the first message, yet the message is
// sent at once (the preflight never holds a conversation) and the
// standard-library script is built with no uv; once approved, a run on a
// file with a renamed column lists the difference and "Run anyway" runs
// it. Screenshots go to tests/e2e/artifacts/.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { after, before, test } from "node:test";
import { dropFiles, launchBrowser, shot, startServer } from "./harness.mjs";

let server;
let browser;
let page;
let dir;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "maskflow-preflight-"));
  const replay = join(dir, "replay.json");
  writeFileSync(
    replay,
    JSON.stringify({
      validator: [{ feasible: true }],
      clarifier: [{ needs_clarification: false }],
      builder: [
        {
          name: "Customer count",
          description: "Counts the customers",
          script:
            'import json, sys\nf = json.load(open(sys.argv[1]))["fields"]\nrows = open(f["customers"]).read().splitlines()\nopen("outputs/count.txt", "w").write("%d\\n" % (len(rows) - 1))\n',
          fields: [{ name: "customers", label: "Customers", type: "file", required: true }],
          execution: { runtime: "python3", entrypoint: "script.py", requirements: [], outputs: [{ name: "count.txt", description: "the count" }] },
        },
      ],
    }),
  );
  writeFileSync(join(dir, "customers-renamed.csv"), "customer_id,full_name,email,joined\nC-3001,Grace Hopper,grace@example.net,2025-04-01\n");
  // uv made unavailable for the server only (the environment is copied when it starts).
  const saved = { uv: process.env.MASKFLOW_UV, path: process.env.PATH };
  process.env.MASKFLOW_UV = join(dir, "no-such-uv");
  process.env.PATH = (saved.path ?? "")
    .split(delimiter)
    .filter((d) => d && !existsSync(join(d, "uv")))
    .join(delimiter);
  try {
    server = await startServer(replay);
  } finally {
    if (saved.uv === undefined) delete process.env.MASKFLOW_UV;
    else process.env.MASKFLOW_UV = saved.uv;
    process.env.PATH = saved.path;
  }
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  page = await context.newPage();
  page.on("pageerror", (e) => console.error("page error:", e));
});

after(async () => {
  await browser?.close();
  server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function ledger() {
  const r = await fetch(`${server.origin}/api/ledger?limit=500`, { headers: { authorization: `Bearer ${server.token}` } });
  return r.json();
}

test("the preflight shows missing uv before the first message and never holds it", async () => {
  await page.goto(server.url);
  await page.getByRole("heading", { name: "New workflow" }).waitFor();
  await dropFiles(page, '[data-testid="dropzone"]', ["customers.csv"]);
  await page.locator(".chip-ready").first().waitFor();
  await page.getByRole("button", { name: "Approve and start chatting" }).click();
  await page.waitForFunction(() => !document.querySelector("#message")?.disabled);
  const panel = page.getByTestId("preflight");
  await panel.waitFor();
  await panel.getByTestId("preflight-uv").waitFor();
  assert.ok(await panel.getByRole("button", { name: "Install uv" }).isVisible());
  assert.equal(await panel.getByRole("button", { name: "Go ahead anyway" }).count(), 0);
  await shot(page, "60-preflight.png");

  const composer = page.getByLabel("Message", { exact: true });
  await composer.fill("count the customers");
  await composer.press("Enter");
  await page.waitForURL(/#\/workflows\/wf_/, { timeout: 120_000 });
  await page.locator('.versions [data-status="pending_user_approval"]').waitFor({ timeout: 120_000 });
  const roles = (await ledger()).map((e) => e.role);
  assert.ok(roles.includes("validator") && roles.includes("builder"), JSON.stringify(roles));
});

test("a run on a file with a renamed column lists it, and Run anyway runs it", async () => {
  await page.getByRole("button", { name: "Approve", exact: true }).click();
  await page.locator('.versions [data-status="approved"]').waitFor();
  await page.getByRole("tab", { name: "▶ Run" }).click();
  await page.getByTestId("run-file-customers").setInputFiles(join(dir, "customers-renamed.csv"));
  await page.getByText("customers-renamed.csv ✓").waitFor();
  await page.getByRole("button", { name: "▶ Run" }).click();
  const differs = page.getByTestId("run-differs");
  await differs.waitFor();
  assert.match(await differs.innerText(), /column "name" is missing \(the approved file had it\); column "full_name" is new/);
  await shot(page, "61-run-differs.png");
  await differs.getByRole("button", { name: "Run anyway" }).click();
  const run = page.getByTestId("run").first();
  await run.getByTestId("run-output").waitFor({ timeout: 60_000 });
  assert.match(await run.innerText(), /succeeded/);
});
