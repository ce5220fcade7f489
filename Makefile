SHELL := /bin/bash
# deepchess: user entry points. Everything here needs only the Rust toolchain unless a
# target says otherwise (install-* targets install optional tools with apt/pip, explicitly).
CARGO ?= cargo
BIN := target/release/deepchess

.PHONY: all build test test-full bench bench-perft bench-pgn bench-search perft datagen dataset install-stockfish clean

all: build

build:
	$(CARGO) build --release

# The README's test command, and what CI runs. Fast: deep perft etc. are #[ignore]d.
test:
	$(CARGO) test --all-targets 2>&1 | tee target/test.log; exit $${PIPESTATUS[0]}

# Everything, including the ignored (slow) tests. Run before resolving an issue.
test-full:
	$(CARGO) test --all-targets -- --include-ignored

# Every benchmark, each figure beside its anchor as a ratio measured in the same run.
bench: bench-perft bench-pgn bench-search

# Perft speed against Stockfish's `go perft` (when Stockfish is installed; see install-stockfish).
bench-perft: build
	$(BIN) bench-perft --runs 5

# Comparison alpha-beta: fixed-depth search over 30 built-in positions (deterministic node count).
bench-search: build
	$(BIN) bench

# PGN ingest (parse + SAN + legality + sampling) against pgn-extract, when installed.
target/corpus.pgn: data/sf15-selfplay-1.pgn.xz data/sf15-selfplay-2.pgn.xz
	xz -dc $^ > $@.tmp && mv $@.tmp $@
bench-pgn: build target/corpus.pgn
	$(BIN) bench-pgn --pgn target/corpus.pgn --runs 5

# Datasets from the shipped corpus (paper sampling, 5 % of games held out).
dataset: build
	$(BIN) data --pgn data/sf15-selfplay-1.pgn.xz --pgn data/sf15-selfplay-2.pgn.xz --out runs/dataset

# Grow the corpus with Stockfish self-play (needs Stockfish: make install-stockfish).
STOCKFISH ?= $(shell command -v stockfish || ls /usr/games/stockfish 2>/dev/null)
GAMES ?= 1000
datagen: build
	@test -n "$(STOCKFISH)" || { echo "Stockfish not found: run 'make install-stockfish' (apt) or set STOCKFISH=path"; exit 1; }
	$(BIN) datagen --engine $(STOCKFISH) --option Hash=16 --option Threads=1 --out data/datagen.pgn --games $(GAMES) --concurrency 2

# Optional: installs Debian's Stockfish 15.1 (an anchor for benchmarks and an opponent). Uses apt.
install-stockfish:
	@echo "Installing Stockfish with apt-get (Debian package 'stockfish', into /usr/games)"
	apt-get update && apt-get install -y stockfish

perft: build
	$(BIN) perft 6

clean:
	$(CARGO) clean
