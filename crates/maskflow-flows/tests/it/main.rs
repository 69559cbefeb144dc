//! The flows' integration tests: the engine over [`LocalStorage`]'s database
//! in a temporary data folder, with replayed (or small test) back ends, and
//! the checkpoint-store contract. One binary, as every crate has.
//!
//! [`LocalStorage`]: maskflow_flows::testing::LocalStorage

mod contract;
mod engine;
mod fanin;
mod fanout;
mod history;
mod join_exhausted;
mod join_timeout;
mod known_agents;
mod manual_task;
mod post_files;
mod retry_due;
mod seed_export;
mod seed_imports;
mod seed_run;
mod steer;
mod steer_items;
mod support;
