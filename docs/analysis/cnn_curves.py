#!/usr/bin/env python3
"""A CNN run's accuracy per epoch (training positions, held-out positions of trained games,
held-out games) from its log.csv: prints the per-epoch table and draws the SVG with
fidelity_curves.py's chart. Plain Python 3, no packages.

    python3 docs/analysis/cnn_curves.py runs/cnn-paper-57/linear/log.csv docs/cnn-paper-57.svg

log.csv is what `deepchess train --system cnn` writes per epoch: rows `cnn` (train and
game-split validation) and `cnn.valid_positions` (position-split validation)."""
import csv
import sys

from fidelity_curves import H, LEFT, RIGHT, W, panel, series


def main(path, out):
    with open(path, newline="") as f:
        log = list(csv.DictReader(f))
    train, games = series(log, "cnn", "train_acc"), series(log, "cnn", "val_acc")
    positions = dict(series(log, "cnn.valid_positions", "val_acc"))
    secs = dict(series(log, "cnn", "seconds"))
    if not train:
        sys.exit(f"{path}: no 'cnn' rows")
    print("| epoch | train | held-out positions | held-out games | gap | s |")
    print("|---:|---:|---:|---:|---:|---:|")
    for (e, t), (_, g) in zip(train, games):
        p = positions.get(e, float("nan"))
        print(f"| {e} | {100 * t:.2f} | {100 * p:.2f} | {100 * g:.2f} | {100 * (p - g):+.2f} | {secs[e]:.0f} |")
    print(f"total {sum(secs.values()) / 3600:.2f} h over {len(secs)} epochs (training passes and validation as logged)")
    lines = [("#ff7f0e", "1,3", "training positions (as the epoch ran)", train),
             ("#2ca02c", "", "held-out positions of trained games", sorted(positions.items())),
             ("#1f77b4", "8,4", "held-out games", games)]
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">', f'<rect width="{W}" height="{H}" fill="white"/>']
    svg += panel(LEFT, W - LEFT - RIGHT, "seed 003's CNN, linear, the seed's solver", [(c, d, pts) for c, d, _, pts in lines],
                 max(e for e, _ in train), lo=0.60, hi=0.85, xlabel="epoch (1,456 iterations of 1,024 each)")
    x, y = LEFT, H - 8
    for colour, dash, label, _ in lines:
        svg.append(f'<line x1="{x}" y1="{y - 4}" x2="{x + 30}" y2="{y - 4}" stroke="{colour}" stroke-width="2" stroke-dasharray="{dash}"/><text x="{x + 34}" y="{y}">{label}</text>')
        x += 60 + 7 * len(label)
    svg.append("</svg>")
    with open(out, "w") as f:
        f.write("\n".join(svg) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
