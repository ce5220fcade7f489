//! Chess rules: squares, bitboards, attack tables, positions, legal move generation,
//! notation (FEN, UCI, SAN), games and their results, PGN, perft.

pub mod attacks;
pub mod bitboard;
pub mod fen;
pub mod game;
pub mod movegen;
pub mod moves;
pub mod notation;
pub mod pgn;
pub mod perft;
pub mod position;
pub mod pseudo;
pub mod threats;
pub mod types;
pub mod zobrist;

pub use bitboard::Bitboard;
pub use fen::FenError;
pub use game::{Ending, Game, Outcome};
pub use notation::NotationError;
pub use moves::{Move, MoveList, PieceMoves};
pub use position::Position;
pub use types::{Color, Piece, Role, Square};
