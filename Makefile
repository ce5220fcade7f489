SHELL := /bin/bash
# deepchess: user entry points. Everything here needs only the Rust toolchain unless a
# target says otherwise (install-* targets install optional tools with apt/pip, explicitly).
CARGO ?= cargo
BIN := target/release/deepchess

.PHONY: all build train train-dbn train-cnn cnn-data train-neurochess train-selfplay escape-suite escape neurochess-table1 neurochess-seeds install-gnuchess test test-full bench bench-perft bench-pgn bench-tensor bench-search bench-dbn bench-train bench-neurochess bench-selfplay perft datagen dataset labels-dbn match match-long gauntlet tournament tournament-long install-stockfish install-numpy install-sklearn install-torch install-jax fidelity clean

all: build

build:
	$(CARGO) build --release

# The README's test command, and what CI runs. Fast: deep perft etc. are #[ignore]d.
# The UCI compliance suite runs a second time with Threads 2 (Lazy SMP).
test:
	@mkdir -p target
	$(CARGO) test --all-targets 2>&1 | tee target/test.log; exit $${PIPESTATUS[0]}
	DEEPCHESS_TEST_THREADS=2 $(CARGO) test --test uci_compliance 2>&1 | tee -a target/test.log; exit $${PIPESTATUS[0]}

# Everything, including the ignored (slow) tests, and the fuzzing at 5000 inputs per surface
# instead of make test's 200 (files) and 300 (chess text; 64 UCI scripts). Run before
# resolving an issue.
test-full:
	DEEPCHESS_FUZZ_CASES=5000 $(CARGO) test --all-targets -- --include-ignored

# Every benchmark, each figure beside its anchor as a ratio measured in the same run.
bench: bench-tensor bench-perft bench-pgn bench-search bench-dbn bench-train bench-neurochess bench-selfplay

# Perft speed against Stockfish's `go perft` (when Stockfish is installed; see install-stockfish).
bench-perft: build
	$(BIN) bench-perft --runs 5

# Comparison alpha-beta: fixed-depth search over 30 built-in positions (deterministic node
# count), then the shipped nets (compact, distilled) against the handcrafted comparator, same
# run (ratios).
bench-search: build
	$(BIN) bench
	$(BIN) bench --depth 8 --vs-net

# Seed 001's fine-tuning at batch 32 and 256 beside the GEMM's GFLOPS on the same batch, and
# the DBN evaluators' search speed against the handcrafted one (interleaved rounds).
bench-dbn: build
	$(BIN) bench-dbn
	$(BIN) bench --depth 7 --vs dbn-classify,dbn-regress,dbn-quantized --rounds 3

# Seed 004: the 175 features and V's evaluations against the handcrafted evaluator's, a
# Tangent-Prop step against a plain one (interleaved rounds, medians), then V's search speed
# against the handcrafted one.
bench-neurochess: build
	$(BIN) bench-neurochess --rounds 5
	$(BIN) bench --depth 7 --vs neurochess,neurochess-bp --rounds 3

# Seed 002: one agent net's training update beside PyTorch (when importable: make
# install-torch) at 1 thread and at every core, and the agents' self-play games/s.
bench-selfplay: build
	$(BIN) bench-selfplay --rounds 5 --threads 1
	$(BIN) bench-selfplay --rounds 5

# DeepChess training steps (phase 2: Siamese pairs; phase 1: the first Pos2Vec autoencoder) at
# batch 256 beside JAX training the same network (make install-jax; skipped with a message when
# absent), interleaved rounds, ratios and fractions of the FMA peak measured in the same run,
# with products in f32 and in bf16 (both sides; train --precision bf16); then where our
# phase-2 step's time goes.
bench-train: build
	$(BIN) bench-train --rounds 5 --precision both --breakdown

# PGN ingest (parse + SAN + legality + sampling) against pgn-extract, when installed.
target/corpus.pgn: data/sf15-selfplay-1.pgn.xz data/sf15-selfplay-2.pgn.xz
	xz -dc $^ > $@.tmp && mv $@.tmp $@
bench-pgn: build target/corpus.pgn
	$(BIN) bench-pgn --pgn target/corpus.pgn --runs 5

# Datasets from the shipped corpus (data/*.pgn.xz and data/datagen/*.pgn.xz, data/README.md):
# every quiet position of each decisive game after move 5 (--per-game 0: measured better than
# the paper's 10, docs/notebook/results.md), 5 % of games held out by a hash of their moves.
CORPUS := $(sort $(wildcard data/*.pgn.xz)) $(sort $(wildcard data/datagen/*.pgn.xz))
PER_GAME ?= 0
dataset: runs/dataset/train.dcds
runs/dataset/train.dcds: $(CORPUS) Makefile | build
	$(BIN) data $(foreach f,$(CORPUS),--pgn $(f)) --per-game $(PER_GAME) --out runs/dataset --quiet

# The three training phases. PROFILE=quick (default, ~8 min on 2 cores) | paper | tiny.
# Always resumable: rerunning continues an interrupted run or just prints its results.
PROFILE ?= quick
train: build dataset
	$(BIN) train --profile $(PROFILE) --data runs/dataset --out runs/$(PROFILE) --resume

# Seed 001's deep belief networks (src/dbn): three configurations x three heads, each under
# the seed's protocol (a fold over positions) and on held-out games, from the committed
# labelled set (data/dbn/). DBN_PROFILE=quick (default, <= 30 min on 2 cores) | paper | tiny.
# Resumable like `train`; the table lands in runs/dbn-DBN_PROFILE/results.md. A net trains on
# one thread: DBN_JOBS net folders (folds, configurations) train at once (same tensors).
DBN_PROFILE ?= quick
DBN_JOBS ?= $(CONCURRENCY)
train-dbn: build
	$(BIN) train --system dbn --profile $(DBN_PROFILE) --jobs $(DBN_JOBS) --out runs/dbn-$(DBN_PROFILE) --resume

# Seed 003's convolutional classifier (src/cnn): every position of the decisive Stockfish
# games (data/*.pgn.xz, data/datagen/sf15-*), split into training and two validation sets
# (held-out games; held-out positions of trained games); tests on games the training never
# saw: the later Stockfish file (data/datagen-next/) and 5,000 of our own engine's games.
# CNN_PROFILE=quick (default, <= 30 min on 2 cores) | paper | tiny. Resumable; the table
# lands in runs/cnn-CNN_PROFILE/results.md.
CNN_PROFILE ?= quick
CNN_CORPUS := data/sf15-selfplay-1.pgn.xz data/sf15-selfplay-2.pgn.xz $(wildcard data/datagen/sf15-*.pgn.xz)
CNN_ALL := --per-game 0 --skip-plies 0 --keep-captures --valid-per-mille 0 --quiet
runs/cnn-data/corpus/train.dcds: $(CNN_CORPUS) | build
	$(BIN) data $(foreach f,$(CNN_CORPUS),--pgn $(f)) $(CNN_ALL) --out runs/cnn-data/corpus
runs/cnn-data/later/train.dcds: data/datagen-next/sf15-datagen-4.pgn.xz | build
	$(BIN) data --pgn $< $(CNN_ALL) --out runs/cnn-data/later
runs/cnn-data/own/train.dcds: data/datagen/own-handcrafted-1.pgn.xz | build
	$(BIN) data --pgn $< $(CNN_ALL) --max-games 6000 --out runs/cnn-data/own
cnn-data: runs/cnn-data/corpus/train.dcds runs/cnn-data/later/train.dcds runs/cnn-data/own/train.dcds
train-cnn: build cnn-data
	$(BIN) train --system cnn --profile $(CNN_PROFILE) --corpus runs/cnn-data/corpus/train.dcds \
	  --test later-stockfish=runs/cnn-data/later/train.dcds --test own-engine=runs/cnn-data/own/train.dcds \
	  --out runs/cnn-$(CNN_PROFILE) --resume

# Seed 004's NeuroChess (src/neurochess): the chess model M on the shipped Stockfish games,
# then V by TD(0) over 2,400 games (expert prefix + self-play), by plain back-propagation and
# by EBNN from the same seed, a snapshot every 100 games; then Table 1 (neurochess-table1).
# NC_PROFILE=quick (default) | paper | tiny. NC_FEATURES=gnu (default: GNU Chess's evaluation
# terms, the seed's "original GNU-Chess features") | ours (our 175, the second condition).
# Resumable; runs/neurochess-NC_PROFILE-NC_FEATURES/.
NC_PROFILE ?= quick
NC_FEATURES ?= gnu
NC_RUN ?= runs/neurochess-$(NC_PROFILE)-$(NC_FEATURES)
# More of train's flags for both targets (e.g. NC_TRAIN_FLAGS="--slopes-off material").
NC_TRAIN_FLAGS ?=
train-neurochess: build
	$(BIN) train --system neurochess --profile $(NC_PROFILE) --features $(NC_FEATURES) $(NC_TRAIN_FLAGS) --out $(NC_RUN) --resume
	$(MAKE) --no-print-directory neurochess-table1 RUN=$(NC_RUN)

# Table 1 of seed 004: every snapshot of RUN against GNU Chess's evaluation (eval::gnu, written
# from its authors' prose) in our one search, "the same search mechanism" as the seed's, both
# sides at depth 2 with Quiescence=false and Selective=false (no quiescence, check extension,
# null move, reductions or pruning: cut at the nominal depth), every game played out (no
# adjudication: mate or a rules draw), against that opponent at depth 2 and at depth 4; as many test games as training
# games (NC_TEST_SHARE=1, the seed's protocol; less for a quicker look), openings paired between
# BP and EBNN. Then the same against our handcrafted evaluator at depth 2 (what the settings
# were chosen on), and, a second condition, against GNU Chess 6.2.7 itself at depth 2 and 4 (its
# own search, whose quiescence no option turns off; optional: make install-gnuchess; without it
# those two curves are skipped, said so). Each curve: RUN/table1-NAME/curve.md, curve.svg,
# games.pgn.
GNUCHESS ?= $(shell command -v gnuchess || ls /usr/games/gnuchess 2>/dev/null)
RUN ?= $(NC_RUN)
NC_TEST_SHARE ?= 1
NC_SEARCH = option.Quiescence=false option.Selective=false
NC_PLAYER = --engine name=neurochess builtin=neurochess $(NC_SEARCH) depth=2
# Openings: the start position and 6 random moves, a suite per curve kind (random:PLIES:SEED,
# 10,000 distinct openings each): the test curves' never repeat within a curve and share none
# with the validation curve's (checked by a unit test of arena::openings for these seeds).
NC_TEST_OPENINGS ?= random:6:4004
NC_VALID_OPENINGS ?= random:6:4005
NC_PLAY = --test-share $(NC_TEST_SHARE) --concurrency $(CONCURRENCY) --no-adjudication --resume
NC_CURVE = --curve $(RUN)/snapshots.txt $(NC_PLAY)
neurochess-table1: build
	@test -f $(RUN)/snapshots.txt || { echo "$(RUN)/snapshots.txt not found: train first (make train-neurochess)"; exit 1; }
	set -e; for d in 2 4; do \
	  $(BIN) match $(NC_PLAYER) --engine name=gnu-eval-d$$d builtin=gnu $(NC_SEARCH) depth=$$d \
	    $(NC_CURVE) --openings $(NC_TEST_OPENINGS) --curve-out $(RUN)/table1-gnu-eval-d$$d; \
	done
	$(BIN) match $(NC_PLAYER) --engine name=handcrafted builtin=handcrafted $(NC_SEARCH) depth=2 \
	  $(NC_CURVE) --openings $(NC_VALID_OPENINGS) --curve-out $(RUN)/table1-handcrafted-d2
	@if [ -z "$(GNUCHESS)" ]; then echo "GNU Chess not found: the two GNU Chess 6.2.7 curves are skipped (make install-gnuchess, or GNUCHESS=path)"; else \
	  set -e; for d in 2 4; do \
	    $(BIN) match $(NC_PLAYER) --engine name=gnuchess-d$$d cmd=$(GNUCHESS) -u option.OwnBook=false depth=$$d \
	      $(NC_CURVE) --openings $(NC_TEST_OPENINGS) --curve-out $(RUN)/table1-gnuchess-d$$d; \
	  done; fi

# Table 1 over ten seeds of the whole pipeline (issue 82): each seed's M and both Vs, then its
# test curves against the GNU evaluation at depth 2 (every seed first: the headline) and at
# depth 4, as neurochess-table1 plays them; then 'deepchess curves' sums each depth up over the
# seeds (mean cumulative wins and 95 % interval per snapshot, EBNN - BP per seed and overall,
# the comparison's power) into NC_RUN-seeds-dD.md. Seed 1's run
# is train-neurochess's own (NC_RUN); seed N's is NC_RUN-seedN. Every step resumes: rerun
# to continue after a stop. About 10 min a seed at depth 2 and as much at depth 4, 2 cores.
NC_SEEDS ?= 1 2 3 4 5 6 7 8 9 10
nc_seed_run = $(if $(filter 1,$(1)),$(NC_RUN),$(NC_RUN)-seed$(1))
neurochess-seeds: build
	set -e; for s in $(NC_SEEDS); do \
	  run=$(NC_RUN); [ $$s = 1 ] || run=$(NC_RUN)-seed$$s; \
	  $(BIN) train --system neurochess --profile $(NC_PROFILE) --features $(NC_FEATURES) $(NC_TRAIN_FLAGS) --seed $$s --out $$run --resume; \
	  $(BIN) match $(NC_PLAYER) --engine name=gnu-eval-d2 builtin=gnu $(NC_SEARCH) depth=2 --curve $$run/snapshots.txt \
	    $(NC_PLAY) --openings $(NC_TEST_OPENINGS) --curve-out $$run/table1-gnu-eval-d2; \
	done
	$(BIN) curves $(foreach s,$(NC_SEEDS),$(call nc_seed_run,$(s))/table1-gnu-eval-d2) --diff ebnn:bp --out $(NC_RUN)-seeds-d2.md
	set -e; for s in $(NC_SEEDS); do \
	  run=$(NC_RUN); [ $$s = 1 ] || run=$(NC_RUN)-seed$$s; \
	  $(BIN) match $(NC_PLAYER) --engine name=gnu-eval-d4 builtin=gnu $(NC_SEARCH) depth=4 --curve $$run/snapshots.txt \
	    $(NC_PLAY) --openings $(NC_TEST_OPENINGS) --curve-out $$run/table1-gnu-eval-d4; \
	done
	$(BIN) curves $(foreach s,$(NC_SEEDS),$(call nc_seed_run,$(s))/table1-gnu-eval-d4) --diff ebnn:bp --out $(NC_RUN)-seeds-d4.md

# Seed 002's two self-play Q-learning agents (work in progress, issue 48): SP_PROFILE=quick
# (10,000 games, a few minutes on 2 cores) | paper (the seed's 100,000) | tiny. Resumable;
# the milestone table in runs/selfplay-SP_PROFILE/results.md.
SP_PROFILE ?= quick
train-selfplay: build
	$(BIN) train --system selfplay --profile $(SP_PROFILE) --out runs/selfplay-$(SP_PROFILE) --resume

# Seed 002's escape milestone: the shipped suite (500 positions of the held-out datagen-next
# games, each with one piece en prise and a save), rebuilt, and the shipped agents measured on
# it beside the handcrafted evaluator at depth 1 (and a random mover, a greedy capturer).
escape-suite: build
	$(BIN) escape --build --pgn data/datagen-next/sf15-datagen-4.pgn.xz --out data/escape/suite.epd --positions 500 --seed 1

escape: build
	$(BIN) escape --player qagent --player handcrafted --player compact --depth 1

# Optional: installs Debian's GNU Chess 6.2 (seed 004's opponent; UCI with 'gnuchess -u'). Uses apt.
install-gnuchess:
	@echo "Installing GNU Chess with apt-get (Debian package 'gnuchess', into /usr/games)"
	apt-get update && apt-get install -y gnuchess

# Grow the corpus with Stockfish self-play (needs Stockfish: make install-stockfish).
STOCKFISH ?= $(shell command -v stockfish || ls /usr/games/stockfish 2>/dev/null)
GAMES ?= 1000
# SOURCE=stockfish (default; needs `make install-stockfish`) or SOURCE=handcrafted (our own
# engine with the handcrafted evaluator over UCI at 300-5000 nodes a move: nothing to install,
# ~75,000 games/hour on 2 cores; openings after 8 plies of the Stockfish games, never from a
# held-out game, so the match suite stays unseen).
# Resumable: rerun the same command after a kill. Output: DATAGEN_OUT (default runs/datagen-SOURCE.pgn).
SOURCE ?= stockfish
SEED ?= 1
DATAGEN_OUT ?= runs/datagen-$(SOURCE).pgn
datagen: build
ifeq ($(SOURCE),handcrafted)
	$(BIN) datagen --engine "$(abspath $(BIN))" --option Eval=handcrafted --option Hash=4 \
	  $(foreach f,$(wildcard data/sf15-*.pgn.xz data/datagen/sf15-*.pgn.xz),--book $(f)) --book-plies 8 \
	  --opening-plies 0:0 --nodes 300:5000 --out $(DATAGEN_OUT) --games $(GAMES) --concurrency 2 --seed $(SEED)
else
	@test -n "$(STOCKFISH)" || { echo "Stockfish not found: run 'make install-stockfish' (apt) or set STOCKFISH=path"; exit 1; }
	$(BIN) datagen --engine $(STOCKFISH) --option Hash=16 --option Threads=1 --out $(DATAGEN_OUT) \
	  --games $(GAMES) --concurrency 2 --seed $(SEED)
endif

# Seed 001's labelled set, data/dbn/labels-100k.csv.xz (data/dbn/README.md): 100,000 positions
# of the Stockfish self-play corpus (up to 8 a game after 10 plies, draws included), each with
# its game's result and a Stockfish score at depth 9, both from White's side. Needs Stockfish
# (make install-stockfish; Debian installs it as /usr/games/stockfish); the committed set was
# made with Stockfish 15.1, and another version gives other scores. About 40 min on one core
# (LABELS_JOBS=2 uses two; the labels are the same). Resumable: rerun after a kill. A finished
# set already at LABELS_OUT is checked against this command and kept: delete it (or give another
# LABELS_OUT) to label again.
LABELS_OUT ?= data/dbn/labels-100k.csv.xz
LABELS_DEPTH ?= 9
LABELS_JOBS ?= 1
labels-dbn: build
	@test -n "$(STOCKFISH)" || { echo "Stockfish not found: run 'make install-stockfish' (apt) or set STOCKFISH=path"; exit 1; }
	@mkdir -p $(dir $(LABELS_OUT))
	$(BIN) label --pgn data/sf15-selfplay-1.pgn.xz --pgn data/sf15-selfplay-2.pgn.xz --out $(LABELS_OUT) \
	  --engine $(STOCKFISH) --depth $(LABELS_DEPTH) --per-game 8 --skip-plies 10 --positions 100000 --seed 1 \
	  --jobs $(LABELS_JOBS) --resume

# Match: DeepChess (the engine's default net, the compact distilled one) against the
# handcrafted evaluator in the same search, equal
# time, 2 games at once: about 10 minutes on 2 cores (a handcrafted-vs-handcrafted trial ran
# 8 games of 1+0.01 in 13 s, so 180 games of 2+0.02 take ~10 min).
# Change with GAMES=, TC=, PLAYER=, NET= (net file for PLAYER; empty = the engine's default),
# OPPONENT= (a player spec, see docs/match.md) and OPENING_START= (the first opening of the
# suite, 1-based: a confirmation plays openings no earlier selection used), e.g.
#   make match OPPONENT="name=sf cmd=/usr/games/stockfish option.UCI_LimitStrength=true option.UCI_Elo=1500"
#   make match PLAYER="name=value-searched builtin=value-searched"   (the value student taught by
#   its own search, beyond the paper: on par with handcrafted at 2+0.02, docs/results.md)
# MATCH_EXCLUDE: PGN corpora whose games' start positions are never test openings (default:
# our engine's games that the shipped nets trained on; 55 of the suite's 1,000 began there).
# GAMES defaults to 180 here unless given on the command line (datagen's default is 1000).
MATCH_EXCLUDE ?= data/datagen/own-handcrafted-1.pgn.xz
MATCH_EXCLUDE_FLAGS = $(foreach f,$(MATCH_EXCLUDE),--exclude-starts $(f))
MATCH_GAMES = $(if $(filter command line environment,$(origin GAMES)),$(GAMES),180)
TC ?= 2+0.02
NET ?=
PLAYER ?= name=deepchess builtin=compact $(if $(NET),net=$(NET))
OPPONENT ?= name=handcrafted builtin=handcrafted
CONCURRENCY ?= 2
OPENING_START ?= 1
match: build
	@mkdir -p runs
	@echo "make match: $(MATCH_GAMES) games at tc=$(TC), one point of Table 2's time-control curve (docs/results.md, \"The time-control curve\": the compact net against handcrafted at 2+0.02, 10+0.1, 40+0.4, 4x time and equal nodes)"
	@# A new match gets a fresh PGN; the previous one is kept once as match.prev.pgn.
	@if [ -f runs/match.pgn ]; then mv -f runs/match.pgn runs/match.prev.pgn; fi
	$(BIN) match --engine $(PLAYER) --engine $(OPPONENT) --each tc=$(TC) --games $(MATCH_GAMES) \
	  --concurrency $(CONCURRENCY) --openings data/openings-balanced-1000.epd --opening-start $(OPENING_START) $(MATCH_EXCLUDE_FLAGS) \
	  --pgn runs/match.pgn | tee runs/match.txt; exit $${PIPESTATUS[0]}

# Table 2 at the paper's clock (its 30-minute games; issue 81): PLAYER against OPPONENT at
# LONG_TC (default 120+1.2), LONG_GAMES games (default 100, about 5-6 h on 2 cores), openings
# fixed before the first game from LONG_OPENING_START (536: after the 40+0.4 point's 501-535),
# training starts left out. Resumable: rerun the same command to continue after a stop; the
# games and the table are in runs/match-long-LONG_TC/. The first start copies the program
# there (and its commit to build.txt) and every sitting plays with that copy, so a match
# continued after the code changed is still one build's games.
LONG_TC ?= 120+1.2
LONG_GAMES ?= 100
LONG_OPENING_START ?= 536
LONG_DIR ?= runs/match-long-$(LONG_TC)
match-long: build
	@mkdir -p $(LONG_DIR)
	@[ -x $(LONG_DIR)/deepchess ] || { cp $(BIN) $(LONG_DIR)/deepchess && \
	  (git rev-parse --short HEAD 2>/dev/null || echo unknown) > $(LONG_DIR)/build.txt && \
	  echo "match-long: playing with this build ($$(cat $(LONG_DIR)/build.txt)), copied to $(LONG_DIR)/deepchess"; }
	$(LONG_DIR)/deepchess match --engine $(PLAYER) --engine $(OPPONENT) --each tc=$(LONG_TC) --games $(LONG_GAMES) \
	  --concurrency $(CONCURRENCY) --openings data/openings-balanced-1000.epd --opening-start $(LONG_OPENING_START) $(MATCH_EXCLUDE_FLAGS) \
	  --pgn $(LONG_DIR)/games.pgn --resume | tee $(LONG_DIR)/table.txt; exit $${PIPESTATUS[0]}

# Gauntlet: PLAYER against Stockfish limited to several UCI_Elo levels (Stockfish 15.1 accepts
# 1350-2850). Needs Stockfish: make install-stockfish. Each run gets its own folder
# runs/gauntlet-DATE-TIME/ (one PGN and one table per level), and ends with PLAYER's rating on
# the UCI_Elo scale fitted to all levels (deepchess gauntlet-fit), saved as fit.txt there.
# GAUNTLET_OPENING_START: the first opening of data/openings-balanced-1000.epd (1-based).
GAUNTLET_ELOS ?= 1900 2000 2100
GAUNTLET_GAMES ?= 100
GAUNTLET_OPENING_START ?= 1
GAUNTLET_TC ?= 10+0.1
GAUNTLET_STAMPED := runs/gauntlet-$(shell date +%Y%m%d-%H%M%S)
GAUNTLET_DIR ?= $(GAUNTLET_STAMPED)
GAUNTLET_NAME = $(or $(patsubst name=%,%,$(filter name=%,$(PLAYER))),deepchess)
gauntlet: build
	@test -n "$(STOCKFISH)" || { echo "Stockfish not found: run 'make install-stockfish' (apt) or set STOCKFISH=path"; exit 1; }
	@mkdir -p $(GAUNTLET_DIR)
	set -e; for elo in $(GAUNTLET_ELOS); do \
	  $(BIN) match --engine $(PLAYER) --engine name=sf-$$elo cmd=$(STOCKFISH) option.Threads=1 option.Hash=16 \
	    option.UCI_LimitStrength=true option.UCI_Elo=$$elo --each tc=$(GAUNTLET_TC) --games $(GAUNTLET_GAMES) \
	    --concurrency $(CONCURRENCY) --openings data/openings-balanced-1000.epd --opening-start $(or $(GAUNTLET_OPENING_START),1) \
	    --pgn $(GAUNTLET_DIR)/$$elo.pgn \
	    | tee $(GAUNTLET_DIR)/$$elo.txt; test $${PIPESTATUS[0]} -eq 0; \
	done
	$(BIN) gauntlet-fit --player $(GAUNTLET_NAME) $(foreach e,$(GAUNTLET_ELOS),$(e):$(GAUNTLET_DIR)/$(e).pgn) \
	  | tee $(GAUNTLET_DIR)/fit.txt; exit $${PIPESTATUS[0]}

# Optional: installs Debian's Stockfish 15.1 (an anchor for benchmarks and an opponent). Uses apt.
# The tournament: every player of the registry, Stockfish's UCI_Elo levels as anchors and GNU
# Chess when installed (make install-stockfish, make install-gnuchess; without Stockfish the
# handcrafted player is rated 0), at equal time (2+0.02) and equal depth (3), one Elo table per
# condition. About 60 min on 2 cores with 21 players (1,188 games a condition); resumable (rerun to continue). tournament-long: the night
# setting (140 ladder rounds, about 9-10 h) in its own folder. Extra flags: TOURNAMENT_ARGS="--engine name=toga cmd=/usr/games/toga2".
TOURNAMENT_ARGS ?=
tournament: build
	@test -n "$(STOCKFISH)" || echo "Stockfish not found: no UCI_Elo anchors, the handcrafted player is rated 0 (make install-stockfish)"
	@test -n "$(GNUCHESS)" || echo "GNU Chess not found: played without it (make install-gnuchess)"
	$(BIN) tournament --out runs/tournament --stockfish $(or $(STOCKFISH),none) --gnuchess $(or $(GNUCHESS),none) $(TOURNAMENT_ARGS)
tournament-long: build
	$(BIN) tournament --long --out runs/tournament-long --stockfish $(or $(STOCKFISH),none) --gnuchess $(or $(GNUCHESS),none) $(TOURNAMENT_ARGS)

install-stockfish:
	@echo "Installing Stockfish with apt-get (Debian package 'stockfish', into /usr/games)"
	apt-get update && apt-get install -y stockfish
# GEMM GFLOPS per kernel on the network shapes (+ numpy/OpenBLAS ratio if numpy is importable),
# the sparse input layer, RBM CD-1 training (+ scikit-learn ratio if sklearn is importable), and
# seed 003's convolution and pooling layers (+ PyTorch 1-thread ratio if torch is importable:
# make install-torch). One part only: $(BIN) bench-tensor --only conv (or gemm, sparse, rbm).
bench-tensor: build
	$(BIN) bench-tensor

# Optional: numpy, only for the OpenBLAS comparison in bench-tensor.
install-numpy:
	@echo "Installing numpy with pip (only used by 'make bench-tensor' to compare with OpenBLAS)"
	pip install numpy

# Optional: scikit-learn, only for the BernoulliRBM comparison in bench-tensor (RBM CD-1
# training speed beside scikit-learn's, same shapes and rows, same run).
install-sklearn:
	@echo "Installing scikit-learn with pip (only used by 'make bench-tensor' to compare RBM training with BernoulliRBM)"
	pip install scikit-learn

# Optional: PyTorch (CPU build), only for the convolution comparison in bench-tensor (seed 003's
# conv and pool layers beside torch with one thread, same shapes, same run).
install-torch:
	@echo "Installing PyTorch, CPU-only build, with pip (only used by 'make bench-tensor' and 'make bench-selfplay' as a speed anchor)"
	pip install torch --index-url https://download.pytorch.org/whl/cpu || { echo "PyTorch's CPU index unreachable: trying PyPI's torch (larger download)"; pip install torch; }

# Optional: JAX (CPU), only for the training-speed comparison in bench-train (the same
# DeepChess network, batch and loss, trained by JAX beside ours in the same run).
install-jax:
	@echo "Installing JAX (CPU) with pip (only used by 'make bench-train' to compare training speed)"
	pip install jax

# The fidelity experiment (docs/notebook/results.md, "The paper's 98 %"): DeepChess and its distilled
# net trained past 97 % training accuracy on 2k, 8k and 32k decisive games of our own engine,
# judged on held-out games and on held-out positions of trained games, every epoch. About 45
# min on 2 cores. Resumable: rerunning continues or prints the results.
FIDELITY_DIR ?= runs/fidelity
FIDELITY_SIZES ?= 2400:2k:20 9600:8k:30 38400:32k:50
fidelity: build
	@set -e; for spec in $(FIDELITY_SIZES); do \
	  IFS=: read games name epochs <<< "$$spec"; \
	  [ -f $(FIDELITY_DIR)/data-$$name/valid-positions.dcds ] || $(BIN) data --pgn data/datagen/own-handcrafted-1.pgn.xz \
	    --out $(FIDELITY_DIR)/data-$$name --split both --valid-per-mille 100 --max-games $$games --quiet; \
	  resume=; [ -f $(FIDELITY_DIR)/run-$$name/run.txt ] && resume=--resume; \
	  $(BIN) train --profile memorise --data $(FIDELITY_DIR)/data-$$name --out $(FIDELITY_DIR)/run-$$name \
	    --phases pos2vec,siamese,distill --siamese-epochs $$epochs --distill-epochs 20 $$resume; \
	done

perft: build
	$(BIN) perft 6

clean:
	$(CARGO) clean
