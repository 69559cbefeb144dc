// Shared by the browser suites: starts `maskflow serve --replay` on a free
// port over a fresh data folder, and Debian's Chromium through playwright-core.
import { spawn } from "node:child_process";
import { mkdtempSync, mkdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

export const HERE = dirname(fileURLToPath(import.meta.url));
export const ROOT = resolve(HERE, "../..");
export const FIXTURES = join(HERE, "fixtures");
export const ARTIFACTS = join(HERE, "artifacts");
mkdirSync(ARTIFACTS, { recursive: true });

/** The `maskflow` binary: MASKFLOW_BIN, else the debug build. */
export function maskflowBin() {
  if (process.env.MASKFLOW_BIN) return process.env.MASKFLOW_BIN;
  const target = process.env.CARGO_TARGET_DIR || join(ROOT, "target");
  return join(target, "debug", "maskflow");
}

/** Starts the server (no replay file: the manual back end); resolves with its URL (the token in its
 * fragment, `/#token=…`; append `#/route` to open a screen), the token, and a stop function.
 * `home` reuses a data folder (a restart), else a fresh one is made. */
export function startServer(replayFile, extraArgs = [], home = mkdtempSync(join(tmpdir(), "maskflow-e2e-"))) {
  const token = "e2e-token-" + Math.random().toString(36).slice(2, 12);
  const child = spawn(
    maskflowBin(),
    ["serve", "--port", "0", "--token", token, ...(replayFile ? ["--replay", replayFile] : []), ...extraArgs],
    { env: { ...process.env, MASKFLOW_HOME: home }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let log = "";
  child.stderr.on("data", (d) => (log += d));
  return new Promise((resolvePromise, reject) => {
    let out = "";
    child.on("error", reject);
    child.on("exit", (code) => reject(new Error(`maskflow serve exited (${code}): ${log}`)));
    child.stdout.on("data", (d) => {
      out += d;
      const line = out.split("\n").find((l) => l.startsWith("http://"));
      if (line) {
        resolvePromise({
          url: line.trim(),
          origin: new URL(line.trim()).origin,
          token,
          home,
          stop: () => child.kill("SIGINT"),
          // The process dying (kill -9): nothing is flushed or released.
          kill: () => child.kill("SIGKILL"),
          exited: () => new Promise((done) => (child.exitCode !== null ? done() : child.once("exit", done))),
          log: () => log,
        });
      }
    });
  });
}

/** Debian's Chromium, headless, offline; `extraArgs` are more command-line switches. */
export function launchBrowser(extraArgs = []) {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--no-first-run",
      ...extraArgs,
    ],
  });
}

/** Drops files on an element the way a user's drag and drop does (a real DOM drop event). */
export async function dropFiles(page, selector, names) {
  const files = names.map((n) => ({
    name: n,
    data: readFileSync(join(FIXTURES, n)).toString("base64"),
  }));
  const transfer = await page.evaluateHandle((files) => {
    const dt = new DataTransfer();
    for (const f of files) {
      const bytes = Uint8Array.from(atob(f.data), (c) => c.charCodeAt(0));
      dt.items.add(new File([bytes], f.name, { type: f.name.endsWith(".csv") ? "text/csv" : "" }));
    }
    return dt;
  }, files);
  await page.dispatchEvent(selector, "dragover", { dataTransfer: transfer });
  await page.dispatchEvent(selector, "drop", { dataTransfer: transfer });
}

/** Clicks a download link as a user does and returns the saved file's bytes. */
export async function downloadBytes(page, link) {
  const [download] = await Promise.all([page.waitForEvent("download"), link.click()]);
  const failure = await download.failure();
  if (failure) throw new Error(`the download of ${download.suggestedFilename()} failed: ${failure}`);
  return readFileSync(await download.path());
}

export function shot(page, name) {
  return page.screenshot({ path: join(ARTIFACTS, name), fullPage: false });
}
