//! The worker thread: owns llama.cpp's backend, model and context, runs one
//! request at a time, and unloads the model when idle.

use std::num::NonZeroU32;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, OnceLock};

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;

use crate::sizing::{available_memory, context_size, default_threads, kv_bytes_per_token};
use crate::{EngineOptions, Event, FileStamp, Generation, Job, LocalError, Request, Sink, Status};

/// Prompt tokens decoded per batch: small enough that a cancel during a
/// long prompt is seen within a few milliseconds, large enough to keep
/// llama.cpp's matrix kernels busy.
const PROMPT_BATCH: usize = 64;
/// How far back the DRY sampler looks for a repeated sequence.
const DRY_LAST_N: i32 = 1024;
/// The fewest reply tokens a prompt must leave room for.
const MIN_REPLY: u32 = 64;

/// llama.cpp's process-wide backend: it may be initialised only once.
fn backend() -> Result<&'static LlamaBackend, LocalError> {
    static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            // llama.cpp logs every tensor to stderr; the app has its own words.
            llama_cpp_2::send_logs_to_tracing(
                llama_cpp_2::LogOptions::default().with_logs_enabled(false),
            );
            LlamaBackend::init().map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| LocalError::Engine(format!("llama.cpp could not start: {e}")))
}

pub(crate) struct Worker {
    options: EngineOptions,
    status: Arc<Mutex<Status>>,
    /// The model file's size and time when it last matched its SHA-256.
    verified: Option<FileStamp>,
}

impl Worker {
    pub(crate) fn new(options: EngineOptions, status: Arc<Mutex<Status>>) -> Self {
        Self {
            options,
            status,
            verified: None,
        }
    }

    fn set_status(&self, f: impl FnOnce(&mut Status)) {
        f(&mut self.status.lock().unwrap_or_else(|e| e.into_inner()));
    }

    /// Serves jobs until the engine is dropped: loads the model for a
    /// request, keeps it while requests come, unloads it after the idle
    /// timeout (or when asked).
    pub(crate) fn run(mut self, jobs: Receiver<Job>) {
        let idle = self.options.idle;
        // Unloaded: wait as long as it takes for a request.
        while let Ok(job) = jobs.recv() {
            let (request, cancel, mut sink) = match job {
                Job::Generate {
                    request,
                    cancel,
                    sink,
                } => (request, cancel, sink),
                Job::Unload(done) => {
                    let _ = done.send(());
                    continue;
                }
            };
            let model = match self.load() {
                Ok(m) => m,
                Err(e) => {
                    sink(Event::Done(Err(e)));
                    continue;
                }
            };
            let mut loaded = match Loaded::new(&model, &self) {
                Ok(l) => l,
                Err(e) => {
                    sink(Event::Done(Err(e)));
                    continue;
                }
            };
            self.set_status(|s| {
                s.loaded = true;
                s.context = Some(loaded.window);
            });
            loaded.serve(request, &cancel, &mut sink);
            // Loaded: serve until idle for too long, asked to unload, or gone.
            let done = loop {
                match jobs.recv_timeout(idle) {
                    Ok(Job::Generate {
                        request,
                        cancel,
                        mut sink,
                    }) => loaded.serve(request, &cancel, &mut sink),
                    Ok(Job::Unload(done)) => break Some(done),
                    Err(RecvTimeoutError::Timeout) => break None,
                    Err(RecvTimeoutError::Disconnected) => return,
                }
            };
            drop(loaded);
            drop(model);
            self.set_status(|s| s.loaded = false);
            if let Some(done) = done {
                let _ = done.send(());
            }
        }
    }

    fn load(&mut self) -> Result<LlamaModel, LocalError> {
        crate::check_model_file(&self.options.model)?;
        if let Some(known) = &self.options.known {
            self.verified = Some(known.verify(&self.options.model, self.verified)?);
        }
        let backend = backend()?;
        // Every layer on the GPU when llama.cpp was built with one (Metal,
        // CUDA, Vulkan features); none otherwise.
        let gpu = backend.supports_gpu_offload();
        let params = LlamaModelParams::default().with_n_gpu_layers(if gpu { u32::MAX } else { 0 });
        self.set_status(|s| s.gpu_offload = gpu);
        LlamaModel::load_from_file(backend, &self.options.model, &params).map_err(|_| {
            LocalError::Load {
                path: self.options.model.clone(),
            }
        })
    }
}

/// A loaded model's context and what its KV cache holds.
struct Loaded<'m> {
    model: &'m LlamaModel,
    ctx: LlamaContext<'m>,
    template: LlamaChatTemplate,
    /// The tokens whose keys and values are in the cache, in order: a
    /// request that starts the same way (a repair round, the next turn)
    /// decodes only what differs.
    cached: Vec<LlamaToken>,
    window: u32,
}

impl<'m> Loaded<'m> {
    fn new(model: &'m LlamaModel, worker: &Worker) -> Result<Self, LocalError> {
        let backend = backend()?;
        let window = worker.options.context.unwrap_or_else(|| {
            let per = kv_bytes_per_token(
                model.n_layer(),
                u32::try_from(model.n_embd()).unwrap_or(0),
                model.n_head(),
                model.n_head_kv(),
            );
            context_size(model.n_ctx_train(), per, available_memory())
        });
        let threads = worker.options.threads.unwrap_or_else(default_threads);
        let threads = i32::try_from(threads).unwrap_or(1);
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(window))
            .with_n_batch(PROMPT_BATCH as u32)
            .with_n_ubatch(PROMPT_BATCH as u32)
            .with_n_threads(threads)
            .with_n_threads_batch(threads);
        let ctx = model
            .new_context(backend, params)
            .map_err(|e| LocalError::Engine(format!("cannot make a context: {e}")))?;
        // The model's own template; ChatML when the file has none.
        let template = model
            .chat_template(None)
            .or_else(|_| LlamaChatTemplate::new("chatml"))
            .map_err(|e| LocalError::Engine(format!("no chat template: {e}")))?;
        Ok(Self {
            model,
            window: ctx.n_ctx(),
            ctx,
            template,
            cached: Vec::new(),
        })
    }

    fn serve(&mut self, request: Request, cancel: &AtomicBool, sink: &mut Sink) {
        let result = self.generate(&request, cancel, sink);
        if result.is_err() {
            // What the cache holds is unknown after a failed or stopped
            // decode: start afresh next time.
            self.ctx.clear_kv_cache();
            self.cached.clear();
        }
        sink(Event::Done(result));
    }

    fn prompt(&self, request: &Request) -> Result<Vec<LlamaToken>, LocalError> {
        let chat = request
            .messages
            .iter()
            .map(|(who, text)| LlamaChatMessage::new(who.as_str().to_owned(), text.clone()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| LocalError::Engine(format!("a message cannot be passed: {e}")))?;
        let text = self
            .model
            .apply_chat_template(&self.template, &chat, true)
            .map_err(|e| LocalError::Engine(format!("the chat template failed: {e}")))?;
        Ok(self.model.vocab().tokenize(text.as_bytes(), true, true))
    }

    fn generate(
        &mut self,
        request: &Request,
        cancel: &AtomicBool,
        sink: &mut Sink,
    ) -> Result<Generation, LocalError> {
        let engine = |e: &dyn std::fmt::Display| LocalError::Engine(e.to_string());
        let tokens = self.prompt(request)?;
        let prompt_tokens = u32::try_from(tokens.len()).unwrap_or(u32::MAX);
        if prompt_tokens.saturating_add(MIN_REPLY) > self.window {
            return Err(LocalError::ContextOverflow {
                prompt_tokens,
                window: self.window,
            });
        }
        let limit = request.max_tokens.min(self.window - prompt_tokens);
        let mut sampler = Sampling::new(self.model, request)?;
        // Keep the cached prefix; at least the last prompt token is decoded
        // again, for its logits.
        let mut keep = self
            .cached
            .iter()
            .zip(&tokens)
            .take_while(|(a, b)| a == b)
            .count();
        keep = keep.min(tokens.len() - 1);
        self.ctx
            .kv_cache_seq_rm(0, Some(keep as u32), None)
            .map_err(|e| engine(&e))?;
        self.cached.truncate(keep);
        let mut batch = LlamaBatch::new(PROMPT_BATCH, 1);
        for chunk in tokens[keep..].chunks(PROMPT_BATCH) {
            if cancel.load(Ordering::Relaxed) {
                return Err(LocalError::Cancelled);
            }
            batch.clear();
            for &t in chunk {
                let pos = i32::try_from(self.cached.len()).map_err(|e| engine(&e))?;
                let last = self.cached.len() + 1 == tokens.len();
                batch.add(t, pos, &[0], last).map_err(|e| engine(&e))?;
                self.cached.push(t);
            }
            self.ctx.decode(&mut batch).map_err(|e| engine(&e))?;
        }
        let model = self.model;
        let vocab = model.vocab();
        let mut text = String::new();
        let mut pending: Vec<u8> = Vec::new();
        let mut output_tokens = 0u32;
        let mut ended = false;
        while output_tokens < limit {
            if cancel.load(Ordering::Relaxed) {
                return Err(LocalError::Cancelled);
            }
            let token = sampler.next(&self.ctx, batch.n_tokens() - 1)?;
            if vocab.is_eog(token) {
                ended = true;
                break;
            }
            output_tokens += 1;
            pending.extend(vocab.token_to_piece(token, false, None));
            let valid = match std::str::from_utf8(&pending) {
                Ok(s) => s.len(),
                Err(e) => e.valid_up_to(),
            };
            if valid > 0 {
                let piece = String::from_utf8_lossy(&pending[..valid]).into_owned();
                pending.drain(..valid);
                text.push_str(&piece);
                sink(Event::Piece(&piece));
            }
            batch.clear();
            let pos = i32::try_from(self.cached.len()).map_err(|e| engine(&e))?;
            batch.add(token, pos, &[0], true).map_err(|e| engine(&e))?;
            self.cached.push(token);
            self.ctx.decode(&mut batch).map_err(|e| engine(&e))?;
        }
        if !pending.is_empty() {
            let rest = String::from_utf8_lossy(&pending).into_owned();
            text.push_str(&rest);
            sink(Event::Piece(&rest));
        }
        Ok(Generation {
            text,
            prompt_tokens,
            output_tokens,
            cut: !ended,
            limit,
            window: self.window,
        })
    }
}

/// How the next token is drawn: the chain (DRY, so a small model cannot
/// loop on one phrase until its budget is gone; then greedy at temperature
/// 0, else top-k/top-p and the temperature) and, for a structured reply, the
/// grammar of its schema. The grammar is checked against the chain's pick
/// first and applied to the whole vocabulary only when it refuses that
/// pick (what llama.cpp's own server does: filtering ~50,000 candidates
/// through the grammar at every token made generation several times slower).
struct Sampling {
    chain: LlamaSampler,
    grammar: Option<LlamaSampler>,
}

impl Sampling {
    fn new(model: &LlamaModel, request: &Request) -> Result<Self, LocalError> {
        let grammar = match &request.schema {
            Some(schema) => {
                let gbnf = crate::grammar::schema_grammar(schema)?;
                Some(
                    LlamaSampler::grammar(model, &gbnf, "root")
                        .map_err(|e| LocalError::Grammar(e.to_string()))?,
                )
            }
            None => None,
        };
        // llama.cpp's DRY defaults (multiplier 0.8, base 1.75, allowed
        // length 2, its sequence breakers) over the last 1,024 tokens (a
        // negative "whole context" disables it in this API).
        let mut chain = vec![LlamaSampler::dry(
            model,
            0.8,
            1.75,
            2,
            DRY_LAST_N,
            ["\n", ":", "\"", "*"],
        )];
        // Ollama's default repeat penalty (1.1 over the last 64 tokens):
        // DRY alone lets a list go on item after item.
        chain.push(LlamaSampler::penalties(model.n_vocab(), 64, 1.1, 0.0, 0.0));
        if request.temperature <= 0.0 {
            chain.push(LlamaSampler::greedy());
        } else {
            chain.push(LlamaSampler::top_k(40));
            chain.push(LlamaSampler::top_p(0.95, 1));
            chain.push(LlamaSampler::temp(request.temperature));
            chain.push(LlamaSampler::dist(0x6d61_736b));
        }
        Ok(Self {
            chain: LlamaSampler::chain_simple(chain),
            grammar,
        })
    }

    /// The next token from the logits of batch position `idx`, accepted
    /// into the chain and the grammar (once: accepting twice aborts).
    fn next(&mut self, ctx: &LlamaContext<'_>, idx: i32) -> Result<LlamaToken, LocalError> {
        let none = || LocalError::Engine("the sampler chose no token".into());
        let mut candidates = ctx.token_data_array_ith(idx);
        candidates.apply_sampler(&mut self.chain);
        let mut token = candidates.selected_token().ok_or_else(none)?;
        if let Some(grammar) = &mut self.grammar {
            let mut pick =
                LlamaTokenDataArray::new(vec![LlamaTokenData::new(token, 1.0, 0.0)], false);
            pick.apply_sampler(grammar);
            if pick
                .data
                .first()
                .is_none_or(|d| d.logit() == f32::NEG_INFINITY)
            {
                let mut all = ctx.token_data_array_ith(idx);
                all.apply_sampler(grammar);
                all.apply_sampler(&mut self.chain);
                token = all.selected_token().ok_or_else(none)?;
            }
            grammar.accept(token);
        }
        self.chain.accept(token);
        Ok(token)
    }
}
