//! A probe (ours; the seed has none): can the seed's piece-selector shape *see* which of the
//! mover's pieces is en prise, when it is told? The agents learn escape, if at all, through
//! the piece selector (the seed: it "captures the notion of escape when a piece is under
//! attack"), and self-play's piece selectors rank the hanging piece first in a quarter of the
//! escape suite. Whether that bounds at the shape (a 3×3 convolution stack without padding
//! must relate an attacker to a piece across the board) or at the learning signal (rewards
//! that reach the from-square of the move played, through the opponent's reply and a
//! bootstrapped target) is answered here by supervision: the two piece selectors are trained,
//! from fresh LeCun weights, to output 1 on each of the mover's pieces that is en prise
//! ([`crate::chess::threats::hanging`]) and 0 on its other pieces, on positions of games the
//! suite does not come from; then, on the suite's held-out positions, how often the hanging
//! piece is the one it ranks first, and what the agents' own move selectors do with it
//! ([`super::measure::escape_steps`]: `piece_selector_first`, `saved_piece_first`).
//!
//! The figures are in docs/results.md (seed 002), made by the ignored test
//! `the_piece_selector_shape_can_see_en_prise` (tests/system_selfplay.rs).

use super::features::{encode, INPUTS};
use super::model::{Agents, Init, Net};
use crate::chess::pgn::PgnReader;
use crate::chess::threats::hanging;
use crate::chess::{Color, Position};
use crate::tensor::{Adam, Matrix, Optimizer, Rng, Tape};
use std::io::BufRead;

/// A position labelled for the probe: the agent to move's input, its pieces, which are en prise.
pub struct Labelled {
    x: Box<[f32; INPUTS]>,
    colour: Color,
    own: u64,
    hanging: u64,
}

impl Labelled {
    pub fn new(pos: &Position) -> Labelled {
        let colour = pos.turn();
        let mut x = Box::new([0.0f32; INPUTS]);
        encode(pos, colour, &mut x[..]);
        let hanging = hanging(pos).iter().fold(0u64, |b, s| b | 1 << s.index());
        Labelled { x, colour, own: pos.by_color(colour).0, hanging }
    }

    pub fn has_hanging(&self) -> bool {
        self.hanging != 0
    }
}

/// Up to `want` labelled positions from the games of `pgns`: every position not in check with
/// one of the mover's pieces en prise, and one in `others_every` of the rest (so the probe
/// also learns "none"), no position twice.
pub fn labelled_positions(pgns: Vec<Box<dyn BufRead>>, want: usize, others_every: usize) -> Vec<Labelled> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut others = 0usize;
    for r in pgns {
        let mut reader = PgnReader::new(r);
        while let Some(g) = reader.next_game() {
            let Ok(g) = g else { continue };
            let game = g.to_game();
            let mut pos = *game.start();
            for &m in game.moves() {
                if !pos.is_check() && seen.insert(pos.fen()) {
                    let l = Labelled::new(&pos);
                    let keep = l.hanging != 0 || {
                        others += 1;
                        others % others_every.max(1) == 0
                    };
                    if keep {
                        out.push(l);
                        if out.len() == want {
                            return out;
                        }
                    }
                }
                pos.play(m);
            }
        }
    }
    out
}

/// `agents` with both piece selectors drawn afresh (LeCun-uniform, `seed`), the move selectors
/// kept.
pub fn fresh_piece_selectors(agents: &Agents, seed: u64) -> Agents {
    let fresh = Agents::with_init(agents.layout.arch, Init::Lecun, &mut Rng::new(seed));
    let mut out = Agents { layout: agents.layout, params: agents.params.clone() };
    for colour in [Color::White, Color::Black] {
        for (to, from) in agents.layout.tensors(colour, Net::Piece).into_iter().zip(fresh.layout.tensors(colour, Net::Piece)) {
            out.params.value_mut(to).data_mut().copy_from_slice(fresh.params.value(from).data());
        }
    }
    out
}

/// One epoch of supervision of both piece selectors on `data` (shuffled by `rng`), in batches
/// of `batch`: squared error on the mover's own squares (1 en prise, 0 not), the other
/// squares untaught. Returns the mean squared error per taught output.
pub fn train_epoch(agents: &mut Agents, opt: &mut Adam, data: &[Labelled], batch: usize, rng: &mut Rng) -> Result<f64, String> {
    let mut order: Vec<usize> = (0..data.len()).collect();
    rng.shuffle(&mut order);
    let (mut sq, mut taught) = (0.0f64, 0usize);
    for chunk in order.chunks(batch.max(1)) {
        for colour in [Color::White, Color::Black] {
            let rows: Vec<&Labelled> = chunk.iter().map(|&i| &data[i]).filter(|l| l.colour == colour).collect();
            if rows.is_empty() {
                continue;
            }
            let mut x = Matrix::zeros(rows.len(), INPUTS);
            for (r, l) in rows.iter().enumerate() {
                x.row_mut(r).copy_from_slice(&l.x[..]);
            }
            let mut tape = Tape::new();
            let xv = tape.input(&x);
            let y = agents.layout.net_on_tape(&agents.params, &mut tape, xv, colour, Net::Piece).map_err(|e| e.to_string())?;
            let mut target = tape.value(y).clone();
            for (r, l) in rows.iter().enumerate() {
                for (k, v) in target.row_mut(r).iter_mut().enumerate() {
                    if l.own >> k & 1 == 1 {
                        let t = (l.hanging >> k & 1) as f32;
                        sq += ((*v - t) * (*v - t)) as f64;
                        taught += 1;
                        *v = t;
                    }
                }
            }
            let t = tape.input(&target);
            let loss = tape.mse(y, t).map_err(|e| e.to_string())?;
            // The mean over the chunk's taught outputs' rows, whichever colour they are.
            let mut grads = std::mem::take(&mut agents.params.grads);
            let r = tape.backward_into(loss, &agents.params, &mut grads, rows.len() as f32 / chunk.len() as f32);
            agents.params.grads = grads;
            r.map_err(|e| e.to_string())?;
        }
        opt.step(&mut agents.params);
    }
    Ok(sq / taught.max(1) as f64)
}
