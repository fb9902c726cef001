# SPDX-License-Identifier: GPL-2.0
"""Integration tests of the epdn qdisc (sch_epdn/, docs/epdn.md).

Run inside tools/vm-run (make test), as root, after `make modules tc`.

One path, built once, serves every test that forwards traffic:

        a ------------ r1 ------------- r2 ------------ b
    10.0.1.1   10.0.1.2  10.0.2.1   10.0.2.2  10.0.3.1   10.0.3.2
      a-r1       r1-a      r1-r2      r2-r1     r2-b       b-r2
                        [egress r1-r2]        [egress r2-b]

Each router egress is, per test: nothing (a router without EPDN), epdn,
tbf -> epdn (a bottleneck rate), or a *gate*: tbf -> epdn where the tbf
lets the first packet through and then holds everything (rate 8 bit/s)
until the test opens it.  A burst sent into a shut gate overflows the
epdn queue whatever the sending speed, so drops are exact even on a
loaded machine.

Packets are crafted and sent from the test process itself, through raw
sockets opened inside the namespaces with setns(2), and captured the same
way (tcpdump at the receiver in test_crafted_drops_are_reported_exactly).
Starting a program takes seconds under emulation on a loaded host: that,
not the qdisc, made test_crafted_drops_are_reported_exactly flaky,
because a second sender process started after the record's idle timeout
(2 s) had passed.
"""

import contextlib
import json
import os
import shlex
import socket
import struct
import subprocess
import threading
import time

import pytest

from conftest import kasan_kernel
from lib import pktgen
from lib.kernel import Kmsg, qdisc_stats, rn_host_stats
from lib.packets import (ETH_P_8021Q, ETH_P_ALL, ETH_P_IP, F_EMPTY, F_HOST,
                         F_V2, RR_OPT, Tcpdump, csum, epdn_opt, fuzz_frames,
                         ipv4, odd_frames, parse_epdn, parse_ip, tcp, xmit)
from satnet import host
from satnet.console import BAD
from satnet.host import netns, sysctl_write as sysctl
from satnet.kmod import ModuleError, insmod, loaded, rmmod
from satnet.paths import ko

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
KO = ko("sch_epdn")
RN_HOST_KO = ko("rn_host")
TC_LIB = host.TC_LIB
SO_RCVBUFFORCE = 33
SND, RCV = "10.0.1.1", "10.0.3.2"
MTU = 1500
F_UNKNOWN = 0x08            # drop information may be missing (epdn_wire.h)
ECT0 = 0x02                 # the ECN field of an ECN-capable packet
# A gate: shut lets one packet pass, then nothing for minutes.
GATE_SHUT = "tbf rate 8bit burst 1600 limit 100000"
GATE_OPEN = "tbf rate 1gbit burst 64k limit 100000"


# ---- programs, in namespaces entered by this thread (satnet.host.netns) ----

def run(argv, ns=None, inp=None, check=True, timeout=120):
    r = host.run(argv, check=False, inp=inp, timeout=timeout, ns=ns)
    if check and r.returncode:
        raise AssertionError("%s: %s%s" % (" ".join(argv), r.stdout,
                                           r.stderr))
    return r


def sh(cmd, ns=None, check=True):
    return run(shlex.split(cmd), ns=ns, check=check)


def batch(tool, ns, lines, check=True):
    """Many ip or tc commands for one program start (-force: go on after
    errors, for teardown)."""
    argv = [tool] + ([] if check else ["-force"]) + ["-batch", "-"]
    return run(argv, ns=ns, inp="\n".join(lines) + "\n", check=check)


# ---- packet crafting ----

def segs(sport, seqs, size=1000, **kw):
    """TCP/IPv4 segments of one flow from the sender to the receiver."""
    opts = b""
    if "epdn" in kw:
        opts += epdn_opt(*kw["epdn"])
    if kw.get("rr"):
        opts += RR_OPT
    return [ipv4(SND, RCV, tcp(sport, 80, s, size), ttl=kw.get("ttl", 64),
                 opts=opts, tos=kw.get("tos", 0)) for s in seqs]


def seqs(n, first=1000, size=1000):
    return [first + size * i for i in range(n)]


def flow(seen, sport):
    return [s for s in seen if s["sport"] == sport]


# ---- capture ----

class Sniffer:
    """Frames arriving on a device, captured by a thread of this process."""

    def __init__(self, ns, dev, raw=False):
        with netns(ns):
            self.s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                                   socket.htons(ETH_P_ALL))
        self.s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 64 << 20)
        self.s.bind((dev, ETH_P_ALL))
        self.s.settimeout(0.05)
        self.raw = raw
        self.frames = []
        self.seen = []
        self.done = False
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self):
        while not self.done:
            try:
                pkt, addr = self.s.recvfrom(65535)
            except socket.timeout:
                continue
            except OSError:         # the device went away
                break
            if addr[2] == socket.PACKET_OUTGOING:
                continue
            if self.raw:
                self.frames.append(pkt)
            elif addr[1] == ETH_P_IP and len(pkt) >= 34 and \
                    pkt[26:30] == socket.inet_aton(SND) and pkt[23] == 6:
                self.seen.append(parse_ip(pkt[14:]))

    def count(self):
        return len(self.frames if self.raw else self.seen)

    def stop(self, want=None, timeout=20, quiet=0.3):
        """Wait for want frames (or for quiet seconds of silence)."""
        end = time.time() + timeout
        last, n = time.time(), self.count()
        while time.time() < end:
            time.sleep(0.05)
            if self.count() != n:
                last, n = time.time(), self.count()
            if want is not None and n >= want:
                break
            if want is None and time.time() - last > quiet:
                break
        time.sleep(quiet)
        self.done = True
        self.thread.join()
        self.s.close()
        return self.frames if self.raw else self.seen


def meminfo():
    with open("/proc/meminfo") as f:
        return {k: int(v.split()[0]) for k, v in
                (line.split(":", 1) for line in f)}


# ---- the path ----

MAC = {"a-r1": "02:ee:00:01:00:01", "r1-a": "02:ee:00:01:00:02",
       "r1-r2": "02:ee:00:02:00:01", "r2-r1": "02:ee:00:02:00:02",
       "r2-b": "02:ee:00:03:00:01", "b-r2": "02:ee:00:03:00:02"}
LINKS = (("a", "a-r1", "10.0.1.1", "r1", "r1-a", "10.0.1.2"),
         ("r1", "r1-r2", "10.0.2.1", "r2", "r2-r1", "10.0.2.2"),
         ("r2", "r2-b", "10.0.3.1", "b", "b-r2", "10.0.3.2"))
ROUTES = {"a": ["default via 10.0.1.2 advmss 1448"],
          "r1": ["10.0.3.0/24 via 10.0.2.2"],
          "r2": ["10.0.1.0/24 via 10.0.2.1"],
          "b": ["default via 10.0.3.1 advmss 1448"]}
EGRESS = {"r1": "r1-r2", "r2": "r2-b"}
PEER = {"r1-r2": "r2-r1", "r2-b": "b-r2"}
# A kick: a packet from the router out of its egress that ends at the
# next hop, so it wakes the tbf without queueing anywhere else.
KICK_TO = {"r1": "10.0.2.2", "r2": "10.0.3.2"}


class Path:
    """a - r1 - r2 - b; every MTU 1500, end hosts advertise MSS 1448 so
    a full-sized segment has room for the 12-byte option."""

    def __init__(self):
        pfx = "epdn%d" % os.getpid()
        self.ns = {n: pfx + n for n in ("a", "r1", "r2", "b")}
        self.a, self.r1, self.r2, self.b = (self.ns[n] for n in
                                            ("a", "r1", "r2", "b"))
        self.socks = {}

    def build(self):
        batch("ip", None, ["netns add %s" % n for n in self.ns.values()])
        for n, name in self.ns.items():
            for conf in ("all", "default"):
                sysctl(name, "net.ipv6.conf.%s.disable_ipv6" % conf, 1)
            if n.startswith("r"):
                sysctl(name, "net.ipv4.ip_forward", 1)
        batch("ip", None, [
            "link add %s address %s netns %s type veth peer name %s "
            "address %s netns %s" % (d1, MAC[d1], self.ns[n1], d2, MAC[d2],
                                     self.ns[n2])
            for n1, d1, _, n2, d2, _ in LINKS])
        cmds = {n: ["link set lo up"] for n in self.ns}
        for n1, d1, a1, n2, d2, a2 in LINKS:
            for n, dev, addr, peer, peer_addr in ((n1, d1, a1, d2, a2),
                                                  (n2, d2, a2, d1, a1)):
                cmds[n] += ["addr add %s/24 dev %s" % (addr, dev),
                            "link set %s up" % dev,
                            "neigh replace %s lladdr %s dev %s nud permanent"
                            % (peer_addr, MAC[peer], dev)]
        for n in self.ns:
            batch("ip", self.ns[n], cmds[n] + ["route add " + r
                                               for r in ROUTES[n]])
        # Real TCP must not hand the qdisc 64 KB GSO packets.
        sh("ethtool -K a-r1 tso off gso off", ns=self.a)
        sh("ping -c 1 -W 5 %s" % RCV, ns=self.a)

    def destroy(self):
        for s in self.socks.values():
            s.close()
        batch("ip", None, ["netns del %s" % n for n in self.ns.values()],
              check=False)

    def reset(self):
        for r, dev in EGRESS.items():
            batch("tc", self.ns[r], ["qdisc del dev %s root" % dev],
                  check=False)

    # -- qdiscs --

    def egress(self, router, kind, epdn="limit 1000"):
        """kind: none, epdn, gate, or a tbf rate such as 20mbit."""
        dev, ns = EGRESS[router], self.ns[router]
        if kind == "none":
            return
        if kind == "epdn":
            lines = ["qdisc add dev %s root epdn %s" % (dev, epdn)]
        else:
            root = GATE_SHUT if kind == "gate" else \
                "tbf rate %s burst 16k latency 100ms" % kind
            lines = ["qdisc add dev %s root handle 1: %s" % (dev, root),
                     "qdisc add dev %s parent 1:1 handle 10: epdn %s"
                     % (dev, epdn)]
        batch("tc", ns, lines)

    def change(self, router, epdn):
        dev = EGRESS[router]
        batch("tc", self.ns[router], [
            "qdisc change dev %s parent 1:1 handle 10: epdn %s" % (dev, epdn)])

    def open_gate(self, router, limit=1000):
        """Let everything through and raise the epdn limit (None: leave
        epdn as it is), so the queued packets leave and later ones pass."""
        dev = EGRESS[router]
        lines = ["qdisc change dev %s root handle 1: %s" % (dev, GATE_OPEN)]
        if limit is not None:
            lines.append("qdisc change dev %s parent 1:1 handle 10: epdn "
                         "limit %d" % (dev, limit))
        batch("tc", self.ns[router], lines)
        self.kick(router)

    def kick(self, router):
        """tbf re-arms its timer only on a packet: send one, ECN-capable
        so that a RED queue above max marks it rather than drops it."""
        s = self.sock(router, socket.AF_INET, socket.SOCK_DGRAM, 0)
        s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, ECT0)
        s.sendto(b"kick", (KICK_TO[router], 9))

    def qlen(self, router):
        out = json.loads(sh("tc -s -j qdisc show dev %s" % EGRESS[router],
                            ns=self.ns[router]).stdout)
        return [q for q in out if q.get("root")][0]["qlen"]

    def wait_qlen(self, router, n, timeout=20):
        end = time.time() + timeout
        while self.qlen(router) != n:
            assert time.time() < end, "%s: queue never reached %d" % (
                router, n)
            time.sleep(0.1)

    def xstats(self, router):
        return qdisc_stats(EGRESS[router], ns=self.ns[router])

    # -- traffic --

    def sock(self, ns_key, family, kind, proto):
        key = (ns_key, family, kind, proto)
        if key not in self.socks:
            with netns(self.ns[ns_key]):
                self.socks[key] = socket.socket(family, kind, proto)
        return self.socks[key]

    def send(self, packets):
        """Send IPv4 packets from a (IP_HDRINCL), back to back."""
        s = self.sock("a", socket.AF_INET, socket.SOCK_RAW,
                      socket.IPPROTO_RAW)
        for p in packets:
            s.sendto(p, (socket.inet_ntoa(p[16:20]), 0))

    def inject(self, router, frames):
        """Send raw (ethertype, payload) frames out of a router's egress:
        they meet its qdisc as locally sent packets."""
        dev = EGRESS[router]
        s = self.sock(router, socket.AF_PACKET, socket.SOCK_RAW, 0)
        hdr = bytes.fromhex(MAC[PEER[dev]].replace(":", "") +
                            MAC[dev].replace(":", ""))
        for etype, payload in frames:
            xmit(s, hdr + struct.pack("!H", etype) + payload, (dev, etype))

    def sniff(self, raw=False):
        if raw:      # what r1 sends, seen by r2 before it routes anything
            return Sniffer(self.r2, "r2-r1", raw=True)
        return Sniffer(self.b, "b-r2")

    def iperf(self, secs=3, streams=2):
        srv = subprocess.Popen(["ip", "netns", "exec", self.b, "iperf3",
                                "-s", "-1"], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
        try:
            self._wait_listen(5201)
            sh("iperf3 -c %s -t %d -P %d" % (RCV, secs, streams), ns=self.a)
        finally:
            try:
                srv.wait(timeout=30)
            except subprocess.TimeoutExpired:
                srv.kill()
                srv.wait()

    def _wait_listen(self, port, timeout=60):
        end = time.time() + timeout
        while time.time() < end:
            rows = []
            with netns(self.b):
                for name in ("tcp", "tcp6"):
                    with open("/proc/thread-self/net/" + name) as f:
                        rows += [line.split() for line in f.readlines()[1:]]
            if any(r[1].endswith(":%04X" % port) and r[3] == "0A"
                   for r in rows):
                return
            time.sleep(0.05)
        raise AssertionError("iperf3 server never listened")


# ---- fixtures ----

@pytest.fixture(scope="module", autouse=True)
def module_loaded():
    if not os.path.exists(KO) or \
            not os.path.exists(os.path.join(TOP, "build", "tc", "q_epdn.so")):
        pytest.skip("build first: make modules tc")
    host.prepare_tclib()
    insmod(KO)
    yield
    rmmod("sch_epdn")


@pytest.fixture(autouse=True)
def console_clean():
    """(f) and every other test: the kernel log stays clean."""
    kmsg = Kmsg()
    yield
    bad = [line for line in kmsg.lines() if BAD.search(line)]
    assert not bad, "kernel console: %s" % bad


@pytest.fixture(scope="module")
def path_once(module_loaded):
    p = Path()
    try:
        p.build()
        yield p
    finally:
        p.destroy()


@pytest.fixture
def path(path_once):
    path_once.reset()
    yield path_once
    path_once.reset()


@pytest.fixture
def dummy():
    name = "epdnd%d" % os.getpid()
    sh("ip link add %s type dummy" % name)
    sysctl(None, "net.ipv6.conf.%s.disable_ipv6" % name, 1)
    sh("ip link set %s up" % name)
    yield name
    sh("ip link del %s" % name, check=False)


def show(dev):
    return sh("tc qdisc show dev %s" % dev).stdout


dev_xstats = qdisc_stats


# ---- configuration ----

def test_every_option_is_printed_back(dummy):
    sh("tc qdisc add dev %s root epdn limit 300 bytelimit 450kb mode v2 "
       "idle 250ms flows 4096 corrupt 0.1%% red min 30000 max 90000 "
       "probability 0.02 ewma 7 ecn harddrop" % dummy)
    out = show(dummy)
    for text in ("limit 300 ", "bytelimit 450Kb", "mode v2", "idle 250ms",
                 "flows 4096", "corrupt 0.1%", "red ", "min 30000b",
                 "max 90000b", "probability 0.02", "ewma 7", "ecn",
                 "harddrop"):
        assert text in out, (text, out)
    js = json.loads(sh("tc -j qdisc show dev %s" % dummy).stdout)
    opts = js[0]["options"]
    assert opts["limit"] == 300 and opts["flows"] == 4096
    assert opts["mode"] == "v2" and opts["idle"] == 250000
    assert opts["ecn"] is True and opts["red"] is True
    # The printed options, fed back to change, leave the dump unchanged.
    printed = out.split("refcnt 2 ", 1)[1].strip()
    sh("tc qdisc change dev %s root epdn %s" % (dummy, printed))
    assert show(dummy) == out


def test_change_updates_and_defaults(dummy):
    sh("tc qdisc add dev %s root epdn" % dummy)
    out = show(dummy)
    assert "limit 1000 " in out and "mode v3" in out and "idle 2s" in out
    assert "flows 65536" in out and "red" not in out
    sh("tc qdisc change dev %s root epdn limit 5 flows 16 idle 3s" % dummy)
    out = show(dummy)
    assert "limit 5 " in out and "flows 16 " in out and "idle 3s" in out
    assert "mode v3" in out
    sh("tc qdisc change dev %s root epdn red min 3k max 9k probability 0.1"
       % dummy)
    assert "red min 3Kb max 9Kb" in show(dummy)
    sh("tc qdisc change dev %s root epdn red off" % dummy)
    assert "red" not in show(dummy)


# ---- (a) drops are reported exactly, on the flow's next packet ----

def opt_of(pkt):
    o = pkt["opt"]
    return o and (o["min"], o["max"], o["flags"], o["ettl"])


def test_crafted_drops_are_reported_exactly(path):
    """(a) A tiny limit forces drops; tcpdump at the receiver shows the
    flow's next packet carrying exactly the min and max of the dropped
    segments.  Also: a carried range merged at drop and at stamp time, a
    sender's empty option, and a record waiting behind foreign options.

    The records must live until the gate opens, seconds later on a loaded
    machine, so idle is long and the test checks that nothing aged.
    """
    path.egress("r1", "gate", "limit 2 idle 60s")
    path.egress("r2", "epdn", "limit 1000")
    cap = Tcpdump(path.b, "b-r2", "tcp and src host %s" % SND)
    qa, q1, q3, q4 = seqs(12), seqs(6, 20000), seqs(5, 50000), \
        seqs(7, 90000)
    upstream = (64, 0, 100, 199)        # drop info from an earlier gateway
    # Gate shut: qa[0] leaves, qa[1] waits in tbf, qa[2] in epdn (limit 2
    # is reached); every later packet is dropped and recorded.
    path.send(segs(1001, qa) + segs(1003, q3[:4], epdn=upstream) +
              segs(1004, q4[:4], rr=True) + segs(1005, q1[:4]))
    path.change("r1", "limit 1000")
    # The flows' next packets, queued behind.
    path.send(segs(1002, [5], epdn=(64, F_EMPTY | F_HOST)) +
              segs(1003, q3[4:], epdn=upstream) +
              segs(1004, q4[4:6], rr=True) + segs(1004, q4[6:]) +
              segs(1005, q1[4:]))
    path.open_gate("r1")
    seen = cap.stop(want=10)
    st1, st2 = path.xstats("r1"), path.xstats("r2")

    assert len(seen) == 10 and all(s["csum_ok"] for s in seen), seen
    assert all(s["ttl"] == 62 for s in seen)
    # The record lived until its carrier left: nothing aged or evicted.
    assert st1["aged"] == 0 and st1["evicted"] == 0, st1
    # Flow 1001: qa[2] was queued before the drops and is the flow's next
    # packet to leave: it names qa[3]..qa[11] exactly.  Both routers ran
    # EPDN from r1 on, so EPDN-TTL == TTL.
    f = flow(seen, 1001)
    assert [s["seq"] for s in f] == qa[:3]
    assert [opt_of(s) for s in f] == [None, None, (qa[3], qa[11] + 999, 0,
                                                   62)]
    # Flow 1005: every segment sent into the full queue was dropped; the
    # next one sent carries them, and so does the one after: the record
    # stays until it ages out.
    f = flow(seen, 1005)
    assert [s["seq"] for s in f] == q1[4:]
    assert [opt_of(s) for s in f] == [(q1[0], q1[3] + 999, 0, 62)] * 2
    # Flow 1002: a sender-originated empty option with no record: each
    # EPDN router lowered EPDN-TTL with TTL, nothing else changed.
    (f,) = flow(seen, 1002)
    assert opt_of(f) == (0, 0, F_EMPTY | F_HOST, 62)
    # Flow 1003: the dropped packets' own option (100..199) went into the
    # record, and the record into the next packet's option.
    (f,) = flow(seen, 1003)
    assert f["seq"] == q3[4] and opt_of(f) == (100, q3[3] + 999, 0, 62)
    # Flow 1004: nothing stamped behind record-route; the plain one carries.
    f = flow(seen, 1004)
    assert [s["seq"] for s in f] == q4[4:]
    assert [s["ihl"] for s in f] == [28, 28, 32]
    assert [opt_of(s) for s in f] == [None, None, (q4[0], q4[3] + 999, 0,
                                                   62)]
    assert (st1["overflow_drops"], st1["recorded"], st1["rec_merged"]) == \
        (21, 21, 17), st1
    # Records go hold (100 ms) after their first carrier: by now, or
    # when the sweep reaches them.
    assert (st1["stamps"], st1["merges"], st1["opt_deferred"],
            st1["records"] + st1["released"], st1["ttl_updates"]) == \
        (4, 1, 2, 4, 2), st1
    assert st1["unknown_stamps"] == 0, st1
    assert (st2["ttl_updates"], st2["stamps"], st2["merges"],
            st2["recorded"]) == (6, 0, 0, 0), st2


# ---- (b) two EPDN routers that both drop merge into one option ----

def test_two_epdn_routers_merge_into_one_option(path):
    """(b) r1 drops 9 segments and stamps its record into a packet; r2
    then drops 8 more of the same flow before that packet leaves it, and
    merges its record into the carried option: one option, both ranges.
    The flow's next packet gets both again: records stay until they age
    out."""
    path.egress("r1", "gate", "limit 2 idle 60s")
    path.egress("r2", "gate", "limit 2 idle 60s")
    sn = path.sniff()
    q = seqs(21, 7000)
    # q[0] crosses both gates; r1 holds q[1], q[2] and drops q[3..11].
    path.send(segs(2001, q[:12]))
    path.open_gate("r1")
    # q[1] waits in r2's tbf, q[2] (carrying r1's record) in r2's epdn.
    path.wait_qlen("r2", 2)
    path.send(segs(2001, q[12:20]))         # dropped at r2
    path.open_gate("r2")
    path.send(segs(2001, q[20:]))
    seen = sn.stop(want=4)
    st1, st2 = path.xstats("r1"), path.xstats("r2")

    assert [s["seq"] for s in seen] == [q[0], q[1], q[2], q[20]], seen
    both = (q[3], q[19] + 999, 0, 62)
    assert [opt_of(s) for s in seen[:3]] == [None, None, both], seen
    # q[12..20] are sent after r1's gate opened, q[20] after r2's: each
    # hop's record may have gone (its hold) by then.  q[20] carries both
    # ranges, r2's alone, or nothing.
    assert opt_of(seen[3]) in (both, (q[12], q[19] + 999, 0, 62), None), \
        seen
    assert seen[2]["ttl"] == 62 and seen[2]["csum_ok"]
    assert st1["recorded"] == 9 and 1 <= st1["stamps"] <= 10, st1
    # r2 merged into q[2]'s option, and stamped q[20] (a merge if r1 had
    # stamped it, a new option if not) when its record was still there.
    assert st2["recorded"] == 8, st2
    assert st2["merges"] + st2["stamps"] == \
        1 + (seen[3]["opt"] is not None), st2


@pytest.mark.parametrize("r2_kind", ["epdn-drops", "legacy"])
def test_stamps_and_epdn_ttl_real_tcp(path, r2_kind):
    """Real TCP, options created by r1 (the bottleneck).  With r2 an EPDN
    router that drops too (emulated CRC errors, mode v2), both routers'
    records reach the receiver and EPDN-TTL == TTL; a router without
    EPDN after r1 makes them differ.  2 Mbit/s for 5 s: a debug kernel
    on a busy host could not fill 4 (no overflow at r1), and 1 % of some
    850 packets is corrupted."""
    path.egress("r1", "2mbit", "limit 10")
    path.egress("r2", "epdn" if r2_kind == "epdn-drops" else "none",
                "limit 1000 mode v2 corrupt 1%")
    sn = path.sniff()
    path.iperf(secs=5)
    seen = sn.stop()
    st = path.xstats("r1")
    assert st["overflow_drops"] > 0 and st["recorded"] > 0
    assert st["stamps"] > 0 and st["mtu_deferred"] == 0, st
    assert st["gso_deferred"] == 0, st
    carried = [s for s in seen if s["opt"]]
    assert carried, ("no EPDN option reached the receiver", len(seen), st)
    assert all(s["csum_ok"] for s in seen)
    assert max(s["len"] for s in seen) <= MTU
    for s in carried:
        o = s["opt"]
        assert o["version"] == 1 and not o["flags"] & (F_EMPTY | F_HOST)
        assert (o["ettl"] == s["ttl"]) == (r2_kind == "epdn-drops"), s
        assert (o["max"] - o["min"]) & 0xffffffff < 1 << 24
    if r2_kind == "epdn-drops":
        st2 = path.xstats("r2")
        assert st2["corrupt_drops"] > 0 and st2["recorded"] > 0, st2
        assert st2["stamps"] + st2["merges"] > 0, st2
        # r2's own stamps and merges carry V2; it forwarded the rest.
        from_r1 = [s for s in carried if not s["opt"]["flags"] & F_V2]
        assert st2["ttl_updates"] >= len(from_r1)
        assert any(s["opt"]["flags"] & F_V2 for s in carried)


# ---- (c) a router without EPDN before or after the gateway ----

@pytest.mark.parametrize("legacy", ["before", "after", "none"])
def test_legacy_router_breaks_epdn_ttl(path, legacy):
    """(c) The sender originates the option (EMPTY|HOST, EPDN-TTL = TTL).
    One router without EPDN anywhere on the path, before or after the
    dropping gateway, leaves EPDN-TTL above TTL at the receiver: by one
    when it comes after, by two before (an EPDN router follows TTL only
    when the packet is exactly one decrement behind).  With EPDN on both
    routers they are equal.  The sender's option is crafted
    here (test_sender_origin_hook uses tcp_rn/rn_host.ko instead)."""
    gw, other = ("r2", "r1") if legacy == "before" else ("r1", "r2")
    path.egress(gw, "gate", "limit 2 idle 60s")
    path.egress(other, "epdn" if legacy == "none" else "none")
    sn = path.sniff()
    q = seqs(13, 3000)
    origin = (64, F_EMPTY | F_HOST)
    path.send(segs(3001, q[:12], epdn=origin))
    path.open_gate(gw)
    path.send(segs(3001, q[12:], epdn=origin))
    seen = sn.stop(want=4)
    assert [s["seq"] for s in seen] == [q[0], q[1], q[2], q[12]], seen
    want_ettl = {"none": 62, "after": 63, "before": 64}[legacy]
    empty = (0, 0, F_EMPTY | F_HOST, want_ettl)
    filled = (q[3], q[11] + 999, F_HOST, want_ettl)
    assert [opt_of(s) for s in seen[:3]] == [empty, empty, filled], seen
    # q[12] is sent after the gate opens: within the record's hold or not.
    assert opt_of(seen[3]) in (empty, filled), seen
    assert all(s["ttl"] == 62 and s["csum_ok"] for s in seen)
    st = path.xstats(gw)
    assert (st["recorded"], st["stamps"]) == (9, 0), st
    assert st["merges"] == 1 + (opt_of(seen[3]) == filled), st


@pytest.fixture
def rn_host():
    """tcp_rn/rn_host.ko, the sender-side origin hook, if it is built."""
    if not os.path.exists(RN_HOST_KO):
        pytest.skip("tcp_rn/rn_host.ko not built")
    mine = not loaded("rn_host")
    try:
        insmod(RN_HOST_KO, reload=False)
    except ModuleError as e:
        pytest.skip("rn_host.ko does not load: %s" % e)
    yield
    if mine:                        # unload only what this test loaded
        rmmod("rn_host")


@pytest.mark.parametrize("legacy", ["before", "after", "none"])
def test_sender_origin_hook(path, rn_host, legacy):
    """(c) with real TCP: net.rn.epdn_origin=1 at the sender makes every
    data segment carry an empty option; the bottleneck fills some.  A
    router without EPDN before or after it breaks EPDN-TTL == TTL."""
    gw, other = ("r2", "r1") if legacy == "before" else ("r1", "r2")
    # A rate the sender outruns even under a KASAN kernel on a busy host
    # (seen: 1.2 Mbit/s).
    path.egress(gw, "1mbit", "limit 10")
    path.egress(other, "epdn" if legacy == "none" else "none")
    sysctl(path.a, "net.rn.epdn_origin", 1)
    try:
        sn = path.sniff()
        path.iperf(secs=2, streams=1)
        seen = sn.stop()
    finally:
        sysctl(path.a, "net.rn.epdn_origin", 0)
    data = [s for s in seen if s["payload"] > 0]
    assert data and all(s["opt"] for s in data), \
        "data without an origin option: %s" % [s for s in data
                                               if not s["opt"]][:3]
    assert all(s["opt"]["flags"] & F_HOST for s in data)
    filled = [s for s in data if not s["opt"]["flags"] & F_EMPTY]
    st = path.xstats(gw)
    assert st["recorded"] > 0 and filled, st
    assert st["merges"] == len(filled), st
    assert max(s["len"] for s in seen) <= MTU
    for s in data:
        assert (s["opt"]["ettl"] == s["ttl"]) == (legacy == "none"), s


# ---- fail safe: a lost drop record is never "reordered" ----

class RnFlow:
    """A real TCP connection a -> b:80 in an EPDN domain: the sender
    originates the option (net.rn.epdn_origin), b runs the RN-TCP
    receiver (net.rn.receiver), both routers run epdn.  r1's gate is put
    in after the handshake, so that the flow's own segments meet it.  The
    sender neither probes (tcp_early_retrans 0: no tail loss probe) nor
    times out (rto_min 10s) while the gate is shut, so every segment it
    sends is one the test asked for."""

    PORT = 80
    SIZE = 1000

    def __init__(self, path, epdn):
        self.path = path
        path.egress("r2", "epdn")
        sysctl(path.a, "net.rn.epdn_origin", 1)
        sysctl(path.b, "net.rn.receiver", 1)
        sysctl(path.a, "net.ipv4.tcp_early_retrans", 0)
        sh("ip route change default via 10.0.1.2 advmss 1448 rto_min 10s",
           ns=path.a)
        with netns(path.b):
            self.srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.srv.bind((RCV, self.PORT))
        self.srv.listen(1)
        with netns(path.a):
            self.cli = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.cli.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.cli.settimeout(10)
        self.cli.connect((RCV, self.PORT))
        self.sport = self.cli.getsockname()[1]
        self.acc, _ = self.srv.accept()
        self.sent = 0
        self.isn = None
        path.egress("r1", "gate", epdn)

    def send(self, n=1):
        """@n segments of SIZE bytes; their sequence numbers."""
        for _ in range(n):
            self.cli.send(b"x" * self.SIZE)
            self.sent += 1

    def seq(self, i):
        """The sequence number of segment @i (0: the first sent)."""
        return (self.isn + 1 + i * self.SIZE) & 0xffffffff

    def arrivals(self, seen):
        """The first data segments to reach b, by number: 0, 1, then 3
        (2 was dropped; its retransmission may follow)."""
        data = [s for s in seen if s["payload"]]
        self.isn = (data[0]["seq"] - 1) & 0xffffffff
        assert [s["seq"] for s in data[:3]] == \
            [self.seq(0), self.seq(1), self.seq(3)], data
        return {0: data[0], 1: data[1], 3: data[2]}

    def counters(self, want_acks, timeout=20):
        """b's /proc/net/rn_host once it has sent @want_acks ACKs that
        name a hole (marked, unmarked or unclassified)."""
        end = time.time() + timeout
        while True:
            st = rn_host_stats(self.path.b)
            holes = sum(st.get(k, 0) for k in ("acks_marked",
                                               "acks_unmarked",
                                               "acks_unclassified"))
            if holes >= want_acks or time.time() > end:
                return st
            time.sleep(0.1)

    def close(self):
        path = self.path
        for s in (self.cli, self.acc, self.srv):
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                         struct.pack("ii", 1, 0))
            s.close()
        sysctl(path.a, "net.rn.epdn_origin", 0)
        sysctl(path.b, "net.rn.receiver", 0)
        sysctl(path.a, "net.ipv4.tcp_early_retrans", 3)
        sh("ip route change default via 10.0.1.2 advmss 1448", ns=path.a)


@pytest.fixture
def rn_flow(path, rn_host):
    flows = []

    def make(epdn):
        flows.append(RnFlow(path, epdn))
        return flows[-1]
    yield make
    for f in flows:
        f.close()


def one_drop(path, f):
    """Shut gate, limit 1: segment 0 passes, 1 waits in the tbf, 2 is
    dropped and recorded."""
    f.send(3)
    path.wait_qlen("r1", 1)
    end = time.time() + 20
    while path.xstats("r1")["overflow_drops"] < 1:
        assert time.time() < end, path.xstats("r1")
        time.sleep(0.1)


def test_flood_evicting_the_record_is_never_reordered(path, rn_flow):
    """A flood of new flows, each dropped at r1 (flows 8: one set), evicts
    the victim's record before any of its packets carried it.  The set is
    then lost: the victim's next packets leave r1 with UNKNOWN, and the
    receiver's ACK that names the hole (segment 2, a congestion drop) does
    not say "reordered".  Before the fix the record vanished unseen, the
    next packet came with a trusted empty option, and that ACK carried the
    drop-negative bit."""
    f = rn_flow("limit 1 flows 8 idle 60s")
    sn = path.sniff()
    one_drop(path, f)
    flood = [ipv4(SND, RCV, tcp(20000 + i, 80, 1000, 1000))
             for i in range(16)]
    path.send(flood)
    st = path.xstats("r1")
    assert st["overflow_drops"] == 17 and st["evicted"] == 9, st
    path.change("r1", "limit 1000")
    f.send(1)                       # segment 3, queued behind segment 1
    path.open_gate("r1")
    host = f.counters(want_acks=1)
    seen = flow(sn.stop(want=3), f.sport)
    assert host["acks_marked"] == 0, host
    assert host["acks_unclassified"] >= 1, host
    data = f.arrivals(seen)
    after = data[3]["opt"]
    assert after and after["ettl"] == data[3]["ttl"], after
    assert after["flags"] & F_UNKNOWN, after
    assert host["opt_unknown"] >= 1, host
    assert path.xstats("r1")["unknown_stamps"] >= 1


def test_spoofed_carrier_cannot_take_the_record(path, rn_flow):
    """One forged segment with the victim's 4-tuple and a bad TCP checksum
    leaves r1 first after the drop.  The receiver discards it (it uses
    only checksum-valid segments), but the record stays: the victim's
    next real segment carries it too, and the ACK that names the hole
    (segment 2, a congestion drop) does not say "reordered".  Before the
    fix the forged segment took the record away, and that ACK carried the
    drop-negative bit."""
    f = rn_flow("limit 1 idle 60s")
    sn = path.sniff()
    one_drop(path, f)
    path.change("r1", "limit 1000")
    spoof = ipv4(SND, RCV, tcp(f.sport, 80, 12345, 1000),
                 opts=epdn_opt(64, F_EMPTY | F_HOST))
    path.send([spoof])              # TCP checksum 0: wrong
    f.send(1)                       # segment 3, behind the forgery
    path.open_gate("r1")
    host = f.counters(want_acks=1)
    seen = flow(sn.stop(want=4), f.sport)
    assert host["acks_marked"] == 0, host
    assert host["acks_unmarked"] >= 1, host
    assert host["data_bad_csum"] >= 1, host
    forged = [s for s in seen if s["seq"] == 12345]
    assert forged, seen
    data = f.arrivals([s for s in seen if s["seq"] != 12345])
    o = data[3]["opt"]
    assert (o["min"], o["max"]) == (f.seq(2), f.seq(3) - 1), o
    st = path.xstats("r1")
    assert st["records"] + st["released"] == 1 and st["merges"] >= 2, st


@contextlib.contextmanager
def bridged_r2(path, epdn_on_bridge):
    """r2 forwards to b through a bridge: r2-b becomes a port of br0,
    which takes r2's address.  Routed packets pass br0's own qdisc (an
    epdn there is r2's EPDN router, @epdn_on_bridge), then the port's
    (EGRESS["r2"] still names r2-b: the L2 queue)."""
    ns = path.r2
    if run(["ip", "link", "add", "brprobe", "type", "bridge"], ns=ns,
           check=False).returncode:
        pytest.skip("this kernel has no bridge (CONFIG_BRIDGE)")
    run(["ip", "link", "del", "brprobe"], ns=ns)
    batch("ip", ns, [
        "link add br0 address %s type bridge" % MAC["r2-b"],
        "addr del 10.0.3.1/24 dev r2-b",
        "link set r2-b master br0",
        "addr add 10.0.3.1/24 dev br0",
        "link set br0 up",
        "neigh replace 10.0.3.2 lladdr %s dev br0 nud permanent"
        % MAC["b-r2"]])
    if epdn_on_bridge:
        batch("tc", ns, ["qdisc add dev br0 root epdn limit 1000"])
    try:
        yield
    finally:
        batch("ip", ns, [
            "link set r2-b nomaster", "link del br0",
            "addr add 10.0.3.1/24 dev r2-b",
            "neigh replace 10.0.3.2 lladdr %s dev r2-b nud permanent"
            % MAC["b-r2"]], check=False)


@pytest.mark.parametrize("r2", ["epdn", "legacy"])
def test_bridge_port_records_drops_and_leaves_epdn_ttl(path, r2):
    """A queue below IP: the drops happen at a bridge port behind r2.  An
    epdn qdisc on that port records them, and the flow's later packets
    carry them, but it leaves EPDN-TTL alone (TTL is not lowered at a
    bridge port): so when r2 itself runs no EPDN, the receiver still sees
    EPDN-TTL one above TTL.  Before, the port took r2's decrement for its
    own and closed the gap, and r2 passed for an EPDN router (legacy:
    EPDN-TTL 62 == TTL).  A bridge port with any other qdisc loses
    packets unseen: nothing on the path can report them (docs/epdn.md)."""
    path.egress("r1", "epdn")
    with bridged_r2(path, r2 == "epdn"):
        path.egress("r2", "gate", "limit 2 idle 60s")   # the port, r2-b
        sn = path.sniff()
        q = seqs(13, 3000)
        origin = (64, F_EMPTY | F_HOST)
        path.send(segs(3001, q[:12], epdn=origin))
        path.open_gate("r2")
        path.send(segs(3001, q[12:], epdn=origin))
        seen = sn.stop(want=4)
        st = path.xstats("r2")
    ettl = 62 if r2 == "epdn" else 63
    empty = (0, 0, F_EMPTY | F_HOST, ettl)
    filled = (q[3], q[11] + 999, F_HOST, ettl)
    assert [s["seq"] for s in seen] == [q[0], q[1], q[2], q[12]], seen
    assert all(s["ttl"] == 62 for s in seen), seen
    assert [opt_of(s) for s in seen[:3]] == [empty, empty, filled], seen
    assert opt_of(seen[3]) in (empty, filled), seen     # within the hold?
    assert (st["recorded"], st["ttl_updates"]) == (9, 0), st


# ---- (d) packets at MTU are never oversized ----

def test_mtu_boundary_never_oversized(path):
    """(d) With a record waiting, 1500- and 1489-byte packets leave
    unstamped (mtu_deferred); a 1488-byte one takes the option and leaves
    at exactly 1500; nothing bigger than the MTU reaches the receiver."""
    path.egress("r1", "gate", "limit 2 idle 60s")
    path.egress("r2", "epdn")
    sn = path.sniff()
    path.send(segs(4000, seqs(3)))              # leaves, waits, waits
    drop = seqs(3, 10000)
    path.send(segs(4001, drop))                 # dropped: the record
    path.change("r1", "limit 1000")
    sizes = (1460, 1449, 1448, 1000)            # IP: 1500, 1489, 1488, 1040
    seq, big = 13000, []
    for n in sizes:
        big += segs(4001, [seq], size=n)
        seq += n
    path.send(big)
    path.open_gate("r1")
    seen = sn.stop(want=7)
    st = path.xstats("r1")
    f = flow(seen, 4001)
    assert [s["len"] for s in f] == [1500, 1489, 1500, 1052], f
    assert [opt_of(s) for s in f] == [
        None, None, (drop[0], drop[-1] + 999, 0, 62),
        (drop[0], drop[-1] + 999, 0, 62)]
    assert max(s["len"] for s in seen) <= MTU
    assert (st["mtu_deferred"], st["stamps"],
            st["records"] + st["released"]) == (2, 2, 1), st


def test_route_mtu_below_the_devices(path):
    """(d) The route's MTU counts too: with r1's route to b at mtu 1300
    (devices 1500), a 1300-byte packet with a record waiting leaves
    unstamped, a 1288-byte one takes the option and leaves at 1300."""
    route = "10.0.3.0/24 via 10.0.2.2"
    sh("ip route replace %s mtu 1300" % route, ns=path.r1)
    try:
        path.egress("r1", "gate", "limit 2 idle 60s")
        sn = path.sniff()
        path.send(segs(4000, seqs(3)))
        path.send(segs(4001, [10000]))          # dropped: the record
        path.change("r1", "limit 1000")
        path.send(segs(4001, [11000], size=1260) +
                  segs(4001, [12260], size=1248))
        path.open_gate("r1")
        seen = sn.stop(want=5)
    finally:
        sh("ip route replace %s" % route, ns=path.r1)
    f = flow(seen, 4001)
    assert [s["len"] for s in f] == [1300, 1300], f
    assert [opt_of(s) for s in f] == [None, (10000, 10999, 0, 63)], f
    st = path.xstats("r1")
    assert (st["mtu_deferred"], st["stamps"],
            st["records"] + st["released"]) == (1, 1, 1), st


def test_ranges_past_the_span_bound_are_never_built(path):
    """A carried range of 2^30 bytes or more is not merged into a record,
    and one far from the record (2^31 away: unordered) gives way to the
    record's range when stamping: the receiver gets only ranges it can
    order (span_resets counts both).  A carried range that gives way sets
    UNKNOWN, and so does one a dropped packet carried and the record could
    not take: whatever it said about the flow is lost."""
    path.egress("r1", "gate", "limit 2 idle 60s")
    sn = path.sniff()
    path.send(segs(4000, seqs(3)))
    path.send(segs(4001, [10000]))                      # record 4001
    path.send(segs(4002, [20000], epdn=(64, 0, 0, 0x50000000)))
    assert path.xstats("r1")["span_resets"] == 1
    path.change("r1", "limit 1000")
    path.send(segs(4001, [11000], epdn=(64, 0, 0x90000000, 0x90000010)) +
              segs(4002, [21000]))
    path.open_gate("r1")
    seen = sn.stop(want=5)
    assert opt_of(flow(seen, 4001)[0]) == (10000, 10999, F_UNKNOWN, 63), seen
    assert opt_of(flow(seen, 4002)[0]) == (20000, 20999, F_UNKNOWN, 63), seen
    st = path.xstats("r1")
    assert (st["span_resets"], st["merges"], st["stamps"]) == (2, 1, 1), st


def test_red_average_ages_while_the_queue_is_empty(path):
    """RED's average decays over an idle queue, as sch_red's does.  A
    burst of ECN-capable segments queued behind a shut gate lifts the
    average above max: they are marked, none dropped.  (Behind a shaper
    the queue would build only if the sender outran it, which a loaded
    emulated guest does not always do.)  The gate opens, the queue drains
    and stays empty for a second, as long as many thousand packets take to
    send at the rate it drained.  A segment that is not ECN-capable (a TCP
    retransmission is not) then passes.  If the average had kept its value
    from the burst, that segment would have met a hard mark and been
    dropped."""
    path.egress("r1", "gate", "limit 1000 red min 3000 max 9000 "
                "probability 0.5 ewma 2 ecn")
    sniff = path.sniff()
    path.send(segs(7001, seqs(150), tos=ECT0))
    path.wait_qlen("r1", 149)       # the shut gate lets the first through
    path.open_gate("r1", limit=None)
    path.wait_qlen("r1", 0)
    burst = path.xstats("r1")
    assert burst["red_marks"] > 0 and burst["red_drops"] == 0, burst
    time.sleep(1)
    path.send(segs(7002, [5000]))
    seen = sniff.stop(want=151)
    st = path.xstats("r1")
    assert st["red_drops"] == 0 and st["red_marks"] == burst["red_marks"], st
    assert len(flow(seen, 7001)) == 150 and len(flow(seen, 7002)) == 1


def test_change_of_flows_drops_the_records_counted(path):
    """A new flows value swaps in an empty table: the live records are
    dropped and counted (flushed), not moved; other changes keep them."""
    path.egress("r1", "gate", "limit 2 idle 60s flows 64")
    path.send(segs(4000, seqs(3)))
    path.send([segs(5000 + i, [777])[0] for i in range(10)])
    assert path.xstats("r1")["records"] == 10
    path.change("r1", "flows 128")
    st = path.xstats("r1")
    assert (st["records"], st["flushed"], st["recorded"]) == (0, 10, 10), st
    # 28 bytes a record, and a 4-byte lost stamp per set of 8.
    assert (st["flows"], st["memory_used"]) == (128, 128 * 28 + 16 * 4), st
    path.send(segs(5000, [1777]))
    path.change("r1", "idle 30s limit 3")
    st = path.xstats("r1")
    assert (st["records"], st["flushed"], st["recorded"]) == (1, 10, 11), st


def test_full_size_tcp_defers_on_mtu(path):
    """(d) with real TCP and no room (MSS 1460): every record waits, no
    packet grows past the MTU."""
    for n in ("a", "b"):
        gw = "10.0.1.2" if n == "a" else "10.0.3.1"
        sh("ip route change default via %s advmss 1460" % gw,
           ns=path.ns[n])
    try:
        path.egress("r1", "1mbit", "limit 10")
        sn = path.sniff()
        path.iperf(secs=2)
        seen = sn.stop()
    finally:
        for n in ("a", "b"):
            gw = "10.0.1.2" if n == "a" else "10.0.3.1"
            sh("ip route change default via %s advmss 1448" % gw,
               ns=path.ns[n])
    st = path.xstats("r1")
    assert st["recorded"] > 0 and st["mtu_deferred"] > 0, st
    assert max(s["len"] for s in seen) == MTU
    assert all(not s["opt"] for s in seen if s["len"] == MTU)


# ---- records: ageing, eviction, modes ----

def test_full_table_evicts_oldest_then_idle_records_age_out(path):
    """A full set evicts its oldest records.  flows 8 is one set of the
    table, so the set is the table: 20 flows lose a segment, 12 then 8,
    the second group later than the first by more than the clock's
    resolution (one jiffy), so the table keeps exactly the second group.
    Those evictions gave up records in force: every flow of the set then
    leaves with UNKNOWN, in an empty option if it has no record.  Then
    records age out."""
    path.egress("r1", "gate", "limit 2 idle 30s flows 8")
    path.egress("r2", "epdn")
    sn = path.sniff()
    path.send(segs(5000, seqs(3)))
    path.send([segs(5100 + i, [777])[0] for i in range(12)])
    time.sleep(0.05)
    path.send([segs(5100 + i, [777])[0] for i in range(12, 20)])
    st = path.xstats("r1")
    assert (st["recorded"], st["records"], st["evicted"]) == (20, 8, 12)
    path.open_gate("r1")
    path.send([segs(5100 + i, [1777])[0] for i in range(20)])
    seen = sn.stop(want=23)
    second = [s for s in seen if s["sport"] >= 5100]
    ranged = sorted(s["sport"] - 5100 for s in second
                    if not s["opt"]["flags"] & F_EMPTY)
    assert ranged == list(range(12, 20)), ranged
    assert all(s["opt"]["flags"] & F_UNKNOWN for s in second), second
    assert path.xstats("r1")["unknown_stamps"] == 21   # and 5000's third
    # The eight carried go hold (100 ms) after their carriers.
    end = time.time() + 20
    while path.xstats("r1")["records"] and time.time() < end:
        time.sleep(0.1)
    st = path.xstats("r1")
    assert (st["records"], st["released"], st["aged"]) == (0, 8, 0), st
    # Ageing: five new records, then a short idle (a live change).
    batch("tc", path.r1, [
        "qdisc change dev r1-r2 root handle 1: " + GATE_SHUT,
        "qdisc change dev r1-r2 parent 1:1 handle 10: epdn limit 2"])
    path.send(segs(5300, seqs(3)) +
              [segs(5200 + i, [2777])[0] for i in range(5)])
    st = path.xstats("r1")
    assert (st["records"], st["evicted"]) == (5, 12), st
    path.change("r1", "idle 100ms")
    end = time.time() + 20
    while path.xstats("r1")["records"] and time.time() < end:
        time.sleep(0.2)
    st = path.xstats("r1")
    assert st["records"] == 0 and st["aged"] == 5, st


def sweep_runs(secs):
    """How many times the ageing timer ran in @secs seconds, counted from
    the timer:timer_expire_entry tracepoint in a private tracefs instance."""
    d = "/sys/kernel/tracing/instances/epdn%d" % os.getpid()
    os.mkdir(d)
    try:
        with open(d + "/events/timer/timer_expire_entry/enable", "w") as f:
            f.write("1")
        time.sleep(secs)
        with open(d + "/events/timer/timer_expire_entry/enable", "w") as f:
            f.write("0")
        with open(d + "/trace") as f:
            return f.read().count("function=epdn_age_timer")
    finally:
        os.rmdir(d)


def test_sweep_runs_only_while_records_exist(path):
    """The ageing sweep costs nothing when idle: its timer never runs with
    an empty table, runs while records exist, and stops once the last
    record has aged out."""
    # idle 4s: a debug kernel on a loaded host took over a second from
    # the drops to the first read.  flows 1024 is 128 sets, one sweep run
    # (the default table takes 64 runs, 3 s).
    path.egress("r1", "gate", "limit 2 idle 4s flows 1024")
    assert sweep_runs(1) == 0
    path.send(segs(4000, seqs(3)))
    path.send([segs(5000 + i, [777])[0] for i in range(3)])
    assert path.xstats("r1")["records"] == 3
    assert sweep_runs(6) > 0
    st = path.xstats("r1")
    assert (st["records"], st["aged"]) == (0, 3), st
    assert sweep_runs(1) == 0


def test_v2_records_corruption_v3_does_not(path):
    for mode, want in (("v2", True), ("v3", False)):
        path.reset()
        path.egress("r1", "epdn", "limit 1000 mode %s corrupt 30%%" % mode)
        sn = path.sniff()
        path.send(segs(6000, seqs(20)))
        seen = sn.stop(quiet=0.5)
        st = path.xstats("r1")
        assert st["corrupt_drops"] > 0 and st["overflow_drops"] == 0
        assert (st["recorded"] > 0) == want, (mode, st)
        assert len(seen) == 20 - st["corrupt_drops"]
        carried = [s["opt"] for s in seen if s["opt"]]
        assert len(carried) == st["stamps"]
        assert all(o["flags"] == F_V2 for o in carried)


# ---- (e) a flood of 100 000 flows stays within the flows bound ----

FLOOD_ETH = bytes.fromhex("020000000002020000000001") + b"\x08\x00"


def flood_gate(dev, flows):
    """A shut gate -> epdn limit 1 on @dev, the gate's one packet sent and
    epdn's one packet queued: every packet after that is dropped.  Returns
    the AF_PACKET socket bound to @dev."""
    sh("tc qdisc add dev %s root handle 1: %s" % (dev, GATE_SHUT))
    sh("tc qdisc add dev %s parent 1:1 handle 10: epdn limit 1 flows %d "
       "idle 3000s" % (dev, flows))
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((dev, ETH_P_IP))
    # One 1500-byte packet empties the tbf bucket, one more fills epdn;
    # at 1 byte/s the gate would pass that one after 25 minutes.
    for _ in range(2):
        xmit(s, FLOOD_ETH + ipv4("10.9.0.1", "10.9.0.2", b"u" * 1472,
                                 proto=17))
    return s


def memory_grown(before, after):
    """kB by which slab + vmalloc grew, and MemAvailable shrank."""
    grown = (after["Slab"] + after["VmallocUsed"]) - \
        (before["Slab"] + before["VmallocUsed"])
    return grown, before["MemAvailable"] - after["MemAvailable"]


def test_flood_of_100k_flows_stays_bounded(dummy):
    """(e) 100 000 distinct TCP flows each lose a segment at a shut gate:
    all are recorded, the table holds exactly `flows` records, the oldest
    are evicted, and kernel memory does not grow with the flood (records
    allocated one by one would add 2.4 MB, leaked packets 70 MB)."""
    flows, n = 4096, 100000
    s = flood_gate(dummy, flows)
    frame = bytearray(FLOOD_ETH + ipv4("10.200.0.0", "10.9.0.2",
                                       tcp(0, 80, 1, 10)))
    before = meminfo()
    for i in range(n):                # flow i: 10.200.x.y:(1024 + i % 50000)
        struct.pack_into("!I", frame, 26, 0x0ac80000 + i // 50000)
        struct.pack_into("!H", frame, 34, 1024 + i % 50000)
        xmit(s, frame)
    s.close()
    st = dev_xstats(dummy)
    after = meminfo()
    assert (st["recorded"], st["overflow_drops"]) == (n, n), st
    assert (st["records"], st["flows"]) == (flows, flows), st
    assert st["evicted"] == n - flows and st["rec_merged"] == 0, st
    assert st["record_bytes"] <= 29
    # The table was allocated at init; the flood adds neither records nor
    # leaked packets (100 000 skbs would be > 50 MB).  Slab and vmalloc are
    # the exact measure; MemAvailable also moves with the page cache and
    # reclaim (one run in five lost 16 MB at once with no slab growth), so
    # it only has to stay below what leaked packets would take.
    grown, used = memory_grown(before, after)
    print("flood: slab+vmalloc %+d kB, MemAvailable %+d kB" % (grown, -used))
    if not kasan_kernel():
        assert grown < 1024 and used < 32768, (grown, used)


def flood_halves(dev, n):
    """pktgen floods @dev in two bursts of about n / 2 packets: returns
    each burst's result and progress samples, and meminfo before each
    burst and after the second."""
    bursts, mem = [], [meminfo()]
    for _ in range(2):
        target = n // 2 if not bursts else n - sum(
            r["sent"] + r["dropped"] for r, _ in bursts)
        samples = pktgen.run_until({dev: target}, timeout=600)[dev]
        bursts.append((pktgen.result(dev), samples))
        mem.append(meminfo())
    return bursts, mem


@pytest.mark.realtime
def test_flood_of_1m_flows_keeps_up(dummy):
    """(e) 1 048 576 flows from pktgen, random addresses and ports (2^16 x
    64 000, so all but about 128 distinct), as fast as one CPU sends, so
    hundreds of records share a jiffy (tied stamps), into epdn flows
    1048576 behind a shut gate, in two bursts: every packet is recorded
    and counted, every new record is live, evicted or aged, kernel memory
    grows by the preallocated table and no more (the second burst moves
    nothing: one leaked record per packet would be 12 MB there), and the
    last tenth of the flood goes at least half as fast as the first (a
    full table costs about what an empty one does)."""
    flows = n = 1 << 20
    # First: adding clsact resets the root qdisc (the gate would reopen).
    pktgen.as_tcp(dummy)
    # pktgen's own flow array (1.5 MB of vmalloc) comes before `before`.
    pktgen.attach(0, dummy)
    try:
        pktgen.flows(dummy, 1 << 16, 64000, "10.128.0.0")
        before = meminfo()
        flood_gate(dummy, flows).close()
        t0 = time.monotonic()
        bursts, mem = flood_halves(dummy, n)
        secs = time.monotonic() - t0
    finally:
        pktgen.detach(0)
    st = dev_xstats(dummy)
    offered = sum(r["sent"] + r["dropped"] for r, _ in bursts)
    (r1, s1), (r2, s2) = bursts
    first = pktgen.rate_between(s1, 0, n // 10)
    o2 = r2["sent"] + r2["dropped"]
    last = pktgen.rate_between(s2, o2 - n // 10, o2)
    table = st["memory_used"] // 1024
    grown, used = memory_grown(before, mem[2])
    grown2, used2 = memory_grown(mem[1], mem[2])
    print("1M flood: %d packets in %.1f s (pktgen %.1f s), %.0f pps in the "
          "first tenth, %.0f in the last; recorded %d, rec_merged %d, "
          "records %d, evicted %d, aged %d; table %d kB; slab+vmalloc %+d "
          "kB, MemAvailable %+d kB (second burst: %+d kB, %+d kB)" % (
              offered, secs, (r1["usec"] + r2["usec"]) / 1e6, first, last,
              st["recorded"], st["rec_merged"], st["records"], st["evicted"],
              st["aged"], table, grown, -used, grown2, -used2))
    assert r1["sent"] == r2["sent"] == 0 and offered >= n, bursts
    assert st["recorded"] == st["overflow_drops"] == offered, (st, offered)
    assert st["flows"] == flows and st["records"] <= flows, st
    new = st["recorded"] - st["rec_merged"]
    assert st["evicted"] + st["aged"] + st["records"] == new, st
    # Random flows: about N^2 / 2 / 2^32 = 128 repeats.
    assert st["rec_merged"] < 1000, st
    # 8-way sets of a table sized to the flows hold about 86 % of as
    # many random flows (Poisson(8) per set); the rest are evicted.
    assert st["records"] > 0.8 * flows, st
    if kasan_kernel():
        return
    # The first burst may fill per-CPU page caches (a few MB, once).
    assert grown < table + 1024 and used < table + 32768, (grown, used)
    # MemAvailable moves with reclaim (exactly 4096 kB once, with slab and
    # vmalloc unmoved): slab + vmalloc are the exact check.
    assert grown2 < 1024 and used2 < 32768, (grown2, used2)
    assert last >= first / 2, (first, last)


# ---- (f) malformed and odd packets pass, the console stays clean ----

def good_frame(sport=8001, seq=5000, **kw):
    return ipv4(SND, RCV, tcp(sport, 80, seq, 100), **kw)


def as_received(hdr, etype, payload):
    """The frame a sniffer at the next hop sees: its receive path moves a
    VLAN tag out of the frame (into the skb) before taps see it."""
    if etype == ETH_P_8021Q:
        return hdr + payload[2:]
    return hdr + struct.pack("!H", etype) + payload


def test_odd_packets_pass_unchanged(path):
    """(f) Malformed and odd frames of a flow that has a record leave
    byte for byte; the record goes into every valid carrier (an EPDN
    option behind NOPs and record-route, rewritten in place, and a plain
    packet, which gains one)."""
    path.egress("r1", "gate", "limit 2 idle 60s")
    sn = path.sniff(raw=True)
    path.send(segs(8000, seqs(3)))
    path.send(segs(8001, seqs(3, 100000)))          # dropped: the record
    path.change("r1", "limit 1000")
    odd = odd_frames(SND, RCV)
    carrier = ipv4(SND, RCV, tcp(8001, 80, 7000, 100),
                   opts=b"\x01\x01" + RR_OPT + epdn_opt(64, F_EMPTY | F_HOST))
    path.inject("r1", odd + [(ETH_P_IP, carrier), (ETH_P_IP, good_frame())])
    path.open_gate("r1")
    frames = sn.stop(want=3 + len(odd) + 2)
    st = path.xstats("r1")
    mine = [f for f in frames if f[6:12] == bytes.fromhex("02ee00020001")
            and f[26:30] != socket.inet_aton("10.0.2.1")]
    hdr = bytes.fromhex("02ee0002000202ee00020001")
    sent = [as_received(hdr, e, p) for e, p in odd]
    got = mine[3:]
    assert got[:len(odd)] == sent, [(i, a.hex(), b.hex()) for i, (a, b) in
                                    enumerate(zip(got, sent)) if a != b]
    o = parse_epdn(got[len(odd)][14:])
    assert (o["min"], o["max"], o["flags"], o["ettl"]) == \
        (100000, 102999, F_HOST, 64), o
    # The record stays: the plain packet after takes it too (sent from
    # r1 itself, so HOST).
    o = parse_epdn(got[len(odd) + 1][14:])
    assert (o["min"], o["max"], o["flags"], o["ettl"]) == \
        (100000, 102999, F_HOST, 64), o
    assert st["records"] + st["released"] == 1, st
    assert st["merges"] == 1 and st["stamps"] == 1, st
    assert (st["not_ipv4"], st["fragments"], st["malformed"],
            st["opt_deferred"], st["nomem"]) == (2, 2, 13, 2, 0), st
    assert st["not_tcp"] == 2, st           # the UDP frame and the kick


def unstamp(ip):
    """The packet before a gateway inserted an option at offset 20."""
    b = bytearray(ip[:20] + ip[32:])
    b[0] -= 3
    struct.pack_into("!H", b, 2, (struct.unpack("!H", ip[2:4])[0] - 12) &
                     0xffff)
    return bytes(b)


def blank(ip):
    """The packet with its header checksum and EPDN option contents zeroed:
    what a gateway may change."""
    b = bytearray(ip)
    if len(b) >= 12:
        b[10:12] = b"\0\0"
    o = parse_epdn(ip) if len(ip) >= 20 and ip[0] >> 4 == 4 else None
    if o:
        b[o["at"] + 2:o["at"] + 12] = bytes(10)
    return bytes(b)


def fuzz_batch(path, seed):
    """3000 mutated packets (fuzz_frames(seed)) through a small, overflowing
    epdn on r1: each one leaves byte for byte, or differs only by an EPDN
    option that was inserted or rewritten (with a correct header checksum).
    Returns epdn's counters."""
    frames = fuzz_frames(3000, seed, SND, RCV)
    # 300 kbit/s drains ~250 of these packets a second: far fewer than a
    # sender under emulation offers, so most are dropped and recorded.
    path.reset()
    path.egress("r1", "300kbit", "limit 4 mode v2 idle 60s")
    sn = path.sniff(raw=True)
    path.inject("r1", frames)
    hdr = bytes.fromhex("02ee0002000202ee00020001")
    got = [f for f in sn.stop() if f[:12] == hdr]
    st = path.xstats("r1")
    sent = {as_received(hdr, e, p) for e, p in frames}
    blanked = {blank(f[14:]) for f in sent if f[12:14] == b"\x08\x00"}
    changed = 0
    for f in got:
        if f in sent:
            continue
        changed += 1
        ip = f[14:]
        assert f[12:14] == b"\x08\x00" and csum(ip[:(ip[0] & 15) * 4]) == 0
        assert blank(ip) in blanked or blank(unstamp(ip)) in blanked, \
            ip.hex()
    assert len(got) + st["overflow_drops"] == len(frames), (len(got), st)
    # Inserting always changes a packet; a rewrite may leave it as it was.
    assert st["stamps"] <= changed <= st["stamps"] + st["merges"], \
        (changed, st)
    assert st["overflow_drops"] > 1000 and st["recorded"] > 0, st
    assert st["malformed"] > 0 and st["fragments"] > 0, st
    return st


def test_fuzzed_packets_pass_or_gain_only_the_option(path):
    """(f) Mutated packets through a small, overflowing epdn pass unchanged
    or gain only a valid option (fuzz_batch).  The batches must between
    them take both the insert and the rewrite path; which packets leave
    the queue depends on the emulated CPU's speed, so a batch that took
    only one of them is followed by another seed (at most three)."""
    seen = {"stamps": 0, "merges": 0}
    for seed in (1, 2, 3):
        st = fuzz_batch(path, seed)
        print("fuzz seed %d: stamps %d merges %d nomem %d records %d "
              "overflow_drops %d" % (seed, st["stamps"], st["merges"],
                                     st["nomem"], st["records"],
                                     st["overflow_drops"]))
        for k in seen:
            seen[k] += st[k]
        if all(seen.values()):
            break
    assert all(seen.values()), seen


def eth_from(dev, dst="020000000001"):
    """The destination and source addresses of a frame that @dev sends."""
    with open("/sys/class/net/%s/address" % dev) as f:
        return bytes.fromhex(dst + f.read().strip().replace(":", ""))


def test_bad_input_on_a_dummy_is_counted(dummy):
    """Frames injected on an epdn egress: none may crash, all are sent."""
    sh("tc qdisc add dev %s root epdn limit 1000" % dummy)
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    hdr = eth_from(dummy)
    frames = odd_frames(SND, RCV)
    for etype, payload in frames:
        s.sendto(hdr + struct.pack("!H", etype) + payload, (dummy, etype))
    s.close()
    st = dev_xstats(dummy)
    assert (st["not_ipv4"], st["fragments"], st["malformed"],
            st["not_tcp"]) == (2, 2, 13, 1), st
    assert st["untouched"] == len(frames) and st["packets"] == len(frames)


TUNNEL_KEY = "tunnel_key set src_ip 192.0.2.1 dst_ip 192.0.2.2 id 1"


def test_tunnel_metadata_dst_uses_the_device_mtu(dummy):
    """tc tunnel_key set (as BPF's skb_set_tunnel_key, or mirred from a
    collect_md tunnel) gives a packet a metadata dst: not a route, and
    its dst_ops' mtu() reads a device it does not have.  Such a packet
    is stamped against the device's MTU alone.  A segment lost on the
    link (corrupt 100%) leaves a record; of the flow's next two, the one
    12 bytes too big for the dummy's 1500 cannot carry it (mtu_deferred),
    the 1488-byte one carries it."""
    sh("tc qdisc add dev %s clsact" % dummy)
    if sh("tc filter add dev %s egress matchall action %s" %
          (dummy, TUNNEL_KEY), check=False).returncode:
        pytest.skip("this kernel has no tunnel_key action "
                    "(CONFIG_NET_ACT_TUNNEL_KEY)")
    sh("tc qdisc add dev %s root epdn mode v2 corrupt 100%%" % dummy)
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    hdr = eth_from(dummy) + struct.pack("!H", ETH_P_IP)
    xmit(s, hdr + segs(9001, [1000])[0], (dummy, ETH_P_IP))
    sh("tc qdisc change dev %s root epdn corrupt 0" % dummy)
    for p in segs(9001, [2000], size=1449) + segs(9001, [3449], size=1448):
        assert xmit(s, hdr + p, (dummy, ETH_P_IP))
    s.close()
    st = dev_xstats(dummy)
    assert (st["corrupt_drops"], st["recorded"], st["packets"]) == \
        (1, 1, 2), st
    # the record stays for the hold after its first carrier (Failing safe)
    assert (st["mtu_deferred"], st["stamps"]) == (1, 1), st


@pytest.fixture
def veth():
    """A veth pair in this namespace, MTU 9000: (sending end, other end)."""
    ends = ("epdnv%d" % os.getpid(), "epdnw%d" % os.getpid())
    sh("ip link add %s mtu 9000 type veth peer name %s mtu 9000" % ends)
    for dev in ends:
        sysctl(None, "net.ipv6.conf.%s.disable_ipv6" % dev, 1)
        sh("ip link set %s up" % dev)
    yield ends
    sh("ip link del %s" % ends[0], check=False)


def test_rewrite_in_a_paged_header_sums_the_whole_header(veth):
    """An EPDN option followed by record-route, in frames over a page long
    sent through AF_PACKET: such an skb holds only the link header in its
    linear part (packet_alloc_skb()), the IP header sits in a page.
    EPDN-TTL one above TTL is lowered to TTL in place, and the header
    checksum must cover the record-route option as it leaves, not what
    lies past the bytes made writable for the EPDN option.  Each frame's
    record-route address differs, and the frames are addressed to none
    of the other end's addresses (its stack drops them unread), so that
    no stale copy of one frame's header can pass for another's."""
    a, b = veth
    hdr = eth_from(a, "020000000009") + struct.pack("!H", ETH_P_IP)

    def frame(i, ettl):
        rr = bytes([7, 7, 8]) + socket.inet_aton("192.0.2.%d" % (i + 1))
        return hdr + ipv4(SND, RCV, tcp(9101, 80, 1000 + 4900 * i, 4900),
                          opts=epdn_opt(ettl, F_EMPTY | F_HOST) + rr)

    n = 8
    sh("tc qdisc add dev %s root epdn" % a)
    sn = Sniffer(None, b, raw=True)
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    for i in range(n):
        assert xmit(s, frame(i, 65), (a, ETH_P_IP))
    s.close()
    got = [f for f in sn.stop(want=n) if f[:6] == hdr[:6]]
    st = dev_xstats(a)
    assert [csum(f[14:54]) for f in got] == [0] * n, \
        [f[14:54].hex() for f in got]
    assert got == [frame(i, 64) for i in range(n)]
    assert st["ttl_updates"] == n, st


# ---- (g) change and unload under traffic ----

def tx_packets(ns, dev):
    with netns(ns):
        with open("/proc/thread-self/net/dev") as f:
            for line in f:
                name, _, rest = line.partition(":")
                if name.strip() == dev:
                    return int(rest.split()[9])
    raise AssertionError("no device " + dev)


def test_live_change_under_traffic_then_unload(path):
    """(g) tc qdisc change of every option, in a loop, under 4 TCP flows;
    rmmod is refused while the qdisc exists; then, with the traffic still
    flowing, the qdisc is deleted, the module unloads at once, and the
    flows go on through the device's default queue."""
    path.egress("r1", "20mbit", "limit 10")
    srv = subprocess.Popen(["ip", "netns", "exec", path.b, "iperf3", "-s",
                            "-1"], stdout=subprocess.DEVNULL)
    client = None
    try:
        path._wait_listen(5201)
        client = subprocess.Popen(["ip", "netns", "exec", path.a, "iperf3",
                                   "-c", RCV, "-t", "60", "-P", "4"],
                                  stdout=subprocess.DEVNULL)
        changes = ["flows 16", "flows 65536 mode v2", "limit 3 flows 1024",
                   "red min 2k max 8k probability 0.2 ecn", "idle 1ms",
                   "red off limit 50 idle 2s flows 16", "corrupt 1%",
                   "corrupt 0 bytelimit 20k", "bytelimit 0 flows 70000"]
        while path.xstats("r1")["packets"] < 200:
            assert client.poll() is None, "iperf3 failed"
            time.sleep(0.2)
        for _ in range(3):
            batch("tc", path.r1, [
                "qdisc change dev r1-r2 parent 1:1 handle 10: epdn " + c
                for c in changes])
            time.sleep(0.3)
        st = path.xstats("r1")
        assert st["recorded"] > 0 and st["records"] <= st["flows"], st
        assert st["flows"] == 70000, st
        # rmmod under traffic: refused while the qdisc exists.
        r = run(["rmmod", "sch_epdn"], check=False)
        assert r.returncode != 0 and "in use" in r.stderr, r.stderr
        # Delete the qdisc under traffic, then unload at once.
        path.reset()
        run(["rmmod", "sch_epdn"])
        sent = tx_packets(path.r1, "r1-r2")
        time.sleep(1)
        assert client.poll() is None, "iperf3 stopped"
        assert tx_packets(path.r1, "r1-r2") > sent + 100
    finally:
        for p in (client, srv):
            if p and p.poll() is None:
                p.kill()
            if p:
                p.wait()
        insmod(KO)
