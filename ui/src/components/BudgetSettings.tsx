// The Settings card for each LLM role's output budget: the most reply tokens
// a role may use before its reply is stopped as not following the format.
import { useEffect, useState } from "preact/hooks";
import { useTransport } from "../context";
import type { BudgetsView, RoleBudgets } from "../generated";
import { noticeOf, type Notice } from "../lib/errors";
import { toApiError } from "../transport";
import { NoticeBanner, Spinner } from "./ui";

const ROLES: { key: keyof RoleBudgets; label: string }[] = [
  { key: "validator", label: "Validator" },
  { key: "clarifier", label: "Clarifier" },
  { key: "builder", label: "Builder" },
  { key: "agent", label: "Flow agents" },
];

type Draft = Record<keyof RoleBudgets, string>;

function draftOf(b: RoleBudgets): Draft {
  const s = (v: number | null) => (v === null ? "" : String(v));
  return { validator: s(b.validator), clarifier: s(b.clarifier), builder: s(b.builder), agent: s(b.agent) };
}

/** Parses a draft; blank is the default. Returns an error naming the role. */
export function budgetsOf(d: Draft): RoleBudgets | string {
  const out: RoleBudgets = { validator: null, clarifier: null, builder: null, agent: null };
  for (const { key, label } of ROLES) {
    const t = d[key].trim();
    if (!t) continue;
    const n = Number(t);
    if (!Number.isInteger(n) || n <= 0) return `${label}: "${t}" is not a whole number of tokens`;
    out[key] = n;
  }
  return out;
}

export function BudgetSettings() {
  const transport = useTransport();
  const [view, setView] = useState<BudgetsView | null>(null);
  const [draft, setDraft] = useState<Draft | null>(null);
  const [notice, setNotice] = useState<Notice | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    transport
      .roleBudgets()
      .then((v) => {
        setView(v);
        setDraft(draftOf(v.budgets));
      })
      .catch((e) => setNotice(noticeOf(toApiError(e))));
  }, [transport]);

  async function save(e: Event) {
    e.preventDefault();
    if (!draft) return;
    const parsed = budgetsOf(draft);
    if (typeof parsed === "string") {
      setNotice({ tone: "error", title: "Budget not saved", detail: parsed });
      return;
    }
    setBusy(true);
    try {
      const v = await transport.setRoleBudgets(parsed);
      setView(v);
      setDraft(draftOf(v.budgets));
      setNotice({ tone: "info", title: "Budgets saved", detail: "Used from the next LLM call." });
    } catch (err) {
      setNotice(noticeOf(toApiError(err)));
    } finally {
      setBusy(false);
    }
  }

  return (
    <section class="card" aria-labelledby="budgets-h" data-testid="budget-settings">
      <div class="card-head">
        <h2 id="budgets-h">Output budgets</h2>
      </div>
      <p class="small">
        The most tokens each role may write. A reply that reaches its budget is stopped and asked once more, briefly;
        twice is an error. Leave blank for the default.
      </p>
      {notice && <NoticeBanner notice={notice} onClose={() => setNotice(null)} />}
      {!view || !draft ? (
        !notice && <Spinner label="Loading budgets…" />
      ) : (
        <form class="python-form" onSubmit={save}>
          {ROLES.map(({ key, label }) => (
            <label key={key}>
              <span>{label}</span>
              <input
                name={`budget-${key}`}
                inputMode="numeric"
                value={draft[key]}
                placeholder={`${view.defaults[key] ?? ""} (default)`}
                onInput={(e) => setDraft({ ...draft, [key]: e.currentTarget.value })}
              />
            </label>
          ))}
          <button type="submit" class="button" disabled={busy}>
            {busy ? "Saving…" : "Save budgets"}
          </button>
        </form>
      )}
    </section>
  );
}
