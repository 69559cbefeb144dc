// The Agents page (issue 18, point 12) in Chromium against `maskflow serve`:
// an agent is created with a back end and model picked from the configured
// ones (after a refused name is shown under its field), edited, refused
// deletion while a flow uses it, then deleted after confirmation; a flow
// file whose name the loader refuses is listed disabled with its reason,
// and so is an agent file's. Screenshots go to tests/e2e/artifacts/agents-*.png.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { after, before, test } from "node:test";
import { join } from "node:path";
import { launchBrowser, shot, startServer } from "./harness.mjs";

let server;
let browser;
let page;

/** A flow whose one step asks `agent`. */
const flowUsing = (agent) =>
  JSON.stringify({
    description: "Reviews with an agent",
    steps: [{ type: "llm", agentType: agent, identifier: "main", messages: [{ role: "user", content: ["Review this."] }] }],
  });

before(async () => {
  server = await startServer();
  const token = server.token;
  // Two local back ends of one kind, so the model list has a choice.
  const settings = {
    providers: [
      { id: "manual", kind: "manual" },
      { id: "local", kind: "ollama", base_url: "http://127.0.0.1:9", model: "llama3" },
      { id: "small", kind: "ollama", base_url: "http://127.0.0.1:9", model: "qwen2.5" },
    ],
    roles: { validator: "manual", clarifier: "manual", builder: "manual" },
  };
  const r = await fetch(`${server.origin}/api/settings`, {
    method: "PUT",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(settings),
  });
  assert.equal(r.status, 200, await r.text());
  mkdirSync(join(server.home, "flows"), { recursive: true });
  writeFileSync(join(server.home, "flows", "my flow.json"), flowUsing("reviewer"));
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  page = await context.newPage();
  page.setDefaultTimeout(15000);
  page.on("pageerror", (e) => console.error("page error:", e));
});

after(async () => {
  await browser?.close();
  server?.stop();
});

const agentFile = (name) => join(server.home, "agents", `${name}.json`);
const item = (name) => page.locator(`[data-testid="agent-${name}"]`);
const openAgents = async () => {
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Agents", exact: true }).click();
  await page.getByRole("heading", { name: "Agents", level: 1 }).waitFor();
};

test("an agent is created with a back end and model from the configured ones; a bad name is shown under its field", async () => {
  await page.goto(server.url);
  await openAgents();
  await page.getByText("No agents yet.").waitFor();
  await page.getByRole("button", { name: "New agent" }).click();
  const form = page.locator('[data-testid="agent-form-new"]');
  await form.locator('input[name="name"]').fill("code reviewer");
  await form.getByRole("button", { name: "Create agent" }).click();
  const nameProblem = form.locator('[data-testid="agent-form-new-name"]');
  await nameProblem.waitFor();
  assert.match(await nameProblem.innerText(), /"code reviewer" may only use letters, digits, - and _/);
  assert.equal(await form.locator('input[name="name"]').getAttribute("aria-invalid"), "true");
  await shot(page, "agents-01-problem-inline.png");
  assert.equal(existsSync(join(server.home, "agents")), false, "nothing was written");

  await form.locator('input[name="name"]').fill("reviewer");
  const providers = await form.locator('select[name="provider"] option').allInnerTexts();
  assert.deepEqual(providers, ["The flow agents' default (Settings)", "manual (Manual (copy & paste))", "local (Ollama · llama3)", "small (Ollama · qwen2.5)"]);
  await form.locator('select[name="provider"]').selectOption("local");
  const models = await form.locator('select[name="model"] option').allInnerTexts();
  assert.deepEqual(models, ["The back end's own (llama3)", "qwen2.5"]);
  await form.locator('select[name="model"]').selectOption("qwen2.5");
  await form.locator('textarea[name="prompt"]').fill("You are an expert code reviewer.\nYou point at the line.");
  await shot(page, "agents-02-form.png");
  await form.getByRole("button", { name: "Create agent" }).click();
  await item("reviewer").waitFor();
  const shown = await item("reviewer").innerText();
  assert.match(shown, /local · qwen2\.5/);
  assert.match(shown, /You are an expert code reviewer\./);
  assert.deepEqual(JSON.parse(readFileSync(agentFile("reviewer"), "utf8")), {
    provider: "local",
    model: "qwen2.5",
    prompt: "You are an expert code reviewer.\nYou point at the line.",
  });
  await shot(page, "agents-03-created.png");
});

test("an agent is edited: a new back end resets a model it does not have", async () => {
  await item("reviewer").getByRole("button", { name: "Edit reviewer" }).click();
  const form = page.locator('[data-testid="agent-form-reviewer"]');
  assert.equal(await form.locator('input[name="name"]').isDisabled(), true, "agents are not renamed");
  assert.equal(await form.locator('select[name="model"]').inputValue(), "qwen2.5");
  await form.locator('select[name="provider"]').selectOption("manual");
  assert.equal(await form.locator('select[name="model"]').inputValue(), "");
  assert.deepEqual(await form.locator('select[name="model"] option').allInnerTexts(), ["None (you paste the answers)"]);
  await form.locator('textarea[name="prompt"]').fill("You review tests.");
  await form.getByRole("button", { name: "Save agent" }).click();
  await page.getByText("Agent saved").waitFor();
  const shown = await item("reviewer").innerText();
  assert.match(shown, /manual/);
  assert.match(shown, /You review tests\./);
  assert.deepEqual(JSON.parse(readFileSync(agentFile("reviewer"), "utf8")), { provider: "manual", prompt: "You review tests." });
  await shot(page, "agents-04-edited.png");
});

test("an agent a flow uses cannot be deleted; an unused one is, after confirmation", async () => {
  writeFileSync(join(server.home, "flows", "review.json"), flowUsing("reviewer"));
  await page.reload();
  await item("reviewer").getByText("Used by flow review").waitFor();
  await item("reviewer").getByRole("button", { name: "Delete reviewer" }).click();
  const dialog = page.locator('[data-testid="agent-delete-dialog"]');
  await dialog.waitFor();
  assert.match(await dialog.innerText(), /Used by flow review\. Change that flow to another agent first\./);
  assert.equal(await dialog.getByRole("button", { name: "Delete" }).isDisabled(), true);
  await shot(page, "agents-05-delete-refused.png");
  await dialog.getByRole("button", { name: "Cancel" }).click();
  assert.ok(existsSync(agentFile("reviewer")));

  rmSync(join(server.home, "flows", "review.json"));
  await page.reload();
  await item("reviewer").getByText("Not used by any flow").waitFor();
  await item("reviewer").getByRole("button", { name: "Delete reviewer" }).click();
  assert.match(await dialog.innerText(), /This deletes agents\/reviewer\.json/);
  await shot(page, "agents-06-delete-confirm.png");
  await dialog.getByRole("button", { name: "Delete" }).click();
  await page.getByText("Agent deleted").waitFor();
  await item("reviewer").waitFor({ state: "detached" });
  assert.equal(existsSync(agentFile("reviewer")), false);
});

test("a flow file whose name the loader refuses is listed disabled with its reason", async () => {
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Flows", exact: true }).click();
  const refused = page.locator('[data-testid="flow-my flow"]');
  await refused.waitFor();
  const text = await refused.innerText();
  assert.match(text, /my flow/);
  assert.match(text, /flows\/my flow\.json: the file is not used: a flow name may only use letters, digits, - and _/);
  assert.match(text, /rename it, e\.g\. to my_flow\.json/);
  assert.equal(await refused.locator("a").count(), 0, "it cannot be opened");
  await shot(page, "agents-07-refused-flow.png");

  // The same for an agent file: listed disabled, with no edit or delete.
  mkdirSync(join(server.home, "agents"), { recursive: true });
  writeFileSync(join(server.home, "agents", "bad one.json"), "{}");
  await openAgents();
  const agent = item("bad one");
  await agent.waitFor();
  assert.match(await agent.innerText(), /disabled[\s\S]*agents\/bad one\.json: the file is not used[\s\S]*bad_one\.json/);
  assert.equal(await agent.getByRole("button").count(), 0);
  await shot(page, "agents-08-refused-agent.png");
});
