# SPDX-License-Identifier: GPL-2.0
"""The foundation's integration tests: topology, self-check, error model,
reordering model, congestion-control selection."""

import os
import re
import socket
import sys
import time

import pytest

from satnet import measure
from satnet.runner import load_cc
from satnet.scenario import load_profile, load_scenario
from satnet.topo import Topology, run

UDP = measure.BLAST


def netns_list():
    return run(["ip", "netns", "list"]).stdout


def test_topology_comes_up_and_tears_down_cleanly():
    sc = load_scenario("mild-reorder", {"run.pairs": 2})
    with Topology(sc, load_profile("linux")) as topo:
        names = netns_list()
        for ns in topo.all_ns():
            assert ns in names
        for i in range(2):
            assert measure.ping_rtt(topo, i, count=3) > 100
        off = topo.ex(topo.r1, ["ethtool", "-k", "b"]).stdout
        for feat in ("tcp-segmentation-offload: off",
                     "generic-segmentation-offload: off",
                     "generic-receive-offload: off"):
            assert feat in off
    assert topo.pfx not in netns_list()


def test_teardown_happens_when_setup_fails():
    sc = load_scenario("mild-reorder", {"bottleneck.qdisc": "red",
                                        "bottleneck.red": {"min": 50,
                                                           "max": 10}})
    topo = Topology(sc, load_profile("linux"))
    with pytest.raises(Exception):
        with topo:
            pass
    assert topo.pfx not in netns_list()


@pytest.mark.parametrize("name", ["geo", "leo-multipath", "leo-ge",
                                  "leo-starlink"])
def test_self_check_passes(name):
    """leo-ge loses packets in bursts and leo-starlink's schedule moves its
    path once the flows start: the check holds on their base path."""
    sc = load_scenario(name)
    with Topology(sc, load_profile(sc.profile)) as topo:
        res = measure.self_check(topo)
    assert abs(res["rtt_ms"] - res["rtt_expected_ms"]) <= \
        0.02 * res["rtt_expected_ms"]


def test_self_check_fails_loudly_on_a_wrong_path():
    sc = load_scenario("mild-reorder")
    with Topology(sc, load_profile("linux")) as topo:
        topo.tc_batch(topo.r2, ["qdisc change dev b root netem delay 80ms "
                                "limit 2000"])
        with pytest.raises(measure.SelfCheckError, match="RTT"):
            measure.self_check(topo)


def test_one_percent_packet_errors_give_one_percent_loss():
    """Loss is counted against the packets the error stage (R2's egress)
    sent, and arrivals by the receiver's kernel (UDP to a closed port:
    UdpNoPorts), so neither congestion upstream nor a slow receiving
    process can pass for bit errors."""
    sc = load_scenario("mild-reorder", {
        "bottleneck.rate_mbit": 10, "bottleneck.limit": 1000,
        "forward.delay_ms": 10, "ack.delay_ms": 10, "forward.per": 0.01,
        "forward.reorder.fraction": 0})
    with Topology(sc, load_profile("linux")) as topo:
        topo.ex(topo.snd[0], [sys.executable, UDP, "send",
                              topo.rcv_addr(0), "8e6", "16"], timeout=60)
        time.sleep(1)
        got = measure.nstat(topo, topo.rcv[0])["UdpNoPorts"]
        stage = topo.ex(topo.r2, ["tc", "-s", "qdisc", "show", "dev", "r0"])
    sent = int(re.search(r"Sent \d+ bytes (\d+) pkt", stage.stdout).group(1))
    assert sent > 10000, stage.stdout
    loss = 1 - got / sent
    assert 0.007 <= loss <= 0.013, "measured loss %.4f of %d" % (loss, sent)


def test_reordering_model_shows_in_sender_counters():
    sc = load_scenario("mild-reorder", {"forward.reorder.fraction": 0.05})
    with Topology(sc, load_profile("linux")) as topo:
        measure.iperf3_run(topo, "cubic", 8)
        c = measure.nstat(topo, topo.snd[0])
    seen = c["TcpExtTCPSACKReorder"] + c["TcpExtTCPDSACKRecv"] + \
        c["TcpExtTCPTSReorder"]
    assert seen > 0, c


def builtin_algorithms():
    """reno and cubic are always there; the rest are the kernel's modules,
    loadable or (in a kernel of our own) built in."""
    d = "/lib/modules/%s" % os.uname().release
    names = []
    for root, _, files in os.walk(d + "/kernel/net/ipv4"):
        names += files
    try:
        with open(d + "/modules.builtin") as f:
            names += [ln.strip() for ln in f
                      if ln.startswith("kernel/net/ipv4/")]
    except FileNotFoundError:
        pass
    mods = {os.path.basename(n)[4:-3] for n in names
            if os.path.basename(n).startswith("tcp_") and n.endswith(".ko")
            and not n.endswith("tcp_diag.ko")}
    return ["reno", "cubic"] + sorted(mods - {"reno", "cubic"})


BUILTIN = builtin_algorithms()


@pytest.mark.parametrize("cc", BUILTIN)
def test_every_builtin_algorithm_is_selectable(cc):
    load_cc(cc)
    avail = open("/proc/sys/net/ipv4/tcp_available_congestion_control").read()
    assert cc in avail.split()
    s = socket.socket()
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
    got = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16)
    s.close()
    assert got.rstrip(b"\0").decode() == cc
