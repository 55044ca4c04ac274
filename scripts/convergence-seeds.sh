#!/usr/bin/env bash
# The convergence harness over many seeds: one line per seed and engine, PASS or FAIL with the run's summary; a
# failing run's whole output (its seed, trace and replay line) is kept in the log folder. Exits non-zero if any failed.
# Build first: swift build --build-tests
# Usage: scripts/convergence-seeds.sh FIRST_SEED COUNT [SHOPS, default 5] [SECONDS, default 120]
#   NORTHWIND_POSTGRES=require  also runs each seed on PostgreSQL with two server instances (needs Debian's postgresql)
#   LOG_DIR                     where the runs' output goes (default: a new temporary folder, printed)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
first=${1:?first seed}
count=${2:?how many seeds}
shops=${3:-5}
seconds=${4:-120}
tests=$root/.build/debug/NorthwindPackageTests.xctest
[ -x "$tests" ] || { echo "convergence-seeds: build the tests first (swift build --build-tests)" >&2; exit 1; }
logs=${LOG_DIR:-$(mktemp -d /tmp/convergence-seeds.XXXXXX)}
mkdir -p "$logs"
echo "seeds $first..$((first + count - 1)), $shops installations, $seconds s each; output in $logs"
failed=0
for seed in $(seq "$first" $((first + count - 1))); do
    log=$logs/seed-$seed.log
    NORTHWIND_CONVERGENCE_SEED=$seed NORTHWIND_CONVERGENCE_SHOPS=$shops NORTHWIND_CONVERGENCE_SECONDS=$seconds \
        NORTHWIND_FAKETIME=${NORTHWIND_FAKETIME:-require} \
        "$tests" --testing-library swift-testing --filter everyInstallationConvergesAfterARandomWorkloadUnderFaults >"$log" 2>&1
    status=$?
    # One summary line per engine that ran.
    summaries=$(grep -E "^convergence run with seed .*steps;" "$log" | sed -E 's/^convergence run with seed [0-9]+: //')
    if [ "$status" -eq 0 ]; then
        echo "seed $seed PASS: ${summaries//$'\n'/ | }"
    else
        failed=$((failed + 1))
        echo "seed $seed FAIL (see $log): $(grep -m1 -A1 'recorded an issue' "$log" | tail -1)"
    fi
done
echo "$failed of $count seeds failed"
[ "$failed" -eq 0 ]
