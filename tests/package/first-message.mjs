// The installed server's front door (issue 44), run by tests/package/run.sh:
// `maskflow serve` on a fresh data folder, with no uv on PATH, finds the
// uv the package ships, and seed 000's first message call (`POST
// …/messages {content}`, the manual back end of a fresh data folder) gets
// the validator's prompt instead of a refusal.
//   node tests/package/first-message.mjs /usr/bin/maskflow [/usr/lib/maskflow/uv]
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { createInterface } from "node:readline";

const bin = process.argv[2] ?? "/usr/bin/maskflow";
const shippedUv = process.argv[3] ?? "/usr/lib/maskflow/uv";
const token = "package-test-token-0123456789";
const home = mkdtempSync(join(tmpdir(), "maskflow-first-message-"));
const path = (process.env.PATH ?? "")
  .split(delimiter)
  .filter((d) => d && !existsSync(join(d, "uv")))
  .join(delimiter);
const env = { ...process.env, MASKFLOW_HOME: home, PATH: path, PYTHONNOUSERSITE: "1" };
delete env.MASKFLOW_UV;
const server = spawn(bin, ["serve", "--port", "0", "--token", token], { env, stdio: ["ignore", "pipe", "inherit"] });
try {
  const url = await new Promise((resolve, reject) => {
    createInterface({ input: server.stdout }).once("line", resolve);
    server.once("exit", (code) => reject(new Error(`serve exited with ${code}`)));
  });
  const origin = new URL(url).origin;
  const api = async (method, route, body) => {
    const r = await fetch(origin + route, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    return { status: r.status, body: text ? JSON.parse(text) : null };
  };
  const preflight = await api("GET", "/api/preflight");
  const uv = preflight.body.items.find((i) => i.check === "uv");
  assert.ok(uv.ok && uv.detail.includes(shippedUv), JSON.stringify(uv));

  const extract = { filename: "sales.csv", columns: ["date", "amount"], sample_rows: [["####-##-##", "##.##"]], row_count: 3 };
  const created = await api("POST", "/api/workflows", { file_extracts: [extract] });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const wf = created.body.workflow_id;
  // The message waits for its pasted answer: not awaited.
  const message = api("POST", `/api/workflows/${wf}/messages`, { content: "sum the amount per day" });
  let prompt;
  for (let i = 0; i < 600 && !prompt; i++) {
    const list = await api("GET", "/api/manual");
    assert.equal(list.status, 200, JSON.stringify(list.body));
    prompt = list.body.find((p) => p.role === "validator");
    if (!prompt) await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok(prompt, "the validator's prompt is listed");
  assert.ok(JSON.stringify(prompt.messages).includes("sum the amount per day"));
  await api("DELETE", `/api/manual/${prompt.id}`);
  const answered = await message;
  assert.equal(answered.body?.code, "cancelled", JSON.stringify(answered.body));
  console.log("package test: the installed server's first message got the validator's prompt");
} finally {
  server.kill();
  rmSync(home, { recursive: true, force: true });
}
