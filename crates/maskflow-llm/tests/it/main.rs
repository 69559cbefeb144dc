//! The LLM crate's integration tests, one binary, one module per area.

// The OS keyring back end exists with the `keyring` feature (a default).
#[cfg(feature = "keyring")]
mod keyring;
