#!/usr/bin/env python3
"""What a DBN net's layers and head do on real positions, read straight from its .dcw file.

An analysis aid, not part of the crate or its tests; standard library only. For each net (a
fine-tuned `dbn-net` or a pretrained stack, `pretrained.dcw`) it runs the net's forward pass,
the same as `src/dbn/model.rs` without dropout (ReLU hidden layers, then the output layer), on
N positions drawn from the labels file, and prints:

- per hidden layer, the median over positions of the layer's largest unit and the share of
  units at zero (dead for that position);
- for a regression net: the pre-tanh output's range, the share of positions whose output is
  saturated (|tanh| > 0.999), the spread of the output in centipawns, and the "within ±30 cp"
  accuracy on these positions beside what a net answering +300 cp, −300 cp or 0 for every
  position would score on them;
- for a classification net: how often each class is the argmax, and the median logit margin.

First, over the whole labels file, what a regression net answering +300 cp, −300 cp or 0 for
every position would score (within ±30 cp, and its Huber loss on the normalised score): the
baselines a regression net's figures and training loss are read against.

It is how docs/results.md tells that the seed's recipe leaves its regression nets constant:

    python3 docs/analysis/dbn_activations.py runs/dbn-paper-large-cv/positions-f0of10/772-600-400-200-100/{pretrained,regress}.dcw
    python3 docs/analysis/dbn_activations.py --positions 500 data/nets/dbn-regress.dcw

The weight file's layout is in src/tensor/weights.rs; the 772 input bits in src/dbn/features.rs
(colour·384 + role·64 + square, then the four castling rights; bit 772, the side to move, for
773-input nets). The regression target is the score clipped to ±300 cp, divided by 300.
"""
import argparse, array, lzma, math, random, struct, sys
from collections import Counter

ROLES = "pnbrqk"
CLIP = 300.0


def load(path):
    """(meta dict, {name: (rows, cols, floats)}) of a weight file."""
    b = open(path, "rb").read()
    if b[:8] != b"DCHSWGT\0":
        sys.exit(f"{path}: not a deepchess weight file (its first bytes are {b[:8]!r})")
    pos = 12

    def u32():
        nonlocal pos
        pos += 4
        return struct.unpack_from("<I", b, pos - 4)[0]

    def u64():
        nonlocal pos
        pos += 8
        return struct.unpack_from("<Q", b, pos - 8)[0]

    def s():
        nonlocal pos
        n = u32()
        pos += n
        return b[pos - n:pos].decode()

    meta = dict((s(), s()) for _ in range(u32()))
    tensors = {}
    for _ in range(u32()):
        name, r, c = s(), u64(), u64()
        a = array.array("f")
        a.frombytes(b[pos:pos + 4 * r * c])
        if sys.byteorder != "little":
            a.byteswap()
        pos += 4 * r * c
        tensors[name] = (r, c, a)
    return meta, tensors


def bits(fen, inputs):
    """The indices of the set input bits of a FEN (src/dbn/features.rs)."""
    board, side, castling = fen.split()[:3]
    on, rank, file = [], 7, 0
    for ch in board:
        if ch == "/":
            rank, file = rank - 1, 0
        elif ch.isdigit():
            file += int(ch)
        else:
            on.append((0 if ch.isupper() else 384) + ROLES.index(ch.lower()) * 64 + rank * 8 + file)
            file += 1
    on += [768 + i for i, c in enumerate("KQkq") if c in castling]
    if inputs == 773 and side == "w":
        on.append(772)
    return on


def forward(t, on):
    """Each hidden layer's activations, and the output layer's pre-activation (None for a stack)."""
    layers = sum(1 for k in t if k.startswith("hidden.") and k.endswith(".w"))
    r, c, w = t["hidden.0.w"]
    b = t["hidden.0.b"][2]
    h = [max(0.0, b[j] + sum(w[i * c + j] for i in on)) for j in range(c)]
    acts = [h]
    for l in range(1, layers):
        r, c, w = t[f"hidden.{l}.w"]
        b = t[f"hidden.{l}.b"][2]
        live = [(i, v) for i, v in enumerate(h) if v]
        h = [max(0.0, b[j] + sum(v * w[i * c + j] for i, v in live)) for j in range(c)]
        acts.append(h)
    if "out.w" not in t:
        return acts, None
    r, c, w = t["out.w"]
    b = t["out.b"][2]
    return acts, [b[k] + sum(v * w[i * c + k] for i, v in enumerate(h)) for k in range(c)]


def score(text):
    """A labels file's score field in centipawns (mates as ±CLIP·10)."""
    if text.startswith("#"):
        return -CLIP * 10 if text.startswith("#-") else CLIP * 10
    return float(text)


def huber(e):
    """The Huber loss of an error on the normalised score, δ = 1 (src/dbn/model.rs)."""
    e = abs(e)
    return 0.5 * e * e if e <= 1 else e - 0.5


def constants(rows):
    """What a net answering one score for every position would score on all of `rows`."""
    targets = [max(-1.0, min(1.0, score(r[3]) / CLIP)) for r in rows]
    n = len(targets)
    for c, name in ((1.0, "+300 cp"), (-1.0, "−300 cp"), (0.0, "0 cp")):
        within = 100 * sum(1 for t in targets if abs(c - t) <= 0.1 + 1e-6) / n
        loss = sum(huber(c - t) for t in targets) / n
        print(f"  a constant {name}: within ±30 cp {within:.2f} %, Huber loss {loss:.3f}")


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("nets", nargs="+", help=".dcw files (dbn-net or dbn-pretrained)")
    p.add_argument("--labels", default="data/dbn/labels-100k.csv.xz", help="labelled positions (CSV, .xz allowed)")
    p.add_argument("--positions", type=int, default=200, help="positions drawn at random (default 200)")
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    opener = lzma.open if a.labels.endswith(".xz") else open
    with opener(a.labels, "rt") as f:
        rows = [l.rstrip("\n").split(",", 4) for l in f if not l.startswith("#") and not l.startswith("game,")]
    sample = random.Random(a.seed).sample(rows, min(a.positions, len(rows)))
    print(f"{a.labels}: {len(rows)} positions")
    constants(rows)
    for path in a.nets:
        meta, t = load(path)
        inputs = t["hidden.0.w"][0]
        what = " ".join(v for v in (meta.get("kind", "?"), meta.get("arch")) if v)
        print(f"{path}: {what} on {len(sample)} positions of {a.labels}")
        per_layer_max, per_layer_dead, outs = None, None, []
        for row in sample:
            acts, z = forward(t, bits(row[4], inputs))
            if per_layer_max is None:
                per_layer_max, per_layer_dead = [[] for _ in acts], [[] for _ in acts]
            for l, h in enumerate(acts):
                per_layer_max[l].append(max(h))
                per_layer_dead[l].append(sum(1 for v in h if v == 0) / len(h))
            outs.append((z, row))
        for l in range(len(per_layer_max)):
            print(f"  hidden layer {l + 1}: largest unit {median(per_layer_max[l]):.1f} (median over positions), "
                  f"{100 * sum(per_layer_dead[l]) / len(sample):.0f} % of units at zero")
        if outs[0][0] is None:
            continue
        if len(outs[0][0]) == 1:
            zs = [z[0] for z, _ in outs]
            ys = [CLIP * math.tanh(v) for v in zs]
            targets = [max(-CLIP, min(CLIP, score(r[3]))) for _, r in outs]
            within = lambda pred: 100 * sum(1 for y, s in zip(pred, targets) if abs(y - s) <= 30.0001) / len(targets)
            saturated = 100 * sum(1 for v in zs if abs(math.tanh(v)) > 0.999) / len(zs)
            q = sorted(ys)
            print(f"  output before tanh: {min(zs):.2f} to {max(zs):.2f}; saturated (|tanh| > 0.999): {saturated:.0f} % of positions")
            print("  output in cp, quantiles 0/10/50/90/100 %: " + " / ".join(f"{q[int(f * (len(q) - 1))]:+.0f}" for f in (0, .1, .5, .9, 1)))
            print(f"  within ±30 cp: {within(ys):.1f} %; a constant +300 cp: {within([CLIP] * len(ys)):.1f} %, "
                  f"−300 cp: {within([-CLIP] * len(ys)):.1f} %, 0: {within([0.0] * len(ys)):.1f} %")
        else:
            argmax = Counter(max(range(len(z)), key=z.__getitem__) for z, _ in outs)
            margins = [sorted(z)[-1] - sorted(z)[-2] for z, _ in outs]
            print(f"  argmax class counts: {dict(sorted(argmax.items()))}; median logit margin {median(margins):.2f}")


if __name__ == "__main__":
    main()
