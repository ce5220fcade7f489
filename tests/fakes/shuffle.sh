#!/usr/bin/env bash
# Fake UCI engine: shuffles knights from the initial position (g1f3 g8f6 f3g1 f6g8 ...),
# so a game ends by threefold repetition at ply 8 unless adjudicated first.
# $1 = score reported for White in centipawns (default 0); the mover reports its own view.
score=${1:-0}
cycle=(g1f3 g8f6 f3g1 f6g8)
ply=0
while IFS= read -r line; do
  case "$line" in
    uci) echo "id name FakeShuffle"; echo "uciok" ;;
    isready) echo "readyok" ;;
    "position "*)
      if [[ "$line" == *" moves "* ]]; then rest="${line#* moves }"; set -- $rest; ply=$#; else ply=0; fi ;;
    go*)
      m="${cycle[$((ply % 4))]}"
      if (( ply % 2 == 0 )); then s=$score; else s=$(( -score )); fi
      echo "info depth 5 score cp $s nodes 10 pv $m"
      echo "bestmove $m" ;;
    quit) exit 0 ;;
  esac
done
