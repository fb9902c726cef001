#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Soak the project's modules under churn and faults, for a bounded time.

Usage, as root in a kernel that loads our modules (make soak runs it in
the VM on the debug kernel, with --require-debug):

    make all
    tools/vm-run --timeout 1500 -- tests/soak/run.py --minutes 2
    tests/soak/run.py --help

For --minutes, all at once:

churn   Short flows (python sockets, each with a random congestion control:
        rn, r, esack, cubic, reno or the namespace's default, some switched
        mid-flow) and a few long ones (rn, r, cubic, reno, switched every
        15 s) through the satnet dumbbell (satnet.topo.Topology, two
        pairs) with an epdn bottleneck small enough to drop, the RN-TCP
        receivers and EPDN origins on (net.rn.*) and R2 an EPDN router.
        Every flow's bytes are counted and CRC-32 checked at the far end.
        Meanwhile: tc qdisc change of the epdn qdiscs (limit, flows, idle,
        mode, corrupt, red, bytelimit; invalid ones must be refused and
        change nothing); writes of every writable parameter of our modules
        (invalid values refused); net.rn.* sysctls; the senders' default
        congestion control; pairs of namespaces created and deleted, with a
        veth, an epdn qdisc and the hooks on inside (every other pair
        deleted under traffic); tcp_esack unloaded and loaded again when no
        socket uses it, and rmmod refused while one does; rn_host unloaded
        with its hooks live and loaded again.
faults  netem loss, duplication, corruption and reordering in both
        satellite directions at once, in changing mixes; crafted frames
        (malformed IPv4, EPDN and other IP options, odd TCP headers and
        options, SYNs with odd TCP options, fuzzed ones) injected at R1's
        bottleneck towards a receiver; and, to a probe epdn qdisc on a
        dummy device, batches whose fate is known exactly.
memory  Debug kernel only: failslab fails atomic allocations of rn_host's
        flow cache (rn_flow) and of skbuff_head_cache, 2 % all along and
        25 % in bursts (6.1 fixes at boot which caches failslab may fail:
        tools/vm-run --kernel debug boots with slub_debug=A,rn_flow,
        skbuff_head_cache); and fail-nth: `tc qdisc change ... flows N`
        sent over raw netlink with the n-th allocation of the call failed,
        n = 1, 2, ... (each from the old table) until the call goes through
        without a fault, on the probe qdisc and on the bottleneck; after
        each, the change is whole or absent as the answer says, and the
        qdisc works and its counters add up.

Counters are checked along the way too (each namespace pair before it
goes, the probe every tenth batch, rn_host before each reload).  At the
end, with the traffic stopped, every epdn qdisc's counters must add
up (packets in, counted by a tc action in front of it = sent + dropped +
queued; drops = drops by cause; records made = live + released + aged +
evicted + flushed; sent between stamps + merges + untouched and that
plus ttl_updates), and every rn_host namespace's (segments = segments by
option class; flows created - live - freed between 0 and restarted);
no flow may lose or change a byte, the long flows must complete, the
console must stay clean, our modules must unload, and on the debug kernel
kmemleak must report no leak that names them.  DIR/soak.json holds the
figures and every check; a table is printed; the exit status is 1 when a
check failed.

The debug-only parts say "skipped: not in this kernel" where the kernel
lacks them; with --require-debug that is a failure instead.  The run ends
within --minutes plus a few (setup and the checks at most 6 more, the
teardown 4: hard bounds), and tears down what it made (namespaces,
qdiscs, fault settings, module parameters, the modules it loaded) even
when it fails.
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
# This checkout's satnet, and the tests' kit (packets, rtnetlink, console).
sys.path[:0] = [os.path.join(TOP, "testbed"), os.path.join(TOP, "tests")]
from soak import flows  # noqa: E402


def parse_args():
    p = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        epilog=__doc__[__doc__.index("For --minutes"):],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--minutes", type=float, default=10,
                   help="how long the churn and faults run (default 10)")
    p.add_argument("--seed", type=int, default=1,
                   help="seed of every random choice (default 1)")
    p.add_argument("--out", default=os.path.join(TOP, "build", "soak"),
                   help="where soak.json goes (default build/soak)")
    p.add_argument("--require-debug", action="store_true",
                   help="fail, rather than skip, where the kernel lacks "
                        "kmemleak, failslab or fail-nth (make soak)")
    return p.parse_args()


def main():
    if sys.argv[1:2] == ["--worker"]:
        flows.worker(sys.argv[2:])
        return 0
    args = parse_args()
    if os.geteuid() != 0:
        sys.exit("soak: must run as root, in a kernel that loads our "
                 "modules (tools/vm-run)")
    from soak.soak import Soak
    return Soak(args, os.path.abspath(__file__)).run()


if __name__ == "__main__":
    sys.exit(main())
