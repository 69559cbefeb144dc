// Settings: the AI back ends (add, edit, remove, key, test connection),
// which back end each role uses, local servers found, and the Python
// interpreter workflows run with. Keys go to the system keyring and are
// never shown again; only where a key comes from is. The state lives in
// useSettings; each card is its own component.
import { BackupsSetting } from "../components/BackupsSetting";
import { IsolationSetting } from "../components/IsolationSetting";
import { StorageSettings } from "../components/StorageSettings";
import { EnvironmentsSetting } from "../components/EnvironmentsSetting";
import { BudgetSettings } from "../components/BudgetSettings";
import { UsageCard } from "../components/UsageCard";
import { AgentRoles } from "../components/AgentRoles";
import { NoticeBanner, Spinner } from "../components/ui";
import { toSettings } from "../lib/settings";
import { BackendsCard } from "../settings/BackendsCard";
import { ClientRequestsCard } from "../settings/ClientRequestsCard";
import { EmbeddedCard } from "../settings/EmbeddedCard";
import { HouseRulesCard } from "../settings/HouseRulesCard";
import { ModelsCard } from "../settings/ModelsCard";
import { PythonCard } from "../settings/PythonCard";
import { RolesCard } from "../settings/RolesCard";
import { RunLimitsCard } from "../settings/RunLimitsCard";
import { SchedulesCard } from "../settings/SchedulesCard";
import { useSettings } from "../settings/useSettings";

/** The Settings page. */
export function Settings() {
  const state = useSettings();
  const { view, notice, setNotice, save } = state;

  if (!view) {
    return (
      <div class="page">
        {notice ? <NoticeBanner notice={notice} /> : <Spinner label="Loading settings…" />}
      </div>
    );
  }
  const settings = toSettings(view);

  return (
    <div class="page" data-testid="settings">
      <header class="page-head">
        <div>
          <h1>Settings</h1>
          <p class="muted">Which AI answers, and how workflows run. Only masked extracts and your own messages ever reach an AI.</p>
        </div>
      </header>
      {notice && <NoticeBanner notice={notice} onClose={() => setNotice(null)} />}

      <BackendsCard view={view} settings={settings} state={state} />
      <RolesCard view={view} settings={settings} save={save} />
      <ModelsCard onSettingsChanged={state.load} />
      <EmbeddedCard settings={view} />

      <BudgetSettings />
      <UsageCard />
      <AgentRoles view={view} settings={settings} onSave={save} />
      <HouseRulesCard state={state} />

      <PythonCard state={state} />
      <IsolationSetting />
      <RunLimitsCard />
      <StorageSettings />
      <BackupsSetting />
      <EnvironmentsSetting />
      <ClientRequestsCard />
      <SchedulesCard />
    </div>
  );
}
