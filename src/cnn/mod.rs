//! The convolutional win/loss classifier (seed 003: "Chess position evaluation with
//! convolutional neural network in Julia", a Mocha.jl blog post): positions as an 8×8×7
//! volume, a small convolutional network trained to say which side won the game a position
//! comes from, judged on validation and later test games, then played as an evaluator.
//!
//! | seed | what | where |
//! |---|---|---|
//! | "Chess position representation" | six piece-type planes (±1 by colour) and a side-to-move plane | [`features`] |
//! | "Chess datasets" | every position of decisive games, labelled by the winner; checkmate and rating filters; train / validation / later test | `data::build` (shared, `--mate-only`, `--min-elo`), [`data`] |
//! | "Convolutional Layer", "Pooling layer" | convolution and max pooling, forward and backward | `tensor::layers::conv`, `tensor::layers::pool` (shared) |
//! | "Network architecture" | conv 400@4×4 → max pool 2×2/2 → conv 200@2×2 → ip 70 sigmoid, dropout 0.2 → ip 1 sigmoid, BCE | [`model`] |
//! | "Solving the problem" | SGD, momentum 0.9, L2 0.0005, lr 0.01·(1 + 0.0001·iter)^−0.75, batch 1024, ~5 epochs | [`train`], `tensor::optim` (shared), [`pipeline::Profile::paper`] |
//! | "Test set accuracy", "final results" | accuracy at 0.5; the output buckets [0.9–1.0] … "difficult cases" [0.45–0.55] | [`metrics`], [`pipeline::results`] |
//! | (ours) play | the classifier's logit as the search's evaluator | [`infer`] (`CnnEval`), [`player`] (registration), `search` (shared), `players` |

pub mod bench;
pub mod data;
pub mod features;
pub mod infer;
pub mod metrics;
pub mod model;
pub mod pipeline;
pub mod player;
pub mod train;
