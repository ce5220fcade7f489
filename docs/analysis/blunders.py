#!/usr/bin/env python3
"""How well each player's moves hold up under Stockfish: average centipawn loss and blunders.

An analysis aid, not part of the crate or its tests; needs python-chess (pip install chess)
and Stockfish (make install-stockfish). Seed 001 says its DBN, in self-play at depth 8, "has
learned to tactically plan ahead and think positionally"; its excerpt of such a game is not
in the text, so docs/results.md measures the claim this way instead (seed 001 section).

For every move of the named games (the opening moves of the suite, which have no
{score/depth time} comment, are skipped) Stockfish scores the position before and after the
move at a fixed depth; the mover's loss is the drop in its own score, each score clipped to
±1000 cp (mate counts as 1000). A blunder loses 200 cp or more. Per player (by PGN name, a
trailing -a/-b of a self-play pair merged): moves, average loss, blunders per 100 moves.

    python3 docs/analysis/blunders.py /usr/games/stockfish 10 runs/self8-*.pgn
"""
import collections, subprocess, sys
import chess.pgn

CLIP = 1000


class Engine:
    def __init__(self, path):
        self.p = subprocess.Popen([path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.send("uci")
        self.wait("uciok")
        self.send("setoption name Threads value 1")
        self.send("setoption name Hash value 64")
        self.send("isready")
        self.wait("readyok")

    def send(self, s):
        self.p.stdin.write(s + "\n")

    def wait(self, token):
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError("engine died")
            if line.startswith(token):
                return line

    def score(self, board, depth):
        """Side to move's score in cp, clipped."""
        if board.is_checkmate():
            return -CLIP
        if board.is_game_over():
            return 0
        self.send("position fen " + board.fen())
        self.send(f"go depth {depth}")
        last = 0
        while True:
            line = self.p.stdout.readline()
            if line.startswith("bestmove"):
                return max(-CLIP, min(CLIP, last))
            t = line.split()
            if "score" in t:
                i = t.index("score")
                kind, v = t[i + 1], int(t[i + 2])
                last = v if kind == "cp" else (CLIP if v > 0 else -CLIP)


def player(name):
    for suffix in ("-a", "-b"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    sf, depth, files = Engine(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
    stats = collections.defaultdict(lambda: [0, 0, 0])  # moves, total loss, blunders
    for f in files:
        with open(f) as h:
            while (g := chess.pgn.read_game(h)) is not None:
                names = {chess.WHITE: player(g.headers["White"]), chess.BLACK: player(g.headers["Black"])}
                board = g.board()
                for node in g.mainline():
                    mover = board.turn
                    if node.comment.strip():
                        before = sf.score(board, depth)
                        board.push(node.move)
                        after = -sf.score(board, depth)
                        loss = max(0, before - after)
                        s = stats[names[mover]]
                        s[0] += 1
                        s[1] += loss
                        s[2] += loss >= 200
                    else:
                        board.push(node.move)
    print(f"| player | moves | average loss (cp) | blunders (≥ 200 cp) per 100 moves |")
    print("|---|---|---|---|")
    for name, (n, total, blunders) in sorted(stats.items(), key=lambda kv: kv[1][1] / max(1, kv[1][0])):
        print(f"| {name} | {n} | {total / max(1, n):.0f} | {100 * blunders / max(1, n):.1f} |")


if __name__ == "__main__":
    main()
