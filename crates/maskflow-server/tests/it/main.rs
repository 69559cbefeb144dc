//! The HTTP server's integration tests, one binary (linking the server once),
//! one module per area; `common` holds what they share.

mod common;

mod access;
mod agents;
mod api;
mod api_list;
mod backends;
mod budgets;
mod build_cancel;
mod build_run;
mod cancel;
mod checkpoint_retention;
mod cli_interrupt;
mod context_fit;
mod conversations;
mod extract_cli;
mod flow_steer;
mod flows;
mod flows_fanout;
mod flows_mermaid;
mod flows_seed_imports;
mod history;
mod hostile;
mod house_rules;
mod inputs_by_name;
mod leases;
mod local_backend;
mod manual_restart;
mod manual_restart_phases;
mod outcomes;
mod preflight;
mod python_envs;
mod python_setting;
mod run_shape;
mod sandbox;
mod secrets;
mod storage;
mod tasks;
mod terminal;
mod upload_load;
mod ws_cancel;
mod ws_seed_events;
