//! Where engines meet: the client for external UCI engines (our own included, run as a
//! process), games and matches between them with our own rules and clock, adjudication,
//! Elo statistics (pentanomial, SPRT, the rating fit of a gauntlet), opening suites, and
//! engine-vs-engine game generation for the corpus.

pub mod adjudication;
pub mod datagen;
pub mod datagen_file;
pub mod elo;
pub mod match_runner;
pub mod openings;
pub mod uci_client;
