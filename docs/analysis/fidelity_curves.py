#!/usr/bin/env python3
"""Accuracy against epochs under both protocols (docs/notebook/results.md, "The paper's 98 %").

An aid for the docs, not part of the crate or its tests; plain Python 3, no packages. Reads
the log.csv of each run of `make fidelity` and draws, per corpus size, the DeepChess phase's
accuracy on training pairs (as the epoch ran), on held-out positions of trained games
(position split) and on held-out games (game split), and the distilled net's two
validation curves, into one SVG.

    python3 docs/analysis/fidelity_curves.py runs/fidelity docs/fidelity-curves.svg
"""
import csv, math, os, sys

SIZES = ["2k", "8k", "32k"]
COLOURS = {"2k": "#1f77b4", "8k": "#2ca02c", "32k": "#d62728"}
W, H, LEFT, RIGHT, TOP, BOTTOM = 980, 490, 60, 20, 40, 80
LO, HI = 0.70, 1.00


def series(log, phase, column):
    out = []
    for row in log:
        if row["phase"] == phase and row[column] not in ("NaN", ""):
            out.append((int(row["epoch"]), float(row[column])))
    return out


def panel(x0, width, title, curves, max_epoch, lo=LO, hi=HI, xlabel="epoch (200,000 pairs each)"):
    """One chart's lines: accuracy in [lo, hi] (a grid line each 5 points) against epochs;
    `curves` are (colour, dash, [(epoch, accuracy)]). docs/analysis/cnn_curves.py draws with it too."""
    def px(e):
        return x0 + (e - 1) / max(1, max_epoch - 1) * width

    def py(a):
        return TOP + (hi - min(hi, max(lo, a))) / (hi - lo) * (H - TOP - BOTTOM)

    s = [f'<text x="{x0 + width / 2}" y="{TOP - 14}" text-anchor="middle" font-weight="bold">{title}</text>']
    for k in range(round((hi - lo) / 0.05) + 1):
        a = lo + k * 0.05
        s.append(f'<line x1="{x0}" y1="{py(a):.1f}" x2="{x0 + width}" y2="{py(a):.1f}" stroke="#ddd"/>')
        s.append(f'<text x="{x0 - 6}" y="{py(a) + 4:.1f}" text-anchor="end">{round(100 * a)}%</text>')
    step = 10 if max_epoch > 20 else 5
    for e in [1] + list(range(step, max_epoch + 1, step)):
        s.append(f'<text x="{px(e):.1f}" y="{H - BOTTOM + 16}" text-anchor="middle">{e}</text>')
    s.append(f'<text x="{x0 + width / 2}" y="{H - BOTTOM + 34}" text-anchor="middle">{xlabel}</text>')
    for colour, dash, points in curves:
        if points:
            d = " ".join(f"{px(e):.1f},{py(a):.1f}" for e, a in points)
            s.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" stroke-dasharray="{dash}" points="{d}"/>')
    return s


def main(root, out):
    logs = {}
    for size in SIZES:
        path = os.path.join(root, f"run-{size}", "log.csv")
        if os.path.exists(path):
            with open(path, newline="") as f:
                logs[size] = list(csv.DictReader(f))
    if not logs:
        sys.exit(f"no run-*/log.csv under {root}")
    styles = [("train_acc", "", "training pairs (as the epoch ran)", "1,3"), ("valid_positions", "val_acc", "position split", ""), ("", "val_acc", "game split", "8,4")]
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">', f'<rect width="{W}" height="{H}" fill="white"/>']
    half = (W - LEFT - RIGHT - 70) / 2
    for i, (phase, title) in enumerate([("deepchess", "DeepChess 773-600-400-200-100"), ("distill.full", "Distilled 773-100-100-100")]):
        curves, max_epoch = [], 1
        for size, log in logs.items():
            for kind, column, _, dash in styles:
                if kind == "train_acc":
                    pts = series(log, phase, "train_acc")
                elif kind == "valid_positions":
                    pts = series(log, f"{phase}.valid_positions", column)
                else:
                    pts = series(log, phase, column)
                max_epoch = max([max_epoch] + [e for e, _ in pts])
                curves.append((COLOURS[size], dash, pts))
        svg += panel(LEFT + i * (half + 70), half, title, curves, max_epoch)
    # Legend: colours are corpus sizes, dashes the sets.
    y = H - 8
    x = LEFT
    for size in logs:
        svg.append(f'<line x1="{x}" y1="{y - 4}" x2="{x + 24}" y2="{y - 4}" stroke="{COLOURS[size]}" stroke-width="3"/><text x="{x + 28}" y="{y}">{size} games</text>')
        x += 100
    for _, _, label, dash in styles:
        svg.append(f'<line x1="{x}" y1="{y - 4}" x2="{x + 30}" y2="{y - 4}" stroke="#333" stroke-width="2" stroke-dasharray="{dash}"/><text x="{x + 34}" y="{y}">{label}</text>')
        x += 60 + 7 * len(label)
    svg.append("</svg>")
    with open(out, "w") as f:
        f.write("\n".join(svg) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
