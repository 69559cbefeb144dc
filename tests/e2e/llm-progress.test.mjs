// Live progress and Cancel of a slow streamed reply (issue #17), in the real
// UI in Chromium, against `maskflow serve --provider openai` pointed at a
// loopback OpenAI-compatible server that streams one piece every 200 ms and
// never finishes: the builder shows the role, tokens so far and the time,
// and Cancel stops the call (the server sees the request dropped), says so,
// and lets the user send again. Screenshots go to tests/e2e/artifacts/.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { after, before, test } from "node:test";
import { dropFiles, launchBrowser, shot, startServer } from "./harness.mjs";

let llm;
let dropped = 0;
let posts = 0;
let server;
let browser;
let page;

before(async () => {
  llm = createServer((req, res) => {
    if (req.method !== "POST") {
      res.writeHead(404).end();
      return;
    }
    posts += 1;
    req.resume();
    res.writeHead(200, { "content-type": "text/event-stream" });
    const piece = (t) =>
      `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: t }, finish_reason: null }] })}\n\n`;
    let n = 0;
    // Bounded: at most 600 pieces (2 minutes), loopback only.
    const timer = setInterval(() => {
      n += 1;
      if (n > 600) {
        clearInterval(timer);
        res.end();
        return;
      }
      res.write(piece(n === 1 ? '{"feasible": ' : " "));
    }, 200);
    res.on("close", () => {
      clearInterval(timer);
      dropped += 1;
    });
  });
  await new Promise((r) => llm.listen(0, "127.0.0.1", r));
  const base = `http://127.0.0.1:${llm.address().port}/v1`;
  server = await startServer(null, ["--provider", "openai", "--base-url", base, "--model", "slow-model"]);
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

test("a slow streamed reply shows role, tokens and time, and Cancel stops it", async () => {
  await page.goto(server.url);
  await page.getByRole("heading", { name: "New workflow" }).waitFor();
  await dropFiles(page, '[data-testid="dropzone"]', ["customers.csv"]);
  await page.locator(".chip-ready").first().waitFor();
  await page.getByRole("button", { name: "Approve and start chatting" }).click();
  await page.waitForURL(/#\/builder\/wf_/);
  await page.waitForFunction(() => !document.querySelector("#message")?.disabled);
  await composer().fill("count the customers by country");
  await composer().press("Enter");

  const progress = page.getByTestId("llm-progress");
  await progress.getByText(/The validator is replying · ≈\d+ tokens · \d+\.\d s/).waitFor();
  // The count and the clock move.
  await page.waitForFunction(() => {
    const m = document.querySelector('[data-testid="llm-progress"]')?.textContent?.match(/≈(\d+) tokens/);
    return m && Number(m[1]) >= 3;
  });
  await shot(page, "llm-progress-streaming.png");

  await page.getByTestId("llm-cancel").click();
  await page.getByText("The reply was cancelled").waitFor();
  assert.equal(await progress.count(), 0, "the progress is gone");
  for (let i = 0; i < 100 && dropped < posts; i++) await new Promise((r) => setTimeout(r, 50));
  assert.ok(posts >= 1);
  assert.equal(dropped, posts, "every request to the model was dropped");
  // The user can send again: the composer holds the message.
  await page.waitForFunction(() => !document.querySelector("#message")?.disabled);
  assert.equal(await composer().inputValue(), "count the customers by country");
  await shot(page, "llm-progress-cancelled.png");
});
