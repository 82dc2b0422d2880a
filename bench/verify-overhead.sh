#!/usr/bin/env bash
# bench/verify-overhead.sh: what --verify costs on the page-cached 4 KiB random read/write case
# (docs/verify.md#what-it-costs). Two sets of the same size, each page-cached (--warm): one
# measured plainly, one with --verify after every block of it was written by a verify run (so
# every read is checked); the runs alternate, REPEAT times, and the medians are compared.
#
# Environment:
#   IOLAB=path      iolab binary (default: cargo build --release, then target/release/iolab,
#                   honouring CARGO_TARGET_DIR)
#   CHECKSUM_SPEED=path  the checksum-speed example (default: built like iolab)
#   RUNTIME=5       seconds per run
#   SIZE=256M       size of each set (one file)
#   THREADS=1       --threads
#   ENGINE=sync     --engine
#   REPEAT=5        runs per variant
#   WORKROOT=/var/tmp   where the two sets go
set -euo pipefail
cd "$(dirname "$0")/.."
RUNTIME=${RUNTIME:-5} SIZE=${SIZE:-256M} THREADS=${THREADS:-1} ENGINE=${ENGINE:-sync}
REPEAT=${REPEAT:-5} WORKROOT=${WORKROOT:-/var/tmp}
if [ -z "${IOLAB:-}" ]; then
    cargo build --release -q
    IOLAB="${CARGO_TARGET_DIR:-target}/release/iolab"
fi
# the checksum's own speed, without I/O (examples/checksum-speed.rs)
if [ -z "${CHECKSUM_SPEED:-}" ]; then
    cargo build --release -q --example checksum-speed
    CHECKSUM_SPEED="${CARGO_TARGET_DIR:-target}/release/examples/checksum-speed"
fi
work=$(mktemp -d "$WORKROOT/iolab-verify-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
plain="$work/plain" verified="$work/verify"
mkdir -p "$plain" "$verified"
set_args=(--files 1 --size "$SIZE" --bs 4k --fsync-freq 0 --no-fsync-end --engine "$ENGINE" --threads "$THREADS" --keep --no-save -q)
blocks=$(( $("$IOLAB" run --dir "$plain" --mode seqrewr "${set_args[@]}" --ops 1 --json \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["job"]["total_bytes"])') / 4096 ))
# every block of both sets written once the same way (the verify set by a verify run: every
# read below is checked)
"$IOLAB" run --dir "$plain" --mode seqrewr "${set_args[@]}" --ops "$blocks" >/dev/null
"$IOLAB" run --dir "$verified" --mode seqrewr "${set_args[@]}" --ops "$blocks" --verify >/dev/null
# both sets read into the page cache (the runs use --warm: nothing is evicted)
cat "$plain"/iolab-file.* "$verified"/iolab-file.* >/dev/null
iops() {
    "$IOLAB" run --dir "$1" --mode rndrw "${set_args[@]}" --time "$RUNTIME" --warm --json "${@:2}" \
        | python3 -c 'import json,sys; d=json.load(sys.stdin); r=d["results"]; v=d.get("verify") or {}
print(round(r["read"]["iops"]+r["write"]["iops"]), v.get("checked",0), sum(v.get(k,0) for k in ("lost","misdirected","torn","stale")))'
}
echo "iolab $("$IOLAB" --version | awk '{print $2}'), $(nproc) CPUs, load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "rndrw, --bs 4k, --engine $ENGINE, --threads $THREADS, $SIZE page-cached, ${RUNTIME}s per run"
p=() v=()
for i in $(seq "$REPEAT"); do
    read -r a _ _ < <(iops "$plain")
    read -r b checked bad < <(iops "$verified" --verify)
    [ "$bad" = 0 ] || { echo "verify found $bad mismatches on a healthy set" >&2; exit 1; }
    echo "run $i: plain $a IOPS, --verify $b IOPS ($checked blocks checked)"
    p+=("$a") v+=("$b")
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
mp=$(median "${p[@]}") mv=$(median "${v[@]}")
echo "median: plain $mp IOPS, --verify $mv IOPS: --verify costs $(awk -v p="$mp" -v v="$mv" 'BEGIN {printf "%.1f", 100*(p-v)/p}') % of IOPS"
# what --verify adds per operation, against what the checksum alone costs per block
echo "--verify adds $(awk -v p="$mp" -v v="$mv" 'BEGIN {printf "%.0f", 1e9/v - 1e9/p}') ns per operation ($(awk -v p="$mp" 'BEGIN {printf "%.0f", 1e9/p}') ns plain)"
"$CHECKSUM_SPEED" 4096 1024
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
