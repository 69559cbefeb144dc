// Settings → House rules (issue 18 point 3): the user writes scoped rules
// with an include, a missing include is refused with its chain, the saved
// rules and the data folder's files are listed, and they survive a reload —
// in the real UI in Chromium against `maskflow serve`. Screenshots go to
// tests/e2e/artifacts/.
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { launchBrowser, shot, startServer } from "./harness.mjs";

let server;
let browser;
let page;

const RULES = "# Always\nComment every step in plain words.\n{{include:_shared}}\n\n# Python\nUse pathlib for paths.\n\n# Excel outputs\nFreeze the header row.";

before(async () => {
  server = await startServer(null);
  const dir = join(server.home, "house-rules");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "_shared.md"), "Never print a data value.");
  writeFileSync(join(dir, "charts.md"), "# Charts\nLabel both axes.");
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.on("pageerror", (e) => console.error("page error:", e));
});

after(async () => {
  await browser?.close();
  server?.stop();
});

test("House rules are saved in Settings, with scopes, includes and the folder's files", async () => {
  await page.goto(server.url);
  await page.getByRole("link", { name: "Settings" }).click();
  const card = page.getByTestId("house-rules");
  await card.getByRole("heading", { name: "House rules" }).waitFor();
  await card.getByText("only for includes").waitFor();
  await card.getByText("Charts", { exact: true }).waitFor();
  const box = card.locator("textarea[name=house-rules]");

  // A missing include is refused, naming the chain; nothing is saved.
  await box.fill("# Python\n{{include:style}}");
  await card.getByRole("button", { name: "Save house rules" }).click();
  const alert = page.getByRole("alert");
  await alert.getByText("{{include:style}} in the Settings text names no file house-rules/style.md").waitFor();

  await box.fill(RULES);
  await card.getByRole("button", { name: "Save house rules" }).click();
  await page.getByText("House rules saved").waitFor();
  await card.getByText("Scopes here: Always, Python, Excel outputs.").waitFor();
  await card.scrollIntoViewIfNeeded();
  await shot(page, "70-house-rules.png");

  const token = server.token;
  const r = await fetch(`${server.origin}/api/settings/house-rules`, { headers: { authorization: `Bearer ${token}` } });
  const view = await r.json();
  assert.equal(view.text, RULES);
  assert.deepEqual(view.scopes, ["Always", "Python", "Excel outputs"]);
  assert.deepEqual(
    view.files.map((f) => [f.name, f.include_only]),
    [
      ["_shared", true],
      ["charts", false],
    ],
  );

  // Kept: a reload shows the saved text.
  await page.reload();
  await page.getByTestId("house-rules").locator("textarea[name=house-rules]").waitFor();
  assert.equal(await page.getByTestId("house-rules").locator("textarea[name=house-rules]").inputValue(), RULES);
});
