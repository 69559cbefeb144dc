// Seed-shaped imports (issue 18 point 11) in Chromium against `maskflow
// serve`: seed 003's PR Review Mermaid config and its export bundle, taken
// verbatim from crates/maskflow-flows/tests/fixtures/seeds/, are imported
// through the Flows page's Import button; their steps show in the diagram
// and the bundle's agent on the Agents page. A bundle the loader refuses
// (a misspelt key) and a file cut short show a clear error and import
// nothing. Screenshots go to tests/e2e/artifacts/seed-imports-*.png.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { FIXTURES, ROOT, launchBrowser, shot, startServer } from "./harness.mjs";

const SEEDS = join(ROOT, "crates/maskflow-flows/tests/fixtures/seeds");

let server;
let browser;
let page;

before(async () => {
  server = await startServer(null);
  browser = await launchBrowser();
  page = await (await browser.newContext({ viewport: { width: 1280, height: 860 } })).newPage();
  page.setDefaultTimeout(15000);
  page.on("pageerror", (e) => console.error("page error:", e));
  await page.goto(server.url);
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Flows", exact: true }).click();
});

after(async () => {
  await browser?.close();
  server?.stop();
});

const importFile = (path) => page.locator('[data-testid="flow-import"]').setInputFiles(path);
const diagramText = async () => {
  await page.locator('[data-testid="flow-diagram"] svg').waitFor();
  return page.locator('[data-testid="flow-diagram"] svg').textContent();
};

test("seed 003's PR Review Mermaid config imports with its steps", async () => {
  await importFile(join(SEEDS, "003-pr-review.mmd"));
  await page.waitForURL(/#\/flows\/003-pr-review$/);
  await page.locator('[data-testid="flow-003-pr-review"]').waitFor();
  const text = await diagramText();
  for (const step of ["Fetch PR Details", "Get Changed Files", "Review File", "Join Reviews", "Quality Gate", "Human Review", "Merge PR", "Close PR"]) {
    assert.ok(text.includes(step), `${step} in ${text}`);
  }
  assert.equal(await page.locator('[role="alert"]').count(), 0);
  assert.equal(await page.locator('[data-testid="flow-imported"] p').innerText(), "Imported “003-pr-review” with 11 steps.");
  await shot(page, "seed-imports-1-mermaid.png");
});

test("seed 003's export bundle imports with its step and its agent", async () => {
  await importFile(join(SEEDS, "003-export-bundle.json"));
  await page.waitForURL(/#\/flows\/pr-review-pipeline$/);
  const entry = page.locator('[data-testid="flow-pr-review-pipeline"]');
  assert.match(await entry.innerText(), /Automated PR review with human escalation/);
  assert.ok((await diagramText()).includes("Fetch PR Details"));
  const notice = page.locator('[data-testid="flow-imported"]');
  assert.match(await notice.innerText(), /Imported “pr-review-pipeline” with 1 step and 1 agent: Code Review Agent \(code-reviewer\)/);
  await shot(page, "seed-imports-2-bundle.png");

  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Agents", exact: true }).click();
  const agent = page.locator('[data-testid="agent-code-reviewer"]');
  await agent.waitFor();
  assert.match(await agent.innerText(), /Code Review Agent/);
  await shot(page, "seed-imports-3-agent.png");
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Flows", exact: true }).click();
});

test("a bundle the loader refuses, and a file cut short, show why and import nothing", async () => {
  await importFile(join(FIXTURES, "seed-003-misspelt-bundle.json"));
  const alert = page.getByRole("alert");
  await alert.waitFor();
  const said = await alert.innerText();
  assert.match(said, /seed-003-misspelt-bundle\.json was not imported: .*workflow\.steps\[0\]/);
  assert.match(said, /itemPath/);
  assert.equal(existsSync(join(server.home, "flows", "misspelt-review.json")), false);
  await shot(page, "seed-imports-4-refused.png");
  await alert.getByRole("button", { name: "Dismiss" }).click();

  await importFile(join(FIXTURES, "seed-003-cut-short.json"));
  await alert.waitFor();
  assert.match(await alert.innerText(), /seed-003-cut-short\.json is not valid JSON/);
  await shot(page, "seed-imports-5-not-json.png");
  const names = await page.locator(".flow-list li strong").allInnerTexts();
  assert.deepEqual(names.sort(), ["003-pr-review", "pr-review-pipeline"]);
});
