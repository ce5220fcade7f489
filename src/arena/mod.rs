//! Where engines meet: the client for external UCI engines (our own included, run as a
//! process), games and matches between them with our own rules and clock, adjudication,
//! Elo statistics (pentanomial, SPRT, the rating fit of a gauntlet), the tournament (every
//! player in one event, one joint rating fit), learning curves
//! (a system's snapshots against one opponent), opening suites,
//! engine-vs-engine game generation for the corpus, and the labeller that scores sampled
//! positions with an engine (seed 001's labelled sets).

pub mod adjudication;
pub mod clock_curve;
pub mod curve;
pub mod curve_seeds;
pub mod datagen;
pub mod datagen_file;
pub mod elo;
pub mod escape;
pub mod labeller;
pub mod match_runner;
pub mod openings;
pub mod tournament;
pub mod uci_client;
