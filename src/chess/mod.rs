//! Chess rules: squares, bitboards, attack tables, positions, legal move generation, notation, PGN, perft.
