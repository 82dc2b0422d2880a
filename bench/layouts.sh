#!/usr/bin/env bash
# bench/layouts.sh: does O_DIRECT writing into one file scale with threads, per --layout and
# filesystem? (docs/layouts.md)
#
# Where the device is the bottleneck the locking of the filesystem hides behind it, so the
# device here has a fixed latency per request and unlimited parallelism: the faultfs FUSE
# fixture (tests/fixtures/faultfs, multi-threaded, FAULTFS_WRITES=1 FAULTFS_DELAY_US=N) serves
# a sparse image file, a loop device (--direct-io=on) reads and writes it, and ext4 and xfs are
# made on the loop device in turn. On each: `iolab run --mode rndwr --bs 16k --direct --files 1
# --size 256M` (SIZE) with 1 and 8 threads, per layout (extend: --mode seqwr, each thread growing its own
# range of the file), and the 8-thread/1-thread IOPS ratio.
# A ratio near 1 means the writes into one file are serialised; near 8, they run in parallel.
#
# Root only; needs gcc, libfuse3-dev, fuse3, losetup, mkfs.ext4, mkfs.xfs, jq (scripts/setup.sh).
#
# Environment:
#   IOLAB=path          iolab binary (default: cargo build --release, then target/release/iolab,
#                       honouring CARGO_TARGET_DIR)
#   DELAY_US=1000       latency the fixture adds to every read and write request
#   TIME=2              seconds each run measures
#   SIZE=256M           the file; large enough that 8 threads do not write it whole in TIME
#                       (then the later writes would overwrite what the run itself allocated)
#   FSS="ext4 xfs"      filesystems
#   LAYOUTS="overwrite holes unwritten extend"   layouts
#   THREADS="1 8"       thread counts; the ratio is last/first
#   FIO=1               also run fio (psync, randwrite, --numjobs) on the same files, for a second
#                       opinion from another tool
#   WORKROOT=/var/tmp   where the scratch directory goes
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DELAY_US=${DELAY_US:-1000}
TIME=${TIME:-2}
SIZE=${SIZE:-256M}
FSS=${FSS:-ext4 xfs}
LAYOUTS=${LAYOUTS:-overwrite holes unwritten extend}
THREADS=${THREADS:-1 8}
FIO=${FIO:-0}
WORKROOT=${WORKROOT:-/var/tmp}

[ "$(id -u)" = 0 ] || { echo "bench/layouts.sh: needs root (FUSE, loop devices, mount)" >&2; exit 2; }
if [ -z "${IOLAB:-}" ]; then
  (cd "$REPO" && cargo build --release -q)
  IOLAB=${CARGO_TARGET_DIR:-$REPO/target}/release/iolab
fi

W=$(mktemp -d "$WORKROOT/iolab-layouts.XXXXXX")
FPID= DEV=
cleanup() {
  mountpoint -q "$W/mnt" && umount "$W/mnt"
  [ -n "$DEV" ] && losetup -d "$DEV" 2>/dev/null
  mountpoint -q "$W/fuse" && fusermount3 -u "$W/fuse"
  [ -n "$FPID" ] && wait "$FPID" 2>/dev/null
  rm -rf "$W"
}
trap cleanup EXIT
mkdir -p "$W/back" "$W/fuse" "$W/mnt"
"$REPO/tests/fixtures/faultfs/build.sh" "$W/faultfs"
# No -s: libfuse's multi-threaded loop serves requests concurrently.
FAULTFS_WRITES=1 FAULTFS_DELAY_US=$DELAY_US "$W/faultfs" "$W/back" "$W/fuse" -f 2>"$W/faultfs.log" &
FPID=$!
for _ in $(seq 100); do mountpoint -q "$W/fuse" && break; sleep 0.05; done
mountpoint -q "$W/fuse" || { cat "$W/faultfs.log" >&2; exit 1; }
truncate -s 512M "$W/fuse/img"
DEV=$(losetup --find --show --direct-io=on "$W/fuse/img")

iops() { # FS LAYOUT THREADS
  local mode=rndwr
  [ "$2" = extend ] && mode=seqwr
  "$IOLAB" run --dir "$W/mnt/set" --mode $mode --bs 16k --direct --files 1 --size "$SIZE" \
    --threads "$3" --time "$TIME" --layout "$2" --fsync-freq 0 --no-save --json --quiet \
    | jq '.results.write.iops'
}
fio_iops() { # LAYOUT THREADS (fio --fallocate=none: it would preallocate a file it extends)
  local f=$W/mnt/fio
  rm -f "$f"
  case $1 in
    overwrite) fio --name=p --filename="$f" --size="$SIZE" --rw=write --bs=1M --direct=1 >/dev/null ;;
    holes) truncate -s "$SIZE" "$f" ;;
    unwritten) fallocate -l "$SIZE" "$f" ;;
    extend) touch "$f" ;;
  esac
  sync
  if [ "$1" = extend ]; then
    # each job writes its own range of the file sequentially, as iolab's seqwr threads do; fio
    # sizes the file first (--fallocate=none: ftruncate), so its writes fill holes, not extend
    local per=$(( $(numfmt --from=iec "$SIZE") / $2 ))
    fio --name=t --filename="$f" --size="$per" --offset_increment="$per" --rw=write --bs=16k \
      --direct=1 --ioengine=psync --fallocate=none --numjobs="$2" --group_reporting --runtime="$TIME" \
      --output-format=terse | cut -d';' -f49
  else
    fio --name=t --filename="$f" --size="$SIZE" --rw=randwrite --bs=16k --direct=1 --ioengine=psync --fallocate=none \
      --numjobs="$2" --group_reporting --time_based --runtime="$TIME" --output-format=terse \
      | cut -d';' -f49
  fi
  rm -f "$f"
}

echo "faultfs ${DELAY_US} us per request, O_DIRECT 16 KiB random writes (extend: sequential), one $SIZE file, ${TIME} s per run, kernel $(uname -r)"
first=${THREADS%% *} last=${THREADS##* }
printf '%-5s %-10s %-5s' fs layout tool
for t in $THREADS; do printf ' %9s' "${t}t IOPS"; done
printf ' %9s\n' "${last}t/${first}t"
for fs in $FSS; do
  case $fs in
    ext4) mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$DEV" ;;
    xfs) mkfs.xfs -q -f "$DEV" ;;
    *) echo "unknown fs $fs" >&2; exit 2 ;;
  esac
  mount "$DEV" "$W/mnt"
  mkdir "$W/mnt/set"
  # One warm-up run: the first writes after mount also pay for metadata reads.
  iops "$fs" overwrite 1 >/dev/null
  tools=iolab; [ "$FIO" = 1 ] && tools="iolab fio"
  for lay in $LAYOUTS; do
    for tool in $tools; do
      printf '%-5s %-10s %-5s' "$fs" "$lay" "$tool"
      declare -a r=()
      for t in $THREADS; do
        if [ "$tool" = iolab ]; then v=$(iops "$fs" "$lay" "$t"); else v=$(fio_iops "$lay" "$t"); fi
        r+=("$v")
        printf ' %9.0f' "$v"
      done
      awk -v a="${r[0]}" -v b="${r[${#r[@]}-1]}" 'BEGIN { printf " %9.2f\n", (a > 0 ? b / a : 0) }'
      unset r
    done
  done
  umount "$W/mnt"
done
