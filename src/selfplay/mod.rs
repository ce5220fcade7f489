//! The self-play agents of seed 002 ("Teaching an AI to play chess by itself": two agents that
//! know only the rules and learn by playing each other, by Q-learning on a piece selector and
//! six move selector CNNs each).
//!
//! | seed | what | where |
//! |---|---|---|
//! | "Rewards" | piece values (1, 3, 3, 5, 9; the king 255, a mate here), −0.1 for a move that captures nothing, the reply subtracted | [`features`] (values), [`train`] (`agent_rewards`) |
//! | "State representation" | 8×8×6, +1 the agent's pieces, −1 the opponent's | [`features`] |
//! | "Selecting the action" | the piece selector composed with the best destination of each move selector, masked to legal squares | [`policy`] (the rule), [`infer`] (the nets it reads: `Infer`, `evaluate`; `Actor`, the agents choosing a move in self-play and in every measurement) |
//! | "The neural network architecture", initialisation | conv 32 → 128 → 32 (3×3, no padding, no pooling), dense 128, 64 outputs; U(±1e-7) / U(±1e-6) (the author recipe's; ours: U(±1/√fan_in)) | [`model`] |
//! | "Q-learning" | r + γ·max Q(s′, a′), γ = 0.99, for the piece selector and the moved piece's selector; MSE (ours: Huber δ 10; the author recipe keeps MSE); Adam | [`train`] (the update), [`recipe`] (its settings: ours, and the author's code: a fresh Adam 0.01 per move, masked targets on all seven nets) |
//! | the seed's environment | no check: a king left attacked may be taken (255), ending the game | [`train`] (`--env seed`; the episode stage's `king_capture`, `chess::pseudo`) |
//! | "Training", the milestones | profiles, recipes, the run, the milestone table and curves | [`pipeline`] |
//! | the milestones, measured | per batch: captures, pieces en prise, escapes in self-play; per 1,000 games: escapes on the held-out suite (`data/escape/`), games against a random mover and a greedy capturer | [`measure`] |
//! | (ours) the nets see the board | per net, the share of each layer's units alive on a fixed probe set, the output's spread across positions and across squares | [`health`] |
//! | (ours) can the shape see a hanging piece | the piece selectors taught en prise by labels, then asked on the escape suite | [`probe`] |
//! | (ours) play | the agents as a policy player (`qagent`) | [`infer`] (`QScorer`, the move scorer), [`player`] (registration) |

pub mod bench;
pub mod features;
pub mod health;
pub mod infer;
pub mod measure;
pub mod model;
pub mod pipeline;
pub mod player;
pub mod policy;
pub mod probe;
pub mod recipe;
pub mod train;
