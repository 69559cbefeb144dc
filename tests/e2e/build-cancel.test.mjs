// Cancel build (issue 18, point 4) in the real UI, in Chromium, against
// `maskflow serve --replay`: the replayed builder's script works for a
// minute in the sandbox; "Cancel build" stops it and the version shows as
// failed, "cancelled by the user". Screenshots go to tests/e2e/artifacts/.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { dropFiles, launchBrowser, shot, startServer } from "./harness.mjs";

let server;
let browser;
let page;
let replayDir;

before(async () => {
  replayDir = mkdtempSync(join(tmpdir(), "maskflow-cancel-"));
  const replay = join(replayDir, "replay.json");
  writeFileSync(
    replay,
    JSON.stringify({
      validator: [{ feasible: true }],
      clarifier: [{ needs_clarification: false }],
      builder: [
        {
          name: "Slow totals",
          description: "Adds up the amounts, slowly",
          script: "import time\ntime.sleep(60)\n",
          fields: [{ name: "customers", label: "Customers", type: "file", required: true }],
          execution: { runtime: "python3", entrypoint: "script.py", requirements: [], outputs: [] },
        },
      ],
    }),
  );
  server = await startServer(replay);
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  page = await context.newPage();
  page.on("pageerror", (e) => console.error("page error:", e));
});

after(async () => {
  await browser?.close();
  server?.stop();
  if (replayDir) rmSync(replayDir, { recursive: true, force: true });
});

test("Cancel build stops the test script and the version says it was cancelled", async () => {
  await page.goto(server.url);
  await page.getByRole("heading", { name: "New workflow" }).waitFor();
  await dropFiles(page, '[data-testid="dropzone"]', ["customers.csv"]);
  await page.locator(".chip-ready").first().waitFor();
  await page.getByRole("button", { name: "Approve and start chatting" }).click();
  await page.waitForFunction(() => !document.querySelector("#message")?.disabled);
  const composer = page.getByLabel("Message", { exact: true });
  await composer.fill("add up the balances per customer");
  await composer.press("Enter");

  const cancel = page.getByRole("button", { name: "Cancel build" });
  await cancel.waitFor();
  await shot(page, "50-build-running.png");
  await cancel.click();
  // The chat says so, with the way on (#28 point 4).
  await page.getByText("You stopped the build of version 1").first().waitFor();
  await shot(page, "51-build-cancelled.png");
  assert.equal(await page.getByRole("button", { name: "Cancel build" }).count(), 0);
});
