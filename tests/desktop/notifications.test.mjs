// Issue 30, point 3, in the real desktop window under Xvfb: a flow run
// reaches a gate, the sidebar's badge counts it, and the window sends an OS
// notification through Tauri's notification plugin. Seen twice: the
// plugin's IPC call leaving the page (its `notify` command), and the
// notification reaching the session bus — the app runs on a private D-Bus
// session whose `org.freedesktop.Notifications.Notify` calls `dbus-monitor`
// records, which is what a desktop's notification server would receive.
// Needs the app built with embedded assets (see desktop.test.mjs).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "../..");
const ARTIFACTS = join(HERE, "artifacts");
const PORT = Number(process.env.TAURI_DRIVER_PORT || 4444);
const DRIVER = `http://127.0.0.1:${PORT}`;
const APP =
  process.env.MASKFLOW_DESKTOP_BIN ||
  join(process.env.CARGO_TARGET_DIR || join(ROOT, "target"), "debug", "maskflow-desktop");
const TITLE = "Flow: review waits for your decision";

mkdirSync(ARTIFACTS, { recursive: true });

let bus;
let monitor;
let monitorLog = "";
let driver;
let driverLog = "";
let session;

async function wd(method, path, body) {
  const r = await fetch(DRIVER + path, {
    method,
    headers: { "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(json)}`);
  return json.value;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it returns a truthy value (bounded: 150 tries). */
async function until(what, check) {
  let last;
  for (let i = 0; i < 150; i++) {
    try {
      const v = await check();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    await sleep(200);
  }
  throw new Error(`gave up waiting for ${what}: ${last ?? ""}\n${driverLog.slice(-2000)}`);
}

/** Runs `body` (an async function body over `args`) in the window. */
async function js(body, ...args) {
  const script = `const done = arguments[arguments.length - 1];
    (async (...args) => { ${body} })(...Array.from(arguments).slice(0, -1))
      .then((v) => done({ ok: v }), (e) => done({ err: String(e && (e.message || JSON.stringify(e))) }));`;
  const r = await wd("POST", `/session/${session}/execute/async`, { script, args });
  if (r.err) throw new Error(r.err);
  return r.ok;
}

/** A private session bus; resolves with its address. */
function startBus() {
  // Its stderr (an fd-limit warning, service activations) is noise here.
  bus = spawn("dbus-daemon", ["--session", "--nofork", "--print-address=1"], { stdio: ["ignore", "pipe", "ignore"] });
  return new Promise((done, fail) => {
    let out = "";
    bus.on("error", fail);
    bus.stdout.on("data", (d) => {
      out += d;
      if (out.includes("\n")) done(out.trim());
    });
  });
}

before(async () => {
  assert.ok(existsSync(APP), `build the desktop app first: ${APP} is missing`);
  const home = mkdtempSync(join(tmpdir(), "maskflow-desktop-notify-"));
  mkdirSync(join(home, "flows"));
  writeFileSync(
    join(home, "flows/review.json"),
    JSON.stringify({ steps: [{ type: "gate", id: "g", label: "Review", prompt: "Ship it?", options: [{ label: "Ship" }, { label: "Hold", next: null }] }] }),
  );
  const address = await startBus();
  monitor = spawn("dbus-monitor", ["--address", address, "type='method_call',interface='org.freedesktop.Notifications',member='Notify'"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  monitor.stdout.on("data", (d) => (monitorLog += d));
  // The monitor is listening once it has said so (it prints its own NameAcquired signal).
  await until("dbus-monitor", () => monitorLog.length > 0);
  driver = spawn("xvfb-run", ["-a", "-s", "-screen 0 1280x800x24", "tauri-driver", "--port", String(PORT)], {
    env: { ...process.env, MASKFLOW_HOME: home, DBUS_SESSION_BUS_ADDRESS: address, NO_AT_BRIDGE: "1" },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  driver.stdout.on("data", (d) => (driverLog += d));
  driver.stderr.on("data", (d) => (driverLog += d));
  await until("tauri-driver", async () => (await fetch(DRIVER + "/status")).ok);
  const created = await wd("POST", "/session", {
    capabilities: { alwaysMatch: { browserName: "wry", "tauri:options": { application: APP } } },
  });
  session = created.sessionId;
});

after(async () => {
  if (session) await wd("DELETE", `/session/${session}`).catch(() => {});
  if (driver) {
    try {
      process.kill(-driver.pid, "SIGTERM");
    } catch {
      /* already gone */
    }
  }
  monitor?.kill();
  bus?.kill();
});

test("a flow run at its gate is counted on the badge and notified through the OS", async () => {
  await until("the sidebar", () => js("return !!document.querySelector('nav[aria-label=Main]');"));
  // The plugin's IPC leaves the page through `fetch` to the ipc: scheme (else
  // wry's postMessage); record its notify calls.
  await js(`
    window.__notify = [];
    const original = window.fetch;
    window.fetch = function (input, init) {
      const url = decodeURIComponent(String(input && input.url ? input.url : input));
      if (url.includes("plugin:notification|notify")) window.__notify.push(String(init && init.body));
      return original.apply(this, arguments);
    };
    // Where the ipc: scheme fails, Tauri falls back to wry's postMessage.
    if (window.ipc && typeof window.ipc.postMessage === "function") {
      const post = window.ipc.postMessage.bind(window.ipc);
      try {
        window.ipc.postMessage = (data) => {
          if (String(data).includes("plugin:notification|notify")) window.__notify.push(String(data));
          return post(data);
        };
      } catch {
        /* read-only here: the fetch path is the one in use */
      }
    }
  `);
  const started = await js("return await window.__TAURI_INTERNALS__.invoke('flows_run', { name: 'review', request: {} });");
  assert.match(started.conversationId, /^flow_/);

  await until("the badge", () => js("return document.querySelector('[data-testid=waiting-count]')?.textContent === '1';"));
  const sent = await until("the plugin's notify call", async () => {
    const calls = await js("return window.__notify;");
    return calls.find((c) => c.includes(TITLE));
  });
  assert.match(sent, /Open it to answer the gate\./);
  await until("the Notify call on the session bus", () => monitorLog.includes(`string "${TITLE}"`));
  assert.match(monitorLog, /string "Open it to answer the gate\."/);
  const png = await wd("GET", `/session/${session}/screenshot`);
  writeFileSync(join(ARTIFACTS, "06-desktop-waiting-badge.png"), Buffer.from(png, "base64"));
});
