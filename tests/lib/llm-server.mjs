// A recording OpenAI-compatible chat server on loopback (issue 12): the
// end-to-end suites configure it the way a user does (Settings, or
// PUT /api/settings) instead of a replay file. Replies are scripted by the
// role a request comes from (recognised by its prompt, as the Rust tests'
// wiremock does) and by turn; every request body is recorded so a test can
// check it against the raw values of the files it used.
import { readFileSync } from "node:fs";
import { createServer } from "node:http";

/**
 * Starts the server. `replies` maps a role to its replies in order (the last
 * repeats): `validator`, `clarifier`, `builder` (objects, sent as JSON text)
 * and `agent` (flow agents; a `break` question gets `{"answer":"yes"}`).
 * Resolves with `{ baseUrl, requests, close }`.
 */
export function startLlmServer(replies) {
  const requests = [];
  const turns = {};
  const roleOf = (body) => {
    const text = JSON.stringify(body.messages ?? []);
    if (text.includes("needs_clarification")) return "clarifier";
    if (text.includes("feasible")) return "validator";
    if (body.response_format || text.includes("RUNNER") || text.includes("script")) return "builder";
    return "agent";
  };
  const replyFor = (body) => {
    const role = roleOf(body);
    // The break question asks for {"answer": …}; read the messages' own text
    // (their JSON form escapes the quotes).
    const said = (body.messages ?? []).map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content))).join("\n");
    if (role === "agent" && said.includes('"answer"')) return '{"answer":"yes"}';
    const list = replies[role] ?? ["OK."];
    const n = turns[role] ?? 0;
    turns[role] = n + 1;
    const r = list[Math.min(n, list.length - 1)];
    return typeof r === "string" ? r : JSON.stringify(r);
  };
  const server = createServer((req, res) => {
    let raw = "";
    req.on("data", (d) => (raw += d));
    req.on("end", () => {
      if (req.method === "GET" && req.url.endsWith("/models")) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ object: "list", data: [{ id: "e2e-model", object: "model" }] }));
        return;
      }
      if (req.method !== "POST" || !req.url.endsWith("/chat/completions")) {
        res.writeHead(404).end();
        return;
      }
      let body;
      try {
        body = JSON.parse(raw);
      } catch {
        res.writeHead(400).end("not JSON");
        return;
      }
      requests.push({ raw, body, role: roleOf(body) });
      const text = replyFor(body);
      if (body.stream) {
        res.writeHead(200, { "content-type": "text/event-stream" });
        for (let i = 0; i < text.length; i += 40) {
          const delta = { choices: [{ index: 0, delta: { content: text.slice(i, i + 40) }, finish_reason: null }] };
          res.write(`data: ${JSON.stringify(delta)}\n\n`);
        }
        const end = { choices: [{ index: 0, delta: {}, finish_reason: "stop" }], usage: { prompt_tokens: 40, completion_tokens: 9 } };
        res.end(`data: ${JSON.stringify(end)}\n\ndata: [DONE]\n\n`);
      } else {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
            usage: { prompt_tokens: 40, completion_tokens: 9 },
          }),
        );
      }
    });
  });
  return new Promise((resolve, reject) => {
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      resolve({ baseUrl: `http://127.0.0.1:${port}/v1`, requests, close: () => server.close() });
    });
  });
}

/** Every cell of the CSV files (not their headers): the raw values that must not leave. */
export function rawValuesOf(paths) {
  const values = new Set();
  for (const p of paths) {
    const lines = readFileSync(p, "utf8").split(/\r?\n/).filter((l) => l.trim() !== "");
    for (const line of lines.slice(1)) {
      for (const cell of line.match(/("([^"]|"")*"|[^,]*)(,|$)/g) ?? []) {
        const v = cell.replace(/,$/, "").replace(/^"|"$/g, "").trim();
        if (v.length >= 4) values.add(v);
      }
    }
  }
  return [...values];
}

/** The raw values found in the recorded requests (none, in a passing test). */
export function leaks(requests, raws) {
  const found = [];
  for (const r of requests) {
    const text = r.raw.toLowerCase();
    for (const v of raws) if (text.includes(v.toLowerCase())) found.push(`${v} in a ${r.role} request`);
  }
  return found;
}
