#!/usr/bin/env bash
# The reference reports of the leaderboard: pisti-benchmark on every reference agent of each task,
# each report copied to benchmarks/reports/TASK/AGENT.json, then docs/leaderboard.md regenerated.
#
#   bash benchmarks/reference_reports.sh                 # every task
#   bash benchmarks/reference_reports.sh pisti-2p        # some tasks
#   SHORT=0 bash benchmarks/reference_reports.sh         # without pisti-2p's short deal set
#
# The figures are the same on any machine with the same package versions; the wall times in the
# reports are this machine's. pimc, ismcts and search think at every decision on the Python engine, and a
# whole deal set would take them a day or more on a 2-core CPU: they play pisti-2p's short deal set,
# next to the other reference agents on the same set (docs/benchmark.md, "Search players and the
# short deal set"), in benchmarks/reports/pisti-2p/short/.
set -euo pipefail
cd "$(dirname "$0")/.."
declare -A shipped=([pisti-2p]=pisti-2p [pisti-2p-match]=pisti-2p [pisti-4p-partners]=pisti-4p
                    [pisti-bluff-2p]=pisti-bluff [pisti-3p]="")
tasks=("${@:-pisti-2p pisti-4p-partners pisti-3p pisti-bluff-2p pisti-2p-match}")
for task in ${tasks[@]}; do
  for agent in random greedy expert ${shipped[$task]}; do
    out="runs/reference/$task/$agent"
    python -m training.benchmark.cli "$agent" --task "$task" --workers "$(nproc)" --threads 1 --quiet --out "$out"
    mkdir -p "benchmarks/reports/$task"
    cp "$out/benchmark.json" "benchmarks/reports/$task/$agent.json"
  done
  if [ "$task" = pisti-2p ] && [ "${SHORT:-1}" != 0 ]; then
    for agent in random greedy expert pisti-2p pimc ismcts search; do
      out="runs/reference/$task/short/$agent"
      python -m training.benchmark.cli "$agent" --task "$task" --deal-set short --workers "$(nproc)" \
        --threads 1 --quiet --out "$out"
      mkdir -p "benchmarks/reports/$task/short"
      cp "$out/benchmark.json" "benchmarks/reports/$task/short/$agent.json"
    done
  fi
done
python -m training.benchmark.leaderboard benchmarks/reports --learning benchmarks/learning --out docs/leaderboard.md
