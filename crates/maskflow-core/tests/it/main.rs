//! Core's integration tests, one binary, one module per area; `common`
//! holds what they share.

mod common;

mod build;
mod build_plan_review;
mod providers;
mod real_roles;
mod real_servers;
mod structured;
