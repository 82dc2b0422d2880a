#!/usr/bin/env bash
# The results store as it grows: fills a private store with N run documents (one real
# `iolab run --engine null --json` document, its env snapshot included, with varied labels,
# tags and start times, saved through `iolab import` so runs, tags and metrics rows are real),
# then times list, list --since 7d, show ID, compare A B, compare of two groups of 10 real
# `iolab run --repeat 10` runs (saved first, with their histograms) and export --format csv of
# every run (median of 3, ms), prints the store size per run and, at the end, what the store is
# made of (SQLite's dbstat: bytes per table and index, and the JSON document and env columns).
# Usage: bench/store-growth.sh [SIZES...]   (default: 100 1000 10000)
# IOLAB=path/to/iolab (default: target/release/iolab under $CARGO_TARGET_DIR or ./target)
set -euo pipefail
SIZES=("${@:-100 1000 10000}"); SIZES=(${SIZES[*]})
IOLAB=${IOLAB:-${CARGO_TARGET_DIR:-target}/release/iolab}
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
mkdir -p "$W/set"
"$IOLAB" run --engine null --dir "$W/set" --size 16M --mode rndrd --time 1 --no-save --json \
    > "$W/base.json" 2>/dev/null
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
    json.dump(doc, open(f"{d}/r{i:06}.json", "w"))
PY
}
have=0; DB="$W/store.db"
# two groups of 10 real runs (null engine: no device time), saved with their histograms
for g in 1 2; do
    "$IOLAB" run --db "$DB" --engine null --dir "$W/set" --size 16M --mode rndrd --ops 20000 \
        --repeat 10 --label "group-$g" --quiet >/dev/null 2>&1
done
printf '%8s %8s %10s %8s %8s %10s %10s %10s %12s\n' runs list list7d show compare cmp_groups export_csv store_MiB bytes/run
for n in "${SIZES[@]}"; do
    mkdir -p "$W/docs"; rm -f "$W/docs"/*
    gen "$have" "$n" "$W/docs"
    find "$W/docs" -name '*.json' | sort | xargs -n 500 "$IOLAB" import --db "$DB" >/dev/null 2>&1
    have=$n
    last=$("$IOLAB" list --db "$DB" --limit 1 --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])')
    ids=$(seq 1 "$n")
    sz=$(stat -c %s "$DB")
    printf '%8d %8d %10d %8d %8d %10d %10d %10.1f %12d\n' "$n" \
        "$(ms "$IOLAB" list --db "$DB")" \
        "$(ms "$IOLAB" list --db "$DB" --since 7d)" \
        "$(ms "$IOLAB" show --db "$DB" "$last")" \
        "$(ms "$IOLAB" compare --db "$DB" 1 "$last")" \
        "$(ms "$IOLAB" compare --db "$DB" g1 g2)" \
        "$(ms "$IOLAB" export --db "$DB" --format csv $ids)" \
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
