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
import * as driver from "../lib/desktop-driver.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "../..");
const ARTIFACTS = join(HERE, "artifacts");
const APP =
  process.env.MASKFLOW_DESKTOP_BIN ||
  join(process.env.CARGO_TARGET_DIR || join(ROOT, "target"), "debug", "maskflow-desktop");
const TITLE = "Flow: review waits for your decision";

mkdirSync(ARTIFACTS, { recursive: true });

let bus;
let monitor;
let monitorLog = "";
/** The window (tests/lib/desktop-driver.mjs); a stand-in until it is up, for waiting on the bus. */
let d = { log: "" };
const until = (what, check) => driver.until(d, what, check, 150);
const js = (body, ...args) => driver.js(d, body, ...args);

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
  d = await driver.startDesktop({
    app: APP,
    env: { MASKFLOW_HOME: home, DBUS_SESSION_BUS_ADDRESS: address, NO_AT_BRIDGE: "1" },
    artifacts: ARTIFACTS,
  });
});

after(async () => {
  await driver.stopDesktop(d);
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
  await driver.screenshot(d, "06-desktop-waiting-badge.png");
});
