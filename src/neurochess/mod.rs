//! NeuroChess (seed 004: S. Thrun, "Learning To Play the Game of Chess", NIPS 7, 1995): an
//! evaluation net V learned from the final outcome of games by TD(0), its learning biased by
//! explanation-based slopes taken from a chess model M trained on expert games (EBNN), fitted
//! with Tangent-Prop; games sampled as an expert prefix completed by self-play.
//!
//! | seed | what | where |
//! |---|---|---|
//! | §4 "Smoothness" | 175 hand-designed board features, GNU Chess's terms in spirit | [`features`] |

pub mod features;
pub mod model;
