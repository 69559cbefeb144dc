//! The service's side of LLM back ends: which provider each role uses (from
//! the settings, or fixed by the caller), keys, "test connection", the
//! manual back end's pending prompts, and the privacy guard and ledger that
//! every call goes through ([`Service::llm`]).

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::{Arc, Mutex, RwLock, Weak};

use serde_json::{Value, json};

use super::{Service, lock};
use crate::conversation::prompts;
use crate::error::{CoreError, Result};
use crate::events::{Event, EventBus};
use crate::settings;
use crate::store;
use maskflow_clock::{Clock, IdGen};
use maskflow_flows::FlowError;
use maskflow_flows::agents::AgentDef;
use maskflow_flows::engine::{AgentBackends, FlowCall};
use maskflow_llm::config::{
    self, ConnectionTest, Detected, LlmSettings, ProviderConfig, ProviderKind, ProviderView,
    SettingsView,
};
use maskflow_llm::http::ApiKey;
use maskflow_llm::keys::{self, Credentials, KeySource};
use maskflow_llm::manual::ManualProvider;
use maskflow_llm::{LlmRequest, Provider, Role, Roles, Unconfigured};
use maskflow_privacy::GuardedProvider;
use maskflow_privacy::guard::{self, GuardIndex};
use maskflow_privacy::ledger::{self, CallOutcome, CallSink, LedgerEntry};

/// Most ledger entries one page may hold.
pub const MAX_LEDGER_PAGE: u32 = 500;

/// Where each call's back end comes from.
#[derive(Clone, Debug)]
pub enum ProviderSource {
    /// The stored settings (manual by default), with keys from the keyring
    /// or the environment, read again for every call.
    Settings,
    /// An explicit override answering every role (`--replay`,
    /// `MASKFLOW_REPLAY`, tests).
    Override(Roles),
}

/// The flows' guard and the (file count, last rowid) it was built for.
type FlowGuard = ((i64, i64), Arc<GuardIndex>);

/// What the service keeps for LLM calls.
#[derive(Debug)]
pub(super) struct LlmState {
    manual: Arc<ManualProvider>,
    source: ProviderSource,
    keys: Arc<dyn Credentials>,
    env: fn(&str) -> Option<String>,
    built: RwLock<HashMap<String, Arc<dyn Provider>>>,
    /// The guard indexes of the versions messaged last (bounded: #19).
    guards: Mutex<super::guard_cache::GuardCache>,
    /// The flows' guard: every stored file, keyed by (count, last rowid).
    flow_guard: Mutex<Option<FlowGuard>>,
    /// The guard indexes of flow runs' working folders.
    folders: super::folder_guard::FolderGuards,
    vocabulary: String,
    detected: Mutex<Vec<Detected>>,
    max_file_bytes: u64,
    /// Ledger rows of this process's calls still waiting for their reply:
    /// written ahead as `cancelled` (what they stay if the process dies),
    /// listed as `in_flight` while they wait.
    in_flight: Mutex<HashSet<String>>,
}

impl LlmState {
    pub(super) fn new(
        source: ProviderSource,
        keys: Arc<dyn Credentials>,
        events: &EventBus,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn IdGen>,
    ) -> Self {
        Self {
            manual: Arc::new(ManualProvider::new(Arc::new(events.clone()), clock, ids)),
            source,
            keys,
            env: keys::process_env,
            built: RwLock::new(HashMap::new()),
            guards: Mutex::new(Default::default()),
            flow_guard: Mutex::new(None),
            folders: Default::default(),
            vocabulary: vocabulary(),
            detected: Mutex::new(Vec::new()),
            max_file_bytes: guard::DEFAULT_MAX_BYTES,
            in_flight: Mutex::new(HashSet::new()),
        }
    }
}

/// Maskflow's own prompt text (templates, schemas, repair wording): never
/// data, so its words may always be sent.
fn vocabulary() -> String {
    let empty = json!([]);
    let mut text = String::new();
    for r in [
        prompts::validator_request(&empty, &[]),
        prompts::clarifier_request(&empty, &[]),
        prompts::builder_request(&empty, &[]),
    ] {
        for m in r.messages {
            text.push_str(&m.content);
            text.push('\n');
        }
        if let Some(s) = r.schema {
            text.push_str(&s.to_string());
        }
    }
    text.push_str(&prompts::repair_prompt(""));
    text.push_str(prompts::RUNNER_CONTRACT);
    text.push('\n');
    // The flows' prompt layers and Maskflow's own output keys.
    text.push_str(&maskflow_flows::prompt_vocabulary());
    text
}

impl CallSink for Service {
    fn record(&self, entry: LedgerEntry) {
        let stored = store::llm_calls::insert(&self.db(), &entry);
        if let Err(e) = stored {
            eprintln!("maskflow: could not record an LLM call in the ledger: {e}");
        }
        self.inner.events.publish(Event::LedgerEntry { entry });
    }

    fn begin(&self, entry: &LedgerEntry) -> std::result::Result<(), String> {
        store::llm_calls::insert(&self.db(), entry).map_err(|e| e.to_string())?;
        lock(&self.llm_state().in_flight).insert(entry.id.clone());
        self.inner.events.publish(Event::LlmCallStarted {
            id: entry.id.clone(),
            role: entry.role.clone(),
            model: entry.model.clone(),
            workflow_id: entry.workflow_id.clone(),
            flow_run_id: entry.flow_run_id.clone(),
        });
        Ok(())
    }

    fn finish(&self, entry: LedgerEntry) {
        lock(&self.llm_state().in_flight).remove(&entry.id);
        let now = self.now();
        if let Err(e) = store::llm_calls::complete(&self.db(), &entry, &now) {
            eprintln!("maskflow: could not complete an LLM call in the ledger: {e}");
        }
        self.inner.events.publish(Event::LedgerEntry { entry });
    }
}

impl Service {
    fn llm_state(&self) -> &LlmState {
        &self.inner.llm
    }

    /// Whether every role is answered by an explicit override (`--replay`,
    /// tests) rather than the settings.
    pub(super) fn providers_overridden(&self) -> bool {
        matches!(self.llm_state().source, ProviderSource::Override(_))
    }

    /// The manual back end (its prompts are served by `super::manual`).
    pub(super) fn llm_manual(&self) -> &Arc<ManualProvider> {
        &self.llm_state().manual
    }

    /// Rebuilds the back ends from the stored settings and keys (settings mode).
    pub(super) fn reload_providers(&self) -> Result<()> {
        if !matches!(self.llm_state().source, ProviderSource::Settings) {
            return Ok(());
        }
        self.apply_embedded();
        let settings = settings::load(&self.db())?;
        let mut built = HashMap::new();
        for p in &settings.providers {
            let key = self.key_of(&p.id, p.kind.as_str()).0;
            let provider =
                config::build_provider(p, key, &self.llm_state().manual, &self.inner.budgets)?;
            built.insert(p.id.clone(), provider);
        }
        *self
            .llm_state()
            .built
            .write()
            .unwrap_or_else(|e| e.into_inner()) = built;
        Ok(())
    }

    fn key_of(&self, id: &str, kind: &str) -> (Option<ApiKey>, KeySource, Option<String>) {
        // Neither the manual nor the embedded back end takes a key (and
        // asking the keyring would open a D-Bus socket for nothing).
        if kind == "manual" || kind == "local" {
            return (None, KeySource::None, None);
        }
        match keys::resolve(
            self.llm_state().keys.as_ref(),
            id,
            kind,
            &self.llm_state().env,
        ) {
            Ok((k, source)) => (k.and_then(ApiKey::new), source, None),
            Err(e) => (None, KeySource::None, Some(e.to_string())),
        }
    }

    /// The raw back end `role` uses now. Not public: every caller outside
    /// this module gets it behind the guard and the ledger ([`Service::llm`]).
    fn role_provider(&self, role: &Role) -> Result<Arc<dyn Provider>> {
        match &self.llm_state().source {
            ProviderSource::Override(roles) => Ok(roles.for_role(role).clone()),
            ProviderSource::Settings => {
                let settings = settings::load(&self.db())?;
                let built = self
                    .llm_state()
                    .built
                    .read()
                    .unwrap_or_else(|e| e.into_inner());
                Ok(settings
                    .provider_for(role)
                    .and_then(|p| built.get(&p.id).cloned())
                    .unwrap_or_else(|| Arc::new(Unconfigured)))
            }
        }
    }

    /// The back end for `role`, behind the privacy guard of `version_id`'s
    /// files and the ledger. `confirmed` is user text the user chose to send
    /// despite the guard.
    pub fn llm(
        &self,
        role: &Role,
        workflow_id: Option<&str>,
        version_id: Option<&str>,
        confirmed: Option<&str>,
    ) -> Result<GuardedProvider> {
        let guard = match version_id {
            Some(v) => self.guard_for(v)?,
            None => Arc::new(GuardIndex::new()),
        };
        let mut allowed = match workflow_id {
            Some(w) => self.confirmations(w)?,
            None => Vec::new(),
        };
        allowed.extend(confirmed.map(str::to_owned));
        Ok(GuardedProvider::new(
            self.role_provider(role)?,
            guard,
            Arc::new(self.clone()),
            self.inner.clock.clone(),
            self.inner.ids.clone(),
        )
        .for_workflow(workflow_id.map(str::to_owned))
        .allowing(allowed))
    }

    /// `build`'s request for the role of `provider`, its extracts reduced
    /// to fit the model's context window ([`crate::fit`]); what was left
    /// out is published and added to `reductions`. A prompt that cannot fit
    /// is refused before anything is sent, with the numbers.
    pub(crate) async fn fitted_request(
        &self,
        provider: &GuardedProvider,
        role: &Role,
        workflow_id: &str,
        extracts: &Value,
        reductions: &mut Vec<crate::fit::ContextReduction>,
        build: &(dyn Fn(&Value) -> LlmRequest + Sync),
    ) -> Result<LlmRequest> {
        let window = provider.context_window().await;
        let budget = self.inner.budgets.max_tokens(role, None);
        let (request, reduction) =
            crate::fit::fit_request(extracts, window, budget, provider.model(), build)?;
        if let Some(r) = reduction {
            self.inner
                .events
                .publish(crate::events::Event::ContextReduced {
                    workflow_id: workflow_id.to_owned(),
                    reduction: r.clone(),
                });
            reductions.push(r);
        }
        Ok(request)
    }

    /// The raw back end flow agent `agent` uses now: the provider its
    /// definition names (with its `model` in place of the provider's), else
    /// the `agent:<name>` role, else the `flows` role, else the builder's.
    /// The error names the agent and the missing id. Not public: callers get
    /// it guarded ([`Service::agent_llm`]).
    fn agent_provider(
        &self,
        agent: &str,
        def: &AgentDef,
    ) -> std::result::Result<Arc<dyn Provider>, String> {
        let role = Role::Agent(agent.to_owned());
        let settings = match &self.llm_state().source {
            ProviderSource::Override(roles) => return Ok(roles.for_role(&role).clone()),
            ProviderSource::Settings => settings::load(&self.db())
                .map_err(|e| format!("agent {agent:?}: reading the LLM settings: {e}"))?,
        };
        let own = def
            .provider
            .as_ref()
            .map(|p| p.as_str().trim().to_owned())
            .filter(|p| !p.is_empty());
        let mut config = match own {
            Some(id) => match settings.providers.iter().find(|p| p.id == id) {
                Some(p) => p.clone(),
                None => {
                    let known: Vec<&str> =
                        settings.providers.iter().map(|p| p.id.as_str()).collect();
                    return Err(format!(
                        "agent {agent:?} names provider {id:?}, which is not configured \
                         (configured: {}); add it in Settings or change the agent's provider",
                        known.join(", ")
                    ));
                }
            },
            None => match settings.provider_for(&role) {
                Some(p) => p.clone(),
                None => return Ok(Arc::new(Unconfigured)),
            },
        };
        let model = def
            .model
            .as_ref()
            .map(|m| m.as_str().trim().to_owned())
            // Seed 004 writes `"model": "default"` for "the provider's own".
            .filter(|m| !m.is_empty() && !m.eq_ignore_ascii_case("default"));
        if model.is_none()
            && let Some(p) = self
                .llm_state()
                .built
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .get(&config.id)
        {
            return Ok(p.clone());
        }
        if model.is_some() {
            config.model = model;
        }
        let key = self.key_of(&config.id, config.kind.as_str()).0;
        config::build_provider(&config, key, &self.llm_state().manual, &self.inner.budgets)
            .map_err(|e| format!("agent {agent:?}: provider {:?}: {e}", config.id))
    }

    /// The back end of flow agent `agent` (the provider its definition names,
    /// else the `agent:<name>` role, else the `flows` role, else the builder's),
    /// behind the flows' privacy guard and the ledger; `authored` is text
    /// the user wrote (the run's flow and agent definitions), allowed as is.
    /// The guard checks the uploaded files and every file of the run's
    /// working folder (indexed now, see [`super::folder_guard`]); the ledger
    /// rows name the run and step of `call`.
    pub fn agent_llm(
        &self,
        agent: &str,
        def: &AgentDef,
        authored: &str,
        call: &FlowCall,
    ) -> std::result::Result<GuardedProvider, String> {
        let provider = self.agent_provider(agent, def)?;
        let guard = self
            .flow_guard()
            .map_err(|e| format!("agent {agent:?}: building the privacy guard: {e}"))?;
        let mut guarded = GuardedProvider::new(
            provider,
            guard,
            Arc::new(self.clone()),
            self.inner.clock.clone(),
            self.inner.ids.clone(),
        )
        .allowing(vec![authored.to_owned()]);
        if let Some(folder) = &call.working_folder {
            guarded = guarded.also_checking(self.flow_folder_guard(folder));
        }
        if !call.run_id.is_empty() {
            guarded = guarded.for_flow_step(call.run_id.clone(), call.step.clone());
        }
        Ok(guarded)
    }

    /// The guard index of a flow run's working folder, with every file in it
    /// now indexed (new and changed files are read; see [`super::folder_guard`]).
    pub(crate) fn flow_folder_guard(&self, folder: &Path) -> Arc<GuardIndex> {
        let state = self.llm_state();
        state
            .folders
            .refresh(folder, &state.vocabulary, state.max_file_bytes)
    }

    /// The guard of flow calls: the raw values of every file the user gave
    /// Maskflow (flows read and write them through scripts), cached until
    /// the set of files changes.
    pub fn flow_guard(&self) -> Result<Arc<GuardIndex>> {
        let (stamp, files) = {
            let db = self.db();
            let stamp = store::input_files::stamp(&db)?;
            if let Some((at, g)) = &*lock(&self.llm_state().flow_guard)
                && *at == stamp
            {
                return Ok(g.clone());
            }
            (stamp, store::input_files::guarded(&db)?)
        };
        let mut index = GuardIndex::new();
        for f in &files {
            index.add_file(
                Path::new(&f.path),
                &f.filename,
                self.llm_state().max_file_bytes,
            );
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(&f.extract) {
                // Names as sent: one that is a value stays a value (#26).
                guard::allow_json(&mut index, &crate::names::outbound(&v, &[]).extract);
            }
        }
        index.allow(&self.llm_state().vocabulary);
        let index = Arc::new(index);
        *lock(&self.llm_state().flow_guard) = Some((stamp, index.clone()));
        Ok(index)
    }

    /// The guard index of a version's files (cached for the versions in use).
    pub fn guard_for(&self, version_id: &str) -> Result<Arc<GuardIndex>> {
        if let Some(g) = lock(&self.llm_state().guards).get(version_id) {
            return Ok(g);
        }
        let (extracts, files) = {
            let db = self.db();
            let version = store::get_version(&db, version_id)?
                .ok_or_else(|| CoreError::not_found("version", version_id))?;
            let mut files = Vec::new();
            for id in store::file_ids_of(&db, version_id)? {
                if let Some(f) = store::get_file(&db, &id)? {
                    files.push((f.path, f.filename));
                }
            }
            (version.file_extracts, files)
        };
        // The user's notes are their words, judged each time they are
        // sent: a name written in one is no allowance for the workflow.
        let mut extracts = extracts;
        crate::data_notes::take(&mut extracts);
        let mut index = GuardIndex::new();
        for (path, name) in &files {
            index.add_file(Path::new(path), name, self.llm_state().max_file_bytes);
        }
        guard::allow_json(&mut index, &extracts);
        index.allow(&self.llm_state().vocabulary);
        let index = Arc::new(index);
        lock(&self.llm_state().guards).insert(version_id, index.clone());
        Ok(index)
    }

    /// The most of one file the guard reads (the category count reads as much, #28).
    pub(super) fn max_file_bytes(&self) -> u64 {
        self.llm_state().max_file_bytes
    }

    fn confirmations(&self, workflow_id: &str) -> Result<Vec<String>> {
        Ok(store::privacy_confirmations::of_workflow(
            &self.db(),
            workflow_id,
        )?)
    }

    /// Records that the user chose to send `content` despite the guard.
    pub(super) fn confirm_privacy(&self, workflow_id: &str, content: &str) -> Result<()> {
        let now = self.now();
        store::privacy_confirmations::insert(&self.db(), workflow_id, content, &now)?;
        Ok(())
    }

    /// The LLM settings, with where each key comes from (never the key).
    pub fn settings(&self) -> Result<SettingsView> {
        let s = settings::load(&self.db())?;
        Ok(SettingsView {
            providers: s
                .providers
                .into_iter()
                .map(|config| {
                    let (_, key, key_error) = self.key_of(&config.id, config.kind.as_str());
                    ProviderView {
                        config,
                        key,
                        key_error,
                    }
                })
                .collect(),
            roles: s.roles,
        })
    }

    /// Replaces the LLM settings (validated) and rebuilds the back ends.
    pub fn update_settings(&self, new: LlmSettings) -> Result<SettingsView> {
        let now = self.now();
        settings::save(&self.db(), &new, &now)?;
        self.reload_providers()?;
        self.settings()
    }

    fn provider_config(&self, id: &str) -> Result<ProviderConfig> {
        settings::load(&self.db())?
            .providers
            .into_iter()
            .find(|p| p.id == id)
            .ok_or_else(|| CoreError::not_found("provider", id))
    }

    /// Stores the API key of provider `id` in the system keyring.
    pub fn set_key(&self, id: &str, key: &str) -> Result<()> {
        let config = self.provider_config(id)?;
        if matches!(config.kind, ProviderKind::Manual | ProviderKind::Local) {
            return Err(CoreError::InvalidRequest(format!(
                "the {} back end takes no key",
                config.kind.as_str()
            )));
        }
        self.llm_state().keys.set(id, key)?;
        self.reload_providers()
    }

    /// Removes the API key of provider `id` from the keyring.
    pub fn delete_key(&self, id: &str) -> Result<()> {
        self.provider_config(id)?;
        self.llm_state().keys.delete(id)?;
        self.reload_providers()
    }

    /// Tries provider `id` with its key: does the server answer and accept it?
    pub async fn test_provider(&self, id: &str) -> Result<ConnectionTest> {
        let config = self.provider_config(id)?;
        let (key, _, key_error) = self.key_of(id, config.kind.as_str());
        let mut result = config::test_connection(&config, key).await;
        if let (false, Some(why)) = (result.ok, key_error) {
            result.message = format!("{}; also: {why}", result.message);
        }
        Ok(result)
    }

    /// Looks for local servers now and remembers what was found.
    pub async fn detect_providers(&self) -> Vec<Detected> {
        let found = config::detect().await;
        *lock(&self.llm_state().detected) = found.clone();
        found
    }

    /// Token totals from the ledger: in all, per role and per workflow.
    pub fn usage(&self) -> Result<ledger::Usage> {
        Ok(store::llm_calls::usage(&self.db())?)
    }

    /// The ledger, newest first; `q` searches bodies, replies and names.
    pub fn ledger(&self, q: Option<&str>, limit: u32, offset: u32) -> Result<Vec<LedgerEntry>> {
        let limit = limit.clamp(1, MAX_LEDGER_PAGE);
        let mut entries = store::llm_calls::list(&self.db(), q, limit, offset)?;
        let waiting = lock(&self.llm_state().in_flight);
        for e in entries.iter_mut().filter(|e| waiting.contains(&e.id)) {
            e.outcome = CallOutcome::InFlight;
            e.error = None;
        }
        Ok(entries)
    }
}

/// The flow engine's agent back ends: the service's settings, behind the
/// flows' privacy guard and the ledger. Weak, as the engine lives inside
/// the service.
#[derive(Debug)]
pub(super) struct ServiceBackends(Weak<super::Inner>);

impl ServiceBackends {
    pub(super) fn new(inner: Weak<super::Inner>) -> Self {
        Self(inner)
    }
}

impl AgentBackends for ServiceBackends {
    fn agent_backend(
        &self,
        agent: &str,
        def: &AgentDef,
        authored: &str,
        call: &FlowCall,
    ) -> std::result::Result<GuardedProvider, FlowError> {
        let inner = self
            .0
            .upgrade()
            .ok_or_else(|| FlowError::backend("the service has closed"))?;
        Service { inner }
            .agent_llm(agent, def, authored, call)
            .map_err(FlowError::backend)
    }
}
