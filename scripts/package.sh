#!/usr/bin/env bash
# Builds iolab's Debian package: the binary in /usr/bin, a manual page for iolab and each
# subcommand (`iolab manpages`, gzipped) in /usr/share/man/man1, completions for bash, zsh and fish
# (`iolab completions`) where each shell looks for them, README and docs in /usr/share/doc/iolab.
# Its dependencies are the shared libraries the binary links, as dpkg-shlibdeps names them.
#
#   bash scripts/package.sh                       # cargo build --release, then the package in target/debian/
#   bash scripts/package.sh --binary FILE --out DIR   # package a binary already built (the tests do)
#
# Needs dpkg-dev (dpkg-deb, dpkg-shlibdeps). Prints the package's path.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="" out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) bin=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "package.sh: unknown option $1 (use --binary FILE, --out DIR)" >&2; exit 2 ;;
  esac
done
if [ -z "$bin" ]; then
  cargo build --release --quiet
  bin="${CARGO_TARGET_DIR:-target}/release/iolab"
fi
out=${out:-${CARGO_TARGET_DIR:-target}/debian}
[ -x "$bin" ] || { echo "package.sh: --binary $bin: not an executable" >&2; exit 2; }
for t in dpkg-deb dpkg-shlibdeps dpkg; do
  command -v "$t" >/dev/null || { echo "package.sh: $t is not installed (apt-get install dpkg-dev)" >&2; exit 2; }
done
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
arch=$(dpkg --print-architecture)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root="$work/root"
install -d "$root/DEBIAN" "$root/usr/bin" "$root/usr/share/man/man1" \
  "$root/usr/share/bash-completion/completions" "$root/usr/share/zsh/vendor-completions" \
  "$root/usr/share/fish/vendor_completions.d" "$root/usr/share/doc/iolab"
install -m 0755 "$bin" "$root/usr/bin/iolab"
strip --strip-debug "$root/usr/bin/iolab"
"$root/usr/bin/iolab" manpages "$work/man" >/dev/null 2>&1 || {
  mkdir -p "$work/man" && "$root/usr/bin/iolab" manpages "$work/man" >/dev/null
}
for p in "$work"/man/*.1; do
  gzip -9n <"$p" >"$root/usr/share/man/man1/$(basename "$p").gz"
done
"$root/usr/bin/iolab" completions bash >"$root/usr/share/bash-completion/completions/iolab"
"$root/usr/bin/iolab" completions zsh >"$root/usr/share/zsh/vendor-completions/_iolab"
"$root/usr/bin/iolab" completions fish >"$root/usr/share/fish/vendor_completions.d/iolab.fish"
install -m 0644 README.md ARCHITECTURE.md "$root/usr/share/doc/iolab/"
cp -r docs "$root/usr/share/doc/iolab/docs"
# the libraries the binary links, as Debian names them (dpkg-shlibdeps reads debian/control)
mkdir -p "$work/debian"
printf 'Source: iolab\n\nPackage: iolab\nArchitecture: any\n' >"$work/debian/control"
depends=$(cd "$work" && dpkg-shlibdeps -O -e"root/usr/bin/iolab" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
commit=$("$root/usr/bin/iolab" --version | sed -n 's/.*(commit \(.*\))/\1/p')
cat >"$root/DEBIAN/control" <<EOF
Package: iolab
Version: $version
Architecture: $arch
Maintainer: iolab developers <iolab@localhost>
Depends: $depends
Suggests: fio, sysstat, sysbench, bonnie++
Section: admin
Priority: optional
Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)
Description: storage I/O lab for people who run databases
 How fast is this storage for a database, why, what changed and where it stops
 scaling: sysbench-fileio style file sets, fio job files, IOZone and Bonnie++
 suites and database workloads, with the environment, the device's own iostat
 figures, a results store, comparisons, experiments and HTML reports.
 Built from commit $commit.
EOF
(cd "$root" && find usr -type f -print0 | sort -z | xargs -0 md5sum >DEBIAN/md5sums)
find "$root" -type d -exec chmod 0755 {} +
find "$root/usr/share" -type f -exec chmod 0644 {} +
mkdir -p "$out"
deb="$out/iolab_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zgzip --build "$root" "$deb" >/dev/null
echo "$deb"
