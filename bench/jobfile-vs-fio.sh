#!/usr/bin/env bash
# bench/jobfile-vs-fio.sh: run the same fio job files with fio and with `iolab run JOBFILE` and
# compare their IOPS (issue 14: "on a page-cached file: iolab's IOPS at least fio's").
#
# Job files (bench/jobs/, run as they are by both tools):
#   cached-psync.fio  4 KiB random reads of one page-cached file, psync, 1 job, time_based
#   cached-uring.fio  the same with io_uring at iodepth 32
# Both read one SIZE file prepared by `iolab prepare` (iolab-file.0, the name iolab's own set uses,
# so that both tools read the same file) and read into the page cache before each run: fio with
# invalidate=0 in the file, iolab with --warm. The runs are CPU/memory-bound: the ratio is the
# per-I/O overhead of the two tools.
#
# Environment:
#   IOLAB=path   iolab binary (default: cargo build --release, then target/release/iolab,
#                honouring CARGO_TARGET_DIR)
#   RUNTIME=5    seconds per run (the job files' runtime=)
#   SIZE=1G      size of the data file
#   REPEAT=3     runs per tool per job file, alternating fio/iolab; the table shows medians
#   JOBS="cached-psync cached-uring"   which job files of bench/jobs/ to run
#   WORKROOT=/var/tmp   where the scratch directory goes
#   KEEP_OUT=1   keep the raw JSON outputs (their directory is printed)
set -euo pipefail

T0=$SECONDS
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RUNTIME=${RUNTIME:-5}
SIZE=${SIZE:-1G}
REPEAT=${REPEAT:-3}
JOBS=${JOBS:-cached-psync cached-uring}
WORKROOT=${WORKROOT:-/var/tmp}
KEEP_OUT=${KEEP_OUT:-0}

die() { echo "jobfile-vs-fio: $*" >&2; exit 1; }
log() { echo "== $*" >&2; }

[[ "$REPEAT" =~ ^[1-9][0-9]*$ ]] || die "REPEAT must be a positive integer"
[[ "$RUNTIME" =~ ^[1-9][0-9]*$ ]] || die "RUNTIME must be a positive whole number of seconds"
command -v fio >/dev/null || die "fio not found (Debian: apt-get install -y fio)"
command -v python3 >/dev/null || die "python3 not found"
if [[ -z "${IOLAB:-}" ]]; then
    if command -v cargo >/dev/null; then
        log "building iolab (cargo build --release)"
        (cd "$REPO" && cargo build --release --quiet) || die "cargo build failed"
    fi
    IOLAB=${CARGO_TARGET_DIR:-$REPO/target}/release/iolab
fi
[[ -x "$IOLAB" ]] || die "iolab binary not found or not executable: $IOLAB (set IOLAB=path)"
for j in $JOBS; do [[ -f "$REPO/bench/jobs/$j.fio" ]] || die "no job file bench/jobs/$j.fio"; done

WORK=$(mktemp -d "$WORKROOT/iolab-jobfile-vs-fio.XXXXXX")
OUT=$WORK/out
DATA=$WORK/data
mkdir -p "$OUT" "$DATA"
cleanup() {
    local rc=$?
    if [[ "$KEEP_OUT" == 1 ]]; then
        rm -rf "$DATA"
        echo "raw outputs kept in $OUT" >&2
    else
        rm -rf "$WORK"
    fi
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# the job files' ${...}
export BENCH_FILE=$DATA/iolab-file.0 BENCH_SIZE=$SIZE BENCH_RUNTIME=$RUNTIME

log "iolab: $IOLAB ($("$IOLAB" --version 2>/dev/null || echo '?')); $(fio --version); ${RUNTIME}s per run, $REPEAT run(s) per tool and job file; load: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"
log "preparing one $SIZE file in $DATA"
"$IOLAB" prepare --dir "$DATA" --files 1 --size "$SIZE" --quiet >&2

fio_iops() {
    python3 - "$1" <<'EOF'
import json, sys
t = open(sys.argv[1]).read()
d = json.loads(t[t.index('{'):])          # fio may print notes before the JSON
print(f'{sum(j["read"]["iops"] for j in d["jobs"]):.0f}')
EOF
}
iolab_iops() {
    python3 - "$1" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
cells = d.get("runs") or [d]
print(f'{sum(c["results"]["read"]["iops"] for c in cells):.0f} {d.get("cache_resident_pct_at_start", "nan")}')
EOF
}

: >"$OUT/results"
for j in $JOBS; do
    jf=$REPO/bench/jobs/$j.fio
    for ((r = 1; r <= REPEAT; r++)); do
        cat "$BENCH_FILE" >/dev/null
        if fio --output-format=json "$jf" >"$OUT/$j.$r.fio.json" 2>"$OUT/$j.$r.fio.err"; then
            f=$(fio_iops "$OUT/$j.$r.fio.json")
        else
            f=FAIL
            log "$j: fio failed: $(tail -n 3 "$OUT/$j.$r.fio.err" | tr '\n' ' ')"
        fi
        if "$IOLAB" run --json --no-save --quiet --warm "$jf" >"$OUT/$j.$r.iolab.json" 2>"$OUT/$j.$r.iolab.err"; then
            read -r i cache < <(iolab_iops "$OUT/$j.$r.iolab.json")
        else
            i=FAIL cache=nan
            log "$j: iolab failed: $(tail -n 3 "$OUT/$j.$r.iolab.err" | tr '\n' ' ')"
        fi
        log "$j run $r: fio $f IOPS, iolab $i IOPS (iolab started with ${cache}% cached)"
        echo "$j|$f|$i" >>"$OUT/results"
    done
done

echo
python3 - "$OUT/results" "$REPEAT" <<'EOF'
import statistics, sys
rows = {}
for l in open(sys.argv[1]):
    if l.strip():
        j, f, i = l.strip().split("|")
        rows.setdefault(j, ([], []))
        for col, v in zip(rows[j], (f, i)):
            try:
                col.append(float(v))
            except ValueError:
                pass
med = lambda c: statistics.median(c) if c else None
spread = lambda c: f"{max(c)/min(c)-1:.0%}" if len(c) > 1 and min(c) > 0 else "-"
hdr = ["job file", "fio IOPS", "iolab IOPS", "iolab/fio", "iolab >= fio", "fio spread", "iolab spread"]
out = []
for j, (f, i) in rows.items():
    mf, mi = med(f), med(i)
    ok = mf and mi is not None
    out.append([j + ".fio", "FAIL" if mf is None else f"{mf:,.0f}", "FAIL" if mi is None else f"{mi:,.0f}",
                f"{mi/mf:.3f}" if ok else "-", ("yes" if mi >= mf else "NO") if ok else "-", spread(f), spread(i)])
w = [max(len(r[k]) for r in out + [hdr]) for k in range(len(hdr))]
line = lambda r: "  ".join(c.ljust(w[k]) if k == 0 else c.rjust(w[k]) for k, c in enumerate(r))
print(f"medians of {sys.argv[2]} alternating runs per tool; spread = max/min - 1 of IOPS")
print(line(hdr))
print("  ".join("-" * x for x in w))
for r in out:
    print(line(r))
EOF
echo
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg); total time: $((SECONDS - T0)) s"
