// Settings → Models (issue 32): the first start's choice, and a model
// downloaded from a file server on loopback with its progress bar, the
// connection dropped mid-way and resumed with a Range request, the SHA-256
// checked, then removed — in the real UI in Chromium against `maskflow serve`.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { launchBrowser, shot, startServer } from "./harness.mjs";

let server;
let browser;
let page;
let files;
const ranges = [];
let release;
const released = new Promise((r) => (release = r));

/** A GGUF header (version 3, architecture llama, no tensors) and 2 MiB of padding. */
function fakeModel() {
  const str = (s) => {
    const b = Buffer.alloc(8 + s.length);
    b.writeBigUInt64LE(BigInt(s.length));
    b.write(s, 8);
    return b;
  };
  const u32 = (n) => {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(n);
    return b;
  };
  const u64 = (n) => {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(n));
    return b;
  };
  const padding = Buffer.alloc(2 << 20, 7);
  return Buffer.concat([Buffer.from("GGUF"), u32(3), u64(0), u64(1), str("general.architecture"), u32(8), str("llama"), padding]);
}
const body = fakeModel();
const sha256 = createHash("sha256").update(body).digest("hex");
const CUT = 600_000;

before(async () => {
  // The first answer stops after CUT bytes until the test has seen the
  // progress bar, then the connection drops; the next one must resume.
  files = createServer((req, res) => {
    ranges.push(req.headers.range ?? null);
    const start = req.headers.range ? Number(/bytes=(\d+)-/.exec(req.headers.range)[1]) : 0;
    const headers = { "Content-Length": body.length - start, "Connection": "close" };
    if (start > 0) headers["Content-Range"] = `bytes ${start}-${body.length - 1}/${body.length}`;
    res.writeHead(start > 0 ? 206 : 200, headers);
    if (ranges.length === 1) {
      res.write(body.subarray(0, CUT));
      void released.then(() => res.destroy());
      return;
    }
    res.end(body.subarray(start));
  });
  await new Promise((r) => files.listen(0, "127.0.0.1", r));
  server = await startServer(null);
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.on("pageerror", (e) => console.error("page error:", e));
});

after(async () => {
  release?.();
  await browser?.close();
  server?.stop();
  files?.close();
});

test("the first start offers a local model, a cloud API or manual, and manual ends it", async () => {
  await page.goto(server.url);
  const panel = page.getByTestId("first-start");
  await panel.getByRole("heading", { name: "How should Maskflow reach an AI?" }).waitFor();
  await panel.getByRole("button", { name: "Set up a cloud API" }).waitFor();
  await shot(page, "60-first-start.png");
  await panel.getByRole("button", { name: "Paste prompts myself" }).click();
  await panel.waitFor({ state: "detached" });
  await page.reload();
  await page.getByRole("heading", { name: "New workflow" }).waitFor();
  assert.equal(await page.getByTestId("first-start").count(), 0);
});

test("Settings downloads a model with a progress bar, resumes a dropped connection and removes it", async () => {
  await page.getByRole("link", { name: "Settings" }).click();
  const card = page.getByTestId("models-card");
  await card.getByText("No model yet.").waitFor();
  assert.ok((await card.getByTestId("catalog-model").count()) >= 5);
  const { port } = files.address();
  await card.getByTestId("model-url").fill(`http://127.0.0.1:${port}/tiny.gguf`);
  await card.getByTestId("model-sha").fill("not-a-sha");
  await card.getByText("A SHA-256 is 64 hexadecimal digits.").waitFor();
  await card.getByTestId("model-sha").fill(sha256.toUpperCase());
  await card.getByTestId("model-name").fill("tiny");
  await card.getByRole("button", { name: "Download", exact: true }).last().click();

  // Mid-way: the bar shows the bytes so far. Progress is reported every
  // 256 KiB (or half a second), so where the report before the stall lands
  // depends on how the bytes were read: anything from 1% to the cut's 28%.
  const download = card.getByTestId("model-download");
  await download.getByText(/of 2\.0 MB \(([1-9]|1\d|2[0-8])%\)/).waitFor();
  await shot(page, "61-model-downloading.png");
  release();

  const installed = card.getByTestId("installed-model");
  await installed.getByText("tiny").waitFor();
  await installed.getByText(`SHA-256 ${sha256}`).waitFor();
  assert.deepEqual(ranges, [null, `bytes=${CUT}-`]);
  assert.ok(existsSync(join(server.home, "models", "tiny.gguf")));
  await shot(page, "62-model-installed.png");

  // Storage counts it.
  await page.getByTestId("storage-settings").locator('tr[data-kind="models"]').waitFor();

  await installed.getByRole("button", { name: "Remove" }).click();
  await card.getByText("No model yet.").waitFor();
  assert.equal(existsSync(join(server.home, "models", "tiny.gguf")), false);
});
