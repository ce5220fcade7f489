//! NeuroChess (seed 004: S. Thrun, "Learning To Play the Game of Chess", NIPS 7, 1995): an
//! evaluation net V learned from the final outcome of games by TD(0), its learning biased by
//! explanation-based slopes taken from a chess model M trained on expert games (EBNN), fitted
//! with Tangent-Prop; games sampled as an expert prefix completed by self-play.
//!
//! | seed | what | where |
//! |---|---|---|
//! | §4 "Smoothness" | 175 hand-designed board features, GNU Chess's terms in spirit | [`features`] |
//! | §2 Eq. 1–2, §3 | V (175 → 0–80 → 1, tanh) and Tangent-Prop's gradient | [`model`] |
//! | §3 "the chess model M" | the chess model M (175-165-175) and its vector–Jacobian product | [`chess_model`] |
//! | §5 "a database of 120,000 expert games" | our expert games (Stockfish 15.1), M's pairs (s_t, s_{t+2}) | [`data`] |
//! | §2 Eq. 2, §3 Eq. 3–5, §4 | TD(0) targets (γ = 0.98, final boards ×20, quiescent boards), EBNN slopes, M's training, self-play | [`train`] |
//! | §4 "Sampling", §5 | the run: M, then V by plain back-propagation and by EBNN from the same seed, snapshots for Table 1 | [`pipeline`] |
//! | — | what a resumed run takes up from its folder, each part checked against the run | [`resume`] |
//! | §5 "learned successfully to protect its material" | V's material sense per snapshot: a piece up and down on the start, material pairs of held-out games ordered right | [`material`] |
//! | §5 "the same search" | V in our alpha-beta (`neurochess`, `neurochess-bp` in the registry), in play and in self-play | [`infer`] (`VEval`), [`player`] (registration) |
//! | §3 EBNN's slopes (beyond the seed: why they flatten V) | EBNN's slope targets per feature group against V's own slope, M's Jacobian diagonal (`neurochess-slopes`) | [`slopes`] |

pub mod bench;
pub mod chess_model;
pub mod data;
pub mod feature_set;
pub mod features;
pub mod infer;
pub mod material;
pub mod model;
pub mod pipeline;
pub mod player;
pub mod resume;
pub mod slopes;
pub mod train;
