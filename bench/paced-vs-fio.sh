#!/usr/bin/env bash
# bench/paced-vs-fio.sh: paced latency, iolab --rate against fio --rate_iops, on the same file.
#
# 16 KiB O_DIRECT random reads of one file, with psync, on a fresh ext4 on a loop device
# (losetup --direct-io=on over an image in /dev/shm; TARGET=tmpfs: the file in /dev/shm itself).
# The device's capacity is measured first (fio, unpaced, 1 thread); then for each thread count of
# THREADS and each share of FRACS, both tools offer that share of it in total, split over the
# threads. Prints p50 / p99 read latency (lat_ns: iolab's from each I/O's slot, fio's with
# lat_percentiles) of each tool per run and their medians, the ratio iolab / fio of the medians,
# and iolab's own schedule lag p99 (how late iolab issued, which its latency includes). Root only.
#
# Environment:
#   IOLAB=path      iolab binary (default: cargo build --release, honouring CARGO_TARGET_DIR)
#   BEFORE=path     another iolab binary to run beside it (alternating), shown as "before"
#   IOLAB_ARGS=""   more iolab run flags (e.g. --no-spin)
#   THREADS="1 2 4" thread counts
#   FRACS="0.2 0.5" shares of the measured capacity (total IOPS over all threads)
#   LOADS="1:2000 2:6000"   THREADS:TOTAL_IOPS cases instead of THREADS x FRACS (no capacity run)
#   RUNTIME=10      seconds per run
#   REPEAT=3        runs per tool and load, alternating fio / iolab (/ before)
#   SIZE=1G         data file size (the loop device's image is SIZE + 256 MiB)
#   TARGET=loop     loop or tmpfs
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
THREADS=${THREADS:-1 2 4}
FRACS=${FRACS:-0.2 0.5}
LOADS=${LOADS:-}
RUNTIME=${RUNTIME:-10}
REPEAT=${REPEAT:-3}
SIZE=${SIZE:-1G}
TARGET=${TARGET:-loop}
IOLAB_ARGS=${IOLAB_ARGS:-}
BEFORE=${BEFORE:-}
die() { echo "paced-vs-fio: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root (loop device, mount)"
command -v fio >/dev/null || die "fio not found (apt-get install -y fio)"
command -v jq >/dev/null || die "jq not found (apt-get install -y jq)"
case $TARGET in loop | tmpfs) ;; *) die "TARGET is loop or tmpfs, not $TARGET" ;; esac
if [ -z "${IOLAB:-}" ]; then
  (cd "$REPO" && cargo build --release --quiet)
  IOLAB=${CARGO_TARGET_DIR:-$REPO/target}/release/iolab
fi
W=$(mktemp -d /dev/shm/iolab-paced.XXXXXX)
MNT=$W/mnt
LOOP=
cleanup() {
  if [ -n "$LOOP" ]; then
    umount "$MNT" 2>/dev/null || true
    losetup -d "$LOOP" 2>/dev/null || true
  fi
  rm -rf "$W"
}
trap cleanup EXIT
bytes=$(numfmt --from=iec "$SIZE")
mkdir -p "$MNT"
if [ "$TARGET" = loop ]; then
  truncate -s $((bytes + 268435456)) "$W/img"
  LOOP=$(losetup --find --show --direct-io=on "$W/img")
  mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$LOOP"
  mount "$LOOP" "$MNT"
fi
"$IOLAB" prepare --dir "$MNT" --files 1 --size "$SIZE" -q >/dev/null
file=$MNT/iolab-file.0
us() { awk -v n="$1" 'BEGIN { printf "%.0f", n / 1000 }'; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
fio_run() { # THREADS [RATE_PER_THREAD]
  local rate=()
  [ -n "${2:-}" ] && rate=(--rate_iops="$2")
  fio --name=p --filename="$file" --size="$SIZE" --rw=randread --bs=16k --direct=1 \
    --ioengine=psync --numjobs="$1" "${rate[@]}" --time_based --runtime="$RUNTIME" \
    --lat_percentiles=1 --group_reporting --output-format=json >"$W/f.json"
}
echo "target: $TARGET ($file), $RUNTIME s runs, load at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ -z "$LOADS" ]; then
  fio_run 1
  cap=$(jq '.jobs[0].read.iops | floor' "$W/f.json")
  echo "capacity: $cap IOPS (fio, unpaced, 1 thread, p50 $(us "$(jq '.jobs[0].read.lat_ns.percentile["50.000000"]' "$W/f.json")") µs)"
  for t in $THREADS; do
    for f in $FRACS; do
      LOADS="$LOADS $t:$(awk -v c="$cap" -v f="$f" 'BEGIN { printf "%.0f", c * f }')"
    done
  done
fi
tools="fio iolab"
[ -n "$BEFORE" ] && tools="$tools before"
printf '%-8s %-6s %-6s %10s %10s %12s\n' load tool run "p50 µs" "p99 µs" "lag p99 µs"
summary=()
for load in $LOADS; do
  t=${load%%:*}
  rate=${load##*:}
  for tool in $tools; do : >"$W/$tool.50"; : >"$W/$tool.99"; done
  for r in $(seq 1 "$REPEAT"); do
    for tool in $tools; do
      lag=-
      if [ "$tool" = fio ]; then
        fio_run "$t" $((rate / t))
        p50=$(jq '.jobs[0].read.lat_ns.percentile["50.000000"]' "$W/f.json")
        p99=$(jq '.jobs[0].read.lat_ns.percentile["99.000000"]' "$W/f.json")
      else
        bin=$IOLAB
        [ "$tool" = before ] && bin=$BEFORE
        # shellcheck disable=SC2086 # IOLAB_ARGS is a list of flags
        "$bin" run --dir "$MNT" --files 1 --size "$SIZE" --mode rndrd --direct --bs 16k \
          --threads "$t" --rate "$rate" --time "$RUNTIME" --json --no-save -q --keep \
          $IOLAB_ARGS >"$W/i.json"
        p50=$(jq '.results.read.lat_ns.p50' "$W/i.json")
        p99=$(jq '.results.read.lat_ns.p99' "$W/i.json")
        lag=$(us "$(jq '.schedule_lag_ns.p99 // 0' "$W/i.json")")
      fi
      us "$p50" >>"$W/$tool.50"; echo >>"$W/$tool.50"
      us "$p99" >>"$W/$tool.99"; echo >>"$W/$tool.99"
      printf '%-8s %-6s %-6s %10s %10s %12s\n' "$load" "$tool" "$r" "$(us "$p50")" "$(us "$p99")" "$lag"
    done
  done
  line="$load fio $(grep . "$W/fio.50" | median) / $(grep . "$W/fio.99" | median) µs"
  for tool in $tools; do
    [ "$tool" = fio ] && continue
    m50=$(grep . "$W/$tool.50" | median)
    m99=$(grep . "$W/$tool.99" | median)
    ratio=$(awk -v a="$m50" -v b="$(grep . "$W/fio.50" | median)" -v c="$m99" -v d="$(grep . "$W/fio.99" | median)" \
      'BEGIN { printf "%.2fx / %.2fx", a / (b ? b : 1), c / (d ? d : 1) }')
    line="$line; $tool $m50 / $m99 µs ($ratio)"
  done
  summary+=("$line")
done
echo "medians (p50 / p99), iolab / fio:"
printf '  %s\n' "${summary[@]}"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min) at the end"
