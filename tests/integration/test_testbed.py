# SPDX-License-Identifier: GPL-2.0
"""The foundation's integration tests: topology, self-check, error model,
reordering model, congestion-control selection, the time in each
congestion-avoidance state against the kernel's counters."""

import json
import os
import re
import socket
import sys
import time

import pytest

from satnet import castate, measure, record
from satnet.experiment import load_experiment
from satnet.host import CHILD_EHASH, NETNS_EHASH, run
from satnet.paths import TOP
from satnet.runner import load_cc, measure_point
from satnet.scenario import load_profile, load_scenario
from satnet.topo import Topology

pytestmark = pytest.mark.statistical

UDP = measure.BLAST
CA_RESULTS = os.path.join(TOP, "build", "results", "castate.jsonl")


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
        # Their own table of established sockets (positive: not the
        # host's), which the samplers' dumps walk; the host's setting back.
        for ns in topo.all_ns():
            assert topo.read_sysctls(ns, ["net.ipv4.tcp_ehash_entries"]) \
                == {"net.ipv4.tcp_ehash_entries": str(NETNS_EHASH)}
    with open(CHILD_EHASH) as f:
        assert f.read().strip() == "0"
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
        left = measure.queued(topo)
    off = res["rtt_ms"] - res["rtt_expected_ms"]
    assert -0.02 * res["rtt_expected_ms"] <= off <= \
        0.02 * res["rtt_expected_ms"] + res["rtt_slack_ms"]
    # The rate test fills the queue; the flows must not start behind it.
    assert left == 0 and res["drain_s"] >= sc.base_rtt_ms() / 1000


def test_self_check_fails_loudly_on_a_wrong_path():
    sc = load_scenario("mild-reorder")
    with Topology(sc, load_profile("linux")) as topo:
        topo.tc_batch(topo.r2, ["qdisc change dev b root netem delay 80ms "
                                "limit 2000"])
        with pytest.raises(measure.SelfCheckError, match="RTT"):
            measure.self_check(topo)


@pytest.mark.parametrize("scale", [0.85, 1.15])
def test_self_check_fails_loudly_on_a_wrong_rate(scale):
    """The shortest rate test (0.5 s) still tells a bottleneck 15 % off
    its rate; the RTT is right."""
    sc = load_scenario("mild-reorder")
    rate = int(sc.rate_bps * scale)
    with Topology(sc, load_profile("linux")) as topo:
        topo.tc_batch(topo.r1, ["class change dev b parent 1: classid 1:1 "
                                "htb rate %dbit ceil %dbit quantum 1514" %
                                (rate, rate)])
        with pytest.raises(measure.SelfCheckError, match="bottleneck rate"):
            measure.self_check(topo)


def backlog_drops():
    """Packets the kernel dropped at a full input backlog, all CPUs."""
    with open("/proc/net/softnet_stat") as f:
        return sum(int(line.split()[1], 16) for line in f)


def test_one_percent_packet_errors_give_one_percent_loss():
    """Loss is counted against the packets the error stage (R2's egress)
    sent, and arrivals by the receiver's kernel (UDP to a closed port:
    UdpNoPorts, and any drop at a full input backlog), so neither
    congestion upstream nor a slow receiving process can pass for bit
    errors.  The bound is 5 standard deviations of a Bernoulli 1 % over
    the packets sent (seen: 0.92 %, 1.08 %, 1.14 %, 1.34 % of 10 566):
    a stage at twice its rate fails it (2 % is 10 SD out), one at a
    third of it too; at half its rate about half the runs fail."""
    sc = load_scenario("mild-reorder", {
        "bottleneck.rate_mbit": 10, "bottleneck.limit": 1000,
        "forward.delay_ms": 10, "ack.delay_ms": 10, "forward.per": 0.01,
        "forward.reorder.fraction": 0})
    with Topology(sc, load_profile("linux")) as topo:
        backlog = backlog_drops()
        topo.ex(topo.snd[0], [sys.executable, UDP, "send",
                              topo.rcv_addr(0), "8e6", "16"], timeout=60)
        time.sleep(1)
        got = measure.nstat(topo, topo.rcv[0])["UdpNoPorts"]
        backlog = backlog_drops() - backlog
        stage = topo.ex(topo.r2, ["tc", "-s", "qdisc", "show", "dev", "r0"])
    sent = int(re.search(r"Sent \d+ bytes (\d+) pkt", stage.stdout).group(1))
    assert sent > 10000, stage.stdout
    loss = 1 - (got + backlog) / sent
    sd = (0.01 * 0.99 / sent) ** 0.5
    assert abs(loss - 0.01) <= 5 * sd, \
        "measured loss %.4f of %d (backlog drops %d), 1 %% +- %.4f" % (
            loss, sent, backlog, 5 * sd)
    print("PER 1 %%: loss %.4f of %d, backlog drops %d" % (loss, sent,
                                                         backlog))


def sender_skbs_and_segments(over):
    """The IP packets (IpOutRequests: one a GSO packet) and the TCP
    segments (TcpOutSegs + TcpRetransSegs) pair 0's sender sent in 10 s
    of cubic on seed 001's path without reordering, and its access
    link's netem drops."""
    sc = load_scenario("mild-reorder", {
        "forward.reorder.fraction": 0, "forward.delay_ms": 10,
        "ack.delay_ms": 10, **over})
    with Topology(sc, load_profile("linux")) as topo:
        measure.iperf3_run(topo, "cubic", 10, bottleneck=False)
        c = measure.nstat(topo, topo.snd[0])
        qd = json.loads(topo.ex(topo.snd[0], [
            "tc", "-s", "-j", "qdisc", "show", "dev", "eth0"]).stdout)
    drops = sum(q.get("drops", 0) for q in qd if q["kind"] == "netem")
    return (c["IpOutRequests"], c["TcpOutSegs"] + c["TcpRetransSegs"],
            drops)


def test_a_sender_side_drop_takes_one_segment():
    """Without an epdn gateway, bottleneck.gateway_loss drops on the
    senders' access links, and netem drops a GSO packet whole.  TCP
    builds GSO packets of two segments or more whatever the offloads
    (seen: 0.64 IP packets a segment with the loss on the path), so the
    senders that drop are held to one segment a packet: as many IP
    packets as segments (the bound leaves room for anything else the
    namespace sends; none seen)."""
    gso, whole, drops = sender_skbs_and_segments({})
    assert gso < 0.8 * whole and drops == 0, (gso, whole)
    skbs, segs, drops = sender_skbs_and_segments({
        "bottleneck.gateway_loss": "congestion", "forward.loss": 0.02})
    assert drops >= 30
    assert segs <= skbs <= segs + 20, (skbs, segs)
    print("IP packets a segment: %.2f with the loss on the path, %.2f "
          "with 2 %% on the sender's link (%d drops)" %
          (gso / whole, skbs / segs, drops))


def test_reordering_model_shows_in_sender_counters():
    sc = load_scenario("mild-reorder", {"forward.reorder.fraction": 0.05})
    with Topology(sc, load_profile("linux")) as topo:
        measure.iperf3_run(topo, "cubic", 8)
        c = measure.nstat(topo, topo.snd[0])
    seen = c["TcpExtTCPSACKReorder"] + c["TcpExtTCPDSACKRecv"] + \
        c["TcpExtTCPTSReorder"]
    assert seen > 0, c


@pytest.mark.parametrize("per", [0, 0.01])
def test_time_in_ca_states_follows_loss(per):
    """The data flow's time in each congestion-avoidance state, sampled
    by sock_diag every 50 ms, as the runner stores it (flows[].ca, and
    the summary's ca_share), against the kernel's own count of
    recoveries.  Clean: a queue longer than reno's
    window can grow to in 10 s, so Open dominates and no recovery
    starts.  1 % packet errors on a 100 ms RTT: Recovery takes a share,
    and the entries seen are at most the recoveries the kernel counted
    and, as each lasts about an RTT, at least half of them.  The
    sampling achieved goes to build/results/castate.jsonl."""
    sc = load_scenario("mild-reorder", {"bottleneck.limit": 4000,
                                        "forward.per": per,
                                        "forward.reorder.fraction": 0})
    exp = load_experiment(os.path.join(TOP, "tests", "fixtures",
                                       "experiments", "fx-sweep.toml"))
    pt = exp.points("full", reps=1, variants=["reno"], duration=10)[0]
    with Topology(sc, load_profile("linux")) as topo:
        body = measure_point(pt, topo, {})
    f = body["flows"][0]
    summary = record.summarize(body, sc.rate_bps, 1448)
    assert summary["variants"]["reno"]["ca_share"] == \
        pytest.approx(f["ca"]["share"])
    ca, c = dict(f["ca"]), f["counters"]
    ca.pop("transitions", None)
    rec = c.get("TcpExtTCPSackRecovery", 0) + \
        c.get("TcpExtTCPRenoRecovery", 0)
    os.makedirs(os.path.dirname(CA_RESULTS), exist_ok=True)
    with open(CA_RESULTS, "a") as f:
        f.write(json.dumps({"per": per, "kernel": os.uname().release,
                            "recoveries": rec,
                            "timeouts": c.get("TcpExtTCPTimeouts", 0),
                            **ca}) +
                "\n")
    print("per %g: %s; %d samples over %.1f s (%.1f/s, longest gap "
          "%.0f ms), sampler CPU %.2f s; entries %s, kernel recoveries %d" %
          (per, castate.fmt_shares(ca.get("share", {})), ca["samples"],
           ca.get("span_s", 0), ca["samples"] / (ca.get("span_s") or 1),
           1000 * ca.get("max_gap_s", 0), ca["cpu_s"], ca.get("entries"),
           rec))
    assert ca["errors"] == 0, ca.get("error")
    assert ca["span_s"] > 8 and ca["interval_s"] < 0.2, ca
    assert abs(sum(ca["share"].values()) - 1) < 1e-3, ca["share"]
    if per:
        assert ca["share"]["recovery"] > 0.02, ca
        assert rec / 2 <= ca["entries"]["recovery"] <= rec, (ca, rec)
    else:
        assert rec == 0, "the clean path lost packets: %s" % c
        assert ca["share"]["open"] > 0.95 and \
            ca["entries"] == {"recovery": 0, "loss": 0}, ca


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
