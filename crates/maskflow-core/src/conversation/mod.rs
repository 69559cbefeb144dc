//! The builder conversation's pure parts: the prompts of the validator,
//! clarifier and builder roles (and of flows' agents), and the spec a
//! workflow's script declares. The service runs the turns
//! (`service/conversation.rs`: validator → clarifier → build); nothing here
//! does I/O.

pub mod current;
#[cfg(test)]
mod egress_tests;
pub mod house_rules;
pub mod profile_text;
#[cfg(test)]
mod profile_text_tests;
pub mod prompts;
pub mod sizes;
pub mod spec;
