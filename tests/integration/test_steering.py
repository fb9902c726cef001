# SPDX-License-Identifier: GPL-2.0
"""A path that models no reordering keeps each flow in order, on a guest
of several CPUs (the real clock's; under the virtual clock there is one).

Run on the real clock (`make test-real`): with one CPU it can pass
without steering, so it proves nothing under the virtual clock."""

from satnet import measure
from satnet.scenario import load_profile, load_scenario
from satnet.topo import Topology, steering_mask

# What only reordering raises on a path that loses nothing: an ACK older
# than one already taken (by more than the timestamps' 1 ms tick), a
# never-retransmitted segment SACKed below the highest SACKed one, and
# the timestamps' own detection.
REORDER = ("TcpExtPAWSEstab", "TcpExtTCPSACKReorder", "TcpExtTCPTSReorder")


def mask_value(text):
    return int(text.replace(",", "") or "0", 16)


# Socket buffers that hold at most about 100 segments in flight: five
# times the path's BDP, a tenth of its queue, so nothing is ever lost.
BUFFERS = {"net.ipv4.tcp_wmem": "4096 131072 262144",
           "net.ipv4.tcp_rmem": "4096 131072 262144"}


def test_a_path_without_reordering_keeps_each_flows_order():
    """Every veth steers by flow hash over all CPUs, and a 20 s cubic
    flow over a path with no reordering, no errors and a queue it cannot
    fill (its window capped by the socket buffers) sees none.  Without
    the steering, on the 2-vCPU real-clock guest, each of nine 20 s
    flows was reordered: 2-42 ACKs dropped by PAWS, 1-191 SACK
    reorderings, the most with the host busy (2026-11-27)."""
    sc = load_scenario("mild-reorder", {"bottleneck.rate_mbit": 10,
                                        "bottleneck.limit": 1000,
                                        "forward.delay_ms": 10,
                                        "ack.delay_ms": 10,
                                        "forward.reorder.fraction": 0,
                                        "sysctl": BUFFERS})
    want = mask_value(steering_mask())
    with Topology(sc, load_profile("linux")) as topo:
        for ns in topo.all_ns():
            masks = topo.read_rps(ns)
            assert {d: mask_value(m) for d, m in masks.items()} == \
                dict.fromkeys(masks, want), (ns, masks)
        before = measure.nstat(topo, topo.snd[0])
        measure.iperf3_run(topo, "cubic", 20)
        after = measure.nstat(topo, topo.snd[0])
    seen = {k: after.get(k, 0) - before.get(k, 0) for k in REORDER}
    recoveries = after["TcpExtTCPSackRecovery"] - \
        before["TcpExtTCPSackRecovery"]
    assert seen == dict.fromkeys(REORDER, 0), seen
    assert recoveries == 0, "%d recoveries: the window was not capped" \
        % recoveries
