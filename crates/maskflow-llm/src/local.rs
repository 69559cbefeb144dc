//! The embedded back end (`local`): llama.cpp in this process
//! (`maskflow-local`), no socket, no other process. The model runs on its
//! engine's own thread; this side only forwards the request, streams the
//! pieces to the caller and maps the end to the same errors the network
//! back ends give (budget, context window, cancel). Dropping the call (a
//! cancelled build) sets the request's cancel flag, which the engine checks
//! between prompt batches and between tokens.
//!
//! Built without the `local` feature, a `local` setting gives a back end
//! that refuses every call with a sentence saying so ([`Unsupported`]).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use super::{BoxFuture, DeltaSink, LlmRequest, Provider, ProviderError, budget::Budgets};

/// The back end's name in errors and the ledger: nothing left the machine.
pub const NAME: &str = "local";

/// The error of a build without embedded model support.
pub const UNSUPPORTED: &str = "this build of Maskflow has no embedded model support (it was built without the `local` feature); choose another back end";

/// Minutes an idle embedded model stays loaded, unless set.
pub const DEFAULT_IDLE_MINUTES: u32 = 10;
/// The most minutes the idle timeout may be set to (a day).
pub const MAX_IDLE_MINUTES: u32 = 1440;

/// The idle timeout in force for back ends built from now on (one per
/// process: the app's setting, applied before it builds its back ends).
static IDLE_MINUTES: AtomicU32 = AtomicU32::new(DEFAULT_IDLE_MINUTES);

/// Sets the idle timeout of the embedded back ends built from now on.
pub fn set_idle_minutes(minutes: u32) {
    IDLE_MINUTES.store(minutes.clamp(1, MAX_IDLE_MINUTES), Ordering::Relaxed);
}

/// The idle timeout of the embedded back ends built from now on.
pub fn idle_minutes() -> u32 {
    IDLE_MINUTES.load(Ordering::Relaxed)
}

/// An installed model's file as recorded when it was added: the engine
/// hashes it again before it loads when its size or time differ, and
/// refuses it when its SHA-256 changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KnownModel {
    /// The file (absolute).
    pub path: PathBuf,
    /// Its SHA-256, lower-case hex.
    pub sha256: String,
    /// Its size when added.
    pub bytes: u64,
    /// Its modification time when added, in milliseconds since the epoch.
    pub modified_ms: Option<i64>,
}

/// The installed models, for the back ends built from now on (one list per
/// process, as the idle timeout; each data folder keeps its own entries).
static KNOWN_MODELS: Mutex<Vec<KnownModel>> = Mutex::new(Vec::new());

/// Sets the installed models of the models folder `folder` whose files the
/// embedded back ends built from now on check before loading; a file not
/// among them (a path typed in Settings) is only checked to be a GGUF file.
/// Other folders' entries (another data folder in this process) are kept.
pub fn set_known_models(folder: &Path, models: Vec<KnownModel>) {
    let mut known = KNOWN_MODELS.lock().unwrap_or_else(|e| e.into_inner());
    known.retain(|m| !m.path.starts_with(folder));
    known.extend(models);
}

/// The record of the installed model at `path`, if it is one.
#[cfg_attr(not(feature = "local"), allow(dead_code))]
fn known_model(path: &Path) -> Option<KnownModel> {
    KNOWN_MODELS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .find(|m| m.path == path)
        .cloned()
}

/// What this build can do with an embedded model, for Settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capabilities {
    /// Whether it was built with the `local` feature.
    pub supported: bool,
    /// CPU threads a model runs on.
    pub threads: u32,
    /// Whether it offloads layers to a GPU (Metal, CUDA or Vulkan builds).
    pub gpu_offload: bool,
}

/// What this build can do with an embedded model.
pub fn capabilities() -> Capabilities {
    #[cfg(feature = "local")]
    {
        Capabilities {
            supported: true,
            threads: maskflow_local::default_threads(),
            gpu_offload: maskflow_local::GPU_BUILT,
        }
    }
    #[cfg(not(feature = "local"))]
    {
        Capabilities {
            supported: false,
            threads: 0,
            gpu_offload: false,
        }
    }
}

/// The context the embedded engine gives a model trained on `trained`
/// tokens whose KV cache takes `kv_per_token` bytes a token, with this
/// machine's free memory now (the engine's own rule, for Settings to show
/// before the model loads); `None` in a build without the embedded back end.
pub fn context_for(trained: u32, kv_per_token: u64) -> Option<u32> {
    #[cfg(feature = "local")]
    {
        Some(maskflow_local::context_size(
            trained,
            kv_per_token,
            maskflow_local::available_memory(),
        ))
    }
    #[cfg(not(feature = "local"))]
    {
        let _ = (trained, kv_per_token);
        None
    }
}

/// What a `local` setting asks for.
#[derive(Clone, Debug, PartialEq)]
pub struct LocalSettings {
    /// The GGUF file (absolute).
    pub model: PathBuf,
    /// Sampling temperature (0 when unset: structured replies want the
    /// likeliest answer).
    pub temperature: Option<f64>,
    /// Most reply tokens (the setting's cap over the role budgets).
    pub max_tokens: Option<u32>,
    /// The context size, overriding the model's and the memory's.
    pub context_window: Option<u32>,
    /// Minutes an idle model stays loaded.
    pub idle_minutes: u32,
}

/// A back end that refuses every call: this build cannot run a model.
#[derive(Debug, Clone)]
pub struct Unsupported {
    model: String,
}

impl Unsupported {
    /// The stand-in for a `local` setting naming `model`.
    pub fn new(model: &Path) -> Self {
        Self {
            model: model.display().to_string(),
        }
    }
}

impl Provider for Unsupported {
    fn name(&self) -> &str {
        NAME
    }

    fn is_local(&self) -> bool {
        true
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn probe(&self) -> BoxFuture<'_, Result<String, ProviderError>> {
        Box::pin(async { Err(unsupported()) })
    }

    fn complete<'a>(
        &'a self,
        _request: &'a LlmRequest,
        _on_delta: DeltaSink<'a>,
    ) -> BoxFuture<'a, Result<super::LlmReply, ProviderError>> {
        Box::pin(async { Err(unsupported()) })
    }
}

fn unsupported() -> ProviderError {
    ProviderError::Failed {
        provider: NAME.into(),
        message: UNSUPPORTED.into(),
    }
}

/// The back end of a `local` setting: the built one, or [`Unsupported`].
pub fn build(
    settings: LocalSettings,
    budgets: &Budgets,
) -> Result<Arc<dyn Provider>, ProviderError> {
    #[cfg(feature = "local")]
    {
        Ok(Arc::new(LocalProvider::new(settings, budgets.clone())?))
    }
    #[cfg(not(feature = "local"))]
    {
        let _ = budgets;
        Ok(Arc::new(Unsupported::new(&settings.model)))
    }
}

/// Checks a `local` setting's file for Settings' "Test connection": that it
/// is a GGUF file, its size, and what the engine would run it with.
pub fn check(model: &Path) -> Result<String, ProviderError> {
    #[cfg(feature = "local")]
    {
        let size = maskflow_local::check_model_file(model).map_err(|e| ProviderError::Failed {
            provider: NAME.into(),
            message: e.to_string(),
        })?;
        Ok(format!(
            "embedded llama.cpp: {} ({} MB) runs in this process on {} CPU thread(s){}; nothing leaves the machine",
            model.display(),
            size.div_ceil(1 << 20),
            maskflow_local::default_threads(),
            if maskflow_local::GPU_BUILT {
                " with GPU offload"
            } else {
                ""
            }
        ))
    }
    #[cfg(not(feature = "local"))]
    {
        let _ = model;
        Err(unsupported())
    }
}

#[cfg(feature = "local")]
pub use embedded::LocalProvider;

#[cfg(feature = "local")]
mod embedded {
    use super::*;
    use crate::{ChatRole, LlmReply, call};
    use std::sync::atomic::AtomicBool;

    /// Sets the flag when dropped: a call dropped half-way stops its
    /// generation at the next prompt batch or token.
    struct CancelOnDrop(Arc<AtomicBool>);

    impl Drop for CancelOnDrop {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
    use maskflow_local::{Engine, EngineOptions, Event, LocalError, Request, Speaker};

    /// The embedded model as a [`Provider`].
    #[derive(Debug)]
    pub struct LocalProvider {
        engine: Arc<Engine>,
        model: String,
        temperature: f32,
        max_tokens: Option<u32>,
        budgets: Budgets,
    }

    impl LocalProvider {
        /// The provider of `settings` (its engine is shared with every other
        /// provider of the same file; the model loads on the first call).
        pub fn new(settings: LocalSettings, budgets: Budgets) -> Result<Self, ProviderError> {
            let mut options = EngineOptions::new(settings.model.clone());
            options.context = settings.context_window;
            options.idle =
                std::time::Duration::from_secs(u64::from(settings.idle_minutes.max(1)) * 60);
            options.known = known_model(&settings.model).map(|m| maskflow_local::KnownFile {
                sha256: m.sha256,
                bytes: m.bytes,
                modified_ms: m.modified_ms,
            });
            let engine = Engine::shared(options).map_err(failed)?;
            Ok(Self {
                engine,
                model: settings.model.display().to_string(),
                #[allow(clippy::cast_possible_truncation)]
                temperature: settings.temperature.unwrap_or(0.0) as f32,
                max_tokens: settings.max_tokens,
                budgets,
            })
        }

        /// The engine (for its status and unloading).
        pub fn engine(&self) -> &Arc<Engine> {
            &self.engine
        }
    }

    fn failed(e: LocalError) -> ProviderError {
        ProviderError::Failed {
            provider: NAME.into(),
            message: e.to_string(),
        }
    }

    /// What the worker sends back, owned (it crosses to the async side).
    enum Msg {
        Piece(String),
        Done(Result<maskflow_local::Generation, LocalError>),
    }

    impl LocalProvider {
        async fn run(
            &self,
            request: &LlmRequest,
            on_delta: DeltaSink<'_>,
        ) -> Result<LlmReply, ProviderError> {
            let budget = self.budgets.max_tokens(&request.role, self.max_tokens);
            let messages = request
                .messages
                .iter()
                .map(|m| {
                    let who = match m.role {
                        ChatRole::System => Speaker::System,
                        ChatRole::User => Speaker::User,
                        ChatRole::Assistant => Speaker::Assistant,
                    };
                    (who, m.content.clone())
                })
                .collect();
            let cancel = Arc::new(AtomicBool::new(false));
            let _stop = CancelOnDrop(cancel.clone());
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
            self.engine.submit(
                Request {
                    messages,
                    schema: request.schema.clone(),
                    max_tokens: budget,
                    temperature: self.temperature,
                },
                cancel,
                Box::new(move |event| {
                    let _ = tx.send(match event {
                        Event::Piece(p) => Msg::Piece(p.to_owned()),
                        Event::Done(r) => Msg::Done(r),
                    });
                }),
            );
            let generation = loop {
                match rx.recv().await {
                    Some(Msg::Piece(p)) => on_delta(&p),
                    Some(Msg::Done(r)) => break r,
                    None => break Err(LocalError::WorkerGone),
                }
            };
            let generation = generation.map_err(|e| match e {
                LocalError::Cancelled => ProviderError::Cancelled {
                    provider: NAME.into(),
                    reason: "stopped".into(),
                },
                LocalError::ContextOverflow {
                    prompt_tokens,
                    window,
                } => ProviderError::ContextOverflow {
                    role: request.role.key(),
                    model: self.model.clone(),
                    prompt_tokens,
                    window,
                },
                other => failed(other),
            })?;
            call::record_usage(
                Some(i64::from(generation.prompt_tokens)),
                Some(i64::from(generation.output_tokens)),
            );
            if generation.cut {
                return Err(ProviderError::BudgetExceeded {
                    role: request.role.key(),
                    budget: generation.limit,
                    window: (generation.limit < budget).then_some(generation.window),
                });
            }
            Ok(LlmReply {
                text: generation.text,
            })
        }
    }

    impl Provider for LocalProvider {
        fn name(&self) -> &str {
            NAME
        }

        fn is_local(&self) -> bool {
            true
        }

        // Every structured reply is sampled under the schema's grammar.
        fn takes_schema(&self) -> bool {
            true
        }

        fn model(&self) -> &str {
            &self.model
        }

        fn context_window(&self) -> BoxFuture<'_, Option<u32>> {
            let w = self
                .engine
                .options()
                .context
                .or(self.engine.status().context);
            Box::pin(async move { w })
        }

        fn probe(&self) -> BoxFuture<'_, Result<String, ProviderError>> {
            let line = check(self.engine.model());
            Box::pin(async move { line })
        }

        fn complete<'a>(
            &'a self,
            request: &'a LlmRequest,
            on_delta: DeltaSink<'a>,
        ) -> BoxFuture<'a, Result<LlmReply, ProviderError>> {
            Box::pin(self.run(request, on_delta))
        }
    }
}
