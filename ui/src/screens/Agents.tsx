// The Agents page (issue 18, point 12; seed 003's agents with personas):
// the agent files of the data folder's `agents/`, each with its back end,
// model, persona prompt and the flows that use it; create, edit and delete
// (with a confirmation; refused while a flow uses the agent). Files the
// loader cannot use are listed disabled with the reason.
import { useEffect, useState } from "preact/hooks";
import { AgentForm } from "../agents/AgentForm";
import { usedByText } from "../agents/agents";
import { DeleteAgentDialog } from "../agents/DeleteAgentDialog";
import { NoticeBanner, Spinner } from "../components/ui";
import { useTransport } from "../context";
import type { AgentInput, AgentView, ProviderView } from "../generated";
import { noticeOf, type Notice } from "../lib/errors";
import { toApiError } from "../transport";
import "../agents/agents.css";

/** The Agents page. */
export function Agents() {
  const api = useTransport();
  const [agents, setAgents] = useState<AgentView[] | null>(null);
  const [providers, setProviders] = useState<ProviderView[]>([]);
  const [notice, setNotice] = useState<Notice | null>(null);
  const [creating, setCreating] = useState(false);
  const [editing, setEditing] = useState<string | null>(null);
  const [deleting, setDeleting] = useState<AgentView | null>(null);

  const refresh = () =>
    Promise.all([api.listAgents(), api.settings()]).then(
      ([list, settings]) => {
        setAgents(list.agents);
        setProviders(settings.providers);
      },
      (e) => {
        setNotice(noticeOf(toApiError(e)));
        setAgents((a) => a ?? []);
      },
    );
  useEffect(() => {
    void refresh();
    // Once per transport; refresh is new on every render.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [api]);

  async function create(input: AgentInput) {
    const made = await api.createAgent(input);
    setCreating(false);
    // The list first, then the notice: what the notice says is already on screen.
    await refresh();
    setNotice({ tone: "info", title: "Agent created", detail: `${made.name} is ready for flow steps to name.` });
  }
  async function save(name: string, input: AgentInput) {
    await api.updateAgent(name, input);
    setEditing(null);
    await refresh();
    setNotice({ tone: "info", title: "Agent saved", detail: `${name}'s new settings apply to the next run that starts.` });
  }

  return (
    <>
      {/* Outside the page: its children are width-capped, the overlay must cover the window. */}
      {deleting && (
        <DeleteAgentDialog
          agent={deleting}
          onCancel={() => setDeleting(null)}
          onDone={() => {
            setNotice({ tone: "info", title: "Agent deleted", detail: `${deleting.name} is gone.` });
            setDeleting(null);
            void refresh();
          }}
        />
      )}
      <div class="page" data-testid="agents">
        <header class="page-head">
          <div>
            <h1>Agents</h1>
            <p class="muted">
              The personas flow steps talk to: each has a persona prompt and the back end and model it asks. They are the files
              of the data folder's <code>agents/</code>.
            </p>
          </div>
          {!creating && (
            <button type="button" class="button primary" onClick={() => setCreating(true)}>
              New agent
            </button>
          )}
        </header>
        {notice && <NoticeBanner notice={notice} onClose={() => setNotice(null)} />}
        {creating && (
          <section class="card">
            <h3>New agent</h3>
            <AgentForm providers={providers} onSave={create} onCancel={() => setCreating(false)} />
          </section>
        )}
        {agents === null ? (
          <Spinner label="Loading agents…" />
        ) : agents.length === 0 ? (
          <p class="muted">No agents yet. A flow step's agent without a file uses the default back end and no persona.</p>
        ) : (
          <ul class="agent-list" aria-label="Agents">
            {agents.map((a) =>
              editing === a.name ? (
                <li key={a.name} class="card">
                  <AgentForm agent={a} providers={providers} onSave={(input) => save(a.name, input)} onCancel={() => setEditing(null)} />
                </li>
              ) : (
                <AgentItem key={a.name} agent={a} onEdit={() => setEditing(a.name)} onDelete={() => setDeleting(a)} />
              ),
            )}
          </ul>
        )}
      </div>
    </>
  );
}

function AgentItem({ agent, onEdit, onDelete }: { agent: AgentView; onEdit: () => void; onDelete: () => void }) {
  // A refused file name cannot be addressed: the user renames the file.
  const refused = agent.disabled && !/^[A-Za-z0-9_-]{1,128}$/.test(agent.name);
  return (
    <li class={`card agent${agent.disabled ? " disabled" : ""}`} data-testid={`agent-${agent.name}`}>
      <div class="card-head">
        <div class="agent-title">
          <strong>{agent.name}</strong>
          {agent.displayName && <span class="muted">{agent.displayName}</span>}
          {agent.disabled ? (
            <span class="badge tone-bad">disabled</span>
          ) : (
            <span class="badge tone-neutral">{agent.provider ? `${agent.provider}${agent.model ? ` · ${agent.model}` : ""}` : "default back end"}</span>
          )}
        </div>
        <div class="provider-actions">
          {!refused && (
            <button type="button" class="button small" onClick={onEdit} aria-label={`Edit ${agent.name}`}>
              Edit
            </button>
          )}
          {!refused && (
            <button type="button" class="button small danger" onClick={onDelete} aria-label={`Delete ${agent.name}`}>
              Delete
            </button>
          )}
        </div>
      </div>
      {agent.error && <p class="small agent-error">{agent.error}</p>}
      {agent.warning && <p class="notice notice-warning small">{agent.warning}</p>}
      {!agent.disabled && <p class="agent-persona">{agent.prompt ? agent.prompt : <span class="muted">No persona prompt.</span>}</p>}
      <p class="small muted">
        {agent.usedBy.length === 0
          ? usedByText([])
          : [
              `Used by flow${agent.usedBy.length === 1 ? "" : "s"} `,
              ...agent.usedBy.map((f, i) => (
                <span key={f}>
                  {i > 0 && ", "}
                  <a href={`#/flows/${encodeURIComponent(f)}`}>{f}</a>
                </span>
              )),
            ]}
      </p>
    </li>
  );
}
