// The "Python interpreter" card: which Python workflows run with.
import type { SettingsState } from "./useSettings";

/** The interpreter's path and what the core found there. */
export function PythonCard({ state }: { state: SettingsState }) {
  const { python, pythonPath, setPythonPath, savePython } = state;
  return (
    <section class="card" aria-labelledby="python-h">
      <div class="card-head">
        <h2 id="python-h">Python interpreter</h2>
      </div>
      <form class="python-form" onSubmit={savePython}>
        <label>
          <span>Path</span>
          <input name="python" value={pythonPath} placeholder="python3 on PATH" onInput={(e) => setPythonPath(e.currentTarget.value)} />
        </label>
        <button type="submit" class="button">
          Save
        </button>
      </form>
      {python && (
        <p class="small" data-testid="python-status">
          {python.error ? <span class="warn-text">{python.error}</span> : <>Workflows run with Python {python.version} ({python.program}).</>}
        </p>
      )}
    </section>
  );
}
