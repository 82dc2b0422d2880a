#!/usr/bin/env bash
# bench/vs-fio.sh: run the same workloads with fio and iolab side by side and compare.
#
# Cases:
#   1. null      null engine, 4 KiB random reads, 1 job (pure per-I/O overhead of the tool)
#   2. psync     buffered 4 KiB random reads of a page-cached 1 GiB file, pread, 1 thread
#   3. io_uring  the same with io_uring at iodepth 32
#   4. direct    O_DIRECT 16 KiB random reads, 1 thread, on a fresh ext4 on a loop device
#                (--direct-io=on) backed by an image file (root only; device-bound)
#   5. libaio    case 2 with Linux native AIO (fio ioengine=libaio, iolab --engine libaio) at
#                iodepth 32: buffered, so both complete each read inside io_submit (per-I/O cost)
#   6. libaio_throttled  O_DIRECT 16 KiB random reads at iodepth 8 with libaio, on the loop
#                device of case 4 with a cgroup v1 blkio read limit of THROTTLE_IOPS, both tools
#                inside the cgroup (root only; device-bound)
#   io_uring on each file system this machine has (4 KiB random reads at iodepth 32 for the
#   page-cached and tmpfs cases, 16 KiB at iodepth 16 for O_DIRECT on a loop device):
#   7. uring_tmpfs          buffered, file on tmpfs (TMPFS_DIR, default /dev/shm): every read is
#                           handed to io_uring's io-wq threads (tmpfs has no non-blocking read)
#   8. uring_tmpfs_direct   the same with O_DIRECT (tmpfs accepts it and copies, Linux 6.6+)
#   9. uring_ext4           buffered, page-cached, fresh ext4 on a loop device (root only)
#  10. uring_ext4_direct    O_DIRECT on that ext4 (device-bound)
#  11. uring_xfs            buffered, page-cached, fresh xfs on a loop device (root only)
#  12. uring_xfs_direct     O_DIRECT on that xfs (device-bound)
#   Queue depths on the device (root only; O_DIRECT 16 KiB random reads, ext4 on a loop device):
#  13. qd                   io_uring and libaio at iodepth 1, 16 and 64 (QDS) against fio
#                           (device-bound; use REPEAT=5)
#  14. qd_throttled         io_uring and libaio at iodepth 64 on that device held at THROTTLE_IOPS
#                           by a cgroup v1 blkio limit: both tools within 5 % of each other and
#                           within 3 % of the limit
#   For the throttled cases (6, 14) a second table lists, per run, the reads each tool counted and
#   the reads the loop device completed while it ran (/sys/block/DEV/stat): the kernel's throttle
#   itself admits a few hundred reads more or fewer in some runs (docs/vs-fio.md), which this
#   tells apart from a tool's miscount.
#
# Cases 1-3, 5, 7-9 and 11 are CPU/memory-bound: the ratio shows per-I/O overhead. Cases 4, 6,
# 10, 12-14 are device-bound: the two tools should agree within 5 %.
#
# Environment:
#   IOLAB=path      iolab binary (default: cargo build --release, then target/release/iolab,
#                   honouring CARGO_TARGET_DIR)
#   RUNTIME=5       seconds each tool runs per case
#   SIZE=1G         size of the (single) data file
#   IMG_SIZE=2G     size of the loop-device image for case 4
#   WORKROOT=/var/tmp   where the scratch directory and the image go
#   CASES="null psync io_uring direct libaio libaio_throttled"   which cases to run, in order
#                   (the default; the io_uring-per-file-system and queue-depth cases run when
#                   named, or all of them with CASES=all)
#   TMPFS_DIR=/dev/shm  a tmpfs for cases 7 and 8
#   QDS="1 16 64"   the queue depths of case 13
#   NICE=0          run both tools under `nice -n NICE` (e.g. -20 on a machine shared with
#                   builds: each tool then gets the CPUs, and the comparison less noise)
#   THROTTLE_IOPS=2000  the blkio read limit of case 6
#   FIO_EXTRA=...   extra fio options for every case (default: --norandommap, since iolab
#                   draws uniform offsets with replacement, as fio does with --norandommap)
#   REPEAT=1        run each tool this many times per case, alternating fio/iolab; the table
#                   shows medians and the spread (max/min - 1) of each tool's IOPS. Device-bound
#                   results on a shared VM vary 10-20 % run to run, and up to 2x when other load
#                   runs on the machine: use REPEAT=3 or more before trusting a NO.
#   FIO_URING_EXTRA=...  extra fio options for the io_uring case only (default none: fio then
#                   submits one SQE per io_uring_enter; e.g. "--iodepth_batch_submit=32
#                   --iodepth_batch_complete_max=32" makes it batch like iolab does)
#   FIO_LIBAIO_EXTRA=...  the same for the libaio cases (e.g. "--iodepth_batch_submit=32
#                   --iodepth_batch_complete_max=32")
#   KEEP_OUT=1      keep the raw JSON outputs (their directory is printed)
set -euo pipefail

T0=$SECONDS
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RUNTIME=${RUNTIME:-5}
SIZE=${SIZE:-1G}
IMG_SIZE=${IMG_SIZE:-2G}
WORKROOT=${WORKROOT:-/var/tmp}
CASES=${CASES:-null psync io_uring direct libaio libaio_throttled}
ALL_CASES="null psync io_uring direct libaio libaio_throttled uring_tmpfs uring_tmpfs_direct uring_ext4 uring_ext4_direct uring_xfs uring_xfs_direct qd qd_throttled"
[[ "$CASES" == all ]] && CASES=$ALL_CASES
TMPFS_DIR=${TMPFS_DIR:-/dev/shm}
QDS=${QDS:-1 16 64}
NICE=${NICE:-0}
THROTTLE_IOPS=${THROTTLE_IOPS:-2000}
FIO_EXTRA=${FIO_EXTRA:---norandommap}
FIO_URING_EXTRA=${FIO_URING_EXTRA:-}
FIO_LIBAIO_EXTRA=${FIO_LIBAIO_EXTRA:-}
KEEP_OUT=${KEEP_OUT:-0}
REPEAT=${REPEAT:-1}

die() { echo "vs-fio: $*" >&2; exit 1; }
log() { echo "== $*" >&2; }

[[ "$REPEAT" =~ ^[1-9][0-9]*$ ]] || die "REPEAT must be a positive integer"
[[ "$RUNTIME" =~ ^[1-9][0-9]*$ ]] || die "RUNTIME must be a positive whole number of seconds"
[[ "$NICE" =~ ^-?[0-9]+$ ]] || die "NICE must be an integer (-20..19)"

command -v fio >/dev/null || die "fio not found (Debian: apt-get install -y fio)"
command -v python3 >/dev/null || die "python3 not found"

if [[ -z "${IOLAB:-}" ]]; then
    tdir=${CARGO_TARGET_DIR:-$REPO/target}
    if command -v cargo >/dev/null; then
        log "building iolab (cargo build --release)"
        (cd "$REPO" && cargo build --release --quiet) || die "cargo build failed"
    fi
    IOLAB=$tdir/release/iolab
fi
[[ -x "$IOLAB" ]] || die "iolab binary not found or not executable: $IOLAB (set IOLAB=path)"

WORK=$(mktemp -d "$WORKROOT/iolab-vs-fio.XXXXXX")
OUT=$WORK/out
DATA=$WORK/data
mkdir -p "$OUT" "$DATA"
MNT=""
LOOPDEV=""
IMG=""
CGROUP=""
TMPDATA=""

cleanup() {
    local rc=$?
    set +e
    if [[ -n "$CGROUP" ]]; then
        echo $$ >/sys/fs/cgroup/blkio/cgroup.procs
        rmdir "$CGROUP"
    fi
    if [[ -n "$MNT" ]] && mountpoint -q "$MNT"; then
        umount "$MNT" || umount -l "$MNT"
    fi
    [[ -n "$LOOPDEV" ]] && losetup -d "$LOOPDEV"
    [[ -n "$IMG" ]] && rm -f "$IMG"
    [[ -n "$TMPDATA" ]] && rm -rf "$TMPDATA"
    if [[ "$KEEP_OUT" == 1 ]]; then
        rm -rf "$DATA" "$WORK/mnt"
        echo "raw outputs kept in $OUT" >&2
    else
        rm -rf "$WORK"
    fi
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- JSON parsing -------------------------------------------------------------------------
# fio: prints "IOPS P50_NS" (total latency, submission to completion; needs --lat_percentiles=1)
fio_parse() {
    python3 - "$1" <<'EOF'
import json, sys
txt = open(sys.argv[1]).read()
d = json.loads(txt[txt.index('{'):])          # fio may print notes before the JSON
r = d["jobs"][0]["read"]
p50 = None
for k in ("lat_ns", "clat_ns"):
    pc = r.get(k, {}).get("percentile")
    if pc:
        p50 = pc.get("50.000000")
        break
print(f'{r["iops"]:.0f} {p50 if p50 is not None else "nan"} {r["total_ios"]}')
EOF
}
# iolab: prints "IOPS P50_NS CACHE_PCT_AT_START"
iolab_parse() {
    python3 - "$1" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
r = d["results"]["read"]
lat = r.get("lat_ns") or {}
c = d.get("cache_resident_pct_at_start")
print(f'{r["iops"]:.0f} {lat.get("p50", "nan")} {c if c is not None else "nan"} {r.get("ops", "nan")}')
EOF
}

# --- running ------------------------------------------------------------------------------
# Results: one line per run in $OUT/results: NAME|DEVICE_BOUND|FIO_IOPS|IOLAB_IOPS|FIO_P50|IOLAB_P50
# (REPEAT lines per case; the table takes medians)
NOTES=()
note() { NOTES+=("$*"); echo "   note: $*" >&2; }

# run_fio CASE ARGS... ; sets FIO_IOPS FIO_P50 (FAIL on error)
run_fio() {
    local c=$1; shift
    # shellcheck disable=SC2086
    if nice -n "$NICE" fio --output-format=json --lat_percentiles=1 --time_based --runtime="$RUNTIME" \
        --name="$c" $FIO_EXTRA "$@" >"$OUT/$c.fio.json" 2>"$OUT/$c.fio.err"; then
        read -r FIO_IOPS FIO_P50 FIO_OPS < <(fio_parse "$OUT/$c.fio.json")
    else
        FIO_IOPS=FAIL FIO_P50=nan FIO_OPS=nan
        note "$c: fio failed: $(tail -n 3 "$OUT/$c.fio.err" | tr '\n' ' ')"
    fi
}
# run_iolab CASE ARGS... ; sets IOLAB_IOPS IOLAB_P50 IOLAB_CACHE
run_iolab() {
    local c=$1; shift
    if nice -n "$NICE" "$IOLAB" run --json --no-save --quiet --time "$RUNTIME" "$@" \
        >"$OUT/$c.iolab.json" 2>"$OUT/$c.iolab.err"; then
        read -r IOLAB_IOPS IOLAB_P50 IOLAB_CACHE IOLAB_OPS < <(iolab_parse "$OUT/$c.iolab.json")
        python3 - "$OUT/$c.iolab.json" <<'EOF' >&2 || true
import json, sys
for w in json.load(open(sys.argv[1])).get("warnings", []):
    print(f'   iolab warning [{w.get("code", w.get("kind", "?"))}]: {w.get("message", w)}')
EOF
    else
        IOLAB_IOPS=FAIL IOLAB_P50=nan IOLAB_CACHE=nan IOLAB_OPS=nan
        note "$c: iolab failed: $(tail -n 3 "$OUT/$c.iolab.err" | tr '\n' ' ')"
    fi
}
record() { # NAME DEVICE_BOUND
    echo "$1|$2|$FIO_IOPS|$IOLAB_IOPS|$FIO_P50|$IOLAB_P50" >>"$OUT/results"
    log "$1: fio ${FIO_IOPS} IOPS (p50 ${FIO_P50} ns), iolab ${IOLAB_IOPS} IOPS (p50 ${IOLAB_P50} ns)"
}
# pairs CASE LABEL DEVICE_BOUND "FIO ARGS" "IOLAB ARGS": REPEAT alternating fio/iolab runs.
# Arguments are split on whitespace (the scratch paths contain none).
# On a throttled loop device each run also records the reads the device completed during it
# (/sys/block/DEV/stat) beside the reads the tool counted, in $OUT/devcount.
pairs() {
    local c=$1 label=$2 dev=$3 fargs=$4 iargs=$5 r d0 d1 d2
    for ((r = 1; r <= REPEAT; r++)); do
        d0=$(dev_reads)
        # shellcheck disable=SC2086
        run_fio "$c.$r" $fargs
        d1=$(dev_reads)
        # shellcheck disable=SC2086
        run_iolab "$c.$r" $iargs
        d2=$(dev_reads)
        record "$label" "$dev"
        if [[ $dev == t* && -n "$LOOPDEV" ]]; then
            echo "$label|$r|$FIO_OPS|$((d1 - d0))|$IOLAB_OPS|$((d2 - d1))" >>"$OUT/devcount"
        fi
    done
}
# dev_reads: reads completed by $LOOPDEV since boot (0 without one)
dev_reads() {
    if [[ -n "$LOOPDEV" ]]; then
        awk '{ print $1 }' "/sys/block/$(basename "$LOOPDEV")/stat"
    else
        echo 0
    fi
}
resident_pct() { # FILE -> percent of its pages in the page cache
    if command -v fincore >/dev/null; then
        fincore -b -n -o RES,SIZE "$1" | awk '{ if ($2 > 0) printf "%.1f", 100 * $1 / $2; else print "nan" }'
    else
        echo "nan"
    fi
}

HAVE_WARM=0
if "$IOLAB" run --help 2>/dev/null | grep -q -- '--warm'; then HAVE_WARM=1; fi

DATA_READY=0
prepare_data() {
    [[ $DATA_READY == 1 ]] && return 0
    log "preparing one $SIZE file in $DATA"
    "$IOLAB" prepare --dir "$DATA" --files 1 --size "$SIZE" --quiet >&2
    DATA_READY=1
}

case_null() {
    log "case null: null engine, 4k random reads, 1 job, ${RUNTIME}s each"
    # The data directory is reused so that iolab does not write a file set it will not read.
    prepare_data
    pairs null "1 null 4k randread" 0 \
        "--ioengine=null --rw=randread --bs=4k --size=$SIZE" \
        "--dir $DATA --keep --engine null --mode rndrd --bs 4k --files 1 --size $SIZE"
}

buffered_case() { # NAME LABEL FIO_ENGINE_ARGS IOLAB_ENGINE_ARGS [DIR with a prepared file]
    local c=$1 label=$2 fargs=$3 iargs=$4 dir=${5:-}
    if [[ -z "$dir" ]]; then
        prepare_data
        dir=$DATA
    fi
    local f=$dir/iolab-file.0
    cat "$f" >/dev/null
    log "case $c: $f $(resident_pct "$f")% resident before fio"
    local warm=""
    if [[ $HAVE_WARM == 1 ]]; then
        warm=--warm
    else
        note "$c: 'iolab run --help' lists no --warm: iolab evicts the page cache before the run, so it reads from the device while fio reads from memory (not comparable)"
    fi
    # --invalidate=0: fio would otherwise drop the file from the page cache before the job.
    pairs "$c" "$label" 0 \
        "--filename=$f --rw=randread --bs=4k --invalidate=0 $fargs" \
        "--dir $dir --files 1 --size $SIZE --mode rndrd --bs 4k --keep $warm $iargs"
    if [[ "$IOLAB_CACHE" != nan ]] && python3 -c "import sys; sys.exit(0 if float('$IOLAB_CACHE') < 99 else 1)"; then
        note "$c: iolab started with only ${IOLAB_CACHE}% of the file in the page cache (fio: fully cached)"
    fi
}

case_psync() {
    log "case psync: buffered 4k random reads of a page-cached file, pread, 1 thread"
    buffered_case psync "2 cached 4k psync" "--ioengine=psync" "--engine sync"
}
case_io_uring() {
    log "case io_uring: buffered 4k random reads of a page-cached file, io_uring QD32"
    buffered_case io_uring "3 cached 4k uring qd32" "--ioengine=io_uring --iodepth=32 $FIO_URING_EXTRA" "--engine io_uring --iodepth 32"
}

# loop_fs CASE [FSTYPE]: a fresh FSTYPE (ext4, the default, or xfs) on a loop device
# (--direct-io=on) over an image file, mounted at $MNT with one prepared $SIZE file; returns 1
# (with a note) when it cannot.
loop_fs() {
    local c=$1 fstype=${2:-ext4}
    if [[ $EUID -ne 0 ]]; then
        note "$c: skipped (needs root for losetup/mount)"
        return 1
    fi
    local t
    for t in losetup "mkfs.$fstype" mount umount; do
        command -v "$t" >/dev/null || { note "$c: skipped ($t not found)"; return 1; }
    done
    IMG=$WORK/loop.img
    fallocate -l "$IMG_SIZE" "$IMG" 2>/dev/null || truncate -s "$IMG_SIZE" "$IMG"
    if ! LOOPDEV=$(losetup --find --show --direct-io=on "$IMG"); then
        LOOPDEV=""
        note "$c: skipped (losetup failed)"
        return 1
    fi
    local dio
    dio=$(cat "/sys/block/$(basename "$LOOPDEV")/loop/dio" 2>/dev/null || echo "?")
    [[ "$dio" == 1 ]] || note "$c: $LOOPDEV has loop/dio=$dio: the loop device is NOT doing direct I/O on its backing file, so reads may be served by the page cache of $IMG"
    MNT=$WORK/mnt
    mkdir -p "$MNT"
    local mkfs_ok=1
    case $fstype in
        # No lazy init: ext4lazyinit would otherwise write in the background during the measurement.
        ext4) mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$LOOPDEV" >&2 || mkfs_ok=0 ;;
        xfs) mkfs.xfs -q -f "$LOOPDEV" >&2 || mkfs_ok=0 ;;
        *) die "loop_fs: unknown file system $fstype" ;;
    esac
    if [[ $mkfs_ok == 0 ]] || ! mount "$LOOPDEV" "$MNT"; then
        note "$c: skipped (mkfs.$fstype or mount of $LOOPDEV failed)"
        return 1
    fi
    log "$c: $LOOPDEV (dio=$dio, $fstype) on $IMG mounted at $MNT"
    if ! "$IOLAB" prepare --dir "$MNT" --files 1 --size "$SIZE" --bs 16k --direct --quiet >&2; then
        note "$c: skipped (iolab prepare failed; is IMG_SIZE=$IMG_SIZE enough for SIZE=$SIZE?)"
        return 1
    fi
}
loop_fs_done() {
    if [[ -n "$MNT" ]] && mountpoint -q "$MNT"; then umount "$MNT"; fi
    MNT=""
    [[ -n "$LOOPDEV" ]] && losetup -d "$LOOPDEV"
    LOOPDEV=""
    [[ -n "$IMG" ]] && rm -f "$IMG"
    IMG=""
}

case_direct() {
    log "case direct: O_DIRECT 16k random reads on a loop device (--direct-io=on), 1 thread"
    loop_fs direct || { loop_fs_done; return 0; }
    pairs direct "4 O_DIRECT 16k loop" 1 \
        "--filename=$MNT/iolab-file.0 --ioengine=psync --direct=1 --rw=randread --bs=16k" \
        "--dir $MNT --files 1 --size $SIZE --mode rndrd --bs 16k --direct --keep"
    loop_fs_done
}

case_libaio() {
    log "case libaio: buffered 4k random reads of a page-cached file, libaio QD32"
    buffered_case libaio "5 cached 4k libaio qd32" "--ioengine=libaio --iodepth=32 $FIO_LIBAIO_EXTRA" "--engine libaio --iodepth 32"
}

case_libaio_throttled() {
    local c=libaio_throttled
    log "case $c: O_DIRECT 16k random reads, libaio QD8, loop device limited to $THROTTLE_IOPS read IOPS (cgroup v1 blkio)"
    if [[ ! -e /sys/fs/cgroup/blkio/blkio.throttle.read_iops_device ]]; then
        note "$c: skipped (no cgroup v1 blkio throttling)"
        return 0
    fi
    loop_fs $c || { loop_fs_done; return 0; }
    throttle_start
    pairs $c "6 O_DIRECT 16k libaio qd8 throttled" 1 \
        "--filename=$MNT/iolab-file.0 --ioengine=libaio --iodepth=8 $FIO_LIBAIO_EXTRA --direct=1 --rw=randread --bs=16k" \
        "--dir $MNT --files 1 --size $SIZE --mode rndrd --bs 16k --direct --keep --engine libaio --iodepth 8"
    throttle_stop
    loop_fs_done
}

# --- io_uring on each file system ------------------------------------------------------------
URING_QD32="--ioengine=io_uring --iodepth=32 $FIO_URING_EXTRA"

case_uring_tmpfs() { # [direct]
    local direct=${1:-} c=uring_tmpfs label="7 tmpfs 4k uring qd32"
    [[ -n "$direct" ]] && c=uring_tmpfs_direct label="8 tmpfs 4k uring qd32 O_DIRECT"
    if [[ "$(stat -f -c %T "$TMPFS_DIR" 2>/dev/null)" != tmpfs ]]; then
        note "$c: skipped ($TMPFS_DIR is not a tmpfs; set TMPFS_DIR)"
        return 0
    fi
    if [[ -z "$TMPDATA" ]]; then
        TMPDATA=$(mktemp -d "$TMPFS_DIR/iolab-vs-fio.XXXXXX")
        log "preparing one $SIZE file in $TMPDATA (tmpfs)"
        "$IOLAB" prepare --dir "$TMPDATA" --files 1 --size "$SIZE" --quiet >&2 2>/dev/null
    fi
    log "case $c: 4k random reads of a file on tmpfs ($TMPDATA), io_uring QD32${direct:+, O_DIRECT}"
    if [[ -z "$direct" ]]; then
        buffered_case "$c" "$label" "$URING_QD32" "--engine io_uring --iodepth 32" "$TMPDATA"
    else
        # tmpfs keeps its pages in memory whatever the flag: both tools read the same memory.
        pairs "$c" "$label" 0 \
            "--filename=$TMPDATA/iolab-file.0 --rw=randread --bs=4k --direct=1 $URING_QD32" \
            "--dir $TMPDATA --files 1 --size $SIZE --mode rndrd --bs 4k --keep --direct --engine io_uring --iodepth 32"
    fi
}

case_uring_fs() { # FSTYPE NUMBER [direct]
    local fstype=$1 n=$2 direct=${3:-} c label
    c=uring_$fstype${direct:+_direct}
    loop_fs "$c" "$fstype" || { loop_fs_done; return 0; }
    if [[ -z "$direct" ]]; then
        label="$n $fstype 4k uring qd32 cached"
        log "case $c: buffered 4k random reads of a page-cached file on $fstype, io_uring QD32"
        buffered_case "$c" "$label" "$URING_QD32" "--engine io_uring --iodepth 32" "$MNT"
    else
        label="$n $fstype O_DIRECT 16k uring qd16"
        log "case $c: O_DIRECT 16k random reads on $fstype on a loop device, io_uring QD16"
        pairs "$c" "$label" 1 \
            "--filename=$MNT/iolab-file.0 --ioengine=io_uring --iodepth=16 $FIO_URING_EXTRA --direct=1 --rw=randread --bs=16k" \
            "--dir $MNT --files 1 --size $SIZE --mode rndrd --bs 16k --direct --keep --engine io_uring --iodepth 16"
    fi
    loop_fs_done
}

# --- queue depths on the device ---------------------------------------------------------------
case_qd() {
    log "case qd: O_DIRECT 16k random reads on ext4 on a loop device, io_uring and libaio at iodepth $QDS"
    loop_fs qd || { loop_fs_done; return 0; }
    local qd eng fextra
    for qd in $QDS; do
        for eng in io_uring libaio; do
            fextra=$FIO_URING_EXTRA
            [[ $eng == libaio ]] && fextra=$FIO_LIBAIO_EXTRA
            pairs "qd.$eng.$qd" "13 O_DIRECT 16k $eng qd$qd" 1 \
                "--filename=$MNT/iolab-file.0 --ioengine=$eng --iodepth=$qd $fextra --direct=1 --rw=randread --bs=16k" \
                "--dir $MNT --files 1 --size $SIZE --mode rndrd --bs 16k --direct --keep --engine $eng --iodepth $qd"
        done
    done
    loop_fs_done
}

# throttle_start: puts this shell (and so both tools) in a cgroup v1 blkio group that holds
# $LOOPDEV at THROTTLE_IOPS read IOPS; throttle_stop leaves and removes it.
throttle_start() {
    local majmin
    majmin=$(lsblk -dno MAJ:MIN "$LOOPDEV" | tr -d ' ')
    CGROUP=/sys/fs/cgroup/blkio/iolab-vs-fio-$$
    mkdir "$CGROUP"
    echo "$majmin $THROTTLE_IOPS" >"$CGROUP/blkio.throttle.read_iops_device"
    echo $$ >"$CGROUP/cgroup.procs"
}
throttle_stop() {
    echo $$ >/sys/fs/cgroup/blkio/cgroup.procs
    rmdir "$CGROUP" && CGROUP=""
}

case_qd_throttled() {
    local c=qd_throttled eng fextra
    log "case $c: O_DIRECT 16k random reads, io_uring and libaio QD64, loop device limited to $THROTTLE_IOPS read IOPS (cgroup v1 blkio)"
    if [[ ! -e /sys/fs/cgroup/blkio/blkio.throttle.read_iops_device ]]; then
        note "$c: skipped (no cgroup v1 blkio throttling)"
        return 0
    fi
    loop_fs $c || { loop_fs_done; return 0; }
    throttle_start
    for eng in io_uring libaio; do
        fextra=$FIO_URING_EXTRA
        [[ $eng == libaio ]] && fextra=$FIO_LIBAIO_EXTRA
        pairs "$c.$eng" "14 O_DIRECT 16k $eng qd64 throttled" "t$THROTTLE_IOPS" \
            "--filename=$MNT/iolab-file.0 --ioengine=$eng --iodepth=64 $fextra --direct=1 --rw=randread --bs=16k" \
            "--dir $MNT --files 1 --size $SIZE --mode rndrd --bs 16k --direct --keep --engine $eng --iodepth 64"
    done
    throttle_stop
    loop_fs_done
}

log "iolab: $IOLAB ($("$IOLAB" --version 2>/dev/null || echo '?')); $(fio --version); ${RUNTIME}s per tool per run, $REPEAT run(s) per case; nice $NICE"
log "machine: $(nproc) CPUs, $(uname -r); load before: $(cut -d' ' -f1-3 /proc/loadavg)"
: >"$OUT/results"
for c in $CASES; do
    case $c in
        null) case_null ;;
        psync) case_psync ;;
        io_uring | uring) case_io_uring ;;
        direct) case_direct ;;
        libaio) case_libaio ;;
        libaio_throttled) case_libaio_throttled ;;
        uring_tmpfs) case_uring_tmpfs ;;
        uring_tmpfs_direct) case_uring_tmpfs direct ;;
        uring_ext4) case_uring_fs ext4 9 ;;
        uring_ext4_direct) case_uring_fs ext4 10 direct ;;
        uring_xfs) case_uring_fs xfs 11 ;;
        uring_xfs_direct) case_uring_fs xfs 12 direct ;;
        qd) case_qd ;;
        qd_throttled) case_qd_throttled ;;
        *) die "unknown case '$c' (cases: $ALL_CASES, or all)" ;;
    esac
done

# --- table --------------------------------------------------------------------------------
echo
python3 - "$OUT/results" "$REPEAT" <<'EOF'
import statistics, sys
repeat = int(sys.argv[2])
cases = {}
for l in open(sys.argv[1]):
    if l.strip():
        name, dev, *vals = l.rstrip("\n").split("|")
        cases.setdefault((name, dev), []).append(vals)
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
def fmt_iops(v):
    return "FAIL" if v is None else f"{v:,.0f}"
def fmt_lat(v):
    if v is None:
        return "-"
    return f"{v/1000:.2f} us" if v >= 1000 else f"{v:.0f} ns"
hdr = ["case", "fio IOPS", "iolab IOPS", "iolab/fio", "fio p50", "iolab p50", "agree (5%)"]
if repeat > 1:
    hdr += ["fio spread", "iolab spread", "pair ratio"]
out = []
for (name, dev), runs in cases.items():
    fi, ii, fp, ip = (list(c) for c in zip(*runs))
    f, i = med(fi), med(ii)
    ratio = f"{i/f:.3f}" if f and i is not None else "-"
    if dev == "1":
        agree = "-" if not (f and i is not None) else ("yes" if abs(i/f - 1) <= 0.05 else "NO")
    elif dev.startswith("t"):
        # throttled: each tool within 3 % of the limit, and within 5 % of each other
        lim = float(dev[1:])
        if not (f and i is not None):
            agree = "-"
        else:
            ok = abs(i/f - 1) <= 0.05 and abs(i/lim - 1) <= 0.03
            agree = f"{'yes' if ok else 'NO'} (iolab/limit {i/lim:.3f}, fio/limit {f/lim:.3f})"
    else:
        agree = "n/a (CPU)"
    row = [name, fmt_iops(f), fmt_iops(i), ratio, fmt_lat(med(fp)), fmt_lat(med(ip)), agree]
    if repeat > 1:
        # each iolab run over the fio run just before it: a load that drifts over minutes on a
        # shared machine cancels out of these ratios better than out of the two medians
        pr = [num(b) / num(a) for a, b in zip(fi, ii) if num(a) and num(b) is not None]
        row += [spread(fi), spread(ii), f"{statistics.median(pr):.3f}" if pr else "-"]
    out.append(row)
if not out:
    print("no case ran")
    sys.exit(0)
w = [max(len(r[k]) for r in out + [hdr]) for k in range(len(hdr))]
line = lambda r: "  ".join(c.ljust(w[k]) if k == 0 else c.rjust(w[k]) for k, c in enumerate(r))
if repeat > 1:
    print(f"medians of {repeat} alternating runs per tool; spread = max/min - 1 of IOPS;")
    print("pair ratio = median over the runs of iolab's IOPS / the IOPS of the fio run just before it")
print(line(hdr))
print("  ".join("-" * x for x in w))
for r in out:
    print(line(r))
print("p50: median latency per I/O (fio: lat_ns, submission to completion; iolab: results.read.lat_ns.p50)")
print("agree: device-bound cases only (within 5 %; throttled cases also within 3 % of the limit);")
print("       the CPU-bound ratios measure per-I/O tool overhead")
if repeat == 1 and any(r[6] == "NO" for r in out):
    print("a device-bound case disagrees after one run each: on a VM the device alone can vary 10-20 % (more with other load)"
          " run to run; rerun with REPEAT=3 (or CASES=direct REPEAT=5) before blaming a tool")
EOF
if [[ -s "$OUT/devcount" ]]; then
    echo
    echo "throttled cases, each run: reads the tool counted (fio: all it completed; iolab: the window's"
    echo "and the drain after it) and reads the loop device completed while the tool ran"
    echo "(/sys/block/DEV/stat, which includes each tool's start and end); at the limit: about"
    echo "THROTTLE_IOPS x RUNTIME + iodepth = $THROTTLE_IOPS x $RUNTIME + 64"
    python3 - "$OUT/devcount" <<'EOF'
import sys
print(f"{'case':<38} {'run':>3} {'fio counted':>11} {'device':>7} {'iolab counted':>13} {'device':>7} {'iolab-device':>12}")
for l in open(sys.argv[1]):
    name, r, fo, fd, io, idv = l.rstrip("\n").split("|")
    try:
        diff = f"{int(io) - int(idv):+d}"
    except ValueError:
        diff = "-"
    print(f"{name:<38} {r:>3} {fo:>11} {fd:>7} {io:>13} {idv:>7} {diff:>12}")
EOF
fi
if ((${#NOTES[@]})); then
    echo
    for n in "${NOTES[@]}"; do echo "note: $n"; done
fi
echo
echo "load average at the end (1/5/15 min): $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
echo "total time: $((SECONDS - T0)) s"
