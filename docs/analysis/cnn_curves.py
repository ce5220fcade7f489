#!/usr/bin/env python3
"""Draws a CNN run's accuracy per epoch (training positions, held-out games, held-out
positions of trained games) from its log.csv, as an SVG, and prints the per-epoch table.

    python3 docs/analysis/cnn_curves.py runs/cnn-paper-57/linear/log.csv docs/cnn-paper-57.svg

log.csv is what `deepchess train --system cnn` writes per epoch: rows `cnn` (train and
game-split validation) and `cnn.valid_positions` (position-split validation)."""
import csv
import sys


def read(path):
    train, games, positions, secs = {}, {}, {}, {}
    with open(path) as f:
        for row in csv.DictReader(f):
            e = int(row["epoch"])
            if row["phase"] == "cnn":
                train[e] = float(row["train_acc"])
                games[e] = float(row["val_acc"])
                secs[e] = float(row["seconds"])
            elif row["phase"] == "cnn.valid_positions":
                positions[e] = float(row["val_acc"])
    return train, games, positions, secs


def svg(series, out, title):
    w, h, left, top, pw, ph = 760, 320, 60, 40, 660, 230
    epochs = sorted(series[0][1])
    lo = min(min(s.values()) for _, s, _ in series)
    hi = max(max(s.values()) for _, s, _ in series)
    lo, hi = int(lo * 100) / 100, (int(hi * 100) + 1) / 100
    x = lambda e: left + pw * (e - epochs[0]) / max(1, epochs[-1] - epochs[0])
    y = lambda v: top + ph * (hi - v) / (hi - lo)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="11">',
             '<rect width="100%" height="100%" fill="white"/>',
             f'<text x="10" y="20" font-size="13">{title}</text>',
             f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#999"/>']
    v = lo
    while v <= hi + 1e-9:
        parts.append(f'<line x1="{left}" x2="{left + pw}" y1="{y(v):.1f}" y2="{y(v):.1f}" stroke="#eee"/>')
        parts.append(f'<text x="{left - 4}" y="{y(v) + 4:.1f}" text-anchor="end">{100 * v:.0f} %</text>')
        v += 0.01
    for e in epochs:
        if e == 1 or e % 5 == 0:
            parts.append(f'<text x="{x(e):.1f}" y="{top + ph + 14}" text-anchor="middle">{e}</text>')
    parts.append(f'<text x="{left + pw / 2}" y="{top + ph + 30}" text-anchor="middle">epoch (1,456 iterations of 1,024 each)</text>')
    for i, (name, s, colour) in enumerate(series):
        pts = " ".join(f"{x(e):.1f},{y(s[e]):.1f}" for e in sorted(s))
        parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="1.5" points="{pts}"/>')
        parts.append(f'<text x="{left + 10 + 200 * i}" y="{top + 14}" fill="{colour}">{name}</text>')
    parts.append("</svg>\n")
    with open(out, "w") as f:
        f.write("\n".join(parts))


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: cnn_curves.py LOG.csv OUT.svg")
    train, games, positions, secs = read(sys.argv[1])
    if not train:
        sys.exit(f"{sys.argv[1]}: no 'cnn' rows")
    print("| epoch | train | held-out positions | held-out games | gap | s |")
    print("|---:|---:|---:|---:|---:|---:|")
    for e in sorted(train):
        p = positions.get(e, float("nan"))
        print(f"| {e} | {100 * train[e]:.2f} | {100 * p:.2f} | {100 * games[e]:.2f} | {100 * (p - games[e]):+.2f} | {secs[e]:.0f} |")
    print(f"total {sum(secs.values()) / 3600:.2f} h over {len(secs)} epochs (training passes and validation as logged)")
    svg([("training positions", train, "#ff7f0e"), ("held-out positions of trained games", positions, "#2ca02c"),
         ("held-out games", games, "#1f77b4")], sys.argv[2], "seed 003's CNN, linear, the seed's solver: accuracy per epoch")


if __name__ == "__main__":
    main()
