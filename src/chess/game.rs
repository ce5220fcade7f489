//! Game rules beyond move legality: checkmate, stalemate, the fifty-move rule, threefold
//! repetition and insufficient material; and `Game`, a start position with its moves.

use super::bitboard::Bitboard;
use super::moves::Move;
use super::notation::NotationError;
use super::position::Position;
use super::types::{Color, Role};

/// How a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Win(Color),
    Draw,
}

impl Outcome {
    /// PGN result token: `1-0`, `0-1`, `1/2-1/2`.
    pub fn pgn(self) -> &'static str {
        match self {
            Outcome::Win(Color::White) => "1-0",
            Outcome::Win(Color::Black) => "0-1",
            Outcome::Draw => "1/2-1/2",
        }
    }

    pub fn from_pgn(s: &str) -> Option<Outcome> {
        match s {
            "1-0" => Some(Outcome::Win(Color::White)),
            "0-1" => Some(Outcome::Win(Color::Black)),
            "1/2-1/2" => Some(Outcome::Draw),
            _ => None,
        }
    }
}

/// Why the rules end a game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    Checkmate,
    Stalemate,
    FiftyMoves,
    Repetition,
    InsufficientMaterial,
}

impl Position {
    pub fn is_checkmate(&self) -> bool {
        self.is_check() && !self.has_legal_move()
    }

    pub fn is_stalemate(&self) -> bool {
        !self.is_check() && !self.has_legal_move()
    }

    /// Neither side can ever mate: K v K, K+minor v K, or only bishops all on one square colour.
    pub fn is_insufficient_material(&self) -> bool {
        let heavy = self.by_role(Role::Pawn) | self.by_role(Role::Rook) | self.by_role(Role::Queen);
        if heavy.any() {
            return false;
        }
        let knights = self.by_role(Role::Knight);
        let bishops = self.by_role(Role::Bishop);
        let minors = (knights | bishops).count();
        if minors <= 1 {
            return true;
        }
        const DARK: Bitboard = Bitboard(0xAA55_AA55_AA55_AA55);
        knights.is_empty() && ((bishops & DARK).is_empty() || (bishops & !DARK).is_empty())
    }

    /// Ending decided by this position alone (not repetition, which needs history).
    /// Checkmate takes precedence over the fifty-move rule.
    pub fn ending(&self) -> Option<Ending> {
        if !self.has_legal_move() {
            return Some(if self.is_check() { Ending::Checkmate } else { Ending::Stalemate });
        }
        if self.halfmove_clock() >= 100 {
            return Some(Ending::FiftyMoves);
        }
        if self.is_insufficient_material() {
            return Some(Ending::InsufficientMaterial);
        }
        None
    }
}

/// A game: a start position and the moves played, with the zobrist keys of every position
/// so that repetitions can be counted.
#[derive(Clone, Debug)]
pub struct Game {
    start: Position,
    current: Position,
    moves: Vec<Move>,
    keys: Vec<u64>,
}

impl Default for Game {
    fn default() -> Self {
        Game::new(Position::startpos())
    }
}

impl Game {
    pub fn new(start: Position) -> Game {
        Game { start, current: start, moves: Vec::new(), keys: vec![start.hash()] }
    }

    pub fn start(&self) -> &Position {
        &self.start
    }

    pub fn position(&self) -> &Position {
        &self.current
    }

    pub fn moves(&self) -> &[Move] {
        &self.moves
    }

    /// Zobrist keys of the start position and of the position after each move.
    pub fn keys(&self) -> &[u64] {
        &self.keys
    }

    /// Plays a move after checking that it is legal.
    pub fn play(&mut self, m: Move) -> Result<(), NotationError> {
        if !self.current.is_legal(m) {
            return Err(NotationError {
                input: m.to_string(),
                message: format!("illegal in position {}", self.current.fen()),
            });
        }
        self.play_unchecked(m);
        Ok(())
    }

    /// Plays a move known to be legal (e.g. just generated).
    pub fn play_unchecked(&mut self, m: Move) {
        self.current.play(m);
        self.moves.push(m);
        self.keys.push(self.current.hash());
    }

    /// Parses and plays a SAN move.
    pub fn play_san(&mut self, san: &str) -> Result<Move, NotationError> {
        let m = self.current.parse_san(san)?;
        self.play_unchecked(m);
        Ok(m)
    }

    /// How many times the current position has occurred (same pieces, side, castling and
    /// en-passant rights), looking back only as far as the last capture or pawn move.
    pub fn repetitions(&self) -> usize {
        let key = self.current.hash();
        let window = (self.current.halfmove_clock() as usize).min(self.keys.len() - 1);
        let n = self.keys.len();
        self.keys[n - 1 - window..].iter().rev().step_by(2).filter(|&&k| k == key).count()
    }

    /// The ending the rules impose on the current position, if any.
    pub fn ending(&self) -> Option<Ending> {
        if let Some(e) = self.current.ending() {
            return Some(e);
        }
        if self.repetitions() >= 3 {
            return Some(Ending::Repetition);
        }
        None
    }

    /// The result the rules give now, if the game is over.
    pub fn outcome(&self) -> Option<(Outcome, Ending)> {
        self.ending().map(|e| match e {
            Ending::Checkmate => (Outcome::Win(self.current.turn().flip()), e),
            _ => (Outcome::Draw, e),
        })
    }
}
