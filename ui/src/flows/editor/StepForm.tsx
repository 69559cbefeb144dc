// The form of one step, by its type: the fields the loader reads for that
// type, with the agent and command pickers. Fields this form does not show
// (pre/postconditions, ids of the graph form…) stay in the step as written.
import type { EditorAgent } from "../../generated";
import { AgentPicker, CommandPicker, NumberField, SelectField, TextField } from "./fields";
import { setField, update, type FlowJson, type Path, type StepJson } from "./model";

/** What a form needs: where the step is, how to change the document, and what to offer. */
export type FormProps = {
  step: StepJson;
  path: Path;
  doc: FlowJson;
  setDoc: (d: FlowJson) => void;
  agents: EditorAgent[];
  flowNames: string[];
  /** The loader's message about `field` of this step, if any. */
  errorOf: (field: string) => string | undefined;
};

/** The fields of a step of any type. */
export function StepForm(props: FormProps) {
  const { step, path, doc, setDoc, errorOf } = props;
  const set = (field: string, optional = false) => (v: unknown) => setDoc(setField(doc, path, field, v, optional));
  return (
    <div class="step-form">
      <TextField label="Label" value={step.label} onChange={set("label", true)} placeholder="shown in the transcript" error={errorOf("label")} />
      <TypeFields {...props} set={set} />
      <TextField label="Id (optional)" value={step.id} onChange={set("id", true)} placeholder="keeps its output at steps.<id>" error={errorOf("id")} />
    </div>
  );
}

type Setter = (field: string, optional?: boolean) => (v: unknown) => void;

function AgentFields({ step, agents, set, errorOf, optional }: FormProps & { set: Setter; optional?: boolean }) {
  return (
    <>
      <AgentPicker value={step.agentType} agents={agents} onChange={set("agentType", optional)} error={errorOf("agentType")} />
      <TextField label="Conversation (identifier)" value={step.identifier} onChange={set("identifier", optional)} placeholder="steps with the same agent and identifier share a conversation" error={errorOf("identifier")} />
    </>
  );
}

function TypeFields(props: FormProps & { set: Setter }) {
  const { step, set, errorOf, agents, flowNames } = props;
  switch (step.type) {
    case "llm":
      return (
        <>
          <AgentFields {...props} />
          <Messages {...props} />
        </>
      );
    case "command":
      return (
        <>
          <AgentFields {...props} />
          <CommandPicker agent={step.agentType} value={step.commandName} agents={agents} onChange={set("commandName")} error={errorOf("commandName")} />
        </>
      );
    case "startLoop":
      return <NumberField label="At most this many passes" min={1} value={step.maxIterations} onChange={set("maxIterations", true)} error={errorOf("maxIterations")} />;
    case "break":
      return (
        <>
          <AgentFields {...props} />
          <TextField label="Yes/no question" multiline value={step.question} onChange={set("question")} error={errorOf("question")} />
          <SelectField label="Leave the loop on" value={step.breakOn} choices={[["yes", "yes"], ["no", "no"]]} onChange={set("breakOn")} error={errorOf("breakOn")} />
        </>
      );
    case "decision":
      return <Branches {...props} />;
    case "foreach":
      return (
        <>
          <TextField label="Items (a list in the run's context)" value={step.itemsPath} onChange={set("itemsPath")} placeholder="output.files" error={errorOf("itemsPath")} />
          <TextField label="Name of each item" value={step.itemVariable} onChange={set("itemVariable")} placeholder="file" error={errorOf("itemVariable")} />
          <NumberField label="At once (1–16)" min={1} value={step.concurrency} onChange={set("concurrency", true)} error={errorOf("concurrency")} />
          <NumberField label="At most this many items" min={1} value={step.maxItems} onChange={set("maxItems", true)} error={errorOf("maxItems")} />
        </>
      );
    case "join":
      return (
        <>
          <SelectField
            label="When some items failed"
            value={step.onFailure ?? ""}
            choices={[["", "fail the run (default)"], ["skip", "carry on with the rest"], ["needsAttention", "ask me"]]}
            onChange={set("onFailure", true)}
            error={errorOf("onFailure")}
          />
          <SelectField
            label="When an item's retries ran out"
            value={step.onExhausted ?? ""}
            choices={[
              ["", "ask me, unless the choice above says what failed items do (default)"],
              ["ask", "ask me: retry, skip or stop"],
              ["fail", "count it as failed"],
            ]}
            onChange={set("onExhausted", true)}
            error={errorOf("onExhausted")}
          />
          <NumberField
            label="Time limit for all items, in seconds (optional)"
            min={1}
            value={step.timeoutSeconds}
            onChange={set("timeoutSeconds", true)}
            error={errorOf("timeoutSeconds")}
          />
          {(step.timeoutSeconds !== undefined || step.onTimeout !== undefined) && (
            <SelectField
              label="When the time runs out"
              value={step.onTimeout ?? ""}
              choices={[["", "carry on with the finished items (default)"], ["fail", "fail the run"]]}
              onChange={set("onTimeout", true)}
              error={errorOf("onTimeout")}
            />
          )}
          <TextField label="Fan-in prompt (optional)" multiline value={step.prompt} onChange={set("prompt", true)} error={errorOf("prompt")} />
          {typeof step.prompt === "string" && step.prompt && <AgentFields {...props} optional />}
        </>
      );
    case "subflow":
      return <SelectField label="Flow" value={step.flow} choices={flowNames.map((n) => [n, n])} onChange={set("flow")} error={errorOf("flow")} />;
    case "gate":
      return (
        <>
          <TextField label="Question" multiline value={step.prompt} onChange={set("prompt")} error={errorOf("prompt")} />
          <GateOptions {...props} />
        </>
      );
    case "script":
      return (
        <>
          <TextField label="Approved workflow (name or id)" value={step.workflow} onChange={set("workflow", true)} error={errorOf("workflow")} />
          <TextField label="…or a Python file" value={step.path} onChange={set("path", true)} error={errorOf("path")} />
          <TextField
            label="Arguments (one a line)"
            multiline
            value={Array.isArray(step.args) ? step.args.join("\n") : ""}
            onChange={(v) => set("args", true)(v.split("\n").filter((l) => l.trim()))}
            error={errorOf("args")}
          />
        </>
      );
    default:
      return <p class="small muted">This step type has no form; edit it in the JSON view.</p>;
  }
}

type Message = { role?: string; content?: string[] };

function Messages({ step, path, doc, setDoc, errorOf }: FormProps) {
  const messages = (Array.isArray(step.messages) ? step.messages : []) as Message[];
  const at = [...path, "messages"];
  return (
    <fieldset class="editor-group">
      <legend>Messages</legend>
      {messages.map((m, i) => (
        <div class="editor-item" key={i}>
          <SelectField
            label={`Message ${i + 1}: role`}
            value={m.role}
            choices={[["user", "user"], ["system", "system"], ["assistant", "assistant"]]}
            onChange={(v) => setDoc(setField(doc, [...at, i], "role", v))}
            error={errorOf(`messages[${i}].role`)}
          />
          <TextField
            label={`Message ${i + 1}: text`}
            multiline
            value={Array.isArray(m.content) ? m.content.join("\n") : ""}
            onChange={(v) => setDoc(setField(doc, [...at, i], "content", v.split("\n")))}
            error={errorOf(`messages[${i}].content`) ?? errorOf(`messages[${i}]`)}
          />
          <button type="button" class="button small" onClick={() => setDoc(update(doc, at, (l) => (l as unknown[]).filter((_, j) => j !== i)))}>
            Remove message {i + 1}
          </button>
        </div>
      ))}
      {errorOf("messages") && <p class="field-error small">{errorOf("messages")}</p>}
      <button type="button" class="button small" onClick={() => setDoc(update(doc, at, (l) => [...(Array.isArray(l) ? l : []), { role: "user", content: [""] }]))}>
        Add a message
      </button>
    </fieldset>
  );
}

function Branches({ step, path, doc, setDoc, errorOf }: FormProps) {
  const branches = (Array.isArray(step.branches) ? step.branches : []) as { condition?: string }[];
  const at = [...path, "branches"];
  return (
    <fieldset class="editor-group">
      <legend>Branches (the first whose condition holds is taken)</legend>
      {branches.map((b, i) => (
        <div class="editor-item" key={i}>
          <TextField
            label={`Branch ${i + 1}: condition`}
            value={b.condition}
            placeholder="output.score >= 80"
            onChange={(v) => setDoc(setField(doc, [...at, i], "condition", v))}
            error={errorOf(`branches[${i}].condition`)}
          />
          <button type="button" class="button small" onClick={() => setDoc(update(doc, at, (l) => (l as unknown[]).filter((_, j) => j !== i)))}>
            Remove branch {i + 1}
          </button>
        </div>
      ))}
      {errorOf("branches") && <p class="field-error small">{errorOf("branches")}</p>}
      <button type="button" class="button small" onClick={() => setDoc(update(doc, at, (l) => [...(Array.isArray(l) ? l : []), { condition: "", steps: [] }]))}>
        Add a branch
      </button>
      <label class="small">
        <input
          type="checkbox"
          checked={!!step.default}
          onChange={(e) => setDoc(setField(doc, path, "default", (e.currentTarget as HTMLInputElement).checked ? { steps: [] } : undefined, true))}
        />{" "}
        An “otherwise” branch
      </label>
    </fieldset>
  );
}

type GateOption = { label?: string; requiresInput?: boolean };

function GateOptions({ step, path, doc, setDoc, errorOf }: FormProps) {
  const options = (Array.isArray(step.options) ? step.options : []) as GateOption[];
  const at = [...path, "options"];
  return (
    <fieldset class="editor-group">
      <legend>Choices</legend>
      {options.map((o, i) => (
        <div class="editor-item" key={i}>
          <TextField label={`Choice ${i + 1}`} value={o.label} onChange={(v) => setDoc(setField(doc, [...at, i], "label", v))} error={errorOf(`options[${i}].label`)} />
          <label class="small">
            <input
              type="checkbox"
              checked={!!o.requiresInput}
              onChange={(e) => setDoc(setField(doc, [...at, i], "requiresInput", (e.currentTarget as HTMLInputElement).checked || undefined, true))}
            />{" "}
            asks for a note
          </label>
          <button type="button" class="button small" onClick={() => setDoc(update(doc, at, (l) => (l as unknown[]).filter((_, j) => j !== i)))}>
            Remove choice {i + 1}
          </button>
        </div>
      ))}
      {errorOf("options") && <p class="field-error small">{errorOf("options")}</p>}
      <button type="button" class="button small" onClick={() => setDoc(update(doc, at, (l) => [...(Array.isArray(l) ? l : []), { label: "" }]))}>
        Add a choice
      </button>
    </fieldset>
  );
}
