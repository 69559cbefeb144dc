// A file too big for a small model's context window (issue #17), in the real
// UI in Chromium, against `maskflow serve --provider openai` pointed at a
// loopback OpenAI-compatible server that reports a 2,048-token window in
// `/v1/models` (as llama.cpp does): the prompt is reduced before it is sent,
// every request fits, and the chat says what was left out. Screenshot in
// tests/e2e/artifacts/.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { after, before, test } from "node:test";
import { dropFiles, launchBrowser, shot, startServer } from "./harness.mjs";

const bodies = [];
let llm;
let server;
let browser;
let page;

before(async () => {
  llm = createServer((req, res) => {
    if (req.method === "GET" && req.url.endsWith("/models")) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ object: "list", data: [{ id: "small-model", meta: { n_ctx: 2048 } }] }));
      return;
    }
    let raw = "";
    req.on("data", (d) => (raw += d));
    req.on("end", () => {
      bodies.push(raw);
      const text = raw.includes("Maskflow's validator")
        ? '{"feasible": true}'
        : '{"needs_clarification": true, "question": "Which amount column?"}';
      const chunk = (delta, finish) => `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(chunk({ content: text }, null) + chunk({}, "stop") + "data: [DONE]\n\n");
    });
  });
  await new Promise((r) => llm.listen(0, "127.0.0.1", r));
  const base = `http://127.0.0.1:${llm.address().port}/v1`;
  server = await startServer(null, ["--provider", "openai", "--base-url", base, "--model", "small-model"]);
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  page = await context.newPage();
  page.on("pageerror", (e) => console.error("page error:", e));
});

after(async () => {
  await browser?.close();
  server?.stop();
  llm?.close();
});

const composer = () => page.getByLabel("Message", { exact: true });

test("a wide file is reduced to fit a 2,048-token model and the chat says what was left out", async () => {
  await page.goto(server.url);
  await page.getByRole("heading", { name: "New workflow" }).waitFor();
  await dropFiles(page, '[data-testid="dropzone"]', ["wide-ledger.csv"]);
  await page.locator(".chip-ready").first().waitFor();
  await page.getByRole("button", { name: "Approve and start chatting" }).click();
  await page.waitForURL(/#\/builder\/wf_/);
  await page.waitForFunction(() => !document.querySelector("#message")?.disabled);
  await composer().fill("total the amounts per customer");
  await composer().press("Enter");

  await page.getByText("Part of the extract was left out to fit the model").waitFor();
  await page.getByText(/To fit the model's 2,048-token context window, the validator's prompt was cut from about [\d,]+ to [\d,]+ tokens, leaving out: .*sample/).first().waitFor();
  await page.getByText("Which amount column?").waitFor();
  await shot(page, "context-fit-reduced.png");

  assert.equal(bodies.length, 2, "validator and clarifier");
  for (const b of bodies) {
    const body = JSON.parse(b);
    assert.ok(body.max_tokens >= 64, `room was left for the reply: ${body.max_tokens}`);
    // Raw values never leave; the masked sample rows were cut.
    assert.ok(!b.includes("Philippa") && !b.includes("Nakagawa"), "no raw value was sent");
    assert.ok(b.includes("Customer name 0"), "column names are kept");
  }
});
