// Desktop start (issue 29 point 7): the time from asking for the app to be
// launched to its first screen being interactive, under Xvfb.
//   node bench/desktop/start.mjs BINARY RUNS
// prints each run on stderr and the summary (JSON, milliseconds) on stdout.
// Each run is one WebDriver session: POST /session makes tauri-driver start
// WebKitWebDriver, which launches BINARY and attaches to its webview; the
// clock then runs until the builder's heading (".chat-pane h2", "New
// workflow") is in the DOM with its text, polled every 5 ms. That heading
// is drawn once the UI has mounted and its first IPC answers came back, so
// the figure is an upper bound of the start: it includes WebKitWebDriver's
// own launch and the polling. Run 1 is cold (a fresh data folder to create,
// and whatever of the binary and WebKit is not yet in the page cache); the
// later runs reuse the data folder and the cache: warm.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";

const [APP, RUNS = "6"] = process.argv.slice(2);
const PORT = Number(process.env.TAURI_DRIVER_PORT || 4446);
const DRIVER = `http://127.0.0.1:${PORT}`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

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

/** The heading's text, or null while it is not drawn yet. */
async function heading(session) {
  try {
    const el = await wd("POST", `/session/${session}/element`, { using: "css selector", value: ".chat-pane h2" });
    return await wd("GET", `/session/${session}/element/${Object.values(el)[0]}/text`);
  } catch {
    return null;
  }
}

/** One launch: milliseconds from the session request to the webview being
 * attached (the session answered) and to the first screen. */
async function launch() {
  const t0 = performance.now();
  const created = await wd("POST", "/session", {
    capabilities: { alwaysMatch: { browserName: "wry", "tauri:options": { application: APP } } },
  });
  const attached = performance.now() - t0;
  const session = created.sessionId;
  try {
    for (;;) {
      if ((await heading(session)) === "New workflow") {
        const screen = performance.now() - t0;
        // Where the page's own share goes (its clock starts at its navigation):
        // the UI's script has run by DOMContentLoaded, the app's first render
        // is the first paint (the body is empty before it).
        const page = await wd("POST", `/session/${session}/execute/sync`, {
          script: `const n = performance.getEntriesByType("navigation")[0];
            const fcp = performance.getEntriesByName("first-contentful-paint")[0];
            return { dom: n.domContentLoadedEventEnd, paint: fcp ? fcp.startTime : NaN, now: performance.now() };`,
          args: [],
        }).catch(() => null);
        return { attached, screen, page };
      }
      if (performance.now() - t0 > 60_000) throw new Error("no first screen within 60 s");
      await sleep(5);
    }
  } finally {
    await wd("DELETE", `/session/${session}`).catch(() => {});
    // Lets the app exit and release its data folder before the next launch.
    await sleep(500);
  }
}

const home = mkdtempSync(join(tmpdir(), "maskflow-desktop-start-"));
const driver = spawn("xvfb-run", ["-a", "-s", "-screen 0 1280x800x24", "tauri-driver", "--port", String(PORT)], {
  env: { ...process.env, MASKFLOW_HOME: home },
  stdio: ["ignore", "ignore", "inherit"],
  detached: true,
});
try {
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(DRIVER + "/status")).ok) break;
    } catch {
      /* not listening yet */
    }
    if (i > 300) throw new Error("tauri-driver did not start");
    await sleep(100);
  }
  const times = [];
  for (let i = 0; i < Number(RUNS); i++) {
    const { attached, screen, page } = await launch();
    times.push(screen);
    const inPage = page ? `; in the page's clock: DOMContentLoaded ${page.dom.toFixed(0)} ms, first paint ${page.paint.toFixed(0)} ms, heading seen by ${page.now.toFixed(0)} ms` : "";
    console.error(
      `run ${i + 1} (${i === 0 ? "cold" : "warm"}): first screen ${screen.toFixed(0)} ms (webview attached at ${attached.toFixed(0)} ms${inPage})`,
    );
  }
  const warm = times.slice(1).sort((a, b) => a - b);
  console.log(JSON.stringify({ cold: times[0], warm_best: warm[0], warm_median: warm[Math.floor(warm.length / 2)] }));
} finally {
  try {
    process.kill(-driver.pid, "SIGTERM");
  } catch {
    /* already gone */
  }
  rmSync(home, { recursive: true, force: true });
}
