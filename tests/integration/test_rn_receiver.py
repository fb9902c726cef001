# SPDX-License-Identifier: GPL-2.0
"""In-VM tests of rn_host: the RN-TCP receiver and the EPDN origin
(tcp_rn/rn_hooks.c, docs/rn-tcp.md).

Run inside tools/vm-run (make test), as root, after `make modules tc`:

    tools/vm-run --timeout 900 -- python3 -m pytest -p no:cacheprovider \\
        -v tests/integration/test_rn_receiver.py

All-EPDN path (origin, EPDN-TTL, reordering, EPDN drops):

     snd -------------- r1 -------------------- r2 -------------- rcv
  10.0.1.1      10.0.1.2  10.0.2.1        10.0.2.2  10.0.3.1      10.0.3.2
  origin on     [r1-r2: epdn, or             [r2-rcv: epdn,    receiver on
  [snd-r1: netem  tbf 5mbit -> epdn limit 8]   or pfifo]       advmss 1448
   reorder]

Direct pair (bad input, floods, MTU, unload):

     snd ---------------------------------- rcv
  10.0.9.1, fd00:9::1                  10.0.9.2, fd00:9::2

This file is also its own helper: run inside a namespace with --send FILE
it crafts packets from a JSON spec with scapy, with --raw FILE it builds
TCP/IPv4 packets itself (fast, for floods).
"""

import json
import os
import shlex
import socket
import struct
import subprocess
import sys
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
# Run as a helper too: this checkout's satnet and the tests' kit.
sys.path[:0] = [os.path.join(TOP, "testbed"), os.path.join(TOP, "tests")]

from lib.kernel import qdisc_stats, rn_host_stats  # noqa: E402
from lib.packets import (F_EMPTY, F_HOST, Tcpdump, csum,  # noqa: E402
                         epdn_opt, raw_tcp)
from satnet.kmod import (get_param, insmod, restore_params,  # noqa: E402
                         rmmod, set_param)
from satnet.paths import ko  # noqa: E402

KO = ko("rn_host")
EPDN_KO = ko("sch_epdn")
TC_LIB = os.path.join(TOP, "build", "tc")
ME = os.path.abspath(__file__)
PY = "/usr/bin/python3"


# ---- packet crafting (runs inside a namespace, with scapy) ----

# What the origin sends from a host with TTL 64: EMPTY|HOST, EPDN-TTL 64.
EMPTY_OPT = epdn_opt(64, F_EMPTY | F_HOST).hex()


def build(p):
    """One packet from a dict (see test_bad_input_is_counted)."""
    from scapy.all import IP, IPv6, TCP, UDP, ICMP, IPOption, Raw
    if p.get("v6"):
        return IPv6(src=p["src"], dst=p["dst"]) / \
            TCP(sport=p.get("sport", 4000), dport=p.get("dport", 80),
                seq=p.get("seq", 1), flags="PA") / Raw(b"x" * 100)
    opts = [IPOption(bytes.fromhex(h)) for h in p.get("opts", [])]
    ip = IP(src=p["src"], dst=p["dst"], ttl=p.get("ttl", 64), options=opts,
            flags=p.get("ipflags", 0), frag=p.get("frag", 0),
            id=p.get("id", 1))
    proto = p.get("proto", "tcp")
    payload = Raw(b"x" * p.get("len", 100))
    if proto == "udp":
        return ip / UDP(sport=5000, dport=5001) / payload
    if proto == "icmp":
        return ip / ICMP() / payload
    if proto == "rawtcp":
        ip.proto = 6
        return ip / Raw(bytes.fromhex(p["raw"]))
    tcp = TCP(sport=p.get("sport", 4000), dport=p.get("dport", 80),
              seq=p.get("seq", 1), ack=p.get("ack", 0),
              flags=p.get("flags", "PA"), window=p.get("win", 65535))
    if "doff" in p:
        tcp.dataofs = p["doff"]
    if "chksum" in p:
        tcp.chksum = p["chksum"]
    if p.get("len", 100) == 0:
        return ip / tcp
    return ip / tcp / payload


def send_spec(spec):
    """Send the packets in order; {"sleep": s} pauses between batches."""
    from scapy.all import IP, conf, send, fragment
    conf.verb = 0
    pkts = []
    for p in spec + [dict(sleep=0)]:
        if "sleep" in p:
            if pkts:
                send(pkts, inter=0)
            pkts = []
            time.sleep(p["sleep"])
            continue
        pkt = build(p)
        if p.get("fragment"):
            whole = IP(bytes(pkt))         # checksums over the whole packet
            pkts += fragment(whole, fragsize=p["fragment"])[:p.get("keep",
                                                                  99)]
        else:
            pkts.append(pkt)


def send_raw(spec):
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    for p in spec:
        if "sleep" in p:
            time.sleep(p["sleep"])
        else:
            s.sendto(raw_tcp(p), (p["dst"], 0))


def tcp_over(src, dst, th):
    """@th with its checksum filled in, for a raw IPPROTO_TCP socket."""
    pseudo = socket.inet_aton(src) + socket.inet_aton(dst) + \
        struct.pack("!BBH", 0, 6, len(th))
    th = th[:16] + b"\0\0" + th[18:]
    return th[:16] + struct.pack("!H", csum(pseudo + th)) + th[18:]


def lo_frames(cap, sport, want):
    """TCP segments of the first @want frames from port @sport on lo (a
    tap sees each frame there once, as it loops back in)."""
    got = []
    while len(got) < want:
        frame = cap.recv(1 << 17)
        ip = frame[14:]
        th = ip[(ip[0] & 15) * 4:]
        if ip[9] == 6 and struct.unpack("!H", th[:2])[0] == sport:
            got.append(th)
    return got


def send_lo_raw(spec):
    """A raw IPPROTO_TCP socket (the kernel builds the IP header) sends a
    pure ACK, then an ACK with spec["len"] bytes of data and the
    drop-negative bit, from 127.0.0.1 to spec["dst"] through lo (where
    nothing answers them); prints, as JSON, the TCP bytes sent and those
    an AF_PACKET socket on lo saw leave."""
    cap = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                        socket.htons(0x0800))
    cap.bind(("lo", 0))
    cap.settimeout(10)
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_TCP)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 20)
    a, b = "127.0.0.1", spec["dst"]
    s.bind((a, 0))
    sent = []
    for n in (0, spec["len"]):
        th = raw_tcp(dict(src=a, dst=b, sport=4000, dport=4001, seq=7000,
                          ack=9000, flags="A", len=n))[20:]
        if n:
            th = tcp_over(a, b, th[:12] + bytes([th[12] | 0x02]) + th[13:])
        s.sendto(th, (b, 0))
        sent.append(th.hex())
    seen = [th.hex() for th in lo_frames(cap, 4000, 2)]
    print(json.dumps(dict(sent=sent, seen=seen)))


def main():
    with open(sys.argv[2]) as f:
        spec = json.load(f)
    if sys.argv[1] == "--send":
        send_spec(spec)
    elif sys.argv[1] == "--raw":
        send_raw(spec)
    elif sys.argv[1] == "--lo-raw":
        send_lo_raw(spec)


if __name__ == "__main__":
    main()
    sys.exit(0)

# ---- host side ----

import pytest  # noqa: E402



def sh(cmd, ns=None, check=True, timeout=120):
    if ns:
        cmd = "ip netns exec %s %s" % (ns, cmd)
    env = dict(os.environ, TC_LIB_DIR=TC_LIB)
    r = subprocess.run(cmd, shell=True, capture_output=True, text=True,
                       env=env, timeout=timeout)
    if check and r.returncode:
        raise AssertionError("%s: %s%s" % (cmd, r.stdout, r.stderr))
    return r


# A process that lives in each namespace of a Net: /proc/PID/net/... shows
# that namespace's files without starting a process per read.
ANCHORS = {}


def proc_net(ns, name):
    with open("/proc/%d/net/%s" % (ANCHORS[ns].pid, name)) as f:
        return f.read()


def listening(ns, port):
    for name in ("tcp", "tcp6"):
        for ln in proc_net(ns, name).splitlines()[1:]:
            f = ln.split()
            if f[3] == "0A" and int(f[1].rsplit(":", 1)[1], 16) == port:
                return True
    return False


def wait_listening(ns, port):
    for _ in range(300):
        if listening(ns, port):
            return
        time.sleep(0.1)
    raise AssertionError("nothing listens on %d in %s" % (port, ns))


def show(st):
    """Counters for an assertion message: the non-zero ones."""
    return " ".join("%s=%d" % kv for kv in st.items() if kv[1])


def send(ns, spec, raw=False, mode=None):
    """Craft and send packets in a namespace: scapy, or raw (fast), or
    another --mode of the helper; returns what the helper printed."""
    path = "/tmp/rn-spec-%d.json" % os.getpid()
    mode = mode or ("--raw" if raw else "--send")
    with open(path, "w") as f:
        json.dump(spec, f)
    try:
        return sh("%s %s %s %s" % (PY, ME, mode, path), ns=ns,
                  timeout=300).stdout
    finally:
        os.unlink(path)


def ip_batch(lines, ns=None):
    """Many ip(8) commands in one process."""
    cmd = ["ip"] + (["-n", ns] if ns else []) + ["-batch", "-"]
    r = subprocess.run(cmd, input="\n".join(lines) + "\n", text=True,
                       capture_output=True, timeout=120)
    assert r.returncode == 0, "%s: %s" % (lines, r.stderr)


class Net:
    """Fresh namespaces, routes and devices; torn down on exit."""

    def __init__(self, routers=True):
        pfx = "rn%d" % os.getpid()
        self.snd, self.r1, self.r2, self.rcv = (pfx + x for x in
                                                ("s", "r1", "r2", "r"))
        self.nss = [self.snd, self.rcv] + ([self.r1, self.r2] if routers
                                           else [])
        self.routers = routers
        self.procs = {ns: [] for ns in self.nss}

    def __enter__(self):
        try:
            self._build()
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc):
        for ns in self.nss:
            self.kill(ns)
        subprocess.run(["ip", "-batch", "-"], text=True, capture_output=True,
                       input="".join("netns del %s\n" % ns
                                     for ns in self.nss))

    def kill(self, ns):
        """Stop every process we started in ns (the anchor too)."""
        for p in self.procs[ns]:
            if p.poll() is None:
                p.kill()
            p.wait()
        self.procs[ns] = []
        ANCHORS.pop(ns, None)

    def start(self, ns, argv, **kw):
        p = subprocess.Popen(["ip", "netns", "exec", ns] + argv, **kw)
        self.procs[ns].append(p)
        return p

    def _build(self):
        links = self.links()
        ip_batch(["netns add %s" % ns for ns in self.nss] +
                 ["link add %s netns %s type veth peer name %s netns %s"
                  % (d1, n1, d2, n2) for n1, d1, _, n2, d2, _ in links])
        conf = {ns: ["link set lo up"] for ns in self.nss}
        tune = {ns: [] for ns in self.nss}
        for n1, d1, a1, n2, d2, a2 in links:
            for ns, dev, addr in ((n1, d1, a1), (n2, d2, a2)):
                conf[ns] += ["addr add %s dev %s" % (addr, dev),
                             "link set %s up" % dev]
                tune[ns].append("ethtool -K %s tso off gso off gro off "
                                ">/dev/null 2>&1" % dev)
        for ns, lines in self.routes().items():
            conf[ns] += lines
        for ns in self.nss:
            ip_batch(conf[ns], ns=ns)
            if ns in (self.r1, self.r2):
                tune[ns].append("sysctl -qw net.ipv4.ip_forward=1")
            sh("sh -c %s" % shlex.quote("; ".join(tune[ns])), ns=ns)
            ANCHORS[ns] = self.start(ns, ["sleep", "3600"])
        # One echo a second until a reply: the links come up unevenly.
        sh("ping -c 1 -w 20 %s" % self.dst, ns=self.snd, timeout=60)

    def links(self):
        if not self.routers:
            self.dst, self.sdev, self.rdev = "10.0.9.2", "snd-rcv", "rcv-snd"
            return [(self.snd, "snd-rcv", "10.0.9.1/24",
                     self.rcv, "rcv-snd", "10.0.9.2/24")]
        self.dst, self.sdev, self.rdev = "10.0.3.2", "snd-r1", "rcv-r2"
        return [(self.snd, "snd-r1", "10.0.1.1/24",
                 self.r1, "r1-snd", "10.0.1.2/24"),
                (self.r1, "r1-r2", "10.0.2.1/24",
                 self.r2, "r2-r1", "10.0.2.2/24"),
                (self.r2, "r2-rcv", "10.0.3.1/24",
                 self.rcv, "rcv-r2", "10.0.3.2/24")]

    def routes(self):
        if not self.routers:
            return {self.snd: ["addr add fd00:9::1/64 dev snd-rcv nodad"],
                    self.rcv: ["addr add fd00:9::2/64 dev rcv-snd nodad"]}
        # Room for the 12-byte option: the receiver advertises MSS 1448.
        return {self.snd: ["route add default via 10.0.1.2"],
                self.r1: ["route add 10.0.3.0/24 via 10.0.2.2"],
                self.r2: ["route add 10.0.1.0/24 via 10.0.2.1"],
                self.rcv: ["route add default via 10.0.3.1 advmss 1448"]}

    def origin(self, on=1):
        sh("sysctl -qw net.rn.epdn_origin=%d" % on, ns=self.snd)

    def receiver(self, on=1):
        sh("sysctl -qw net.rn.receiver=%d" % on, ns=self.rcv)

    def listen(self, port):
        """A TCP listener in rcv that accepts and reads until killed."""
        code = ("import socket,threading\n"
                "s=socket.socket();s.setsockopt(1,2,1)\n"
                "s.bind(('0.0.0.0',%d));s.listen(4096)\n"
                "def rd(c):\n"
                "    while c.recv(65536): pass\n"
                "while True:\n"
                "    c,_=s.accept()\n"
                "    threading.Thread(target=rd,args=(c,),daemon=True)"
                ".start()\n" % port)
        p = self.start(self.rcv, [PY, "-c", code])
        wait_listening(self.rcv, port)
        return p

    def iperf(self, secs=2, flows=1, wait=True):
        port = 5201 + len(self.procs[self.rcv])
        srv = self.start(self.rcv, ["iperf3", "-s", "-1", "-p", str(port)],
                         stdout=subprocess.DEVNULL)
        wait_listening(self.rcv, port)
        cmd = ["iperf3", "-c", self.dst, "-p", str(port), "-t", str(secs),
               "-P", str(flows)]
        if not wait:
            return self.start(self.snd, cmd, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
        r = subprocess.run(["ip", "netns", "exec", self.snd] + cmd,
                           capture_output=True, text=True,
                           timeout=120 + secs)
        assert r.returncode == 0, r.stdout + r.stderr
        srv.wait(timeout=60)
        return r.stdout


@pytest.fixture(scope="module", autouse=True)
def module_loaded():
    if not os.path.exists(KO):
        pytest.skip("build first: make modules")
    insmod(KO)
    yield
    rmmod("rn_host")


@pytest.fixture
def epdn():
    if not os.path.exists(EPDN_KO) or \
            not os.path.exists(os.path.join(TC_LIB, "q_epdn.so")):
        pytest.skip("sch_epdn not built: make modules tc")
    insmod(EPDN_KO, reload=False)


@pytest.fixture
def params():
    """Restore the module parameters a test changes."""
    saved = [("rn_host", n, get_param("rn_host", n, raw=True))
             for n in ("max_flows", "flow_idle_ms")]
    yield
    restore_params(saved)


def test_sysctls_are_per_namespace():
    with Net(routers=False) as n:
        for ns in (n.snd, n.rcv):
            st = rn_host_stats(ns)
            assert (st["receiver"], st["epdn_origin"],
                    st["require_host"]) == (0, 0, 1)
        n.receiver()
        assert rn_host_stats(n.rcv)["receiver"] == 1
        assert rn_host_stats(n.snd)["receiver"] == 0
        assert sh("sysctl -n net.rn.receiver", ns=n.rcv).stdout.strip() == "1"
        r = sh("sysctl -w net.rn.epdn_origin=2", ns=n.snd, check=False)
        assert r.returncode != 0
        assert rn_host_stats(n.snd)["epdn_origin"] == 0


@pytest.mark.parametrize("r2_epdn", [True, False],
                         ids=["all-epdn", "legacy-r2"])
def test_origin_stamps_and_epdn_ttl(epdn, r2_epdn):
    with Net() as n:
        sh("tc qdisc add dev r1-r2 root epdn limit 1000", ns=n.r1)
        sh("tc qdisc add dev r2-rcv root %s" %
           ("epdn limit 1000" if r2_epdn else "pfifo limit 1000"), ns=n.r2)
        n.origin()
        n.receiver()
        cap = Tcpdump(n.rcv, n.rdev, "src host 10.0.1.1 and greater 200")
        n.iperf(secs=1)
        seen = cap.stop(want=30)
        snd, rcv = rn_host_stats(n.snd), rn_host_stats(n.rcv)
    assert len(seen) >= 10, seen[:3]
    for ip in seen:
        # The option alone, first: EMPTY|HOST, version 1.
        assert ip["ihl"] == 32 and ip["opt"] and ip["opt"]["at"] == 20, ip
        assert ip["opt"]["version"] == 1
        assert ip["opt"]["flags"] == F_EMPTY | F_HOST
        assert ip["ttl"] == 62
        # Each EPDN router lowered EPDN-TTL with TTL; pfifo at r2 did not.
        assert ip["opt"]["ettl"] == (62 if r2_epdn else 63)
    assert snd["origin_stamped"] > 0 and snd["origin_skip_mtu"] == 0
    assert snd["origin_skip_opts"] == 0 and snd["origin_nomem"] == 0
    if r2_epdn:
        assert rcv["opt_trusted"] > 100 and rcv["opt_distrusted"] == 0
    else:
        assert rcv["opt_distrusted"] > 100 and rcv["opt_trusted"] == 0
        assert rcv["acks_marked"] == 0


BIT = "src host 10.0.3.2 and tcp[12] & 0x02 != 0"


def names_hole(ack):
    """Does this ACK name a hole: is data SACKed above it?"""
    return any(0 < (left - ack["ack"]) & 0xffffffff < 1 << 31
               for left, _ in ack["sack"])


def test_reorder_only_sets_the_bit(epdn):
    with Net() as n:
        sh("tc qdisc add dev r1-r2 root epdn limit 1000", ns=n.r1)
        sh("tc qdisc add dev r2-rcv root epdn limit 1000", ns=n.r2)
        # Reordering on the sender's own egress: hosts lower no TTL.
        sh("tc qdisc add dev snd-r1 root netem delay 10ms reorder 25% 50%",
           ns=n.snd)
        n.origin()
        # Control: the same path with the receiver off sets no bit.
        cap = Tcpdump(n.snd, n.sdev, BIT)
        n.iperf(secs=1)
        assert cap.stop() == []
        n.receiver()
        cap = Tcpdump(n.snd, n.sdev, BIT)
        n.iperf(secs=2)
        marked = cap.stop()
        rcv = rn_host_stats(n.rcv)
        drops = [qdisc_stats("r1-r2", ns=n.r1), qdisc_stats("r2-rcv", ns=n.r2)]
    assert all(d["overflow_drops"] == 0 and d["recorded"] == 0
               for d in drops), drops
    assert rcv["opt_trusted"] > 0 and rcv["opt_distrusted"] == 0
    assert rcv["acks_marked"] > 0, show(rcv)
    assert len(marked) > 0, show(rcv)
    # The sender saw the bit on duplicate ACKs that name a hole.
    assert any(names_hole(p) for p in marked), marked[:5]


def first_sends(seen):
    """(port, seq) -> the IP ID of its first transmission, of the data
    segments a sender's capture saw (its IP IDs grow with each send)."""
    first = {}
    for p in seen:
        if p["payload"] > 0:
            first.setdefault((p["sport"], p["seq"]), p["ident"])
    return first


def hole_fates(acks, sent, got):
    """For each marked ACK that names a hole: "reordered" when the first
    transmission of the segment at the hole reached the receiver, else
    "dropped" (or "unknown": no segment was sent from that byte)."""
    first = first_sends(sent)
    arrived = {(p["sport"], p["seq"], p["ident"]) for p in got}
    fates = []
    for a in acks:
        if not (a["src"] == "10.0.3.2" and a["dn"] and names_hole(a)):
            continue
        ident = first.get((a["dport"], a["ack"]))
        fate = "unknown" if ident is None else "reordered" if \
            (a["dport"], a["ack"], ident) in arrived else "dropped"
        fates.append((fate, a["dport"], a["ack"], a["sack"]))
    return fates


def test_epdn_drops_leave_the_bit_clear(epdn):
    with Net() as n:
        sh("tc qdisc add dev r1-r2 root handle 1: tbf rate 5mbit "
           "burst 16k latency 100ms", ns=n.r1)
        sh("tc qdisc add dev r1-r2 parent 1:1 handle 10: epdn limit 8",
           ns=n.r1)
        sh("tc qdisc add dev r2-rcv root epdn limit 1000", ns=n.r2)
        n.origin()
        n.receiver()
        at_snd = Tcpdump(n.snd, n.sdev, "tcp")
        at_rcv = Tcpdump(n.rcv, n.rdev, "src host 10.0.1.1 and greater 200")
        n.iperf(secs=2, flows=2)
        sent, got = at_snd.stop(), at_rcv.stop()
        rcv, snd = rn_host_stats(n.rcv), rn_host_stats(n.snd)
        gw = qdisc_stats("r1-r2", ns=n.r1)
    assert gw["overflow_drops"] > 0 and gw["merges"] > 0, gw
    assert gw["mtu_deferred"] == 0, gw
    assert snd["origin_skip_mtu"] == 0
    assert rcv["opt_trusted"] > 0 and rcv["opt_distrusted"] == 0
    # Holes the gateway reported: duplicate ACKs name them, bit clear.
    assert rcv["acks_unmarked"] > 0, show(rcv)
    # A marked ACK that names a hole is right only where the path
    # reordered: the hole's first transmission arrived after the data
    # SACKed above it.  This path has no netem, yet the emulated VM's
    # datapath does reorder now and then (a segment sent in order at snd
    # overtakes up to four others before rcv); the bit must never name a
    # hole the gateway dropped.  §IV-A may also mark a cumulative ACK
    # whose next segment is in flight behind a retransmission
    # (§IV, P:n < Q:n < P:min): such an ACK names no hole.
    fates = hole_fates(sent, sent, got)
    wrong = [f for f in fates if f[0] != "reordered"]
    assert len(got) > 100 and not wrong, (len(fates), wrong[:5])


def test_origin_skips_full_size_packets():
    with Net(routers=False) as n:
        n.origin()
        n.receiver()
        n.iperf(secs=1)
        snd, rcv = rn_host_stats(n.snd), rn_host_stats(n.rcv)
    # No advmss: full-size segments have no room and leave unstamped.
    assert snd["origin_skip_mtu"] > 0 and snd["origin_nomem"] == 0
    assert rcv["opt_absent"] > 0
    # No router: EPDN-TTL == TTL for the small ones that were stamped.
    assert snd["origin_stamped"] > 0 and rcv["opt_trusted"] > 0


def test_bad_input_is_counted_not_fatal():
    src, dst = "10.0.9.1", "10.0.9.2"
    good = EMPTY_OPT
    spec = [
        # options: 3 malformed, 1 TTL mismatch, 1 router-made, 1 trusted
        dict(opts=[epdn_opt(64, F_HOST, length=8).hex()]),
        dict(opts=[epdn_opt(64, F_HOST, version=2).hex()]),
        dict(opts=[epdn_opt(64, F_HOST, lo=9000, hi=1000).hex()]),
        dict(opts=[epdn_opt(60, F_HOST, lo=1000, hi=2000).hex()]),
        dict(opts=[epdn_opt(64, 0, lo=1000, hi=2000).hex()]),
        dict(opts=["07070400000000", "01", good]),      # behind RR, NOP
        # reassembled from three fragments: one more trusted segment
        dict(opts=[good], len=600, fragment=304, id=7),
        # never counted as segments
        dict(doff=15, len=10),                          # doff past the end
        dict(proto="rawtcp", raw="0fa00050000000"),     # 7-byte TCP header
        dict(chksum=0x1234),                  # bad checksum, not summed
        dict(opts=[good], len=600, fragment=304, keep=1, id=8),  # lone
        dict(proto="udp", opts=[good]),
        dict(proto="icmp", opts=[good]),
        dict(v6=True, src="fd00:9::1", dst="fd00:9::2"),
        dict(flags="R", len=0),
        dict(flags="S", len=0),
    ]
    for i, p in enumerate(spec):
        p.setdefault("src", src)
        p.setdefault("dst", dst)
        p.setdefault("sport", 4000 + i)
    with Net(routers=False) as n:
        n.receiver()
        before = rn_host_stats(n.rcv)
        send(n.snd, spec)
        time.sleep(0.5)
        after = rn_host_stats(n.rcv)
        sh("ping -c 1 -W 5 %s" % dst, ns=n.snd)
    d = {k: after[k] - before[k] for k in after}
    assert d["opt_malformed"] == 3, show(d)
    assert d["opt_distrusted"] == 1 and d["opt_not_host"] == 1, show(d)
    assert d["opt_trusted"] == 2, show(d)
    assert d["hdr_malformed"] == 2, show(d)
    # Only the segments of tracked flows are summed (see the live flow).
    assert d["data_bad_csum"] == 0, show(d)
    # IPv6, UDP, ICMP, SYN, RST and the lone fragment are not data.
    assert d["data_segments"] == 8 and d["data_untracked"] == 8, show(d)
    assert after["flows_live"] == 0


def syn_spec(count, port):
    """SYNs from 100 addresses that never answer, one port each."""
    return [dict(src="10.0.9.%d" % (100 + i % 100), dst="10.0.9.2",
                 sport=10000 + i, dport=port, flags="S", len=0, seq=1000)
            for i in range(count)]


def data_spec(count, port):
    """Data segments of connections nobody opened."""
    return [dict(src="10.0.9.1", dst="10.0.9.2", sport=20000 + i,
                 dport=port, seq=i, opts=[EMPTY_OPT]) for i in range(count)]


def test_window_and_reset_on_a_live_flow():
    port, isn = 7001, 5000000
    # No ACK flag: the request socket drops the data without a reset.
    seg = dict(src="10.0.9.77", dst="10.0.9.2", sport=4444, dport=port,
               len=100, flags="P", opts=[EMPTY_OPT])
    with Net(routers=False) as n:
        n.receiver()
        n.listen(port)
        # A handshake from an address that never answers: our SYN-ACK
        # creates the flow with rcv_nxt = isn + 1 and a 65535-byte window.
        # Then a gap, a segment 2^31 away, one past the window, one more
        # than a window below, a corrupt one, resets off rcv_nxt, and
        # the reset at rcv_nxt.
        rst = dict(seg, flags="R", len=0, seq=isn + 1, opts=[])
        send(n.snd, [dict(seg, flags="S", len=0, seq=isn, opts=[]),
                     dict(sleep=0.5),
                     dict(seg, seq=isn + 1 + 300),
                     dict(seg, seq=(isn + 1 + 2 ** 31) % 2 ** 32),
                     dict(seg, seq=isn + 1 + 10 ** 7),
                     dict(seg, seq=isn + 1 - 65536),
                     dict(seg, seq=isn + 1 + 600, csum_xor=0x0101),
                     dict(sleep=0.5),
                     dict(rst, seq=isn + 2),
                     dict(rst, seq=isn),
                     dict(sleep=0.2),
                     rst],
             raw=True)
        time.sleep(0.5)
        st = rn_host_stats(n.rcv)
    assert st["flows_created"] == 1, show(st)
    assert st["data_segments"] == 4 and st["opt_trusted"] == 4, show(st)
    assert st["data_outside_window"] == 3, show(st)
    assert st["data_bad_csum"] == 1, show(st)
    assert st["rst_off_sequence"] == 2, show(st)
    assert st["data_untracked"] == 0, show(st)
    # The ACK the request socket sent for the segments outside the window
    # names the gap the first segment opened: reordered.
    assert st["acks_marked"] >= 1, show(st)
    assert st["flows_freed_rst"] == 1 and st["flows_live"] == 0, show(st)


def test_raw_socket_segments_leave_as_built():
    # A raw IPPROTO_TCP socket builds the TCP header itself; above about
    # 16 KB, ip_append_data leaves all of it in page frags.  Its packets,
    # a pure ACK that would start a flow and an ACK with the
    # drop-negative bit, must leave as built: not "corrected" by the
    # receiver, nor with the bit changed and the checksum left stale.
    with Net(routers=False) as n:
        n.receiver()
        # Out through lo, and dropped as martians on the way back in: no
        # reset comes to end the flow the pure ACK starts.
        sh("ip route add 10.9.9.9/32 dev lo", ns=n.rcv)
        out = json.loads(send(n.rcv, dict(len=17000, dst="10.9.9.9"),
                              mode="--lo-raw"))
        st = rn_host_stats(n.rcv)
    for sent, seen in zip(out["sent"], out["seen"]):
        assert seen == sent, ("TCP header sent %s, left %s" %
                              (sent[:40], seen[:40]), show(st))
    assert st["flows_created"] == 0, show(st)


def test_flood_of_flows_stays_bounded(params):
    port = 7000
    with Net(routers=False) as n:
        n.receiver()
        set_param("rn_host", "max_flows", 64)
        set_param("rn_host", "flow_idle_ms", 20000)
        srv = n.listen(port)
        # Each SYN-ACK creates a flow; data without a flow creates none.
        send(n.snd, syn_spec(300, port) + [dict(sleep=0.3)] +
             data_spec(100, port), raw=True)
        st = rn_host_stats(n.rcv)
        assert 0 < st["flows_live"] <= 64, show(st)
        assert st["flows_created"] >= 300, show(st)
        assert st["flows_evicted"] >= 300 - 64, show(st)
        assert st["data_untracked"] >= 100, show(st)
        # Idle flows go: stop the SYN-ACK retransmissions, shorten idle.
        srv.kill()
        srv.wait()
        set_param("rn_host", "flow_idle_ms", 200)
        for _ in range(80):
            time.sleep(0.25)
            st = rn_host_stats(n.rcv)
            if st["flows_live"] == 0:
                break
    assert st["flows_live"] == 0 and st["flows_aged"] > 0, show(st)


def test_flows_end_on_fin():
    with Net(routers=False) as n:
        n.receiver()
        n.iperf(secs=1)
        time.sleep(0.5)
        st = rn_host_stats(n.rcv)
    assert st["flows_created"] >= 2 and st["flows_freed_fin"] >= 1, show(st)
    assert st["flows_live"] <= st["flows_created"] - st["flows_freed_fin"]


def wait_traffic(ns, segments=200):
    """Until the receiver in ns has seen some data."""
    for _ in range(300):
        if rn_host_stats(ns)["data_segments"] >= segments:
            return
        time.sleep(0.1)
    raise AssertionError("no traffic reached %s" % ns)


def test_unload_and_netns_exit_under_traffic():
    # A namespace goes away while its flows carry traffic: its last
    # process ends, so the pernet exit runs with flows in the table.
    with Net(routers=False) as n:
        n.origin()
        n.receiver()
        n.iperf(secs=4, flows=2, wait=False)
        wait_traffic(n.rcv)
        assert rn_host_stats(n.rcv)["flows_live"] > 0
        n.kill(n.rcv)
        sh("ip netns del %s" % n.rcv)
        time.sleep(1)
    # rmmod while both hooks run on live traffic.
    with Net(routers=False) as n:
        n.origin()
        n.receiver()
        sh("sysctl -qw net.rn.receiver=1", ns=n.snd)
        client = n.iperf(secs=4, flows=2, wait=False)
        wait_traffic(n.rcv)
        r = sh("rmmod rn_host", check=False)
        assert r.returncode == 0, r.stderr
        assert client.wait(timeout=60) == 0
        assert not os.path.exists("/proc/net/rn_host")
    insmod(KO)
