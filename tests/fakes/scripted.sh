#!/usr/bin/env bash
# Fake UCI engine for tests: plays a fixed game move by move (ply = number of moves after
# "moves" in the last position command) and reports a score that grows for White.
# FAKE_MOVES overrides the script (space-separated UCI moves).
script=(${FAKE_MOVES:-e2e4 e7e5 f1c4 b8c6 d1h5 g8f6 h5f7})
ply=0
while IFS= read -r line; do
  case "$line" in
    uci) echo "id name FakeScripted"; echo "id author tests"; echo "option name Hash type spin default 16 min 1 max 64"; echo "uciok" ;;
    isready) echo "readyok" ;;
    "position "*)
      if [[ "$line" == *" moves "* ]]; then rest="${line#* moves }"; set -- $rest; ply=$#; else ply=0; fi ;;
    go*)
      m="${script[$ply]:-0000}"
      # Score from the mover's view: White is winning more each move.
      if (( ply % 2 == 0 )); then s=$(( 100 * ply )); else s=$(( -100 * ply )); fi
      echo "info depth 3 seldepth 4 multipv 1 score cp $s nodes 42 pv $m"
      echo "bestmove $m" ;;
    quit) exit 0 ;;
    *) ;;
  esac
done
