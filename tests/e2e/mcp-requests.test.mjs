// Issue 30, point 1, in the real UI: an AI client connected through
// `maskflow mcp` (spoken to here over stdio, JSON-RPC a line) asks for a
// CSV's masked extract; the user sees the request in Settings → Client
// requests with exactly that masked extract, approves it, and the client's
// next call gets it. Nothing raw reaches the client or the request card.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { after, before, test } from "node:test";
import { launchBrowser, maskflowBin, shot, startServer } from "./harness.mjs";

const PEOPLE = "name,city\nZebulon Quagmire,Ouagadougou\nOttoline Fairweather,Tegucigalpa\n";
const RAW = ["Zebulon", "Quagmire", "Ouagadougou", "Ottoline", "Fairweather", "Tegucigalpa"];

let server;
let browser;
let page;
let mcp;

/** `maskflow mcp` on stdio with a minimal JSON-RPC client over it. */
function startMcp(home, root) {
  const child = spawn(maskflowBin(), ["mcp", "--root", root], {
    env: { ...process.env, MASKFLOW_HOME: home },
    stdio: ["pipe", "pipe", "inherit"],
  });
  const waiting = new Map();
  createInterface({ input: child.stdout }).on("line", (line) => {
    const message = JSON.parse(line);
    waiting.get(message.id)?.(message);
    waiting.delete(message.id);
  });
  let next = 1;
  const request = (method, params) =>
    new Promise((resolve) => {
      const id = next++;
      waiting.set(id, resolve);
      child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
    });
  const notify = (method) => child.stdin.write(JSON.stringify({ jsonrpc: "2.0", method }) + "\n");
  return { child, request, notify };
}

before(async () => {
  server = await startServer(null);
  const root = mkdtempSync(join(tmpdir(), "maskflow-mcp-files-"));
  writeFileSync(join(root, "people.csv"), PEOPLE);
  mcp = startMcp(server.home, root);
  mcp.path = join(root, "people.csv");
  const init = await mcp.request("initialize", {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "e2e-client", version: "1" },
  });
  assert.equal(init.result.serverInfo.name, "maskflow");
  mcp.notify("notifications/initialized");
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.on("pageerror", (e) => console.error("page error:", e));
});

after(async () => {
  mcp?.child.kill();
  await browser?.close();
  server?.stop();
});

async function extract() {
  const reply = await mcp.request("tools/call", { name: "get_masked_extract", arguments: { path: mcp.path } });
  const text = reply.result.content[0].text;
  for (const raw of RAW) assert.ok(!JSON.stringify(reply).includes(raw), `the client received ${raw}`);
  return { isError: reply.result.isError, body: JSON.parse(text) };
}

test("a client's extract request waits in Settings until the user approves it", async () => {
  const first = await extract();
  assert.equal(first.isError, false);
  assert.equal(first.body.status, "approval_required");
  assert.match(first.body.message, /Approve in Maskflow/);

  await page.goto(server.url);
  await page.getByRole("link", { name: "Settings" }).click();
  const card = page.getByTestId("client-requests");
  const request = card.getByTestId("client-request");
  await request.waitFor();
  await request.getByText("e2e-client").waitFor();
  await request.getByText(mcp.path).waitFor();
  // The masked extract the client would get: masked cells, real column names.
  await request.getByRole("cell", { name: "Aaaaaaa Aaaaaaaa", exact: true }).waitFor();
  await request.getByText("city").first().waitFor();
  const shown = await card.innerText();
  for (const raw of RAW) assert.ok(!shown.includes(raw), `the card shows ${raw}`);
  await card.scrollIntoViewIfNeeded();
  await shot(page, "60-client-request.png");

  await request.getByRole("button", { name: "Approve" }).click();
  await card.getByText("No requests are waiting.").waitFor();

  const second = await extract();
  assert.equal(second.isError, false);
  assert.equal(second.body.status, "approved");
  assert.deepEqual(second.body.extract.columns, ["name", "city"]);
  assert.equal(second.body.extract.row_count, 2);
});
