#!/usr/bin/env bash
# bench/vs-sysbench-oltp.sh: run the same OLTP workloads with sysbench and `iolab db` side by
# side against PostgreSQL and MariaDB/MySQL servers and compare.
#
# Cases (each backend x each test x each thread count):
#   backends  postgres (sysbench --db-driver=pgsql), mysql (--db-driver=mysql); a backend whose
#             server cannot be reached is skipped with a note
#   tests     point-select   sysbench oltp_point_select  vs  iolab db --test point-select
#             update-index   sysbench oltp_update_index  vs  iolab db --test update-index
#   threads   1 and 4 client connections
#
# Both tools run one statement per transaction in AUTOCOMMIT mode (no BEGIN/COMMIT):
#   sysbench  --skip_trx=on (in sysbench 1.0.20 the event() of oltp_point_select.lua and
#             oltp_update_index.lua calls no begin()/commit() at all, so the option is a no-op
#             there; it is passed so that a sysbench whose scripts do wrap them still matches)
#   iolab     --trx auto (its default for these single-statement tests; given explicitly)
# Ids are uniform on both sides: sysbench --rand-type=uniform (its default is "special", a
# skewed distribution), iolab draws ids uniformly. Both use server-side prepared statements,
# prepared once per connection, and the same schema shape (id PK, k with a secondary index,
# c CHAR(120), pad CHAR(60)); iolab's id/k are BIGINT where sysbench's are INTEGER.
# sysbench's tables are sbtest1..N, iolab's iolab_sbtest1..N, so both live side by side; both
# are dropped and reloaded at the start of each backend, and dropped at the end (also on error
# or Ctrl-C).
#
# The workloads are tiny and cached: they measure client + server CPU per statement and the
# round trip, not storage (update-index commits do fsync the WAL/redo log, so they also measure
# the log device's flush latency). On a small machine the client and server compete for the
# same cores, so a heavier client lowers TPS at 4 threads more than at 1.
#
# Environment:
#   IOLAB=path      iolab binary (default: cargo build --release, then target/release/iolab,
#                   honouring CARGO_TARGET_DIR)
#   PG_URL=...      default $IOLAB_TEST_PG_URL, else postgres://iolab:iolab@127.0.0.1:55432/iolab
#   MYSQL_URL=...   default $IOLAB_TEST_MYSQL_URL, else mysql://iolab:iolab@127.0.0.1:53306/iolab
#                   (scripts/dbservers.sh start, as root, starts private servers at these URLs).
#                   Do not point this at a database that `cargo test` (tests/db.rs) is using at
#                   the same time: it drops and restarts the same iolab tables and servers.
#   BACKENDS="postgres mysql"            which backends, in order
#   TESTS="point-select update-index"    which tests, in order
#   THREADS="1 4"   thread (connection) counts
#   TIME=10         seconds each tool runs per case
#   TABLES=1        tables per tool
#   TABLE_SIZE=10000   rows per table
#   REPEAT=1        run each tool this many times per case, alternating sysbench/iolab; the
#                   table shows medians and the spread (max/min - 1) of each tool's TPS
#   SYSBENCH_EXTRA=...  extra sysbench options for every run
#   IOLAB_EXTRA=...     extra `iolab db` options for every run
#   WORKROOT=/var/tmp   where the scratch directory goes
#   KEEP_OUT=1      keep the raw outputs (their directory is printed)
#
# The headline is each tool's client CPU time per transaction (user + system): sysbench is a
# pure client process, so its figure is its /usr/bin/time user+sys over its transactions;
# iolab's is `client_cpu_us_per_tx` from its JSON (the CPU time of its client
# threads over their transaction loops, so without start-up, setup and the device sampler).
# iolab's whole-process /usr/bin/time figure is shown beside it. Then TPS and p95.
set -euo pipefail

T0=$SECONDS
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TIME=${TIME:-10}
THREADS=${THREADS:-1 4}
TABLES=${TABLES:-1}
TABLE_SIZE=${TABLE_SIZE:-10000}
REPEAT=${REPEAT:-1}
BACKENDS=${BACKENDS:-postgres mysql}
TESTS=${TESTS:-point-select update-index}
PG_URL=${PG_URL:-${IOLAB_TEST_PG_URL:-postgres://iolab:iolab@127.0.0.1:55432/iolab}}
MYSQL_URL=${MYSQL_URL:-${IOLAB_TEST_MYSQL_URL:-mysql://iolab:iolab@127.0.0.1:53306/iolab}}
SYSBENCH_EXTRA=${SYSBENCH_EXTRA:-}
IOLAB_EXTRA=${IOLAB_EXTRA:-}
WORKROOT=${WORKROOT:-/var/tmp}
KEEP_OUT=${KEEP_OUT:-0}

die() { echo "vs-sysbench-oltp: $*" >&2; exit 1; }
log() { echo "== $*" >&2; }

[[ "$REPEAT" =~ ^[1-9][0-9]*$ ]] || die "REPEAT must be a positive integer"
[[ "$TIME" =~ ^[1-9][0-9]*$ ]] || die "TIME must be a positive whole number of seconds"
[[ "$TABLES" =~ ^[1-9][0-9]*$ ]] || die "TABLES must be a positive integer"
[[ "$TABLE_SIZE" =~ ^[1-9][0-9]*$ ]] || die "TABLE_SIZE must be a positive integer"
for t in $THREADS; do [[ "$t" =~ ^[1-9][0-9]*$ ]] || die "THREADS: '$t' is not a positive integer"; done
for t in $TESTS; do
    case $t in point-select | update-index) ;; *) die "unknown test '$t' (tests: point-select update-index)" ;; esac
done
for b in $BACKENDS; do
    case $b in postgres | mysql) ;; *) die "unknown backend '$b' (backends: postgres mysql)" ;; esac
done

command -v sysbench >/dev/null || die "sysbench not found (Debian: apt-get install -y sysbench)"
command -v python3 >/dev/null || die "python3 not found"
TIMECMD=()
if [[ -x /usr/bin/time ]]; then TIMECMD=(/usr/bin/time -f "%U %S %e"); fi

if [[ -z "${IOLAB:-}" ]]; then
    tdir=${CARGO_TARGET_DIR:-$REPO/target}
    if command -v cargo >/dev/null; then
        log "building iolab (cargo build --release)"
        (cd "$REPO" && cargo build --release --quiet) || die "cargo build failed"
    fi
    IOLAB=$tdir/release/iolab
fi
[[ -x "$IOLAB" ]] || die "iolab binary not found or not executable: $IOLAB (set IOLAB=path)"

WORK=$(mktemp -d "$WORKROOT/iolab-vs-sysbench.XXXXXX")
OUT=$WORK/out
mkdir -p "$OUT"

NOTES=()
note() { NOTES+=("$*"); echo "   note: $*" >&2; }

# --- URLs and sysbench connection options --------------------------------------------------
# url_fields URL -> "HOST<US>PORT<US>USER<US>PASSWORD<US>DB" (unit-separator delimited so that
# empty fields survive `read`); a PostgreSQL ?host=/socket/dir wins over the URL's host.
url_fields() {
    python3 - "$1" <<'EOF'
import sys, urllib.parse as up
u = up.urlsplit(sys.argv[1])
q = up.parse_qs(u.query)
host = (q.get("host") or [u.hostname or "127.0.0.1"])[0]
port = u.port or (5432 if u.scheme.startswith("postgres") else 3306)
f = [host, str(port), up.unquote(u.username or ""), up.unquote(u.password or ""), u.path.lstrip("/")]
print("\x1f".join(f))
EOF
}
# SB_OPTS[backend]: sysbench driver and connection options
declare -A SB_OPTS URL HOSTPORT
set_backend() { # BACKEND
    local b=$1 u h p user pw db
    if [[ $b == postgres ]]; then u=$PG_URL; else u=$MYSQL_URL; fi
    IFS=$'\x1f' read -r h p user pw db < <(url_fields "$u")
    URL[$b]=$u
    HOSTPORT[$b]=$h:$p
    if [[ $b == postgres ]]; then
        SB_OPTS[$b]="--db-driver=pgsql --pgsql-host=$h --pgsql-port=$p --pgsql-user=$user --pgsql-password=$pw --pgsql-db=$db"
    else
        SB_OPTS[$b]="--db-driver=mysql --mysql-host=$h --mysql-port=$p --mysql-user=$user --mysql-password=$pw --mysql-db=$db"
    fi
}
sb_script() { # TEST -> sysbench script
    case $1 in point-select) echo oltp_point_select ;; update-index) echo oltp_update_index ;; esac
}
# sb BACKEND SCRIPT ARGS... (options are split on whitespace: no spaces in the URL parts);
# SB_PRE, when set, is a command prefix (the CPU timer)
SB_PRE=()
sb() {
    local b=$1 s=$2; shift 2
    # shellcheck disable=SC2086
    "${SB_PRE[@]}" sysbench "$s" ${SB_OPTS[$b]} --tables="$TABLES" --table_size="$TABLE_SIZE" $SYSBENCH_EXTRA "$@"
}
reachable() { # HOST:PORT (a socket directory counts as reachable: the prepare step will tell)
    local h=${1%:*} p=${1##*:}
    [[ $h == /* ]] && return 0
    timeout 5 bash -c "exec 3<>/dev/tcp/$h/$p" 2>/dev/null
}

# --- setup and cleanup --------------------------------------------------------------------
PREPARED=() # backends whose tables exist
drop_tables() { # BACKEND
    local b=$1
    sb "$b" oltp_point_select cleanup >"$OUT/$b.sb.cleanup" 2>&1 ||
        echo "vs-sysbench-oltp: $b: sysbench cleanup failed: $(tail -n 2 "$OUT/$b.sb.cleanup" | tr '\n' ' ')" >&2
    "$IOLAB" db cleanup --url "${URL[$b]}" --tables "$TABLES" -q >"$OUT/$b.iolab.cleanup" 2>&1 ||
        echo "vs-sysbench-oltp: $b: iolab db cleanup failed: $(tail -n 2 "$OUT/$b.iolab.cleanup" | tr '\n' ' ')" >&2
}
forget() { # BACKEND
    local b=$1 x keep=()
    for x in "${PREPARED[@]}"; do [[ $x == "$b" ]] || keep+=("$x"); done
    PREPARED=("${keep[@]}")
}
cleanup() {
    local rc=$?
    set +e
    local b
    for b in "${PREPARED[@]}"; do
        echo "vs-sysbench-oltp: dropping $b tables" >&2
        drop_tables "$b"
    done
    if [[ "$KEEP_OUT" == 1 ]]; then
        echo "raw outputs kept in $OUT" >&2
    else
        rm -rf "$WORK"
    fi
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# setup_backend BACKEND: drops any old tables of both tools, loads fresh ones; 1 = skip backend
setup_backend() {
    local b=$1
    set_backend "$b"
    if ! reachable "${HOSTPORT[$b]}"; then
        note "$b: skipped (nothing listens at ${HOSTPORT[$b]}; as root: bash scripts/dbservers.sh start)"
        return 1
    fi
    # sysbench cleanup doubles as a login check (it drops sbtest1..N if they exist)
    if ! sb "$b" oltp_point_select cleanup >"$OUT/$b.sb.cleanup" 2>&1; then
        note "$b: skipped (sysbench cannot use the server: $(grep -m1 -E 'FATAL|error' "$OUT/$b.sb.cleanup" | tr -s ' '))"
        return 1
    fi
    if ! "$IOLAB" db cleanup --url "${URL[$b]}" --tables "$TABLES" -q >"$OUT/$b.iolab.cleanup" 2>&1; then
        note "$b: skipped (iolab db cleanup failed: $(tail -n 2 "$OUT/$b.iolab.cleanup" | tr '\n' ' '))"
        return 1
    fi
    PREPARED+=("$b")
    local t1=$SECONDS
    if ! sb "$b" oltp_point_select prepare >"$OUT/$b.sb.prepare" 2>&1; then
        note "$b: skipped (sysbench prepare failed: $(tail -n 2 "$OUT/$b.sb.prepare" | tr '\n' ' '))"
        return 1
    fi
    local t2=$SECONDS
    if ! "$IOLAB" db prepare --url "${URL[$b]}" --tables "$TABLES" --table-size "$TABLE_SIZE" -q \
        >"$OUT/$b.iolab.prepare" 2>&1; then
        note "$b: skipped (iolab db prepare failed: $(tail -n 2 "$OUT/$b.iolab.prepare" | tr '\n' ' '))"
        return 1
    fi
    log "$b: loaded $TABLES x $TABLE_SIZE rows for each tool (sysbench $((t2 - t1)) s, iolab $((SECONDS - t2)) s)"
}

# --- running ------------------------------------------------------------------------------
# cpu_of TIMEFILE -> "USER+SYS seconds" or nan
# timed TIMEFILE CMD...: runs CMD under /usr/bin/time when there is one
timed() {
    local f=$1; shift
    if ((${#TIMECMD[@]})); then "${TIMECMD[@]}" -o "$f" "$@"; else "$@"; fi
}
cpu_of() {
    [[ -s "$1" ]] || { echo nan; return; }
    tail -n 1 "$1" | awk '{ if (NF >= 2) printf "%.3f", $1 + $2; else print "nan" }'
}
# sysbench text: prints "TPS P95_MS TRANSACTIONS ERRORS" (nan when absent)
sb_parse() {
    python3 - "$1" <<'EOF'
import re, sys
t = open(sys.argv[1], errors="replace").read()
m = re.search(r"transactions:\s+(\d+)\s+\(([\d.]+) per sec\.\)", t)
p = re.search(r"95th percentile:\s+([\d.]+)", t)
e = re.search(r"ignored errors:\s+(\d+)", t)
print(m.group(2) if m else "nan", p.group(1) if p else "nan", m.group(1) if m else "nan", e.group(1) if e else "nan")
EOF
}
# iolab JSON: prints "TPS P95_MS TRANSACTIONS ERRORS CLIENT_CPU_US_PER_TX"
iolab_parse() {
    python3 - "$1" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
lat = None
for v in (d.get("types") or {}).values():
    lat = v.get("lat_ns") or lat
p95 = lat["p95"] / 1e6 if lat else float("nan")
c = d.get("client_cpu_us_per_tx")
print(f'{d["tps"]:.2f} {p95:.4f} {d["transactions"]} {d.get("errors", 0)} {"nan" if c is None else f"{c:.3f}"}')
EOF
}

# run_sb BACKEND TEST THREADS TAG; sets SB_TPS SB_P95 SB_CPU_TX
run_sb() {
    local b=$1 t=$2 th=$3 tag=$4 rc=0 tx err cpu
    if ((${#TIMECMD[@]})); then SB_PRE=("${TIMECMD[@]}" -o "$OUT/$tag.sb.time"); fi
    sb "$b" "$(sb_script "$t")" \
        --threads="$th" --time="$TIME" --events=0 --rand-type=uniform --skip_trx=on \
        --report-interval=0 --percentile=95 run >"$OUT/$tag.sb.txt" 2>&1 || rc=$?
    SB_PRE=()
    read -r SB_TPS SB_P95 tx err < <(sb_parse "$OUT/$tag.sb.txt")
    if [[ $rc -ne 0 || $SB_TPS == nan ]]; then
        note "$tag: sysbench failed (rc $rc): $(grep -m2 -E 'FATAL|error' "$OUT/$tag.sb.txt" | tr '\n' ' ')"
        SB_TPS=FAIL SB_P95=nan SB_CPU_TX=nan
        return 0
    fi
    [[ $err == 0 || $err == nan ]] || note "$tag: sysbench ignored $err errors"
    cpu=$(cpu_of "$OUT/$tag.sb.time")
    SB_CPU_TX=$(python3 -c "import sys; c, n = float(sys.argv[1]), int(sys.argv[2]); print(f'{c / n * 1e6:.2f}' if n and c == c else 'nan')" "$cpu" "$tx")
}
# run_iolab BACKEND TEST THREADS TAG; sets IO_TPS IO_P95 IO_CPU_TX IO_CLIENT_CPU_TX
run_iolab() {
    local b=$1 t=$2 th=$3 tag=$4 rc=0 tx err cpu
    # shellcheck disable=SC2086
    timed "$OUT/$tag.iolab.time" "$IOLAB" db --url "${URL[$b]}" --test "$t" \
        --tables "$TABLES" --table-size "$TABLE_SIZE" --threads "$th" --time "$TIME" --trx auto \
        --json --no-save -q $IOLAB_EXTRA >"$OUT/$tag.iolab.json" 2>"$OUT/$tag.iolab.err" || rc=$?
    # exit status 3 = some transactions failed: the JSON is still there and is used
    if ! read -r IO_TPS IO_P95 tx err IO_CLIENT_CPU_TX < <(iolab_parse "$OUT/$tag.iolab.json" 2>/dev/null); then
        note "$tag: iolab failed (rc $rc): $(tail -n 3 "$OUT/$tag.iolab.err" | tr '\n' ' ')"
        IO_TPS=FAIL IO_P95=nan IO_CPU_TX=nan IO_CLIENT_CPU_TX=nan
        return 0
    fi
    if [[ $err != 0 ]]; then
        note "$tag: iolab: $err transactions failed: $(python3 -c "import json,sys; print(json.load(open(sys.argv[1])).get('error_messages'))" "$OUT/$tag.iolab.json")"
    fi
    cpu=$(cpu_of "$OUT/$tag.iolab.time")
    IO_CPU_TX=$(python3 -c "import sys; c, n = float(sys.argv[1]), int(sys.argv[2]); print(f'{c / n * 1e6:.2f}' if n and c == c else 'nan')" "$cpu" "$tx")
}
# pairs BACKEND TEST THREADS: REPEAT alternating sysbench/iolab runs, one results line each
pairs() {
    local b=$1 t=$2 th=$3 r tag
    for ((r = 1; r <= REPEAT; r++)); do
        tag=$b.$t.t$th.$r
        run_sb "$b" "$t" "$th" "$tag"
        run_iolab "$b" "$t" "$th" "$tag"
        echo "$b|$t|$th|$SB_TPS|$IO_TPS|$SB_P95|$IO_P95|$SB_CPU_TX|$IO_CPU_TX|$IO_CLIENT_CPU_TX" >>"$OUT/results"
        log "$b $t ${th}t: sysbench $SB_TPS TPS (p95 $SB_P95 ms, $SB_CPU_TX us CPU/tx), iolab $IO_TPS TPS (p95 $IO_P95 ms, client threads $IO_CLIENT_CPU_TX us CPU/tx, process $IO_CPU_TX)"
    done
}

log "iolab: $IOLAB ($("$IOLAB" --version 2>/dev/null || echo '?')); $(sysbench --version); ${TIME}s per tool per run, $REPEAT run(s) per case; $TABLES table(s) x $TABLE_SIZE rows; threads: $THREADS"
[[ ${#TIMECMD[@]} -gt 0 ]] || note "/usr/bin/time not found: no CPU-per-transaction columns (Debian: apt-get install -y time)"
: >"$OUT/results"
# Both tools share the CPUs with the servers: other load skews the ratios more than anything.
load_note() { # WHEN
    local l n
    l=$(cut -d' ' -f1 /proc/loadavg)
    n=$(nproc)
    if python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) >= 0.5 * int(sys.argv[2]) else 1)" "$l" "$n"; then
        note "load average $l on $n CPUs $1 (these cases are CPU-bound: other load makes the ratios noisy; use REPEAT=3 or more)"
    fi
}
load_note "before the first run"
for b in $BACKENDS; do
    log "backend $b"
    setup_backend "$b" || continue
    for t in $TESTS; do
        for th in $THREADS; do
            pairs "$b" "$t" "$th"
        done
    done
    log "$b: dropping both tools' tables"
    drop_tables "$b"
    forget "$b"
done

# --- table --------------------------------------------------------------------------------
echo
python3 - "$OUT/results" "$REPEAT" <<'EOF'
import statistics, sys
repeat = int(sys.argv[2])
cases = {}
for l in open(sys.argv[1]):
    if l.strip():
        b, t, th, *vals = l.rstrip("\n").split("|")
        cases.setdefault((b, t, th), []).append(vals)
def num(s):
    try:
        v = float(s)
        return None if v != v else v
    except ValueError:
        return None
def med(col):
    v = [x for x in map(num, col) if x is not None]
    return statistics.median(v) if v else None
def spread(col):
    v = [x for x in map(num, col) if x is not None]
    return f"{max(v)/min(v)-1:.0%}" if len(v) > 1 and min(v) > 0 else "-"
def fmt_tps(v):
    return "FAIL" if v is None else f"{v:,.0f}"
def fmt(v, d):
    return "-" if v is None else f"{v:.{d}f}"
hdr = ["backend", "test", "threads", "sysbench CPU us/tx", "iolab client CPU us/tx", "iolab/sysbench CPU",
       "iolab process CPU us/tx", "sysbench TPS", "iolab TPS", "iolab/sysbench",
       "sysbench p95 ms", "iolab p95 ms", "TPS within 5%"]
if repeat > 1:
    hdr += ["sysbench spread", "iolab spread"]
out = []
for (b, t, th), runs in cases.items():
    st, it, sp, ip, sc, ic, icc = (list(c) for c in zip(*runs))
    s, i = med(st), med(it)
    cs, cc = med(sc), med(icc)
    cr = cc / cs if cs and cc is not None else None
    r = i / s if s and i is not None else None
    verdict = "-" if r is None else ("yes" if abs(r - 1) <= 0.05 else ("iolab SLOWER" if r < 1 else "iolab faster"))
    row = [b, t, th, fmt(cs, 1), fmt(cc, 1), fmt(cr, 2), fmt(med(ic), 1),
           fmt_tps(s), fmt_tps(i), fmt(r, 3), fmt(med(sp), 2), fmt(med(ip), 3), verdict]
    if repeat > 1:
        row += [spread(st), spread(it)]
    out.append(row)
if not out:
    print("no case ran")
    sys.exit(0)
w = [max(len(r[k]) for r in out + [hdr]) for k in range(len(hdr))]
line = lambda r: "  ".join(c.ljust(w[k]) if k < 2 else c.rjust(w[k]) for k, c in enumerate(r))
if repeat > 1:
    print(f"medians of {repeat} alternating runs per tool; spread = max/min - 1 of TPS")
print(line(hdr))
print("  ".join("-" * x for x in w))
for r in out:
    print(line(r))
print("p95: 95th percentile transaction latency (sysbench prints it rounded to 0.01 ms)")
print("sysbench CPU us/tx: its user+system CPU time (/usr/bin/time, whole process) per transaction")
print("iolab client CPU us/tx: client_cpu_us_per_tx of its JSON (user+system CPU time of the client threads")
print("  over their transaction loops, CLOCK_THREAD_CPUTIME_ID); iolab process CPU us/tx: /usr/bin/time of the whole process, which")
print("  includes start-up, table checks and the device sampler (inflated where TPS is low)")
EOF
if ((${#NOTES[@]})); then
    echo
    for n in "${NOTES[@]}"; do echo "note: $n"; done
fi
echo
echo "total time: $((SECONDS - T0)) s"
