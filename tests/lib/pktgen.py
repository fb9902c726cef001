# SPDX-License-Identifier: GPL-2.0
"""pktgen into dummy devices, as TCP: the plumbing of tools/bench-epdn and
of the epdn flood test.

pktgen's queue_xmit mode sends through dev_queue_xmit(), so through the
root qdisc, of a dummy device (which frees every packet it is given).
pktgen only makes UDP, so a clsact egress pedit turns each packet into a
TCP segment before the qdisc sees it (IP protocol 17 -> 6, data offset 5).

Flows come from the source address and the UDP (then TCP) source port.
pktgen's ranges, as net/core/pktgen.c reads them:

  random (IPSRC_RND, UDPSRC_RND)   min .. max - 1 for both
  in turn                          ports min .. max - 1, addresses
                                   min .. max (the address max counts)

Counting: pktgen's `count` counts packets the qdisc accepted, so a flood
that the qdisc drops entirely never reaches it; floods here are stopped by
time or by watching the live counters (offered = sent + errors, where
errors are the packets the qdisc dropped).
"""

import ipaddress
import math
import re
import threading
import time

from satnet.host import modprobe, run

PG = "/proc/net/pktgen"
PKT_SIZE = 1000
DST = "10.8.0.2"
DST_MAC = "02:00:00:00:00:02"
PORT_MIN = 1024
MODULES = ("pktgen", "dummy", "sch_ingress", "cls_matchall", "act_pedit")


class PktgenError(RuntimeError):
    pass


def pgset(path, line):
    """One pktgen command; its Result line must say OK."""
    with open(path, "w") as f:
        f.write(line + "\n")
    with open(path) as f:
        text = f.read()
    m = re.search(r"Result: (.*)", text)
    if m and not m.group(1).startswith("OK"):
        raise PktgenError("pktgen %s %r: %s" % (path, line, m.group(1)))


def thread_file(cpu):
    return "%s/kpktgend_%d" % (PG, cpu)


def dev_file(dev):
    return "%s/%s" % (PG, dev)


def add_dummy(dev):
    """A dummy device, up, IPv6 off, whose egress turns UDP into TCP."""
    modprobe(*MODULES)
    run(["ip", "link", "del", dev], check=False)
    run(["ip", "link", "add", dev, "type", "dummy"])
    with open("/proc/sys/net/ipv6/conf/%s/disable_ipv6" % dev, "w") as f:
        f.write("1")
    run(["ip", "link", "set", dev, "up", "mtu", "1500"])
    as_tcp(dev)


def as_tcp(dev):
    """A clsact egress pedit on @dev that turns IPv4 UDP into TCP: the
    protocol byte, then the data offset (20 + 12)."""
    modprobe(*MODULES)
    run(["tc", "-batch", "-"], inp=(
        "qdisc add dev %s clsact\n"
        "filter add dev %s egress matchall action pedit munge offset 9 u8 "
        "set 6 munge offset 32 u8 set 0x50\n" % (dev, dev)))


def del_dummy(dev):
    run(["ip", "link", "del", dev], check=False)


def attach(cpu, *devs):
    """pktgen's thread on @cpu sends on @devs (and no other device), with
    the fixed settings; flows() sets the flows."""
    pgset(thread_file(cpu), "rem_device_all")
    for dev in devs:
        pgset(thread_file(cpu), "add_device %s" % dev)
        for line in ("count 0", "clone_skb 0", "pkt_size %d" % PKT_SIZE,
                     "delay 0", "xmit_mode queue_xmit", "dst %s" % DST,
                     "dst_mac %s" % DST_MAC, "udp_dst_min 80",
                     "udp_dst_max 80"):
            pgset(dev_file(dev), line)


def detach(*cpus):
    for cpu in cpus:
        pgset(thread_file(cpu), "rem_device_all")


def split(n):
    """n = addresses * ports, the ports the largest divisor <= sqrt(n)."""
    ports = max(d for d in range(1, math.isqrt(n) + 1) if n % d == 0)
    return n // ports, ports


def _prime(n):
    return n > 1 and all(n % d for d in range(2, math.isqrt(n) + 1))


def _next_prime(n):
    while not _prime(n):
        n += 1
    return n


def coprime_split(n):
    """Two distinct primes (addresses, ports) whose product is >= n: in
    turn, packet i has address i mod A and port i mod P, so the first
    A * P packets are all distinct flows (Chinese remainder theorem)."""
    ports = _next_prime(max(2, math.isqrt(n)))
    addrs = _next_prime(max(2, -(-n // ports)))
    if addrs == ports:
        addrs = _next_prime(addrs + 1)
    return addrs, ports


def flows(dev, addrs, ports, first="10.9.0.0", rnd=True):
    """Source addresses first .. first + addrs - 1 and source ports
    PORT_MIN .. PORT_MIN + ports - 1: addrs * ports flows, drawn at random
    for each packet (rnd) or in turn."""
    last = int(ipaddress.IPv4Address(first)) + addrs - (0 if rnd else 1)
    for line in ("flag %sIPSRC_RND" % ("" if rnd else "!"),
                 "flag %sUDPSRC_RND" % ("" if rnd else "!"),
                 "src_min %s" % first,
                 "src_max %s" % ipaddress.IPv4Address(last),
                 "udp_src_min %d" % PORT_MIN,
                 "udp_src_max %d" % (PORT_MIN + ports)):
        pgset(dev_file(dev), line)


def progress(dev):
    """Live counters: the run's start and now (kernel clock, us), packets
    sent and packets dropped so far."""
    with open(dev_file(dev)) as f:
        text = f.read()
    m = re.search(r"pkts-sofar: (\d+)\s+errors: (\d+)", text)
    t = re.search(r"started: (\d+)us\s+stopped: (\d+)us", text)
    if not m or not t:
        raise PktgenError("no pktgen counters:\n" + text)
    return (int(t.group(1)), int(t.group(2)), int(m.group(1)),
            int(m.group(2)))


def result(dev):
    """The last run of @dev: elapsed us, packets sent and dropped, and the
    ns per packet offered."""
    with open(dev_file(dev)) as f:
        text = f.read()
    m = re.search(r"Result: OK: (\d+)\(c(\d+)\+d(\d+)\) usec, (\d+) .*?"
                  r"errors: (\d+)", text, re.S)
    if not m:
        raise PktgenError("no pktgen result:\n" + text)
    usec, sent, errors = int(m.group(1)), int(m.group(4)), int(m.group(5))
    return dict(usec=usec, sent=sent, dropped=errors,
                ns=usec * 1000.0 / max(sent + errors, 1))


class Running:
    """Every attached thread sends while inside the block (writing start
    to pgctrl returns only when they stop)."""

    def __enter__(self):
        self.starter = threading.Thread(target=pgset,
                                        args=(PG + "/pgctrl", "start"))
        self.starter.start()
        return self

    def __exit__(self, *exc):
        with open(PG + "/pgctrl", "w") as f:
            f.write("stop\n")
        self.starter.join()


def run_for(secs):
    with Running():
        time.sleep(secs)


def run_until(targets, poll=0.25, timeout=600):
    """Send until each device of @targets ({dev: packets}) has offered at
    least that many; returns each device's samples of progress()."""
    samples = {dev: [] for dev in targets}
    end = time.monotonic() + timeout
    with Running():
        time.sleep(poll)
        while True:
            for dev in targets:
                samples[dev].append(progress(dev))
            if all(s[-1][2] + s[-1][3] >= targets[d]
                   for d, s in samples.items()):
                break
            if time.monotonic() > end:
                raise PktgenError("pktgen: %s not offered in %d s: %s" % (
                    targets, timeout, {d: s[-1] for d, s in
                                       samples.items()}))
            time.sleep(poll)
    return samples


def rate_between(samples, lo, hi):
    """Packets per second offered while the count went from @lo to @hi,
    from the samples of run_until() (the nearest samples outside)."""
    pts = [(samples[0][0], 0)] + [(t, s + d) for _, t, s, d in samples]
    a = max((p for p in pts if p[1] <= lo), default=pts[0])
    b = min((p for p in pts if p[1] >= hi), default=pts[-1])
    return (b[1] - a[1]) * 1e6 / max(b[0] - a[0], 1)

