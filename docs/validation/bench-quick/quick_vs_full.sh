#!/bin/sh
# The quick CPU suite against the full one: ROUNDS pairs of `perfcast bench --backend cpu [--quick] --json`,
# alternating which goes first; each figure's median over the quick runs / its median over the full runs,
# and each run's wall time. Usage: sh docs/validation/bench-quick/quick_vs_full.sh [ROUNDS] > result.md
set -e
rounds=${1:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
i=1
while [ "$i" -le "$rounds" ]; do
    if [ $((i % 2)) -eq 1 ]; then order="quick full"; else order="full quick"; fi
    for mode in $order; do
        flag=""; [ "$mode" = quick ] && flag="--quick"
        start=$(date +%s.%N)
        perfcast bench --backend cpu $flag --json > "$work/$mode-$i.json" 2>/dev/null
        echo "$mode $(echo "$(date +%s.%N) - $start" | bc)" >> "$work/times"
    done
    i=$((i + 1))
done
python3 - "$work" "$rounds" <<'PY'
import json, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
def figures(path):
    return {c["figure"]: c["measured"] for c in json.load(open(path))["compared"]}
quick = [figures(f"{work}/quick-{i}.json") for i in range(1, rounds + 1)]
full = [figures(f"{work}/full-{i}.json") for i in range(1, rounds + 1)]
times = {"quick": [], "full": []}
for line in open(f"{work}/times"):
    mode, seconds = line.split()
    times[mode].append(float(seconds))
print(f"{rounds} pairs, alternating; wall time quick {min(times['quick']):.1f}-{max(times['quick']):.1f} s, "
      f"full {min(times['full']):.1f}-{max(times['full']):.1f} s\n")
print("| figure | quick (median) | full (median) | quick / full |\n|---|---:|---:|---:|")
for name in quick[0]:
    q = statistics.median(run[name] for run in quick)
    f = statistics.median(run[name] for run in full)
    print(f"| {name} | {q / 1e9:.3g} G | {f / 1e9:.3g} G | **{q / f:.3f}** |")
PY
