//! Maskflow's core: the app both shells (the desktop app and `maskflow
//! serve`) call. It owns workflows and their versions, the version status
//! table, the validator → clarifier → builder conversation, the build, the
//! SQLite store (all of the app's SQL) and the wiring of the lower crates
//! (the LLM back ends, the privacy guard, the flows, the runner). Callers
//! name a lower crate by its own name, so every crate edge is visible.
//!
//! It must not depend on Tauri or on any HTTP server (checked by
//! `scripts/structure.py`), and nothing below it may depend on it: the shells generate
//! their commands and routes from the one list of calls in [`api`]
//! ([`api_calls!`]), each call one [`Service`] method.

#![deny(missing_docs)]

// The API list names types as `maskflow_core::…`, in core as in the shells.
extern crate self as maskflow_core;

pub mod api;
mod api_more;
pub mod builder;
pub mod categories;
pub mod conversation;
pub mod data_notes;
pub mod disk;
pub mod error;
pub mod events;
pub mod file_names;
pub mod fit;
pub mod names;
pub mod needs;
pub mod output_compare;
#[cfg(test)]
mod privacy_eval;
pub mod reads;
pub mod service;
pub mod settings;
pub mod shape;
pub mod store;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod versions;
pub mod views;

pub use error::{CoreError, ErrorCode};
pub use events::Event;
pub use service::{Backends, BackendsError, Service, ServiceConfig};
pub use versions::{Status, VersionEvent};
