#!/usr/bin/env bash
# Install everything a fresh Debian 12 machine lacks to build, boot and test
# this project.  Idempotent: packages already present are skipped.
#
# Besides Debian 12's own kernel (6.1, what make test boots first), the
# modules are built and tested on Debian 13's, 6.12 (make modules-6.12,
# tools/vm-run --kernel 6.12): Debian 12 ships it as linux-image-6.12-amd64
# in bookworm-security; where the configured sources lack it (an older
# mirror or snapshot), it comes from bookworm-backports, added for that,
# and only the 6.12 image and headers (and what they need) come from there.
set -euo pipefail

DEBS="qemu-system-x86 linux-image-amd64 linux-headers-amd64 busybox-static
      iperf3 iproute2 ethtool tcpdump bpftool kmod cpio xz-utils zstd
      python3 python3-pytest python3-scapy python3-matplotlib
      python3-pip python3-setuptools python3-tqdm python3-scipy
      build-essential bc flex bison libelf-dev libmnl-dev pkg-config
      linux-source-6.1 iputils-ping procps valgrind clang libclang-rt-14-dev
      llvm libbpf-dev"

missing=""
for p in $DEBS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done

top=$(cd "$(dirname "$0")/.." && pwd)
src=$(ls -d /usr/src/linux-source-6.1 2>/dev/null || true)
k612=""
ls /boot/vmlinuz-6.12.*-amd64 /usr/src/linux-headers-6.12.*-amd64/Makefile \
	>/dev/null 2>&1 || k612=" linux-image-6.12 linux-headers-6.12"

# Nothing to do needs no root: make test works as any user once set up.
# The checks run from /, where python cannot find this checkout's satnet
# in its working directory instead of the installed one.
if [ -z "$missing$k612" ] && [ -n "$src" ] &&
	(cd / && /usr/bin/python3 -c 'import satnet.paths as p, sys
sys.exit(p.TOP != sys.argv[1])' "$top") 2>/dev/null; then
	echo "install-deps: ok (nothing missing)"
	exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
	what="$missing$k612"
	echo "install-deps: must run as root to install:${what:- the satnet command or linux-source}; try: sudo $0" >&2
	exit 1
fi

# apt in a shared /tmp was seen to lose files mid-install.
export TMPDIR=/var/tmp/satnet-apt
export DEBIAN_FRONTEND=noninteractive
mkdir -p "$TMPDIR"

if [ -n "$missing" ]; then
	echo "install-deps: installing$missing"
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing
fi

# A deb822 stanza for bookworm-backports with the URIs and key of the
# configured bookworm suite (Debian's own when there is none to copy).
add_backports() {
	local list=/etc/apt/sources.list.d/debian.sources
	local uris="" key=""

	grep -rqs 'bookworm-backports' /etc/apt/sources.list \
		/etc/apt/sources.list.d/ && return 0
	if [ -r "$list" ]; then
		uris=$(awk -v RS= '/Suites:[^\n]*bookworm( |\n|$)/' "$list" |
			sed -n 's/^URIs: *//p' | head -n 1)
		key=$(awk -v RS= '/Suites:[^\n]*bookworm( |\n|$)/' "$list" |
			sed -n 's/^Signed-By: *//p' | head -n 1)
	fi
	cat > /etc/apt/sources.list.d/bookworm-backports.sources <<-EOF
		Types: deb
		URIs: ${uris:-http://deb.debian.org/debian}
		Suites: bookworm-backports
		Components: main
		Signed-By: ${key:-/usr/share/keyrings/debian-archive-keyring.gpg}
	EOF
	apt-get update -qq
}

# The 6.12 image and headers: the meta-packages when the configured sources
# have them, otherwise the newest generic 6.12 of bookworm-backports.
install_612() {
	local policy rel=""

	apt-get update -qq
	# Not piped into grep -q: with pipefail, apt-cache's SIGPIPE fails it.
	policy=$(apt-cache policy linux-image-6.12-amd64)
	if [[ $policy == *"Candidate: "[0-9]* ]]; then
		apt-get install -y -qq --no-install-recommends \
			linux-image-6.12-amd64 linux-headers-6.12-amd64
		return
	fi
	add_backports
	for rel in $(apt-cache search --names-only '^linux-image-6\.12\.' |
		sed -n 's/^linux-image-\(6\.12\.[0-9]*+[a-z0-9.]*-amd64\) .*/\1/p' |
		sort -rV); do
		[[ $(apt-cache madison "linux-image-$rel") == *bookworm-backports* ]] &&
			break
		rel=""
	done
	[ -n "$rel" ] || { echo "install-deps: no 6.12 kernel in bookworm-backports" >&2; exit 1; }
	# pkg/suite, not -t bookworm-backports: -t would also upgrade the
	# installed linux-image-amd64, linux-headers-amd64 (Debian 12's 6.1
	# meta-packages), bpftool and more to backports' versions.
	apt-get install -y -qq --no-install-recommends \
		"linux-image-$rel/bookworm-backports" \
		"linux-headers-$rel/bookworm-backports"
}

if [ -n "$k612" ]; then
	echo "install-deps: installing$k612"
	install_612
fi

# Kernel source for checkpatch.pl and the reference qdiscs/congestion modules.
if [ -z "$src" ]; then
	tarball=$(ls /usr/src/linux-source-6.1.tar.* 2>/dev/null | head -n 1)
	[ -n "$tarball" ] && tar -C /usr/src -xf "$tarball"
fi

# The harness uses the Debian python3 (pytest, scapy, matplotlib above).
/usr/bin/python3 -c 'import pytest, scapy, matplotlib, tqdm, scipy' ||
	{ echo "install-deps: python modules missing after install" >&2; exit 1; }

# The satnet command, editable from this checkout (a run needs the modules,
# the tc plugin and tools/vm-run beside it), for Debian's python3: the VM
# shares the host's root filesystem, so /usr/local/bin/satnet works there
# too.  Reinstalled whenever it points at another checkout.
/usr/bin/python3 -m pip install -q --no-deps --no-build-isolation \
	--break-system-packages --root-user-action=ignore -e "$top"
(cd / && /usr/bin/python3 -c 'import satnet.paths as p, sys
sys.exit(p.TOP != sys.argv[1])' "$top") ||
	{ echo "install-deps: satnet does not point at $top" >&2; exit 1; }
echo "install-deps: ok"
