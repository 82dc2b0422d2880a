#!/usr/bin/env bash
# The results store as it grows: fills a private store with N run documents (one real
# `iolab run --engine sync` document of random reads and writes on a small file set, its env
# snapshot included, with varied labels, tags and start times, saved through `iolab import` so
# runs, tags and metrics rows are real; each saved run is then given the HDR latency histograms
# that real run stored, which an imported document does not carry), then times list,
# list --since 7d, show ID, compare A B, compare of two groups of 10 real `iolab run --repeat 10`
# runs, export --format csv of every run, and report (HTML) of a 50-cell and of a 200-cell
# `iolab sweep` (saved first, null engine; median of 3, ms), prints the store size per run and,
# at the end, what the store is made of (SQLite's dbstat: bytes per table and index, and the JSON
# document and env columns).
# Usage: bench/store-growth.sh [SIZES...]   (default: 100 1000 10000)
# IOLAB=path/to/iolab (default: target/release/iolab under $CARGO_TARGET_DIR or ./target)
# KEEP=1 keeps the store (and the documents) for profiling; the path is printed at the end.
set -euo pipefail
SIZES=("${@:-100 1000 10000}"); SIZES=(${SIZES[*]})
IOLAB=${IOLAB:-${CARGO_TARGET_DIR:-target}/release/iolab}
W=$(mktemp -d)
if [[ -n "${KEEP:-}" ]]; then trap 'echo "store kept: $W/store.db"' EXIT; else trap 'rm -rf "$W"' EXIT; fi
mkdir -p "$W/set"
DB="$W/store.db"
# run 1: a real run (O_DIRECT where the file system takes it), saved with its histograms; its
# document is the one every synthetic run is made from
base() { "$IOLAB" run --db "$DB" --engine sync --dir "$W/set" --size 64M --mode rndrd,rndwr \
    --time 1 --json --quiet "$@" > "$W/base.json" 2>/dev/null; }
base --direct || base
ms() { # median of 3 wall times, ms
    local t=()
    for _ in 1 2 3; do
        local a=$(date +%s%N); "$@" >/dev/null 2>&1; local b=$(date +%s%N)
        t+=($(( (b - a) / 1000000 )))
    done
    printf '%s\n' "${t[@]}" | sort -n | sed -n 2p
}
gen() { # gen FROM TO DIR: documents FROM..TO-1, one a day back from now, varied labels
    python3 - "$W/base.json" "$1" "$2" "$3" <<'PY'
import json, sys, datetime, copy
base = json.load(open(sys.argv[1])); a, b, d = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
now = datetime.datetime.now(datetime.timezone.utc)
for i in range(a, b):
    doc = copy.deepcopy(base)
    t = now - datetime.timedelta(minutes=37 * i)
    doc["start_time"] = t.strftime("%Y-%m-%dT%H:%M:%SZ")
    if "end_time" in doc:
        doc["end_time"] = (t + datetime.timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    doc["label"] = f"nightly-{i % 50}"
    doc["tags"] = {"host": f"db{i % 7}", "seq": str(i)}
    doc["doc_id"] = f"b{i:031x}"  # a document of its own: the store saves a doc_id once
    json.dump(doc, open(f"{d}/r{i:06}.json", "w"))
PY
}
hists() { # the histograms of run 1 for every imported run that has none
    python3 - "$DB" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("""INSERT INTO histograms (run_id, cell, op, hdr)
    SELECT r.id, h.cell, h.op, h.hdr FROM runs r JOIN histograms h ON h.run_id = 1
    WHERE r.id > 1 AND r.group_id IS NULL
      AND NOT EXISTS (SELECT 1 FROM histograms x WHERE x.run_id = r.id)""")
c.commit()
PY
}
have=0
# two groups of 10 real runs (null engine: no device time), saved with their histograms
for g in 1 2; do
    "$IOLAB" run --db "$DB" --engine null --dir "$W/set" --size 16M --mode rndrd --ops 20000 \
        --repeat 10 --label "group-$g" --quiet >/dev/null 2>&1
done
# two sweeps (null engine): 50 cells (threads 1..10 x 5 block sizes) and 200 (x 4 modes)
sweep() { "$IOLAB" sweep --db "$DB" --engine null --dir "$W/set" --size 16M --ops 2000 \
    --threads 1..10:+1 --bs 4k,8k,16k,32k,64k --quiet --json "$@" 2>/dev/null \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["group"])'; }
s50=$(sweep --mode rndrd); s200=$(sweep --mode rndrd,rndwr,seqrd,seqwr)
q() { python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])' "$DB" "$1"; }
ng() { q "SELECT count(*) FROM runs WHERE group_id = ${1#g}"; }
echo "sweeps: $s50 ($(ng "$s50") cells), $s200 ($(ng "$s200") cells); load average $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
printf '%8s %8s %10s %8s %8s %10s %10s %10s %11s %10s %12s\n' runs list list7d show compare cmp_groups export_csv report_50 report_200 store_MiB bytes/run
for n in "${SIZES[@]}"; do
    mkdir -p "$W/docs"; rm -f "$W/docs"/*
    gen "$have" "$n" "$W/docs"
    find "$W/docs" -name '*.json' | sort | xargs -n 500 "$IOLAB" import --db "$DB" >/dev/null 2>&1
    hists
    have=$n
    # the newest imported run (a copy of run 1's document: compare 1 LAST matches every mode)
    last=$(q "SELECT max(id) FROM runs")
    ids=$(seq 1 "$last")
    sz=$(stat -c %s "$DB")
    echo "  (load average before timing $n: $(cut -d' ' -f1-3 /proc/loadavg))" >&2
    printf '%8d %8d %10d %8d %8d %10d %10d %10d %11d %10.1f %12d\n' "$n" \
        "$(ms "$IOLAB" list --db "$DB")" \
        "$(ms "$IOLAB" list --db "$DB" --since 7d)" \
        "$(ms "$IOLAB" show --db "$DB" "$last")" \
        "$(ms "$IOLAB" compare --db "$DB" 1 "$last")" \
        "$(ms "$IOLAB" compare --db "$DB" g1 g2)" \
        "$(ms "$IOLAB" export --db "$DB" --format csv $ids)" \
        "$(ms "$IOLAB" report --db "$DB" "$s50" -o "$W/r50.html")" \
        "$(ms "$IOLAB" report --db "$DB" "$s200" -o "$W/r200.html")" \
        "$(echo "$sz / 1048576" | bc -l)" "$((sz / n))"
done
echo
echo "what the store is made of (runs above + the 20 runs of the two groups):"
python3 - "$DB" <<'PY'
import sqlite3, sys
c = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
n = c.execute("SELECT count(*) FROM runs").fetchone()[0]
rows = []
try:
    rows = c.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC").fetchall()
except sqlite3.Error as e:
    print(f"  (no dbstat in this SQLite: {e})")
for name, b in rows:
    print(f"  {name:32} {b:>14,} bytes {b / n:>10,.0f} per run")
for col in ("doc", "env"):
    b = c.execute(f"SELECT coalesce(sum(length({col})), 0) FROM runs").fetchone()[0]
    print(f"  {'runs.' + col:32} {b:>14,} bytes {b / n:>10,.0f} per run")
b = c.execute("SELECT coalesce(sum(length(hdr)), 0), count(*) FROM histograms").fetchone()
print(f"  {'histograms.hdr':32} {b[0]:>14,} bytes in {b[1]} histograms")
PY
