// The real desktop window under Xvfb through tauri-driver, on ports of its
// own (free ones, unless TAURI_DRIVER_PORT names the driver's): start, drive
// (run script in the window, fill, click, navigate as the app's router
// does), take screenshots, stop. Every desktop suite uses it.
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A TCP port that was free a moment ago on loopback (the kernel's pick). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Starts tauri-driver (and through it WebKitWebDriver) under Xvfb with
 * `env`, opens a session on `app`, and returns the handle the helpers take.
 * `port` (else `TAURI_DRIVER_PORT`, else a free one) and the native port
 * (always a free one) are this suite's own.
 */
export async function startDesktop({ app, env, artifacts, port }) {
  const driverPort = port || Number(process.env.TAURI_DRIVER_PORT || 0) || (await freePort());
  const nativePort = await freePort();
  const d = { base: `http://127.0.0.1:${driverPort}`, artifacts, log: "", session: null, process: null };
  d.process = spawn(
    "xvfb-run",
    ["-a", "-s", "-screen 0 1280x800x24", "tauri-driver", "--port", String(driverPort), "--native-port", String(nativePort)],
    { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"], detached: true },
  );
  d.process.stdout.on("data", (b) => (d.log += b));
  d.process.stderr.on("data", (b) => (d.log += b));
  await until(d, "tauri-driver", async () => (await fetch(d.base + "/status")).ok);
  const created = await wd(d, "POST", "/session", {
    capabilities: { alwaysMatch: { browserName: "wry", "tauri:options": { application: app } } },
  });
  d.session = created.sessionId;
  return d;
}

/** Ends the session and the driver's process group (Xvfb, the drivers, the app). */
export async function stopDesktop(d) {
  if (!d) return;
  if (d.session) await wd(d, "DELETE", `/session/${d.session}`).catch(() => {});
  try {
    process.kill(-d.process.pid, "SIGTERM");
  } catch {
    /* already gone */
  }
}

/** One WebDriver call. */
export async function wd(d, method, path, body) {
  const r = await fetch(d.base + path, {
    method,
    headers: { "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(json)}`);
  return json.value;
}

/** Polls `check` until it returns a truthy value: `tries` times, 200 ms apart (a bound, not a timing). */
export async function until(d, what, check, tries = Number(process.env.MASKFLOW_WAIT_TRIES || 300)) {
  let last;
  for (let i = 0; i < tries; i++) {
    try {
      const v = await check();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    await sleep(200);
  }
  if (d.session) await screenshot(d, `failed-${what.replace(/[^a-z0-9]+/gi, "-").slice(0, 60)}.png`).catch(() => {});
  throw new Error(`gave up waiting for ${what}: ${last ?? ""}\n${d.log.slice(-2000)}`);
}

/** Runs `body` (an async function body over `args`) in the window. */
export async function js(d, body, ...args) {
  const script = `const done = arguments[arguments.length - 1];
    (async (...args) => { ${body} })(...Array.from(arguments).slice(0, -1))
      .then((v) => done({ ok: v }), (e) => done({ err: e && (e.message || (typeof e === "string" ? e : JSON.stringify(e))) }));`;
  const r = await wd(d, "POST", `/session/${d.session}/execute/async`, { script, args });
  if (r.err) throw new Error(r.err);
  return r.ok;
}

/** An IPC call as the UI's transport makes it; throws with the core's error. */
export const invoke = (d, command, args) =>
  js(d, "return await window.__TAURI_INTERNALS__.invoke(args[0], args[1]);", command, args ?? {});

/** Waits until an element matches the selector (and its text contains `text`, when given). */
export const waitFor = (d, sel, text = "", tries) =>
  until(
    d,
    `${sel} ${text}`,
    () => js(d, "return [...document.querySelectorAll(args[0])].some((el) => el.textContent.includes(args[1]));", sel, text),
    tries,
  );

/** Types into an input, textarea or select the way the browser reports typing. */
export const fill = (d, sel, value) =>
  js(
    d,
    `const el = document.querySelector(args[0]);
     if (!el) throw new Error("no " + args[0]);
     Object.getOwnPropertyDescriptor(Object.getPrototypeOf(el), "value").set.call(el, args[1]);
     el.dispatchEvent(new Event("input", { bubbles: true }));
     el.dispatchEvent(new Event("change", { bubbles: true }));`,
    sel,
    value,
  );

/** Clicks the enabled button whose text is `text` (inside `within`; the last such one when `last`). */
export const click = (d, text, within = "body", last = false) =>
  until(d, `the button ${text}`, () =>
    js(
      d,
      `const all = [...document.querySelectorAll(args[0] + " button")].filter((b) => b.textContent.trim() === args[1] && !b.disabled);
       const b = args[2] ? all[all.length - 1] : all[0];
       if (b) b.click();
       return !!b;`,
      within,
      text,
      last,
    ),
  );

/** Navigates as the app's own router does (ui/src/lib/router.ts `go`):
 * WebKitGTK under tauri:// does not report hash changes reliably. */
export const go = (d, hash) =>
  until(d, `the route ${hash}`, () =>
    js(
      d,
      `if (location.hash !== args[0]) history.pushState(null, "", args[0]);
       window.dispatchEvent(new Event("maskflow:route"));
       const active = document.querySelector("nav a.active");
       return !!active && args[0].startsWith(active.getAttribute("href"));`,
      hash,
    ),
  );

/** Saves a screenshot of the window to the suite's artifacts folder. */
export async function screenshot(d, name) {
  const png = await wd(d, "GET", `/session/${d.session}/screenshot`);
  writeFileSync(join(d.artifacts, name), Buffer.from(png, "base64"));
}
