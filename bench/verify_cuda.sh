#!/usr/bin/env bash
# Replay every runnable fixture with `torchmemlint verify` on a CUDA device and keep, per fixture,
# the JSON verdicts (memory_allocated meter, with the live-storage meter's figures beside it), a
# plot of the curves, and the wall time. Usage: bench/verify_cuda.sh OUT_DIR [--device cuda|cpu]
# One command per fixture, so that a rule without an automatic fix uses its hand-written
# `.correct.py` twin. Summarise with `python bench/verify_summary.py OUT_DIR`.
set -uo pipefail
out=${1:?usage: bench/verify_cuda.sh OUT_DIR [--device cuda|cpu]}
shift
device_args=("${@:---device cuda}")
mkdir -p "$out"
cd "$(dirname "$0")/.."
for script in fixtures/runnable/tml*.py; do
  case $script in *.correct.py) continue ;; esac
  name=$(basename "$script" .py)
  twin=${script%.py}.correct.py
  twin_args=()
  [ -f "$twin" ] && twin_args=(--twin "$twin")
  start=$EPOCHREALTIME
  python3 -m torchmemlint verify "$script" --extend-select TML009,TML011,TML019,TML020 \
      ${device_args[@]} --format json --plot "$out/$name.png" "${twin_args[@]}" \
      > "$out/$name.json" 2> "$out/$name.log"
  status=$?
  end=$EPOCHREALTIME
  echo "$name status=$status wall_s=$(awk "BEGIN {printf \"%.1f\", $end - $start}")" | tee -a "$out/walltimes.txt"
done
