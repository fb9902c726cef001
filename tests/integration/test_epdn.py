# SPDX-License-Identifier: GPL-2.0
"""Integration tests of the epdn qdisc (sch_epdn/, docs/epdn.md).

Run inside tools/vm-run (make test), as root, after `make modules tc`.

        a ------------ r1 ---------------- r2 ------------ b
    10.0.1.1   10.0.1.2  10.0.2.1     10.0.2.2  10.0.3.1   10.0.3.2
               [r1-r2: tbf -> epdn]   [r2-b: epdn | pfifo]
               (two-router path: test_stamps_and_epdn_ttl_*)

        a ------------ r1 ------------ b
    10.0.1.1   10.0.1.2  10.0.3.1  10.0.3.2
               [r1-b: tbf 1mbit -> epdn limit 2]
               (one-router path: crafted packets, ageing, eviction)

This file is also its own helper: run with --send or --sniff inside a
namespace (ip netns exec) it crafts packets or reports EPDN options seen.
"""

import json
import os
import re
import socket
import struct
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
KO = os.path.join(TOP, "sch_epdn", "sch_epdn.ko")
TC_LIB = os.path.join(TOP, "build", "tc")
ME = os.path.abspath(__file__)
PY = "/usr/bin/python3"
OPT_TYPE = 0x9e
F_EMPTY, F_HOST, F_V2 = 1, 2, 4


# ---- packet crafting (runs inside a namespace) ----

def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def epdn_opt(ttl, flags, lo=0, hi=0):
    return struct.pack("!BBBBII", OPT_TYPE, 12, ttl, 0x10 | flags, lo, hi)


def ipv4(src, dst, payload, ttl=64, proto=6, opts=b"", frag=0):
    opts += b"\0" * (-len(opts) % 4)
    ihl = 5 + len(opts) // 4
    hdr = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, ihl * 4 + len(payload),
                      0x1234, frag, ttl, proto, 0, socket.inet_aton(src),
                      socket.inet_aton(dst)) + opts
    hdr = hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:]
    return hdr + payload


def tcp(sport, dport, seq, paylen, flags=0x18):
    return struct.pack("!HHIIBBHHH", sport, dport, seq, 1, 0x50, flags,
                       65535, 0, 0) + b"x" * paylen


def send_ip(packets):
    """Send complete IPv4 packets through the routing table."""
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    for p in packets:
        s.sendto(p, (socket.inet_ntoa(p[16:20]), 0))


def send_l2(iface, frames):
    """Send raw (dst-mac, ethertype, payload) frames out of iface."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    src = open("/sys/class/net/%s/address" % iface).read().strip()
    for dst, etype, payload in frames:
        eth = bytes.fromhex(dst.replace(":", "")) + \
            bytes.fromhex(src.replace(":", "")) + struct.pack("!H", etype)
        s.sendto(eth + payload, (iface, etype))


def parse_epdn(ip):
    """The EPDN option of an IPv4 packet as a dict, or None."""
    ihl = (ip[0] & 15) * 4
    i = 20
    while i < ihl:
        t = ip[i]
        if t == 0:
            break
        if t == 1:
            i += 1
            continue
        ln = max(ip[i + 1], 2)
        if t == OPT_TYPE and ln == 12:
            ettl, vf, lo, hi = struct.unpack("!BBII", ip[i + 2:i + 12])
            return dict(ettl=ettl, version=vf >> 4, flags=vf & 15,
                        min=lo, max=hi)
        i += ln
    return None


def sniff(iface, secs, out):
    """Record every IPv4/TCP packet from 10.0.1.1 seen on iface, until
    out.stop exists (at most secs seconds)."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0800))
    s.bind((iface, 0))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    s.settimeout(0.1)
    open(out + ".ready", "w").close()
    seen = []
    end = time.time() + secs
    while time.time() < end and not os.path.exists(out + ".stop"):
        try:
            pkt, addr = s.recvfrom(65535)
        except socket.timeout:
            continue
        ip = pkt[14:]
        if addr[2] == socket.PACKET_OUTGOING or len(ip) < 40 or \
                ip[12:16] != socket.inet_aton("10.0.1.1") or ip[9] != 6:
            continue
        ihl = (ip[0] & 15) * 4
        sport, dport, seq = struct.unpack("!HHI", ip[ihl:ihl + 8])
        seen.append(dict(ttl=ip[8], ihl=ihl, len=len(ip), sport=sport,
                         dport=dport, seq=seq, csum_ok=csum(ip[:ihl]) == 0,
                         opt=parse_epdn(ip)))
    with open(out, "w") as f:
        json.dump(seen, f)


# ---- host side helpers ----

def sh(cmd, check=True, ns=None):
    if ns:
        cmd = "ip netns exec %s %s" % (ns, cmd)
    env = dict(os.environ, TC_LIB_DIR=TC_LIB)
    r = subprocess.run(cmd, shell=True, capture_output=True, text=True,
                       env=env, timeout=120)
    if check and r.returncode:
        raise AssertionError("%s: %s%s" % (cmd, r.stdout, r.stderr))
    return r


def xstats(ns, dev):
    """The epdn counters of dev, from tc -s (text form)."""
    out = sh("tc -s qdisc show dev %s" % dev, ns=ns).stdout
    text = out[out.index("qdisc epdn"):]
    return {k: int(v) for k, v in re.findall(r"([a-z_][a-z0-9_]*) (\d+)",
                                             text.split("requeues", 2)[-1])}


class Path:
    """Namespaces a - r1 [- r2] - b with routes; torn down on exit."""

    def __init__(self, two_routers=False, sender_mtu=1488):
        self.pfx = "epdn%d" % os.getpid()
        self.a, self.r1, self.r2, self.b = (self.pfx + x for x in
                                            ("a", "r1", "r2", "b"))
        self.two = two_routers
        self.mtu = sender_mtu

    def __enter__(self):
        try:
            self._build()
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc):
        for ns in (self.a, self.r1, self.r2, self.b):
            sh("ip netns del %s" % ns, check=False)

    def _link(self, n1, d1, a1, n2, d2, a2):
        sh("ip link add %s netns %s type veth peer name %s netns %s"
           % (d1, n1, d2, n2))
        for ns, dev, addr in ((n1, d1, a1), (n2, d2, a2)):
            sh("ip -n %s addr add %s dev %s" % (ns, addr, dev))
            sh("ip -n %s link set %s up" % (ns, dev))
            sh("ethtool -K %s tso off gso off gro off" % dev, ns=ns,
               check=False)

    def _build(self):
        nss = [self.a, self.r1, self.b] + ([self.r2] if self.two else [])
        for ns in nss:
            sh("ip netns add %s" % ns)
            sh("ip -n %s link set lo up" % ns)
        self._link(self.a, "a-r1", "10.0.1.1/24", self.r1, "r1-a",
                   "10.0.1.2/24")
        if self.two:
            self._link(self.r1, "r1-r2", "10.0.2.1/24", self.r2, "r2-r1",
                       "10.0.2.2/24")
            self._link(self.r2, "r2-b", "10.0.3.1/24", self.b, "b-r2",
                       "10.0.3.2/24")
            sh("ip -n %s route add 10.0.3.0/24 via 10.0.2.2" % self.r1)
            sh("ip -n %s route add 10.0.1.0/24 via 10.0.2.1" % self.r2)
            sh("sysctl -qw net.ipv4.ip_forward=1", ns=self.r2)
        else:
            self._link(self.r1, "r1-b", "10.0.3.1/24", self.b, "b-r2",
                       "10.0.3.2/24")
        sh("sysctl -qw net.ipv4.ip_forward=1", ns=self.r1)
        # Room for the option: the sender's MTU is 12 bytes below the path's.
        sh("ip -n %s link set a-r1 mtu %d" % (self.a, self.mtu))
        sh("ip -n %s link set r1-a mtu %d" % (self.r1, self.mtu))
        sh("ip -n %s route add default via 10.0.1.2" % self.a)
        sh("ip -n %s route add default via 10.0.3.1" % self.b)
        sh("ping -c 1 -W 2 10.0.3.2", ns=self.a)

    def start_sniff(self, secs):
        out = tempfile.mktemp(prefix="epdn-sniff-")
        proc = subprocess.Popen(["ip", "netns", "exec", self.b, PY, ME,
                                 "--sniff", "b-r2", str(secs), out])
        for _ in range(600):
            if os.path.exists(out + ".ready"):
                break
            time.sleep(0.05)
        return proc, out

    @staticmethod
    def stop_sniff(handle):
        proc, out = handle
        time.sleep(0.5)         # the last packets in flight
        open(out + ".stop", "w").close()
        proc.wait(timeout=120)
        with open(out) as f:
            seen = json.load(f)
        for suffix in ("", ".ready", ".stop"):
            os.unlink(out + suffix)
        return seen

    def send(self, spec, ns=None):
        """Send packets described by a JSON spec from namespace a."""
        sh("%s %s --send '%s'" % (PY, ME, json.dumps(spec)), ns=ns or self.a)


def build_packets(spec):
    """Turn a JSON spec (list of dicts) into IPv4 packets."""
    out = []
    for p in spec:
        opts = b""
        if "epdn" in p:
            opts += epdn_opt(*p["epdn"])
        if p.get("rr"):
            opts += bytes([7, 7, 4, 0, 0, 0, 0])
        out.append(ipv4("10.0.1.1", "10.0.3.2",
                        tcp(p["sport"], 80, p["seq"], p.get("len", 1000)),
                        ttl=p.get("ttl", 64), opts=opts))
    return out


def main():
    if sys.argv[1] == "--send":
        send_ip(build_packets(json.loads(sys.argv[2])))
    elif sys.argv[1] == "--l2":
        with open(sys.argv[3]) as f:
            send_l2(sys.argv[2], [(d, e, bytes.fromhex(h))
                                  for d, e, h in json.load(f)])
    elif sys.argv[1] == "--sniff":
        sniff(sys.argv[2], float(sys.argv[3]), sys.argv[4])


if __name__ == "__main__":
    main()
    sys.exit(0)

# ---- tests ----

import pytest  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def module_loaded():
    if not os.path.exists(KO) or \
            not os.path.exists(os.path.join(TC_LIB, "q_epdn.so")):
        pytest.skip("build first: make modules tc")
    subprocess.call(["rmmod", "sch_epdn"], stderr=subprocess.DEVNULL)
    sh("insmod %s" % KO)
    yield
    sh("rmmod sch_epdn", check=False)


@pytest.fixture
def dummy():
    name = "epdnd%d" % os.getpid()
    sh("ip link add %s type dummy" % name)
    sh("ip link set %s up" % name)
    yield name
    sh("ip link del %s" % name, check=False)


def show(dev):
    return sh("tc qdisc show dev %s" % dev).stdout


def test_every_option_is_printed_back(dummy):
    sh("tc qdisc add dev %s root epdn limit 300 bytelimit 450kb mode v2 "
       "idle 250ms flows 4096 corrupt 0.1%% red min 30000 max 90000 "
       "probability 0.02 ewma 7 ecn harddrop" % dummy)
    out = show(dummy)
    for text in ("limit 300 ", "bytelimit 460800b", "mode v2", "idle 250ms",
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
    assert "red min 3072b max 9216b" in show(dummy)
    sh("tc qdisc change dev %s root epdn red off" % dummy)
    assert "red" not in show(dummy)


@pytest.mark.parametrize("args,msg", [
    ("mode v4", "invalid mode"),
    ("limit 0", "invalid limit"),
    ("flows 8", "invalid flows"),
    ("idle 10us", "invalid idle"),
    ("corrupt 120%", "invalid corrupt"),
    ("red min 9000 max 3000 probability 0.1", "min must be below max"),
    ("frobnicate 1", "invalid option"),
])
def test_plugin_rejects_bad_values(dummy, args, msg):
    r = sh("tc qdisc add dev %s root epdn %s" % (dummy, args), check=False)
    assert r.returncode != 0 and msg in r.stderr and "Usage" in r.stderr


@pytest.mark.parametrize("args,msg", [
    ("red probability 0.1", "red needs min, max and probability"),
    ("red min 1000 max 3g probability 0.1",
     "RED thresholds too large for this ewma"),
])
def test_kernel_rejects_with_extack(dummy, args, msg):
    r = sh("tc qdisc add dev %s root epdn %s" % (dummy, args), check=False)
    assert r.returncode != 0 and msg in r.stderr, r.stderr


def run_iperf(path, secs=3):
    sh("iperf3 -s -D -1", ns=path.b)
    time.sleep(0.3)
    sh("iperf3 -c 10.0.3.2 -t %d -P 2" % secs, ns=path.a)


@pytest.mark.parametrize("r2_epdn", [True, False], ids=["epdn-r2",
                                                        "legacy-r2"])
def test_stamps_and_epdn_ttl(r2_epdn):
    with Path(two_routers=True) as p:
        sh("tc qdisc add dev r1-r2 root handle 1: tbf rate 20mbit "
           "burst 16k latency 100ms", ns=p.r1)
        sh("tc qdisc add dev r1-r2 parent 1:1 handle 10: epdn limit 10",
           ns=p.r1)
        sh("tc qdisc add dev r2-b root %s" %
           ("epdn limit 1000" if r2_epdn else "pfifo limit 1000"), ns=p.r2)
        sniff = p.start_sniff(60)
        run_iperf(p)
        seen = Path.stop_sniff(sniff)
        st = xstats(p.r1, "r1-r2")
        assert st["overflow_drops"] > 0 and st["recorded"] > 0
        assert st["stamps"] > 0 and st["mtu_deferred"] == 0
        carried = [s for s in seen if s["opt"]]
        assert carried, ("no EPDN option reached the receiver", len(seen), st)
        assert all(s["csum_ok"] for s in seen)
        assert all(s["len"] <= 1500 for s in seen)
        for s in carried:
            o = s["opt"]
            assert o["version"] == 1 and not o["flags"] & F_EMPTY
            assert not o["flags"] & F_HOST    # created by router r1
            # An all-EPDN path keeps EPDN-TTL == TTL; a legacy r2 breaks it.
            assert (o["ettl"] == s["ttl"]) == r2_epdn, s
            span = (o["max"] - o["min"]) & 0xffffffff
            assert span < 1 << 24
        if r2_epdn:
            assert xstats(p.r2, "r2-b")["ttl_updates"] >= len(carried)


def test_full_size_packets_defer_on_mtu():
    with Path(two_routers=True, sender_mtu=1500) as p:
        sh("tc qdisc add dev r1-r2 root handle 1: tbf rate 20mbit "
           "burst 16k latency 100ms", ns=p.r1)
        sh("tc qdisc add dev r1-r2 parent 1:1 handle 10: epdn limit 10",
           ns=p.r1)
        run_iperf(p, secs=2)
        st = xstats(p.r1, "r1-r2")
        assert st["recorded"] > 0 and st["mtu_deferred"] > 0
        assert st["stamps"] == 0


def one_router(limit=2, extra=""):
    p = Path(two_routers=False)
    p.__enter__()
    sh("tc qdisc add dev r1-b root handle 1: tbf rate 1mbit burst 1600 "
       "limit 20000", ns=p.r1)
    sh("tc qdisc add dev r1-b parent 1:1 handle 10: epdn limit %d %s"
       % (limit, extra), ns=p.r1)
    return p


def burst(sport, n, seq0=1000, **kw):
    return [dict(sport=sport, seq=seq0 + 1000 * i, **kw) for i in range(n)]


def assert_ranges_exact(missing, opts):
    """Every missing segment is inside a reported range, and each range
    starts and ends on missing data (segments of 1000 bytes)."""
    assert opts, "no option carried the drops"
    for seq in missing:
        assert any(o["min"] <= seq and seq + 999 <= o["max"] for o in opts)
    for o in opts:
        assert o["min"] in missing and o["max"] - 999 in missing, o


def test_crafted_drops_are_reported_exactly():
    p = one_router()
    try:
        sniff = p.start_sniff(60)
        # Flow 1: a burst overflows the 2-packet queue.
        p.send(burst(1001, 12))
        time.sleep(0.5)
        # Flow 2: a sender-originated empty option, no record: TTL only.
        p.send([dict(sport=1002, seq=5, ttl=64, epdn=[64, F_EMPTY | F_HOST])])
        time.sleep(0.3)
        # Flow 3: every packet carries drop info from upstream (100..199).
        p.send(burst(1003, 12, seq0=50000, epdn=[64, 0, 100, 199]))
        time.sleep(0.5)
        # Flow 4: record-route option: the record waits for a plain packet.
        p.send(burst(1004, 12, seq0=90000, rr=True))
        time.sleep(0.5)
        p.send([dict(sport=1004, seq=200000)])
        seen = Path.stop_sniff(sniff)
    finally:
        st = xstats(p.r1, "r1-b")
        p.__exit__()

    def flow(sport):
        return [s for s in seen if s["sport"] == sport]

    assert all(s["csum_ok"] for s in seen)
    # Flow 1: the option names exactly the missing bytes.
    f1 = flow(1001)
    got = {s["seq"] for s in f1}
    missing = sorted({1000 + 1000 * i for i in range(12)} - got)
    assert missing
    carriers = [s for s in f1 if s["opt"]]
    assert_ranges_exact(missing, [s["opt"] for s in carriers])
    assert all(s["ttl"] == s["opt"]["ettl"] == 63 for s in carriers)
    # Flow 2: EPDN-TTL followed TTL; still empty and host-originated.
    (f2,) = flow(1002)
    assert f2["opt"]["ettl"] == f2["ttl"] == 63
    assert f2["opt"]["flags"] == F_EMPTY | F_HOST
    # Flow 3: record merged with the dropped packets' option and then
    # merged into the carrier's option: min 100, max = last dropped byte.
    f3 = flow(1003)
    missing3 = sorted({50000 + 1000 * i for i in range(12)} -
                      {s["seq"] for s in f3})
    merged = [s["opt"] for s in f3 if s["opt"]["max"] != 199]
    assert merged and all(o["min"] == 100 for o in merged)
    assert max(o["max"] for o in merged) == missing3[-1] + 999
    # Flow 4: nothing stamped into RR packets; the plain one carries it.
    f4 = flow(1004)
    assert not any(s["opt"] for s in f4 if s["seq"] != 200000)
    (last,) = [s for s in f4 if s["seq"] == 200000]
    missing4 = sorted({90000 + 1000 * i for i in range(12)} -
                      {s["seq"] for s in f4})
    assert last["opt"]["min"] == missing4[0]
    assert st["opt_deferred"] > 0 and st["merges"] >= 1
    assert st["stamps"] >= 2 and st["records"] == 0
    assert st["ttl_updates"] >= 1


def test_idle_records_age_out_and_full_table_evicts():
    p = one_router(extra="idle 100ms flows 16")
    try:
        # 40 flows lose packets; none sends again.
        spec = []
        for f in range(40):
            spec += burst(2000 + f, 4, seq0=10)
        p.send(spec)
        time.sleep(0.05)
        st = xstats(p.r1, "r1-b")
        assert st["records"] <= 16 and st["evicted"] > 0
        time.sleep(1.0)
        st = xstats(p.r1, "r1-b")
        assert st["records"] == 0 and st["aged"] > 0
    finally:
        p.__exit__()


def test_v2_records_corruption_v3_does_not():
    for mode, want in (("v2", True), ("v3", False)):
        p = one_router(limit=1000, extra="mode %s corrupt 30%%" % mode)
        try:
            p.send(burst(3000, 20))
            time.sleep(0.5)
            st = xstats(p.r1, "r1-b")
            assert st["corrupt_drops"] > 0 and st["overflow_drops"] == 0
            assert (st["recorded"] > 0) == want, (mode, st)
        finally:
            p.__exit__()


def test_bad_input_passes_through_counted(dummy):
    """Frames injected on an epdn egress: none may crash, all are sent."""
    sh("tc qdisc add dev %s root epdn limit 1000" % dummy)
    mac = "02:00:00:00:00:01"
    good = ipv4("10.0.0.1", "10.0.0.2", tcp(1, 2, 3, 100))
    frames = [
        (mac, 0x86dd, bytes([0x60]) + b"\0" * 60),            # IPv6
        (mac, 0x0800, ipv4("10.0.0.1", "10.0.0.2", tcp(1, 2, 3, 100),
                           frag=0x2000)),                      # MF
        (mac, 0x0800, ipv4("10.0.0.1", "10.0.0.2", b"x" * 64, frag=10)),
        (mac, 0x0800, good[:30]),                              # truncated
        (mac, 0x0800, bytes([0x4f]) + good[1:]),               # ihl 15
        (mac, 0x0800, bytes([0x46]) + good[1:20] + bytes([7, 40, 4, 0])
         + good[20:]),                                         # bad opt len
        (mac, 0x0800, ipv4("10.0.0.1", "10.0.0.2", b"u" * 40,
                           proto=17)),                         # UDP
        (mac, 0x0800, ipv4("10.0.0.1", "10.0.0.2", b"\x01\x02")),  # TCP 2B
        (mac, 0x0800, b"\x45"),                                # 1 byte
        (mac, 0x0800, good),
    ]
    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        json.dump([(d, e, b.hex()) for d, e, b in frames], f)
        f.flush()
        sh("%s %s --l2 %s %s" % (PY, ME, dummy, f.name))
    time.sleep(0.2)
    st = xstats(None, dummy)
    assert "not_ipv4" in st, sh("tc -s qdisc show dev %s" % dummy).stdout
    assert st["not_ipv4"] >= 1 and st["fragments"] >= 2
    assert st["malformed"] >= 4 and st["not_tcp"] >= 1
    assert st["untouched"] >= len(frames)
    out = sh("tc -s qdisc show dev %s" % dummy).stdout
    sent = int(re.search(r"Sent \d+ bytes (\d+) pkt", out).group(1))
    assert sent >= len(frames)


def test_live_change_under_traffic_then_unload():
    with Path(two_routers=True) as p:
        sh("tc qdisc add dev r1-r2 root handle 1: tbf rate 20mbit "
           "burst 16k latency 100ms", ns=p.r1)
        sh("tc qdisc add dev r1-r2 parent 1:1 handle 10: epdn limit 10",
           ns=p.r1)
        sh("iperf3 -s -D -1", ns=p.b)
        time.sleep(0.3)
        client = subprocess.Popen(["ip", "netns", "exec", p.a, "iperf3",
                                   "-c", "10.0.3.2", "-t", "6", "-P", "4"],
                                  stdout=subprocess.DEVNULL)
        changes = ["flows 16", "flows 65536 mode v2", "limit 3 flows 1024",
                   "red min 2k max 8k probability 0.2 ecn", "idle 1ms",
                   "red off limit 50 idle 2s flows 16", "corrupt 1%",
                   "corrupt 0 bytelimit 20k", "bytelimit 0 flows 70000"]
        deadline = time.time() + 5
        while time.time() < deadline:
            for c in changes:
                sh("tc qdisc change dev r1-r2 parent 1:1 handle 10: epdn %s"
                   % c, ns=p.r1)
                time.sleep(0.05)
        # The module is pinned while a qdisc uses it.
        assert sh("rmmod sch_epdn", check=False).returncode != 0
        client.wait(timeout=60)
        st = xstats(p.r1, "r1-r2")
        assert st["recorded"] > 0
    # Namespaces go away asynchronously; then the module unloads.
    for _ in range(100):
        if sh("rmmod sch_epdn", check=False).returncode == 0:
            break
        time.sleep(0.1)
    else:
        raise AssertionError("sch_epdn still in use after teardown")
    sh("insmod %s" % KO)
