// The "House rules" card: the user's standing instructions for the builder
// (seed 001's standards bundle). A Markdown text whose headings name scopes;
// the builder's prompt carries the sections whose scope matches the request.
import type { SettingsState } from "./useSettings";

const EXAMPLE = "# Always\nComment every step in plain words.\n\n# Python\nUse pathlib for paths.\n\n# Excel outputs\nFreeze the header row.\n{{include:excel-style}}";

/** The Settings text, the files of the house-rules folder, and help on scopes and includes. */
export function HouseRulesCard({ state }: { state: SettingsState }) {
  const { houseRules, rulesText, setRulesText, saveHouseRules } = state;
  return (
    <section class="card" aria-labelledby="house-rules-h" data-testid="house-rules">
      <div class="card-head">
        <h2 id="house-rules-h">House rules</h2>
      </div>
      <p class="small muted">
        Standing instructions the builder follows for every workflow. Each top heading names a scope: <code>Always</code> applies to every build; any other
        heading (<code>Python</code>, <code>Excel outputs</code>, <code>PDF reports</code>…) applies when one of its words appears in your request, your
        files' names or kinds (an .xlsx counts as Excel) or the outputs. Words like “outputs” or “files” do not count; text before the first heading applies
        always. <code>{"{{include:NAME}}"}</code> inserts the file <code>house-rules/NAME.md</code> of the data folder. The rules are sent with the builder's
        prompt, so they appear in the prompts and in the privacy ledger.
      </p>
      <form class="house-rules-form" onSubmit={saveHouseRules}>
        <label>
          <span>Rules (Markdown)</span>
          <textarea name="house-rules" rows={10} value={rulesText} placeholder={EXAMPLE} onInput={(e) => setRulesText(e.currentTarget.value)} />
        </label>
        <div>
          <button type="submit" class="button">
            Save house rules
          </button>
        </div>
      </form>
      {houseRules && (
        <div class="small" data-testid="house-rules-status">
          <p>
            Scopes here: {houseRules.scopes.length ? houseRules.scopes.join(", ") : "none yet"}. Files in <code>{houseRules.folder}</code>:{" "}
            {houseRules.files.length === 0 && "none."}
          </p>
          {houseRules.files.length > 0 && (
            <ul class="house-rules-files">
              {houseRules.files.map((f) => (
                <li key={f.name}>
                  <code>{f.name}.md</code>{" "}
                  {f.error ? (
                    <span class="warn-text">{f.error}</span>
                  ) : f.include_only ? (
                    <span class="muted">only for includes</span>
                  ) : (
                    <span class="muted">{f.scopes.join(", ") || "no sections"}</span>
                  )}
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
    </section>
  );
}
