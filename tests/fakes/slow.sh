#!/usr/bin/env bash
# Fake UCI engine that thinks too long: sleeps $1 seconds (default 1) before every answer,
# then plays the knight shuffle. Against a short clock it loses on time; with a long
# sleep it looks hung.
delay=${1:-1}
cycle=(g1f3 g8f6 f3g1 f6g8)
ply=0
while IFS= read -r line; do
  case "$line" in
    uci) echo "id name FakeSlow"; echo "uciok" ;;
    isready) echo "readyok" ;;
    "position "*)
      if [[ "$line" == *" moves "* ]]; then rest="${line#* moves }"; set -- $rest; ply=$#; else ply=0; fi ;;
    go*) sleep "$delay"; echo "bestmove ${cycle[$((ply % 4))]}" ;;
    quit) exit 0 ;;
  esac
done
