# SPDX-License-Identifier: GPL-2.0
"""In-VM tests of the RN-TCP sender (tcp_rn.ko, congestion control "rn").

   snd0 --- [R1] b =====epdn mode v2====> b [R2] r0 --- rcv0
   origin    EPDN router      ifb: epdn    netem: 50 ms,    rn.receiver=1
   (EPDN-TTL (records drops,  (EPDN-TTL    5 % delayed by   (sets the
    = TTL)    stamps them)     -1)         N(25 ms, 8 ms)   drop-negative bit)

The mild-reordering scenario of seed 001 §VII (scenarios/mild-reorder.toml)
with an EPDN bottleneck, a sender that originates the
EPDN option and an RN-TCP receiver (tcp_rn/rn_host.ko).  The testbed's R2
is a plain router, which breaks the EPDN-TTL proof, so the tests make it an
EPDN router: its egress to the receiver goes through an ifb with an epdn
qdisc that brings EPDN-TTL down with TTL (satnet.topo's epdn_domain).  The mild-reordering test runs
one flow at a time with 30 kB of htb burst at the bottleneck, so that the
emulated path, not the VM's CPU or late timers, is what limits the flows
(docs/rn-tcp-results.md); the drops-only and RN-TCP-ES tests run rn and
reno at the same time, each on its own topology, so that both see the same
CPU.  Measured numbers go to build/results/rn_e2e.jsonl and are printed
(pytest -s).
"""

import ctypes
import errno
import json
import os
import re
import socket
import threading
import time

import pytest

from conftest import parallel as run_parallel
from satnet import measure
from satnet.host import modprobe, run
from satnet.kmod import insmod, read_params, set_param
from satnet.paths import TOP, ko
from satnet.scenario import load_profile, load_scenario
from satnet.topo import Topology

RN_KO = ko("tcp_rn")
HOST_KO = ko("rn_host")
EPDN_KO = ko("sch_epdn")
RESULTS = os.path.join(TOP, "build", "results", "rn_e2e.jsonl")
TCP_CONGESTION = getattr(socket, "TCP_CONGESTION", 13)

REORDER_S = 15          # seconds per flow, mild reordering
NS2_S = 10              # seconds per flow, rn against ns-2's SACK
DROPS_S = 25            # seconds per flow, drops only
SHORT_S = 15
HTB_BURST = 30000       # bytes of htb burst at the bottleneck (burst_bytes)
UNDO_KEYS = ("TcpExtTCPFullUndo", "TcpExtTCPPartialUndo",
             "TcpExtTCPDSACKUndo", "TcpExtTCPLossUndo",
             "TcpExtTCPSpuriousRTOs", "TcpExtTCPSACKReorder")

SS_DCTCP = re.compile(r"dctcp:\(ce_state:(\d+),alpha:(\d+),ab_ecn:(\d+),"
                      r"ab_tot:(\d+)\)")


@pytest.fixture(scope="module", autouse=True)
def modules():
    for path in (RN_KO, HOST_KO, EPDN_KO):
        assert os.path.exists(path), "not built: run `make modules`"
    insmod(EPDN_KO)
    insmod(HOST_KO)
    insmod(RN_KO)
    modprobe("ifb", "act_mirred", "cls_u32")
    yield


def proc_counters(text):
    out = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) == 2 and f[1].lstrip("-").isdigit():
            out[f[0]] = int(f[1])
    return out


def parse_rn_ss(text):
    """The rn sockets of `ss -tinH`: get_info's fields and reordering."""
    rows = []
    for block in re.split(r"\n(?=\S)", text):
        m = SS_DCTCP.search(block)
        if not m or " rn " not in " %s " % block.replace("\n", " "):
            continue
        r = re.search(r"\breordering:(\d+)", block)
        c = re.search(r"\bcwnd:(\d+)", block)
        h = re.search(r"\bsacked:(\d+)", block)
        t = re.search(r"\bretrans:\d+/(\d+)", block)
        rows.append({"false_frs": int(m.group(1)),
                     "dupthresh": int(m.group(2)),
                     "kval": int(m.group(3)), "dn_acks": int(m.group(4)),
                     "reordering": int(r.group(1)) if r else 3,
                     "cwnd": int(c.group(1)) if c else None,
                     "sacked": int(h.group(1)) if h else 0,
                     "retrans_total": int(t.group(1)) if t else 0})
    return rows


def rn_rows(rows):
    """The ss series of iperf3_run (parse_ss's rows, from sock_diag) as
    parse_rn_ss gives them: the rows with rn's get_info fields."""
    return [{"false_frs": r["dctcp_ce_state"], "dupthresh": r["dctcp_alpha"],
             "kval": r["dctcp_ab_ecn"], "dn_acks": r["dctcp_ab_tot"],
             "reordering": r.get("reordering", 3), "cwnd": r.get("cwnd"),
             "sacked": r.get("sacked", 0),
             "retrans_total": r.get("retrans_total", 0)}
            for r in rows if "dctcp_ce_state" in r]


def flow(cc, overrides, profile="linux", duration=REORDER_S, port=5201,
         receiver=True, barrier=None, burst=0):
    """One iperf3 flow on a fresh topology; goodput and counters.  With a
    barrier, the flow starts when every flow's topology is up and the
    counters are read when every flow has ended.  burst: the shaper's
    bottleneck.burst_bytes (docs/testbed.md)."""
    sc = load_scenario("mild-reorder", {"bottleneck.qdisc": "epdn",
                                        "bottleneck.epdn": "mode v2",
                                        "bottleneck.burst_bytes": burst,
                                        **overrides})
    with Topology(sc, load_profile(profile)) as topo:
        if receiver:
            topo.epdn_domain()
        if barrier:
            barrier.wait()
        res, rows = measure.iperf3_run(topo, cc, duration, port=port)
        if barrier:
            barrier.wait()
        mib = measure.nstat(topo, topo.snd[0])
        rn = proc_counters(topo.ex(topo.snd[0],
                                   ["cat", "/proc/net/rn_sender"]).stdout)
        host = proc_counters(topo.ex(topo.rcv[0], ["cat", "/proc/net/rn_host"],
                                     check=False).stdout)
        sysctl = topo.read_sysctls(topo.snd[0], ["net.ipv4.tcp_recovery"])
    return {
        "cc": cc, "profile": profile, "overrides": overrides,
        "duration_s": duration, "receiver": receiver,
        "goodput_bps": res["end"]["sum_received"]["bytes"] * 8 / duration,
        "recoveries": mib.get("TcpExtTCPSackRecovery", 0),
        "fast_retrans_segs": mib.get("TcpExtTCPFastRetrans", 0),
        "retrans_segs": mib.get("TcpRetransSegs", 0),
        "dsacks": mib.get("TcpExtTCPDSACKRecv", 0),
        "timeouts": mib.get("TcpExtTCPTimeouts", 0),
        "burst": burst, "mib": {k: mib.get(k, 0) for k in UNDO_KEYS},
        "rn": rn, "rn_host": host, "ss": rn_rows(rows) if cc == "rn" else [],
        "tcp_recovery": sysctl["net.ipv4.tcp_recovery"],
    }


def parallel(*jobs):
    """Flows side by side on their own topologies (conftest.parallel)."""
    return run_parallel(flow, jobs)


def record(test, runs):
    meta = {"test": test, "kernel": os.uname().release,
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "params": read_params("tcp_rn")}
    os.makedirs(os.path.dirname(RESULTS), exist_ok=True)
    with open(RESULTS, "a") as f:
        for r in runs:
            ss = r["ss"]
            f.write(json.dumps({
                **meta, **{k: v for k, v in r.items() if k != "ss"},
                "ss_samples": len(ss),
                "ss_reordering_is_dupthresh": sum(
                    s["reordering"] == s["dupthresh"] for s in ss),
                "ss_dupthresh": sorted({s["dupthresh"] for s in ss}),
                "ss_kval": sorted({s["kval"] for s in ss})}) + "\n")
    for r in runs:
        print("%s %-4s %-6s goodput %.3f Mbit/s, fast retransmits "
              "(recoveries) %d, fast-retransmitted segments %d, DSACKs %d, "
              "RTOs %d" % (test, r["cc"], r["profile"],
                           r["goodput_bps"] / 1e6, r["recoveries"],
                           r["fast_retrans_segs"], r["dsacks"],
                           r["timeouts"]))


# ---- the module itself -------------------------------------------------

def _rn_pair(family, addr):
    """A connected pair over loopback; the client uses rn."""
    srv = socket.socket(family, socket.SOCK_STREAM)
    srv.bind((addr, 0))
    srv.listen(1)
    cli = socket.socket(family, socket.SOCK_STREAM)
    cli.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, b"rn")
    cli.connect(srv.getsockname()[:2])
    acc, _ = srv.accept()
    srv.close()
    return cli, acc


def _pump(cli, acc, nbytes):
    def sink():
        got = 0
        while got < nbytes:
            d = acc.recv(65536)
            if not d:
                break
            got += len(d)
    t = threading.Thread(target=sink)
    t.start()
    cli.sendall(b"x" * nbytes)
    t.join()


def _delete_module(name):
    """delete_module(2) without waiting: 0 or the errno."""
    libc = ctypes.CDLL(None, use_errno=True)
    nr = 176                                # x86_64 __NR_delete_module
    if libc.syscall(nr, name.encode(), os.O_NONBLOCK) == 0:
        return 0
    return ctypes.get_errno()


def _refcnt():
    return int(open("/sys/module/tcp_rn/refcnt").read())


def test_get_info_hook_and_rmmod_refused_while_in_use():
    """ss -ti shows rn's state; the hook reads ACKs over IPv4 and IPv6;
    rmmod is refused while a socket uses rn, and works after."""
    run(["ip", "link", "set", "lo", "up"])
    pairs = [_rn_pair(socket.AF_INET, "127.0.0.1"),
             _rn_pair(socket.AF_INET6, "::1")]
    try:
        for cli, acc in pairs:
            assert cli.getsockopt(socket.IPPROTO_TCP, TCP_CONGESTION,
                                  16).rstrip(b"\0") == b"rn"
            before = proc_counters(open("/proc/net/rn_sender").read())
            _pump(cli, acc, 16 << 20)
            after = proc_counters(open("/proc/net/rn_sender").read())
            assert after["acks_read"] > before["acks_read"] + 5, \
                cli.family
        ss = run(["ss", "-tinH", "state", "established"]).stdout
        rows = parse_rn_ss(ss)
        assert len(rows) == 2, ss
        for r in rows:
            # Loopback makes no hole and no bit: the rule is SACK's.  A
            # guest starved by the host can still fire a spurious timer;
            # only a retransmission can then be found false (D-SACK).
            assert r == {**r, "dupthresh": 3, "dn_acks": 0}, r
            if r["retrans_total"] == 0:
                assert r == {**r, "false_frs": 0, "kval": 0}, r
            assert r["false_frs"] <= r["retrans_total"], r
        assert _refcnt() >= 2
        # kmod's rmmod sees the reference count and refuses (EBUSY, "in
        # use"); the kernel itself refuses with EWOULDBLOCK.
        r = run(["rmmod", "tcp_rn"], check=False)
        assert r.returncode != 0 and "in use" in r.stderr, r.stderr
        assert _delete_module("tcp_rn") == errno.EWOULDBLOCK
        assert os.path.isdir("/sys/module/tcp_rn")
    finally:
        for cli, acc in pairs:
            cli.close()
            acc.close()
    deadline = time.monotonic() + 30
    while _refcnt() and time.monotonic() < deadline:
        time.sleep(0.2)
    r = run(["rmmod", "tcp_rn"], check=False)
    assert r.returncode == 0, r.stderr
    insmod(RN_KO)
    assert os.path.exists("/proc/net/rn_sender")


# ---- seed 001 §VII: mild reordering -------------------------------------

def serial(*jobs):
    """Run flows one after the other, each on its own topology, so that no
    two flows share the emulated CPU (docs/rn-tcp-results.md: two at once
    leave the VM 10 % idle and cost each flow 15 % of its goodput).
    Results in job order."""
    return [flow(**kw) for kw in jobs]


@pytest.mark.statistical
def test_mild_reordering_rn_vs_reno():
    """§VII-A at 5 % delayed packets, with the bottleneck's htb given
    30 kB of burst so that the path carries its 6 Mbit/s under emulation
    (bottleneck.burst_bytes).

    Against the seeds' own baseline, SACK as ns-2 runs it (reno with
    profile sack-ns2: dupthresh fixed at 3, no RACK, no D-SACK, no
    timestamps, so no undo of any kind), rn must record fewer fast
    retransmits and higher goodput, with margin: at least 2x (seed 001
    Fig. 2 reports about 5x at 5 %; measured 6-7x).  rn runs on the
    matching host without timestamps or D-SACK (profile sack-nots), so it
    has no undo either.  This is seed 001's claim (RN-TCP ahead of SACK),
    and it holds against that baseline only.  The two 10 s flows run side by
    side (to save time): that only takes CPU from rn, since SACK's
    collapsed flow is light, and the margin is wide.

    Against Linux's default reno (profile linux: RACK, D-SACK and
    timestamp undo, F-RTO), one flow at a time (serial(): rn, reno, rn,
    reno), summed over the two pairs, rn's goodput must not be more than
    15 % below reno's.  Higher goodput is not asserted, and neither are
    fewer fast retransmits: reno undoes its false fast retransmits within
    an RTT, most fast retransmits here come from the BDP drop-tail queue
    for both, and over 14 pairs the two are level within the noise (mean
    -1.3 %, standard deviation 9.5 %, single pairs from -15 to +13 %), so
    a 10 % bound on two pairs would fail about one run in 10
    (docs/rn-tcp-results.md).  The numbers are printed.

    ss shows rn's rule in force while a hole waits (sacked:N): the
    stack's reordering (tp->reordering) is get_info's dupthresh.  With no
    hole it is the stack's own value, kept out of the metrics cache."""
    ns2 = parallel(dict(cc="rn", overrides={}, profile="sack-nots",
                        duration=NS2_S, burst=HTB_BURST),
                   dict(cc="reno", overrides={}, profile="sack-ns2",
                        duration=NS2_S, burst=HTB_BURST))
    linux = []
    for _ in range(2):
        linux += serial(dict(cc="rn", overrides={}, burst=HTB_BURST),
                        dict(cc="reno", overrides={}, burst=HTB_BURST))
    record("mild_reorder_serial", ns2 + linux)

    def totals(runs, cc):
        mine = [r for r in runs if r["cc"] == cc]
        return (sum(r["recoveries"] for r in mine),
                sum(r["goodput_bps"] for r in mine) / len(mine))

    (rn_fr, rn_gp), (sack_fr, sack_gp) = totals(ns2, "rn"), \
        totals(ns2, "reno")
    (rnl_fr, rnl_gp), (reno_fr, reno_gp) = totals(linux, "rn"), \
        totals(linux, "reno")
    print("mild_reorder vs SACK (sack-ns2): rn %d fast retransmits, %.3f "
          "Mbit/s; SACK reno %d, %.3f Mbit/s; goodput x%.2f" %
          (rn_fr, rn_gp / 1e6, sack_fr, sack_gp / 1e6, rn_gp / sack_gp))
    print("mild_reorder vs Linux reno (linux): rn %d fast retransmits, "
          "%.3f Mbit/s; reno %d, %.3f Mbit/s; goodput %+.1f %%" %
          (rnl_fr, rnl_gp / 1e6, reno_fr, reno_gp / 1e6,
           100 * (rnl_gp / reno_gp - 1)))

    # The receiver classified holes, and rn believed it.
    rn = [r for r in ns2 + linux if r["cc"] == "rn"]
    for r in rn:
        assert r["rn_host"].get("opt_trusted", 0) > 0, r["rn_host"]
        assert r["rn"]["acks_dn"] > 0 and r["rn"]["trains_reorder"] > 0
        assert r["rn"]["trains_reorder"] > r["rn"]["trains_drop"]
        assert r["rn"]["peers_distrusted"] == 0

    # Seed 001's claim, against the seeds' SACK.
    assert rn_fr < sack_fr
    assert rn_gp >= 2 * sack_gp
    # Against Linux's reno: not worse by more than 15 %.
    assert rnl_gp >= 0.85 * reno_gp

    # RACK is on in the linux runs: rn held it back and triggered it.
    for r in linux:
        if r["cc"] == "rn":
            assert r["tcp_recovery"] == "1"
            assert r["rn"]["rack_held_acks"] > 0
            assert r["rn"]["rack_triggered"] > 0
    assert ns2[0]["tcp_recovery"] == "0"
    assert ns2[0]["rn"]["rack_held_acks"] == 0

    # get_info in ss, and tp->reordering ("reordering:N") is dupthresh
    # while a hole waits.
    ss = [s for r in rn for s in r["ss"]]
    assert ss, "no rn socket seen by ss"
    waiting = [s for s in ss if s["sacked"]]
    same = [s for s in waiting if s["reordering"] == s["dupthresh"]]
    assert waiting and len(same) >= 0.8 * len(waiting), ss
    big = [s for s in ss if s["dupthresh"] > 3]
    assert big, ss
    assert max(s["dupthresh"] for s in big) >= 20
    for s in big:          # max(4, swnd * (1 + kval)), kval = k * c
        assert s["dupthresh"] >= 4
        assert s["kval"] >= 100 and s["kval"] % 100 == 0, s
    assert max(s["dn_acks"] for s in ss) > 0


# ---- §VII-B: drops only ------------------------------------------------

@pytest.mark.statistical
def test_drops_only_rn_close_to_reno():
    """§VII-B, drops only: no packet is delayed, and the losses are the
    drop-tail EPDN bottleneck's own (recorded and reported, so the
    receiver leaves the bit clear).  rn classifies the holes as drops,
    retransmits at 3 dupACKs like SACK, and its goodput is within 10 % of
    reno's (two pairs of simultaneous 25 s runs).  Extra random drops at
    1 % make single runs differ by +-20 % either way in this VM, more than
    this test can average out in its time (docs/rn-tcp-results.md)."""
    drops = {"forward.reorder.fraction": 0.0}
    runs = []
    for _ in range(2):
        runs += parallel(dict(cc="rn", overrides=drops, duration=DROPS_S),
                         dict(cc="reno", overrides=drops, duration=DROPS_S))
    record("drops_only", runs)
    rn_gp = sum(r["goodput_bps"] for r in runs if r["cc"] == "rn")
    reno_gp = sum(r["goodput_bps"] for r in runs if r["cc"] == "reno")
    print("drops_only: rn %.3f Mbit/s, reno %.3f Mbit/s (%+.1f %%)" %
          (rn_gp / 2e6, reno_gp / 2e6, 100 * (rn_gp / reno_gp - 1)))
    for r in runs:         # the losses reached rn as drops
        if r["cc"] == "rn":
            assert r["rn"]["trains_drop"] > 0
            assert r["rn_host"]["acks_unmarked"] > 0
    assert abs(rn_gp - reno_gp) <= 0.10 * reno_gp


# ---- classic dupthresh, and RN-TCP-ES ----------------------------------

@pytest.mark.statistical
def test_classic_dupthresh_and_es():
    """With RACK off (net.ipv4.tcp_recovery=0) rn's rule is the classic
    dupthresh itself: while a hole waits, reordering:N in ss equals
    get_info's dupthresh, and RACK is never touched.  With es=1 and no RN-TCP receiver (so rn acts as
    SACK and fast-retransmits delayed packets), D-SACK-paired transmissions
    give RTT samples (seed 000 §4.7)."""
    set_param("tcp_rn", "es", 1)
    try:
        classic, no_rcv = parallel(
            dict(cc="rn", overrides={}, profile="dsack-r", duration=SHORT_S),
            dict(cc="rn", overrides={}, duration=SHORT_S, receiver=False))
    finally:
        set_param("tcp_rn", "es", 0)
    record("classic_es", [classic, no_rcv])
    assert classic["tcp_recovery"] == "0"
    assert classic["rn"]["rack_held_acks"] == 0
    assert classic["rn"].get("rack_triggered", 0) == 0
    ss = classic["ss"]
    assert ss and any(s["dupthresh"] > 3 for s in ss), ss
    waiting = [s for s in ss if s["sacked"]]
    same = [s for s in waiting if s["reordering"] == s["dupthresh"]]
    assert waiting and len(same) >= 0.8 * len(waiting), ss

    # Without the receiver no ACK carries the bit: SACK's rule.
    assert no_rcv["rn"]["acks_dn"] == 0
    assert no_rcv["rn"]["trains_reorder"] == 0
    assert no_rcv["rn"]["false_fast_retransmits"] > 0
    assert no_rcv["rn"]["es_samples"] > 0
