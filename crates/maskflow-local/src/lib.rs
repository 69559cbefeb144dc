//! Maskflow's embedded model: llama.cpp linked into the process (through
//! `llama-cpp-2`), so a prompt never has to leave the machine.
//!
//! One [`Engine`] per model file owns a dedicated worker thread; the thread
//! alone owns the model and its context (llama.cpp's objects are neither
//! shared nor moved), takes requests over a channel, streams each piece of
//! the reply back through the request's sink, stops at once when the
//! request's cancel flag is set (checked between prompt batches and between
//! tokens), constrains a structured reply with a grammar made from its JSON
//! schema, and unloads the model after an idle timeout.
//!
//! It knows nothing of privacy, the ledger, storage or the shells: it only
//! turns messages into text. The privacy guard wraps it from above, the same
//! way it wraps the network back ends.

#![deny(missing_docs)]

mod grammar;
mod sizing;
mod worker;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

pub use grammar::schema_grammar;
pub use sizing::{available_memory, context_size, default_threads, kv_bytes_per_token};

/// Whether this build offloads to a GPU (the `metal`, `cuda` or `vulkan`
/// feature).
pub const GPU_BUILT: bool = cfg!(any(feature = "metal", feature = "cuda", feature = "vulkan"));

/// How long an idle model stays loaded unless the settings say otherwise.
pub const DEFAULT_IDLE_MINUTES: u32 = 10;

/// Why the embedded model could not answer.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LocalError {
    /// The model file is missing or unreadable.
    #[error("the model file {path} cannot be read: {reason}")]
    ModelFile {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// llama.cpp could not load the file as a model.
    #[error("llama.cpp could not load {path} as a model (is it a GGUF file?)")]
    Load {
        /// The file.
        path: PathBuf,
    },
    /// llama.cpp itself could not start, or failed while working.
    #[error("the embedded model failed: {0}")]
    Engine(String),
    /// The request's JSON schema could not be turned into a grammar.
    #[error("the reply's JSON schema cannot be made into a grammar: {0}")]
    Grammar(String),
    /// The prompt does not fit the context, with room left for a reply.
    #[error("the prompt is {prompt_tokens} tokens but the context holds {window}")]
    ContextOverflow {
        /// The prompt's exact token count.
        prompt_tokens: u32,
        /// The context size.
        window: u32,
    },
    /// The request was cancelled.
    #[error("the request was cancelled")]
    Cancelled,
    /// The worker thread is gone (it panicked, or the engine was dropped).
    #[error("the embedded model's worker thread stopped")]
    WorkerGone,
}

/// How an engine runs a model.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EngineOptions {
    /// The GGUF file.
    pub model: PathBuf,
    /// The context size, overriding the one worked out from the model and
    /// the machine's memory.
    pub context: Option<u32>,
    /// CPU threads (default: [`default_threads`]).
    pub threads: Option<u32>,
    /// How long without a request before the model is unloaded.
    pub idle: Duration,
    /// What the file was when Maskflow added it, checked before each load.
    pub known: Option<KnownFile>,
}

impl EngineOptions {
    /// The defaults for `model`.
    pub fn new(model: impl Into<PathBuf>) -> Self {
        Self {
            model: model.into(),
            context: None,
            threads: None,
            idle: Duration::from_secs(u64::from(DEFAULT_IDLE_MINUTES) * 60),
            known: None,
        }
    }
}

/// A model file as Maskflow recorded it when the file was added: its
/// SHA-256 and, to spare hashing gigabytes before every load, its size and
/// modification time then. A file whose size or time differ is hashed again
/// before it loads, and refused when its SHA-256 changed (replaced or
/// damaged since).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct KnownFile {
    /// Lower-case hex.
    pub sha256: String,
    /// Its size when added.
    pub bytes: u64,
    /// Its modification time when added, in milliseconds since the epoch
    /// (`None`: not recorded, so it is hashed before its first load).
    pub modified_ms: Option<i64>,
}

/// A file's size and modification time (milliseconds since the epoch).
pub type FileStamp = (u64, Option<i64>);

impl KnownFile {
    /// Checks `path` against the record: at once when its size and time are
    /// the record's or `verified`'s (a stamp hashed before), else by hashing
    /// it. Returns the stamp now verified.
    pub fn verify(
        &self,
        path: &Path,
        verified: Option<FileStamp>,
    ) -> Result<FileStamp, LocalError> {
        use sha2::{Digest, Sha256};
        use std::io::Read;
        let err = |reason: String| LocalError::ModelFile {
            path: path.to_owned(),
            reason,
        };
        let mut file = std::fs::File::open(path).map_err(|e| err(e.to_string()))?;
        let meta = file.metadata().map_err(|e| err(e.to_string()))?;
        let stamp = (
            meta.len(),
            meta.modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .and_then(|d| i64::try_from(d.as_millis()).ok()),
        );
        let recorded = (self.bytes, self.modified_ms);
        if stamp.1.is_some() && (stamp == recorded || Some(stamp) == verified) {
            return Ok(stamp);
        }
        let mut hasher = Sha256::new();
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let n = file.read(&mut buf).map_err(|e| err(e.to_string()))?;
            if n == 0 {
                break;
            }
            hasher.update(&buf[..n]);
        }
        let found: String = hasher
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        if found != self.sha256 {
            return Err(err(format!(
                "it changed since it was added (its SHA-256 is {found}, not {}); remove the \
                 model and add or pull it again",
                self.sha256
            )));
        }
        Ok(stamp)
    }
}

/// Who says a message (the chat template's roles).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Speaker {
    /// Instructions.
    System,
    /// The user.
    User,
    /// The model.
    Assistant,
}

impl Speaker {
    fn as_str(self) -> &'static str {
        match self {
            Speaker::System => "system",
            Speaker::User => "user",
            Speaker::Assistant => "assistant",
        }
    }
}

/// One generation asked of the engine.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    /// The conversation, in order.
    pub messages: Vec<(Speaker, String)>,
    /// The JSON schema the reply must match (enforced by a grammar).
    pub schema: Option<serde_json::Value>,
    /// Most reply tokens (further capped by the room the context leaves).
    pub max_tokens: u32,
    /// Sampling temperature; 0 (or less) samples greedily.
    pub temperature: f32,
}

/// A finished generation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Generation {
    /// The reply.
    pub text: String,
    /// The prompt's tokens.
    pub prompt_tokens: u32,
    /// The reply's tokens.
    pub output_tokens: u32,
    /// Whether the reply stopped at its token limit instead of ending.
    pub cut: bool,
    /// The token limit that applied (the request's, or the context's room).
    pub limit: u32,
    /// The context size.
    pub window: u32,
}

/// What the worker tells a request's sink.
#[derive(Debug)]
pub enum Event<'a> {
    /// A piece of the reply.
    Piece(&'a str),
    /// The end, whatever it was.
    Done(Result<Generation, LocalError>),
}

/// Receives a request's events on the worker thread; it must not block.
pub type Sink = Box<dyn FnMut(Event<'_>) + Send>;

/// What a loaded engine runs with (for Settings and the bench).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Status {
    /// Whether the model is in memory.
    pub loaded: bool,
    /// The context size of the loaded (or last loaded) model.
    pub context: Option<u32>,
    /// CPU threads.
    pub threads: u32,
    /// Whether llama.cpp was built with a GPU back end and offloads to it.
    pub gpu_offload: bool,
}

pub(crate) enum Job {
    Generate {
        request: Request,
        cancel: Arc<AtomicBool>,
        sink: Sink,
    },
    Unload(Sender<()>),
}

/// The embedded model of one file: a handle on its worker thread.
#[derive(Debug)]
pub struct Engine {
    options: EngineOptions,
    jobs: Mutex<Sender<Job>>,
    status: Arc<Mutex<Status>>,
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Job::Generate { .. } => f.write_str("Job::Generate"),
            Job::Unload(_) => f.write_str("Job::Unload"),
        }
    }
}

impl Engine {
    /// Starts the worker thread of `options` (the model loads on the first
    /// request, not now).
    pub fn start(options: EngineOptions) -> Result<Self, LocalError> {
        let (tx, rx) = mpsc::channel();
        let status = Arc::new(Mutex::new(Status {
            threads: options.threads.unwrap_or_else(default_threads),
            ..Status::default()
        }));
        let worker = worker::Worker::new(options.clone(), status.clone());
        std::thread::Builder::new()
            .name("maskflow-local".into())
            .spawn(move || worker.run(rx))
            .map_err(|e| LocalError::Engine(format!("cannot start its thread: {e}")))?;
        Ok(Self {
            options,
            jobs: Mutex::new(tx),
            status,
        })
    }

    /// The engine of `options`, shared by every back end that names the same
    /// file and settings (one model in memory, not one per role); started
    /// when none is alive.
    pub fn shared(options: EngineOptions) -> Result<Arc<Self>, LocalError> {
        static ENGINES: OnceLock<Mutex<HashMap<EngineOptions, Weak<Engine>>>> = OnceLock::new();
        let mut engines = ENGINES
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        engines.retain(|_, e| e.strong_count() > 0);
        if let Some(engine) = engines.get(&options).and_then(Weak::upgrade) {
            return Ok(engine);
        }
        let engine = Arc::new(Self::start(options.clone())?);
        engines.insert(options, Arc::downgrade(&engine));
        Ok(engine)
    }

    /// The options it runs with.
    pub fn options(&self) -> &EngineOptions {
        &self.options
    }

    /// The model file.
    pub fn model(&self) -> &Path {
        &self.options.model
    }

    /// What it runs with now.
    pub fn status(&self) -> Status {
        self.status
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Queues `request`; `sink` gets its pieces and then its end, on the
    /// worker thread. Setting `cancel` stops it at the next batch or token.
    pub fn submit(&self, request: Request, cancel: Arc<AtomicBool>, mut sink: Sink) {
        let job = Job::Generate {
            request,
            cancel,
            sink,
        };
        let sent = self
            .jobs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .send(job);
        if let Err(mpsc::SendError(Job::Generate { sink: s, .. })) = sent {
            sink = s;
            sink(Event::Done(Err(LocalError::WorkerGone)));
        }
    }

    /// Runs `request` and waits for its end (blocking: for tests, the bench
    /// and threads that are not async workers).
    pub fn generate(
        &self,
        request: Request,
        cancel: Arc<AtomicBool>,
        mut on_piece: impl FnMut(&str) + Send + 'static,
    ) -> Result<Generation, LocalError> {
        let (tx, rx) = mpsc::channel();
        self.submit(
            request,
            cancel,
            Box::new(move |event| match event {
                Event::Piece(p) => on_piece(p),
                Event::Done(r) => {
                    let _ = tx.send(r);
                }
            }),
        );
        rx.recv().unwrap_or(Err(LocalError::WorkerGone))
    }

    /// Unloads the model now, once the requests queued before are done
    /// (it loads again on the next request); returns when it is unloaded.
    pub fn unload(&self) {
        let (tx, rx) = mpsc::channel();
        let sent = self
            .jobs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .send(Job::Unload(tx));
        if sent.is_ok() {
            let _ = rx.recv();
        }
    }
}

/// Checks that `path` looks like a GGUF model (exists, starts with the
/// GGUF magic) without loading it; returns its size in bytes.
pub fn check_model_file(path: &Path) -> Result<u64, LocalError> {
    use std::io::Read;
    let err = |reason: String| LocalError::ModelFile {
        path: path.to_owned(),
        reason,
    };
    if !path.is_absolute() {
        return Err(err("the path must be absolute".into()));
    }
    let mut file = std::fs::File::open(path).map_err(|e| err(e.to_string()))?;
    let size = file.metadata().map_err(|e| err(e.to_string()))?.len();
    let mut magic = [0u8; 4];
    file.read_exact(&mut magic)
        .map_err(|_| err("it is too short to be a GGUF file".into()))?;
    if &magic != b"GGUF" {
        return Err(err("it is not a GGUF file (no GGUF header)".into()));
    }
    Ok(size)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 39, finding 8: the SHA-256 was never checked again, so a model
    /// file replaced after `models add` loaded as if it were the one added.
    #[test]
    fn a_model_file_changed_since_it_was_added_is_refused() {
        use sha2::Digest;
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("m.gguf");
        std::fs::write(&path, b"GGUF\x03\0\0\0 weights").expect("write");
        let sha256: String = sha2::Sha256::digest(b"GGUF\x03\0\0\0 weights")
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        // Not stamped: hashed, and it matches.
        let known = KnownFile {
            sha256,
            bytes: 16,
            modified_ms: None,
        };
        let stamp = known.verify(&path, None).expect("the file added");
        assert_eq!(stamp.0, 16);
        assert_eq!(known.verify(&path, Some(stamp)), Ok(stamp));
        // Same size, other bytes, a later time: hashed again and refused.
        std::fs::write(&path, b"GGUF\x03\0\0\0 WEIGHTS").expect("write");
        let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
        std::fs::File::options()
            .write(true)
            .open(&path)
            .and_then(|f| f.set_modified(later))
            .expect("touch");
        let e = known.verify(&path, Some(stamp)).expect_err("replaced");
        assert!(e.to_string().contains("changed since it was added"), "{e}");
        assert!(e.to_string().contains("m.gguf"), "{e}");
    }

    #[test]
    fn a_missing_or_foreign_file_is_refused_by_name() {
        let dir = tempfile::tempdir().expect("dir");
        let missing = dir.path().join("none.gguf");
        let e = check_model_file(&missing).expect_err("missing");
        assert!(e.to_string().contains("none.gguf"), "{e}");
        let foreign = dir.path().join("x.gguf");
        std::fs::write(&foreign, b"PK\x03\x04 not a model").expect("write");
        let e = check_model_file(&foreign).expect_err("foreign");
        assert!(e.to_string().contains("no GGUF header"), "{e}");
        let e = check_model_file(Path::new("rel.gguf")).expect_err("relative");
        assert!(e.to_string().contains("absolute"), "{e}");
        let good = dir.path().join("m.gguf");
        std::fs::write(&good, b"GGUF\x03\0\0\0").expect("write");
        assert_eq!(check_model_file(&good), Ok(8));
    }

    #[test]
    fn a_missing_model_fails_the_request_with_its_path() {
        let engine = Engine::start(EngineOptions::new("/nonexistent/model.gguf")).expect("start");
        let r = engine.generate(
            Request {
                messages: vec![(Speaker::User, "hi".into())],
                schema: None,
                max_tokens: 8,
                temperature: 0.0,
            },
            Arc::default(),
            |_| {},
        );
        let e = r.expect_err("no model");
        assert!(e.to_string().contains("/nonexistent/model.gguf"), "{e}");
        assert!(!engine.status().loaded);
    }
}
