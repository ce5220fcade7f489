//! Deep belief network evaluators (seed 001: "Deep learning for chess … deep belief
//! networks", IJCTE 10(5), 2018): positions as 772 bits, hidden layers pretrained as RBMs and
//! fine-tuned with dropout, three ways to read a position (result class, engine score,
//! quantized score), each played through the same alpha-beta as every other evaluator.
//!
//! | seed | what | where |
//! |---|---|---|
//! | §III.A dataset | positions of strong games; labels: result (W/D/L), a Stockfish score in [−300, 300], normalised | `data::labels` (shared), the labeller `arena::labeller`, [`data`] |
//! | §III.A input | 12 × 64 piece bits + 4 castling rights = 772 (no side to move; 773 as our variant) | [`features`] |
//! | §III.A "Equation 2" | the score quantized into seven classes (bins ours: not in the text) | [`targets`] |
//! | §II.B, III.B pre-training | each hidden layer an RBM trained by contrastive divergence, layer by layer | [`rbm`], [`train::pretrain`] |
//! | §III.B models | [772,100,100,100], [772,400,200,100], [772,600,400,200,100]; ReLU; softmax + cross-entropy or tanh + Huber | [`model`] |
//! | §II.C, III.B fine-tuning | SGD, lr 0.005 × 0.98^epoch, batch 32, 200 epochs, dropout 0.5 | [`train::finetune`], [`pipeline::Profile::paper`] |
//! | §III.C evaluation | 10-fold cross-validation over positions (and ours: whole games held out) | [`data::Split`], [`pipeline::table`] |
//! | §IV alpha-beta + TT | the net as the evaluator of the shared search | [`infer`] (`DbnEval`, each head's reading), [`player`] (registration), `search` (shared), `players` |
//! | §IV.B skill level | 300 games among the three heads | `arena` (`deepchess match`); figures in docs/results.md |

pub mod bench;
pub mod data;
pub mod features;
pub mod infer;
pub mod model;
pub mod pipeline;
pub mod player;
pub mod rbm;
pub mod targets;
pub mod train;
