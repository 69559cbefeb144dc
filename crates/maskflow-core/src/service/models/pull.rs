//! Pulling a model: a recommended one by name, or any URL with its
//! SHA-256. The download runs with progress published as
//! [`Event::ModelProgress`], can be cancelled (its `.part` stays, so the
//! next pull resumes), and the file is kept only when its checksum and its
//! GGUF header are right. Then its speed is measured once through the
//! embedded back end, when this build has one.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use tokio::sync::watch;
use utoipa::ToSchema;

use super::download::{self, Fetch};
use super::manifest::{self, InstalledModel, ModelSource, ModelSpeed};
use super::{DownloadView, ModelsView, catalog, check_name, gguf};
use crate::error::{CoreError, Result};
use crate::events::Event;
use crate::service::{Service, lock};
use maskflow_llm::{ChatMessage, ChatRole, LlmRequest, Provider, Role};

/// `POST /api/models/pull`'s body: a recommended model by `name`, or a
/// `url` with its `sha256` (and a `name` to give it).
#[derive(Deserialize, Serialize, Clone, Debug, Default, ToSchema, ts_rs::TS)]
#[serde(deny_unknown_fields)]
pub struct PullModel {
    /// A recommended model's name, or the name for the URL's model.
    #[serde(default)]
    #[ts(optional)]
    pub name: Option<String>,
    /// Any GGUF file's URL (http or https).
    #[serde(default)]
    #[ts(optional)]
    pub url: Option<String>,
    /// The SHA-256 the URL's file must have (64 hex digits); required with `url`.
    #[serde(default)]
    #[ts(optional)]
    pub sha256: Option<String>,
    /// Use the model (the `local` back end) once it is in.
    #[serde(default)]
    #[ts(optional)]
    pub use_when_done: Option<bool>,
}

/// The downloads of this service, and the lock of the manifest's writes.
#[derive(Debug, Default)]
pub struct Downloads {
    running: Mutex<HashMap<String, Running>>,
    writes: Mutex<()>,
}

#[derive(Debug)]
struct Running {
    cancel: watch::Sender<bool>,
    done: u64,
    total: Option<u64>,
}

impl Downloads {
    pub(super) fn list(&self) -> Vec<DownloadView> {
        let mut list: Vec<DownloadView> = lock(&self.running)
            .iter()
            .map(|(name, r)| DownloadView {
                name: name.clone(),
                done: r.done,
                total: r.total,
            })
            .collect();
        list.sort_by(|a, b| a.name.cmp(&b.name));
        list
    }

    pub(super) fn is_running(&self, name: &str) -> bool {
        lock(&self.running).contains_key(name)
    }

    pub(super) fn write_lock(&self) -> MutexGuard<'_, ()> {
        lock(&self.writes)
    }

    fn progress(&self, name: &str, done: u64, total: Option<u64>) {
        if let Some(r) = lock(&self.running).get_mut(name) {
            r.done = done;
            r.total = total;
        }
    }
}

/// Takes a download's place in [`Downloads`] until dropped.
struct Claim {
    service: Service,
    name: String,
}

impl Drop for Claim {
    fn drop(&mut self) {
        lock(&self.service.inner.models.running).remove(&self.name);
    }
}

/// What to download, resolved from a [`PullModel`].
#[derive(Debug)]
pub(super) struct Plan {
    name: String,
    url: String,
    file: String,
    sha256: Option<String>,
    size: Option<u64>,
    source: ModelSource,
    use_when_done: bool,
}

/// The file a pull of `name` writes, when known without a URL.
fn file_for(name: &str) -> String {
    catalog::find(name).map_or_else(|| format!("{name}.gguf"), |c| c.file.to_owned())
}

/// The record of a model installed at `target`, in the models folder.
#[allow(clippy::too_many_arguments)] // one record, each field from its source
pub(super) fn record(
    name: &str,
    target: &Path,
    bytes: u64,
    sha256: String,
    source: ModelSource,
    url: Option<String>,
    info: &gguf::GgufInfo,
    added_at: String,
) -> InstalledModel {
    InstalledModel {
        name: name.to_owned(),
        file: target
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default(),
        bytes,
        sha256,
        modified_ms: manifest::modified_ms(target),
        source,
        url,
        added_at,
        architecture: info.architecture.clone(),
        context_length: info.context_length,
        memory_bytes: catalog::memory_need(bytes, info.kv_bytes_per_token(), info.context_length),
        speed: None,
    }
}

fn checked_sha(sha: &str) -> Result<String> {
    let sha = sha.trim().to_ascii_lowercase();
    if sha.len() != 64 || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(CoreError::InvalidRequest(format!(
            "sha256 {sha:?} must be 64 hexadecimal digits"
        )));
    }
    Ok(sha)
}

impl Service {
    /// The `.part` file a pull of `name` writes.
    pub(super) fn part_of(&self, name: &str) -> Option<PathBuf> {
        check_name(name).ok()?;
        Some(
            self.models_folder()
                .join(format!("{}.part", file_for(name))),
        )
    }

    pub(super) fn plan(&self, request: PullModel) -> Result<Plan> {
        let use_when_done = request.use_when_done.unwrap_or(false);
        let Some(url) = request.url else {
            let name = request.name.ok_or_else(|| {
                CoreError::InvalidRequest(
                    "give a recommended model's name, or a url with its sha256".into(),
                )
            })?;
            let Some(model) = catalog::find(&name) else {
                let names: Vec<&str> = catalog::CATALOG.iter().map(|m| m.name).collect();
                return Err(CoreError::InvalidRequest(format!(
                    "{name:?} is not a recommended model ({}); give --url and --sha256 for another",
                    names.join(", ")
                )));
            };
            let seen = manifest::seen_checksums(self.home())?;
            return Ok(Plan {
                name,
                url: model.url.to_owned(),
                file: model.file.to_owned(),
                sha256: model
                    .sha256
                    .map(str::to_owned)
                    .or_else(|| seen.get(model.url).cloned()),
                size: Some(model.bytes),
                source: ModelSource::Recommended,
                use_when_done,
            });
        };
        let url = url.trim().to_owned();
        if !(url.starts_with("https://") || url.starts_with("http://")) {
            return Err(CoreError::InvalidRequest(format!(
                "url {url:?} must start with https:// or http://"
            )));
        }
        let sha = request.sha256.ok_or_else(|| {
            CoreError::InvalidRequest(format!(
                "a download from {url} needs its sha256, so a wrong file is refused"
            ))
        })?;
        let name = match request.name {
            Some(n) => n,
            None => url
                .rsplit('/')
                .next()
                .unwrap_or_default()
                .split(['?', '#'])
                .next()
                .unwrap_or_default()
                .trim_end_matches(".gguf")
                .to_owned(),
        };
        check_name(&name)?;
        if catalog::find(&name).is_some() {
            return Err(CoreError::InvalidRequest(format!(
                "{name} is a recommended model's name; pull it by name, or give another --name"
            )));
        }
        Ok(Plan {
            file: format!("{name}.gguf"),
            name,
            url,
            sha256: Some(checked_sha(&sha)?),
            size: None,
            source: ModelSource::Url,
            use_when_done,
        })
    }

    /// Starts a pull in the background and answers at once; its progress
    /// and end come as `model_progress` events.
    pub fn start_model_pull(&self, request: PullModel) -> Result<ModelsView> {
        let plan = self.plan(request)?;
        let claim = self.claim_download(&plan)?;
        let service = self.clone();
        tokio::spawn(async move {
            let _ = service.run_pull(plan, claim).await;
        });
        self.models()
    }

    /// Pulls a model and waits for it (the command line); progress is
    /// published as for [`Service::start_model_pull`].
    pub async fn pull_model(&self, request: PullModel) -> Result<InstalledModel> {
        let plan = self.plan(request)?;
        let claim = self.claim_download(&plan)?;
        self.run_pull(plan, claim).await
    }

    /// Stops a download; its `.part` stays for the next pull to resume.
    pub fn cancel_model_pull(&self, name: &str) -> Result<ModelsView> {
        let sent = lock(&self.inner.models.running)
            .get(name)
            .map(|r| r.cancel.send(true));
        if sent.is_none() {
            return Err(CoreError::not_found("download", name));
        }
        self.models()
    }

    fn claim_download(&self, plan: &Plan) -> Result<(Claim, watch::Receiver<bool>)> {
        if manifest::read(self.home())?
            .iter()
            .any(|m| m.name == plan.name || m.file == plan.file)
        {
            return Err(CoreError::Conflict(format!(
                "model {} is installed; remove it first to download it again",
                plan.name
            )));
        }
        let mut running = lock(&self.inner.models.running);
        if running.contains_key(&plan.name) {
            return Err(CoreError::Conflict(format!(
                "model {} is already downloading",
                plan.name
            )));
        }
        let (tx, rx) = watch::channel(false);
        running.insert(
            plan.name.clone(),
            Running {
                cancel: tx,
                done: 0,
                total: plan.size,
            },
        );
        Ok((
            Claim {
                service: self.clone(),
                name: plan.name.clone(),
            },
            rx,
        ))
    }

    fn publish_model(&self, name: &str, stage: &str, done: u64, total: Option<u64>, msg: String) {
        self.inner.events.publish(Event::ModelProgress {
            name: name.to_owned(),
            stage: stage.to_owned(),
            done,
            total,
            message: msg,
        });
    }

    async fn run_pull(
        &self,
        plan: Plan,
        (claim, mut cancel): (Claim, watch::Receiver<bool>),
    ) -> Result<InstalledModel> {
        let result = self.download_and_keep(&plan, &mut cancel).await;
        drop(claim);
        let model = match result {
            Ok(model) => model,
            Err(e) => {
                let stage = if *cancel.borrow() {
                    "cancelled"
                } else {
                    "failed"
                };
                self.publish_model(&plan.name, stage, 0, None, e.to_string());
                return Err(e);
            }
        };
        let model = self.measure_speed(model).await;
        if plan.use_when_done
            && let Err(e) = self.use_model(&plan.name)
        {
            self.publish_model(&plan.name, "failed", model.bytes, None, e.to_string());
            return Err(e);
        }
        self.publish_model(
            &plan.name,
            "ready",
            model.bytes,
            Some(model.bytes),
            format!("{} is ready", plan.name),
        );
        Ok(model)
    }

    async fn download_and_keep(
        &self,
        plan: &Plan,
        cancel: &mut watch::Receiver<bool>,
    ) -> Result<InstalledModel> {
        let folder = self.models_folder();
        std::fs::create_dir_all(&folder)
            .map_err(|e| CoreError::io(format!("creating {}", folder.display()), e))?;
        let part = folder.join(format!("{}.part", plan.file));
        let have = std::fs::metadata(&part).map_or(0, |m| m.len());
        if let Some(size) = plan.size {
            self.ensure_space(
                size.saturating_sub(have),
                &format!("the model {}", plan.name),
            )?;
        }
        let fetch = Fetch {
            url: plan.url.clone(),
            part: part.clone(),
            sha256: plan.sha256.clone(),
            limit: download::MAX_MODEL_BYTES,
            stall_window: download::STALL_WINDOW,
        };
        let client = download::client().map_err(download_error)?;
        let (service, name) = (self.clone(), plan.name.clone());
        let progress = move |done: u64, total: Option<u64>| {
            service.inner.models.progress(&name, done, total);
            service.publish_model(&name, "downloading", done, total, String::new());
        };
        let fetched = download::fetch(&client, &fetch, cancel, &progress)
            .await
            .map_err(download_error)?;
        self.publish_model(
            &plan.name,
            "verifying",
            fetched.bytes,
            Some(fetched.bytes),
            format!("SHA-256 {}", fetched.sha256),
        );
        let info = match gguf::read(&part) {
            Ok(info) => info,
            Err(e) => {
                let _ = std::fs::remove_file(&part);
                return Err(CoreError::InvalidRequest(format!(
                    "{}: {e}; it was removed",
                    plan.url
                )));
            }
        };
        let _write = self.inner.models.write_lock();
        let target = folder.join(&plan.file);
        std::fs::rename(&part, &target)
            .map_err(|e| CoreError::io(format!("writing {}", target.display()), e))?;
        if plan.source == ModelSource::Recommended {
            manifest::remember_checksum(self.home(), &plan.url, &fetched.sha256)?;
        }
        let model = record(
            &plan.name,
            &target,
            fetched.bytes,
            fetched.sha256,
            plan.source,
            Some(plan.url.clone()),
            &info,
            self.now(),
        );
        let mut installed = manifest::read(self.home())?;
        installed.retain(|m| m.name != model.name);
        installed.push(model.clone());
        manifest::write(self.home(), &installed)?;
        Ok(model)
    }

    /// Measures a model's speed once: a short generation through the
    /// embedded back end, behind the guard and the ledger like every call
    /// (its prompt is Maskflow's own text). Without the embedded back end
    /// in this build, or when it fails, the speed stays "not measured yet".
    async fn measure_speed(&self, mut model: InstalledModel) -> InstalledModel {
        let path = self.model_path(&model);
        let Ok(config) = super::local_setting(&path) else {
            return model;
        };
        self.publish_model(&model.name, "measuring", model.bytes, None, String::new());
        let built = maskflow_llm::config::build_provider(
            &config,
            None,
            self.llm_manual(),
            &self.inner.budgets,
        );
        let Ok(inner) = built else { return model };
        let provider = maskflow_privacy::GuardedProvider::new(
            inner,
            Arc::new(maskflow_privacy::GuardIndex::new()),
            Arc::new(self.clone()),
            self.inner.clock.clone(),
            self.inner.ids.clone(),
        );
        let request = LlmRequest {
            role: Role::Agent("model-speed".into()),
            messages: vec![ChatMessage::from_parts(
                ChatRole::User,
                vec![maskflow_llm::Part::instructions(
                    "Count from 1 to 40, separated by spaces.",
                )],
            )],
            schema: None,
        };
        let started = Instant::now();
        let marks: Mutex<(Option<Instant>, Option<Instant>, u32)> = Mutex::new((None, None, 0));
        let on_delta = |_: &str| {
            let now = Instant::now();
            let mut m = lock(&marks);
            m.0.get_or_insert(now);
            m.1 = Some(now);
            m.2 += 1;
        };
        if provider.complete(&request, &on_delta).await.is_err() {
            return model;
        }
        let (first, last, pieces) = *lock(&marks);
        let (Some(first), Some(last)) = (first, last) else {
            return model;
        };
        let span = last.duration_since(first).as_secs_f64();
        if pieces < 2 || span <= 0.0 {
            return model;
        }
        model.speed = Some(ModelSpeed {
            tokens_per_second: f64::from(pieces - 1) / span,
            first_token_seconds: first.duration_since(started).as_secs_f64(),
            measured_at: self.now(),
        });
        let _write = self.inner.models.write_lock();
        if let Ok(mut installed) = manifest::read(self.home()) {
            for m in &mut installed {
                if m.name == model.name {
                    m.speed = model.speed.clone();
                }
            }
            let _ = manifest::write(self.home(), &installed);
        }
        model
    }
}

use super::download::DownloadError;

/// A download's failure as the service reports it: a full disk as such,
/// the rest as a conflict whose sentence says what to do.
fn download_error(e: DownloadError) -> CoreError {
    match e {
        DownloadError::Write { path, source } => CoreError::io(format!("writing {path}"), source),
        DownloadError::Checksum { .. } | DownloadError::TooLarge { .. } => {
            CoreError::InvalidRequest(e.to_string())
        }
        DownloadError::DiskFull { .. } => CoreError::DiskFull(e.to_string()),
        other => CoreError::Conflict(other.to_string()),
    }
}
