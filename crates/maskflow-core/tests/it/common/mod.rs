//! What core's integration tests share.

pub mod llamacpp;
