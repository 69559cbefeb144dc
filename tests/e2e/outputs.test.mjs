// Issue 16 in the browser: a workflow on a real workbook (written with
// openpyxl) whose script needs pandas, openpyxl, matplotlib and xlsxwriter
// builds in a uv environment made from PyPI (uv's cache under
// ~/.cache/maskflow-test/uv); the Workflows page shows the chart inline,
// every sheet of the xlsx as a table with its row count, the environment,
// and a download. A second workflow asks for a package outside the curated
// set: the build waits, and refusing it stops the build with a clear
// message. Settings lists the environment with its size.
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { downloadBytes, dropFiles, launchBrowser, shot, startServer } from "./harness.mjs";

const SCRIPT = `import json, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd
f = json.load(open(sys.argv[1]))["fields"]
df = pd.read_excel(f["workbook"], sheet_name="Sales", engine="openpyxl")
totals = df.groupby("Region", as_index=False)["Revenue"].sum().sort_values("Region")
fig, ax = plt.subplots(figsize=(6, 4))
ax.bar(totals["Region"], totals["Revenue"], color="#4f6bed")
ax.set_title("Revenue per region")
fig.savefig("outputs/revenue.png", dpi=80)
by_month = df.pivot_table(index="Month", columns="Region", values="Revenue", aggfunc="sum").reset_index()
with pd.ExcelWriter("outputs/revenue.xlsx", engine="xlsxwriter") as xw:
    totals.to_excel(xw, sheet_name="Totals", index=False)
    by_month.to_excel(xw, sheet_name="By month", index=False)
`;

function spec(name, script, requirements, outputs) {
  return {
    name,
    description: "Revenue per region as a chart and a workbook",
    script,
    fields: [{ name: "workbook", label: "Sales workbook", type: "file", required: true, accept: [".xlsx"] }],
    execution: {
      runtime: "python3",
      entrypoint: "script.py",
      requirements,
      outputs: outputs.map((o) => ({ name: o, description: o })),
    },
  };
}

let server;
let browser;
let page;

before(async () => {
  const dir = mkdtempSync(join(tmpdir(), "maskflow-e2e-outputs-"));
  const replay = join(dir, "replay.json");
  writeFileSync(
    replay,
    JSON.stringify({
      validator: [{ feasible: true }, { feasible: true }],
      clarifier: [{ needs_clarification: false }, { needs_clarification: false }],
      builder: [
        spec("Revenue per region", SCRIPT, ["pandas", "openpyxl", "matplotlib", "xlsxwriter"], ["revenue.png", "revenue.xlsx"]),
        spec("Tabulated", "import tabulate\n", ["tabulate"], ["table.txt"]),
      ],
    }),
  );
  process.env.UV_CACHE_DIR ??= join(homedir(), ".cache", "maskflow-test", "uv");
  server = await startServer(replay);
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.on("pageerror", (e) => console.error("page error:", e));
});

after(async () => {
  await browser?.close();
  server?.stop();
});

async function startBuild(request) {
  await page.goto(server.url);
  await page.getByRole("link", { name: "New workflow" }).click();
  await dropFiles(page, '[data-testid="dropzone"]', ["sales.xlsx"]);
  await page.locator(".chip-ready").first().waitFor();
  await page.getByRole("button", { name: "Approve and start chatting" }).click();
  await page.waitForURL(/#\/builder\/wf_/);
  await page.waitForFunction(() => !document.querySelector("#message")?.disabled);
  const composer = page.getByLabel("Message", { exact: true });
  await composer.fill(request);
  await composer.press("Enter");
}

test("the chart shows inline and every sheet of the xlsx as a table, with the environment", async () => {
  await startBuild("monthly revenue per region as a bar chart and an Excel sheet");
  // The environment is made from PyPI on first use; the build then lands on the review.
  await page.waitForURL(/#\/workflows\/wf_/, { timeout: 600_000 });
  await page.getByRole("tab", { name: "Test report" }).click();
  const report = page.getByTestId("test-report");
  await report.waitFor();
  assert.match(await report.innerText(), /Test passed/);
  const env = report.getByTestId("test-environment");
  const envText = await env.innerText();
  assert.match(envText, /^Python 3\.\d+ environment [0-9a-f]{16} \(\d+ MB\)/);
  for (const p of ["pandas==", "openpyxl==", "matplotlib==", "xlsxwriter=="]) assert.ok(envText.includes(p), `${p} in ${envText}`);

  const chart = report.locator('[data-testid="test-output"][data-name="revenue.png"]');
  const img = chart.getByTestId("output-image");
  await img.waitFor();
  const width = await img.evaluate((el) => el.complete && el.naturalWidth);
  assert.equal(width, 480, "a decoded 6x4 in. PNG at 80 dpi");
  assert.ok(await chart.getByRole("link", { name: "Download" }).isVisible());

  const book = report.locator('[data-testid="test-output"][data-name="revenue.xlsx"]');
  const table = book.getByTestId("output-table");
  await table.waitFor();
  assert.match(await book.getByTestId("sheet-rows").innerText(), /^5 rows/);
  assert.deepEqual(await table.locator("thead th").allInnerTexts(), ["Region", "Revenue"]);
  assert.equal(await table.locator("tbody tr").count(), 4);
  assert.match(await table.locator("tbody tr").first().innerText(), /East\s+6777/);
  await shot(page, "40-workflows-outputs-chart-and-table.png");
  await book.getByRole("tab", { name: "By month" }).click();
  assert.match(await book.getByTestId("sheet-rows").innerText(), /^7 rows/);
  assert.deepEqual(await table.locator("thead th").allInnerTexts(), ["Month", "East", "North", "South", "West"]);
  const bytes = await downloadBytes(page, book.getByRole("link", { name: "Download" }));
  assert.equal([...bytes.subarray(0, 2)].join(","), "80,75", "the xlsx (a zip) downloads");
  await book.scrollIntoViewIfNeeded();
  await shot(page, "41-workflows-outputs-second-sheet.png");
});

test("Settings lists the environment with its size, in use", async () => {
  await page.getByRole("link", { name: "Settings" }).click();
  const card = page.getByTestId("environments-setting");
  const env = card.getByTestId("environment");
  await env.waitFor();
  const text = await env.innerText();
  assert.match(text, /Python 3\.\d+ · \d+(\.\d+)? MB · in use/);
  assert.match(text, /pandas==/);
  await card.scrollIntoViewIfNeeded();
  await shot(page, "42-settings-python-environments.png");
});

test("a package outside the curated set waits for approval; refused, the build stops and says why", async () => {
  await startBuild("tabulate the sales");
  const gate = page.getByTestId("packages-gate");
  await gate.waitFor({ timeout: 120_000 });
  assert.match(await gate.innerText(), /tabulate \d+\.\d+/);
  await shot(page, "43-builder-package-approval.png");
  await gate.getByRole("button", { name: "Refuse and stop the build" }).click();
  await page.getByText(/did not approve the Python package\(s\) tabulate/).first().waitFor();
  await shot(page, "44-builder-package-refused.png");
});
