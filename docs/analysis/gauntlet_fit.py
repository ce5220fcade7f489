"""Places an engine on Stockfish's UCI_Elo scale from a gauntlet's W-D-L per level.

Model: at level L the expected score is 1 / (1 + 10 ** ((L - R) / 400)); the rating R maximises
the likelihood of the points scored (a draw counts as half a win and half a loss), and the
95 % interval is where the log-likelihood is within 1.92 of its maximum (likelihood ratio).
Usage: python3 gauntlet_fit.py LEVEL:W-D-L [LEVEL:W-D-L ...]
e.g.   python3 gauntlet_fit.py 1900:46-8-26 2000:18-7-55 2100:13-10-57   (about 1905, 1858-1951)
Standard library only; an analysis aid outside the crate. The crate's own
`deepchess gauntlet-fit` (src/arena/elo.rs, fit_rating) computes the same fit, also from PGN files.
"""
import math
import sys


def loglik(r, levels):
    total = 0.0
    for level, w, d, l in levels:
        p = 1.0 / (1.0 + 10.0 ** ((level - r) / 400.0))
        total += (w + d / 2) * math.log(p) + (l + d / 2) * math.log(1.0 - p)
    return total


def fit(levels):
    grid = [x / 10 for x in range(10000, 35000)]
    values = [loglik(r, levels) for r in grid]
    best = max(range(len(grid)), key=values.__getitem__)
    inside = [grid[i] for i, v in enumerate(values) if v >= values[best] - 1.92]
    return grid[best], inside[0], inside[-1]


def parse(arg):
    level, wdl = arg.split(":")
    w, d, l = (int(x) for x in wdl.split("-"))
    return int(level), w, d, l


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    try:
        levels = [parse(a) for a in sys.argv[1:]]
    except ValueError:
        sys.exit(f"expected LEVEL:W-D-L, got {sys.argv[1:]}")
    r, lo, hi = fit(levels)
    games = sum(w + d + l for _, w, d, l in levels)
    print(f"about {r:.0f}, 95 % interval {lo:.0f}-{hi:.0f} ({games} games)")
