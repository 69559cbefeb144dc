// A workflow's build choices (issue 31 point 3): propose a plan before any
// code, have an LLM review each script before its test, and let that AI
// reviewer decide the build's gates. Stored with the workflow; the next
// build uses them. Packages and file choices always stay with the person.
import { useEffect, useState } from "preact/hooks";
import { useTransport } from "../context";
import type { BuildOptions } from "../generated";

const CHOICES: { key: keyof BuildOptions; label: string; hint: string }[] = [
  { key: "plan", label: "Plan first", hint: "The builder proposes the steps, inputs and outputs for you to approve or edit before any code." },
  { key: "review", label: "AI review", hint: "An LLM reviews each script before it runs on your files; its notes are shown (advice)." },
  {
    key: "ai_approver",
    label: "Let the AI reviewer approve",
    hint: "The reviewer approves the plan and decides whether a script goes to its test or back for one revision, with its reasons recorded.",
  },
];

/** Three switches for the workflow's next build. */
export function BuildOptionsToggle({ workflowId }: { workflowId: string }) {
  const transport = useTransport();
  const [options, setOptions] = useState<BuildOptions | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    transport
      .buildOptions(workflowId)
      .then((o) => live && setOptions(o))
      .catch((e: unknown) => live && setError(String(e)));
    return () => {
      live = false;
    };
  }, [transport, workflowId]);
  async function toggle(key: keyof BuildOptions, on: boolean) {
    if (!options) return;
    setError(null);
    try {
      setOptions(await transport.setBuildOptions(workflowId, { ...options, [key]: on }));
    } catch (e) {
      setError(String(e));
    }
  }
  if (!options) return error ? <p class="callout bad small">{error}</p> : null;
  return (
    <fieldset class="build-options" data-testid="build-options">
      <legend class="small">How the next build goes</legend>
      {CHOICES.map((c) => (
        <label key={c.key} class="small" title={c.hint}>
          <input type="checkbox" data-testid={`build-option-${c.key}`} checked={options[c.key]} onChange={(e) => void toggle(c.key, e.currentTarget.checked)} />{" "}
          {c.label}
        </label>
      ))}
      {error && <p class="callout bad small">{error}</p>}
    </fieldset>
  );
}
