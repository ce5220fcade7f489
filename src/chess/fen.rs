//! FEN parsing and printing. Parsing validates the position and names the field at fault.

use super::bitboard::Bitboard;
use super::position::{castle, Position};
use super::types::{Color, Piece, Role, Square};
use std::fmt;

/// What is wrong with a FEN string, and in which field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FenError {
    /// `"fen"`, `"board"`, `"side"`, `"castling"`, `"en passant"`, `"halfmove clock"`, `"fullmove number"`.
    pub field: &'static str,
    pub message: String,
}

/// A move counter: a number of at most 65535 (no legal game reaches it); a bigger number is
/// named as out of range, not as "not a number".
fn clock_field(s: &str, field: &'static str, what: &str) -> Result<u16, FenError> {
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        return s.parse::<u16>().map_err(|_| FenError { field, message: format!("{s} is out of range (at most {})", u16::MAX) });
    }
    Err(FenError { field, message: format!("expected {what}, found '{s}'") })
}

impl fmt::Display for FenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid FEN ({}): {}", self.field, self.message)
    }
}

impl std::error::Error for FenError {}

fn err<T>(field: &'static str, message: impl Into<String>) -> Result<T, FenError> {
    Err(FenError { field, message: message.into() })
}

impl Position {
    /// Parses a FEN with 6 fields, or the relaxed 4-field form without clocks. Besides
    /// syntax it refuses, naming the field, what move generation and search cannot take:
    /// not one king a side, pawns on the back ranks, more material than promotions allow,
    /// the side not to move in check, more than two checkers, castling rights without
    /// their king and rook, an en-passant target no pawn could have just crossed.
    pub fn from_fen(fen: &str) -> Result<Position, FenError> {
        let fields: Vec<&str> = fen.split_ascii_whitespace().collect();
        if fields.len() != 6 && fields.len() != 4 {
            return err(
                "fen",
                format!("expected 6 fields (or 4 without clocks), found {}", fields.len()),
            );
        }
        let mut p = Position::empty();
        parse_board(&mut p, fields[0])?;

        p.turn = match fields[1] {
            "w" => Color::White,
            "b" => Color::Black,
            s => return err("side", format!("expected 'w' or 'b', found '{s}'")),
        };

        p.castling = parse_castling(&p, fields[2])?;

        let ep = parse_ep(&p, fields[3])?;
        p.ep = ep;

        if fields.len() == 6 {
            p.halfmove = clock_field(fields[4], "halfmove clock", "a non-negative number")?;
            let full = clock_field(fields[5], "fullmove number", "a positive number")?;
            // Some tools write 0; treat it as 1 rather than reject.
            p.fullmove = full.max(1);
        }

        let them = p.turn.flip();
        let their_king = p.king(them);
        if p.is_attacked(their_king, p.turn, p.occupied()) {
            return err("side", format!("the side not to move ({them:?}) is in check"));
        }
        p.refresh();
        if p.checkers.count() > 2 {
            return err("board", "the side to move is in check by more than two pieces");
        }
        Ok(p)
    }

    /// Prints the FEN (en-passant square only when a capture is possible there).
    pub fn fen(&self) -> String {
        let mut s = String::with_capacity(90);
        for rank in (0..8).rev() {
            let mut empty = 0;
            for file in 0..8 {
                match self.piece_on(Square::from_coords(file, rank)) {
                    Some(pc) => {
                        if empty > 0 {
                            s.push((b'0' + empty) as char);
                            empty = 0;
                        }
                        s.push(pc.fen_char());
                    }
                    None => empty += 1,
                }
            }
            if empty > 0 {
                s.push((b'0' + empty) as char);
            }
            if rank > 0 {
                s.push('/');
            }
        }
        s.push(' ');
        s.push(self.turn.fen_char());
        s.push(' ');
        if self.castling == 0 {
            s.push('-');
        }
        for (bit, c) in [(castle::WK, 'K'), (castle::WQ, 'Q'), (castle::BK, 'k'), (castle::BQ, 'q')] {
            if self.castling & bit != 0 {
                s.push(c);
            }
        }
        s.push(' ');
        match self.ep {
            Some(sq) => s.push_str(&sq.to_string()),
            None => s.push('-'),
        }
        s.push_str(&format!(" {} {}", self.halfmove, self.fullmove));
        s
    }
}

fn parse_board(p: &mut Position, board: &str) -> Result<(), FenError> {
    let ranks: Vec<&str> = board.split('/').collect();
    if ranks.len() != 8 {
        return err("board", format!("expected 8 ranks separated by '/', found {}", ranks.len()));
    }
    for (i, text) in ranks.iter().enumerate() {
        let rank = 7 - i as u8;
        let mut file = 0u8;
        for c in text.chars() {
            if let Some(d) = c.to_digit(10) {
                if !(1..=8).contains(&d) {
                    return err("board", format!("rank {}: bad empty-square count '{c}'", rank + 1));
                }
                file += d as u8;
            } else if let Some(pc) = Piece::from_fen_char(c) {
                if file >= 8 {
                    return err("board", format!("rank {} has more than 8 squares", rank + 1));
                }
                p.put(pc, Square::from_coords(file, rank));
                file += 1;
            } else {
                return err("board", format!("rank {}: bad piece letter '{c}'", rank + 1));
            }
            if file > 8 {
                return err("board", format!("rank {} has more than 8 squares", rank + 1));
            }
        }
        if file != 8 {
            return err("board", format!("rank {} has {} squares, expected 8", rank + 1, file));
        }
    }
    for c in Color::ALL {
        let n = p.pieces(c, Role::King).count();
        if n != 1 {
            return err("board", format!("{c:?} has {n} kings, expected exactly 1"));
        }
    }
    if (p.by_role(Role::Pawn) & Bitboard::BACK_RANKS).any() {
        return err("board", "a pawn stands on the first or last rank");
    }
    for c in Color::ALL {
        check_material(p, c)?;
    }
    Ok(())
}

/// No more material than eight pawns' promotions can give: beyond that, positions with more
/// legal moves than a move list holds (256; 218 is the most any such position has) exist.
fn check_material(p: &Position, c: Color) -> Result<(), FenError> {
    let count = |r| p.pieces(c, r).count();
    let pawns = count(Role::Pawn);
    if pawns > 8 {
        return err("board", format!("{c:?} has {pawns} pawns, at most 8"));
    }
    let promoted = count(Role::Queen).saturating_sub(1)
        + count(Role::Rook).saturating_sub(2)
        + count(Role::Bishop).saturating_sub(2)
        + count(Role::Knight).saturating_sub(2);
    if promoted > 8 - pawns {
        return err(
            "board",
            format!("{c:?} has {promoted} pieces beyond the initial set but only {} missing pawns to promote", 8 - pawns),
        );
    }
    Ok(())
}

fn parse_castling(p: &Position, s: &str) -> Result<u8, FenError> {
    if s == "-" {
        return Ok(0);
    }
    let mut rights = 0u8;
    for c in s.chars() {
        let (bit, color, king, rook) = match c {
            'K' => (castle::WK, Color::White, Square::E1, Square::H1),
            'Q' => (castle::WQ, Color::White, Square::E1, Square::A1),
            'k' => (castle::BK, Color::Black, Square::E8, Square::H8),
            'q' => (castle::BQ, Color::Black, Square::E8, Square::A8),
            _ => return err("castling", format!("bad letter '{c}' (expected KQkq or '-')")),
        };
        if rights & bit != 0 {
            return err("castling", format!("'{c}' is repeated"));
        }
        if !p.pieces(color, Role::King).has(king) {
            return err("castling", format!("right '{c}' but the {color:?} king is not on {king}"));
        }
        if !p.pieces(color, Role::Rook).has(rook) {
            return err("castling", format!("right '{c}' but no {color:?} rook on {rook}"));
        }
        rights |= bit;
    }
    Ok(rights)
}

fn parse_ep(p: &Position, s: &str) -> Result<Option<Square>, FenError> {
    if s == "-" {
        return Ok(None);
    }
    let Some(sq) = Square::parse(s) else {
        return err("en passant", format!("expected a square or '-', found '{s}'"));
    };
    let us = p.turn;
    let them = us.flip();
    let want_rank = if us == Color::White { 5 } else { 2 };
    // Checked first: the squares below are only on the board for a target on that rank.
    if sq.rank() != want_rank {
        return err(
            "en passant",
            format!("{sq} is not on rank {} for {us:?} to move", want_rank + 1),
        );
    }
    // The side that just moved (them) pushed a pawn two squares over `sq`.
    let (pawn_sq, origin) = match us {
        Color::White => (sq.index() - 8, sq.index() + 8),
        Color::Black => (sq.index() + 8, sq.index() - 8),
    };
    let occ = p.occupied();
    if !p.pieces(them, Role::Pawn).has(Square::new(pawn_sq as u8)) {
        return err("en passant", format!("no {them:?} pawn in front of {sq} that could have just moved two squares"));
    }
    if occ.has(sq) || occ.has(Square::new(origin as u8)) {
        return err("en passant", format!("{sq} or the square the pawn came from is occupied"));
    }
    Ok(Some(sq))
}
