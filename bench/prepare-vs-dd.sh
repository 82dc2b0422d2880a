#!/usr/bin/env bash
# bench/prepare-vs-dd.sh: how fast `iolab prepare` lays out one file against dd and fio's layout
# phase on the same file system (issue 18: at least 90 % of dd oflag=direct).
#
# Usage: bench/prepare-vs-dd.sh [DIR] [SIZE_MIB] [ROUNDS]   (default: /var/tmp 4096 3)
# IOLAB=path (default: $CARGO_TARGET_DIR/release/iolab, else target/release/iolab)
#
# Each variant writes one SIZE_MIB file afresh in DIR/iolab-prepare-vs-dd.PID/ and counts until
# the data is durable; variants alternate round by round; prints MiB/s per round and the median:
#   dd               dd if=/dev/zero bs=1M oflag=direct conv=fsync (zeros, direct)
#   fio              fio --create_only=1 --bs=1M (fio's layout phase, buffered), then sync FILE
#   fio_direct       the same with --direct=1
#   iolab_direct     iolab prepare --direct --bs 1M (data, not zeros; includes its page-cache check)
#   iolab            iolab prepare --bs 1M (the default: O_DIRECT where the file system takes it,
#                    else buffered; fsync'd and evicted)
#   iolab_buffered   iolab prepare --buffered --bs 1M (through the page cache, fsync'd and evicted)
#   iolab_unwritten  iolab prepare --layout unwritten (fallocate: nothing written)
set -euo pipefail
D=${1:-/var/tmp}; S=${2:-4096}; R=${3:-3}
IOLAB=${IOLAB:-${CARGO_TARGET_DIR:-target}/release/iolab}
command -v fio >/dev/null || { echo "prepare-vs-dd: fio not found" >&2; exit 1; }
[[ -x "$IOLAB" ]] || { echo "prepare-vs-dd: no iolab at $IOLAB (set IOLAB=)" >&2; exit 1; }
L0=$(cut -d" " -f1-3 /proc/loadavg)
W=$(mktemp -d "$D/iolab-prepare-vs-dd.XXXXXX"); trap 'rm -rf "$W"' EXIT
declare -A res
t() { # prints MiB/s of one command that writes S MiB
    local a b
    a=$(date +%s%N)
    "$@" >/dev/null 2>&1 || { echo "prepare-vs-dd: failed: $*" >&2; exit 1; }
    b=$(date +%s%N)
    awk -v s="$S" -v a="$a" -v b="$b" 'BEGIN { printf "%.0f", s / ((b - a) / 1e9) }'
}
# rm, then wait (up to 30 s) until the file system counts the space free again: xfs frees a
# removed file's blocks in the background, and iolab's free-space check must see them free
fresh() {
    rm -rf "$W/p"; sync -f "$W"; mkdir -p "$W/p"
    for _ in $(seq 300); do
        (( $(stat -f -c '%a * %S / 1048576' "$W" | bc) > S )) && return; sleep 0.1
    done
}
for ((i = 1; i <= R; i++)); do
    fresh; res[dd]+="$(t dd if=/dev/zero of="$W/p/f" bs=1M count="$S" oflag=direct conv=fsync) "
    fresh; res[fio]+="$(t bash -c "fio --name=x --filename=$W/p/f --size=${S}M --bs=1M --create_only=1 && sync $W/p/f") "
    fresh; res[fio_direct]+="$(t bash -c "fio --name=x --filename=$W/p/f --size=${S}M --bs=1M --direct=1 --create_only=1 && sync $W/p/f") "
    fresh; res[iolab_direct]+="$(t "$IOLAB" prepare --dir "$W/p" --files 1 --size "${S}M" --bs 1M --direct --quiet) "
    fresh; res[iolab]+="$(t "$IOLAB" prepare --dir "$W/p" --files 1 --size "${S}M" --bs 1M --quiet) "
    fresh; res[iolab_buffered]+="$(t "$IOLAB" prepare --dir "$W/p" --files 1 --size "${S}M" --bs 1M --buffered --quiet) "
    fresh; res[iolab_unwritten]+="$(t "$IOLAB" prepare --dir "$W/p" --files 1 --size "${S}M" --bs 1M --layout unwritten --quiet) "
done
med() { tr ' ' '\n' | grep . | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
d=$(echo "${res[dd]}" | med)
echo "one ${S} MiB file in $D ($(df --output=fstype "$D" | tail -1)), $R rounds; MiB/s per round, median, median / dd's"
for k in dd fio fio_direct iolab_direct iolab iolab_buffered iolab_unwritten; do
    m=$(echo "${res[$k]}" | med)
    printf '%-16s %-30s median %8s  %.2f of dd\n' "$k" "${res[$k]}" "$m" "$(echo "$m / $d" | bc -l)"
done
echo "load average (1/5/15 min): $L0 at the start, $(cut -d" " -f1-3 /proc/loadavg) at the end, on $(nproc) CPUs"
