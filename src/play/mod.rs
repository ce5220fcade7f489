//! Playing: UCI engine loop, match runner, Elo statistics, opening suites, and the client
//! for external UCI engines.

pub mod uci_client;
pub mod engine;
