// The flow editor (issue 31, point 1) in Chromium against `maskflow serve
// --replay`: a flow is built from scratch as steps — an agent step and a
// loop with two steps nested in it — with the loader's own message shown on
// the step it names until it is fixed and the diagram drawn beside it; it is
// saved to flows/<name>.json and runs to its end. Then the file is edited
// outside Maskflow while the editor has it open: the editor says so, a save
// is refused and the outside edit stays, reload shows it, and only an
// explicit overwrite replaces it. Screenshots go to
// tests/e2e/artifacts/flow-editor-*.png.
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { after, before, test } from "node:test";
import { join } from "node:path";
import { HERE, launchBrowser, shot, startServer } from "./harness.mjs";

let server;
let browser;
let page;

before(async () => {
  server = await startServer(join(HERE, "flow-editor-replay.json"));
  mkdirSync(join(server.home, "agents"), { recursive: true });
  writeFileSync(join(server.home, "agents", "writer.json"), JSON.stringify({ displayName: "Release writer" }));
  mkdirSync(join(server.home, "agents", "writer", "commands"), { recursive: true });
  const polish = { messages: [{ role: "user", content: ["Polish the wording."] }] };
  writeFileSync(join(server.home, "agents", "writer", "commands", "polish.json"), JSON.stringify(polish));
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  page = await context.newPage();
  page.setDefaultTimeout(15000);
  page.on("pageerror", (e) => console.error("page error:", e));
});

after(async () => {
  await browser?.close();
  server?.stop();
});

const flowFile = () => join(server.home, "flows", "release_notes.json");
const card = (path) => page.locator(`[data-testid="step-${path}"]`);
/** Adds a step of `type` with the "add a step" control named `group`. */
const addStep = async (group, type) => {
  const g = page.getByRole("group", { name: group, exact: true });
  await g.getByRole("combobox").selectOption(type);
  await g.getByRole("button", { name: "Add", exact: true }).click();
};
const valid = () => page.locator('[data-testid="editor-valid"]').waitFor();

test("a flow built from scratch in the editor is checked by the loader, saved and runs", async () => {
  await page.goto(server.url);
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Flows", exact: true }).click();
  await page.getByRole("link", { name: "New flow" }).click();
  await page.getByRole("heading", { name: "New flow" }).waitFor();
  await page.getByLabel("Name (the file name)").fill("release_notes");
  await page.getByLabel("Description").fill("Drafts release notes, then tightens them until done");

  // An agent step, with the agent picked from the agents' list.
  await addStep("Add a step to steps", "llm");
  const first = card("steps[0]");
  await first.getByLabel("Label", { exact: true }).fill("Draft");
  await first.getByLabel("Agent", { exact: true }).fill("writer");
  await first.getByLabel("Message 1: text").fill("Write release notes for version 2.");
  const options = await page.locator("#flow-editor-agents option").evaluateAll((os) => os.map((o) => o.value));
  assert.deepEqual(options, ["writer"]);

  // A loop with two steps inside it.
  await addStep("Add a step to steps", "startLoop");
  await card("steps[1]").getByLabel("Label", { exact: true }).first().fill("Tighten");
  await addStep("Add a step to steps of the loop", "llm");
  const inner = card("steps[1].steps[0]");
  await inner.getByLabel("Label", { exact: true }).fill("Shorten");
  await inner.getByLabel("Agent", { exact: true }).fill("writer");
  await inner.getByLabel("Message 1: text").fill("Make them shorter.");
  await addStep("Add a step to steps of the loop", "break");
  const brk = card("steps[1].steps[1]");
  await brk.getByLabel("Agent", { exact: true }).fill("writer");

  // The loader's own message, on the step it names, until it is fixed.
  await brk.locator(".step-errors").waitFor();
  assert.match(await brk.locator(".step-errors").innerText(), /steps\[1\]\.steps\[1\]\.question: must not be empty/);
  assert.match(await page.locator('[data-testid="editor-messages"]').innerText(), /question/);
  await shot(page, "flow-editor-01-message.png");
  await brk.getByLabel("Yes/no question").fill("Are the notes short enough? Reply as JSON {\"answer\":\"yes\"|\"no\"}.");
  await valid();
  await page.locator('[data-testid="editor-preview"] svg').waitFor();
  const diagram = await page.locator('[data-testid="editor-preview"]').innerText();
  assert.match(diagram, /Draft/);
  assert.match(diagram, /Shorten/);

  // Reorder: the loop's two steps swap and swap back.
  await page.getByRole("button", { name: "Move Shorten down" }).click();
  await card("steps[1].steps[1]").getByRole("heading", { name: /Shorten/ }).waitFor();
  assert.match(await card("steps[1].steps[1]").innerText(), /Shorten/);
  await page.getByRole("button", { name: "Move Shorten up" }).click();
  // Drag and drop reorders too: the draft goes below the loop (and back up with its button).
  await page.locator('[data-testid="drag-steps[0]"]').dragTo(card("steps[1]").locator(".step-head").first());
  await card("steps[1]").getByRole("heading", { name: /Draft/ }).first().waitFor();
  await page.getByRole("button", { name: "Move Draft up" }).click();
  await card("steps[0]").getByRole("heading", { name: /Draft/ }).first().waitFor();
  // Nest and un-nest: a step after the loop moves into it, out again, and is removed.
  await addStep("Add a step to steps", "gate");
  await card("steps[2]").getByLabel("Label", { exact: true }).fill("Sign off");
  await page.getByRole("button", { name: "Move Sign off into the step above" }).click();
  await card("steps[1].steps[2]").getByRole("heading", { name: /Sign off/ }).waitFor();
  await card("steps[2]").waitFor({ state: "detached" });
  await page.getByRole("button", { name: "Move Sign off out of its loop" }).click();
  await card("steps[2]").getByRole("heading", { name: /Sign off/ }).waitFor();
  await card("steps[1].steps[2]").waitFor({ state: "detached" });
  await page.getByRole("button", { name: "Remove Sign off" }).click();
  await card("steps[2]").waitFor({ state: "detached" });
  await valid();
  await shot(page, "flow-editor-02-built.png");

  await page.getByRole("button", { name: "Save", exact: true }).click();
  await page.waitForURL(/#\/flow-editor\/release_notes$/);
  await page.getByRole("heading", { name: "Edit flow: release_notes" }).waitFor();
  const saved = JSON.parse(readFileSync(flowFile(), "utf8"));
  assert.equal(saved.steps[0].agentType, "writer");
  assert.equal(saved.steps[1].type, "startLoop");
  assert.deepEqual(saved.steps[1].steps.map((s) => s.type), ["llm", "break"]);
  assert.equal(saved.steps[1].steps[1].breakOn, "yes");

  await page.getByRole("link", { name: "Open in Flows" }).click();
  await page.locator('[data-testid="flow-diagram"] svg').waitFor();
  await page.getByRole("button", { name: "Run", exact: true }).click();
  await page.waitForFunction(() => document.querySelector('[data-testid="run-status"]')?.textContent === "completed");
  const transcript = await page.locator(".flow-transcript").innerText();
  assert.match(transcript, /A first draft of the release notes\./);
  assert.match(transcript, /Tighter release notes\./);
  await shot(page, "flow-editor-03-ran.png");
});

test("a file edited outside while the editor has it open is noticed, not overwritten", async () => {
  await page.getByRole("link", { name: "Edit", exact: true }).click();
  await page.getByRole("heading", { name: "Edit flow: release_notes" }).waitFor();
  await valid();
  // The command picker offers the agent's command files.
  await addStep("Add a step to steps", "command");
  const command = card("steps[2]").getByLabel("Command", { exact: true });
  assert.deepEqual(await command.locator("option").evaluateAll((os) => os.map((o) => o.value)), ["", "polish"]);
  await command.selectOption("polish");
  await valid();
  await page.getByRole("button", { name: "Remove Run an agent command" }).click();
  await card("steps[2]").waitFor({ state: "detached" });
  await page.getByLabel("Description").fill("Edited in Maskflow");

  const outside = JSON.parse(readFileSync(flowFile(), "utf8"));
  outside.description = "Edited in a text editor";
  const outsideText = JSON.stringify(outside, null, 2);
  writeFileSync(flowFile(), outsideText);

  const banner = page.locator('[data-testid="editor-conflict"]');
  await banner.waitFor();
  assert.match(await banner.innerText(), /flows\/release_notes\.json changed outside Maskflow/);
  await shot(page, "flow-editor-04-changed-outside.png");

  // Keep editing, then save: refused, and the outside edit stays on disk.
  await banner.getByRole("button", { name: "Keep editing" }).click();
  await banner.waitFor({ state: "detached" });
  await page.getByRole("button", { name: "Save", exact: true }).click();
  await page.locator('[data-testid="editor-error"]').waitFor();
  assert.match(await page.locator('[data-testid="editor-error"]').innerText(), /changed outside Maskflow since you opened it/);
  await banner.waitFor();
  assert.equal(readFileSync(flowFile(), "utf8"), outsideText);

  // Reload shows the outside edit.
  await banner.getByRole("button", { name: "Reload from disk" }).click();
  await banner.waitFor({ state: "detached" });
  assert.equal(await page.getByLabel("Description").inputValue(), "Edited in a text editor");

  // Only an explicit overwrite replaces a file changed outside.
  await page.getByLabel("Description").fill("Mine after all");
  outside.description = "Edited outside again";
  writeFileSync(flowFile(), JSON.stringify(outside, null, 2));
  await banner.waitFor();
  await banner.getByRole("button", { name: "Overwrite with mine" }).click();
  await page.locator('[data-testid="editor-saved"]').waitFor();
  assert.equal(JSON.parse(readFileSync(flowFile(), "utf8")).description, "Mine after all");
  await shot(page, "flow-editor-05-overwritten.png");
});

test("a fan-out's join takes a time limit, what its end does, and what an exhausted item does", async () => {
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Flows", exact: true }).click();
  await page.getByRole("link", { name: "New flow" }).click();
  await page.getByRole("heading", { name: "New flow" }).waitFor();
  await page.getByLabel("Name (the file name)").fill("fan_out");
  await addStep("Add a step to steps", "foreach");
  await card("steps[0]").getByLabel("Items (a list in the run's context)").fill("input.items");
  await card("steps[0].step").getByLabel("Message 1: text").fill("Summarise {{item}}.");
  await addStep("Add a step to steps", "join");
  const fanIn = card("steps[1]");
  // The end of the time limit is asked only once there is one.
  assert.equal(await fanIn.getByLabel("When the time runs out").count(), 0);
  await fanIn.getByLabel("Time limit for all items, in seconds (optional)").fill("60");
  await fanIn.getByLabel("When the time runs out").selectOption("fail");
  await fanIn.getByLabel("When an item's retries ran out").selectOption("ask");
  await valid();
  await shot(page, "flow-editor-06-join.png");

  // Without the limit, its end is the loader's error until it is cleared too.
  await fanIn.getByLabel("Time limit for all items, in seconds (optional)").fill("");
  await fanIn.locator(".step-errors").waitFor();
  assert.match(await fanIn.locator(".step-errors").innerText(), /onTimeout/);
  await fanIn.getByLabel("Time limit for all items, in seconds (optional)").fill("60");
  await valid();

  await page.getByRole("button", { name: "Save", exact: true }).click();
  await page.waitForURL(/#\/flow-editor\/fan_out$/);
  const saved = JSON.parse(readFileSync(join(server.home, "flows", "fan_out.json"), "utf8"));
  assert.deepEqual(
    { timeoutSeconds: saved.steps[1].timeoutSeconds, onTimeout: saved.steps[1].onTimeout, onExhausted: saved.steps[1].onExhausted },
    { timeoutSeconds: 60, onTimeout: "fail", onExhausted: "ask" },
  );
});
