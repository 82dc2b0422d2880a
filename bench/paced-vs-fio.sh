#!/usr/bin/env bash
# bench/paced-vs-fio.sh: paced latency, iolab --rate against fio --rate_iops, on the same file.
#
# 16 KiB O_DIRECT random reads of one file on a fresh ext4 on a loop device (losetup
# --direct-io=on over an image in /dev/shm), with psync, for each LOAD (THREADS:TOTAL_IOPS).
# Prints p50 / p99 read latency of each tool per run and the medians, plus iolab's own schedule
# lag p99 (how late iolab issued, which its schedule-based latency includes). Root only.
#
# Environment:
#   IOLAB=path      iolab binary (default: cargo build --release, honouring CARGO_TARGET_DIR)
#   LOADS="1:2000 2:6000"   thread count : total IOPS, one case each
#   RUNTIME=10      seconds per run
#   REPEAT=3        runs per tool and load, alternating fio / iolab
#   SIZE=1G         data file size (the image is SIZE + 256 MiB)
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LOADS=${LOADS:-1:2000 2:6000}
RUNTIME=${RUNTIME:-10}
REPEAT=${REPEAT:-3}
SIZE=${SIZE:-1G}
die() { echo "paced-vs-fio: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root (loop device, mount)"
command -v fio >/dev/null || die "fio not found (apt-get install -y fio)"
command -v jq >/dev/null || die "jq not found (apt-get install -y jq)"
if [ -z "${IOLAB:-}" ]; then
  (cd "$REPO" && cargo build --release --quiet)
  IOLAB=${CARGO_TARGET_DIR:-$REPO/target}/release/iolab
fi
W=$(mktemp -d /dev/shm/iolab-paced.XXXXXX)
MNT=$W/mnt
LOOP=
cleanup() {
  umount "$MNT" 2>/dev/null || true
  [ -n "$LOOP" ] && losetup -d "$LOOP" 2>/dev/null || true
  rm -rf "$W"
}
trap cleanup EXIT
bytes=$(numfmt --from=iec "$SIZE")
truncate -s $((bytes + 268435456)) "$W/img"
LOOP=$(losetup --find --show --direct-io=on "$W/img")
mkfs.ext4 -q -F "$LOOP"
mkdir -p "$MNT"
mount "$LOOP" "$MNT"
"$IOLAB" prepare --dir "$MNT" --files 1 --size "$SIZE" -q >/dev/null
file=$MNT/iolab-file.0
us() { awk -v n="$1" 'BEGIN { printf "%.0f", n / 1000 }'; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
printf '%-8s %-6s %-5s %12s %12s %14s\n' load tool run "p50 µs" "p99 µs" "lag p99 µs"
for load in $LOADS; do
  t=${load%%:*}
  rate=${load##*:}
  : >"$W/fio50" >"$W/fio99" >"$W/io50" >"$W/io99"
  for r in $(seq 1 "$REPEAT"); do
    fio --name=p --filename="$file" --size="$SIZE" --rw=randread --bs=16k --direct=1 \
      --ioengine=psync --numjobs="$t" --rate_iops=$((rate / t)) --time_based \
      --runtime="$RUNTIME" --group_reporting --output-format=json >"$W/f.json"
    p50=$(jq '.jobs[0].read.clat_ns.percentile["50.000000"]' "$W/f.json")
    p99=$(jq '.jobs[0].read.clat_ns.percentile["99.000000"]' "$W/f.json")
    us "$p50" >>"$W/fio50"; echo >>"$W/fio50"
    us "$p99" >>"$W/fio99"; echo >>"$W/fio99"
    printf '%-8s %-6s %-5s %12s %12s %14s\n' "$load" fio "$r" "$(us "$p50")" "$(us "$p99")" -
    "$IOLAB" run --dir "$MNT" --files 1 --size "$SIZE" --mode rndrd --direct --bs 16k \
      --threads "$t" --rate "$rate" --time "$RUNTIME" --json --no-save -q --keep >"$W/i.json"
    p50=$(jq '.results.read.lat_ns.p50' "$W/i.json")
    p99=$(jq '.results.read.lat_ns.p99' "$W/i.json")
    lag=$(jq '.schedule_lag_ns.p99 // 0' "$W/i.json")
    us "$p50" >>"$W/io50"; echo >>"$W/io50"
    us "$p99" >>"$W/io99"; echo >>"$W/io99"
    printf '%-8s %-6s %-5s %12s %12s %14s\n' "$load" iolab "$r" "$(us "$p50")" "$(us "$p99")" "$(us "$lag")"
  done
  printf '%-8s %-6s %-5s %12s %12s\n' "$load" fio median "$(grep . "$W/fio50" | median)" "$(grep . "$W/fio99" | median)"
  printf '%-8s %-6s %-5s %12s %12s\n' "$load" iolab median "$(grep . "$W/io50" | median)" "$(grep . "$W/io99" | median)"
done
echo "load: $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min) at the end"
