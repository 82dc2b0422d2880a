#!/usr/bin/env bash
# Installs what iolab and its test suite need on Debian/Ubuntu (run as root or with sudo).
set -euo pipefail
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# Build: a C compiler, pkg-config, libpq and its headers (libpq-dev: `iolab db`'s PostgreSQL
# client links libpq through pq-sys). Tests: fio and sysbench to compare with, sysstat (iostat),
# fuse3 for the fault-injection filesystem, e2fsprogs/xfsprogs/fdisk for loop-device tests,
# PostgreSQL and MariaDB servers for `iolab db` tests (started privately by scripts/dbservers.sh),
# Chromium to open the HTML reports in the report tests, DejaVu fonts for PNG charts, jq for
# bench/layouts.sh, Bonnie++ (bon_csv2txt, bon_csv2html read `suite bonnie` CSV in tests/suites.rs).
# The MPI build (`--features mpi`, docs/distributed.md): Open MPI (mpirun, the library and its
# headers) and libclang for the bindings rsmpi generates; iproute2 for the network-namespace
# hosts of tests/mpi.rs.
# `--device` safety (docs/safety.md, section 2): libblkid-dev (the headers and pkg-config file
# libblkid-rs-sys binds to at build time; libclang-dev above runs its bindgen). Tests: a format
# each for libblkid to find (tests/signatures.rs, tests/root.rs): dosfstools (mkfs.vfat),
# btrfs-progs, f2fs-tools, squashfs-tools (mksquashfs), genisoimage (iso9660), cryptsetup-bin
# (LUKS); mkfs.minix, mkfs.bfs and mkfs.cramfs are in util-linux on Debian 12 (dpkg -S), and
# util-linux-extra is listed for the releases that moved tools there.
# The Debian package (scripts/package.sh, tests/package.rs): dpkg-dev comes with build-essential;
# man-db reads the installed manual page.
# blktrace: blkparse reads and merges the blktrace binaries `run --replay` reads (tests/replay.rs).
# prometheus: a private server scrapes `--metrics-listen` in tests/prometheus.rs (its own config
# and storage in a temp dir, on a free port; the packaged service plays no part).
$SUDO apt-get install -y -qq build-essential pkg-config fio sysbench sysstat fuse3 libfuse3-dev \
  e2fsprogs xfsprogs fdisk util-linux postgresql mariadb-server chromium fonts-dejavu-core jq \
  bonnie++ openmpi-bin libopenmpi-dev libclang-dev iproute2 libpq-dev \
  libblkid-dev util-linux-extra dosfstools btrfs-progs f2fs-tools squashfs-tools genisoimage \
  cryptsetup-bin prometheus man-db blktrace >/dev/null
# fio's own job files (its examples/ and t/jobs/) for tests/fio_regression.rs and
# bench/fio-examples.sh: the source of the fio package, in /var/tmp/fiosrc (a deb-src entry is
# added for the download and removed after).
if ! ls -d /var/tmp/fiosrc/fio-*/t/jobs >/dev/null 2>&1; then
  # the system's own deb entries as deb-src (deb822 .sources keep their Signed-By), else one line
  if [ -e /etc/apt/sources.list.d/debian.sources ]; then
    list=/etc/apt/sources.list.d/iolab-fio-src.sources
    sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources | $SUDO tee "$list" >/dev/null
  else
    list=/etc/apt/sources.list.d/iolab-fio-src.list
    grep -h '^deb ' /etc/apt/sources.list | sed 's/^deb /deb-src /' | $SUDO tee "$list" >/dev/null
  fi
  mkdir -p /var/tmp/fiosrc
  ($SUDO apt-get update -qq && cd /var/tmp/fiosrc && apt-get source -qq --download-only fio) \
    >/dev/null || echo "setup: could not download fio's source (tests/fio_regression.rs needs it)" >&2
  $SUDO rm -f "$list"
  $SUDO apt-get update -qq
  for t in /var/tmp/fiosrc/fio_*.orig.tar.gz /var/tmp/fiosrc/fio_*.orig.tar.xz; do
    if [ -e "$t" ]; then tar -xf "$t" -C /var/tmp/fiosrc; fi
  done
fi
if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: Rust is not installed. Install it with rustup (https://rustup.rs), then run this again." >&2
  exit 1
fi
echo "setup: done ($(cargo --version))"
