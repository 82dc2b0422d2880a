#!/usr/bin/env bash
# Runs the whole test suite: formatting, lints, unit and integration tests. Tests that need root,
# loop devices, cgroups, FUSE, the database servers or Chromium print "SKIP: <test>: <reason>"
# and pass when those are missing (under CI=true such a skip fails the test instead); the
# summary at the end says how many were skipped and why.
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
cargo fmt --all -- --check
# The MPI build (docs/distributed.md) needs Open MPI and libclang (scripts/setup.sh installs them):
# every target with it; the build without it (the library and binary) on its own.
cargo clippy --all-targets --features mpi --quiet -- -D warnings
cargo clippy --lib --bins --quiet -- -D warnings
echo "test.sh: fmt and clippy took $(( $(date +%s) - t0 )) s"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# As root, start private PostgreSQL and MariaDB servers for the `iolab db` tests (they skip
# without them) and stop them afterwards.
if [ "$(id -u)" -eq 0 ] && [ -z "${IOLAB_TEST_PG_URL:-}${IOLAB_TEST_MYSQL_URL:-}" ]; then
  if servers=$(bash scripts/dbservers.sh start all 2>/dev/null); then
    eval "$(printf '%s\n' "$servers" | sed 's/^/export /')"
    trap 'bash scripts/dbservers.sh stop all; rm -f "$log"' EXIT
  else
    echo "test.sh: could not start the database servers; the server tests will be skipped" >&2
  fi
fi
set +e
# One build, with MPI: tests/mpi.rs (distributed runs under mpirun) needs it, and every other
# test runs the same binary (the MPI build differs only when started by an MPI launcher; the
# build without MPI is checked by the first clippy run above).
# The tests run one at a time (they measure, and many compare timings or a device's own counts),
# except the modules in `together`, which measure nothing whose figure or timing they assert and
# share nothing with each other (pts:: asserts its rounds agree with each other, no figure):
# they run two at a time at the end, beside the distributed runs
# (mpi::, which wait on their ranks' heartbeats and timeouts).
together="architecture:: check_docs:: schemas:: env_fixtures:: import_parse:: snapshots:: fuzz_input:: signatures:: safety_target:: store:: report:: suites:: engine_contract:: pts:: fingerprint:: package::"
skip_them=$(for m in $together mpi::; do printf -- '--skip %s ' "$m"; done)
start=$(date +%s)
rc=0
cargo test --quiet --features mpi --no-fail-fast --lib --bins -- --nocapture --test-threads=1 2>&1 | tee "$log"
[ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
# the integration test binary, built once (it runs from the repository root, as cargo runs it)
bin=$(cargo test --features mpi --test integration --no-run --message-format=json 2>/dev/null |
  grep -o '"executable":"[^"]*"' | tail -1 | cut -d'"' -f4)
if [ -z "$bin" ] || [ ! -x "$bin" ]; then
  echo "test.sh: the integration tests did not build" >&2
  cargo test --features mpi --test integration --no-run
  exit 1
fi
echo "test.sh: built in $(( $(date +%s) - start )) s"
# shellcheck disable=SC2086 # one word per flag and module
"$bin" --nocapture --test-threads=1 $skip_them 2>&1 | tee -a "$log"
[ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
echo "test.sh: the tests one at a time took $(( $(date +%s) - start )) s"
"$bin" --nocapture --test-threads=1 mpi:: >"$log.mpi" 2>&1 &
mpi=$!
# shellcheck disable=SC2086
"$bin" --nocapture --test-threads=2 $together 2>&1 | tee -a "$log"
[ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
wait "$mpi" || rc=1
tee -a "$log" <"$log.mpi"
rm -f "$log.mpi"
set -e
echo "test.sh: cargo test took $(( $(date +%s) - start )) s"
# A SKIP line may follow cargo's progress dots on the same line: match anywhere, once per line.
skips=$(grep -o 'SKIP: .*' "$log" || true)
skipped=$(printf '%s' "$skips" | grep -c '^SKIP:' || true)
passed=$(grep -E '^test result:' "$log" | grep -Eo '[0-9]+ passed' | awk '{s+=$1} END {print s+0}')
failed=$(grep -E '^test result:' "$log" | grep -Eo '[0-9]+ failed' | awk '{s+=$1} END {print s+0}')
echo
if [ "$skipped" -gt 0 ]; then
  echo "skipped checks (they ran as no-ops):"
  printf '%s\n' "$skips" | sort | uniq -c
fi
echo "$((passed - skipped)) passed, $failed failed, $skipped skipped"
exit "$rc"
