//! DeepChess (David, Netanyahu & Wolf, 2016; seed 000): a network that compares two
//! positions, learned from game outcomes alone, inside an alpha-beta that compares positions
//! instead of scoring them.
//!
//! | paper | what | where |
//! |---|---|---|
//! | §3 Dataset | decisive games; ten positions a game, not from the first five moves, none whose played move is a capture; whole games held out | `data::sample` (shared), `data::build` |
//! | §3 Dataset | 773 bits: 2 × 6 × 64 pieces, side to move, four castling rights | [`features`] |
//! | §3 Training Pos2Vec | stacked autoencoders 773-600-400-200-100, one layer at a time | [`train::pos2vec_layer`], schedule [`pipeline::Profile::paper`] |
//! | §3 Training DeepChess | two tied Pos2Vec towers, 400-200-100-2 softmax, fresh random (W, L) pairs each epoch | [`model::Net::pair_logits_stacked`] (tied towers as one batch), [`train::siamese`], [`step::PairStep`] (the data-parallel step), [`pairs::pair_batch`] |
//! | §3 Network distillation | 773-100-100-100 tower mimics the big one, then 100-100-2 on soft targets | [`train::distill_tower`], [`train::siamese`] with a teacher, [`model::Arch::small`] |
//! | §3 sparse first layer | under 5 % of the first layer's weights active | `tensor::layers::sparse` in training; in search the incremental first layer of [`infer::NetComparator`] |
//! | §4 comparison-based alpha-beta | `alpha_pos` / `beta_pos`, the net asked "is A better?", reversed for Black | `search` (shared) over [`infer::NetComparator`] |
//! | §4 Position hashing | Pos2Vec features kept by position | [`infer::FeatureCache`] |
//! | §5.1 Table 1 | uncompressed, distilled, small from scratch | [`pipeline::run`]; figures in docs/results.md |
//! | §5.1 "randomly selected" positions, 98.2 % training / 98.0 % validation | both protocols on one run: `data --split both`, [`pairs::Validation`], profile [`pipeline::Profile::memorise`] | docs/results.md, "The paper's 98 %" |
//! | §5.1 static understanding, Fig. 2 | pairs of positions differing by one concept; the grandmasters' sacrifices ranked among their positions' moves | [`understanding`]; `deepchess compare --suite`; docs/results.md |
//! | §5.2 Table 2 | against a handcrafted evaluator in the same search | `eval::Handcrafted`, `arena`; figures in docs/results.md |
//!
//! Beyond the paper: the compact student the engine plays with ([`model::Arch::compact`],
//! phase `compact` of [`pipeline`]), same-game and material pairs ([`pairs::AuxPairs`]), the
//! search-side layout of [`infer`] (per-position head halves, half-precision SIMD layers,
//! the antisymmetric reading of the head, the draw reference), the value student (phase
//! `value`, [`model::ValueNet`]) and that student taught by its own search ([`bootstrap`],
//! phase `searched`); the run's hyper-parameters are in [`profile`].

pub mod accuracy;
pub mod bench;
pub mod bench_tensor;
pub mod bootstrap;
pub mod compare;
pub mod features;
pub mod infer;
pub mod model;
pub mod pairs;
pub mod pipeline;
pub mod player;
pub mod profile;
pub mod step;
pub mod understanding;
pub mod train;
