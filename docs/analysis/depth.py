#!/usr/bin/env python3
"""The depth each player reached, read from the move comments `deepchess match` writes.

An analysis aid, not part of the crate or its tests; standard library only. Every move of a
game `deepchess match` plays carries a `{score/depth time}` comment (the opening moves of the
suite, played before the engines, carry none). For each PGN file and each player (by its PGN
name) this prints the mean depth over that player's first N moves of every game (default 30:
the middle game, before endgames let the depth run away), the median, and the moves counted.
The README's "depth 15 in the gauntlet" is this quantity over the six 80-game runs' PGN files
(measured before this script existed; those PGN files are not kept, so it was not recomputed):

    python3 docs/analysis/depth.py runs/gauntlet-*/*.pgn
    python3 docs/analysis/depth.py --moves 20 runs/match.pgn
"""
import re, statistics, sys

TOKEN = re.compile(r"\{[^}]*\}|\d+\.(?:\.\.)?|\S+")
DEPTH = re.compile(r"^\{\s*[+-]?M?\d+(?:\.\d+)?/(\d+)\b")
RESULTS = {"1-0", "0-1", "1/2-1/2", "*"}


def games(text):
    """(white, black, side to move at the start, movetext) of each game of a PGN text."""
    for block in re.split(r"\n(?=\[Event )", text):
        tag = lambda t: (re.search(r'^\[' + t + r' "([^"]*)"\]', block, re.M) or [None, None])[1]
        white, black = tag("White"), tag("Black")
        if white is None or black is None:
            continue
        fen = tag("FEN")
        side = fen.split()[1] if fen and len(fen.split()) > 1 else "w"
        body = "\n".join(l for l in block.splitlines() if not l.startswith("["))
        yield white, black, side, body


def depths(text, moves):
    """{player: [depth of each of its first `moves` commented moves, over every game]}."""
    out = {}
    for white, black, side, body in games(text):
        per_side = {"w": [], "b": []}
        mover = None
        for tok in TOKEN.findall(body):
            if tok.startswith("{"):
                m = DEPTH.match(tok)
                if m and mover:
                    per_side[mover].append(int(m.group(1)))
            elif tok[0].isdigit() and tok.endswith("."):
                side = "b" if tok.endswith("...") else "w"
            elif tok not in RESULTS:
                mover, side = side, ("b" if side == "w" else "w")
        out.setdefault(white, []).extend(per_side["w"][:moves])
        out.setdefault(black, []).extend(per_side["b"][:moves])
    return out


def main(argv):
    moves = 30
    if len(argv) >= 2 and argv[0] == "--moves":
        moves, argv = int(argv[1]), argv[2:]
    if not argv:
        sys.exit(__doc__)
    print(f"{'file':40} {'player':24} {'moves':>6} {'mean':>6} {'median':>6}")
    for path in argv:
        with open(path, encoding="utf-8") as f:
            per = depths(f.read(), moves)
        for name, ds in sorted(per.items()):
            if ds:
                print(f"{path:40} {name:24} {len(ds):6} {statistics.mean(ds):6.1f} {float(statistics.median(ds)):6.1f}")


if __name__ == "__main__":
    main(sys.argv[1:])
