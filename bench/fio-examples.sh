#!/bin/bash
# How much of fio's job-file language iolab speaks (issue 26): every job file of fio's own
# examples/ and t/jobs/ run by fio 3.33 and by `iolab run FILE`, compared per job on the fio JSON
# each writes (iolab's `--output-format fio-json`): which directions did I/O, the mean I/O size
# per direction (the bs mix), bytes per direction (jobs that end at their size), the runtime
# (jobs that end at their runtime=; a tool that ended at the size first, having moved at least
# the other's bytes, is not a difference). The bs mean and the bytes of a direction are compared
# within 10 %, or within their sampling noise over few I/Os (2/sqrt(n): a random bs mix's mean,
# a random direction's share).
#
#   bench/fio-examples.sh                 # fetch fio's source with apt-get source, then survey
#   FIO_SRC=/var/tmp/fiosrc/fio-3.33 bench/fio-examples.sh
#
# Each file is SPECIAL (needs hardware, a network or a library: not run), or is rewritten into a
# scratch copy (sizes capped at CAP, runtime at RT seconds, numjobs at 4, nrfiles at 256, directory= and
# filename= in a scratch folder; /dev/ names become a scratch loop device when run as root) and
# run by both. Verdicts: SAME, DIFFERS: what, REFUSED: iolab's first blocker, FAILED: iolab's
# error, FIO-FAILED: fio itself failed or hung here (fio runs every file, refused or not; a
# verify failure of both is SAME: fio's t0003-post is meant to fail). A -pre file runs first and
# its -post file on what it left, as fio's run-fio-tests.py; a file without runtime= gets
# runtime=RT too (both stop at the size or the runtime, whichever comes first).
# The count at the end: files that ran with fio's semantics (SAME) out of those needing no
# special hardware (the issue's target is 9 in 10). The last run: docs/fio-jobs.md.
# Environment: IOLAB (default target/release/iolab), FIO (fio), CAP (32m), RT (2),
# ONLY (a grep pattern of files to run), KEEP=1 (keep the scratch folder).
set -u
cd "$(dirname "$0")/.."
IOLAB=${IOLAB:-$PWD/target/release/iolab}
FIO=${FIO:-fio}
CAP=${CAP:-32m}
RT=${RT:-2}
ONLY=${ONLY:-.}
[ -x "$IOLAB" ] || { echo "fio-examples.sh: no iolab at $IOLAB: build it (cargo build --release) or set IOLAB" >&2; exit 2; }
command -v "$FIO" >/dev/null || { echo "fio-examples.sh: fio is not installed (apt-get install fio)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "fio-examples.sh: needs python3" >&2; exit 2; }

SCRATCH=$(mktemp -d /var/tmp/fio-examples.XXXXXX)
LOOPDEV=""
cleanup() {
  [ -n "$LOOPDEV" ] && losetup -d "$LOOPDEV" 2>/dev/null
  [ "${KEEP:-0}" = 1 ] || rm -rf "$SCRATCH"
}
trap cleanup EXIT

if [ -z "${FIO_SRC:-}" ]; then
  # fio's source as Debian ships it: a deb-src entry added for the download and removed after
  ver=$("$FIO" --version | sed 's/^fio-//')
  # the system's own deb entries as deb-src (deb822 .sources keep their Signed-By), else one line
  if [ -e /etc/apt/sources.list.d/debian.sources ]; then
    list=/etc/apt/sources.list.d/iolab-fio-src.sources
    [ -e "$list" ] && { echo "fio-examples.sh: $list exists: set FIO_SRC instead" >&2; exit 2; }
    sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources >"$list"
  else
    list=/etc/apt/sources.list.d/iolab-fio-src.list
    [ -e "$list" ] && { echo "fio-examples.sh: $list exists: set FIO_SRC instead" >&2; exit 2; }
    grep -h '^deb ' /etc/apt/sources.list | sed 's/^deb /deb-src /' >"$list"
  fi
  (apt-get update -qq && cd "$SCRATCH" && apt-get source -qq --download-only fio) >&2
  rm -f "$list"
  apt-get update -qq >&2 || true
  tarball=$(ls "$SCRATCH"/fio_*.orig.tar.* 2>/dev/null | grep -v '\.asc$' | head -1)
  [ -n "$tarball" ] || { echo "fio-examples.sh: apt-get source fio failed: set FIO_SRC to fio's source folder" >&2; exit 2; }
  tar -xf "$tarball" -C "$SCRATCH" || exit 2
  FIO_SRC=$(ls -d "$SCRATCH"/fio-*/ | head -1)
  FIO_SRC=${FIO_SRC%/}
  echo "fio's source: $(basename "$tarball") (fio here: $ver)" >&2
fi
[ -d "$FIO_SRC/examples" ] || { echo "fio-examples.sh: $FIO_SRC has no examples/" >&2; exit 2; }

if [ "$(id -u)" = 0 ] && command -v losetup >/dev/null; then
  truncate -s 64m "$SCRATCH/loop.img"
  LOOPDEV=$(losetup -f --show "$SCRATCH/loop.img" 2>/dev/null) || LOOPDEV=""
fi

# engines and modes that need hardware, a network or a library this survey does not have
SPECIAL_ENGINES='rdma|nbd|spdk.*|sg|net|netsplice|http|rados|rbd|gfapi|gfapi_async|dfs|nfs|xnvme|libcufile|ime_.*|ime|dev-dax|pmemblk|libpmem|mtd|libiscsi|librpma.*|libzbc|libhdfs|windowsaio|solarisaio|external.*|cpp_null|.*/.*|.*\.so'

special() { # prints why FILE needs special hardware, or nothing
  local f=$1 e
  for e in $(grep -hoE '^\s*ioengine\s*=\s*[^ #;]+' "$f" | sed 's/.*=\s*//' | sort -u); do
    if [[ $e =~ ^($SPECIAL_ENGINES)$ ]]; then echo "ioengine=$e"; return; fi
  done
  grep -qiE '^\s*zonemode\s*=\s*zbd' "$f" && { echo "zonemode=zbd"; return; }
  grep -qE '^\s*filename\s*=.*/dev/(ng|sg|nvme[0-9]+$|dax|pmem|mtd)' "$f" && { echo "a character device"; return; }
  # an engine named on fio's command line, as the file's comments say
  grep -qE -- '--ioengine=xnvme' "$f" && { echo "ioengine=xnvme (on the command line)"; return; }
}

mkdir -p "$SCRATCH/jobs"
declare -A N
printf '%-42s %s\n' file verdict
# fio's run-fio-tests.py runs a -post job after its -pre job, on the files the -pre job left: so do
# both here (the -pre file first, the scratch folders kept for the -post file)
files=$(ls "$FIO_SRC"/examples/*.fio "$FIO_SRC"/t/jobs/*.fio | sed 's/-pre\.fio$/-0pre.fio/' | sort | sed 's/-0pre\.fio$/-pre.fio/')
for f in $files; do
  b=${f#"$FIO_SRC"/}
  echo "$b" | grep -qE "$ONLY" || continue
  why=$(special "$f")
  if [ -n "$why" ]; then
    printf '%-42s SPECIAL: %s\n' "$b" "$why"; N[SPECIAL]=$((${N[SPECIAL]:-0} + 1)); continue
  fi
  job=$SCRATCH/jobs/$(echo "$b" | tr / _)
  case $b in
    *-post.fio) ;;
    *) for t in fio iolab; do rm -rf "${SCRATCH:?}/$t"; mkdir -p "$SCRATCH/$t"; done ;;
  esac
  # a file naming files without a size (fio sizes the job by them, butterfly.fio): each tool
  # finds them there, CAP bytes each, as the user's own files (not one that fills its device)
  if ! grep -qiE '^\s*(size|filesize|fill_device)\s*=' "$f"; then
    for n in $(grep -hoiE '^\s*filename\s*=\s*[^ #;]+' "$f" | sed 's/.*=\s*//' | tr ':' '\n' | grep -v '^/dev/' | grep -v '\$' | xargs -r -n1 basename | sort -u); do
      for t in fio iolab; do
        [ -e "$SCRATCH/$t/$n" ] || head -c "$(numfmt --from=iec "${CAP^^}")" /dev/urandom >"$SCRATCH/$t/$n"
      done
    done
  fi
  # the device is zeroed before each tool: fio's data must not be iolab's signature
  [ -n "$LOOPDEV" ] && [[ $b != *-post.fio ]] && dd if=/dev/zero of="$LOOPDEV" bs=1M count=1 status=none
  python3 - "$f" "$job" "$SCRATCH/@TOOL@" "${LOOPDEV:-}" "$CAP" "$RT" <<'EOF'
import re, sys, os
src, dst, work, dev, cap, rt = sys.argv[1:]
units = {'': 1, 'k': 1 << 10, 'm': 1 << 20, 'g': 1 << 30, 't': 1 << 40, 'p': 1 << 50}
def size(v):
    m = re.fullmatch(r'(\d+)([kmgtp]?)i?b?', v.strip().lower())
    return int(m.group(1)) * units[m.group(2)] if m else None
capb = size(cap)
def capsize(v):
    n = size(v)
    return cap if n is not None and n > capb else v
def captime(v):
    m = re.fullmatch(r'(\d+(?:\.\d+)?)(us|ms|s|m|h|d)?', v.strip().lower())
    if not m:
        return v
    mult = {'us': 1e-6, 'ms': 1e-3, 's': 1, None: 1, 'm': 60, 'h': 3600, 'd': 86400}[m.group(2)]
    return rt if float(m.group(1)) * mult > float(rt) else v
def fname(v):
    if '$' in v:
        return v
    parts = []
    for p in v.split(':'):
        if p.startswith('/dev/'):
            parts.append(dev if dev else 'dev-' + os.path.basename(p))
        else:
            parts.append(os.path.basename(p) or p)
    return ':'.join(parts)
text = open(src, errors='replace').read()
keys = set(k.lower() for k in re.findall(r'^\s*([A-Za-z_0-9]+)\s*=', text, re.M))
# fio joins directory= and a filename= even when the name is absolute (filesetup.c add_file): a
# file that names a device gets no directory= (the tools run in their scratch folder anyway)
uses_dev = re.search(r'^\s*filename\s*=.*/dev/', text, re.M) is not None
out = ['[global]\n' + ('' if uses_dev else 'directory=%s\n' % work)]
# a file without runtime= is bounded too (rate=1250 over 32 MiB would take hours): both tools
# stop at whichever comes first, its size or the runtime, as fio does with runtime= alone
if not keys & {'runtime', 'timeout'}:
    out.append('runtime=%s\n' % rt)
for line in text.splitlines(True):
    m = re.match(r'^\s*([A-Za-z_0-9]+)\s*=\s*(.*?)\s*$', line)
    if not m or line.lstrip().startswith((';', '#')):
        out.append(line)
        continue
    k, v = m.group(1).lower(), m.group(2)
    if k in ('size', 'filesize', 'io_size', 'io_limit'):
        v = capsize(v)
    elif k in ('runtime', 'ramp_time', 'startdelay'):
        v = captime(v)
    elif k == 'numjobs' and v.isdigit():
        v = str(min(int(v), 4))
    elif k == 'nrfiles' and v.isdigit():
        v = str(min(int(v), 256))
    elif k == 'loops' and v.isdigit():
        v = str(min(int(v), 2))
    elif k == 'directory':
        if uses_dev:
            continue
        v = work
    elif k == 'filename':
        v = fname(v)
    out.append('%s=%s\n' % (k, v))
open(dst, 'w').write(''.join(out))
EOF
  sed "s#$SCRATCH/@TOOL@#$SCRATCH/fio#" "$job" >"$job.fio.fio"
  sed "s#$SCRATCH/@TOOL@#$SCRATCH/iolab#" "$job" >"$job.iolab.fio"
  # iolab first: a refused file needs no run of fio
  dest=()
  grep -q '/dev/loop' "$job.iolab.fio" && dest=(--destructive)
  # a -pre file's files stay for its -post file, as fio leaves them (unlink=0, fio's default;
  # iolab removes what it made unless --keep; tests/fio_regression.rs runs fio's t0003 so too)
  [[ $b == *-pre.fio ]] && dest+=(--keep)
  (cd "$SCRATCH/iolab" && timeout -s KILL 60 "$IOLAB" run "$job.iolab.fio" --output-format fio-json -o "$SCRATCH/iolab.json" --no-save -q "${dest[@]}" >/dev/null 2>"$SCRATCH/iolab.err")
  irc=$?
  # refused or run, fio runs the file too: a file fio cannot run here either is FIO-FAILED
  [ -n "$LOOPDEV" ] && [[ $b != *-post.fio ]] && dd if=/dev/zero of="$LOOPDEV" bs=1M count=1 status=none
  (cd "$SCRATCH/fio" && timeout -s KILL 60 "$FIO" --output-format=json --output="$SCRATCH/fio.json" "$job.fio.fio" >/dev/null 2>"$SCRATCH/fio.err")
  frc=$?
  # fio's job processes call setsid(2): a hung one outlives timeout's process group
  pkill -KILL -f -- "$job.fio.fio" 2>/dev/null
  runtime=0
  grep -qiE '^\s*(runtime|timeout)\s*=' "$job" && runtime=1
  verdict=$(python3 - "$SCRATCH" "$frc" "$irc" "$RT" "$runtime" <<'EOF'
import json, sys, re
d, frc, irc, rt = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
has_runtime = sys.argv[5] == '1'
def first_line(p):
    for l in open(p, errors='replace'):
        l = l.strip()
        if l and not l.startswith('iolab: note:'):
            # the copy has two lines more at its top ([global] and directory=)
            return re.sub(r'^iolab: error: \S*/jobs/[^:]*:(\d+)',
                          lambda m: 'line %d' % (int(m.group(1)) - 2), l)[:110]
    return '(no message)'
def load(p):
    t = open(p, errors='replace').read()
    return json.loads(t[t.index('{'):])
# a verify failure is a verdict (fio's t0003-post must fail): iolab's exit 3 on the same file agrees
if frc not in (0, 137) and irc == 3 and 'verify' in open(d + '/fio.err', errors='replace').read():
    print('SAME (both find the data wrong)'); sys.exit()
if frc != 0:
    print('FIO-FAILED: ' + first_line(d + '/fio.err')); sys.exit()
if irc == 2:
    print('REFUSED: ' + first_line(d + '/iolab.err')); sys.exit()
if irc != 0:
    print('FAILED: rc=%d %s' % (irc, first_line(d + '/iolab.err'))); sys.exit()
try:
    fj, ij = load(d + '/fio.json')['jobs'], load(d + '/iolab.json')['jobs']
except Exception as e:
    print('FAILED: unreadable JSON: %s' % e); sys.exit()
diffs, notes = [], 0
if len(fj) != len(ij):
    diffs.append('jobs: fio %d, iolab %d' % (len(fj), len(ij)))
def rel(a, b):
    return abs(a - b) / max(a, b, 1)
total = lambda j: sum(j[k]['io_bytes'] for k in ('read', 'write', 'trim'))
for f, i in zip(fj, ij):
    name = f['jobname']
    notes += len(i.get('iolab_notes', []))
    # a job that ran to its runtime= (not to its size): its runtime is compared, not its bytes;
    # one tool that ends at the size first (faster here) moved at least the other's bytes
    took = lambda j: max(j[k]['runtime'] for k in ('read', 'write', 'trim'))
    timed = has_runtime and max(took(f), took(i)) >= 900 * rt
    slower, faster = (f, i) if took(f) >= took(i) else (i, f)
    if timed and rel(took(f), took(i)) > 0.25 and total(faster) < 0.9 * total(slower):
        diffs.append('%s runtime: fio %d ms, iolab %d' % (name, took(f), took(i)))
    for k in ('read', 'write', 'trim'):
        fo, io = f[k]['total_ios'], i[k]['total_ios']
        fb, ib = f[k]['io_bytes'], i[k]['io_bytes']
        if (fo > 0) != (io > 0):
            diffs.append('%s %s: fio %d I/Os, iolab %d' % (name, k, fo, io)); continue
        if fo == 0:
            continue
        # a mean of random sizes, or a random direction's share, over few I/Os: its sampling
        # noise (about 1/sqrt(n) relative; two of them allowed) beside the 10 %
        tol = max(0.10, 2 / min(fo, io) ** 0.5)
        if rel(fb / fo, ib / io) > tol:
            diffs.append('%s %s bs: fio %.0f B mean, iolab %.0f' % (name, k, fb / fo, ib / io))
        if not timed and rel(fb, ib) > tol:
            diffs.append('%s %s bytes: fio %d, iolab %d' % (name, k, fb, ib))
n = ' (%d notes)' % notes if notes else ''
if diffs and not notes:
    n = ' (silent: no iolab note)'
print(('DIFFERS: ' + '; '.join(diffs[:2]) + n) if diffs else 'SAME' + n)
EOF
)
  printf '%-42s %s\n' "$b" "$verdict"
  v=${verdict%%:*}; v=${v%% *}
  N[$v]=$((${N[$v]:-0} + 1))
  case $verdict in *"(silent:"*) N[SILENT]=$((${N[SILENT]:-0} + 1)) ;; esac
done
hw=$(( ${N[SAME]:-0} + ${N[DIFFERS]:-0} + ${N[REFUSED]:-0} + ${N[FAILED]:-0} + ${N[FIO-FAILED]:-0} ))
echo
echo "files: $((hw + ${N[SPECIAL]:-0})); special hardware: ${N[SPECIAL]:-0}; the rest: $hw"
echo "SAME ${N[SAME]:-0}, DIFFERS ${N[DIFFERS]:-0} (silently: ${N[SILENT]:-0}), REFUSED ${N[REFUSED]:-0}, FAILED ${N[FAILED]:-0}, FIO-FAILED ${N[FIO-FAILED]:-0}"
echo "ran with fio's semantics: ${N[SAME]:-0} of $hw (target: 9 in 10); of the $(( hw - ${N[FIO-FAILED]:-0} )) that fio itself runs here: ${N[SAME]:-0}"
