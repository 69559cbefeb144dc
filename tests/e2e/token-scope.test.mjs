// The access token stays with Maskflow's own origin (issue 26, break 8), in
// a real Chromium: `maskflow serve` prints `/#token=…`; the page keeps the
// token in its tab and sends it as a header. A second HTTP server on another
// 127.0.0.1 port records every request it gets; after using the app, the
// same browser tab goes there and calls it, as any local page the user
// visits would. The recorder must never see the token (no Cookie, no
// Authorization, not in a URL), and the app must have worked. Then a name
// that resolves to 127.0.0.1 (DNS rebinding, mapped with Chromium's host
// resolver rules) gets nothing from the server.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { after, before, test } from "node:test";
import { join } from "node:path";
import { HERE, dropFiles, launchBrowser, shot, startServer } from "./harness.mjs";

let server;
let browser;
let context;
let page;
let recorder;
const recorded = [];

/** An HTTP server on a free 127.0.0.1 port that records every request. */
function startRecorder() {
  const http = createServer((req, res) => {
    recorded.push({ method: req.method, url: req.url, headers: { ...req.headers } });
    if (req.url === "/") {
      res.writeHead(200, { "content-type": "text/html" });
      res.end("<!doctype html><title>another local server</title><p>hello</p><img src=/pixel.png>");
    } else {
      res.writeHead(200, { "content-type": "application/json", "access-control-allow-origin": "*" });
      res.end("{}");
    }
  });
  return new Promise((resolve) => http.listen(0, "127.0.0.1", () => resolve(http)));
}

before(async () => {
  recorder = await startRecorder();
  server = await startServer(join(HERE, "replay.json"));
  browser = await launchBrowser(["--host-resolver-rules=MAP rebind.test 127.0.0.1"]);
  context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  page = await context.newPage();
  page.on("pageerror", (e) => console.error("page error:", e));
});

after(async () => {
  await browser?.close();
  server?.stop();
  recorder?.close();
});

test("the printed URL carries the token in its fragment, and the page takes it out of the address bar", async () => {
  assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/#token=e2e-token-/);
  const sockets = [];
  page.on("websocket", (ws) => sockets.push(ws));
  const requests = [];
  page.on("request", (r) => requests.push(r));
  await page.goto(server.url);
  await page.getByRole("heading", { name: "New workflow" }).waitFor();
  assert.ok(!page.url().includes(server.token), `the address bar still shows the token: ${page.url()}`);
  assert.equal(await page.evaluate(() => sessionStorage.getItem("maskflow.token")), server.token);
  // The app works: an upload (a POST from the page, with its Origin) is masked and shown.
  await dropFiles(page, '[data-testid="dropzone"]', ["customers.csv"]);
  await page.locator(".chip-ready").first().waitFor();
  await page.getByLabel("Approval").getByRole("columnheader", { name: "email" }).waitFor();
  // The events socket opened with the token as a subprotocol; nothing put it in a URL.
  assert.ok(sockets.length >= 1, "the event socket opened");
  for (const ws of sockets) assert.ok(!ws.url().includes(server.token), `token in ${ws.url()}`);
  for (const r of requests) assert.ok(!r.url().includes(server.token), `token in ${r.url()}`);
  const api = requests.filter((r) => r.url().includes("/api/"));
  assert.ok(api.length > 0, "the page called the API");
  for (const r of api) {
    const headers = await r.allHeaders();
    assert.equal(headers.cookie, undefined, `a cookie went with ${r.url()}`);
  }
  assert.deepEqual(await context.cookies(), [], "no cookie was ever set");
  await shot(page, "token-scope-1-app.png");
});

test("the workflows list loads over the header, and survives a reload of the tab", async () => {
  await page.goto(server.origin + "/#/workflows");
  await page.getByRole("heading", { name: "Workflows" }).first().waitFor();
  await page.reload();
  await page.getByRole("heading", { name: "Workflows" }).first().waitFor();
  assert.equal(await page.locator(".notice-error").count(), 0);
});

test("another server on 127.0.0.1 that the same tab visits never receives the token", async () => {
  const other = `http://127.0.0.1:${recorder.address().port}`;
  await page.goto(other + "/");
  await page.getByText("hello").waitFor();
  const seen = await page.evaluate(async (app) => {
    await fetch("/probe", { credentials: "include" });
    await fetch("/probe-post", { method: "POST", credentials: "include", body: "x" });
    // Its own scripts cannot read Maskflow's tab storage, and the API refuses it.
    let api;
    try {
      api = (await fetch(app + "/api/workflows", { credentials: "include" })).status;
    } catch {
      api = "blocked";
    }
    return { stored: sessionStorage.getItem("maskflow.token"), cookie: document.cookie, api };
  }, server.origin);
  assert.equal(seen.stored, null);
  assert.equal(seen.cookie, "");
  assert.notEqual(seen.api, 200);
  await page.goto(`http://localhost:${recorder.address().port}/probe-localhost`);
  const paths = recorded.map((r) => r.url);
  for (const p of ["/", "/probe", "/probe-post", "/probe-localhost"]) assert.ok(paths.includes(p), `${p} in ${paths}`);
  for (const r of recorded) {
    assert.equal(r.headers.cookie, undefined, `Cookie sent to ${r.url}: ${r.headers.cookie}`);
    assert.equal(r.headers.authorization, undefined, `Authorization sent to ${r.url}`);
    assert.ok(!JSON.stringify(r).includes(server.token), `the token reached the other server: ${JSON.stringify(r)}`);
  }
});

test("a name rebound to 127.0.0.1 gets nothing from the server (Host check)", async () => {
  const port = new URL(server.origin).port;
  const response = await page.goto(`http://rebind.test:${port}/`);
  assert.equal(response.status(), 421);
  const body = await response.json();
  assert.equal(body.code, "misdirected");
  const api = await page.evaluate(async (token) => {
    const r = await fetch("/api/workflows", { headers: { Authorization: `Bearer ${token}` } });
    return r.status;
  }, server.token);
  assert.equal(api, 421, "not even with the token");
});

test("a new tab without the token is told to open the printed URL, and the printed URL opens it", async () => {
  const fresh = await context.newPage();
  await fresh.goto(server.origin + "/#/workflows");
  await fresh.getByText(/open the URL printed by `maskflow serve`/).first().waitFor();
  await fresh.goto(server.url + "#/workflows");
  await fresh.getByRole("heading", { name: "Workflows" }).first().waitFor();
  assert.equal(new URL(fresh.url()).hash, "#/workflows");
  await fresh.close();
});
