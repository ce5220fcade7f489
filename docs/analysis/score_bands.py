#!/usr/bin/env python3
"""How well Stockfish's own score names a game's result, on seed 001's labelled set.

An analysis aid, not part of the crate or its tests (std Python only). Each position's score
(Stockfish 15.1, depth 9, White's view) is read as "White wins above +B cp, Black wins below
−B, draw between"; the band B that names the most results is searched on the positions
themselves (so the figure is a best case). docs/results.md, seed 001, cites it.

    python3 docs/analysis/score_bands.py data/dbn/labels-100k.csv.xz
"""
import csv, lzma, sys


def main():
    rows = []
    with lzma.open(sys.argv[1], "rt") as f:
        lines = (l for l in f if not l.startswith("#"))
        for r in csv.DictReader(lines):
            s = r["score"]
            cp = (100000 if not s.startswith("#-") else -100000) if s.startswith("#") else int(s)
            rows.append((cp, r["result"]))
    best = max(
        ((sum((("1-0" if cp > b else "0-1" if cp < -b else "1/2-1/2") == res) for cp, res in rows) / len(rows), b) for b in range(0, 401, 5))
    )
    print(f"{len(rows)} positions; best band ±{best[1]} cp names the result of {100 * best[0]:.1f} %")


if __name__ == "__main__":
    main()
