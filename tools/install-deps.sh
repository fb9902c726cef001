#!/usr/bin/env bash
# Install everything a fresh Debian 12 machine lacks to build, boot and test
# this project.  Idempotent: packages already present are skipped.
set -euo pipefail

DEBS="qemu-system-x86 linux-image-amd64 linux-headers-amd64 busybox-static
      iperf3 iproute2 ethtool tcpdump bpftool kmod cpio xz-utils zstd
      python3 python3-pytest python3-scapy python3-matplotlib
      python3-pip python3-setuptools python3-tqdm python3-scipy
      build-essential bc flex bison libelf-dev libmnl-dev pkg-config
      linux-source-6.1 iputils-ping procps valgrind clang libclang-rt-14-dev
      llvm"

missing=""
for p in $DEBS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done

top=$(cd "$(dirname "$0")/.." && pwd)
src=$(ls -d /usr/src/linux-source-6.1 2>/dev/null || true)

# Nothing to do needs no root: make test works as any user once set up.
# The checks run from /, where python cannot find this checkout's satnet
# in its working directory instead of the installed one.
if [ -z "$missing" ] && [ -n "$src" ] &&
	(cd / && /usr/bin/python3 -c 'import satnet.paths as p, sys
sys.exit(p.TOP != sys.argv[1])' "$top") 2>/dev/null; then
	echo "install-deps: ok (nothing missing)"
	exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: must run as root to install:${missing:- the satnet command or linux-source}; try: sudo $0" >&2
	exit 1
fi

if [ -n "$missing" ]; then
	echo "install-deps: installing$missing"
	# apt in a shared /tmp was seen to lose files mid-install.
	export TMPDIR=/var/tmp/satnet-apt
	mkdir -p "$TMPDIR"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing
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
