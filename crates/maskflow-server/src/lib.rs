//! The HTTP + WebSocket shell over `maskflow-core`, as a library so that the
//! `maskflow` binary and the integration tests share one router.
//!
//! Thin glue only: each route calls one [`maskflow_core::Service`] method.

#![deny(missing_docs)]

pub mod api;
pub mod mcp;
pub mod resume_view;
pub mod schedule_units;
pub mod serve;
pub mod spinner;
pub mod terminal;
