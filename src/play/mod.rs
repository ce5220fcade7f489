//! Playing: UCI engine loop, match runner, Elo statistics, opening suites, and the client
//! for external UCI engines.

pub mod elo;
pub mod match_runner;
pub mod openings;
pub mod uci_client;
