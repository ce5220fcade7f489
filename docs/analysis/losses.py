#!/usr/bin/env python3
"""Where our engine's losses against Stockfish start (docs/notebook/results.md, "Why the games are lost").

An analysis aid, not part of the crate or its tests; needs python-chess (pip install chess)
and, for --terms, Stockfish 15.1 (its `eval` prints the classical terms).

For every game the player NAME lost, it finds the first position after the opponent's move
whose logged score ({score/depth time} comments, mover's view) is >= +1.50 for the opponent,
and counts: the material balance there (P1 N3 B3 R5 Q9, our side), our own last logged
score, and the opponent's previous score (a jump or a drift). With --terms it averages
Stockfish's static evaluation terms over those positions (not in check), from the
opponent's side, (mg + eg) / 2, in pawns.

    python3 docs/analysis/losses.py deepchess runs/g6-*.pgn [--terms /usr/games/stockfish]
"""
import collections, re, subprocess, sys
import chess.pgn

VALUE = {chess.PAWN: 1, chess.KNIGHT: 3, chess.BISHOP: 3, chess.ROOK: 5, chess.QUEEN: 9}


def score(comment):
    m = re.match(r"\s*([+-]?[\d.]+|[+-]?M\d+)/\d+", comment or "")
    if not m:
        return None
    s = m.group(1)
    return (-100.0 if s.startswith("-") else 100.0) if "M" in s else float(s)


def material(board, white):
    m = sum((1 if p.color == chess.WHITE else -1) * VALUE.get(p.piece_type, 0) for p in board.piece_map().values())
    return m if white else -m


def band(v, edges, names):
    for e, n in zip(edges, names):
        if v >= e:
            return n
    return names[-1]


def main():
    args = sys.argv[1:]
    sf = None
    if "--terms" in args:
        i = args.index("--terms")
        sf = args[i + 1]
        del args[i:i + 2]
    name, files = args[0], args[1:]
    losses, mat, ours, before, fens = 0, collections.Counter(), collections.Counter(), collections.Counter(), []
    for fn in files:
        with open(fn) as f:
            while (g := chess.pgn.read_game(f)) is not None:
                white = g.headers["White"] == name
                if g.headers["Result"] != ("0-1" if white else "1-0"):
                    continue
                losses += 1
                board, our_last, their_prev = g.board(), None, None
                for node in g.mainline():
                    ours_to_move = (board.turn == chess.WHITE) == white
                    board.push(node.move)
                    v = score(node.comment)
                    if v is None:
                        continue
                    if ours_to_move:
                        our_last = v
                        continue
                    if v >= 1.5:
                        mat[max(-3, min(3, material(board, white)))] += 1
                        ours[band(our_last if our_last is not None else 0.0, [0.5, -0.5, -1.5], [">= +0.5", "-0.5 .. +0.5", "-1.5 .. -0.5", "< -1.5"])] += 1
                        before[band(their_prev if their_prev is not None else 0.0, [1.0, 0.5], [">= +1.0 (drift)", "+0.5 .. +1.0", "< +0.5 (jump)"])] += 1
                        if not board.is_check():
                            fens.append((board.fen(), white))
                        break
                    their_prev = v
    found = sum(mat.values())
    print(f"{losses} losses, {found} reach +1.50 for the opponent")
    print("material there (our side, capped at 3):", dict(sorted(mat.items())))
    print("our last score there:", dict(ours))
    print("the opponent's score one move earlier:", dict(before))
    if sf and fens:
        proc = subprocess.run([sf], input="".join(f"position fen {f}\neval\n" for f, _ in fens) + "quit\n", capture_output=True, text=True)
        totals, nnue = collections.defaultdict(float), []
        blocks = proc.stdout.split("Contributing terms for the classical eval:")[1:]
        for (fen, white), blk in zip(fens, blocks):
            sign = -1.0 if white else 1.0  # the opponent's side
            for line in blk.splitlines():
                m = re.match(r"\|\s*([A-Za-z ]+?)\s*\|.*\|\s*([-\d.]+)\s+([-\d.]+)\s*\|\s*$", line)
                if m and m.group(1) not in ("Term", "Total"):
                    totals[m.group(1)] += sign * (float(m.group(2)) + float(m.group(3))) / 2
                for key, pat in (("classical total", r"Classical evaluation\s+([-+\d.]+)"), ("NNUE", r"NNUE evaluation\s+([-+\d.]+)")):
                    m = re.search(pat, line)
                    if m:
                        totals[key] += sign * float(m.group(1))
        n = len(blocks)
        print(f"Stockfish's static terms over {n} of those positions (opponent's side, pawns):")
        for k, v in sorted(totals.items(), key=lambda kv: -abs(kv[1])):
            print(f"  {k:16} {v / n:+.2f}")


if __name__ == "__main__":
    main()
