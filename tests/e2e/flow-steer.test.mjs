// Agents that steer (issue 18 point 9) in Chromium against `maskflow serve
// --replay`: an agent's ESCALATE pauses the run with its reason in the
// decision panel, the person replies to the agent there, and the run goes on
// with the agent's next reply. Screenshots go to tests/e2e/artifacts/steer-*.png.
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { after, before, test } from "node:test";
import { join } from "node:path";
import { HERE, launchBrowser, shot, startServer } from "./harness.mjs";

let server;
let browser;
let page;

const FLOW = {
  description: "Answers a buyer; the drafter may escalate.",
  steps: [
    {
      type: "llm",
      id: "draft",
      label: "Draft",
      agentType: "drafter",
      identifier: "d",
      instructions: "Draft the reply to the buyer within our discount policy.",
      messages: [{ role: "user", content: ["Draft the reply."] }],
    },
    {
      type: "llm",
      label: "Send",
      agentType: "sender",
      identifier: "s",
      messages: [{ role: "user", content: ["Send: {{steps.draft.output}}"] }],
    },
  ],
};

before(async () => {
  server = await startServer(join(HERE, "flow-steer-replay.json"));
  mkdirSync(join(server.home, "flows"), { recursive: true });
  // A flow may only name agents Maskflow knows: each gets its file.
  mkdirSync(join(server.home, "agents"), { recursive: true });
  writeFileSync(join(server.home, "agents", "drafter.json"), "{}");
  writeFileSync(join(server.home, "agents", "sender.json"), "{}");
  writeFileSync(join(server.home, "flows", "buyer_reply.json"), JSON.stringify(FLOW));
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  page = await context.newPage();
  page.setDefaultTimeout(15000);
  page.on("pageerror", (e) => console.error("page error:", e));
});

after(async () => {
  await browser?.close();
  server?.stop();
});

const status = () => page.locator('[data-testid="run-status"]');

test("an escalating agent waits for the person, who replies, and the run goes on", async () => {
  await page.goto(server.url);
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Flows", exact: true }).click();
  await page.getByRole("link", { name: /buyer_reply/ }).click();
  await page.getByRole("button", { name: "Run", exact: true }).click();
  const panel = page.getByRole("group", { name: "Your decision" });
  await panel.waitFor();
  assert.equal(await status().innerText(), "waiting");
  const asked = await panel.innerText();
  assert.match(asked, /Step "Draft" asks for a person \(ESCALATE\): the buyer asks for a 12 % discount and I may grant 5 % at most\./);
  assert.match(asked, /nextAction/);
  assert.match(asked, /Drafted the reply\./);
  assert.doesNotMatch(asked, /ESCALATE:/);
  await shot(page, "steer-01-escalated.png");
  const reply = panel.getByRole("button", { name: "Reply", exact: true });
  assert.equal(await reply.isDisabled(), true, "Reply needs the person's text");
  await panel.getByLabel("Your note").fill("Offer 5 % and thank them.");
  await reply.click();
  await page.waitForFunction(() => document.querySelector('[data-testid="run-status"]')?.textContent === "completed");
  const transcript = await page.locator('[data-testid="flow-bubble"]').allInnerTexts();
  assert.ok(transcript.some((t) => /Reply: Offer 5 % and thank them\./.test(t)), transcript.join("\n---\n"));
  assert.ok(transcript.some((t) => /Sent the reply\./.test(t)), transcript.join("\n---\n"));
  await shot(page, "steer-02-answered.png");
});
