#!/usr/bin/env bash
# make test-stress: the whole test suite several times in a row while busy processes hold every
# CPU, so that a test which depends on the machine's speed, on how work splits over threads or
# workers, or on a race that an idle machine always wins, fails here rather than on someone's
# loaded laptop or CI box. Every round must pass.
#
#   tests/stress.sh [PYTEST ARGS...]
#   STRESS_ROUNDS=5      rounds (default 5)
#   STRESS_BUSY=N        busy processes (default: one per CPU, at least 2)
#   STRESS_LOG_DIR=DIR   where each round's pytest output goes (default: a new temporary dir)
#
# Prints one summary line per round and exits 0 only if every round passed. The busy processes
# are ended when the script exits, however it exits (failure, Ctrl-C, SIGTERM); if the script is
# killed outright they notice that their parent is gone and end by themselves.
set -u
cd "$(dirname "$0")/.."

rounds=${STRESS_ROUNDS:-5}
cpus=$(nproc 2>/dev/null || echo 2)
busy=${STRESS_BUSY:-$((cpus > 2 ? cpus : 2))}
log_dir=${STRESS_LOG_DIR:-$(mktemp -d -t crawler-stress.XXXXXX)}
mkdir -p "$log_dir"
pytest=${PYTEST:-.venv/bin/pytest}

busy_pids=()
pytest_pid=""
stop_all() {
    # pytest first, with SIGINT: it tears its fixtures down (servers, crawls) and ends; SIGTERM
    # if it has not ended within a minute. Then the spinning processes.
    if [ -n "$pytest_pid" ]; then
        kill -INT "$pytest_pid" 2>/dev/null
        for _ in $(seq 600); do
            kill -0 "$pytest_pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -TERM "$pytest_pid" 2>/dev/null
        wait "$pytest_pid" 2>/dev/null
        pytest_pid=""
    fi
    for pid in "${busy_pids[@]}"; do
        kill "$pid" 2>/dev/null
    done
    for pid in "${busy_pids[@]}"; do
        wait "$pid" 2>/dev/null
    done
    busy_pids=()
}
trap stop_all EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

# A pure-Python spin loop per CPU; it checks every few milliseconds that this script still runs.
spin='import os
parent = os.getppid()
while os.getppid() == parent:
    for _ in range(200_000):
        pass'
for _ in $(seq "$busy"); do
    python3 -c "$spin" &
    busy_pids+=("$!")
done

echo "test-stress: $rounds rounds of the suite with $busy busy processes on $cpus CPUs; logs in $log_dir"
passed=0
for round in $(seq "$rounds"); do
    log="$log_dir/round-$round.log"
    start=$(date +%s)
    # In the background and waited for, so that a signal to this script is handled at once;
    # SIGINT restored (a background job starts with it ignored) so pytest can be interrupted.
    python3 -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])' \
        "$pytest" -q -p no:cacheprovider --durations=15 "$@" >"$log" 2>&1 &
    pytest_pid=$!
    wait "$pytest_pid"
    rc=$?
    pytest_pid=""
    seconds=$(($(date +%s) - start))
    totals=$(grep -E '[0-9]+ (passed|failed|errors?)\b.* in [0-9.]+s' "$log" | tail -n 1 | sed -E 's/^=+ //; s/ =+$//')
    if [ "$rc" -eq 0 ]; then
        passed=$((passed + 1))
        echo "round $round/$rounds: PASS in ${seconds}s (${totals:-no summary})"
    else
        echo "round $round/$rounds: FAIL (exit $rc) in ${seconds}s (${totals:-no summary}); see $log"
        grep -E '^(FAILED|ERROR) ' "$log" | sed 's/^/    /'
    fi
done
echo "test-stress: $passed of $rounds rounds passed"
[ "$passed" -eq "$rounds" ]
