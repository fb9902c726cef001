# SPDX-License-Identifier: GPL-2.0
"""Faults on the path: netem loss, duplication, corruption and reordering
in both satellite directions in changing mixes; crafted frames injected
at R1's bottleneck towards a receiver; and batches whose fate is known
exactly into a probe epdn qdisc on a dummy device."""

import collections
import struct
import time

from satnet import host, topo
from satnet.scenario import ACCESS_DELAY_MS
from lib.kernel import qdisc_stats
from lib.packets import (ETH_P_IP, F_EMPTY, F_HOST, RR_OPT, epdn_opt,
                         fuzz_frames, ipv4, odd_frames, raw_tcp, tcp, xmit)

from .counters import add_counter, epdn_identities
from .flows import PORT

HOSTILE_SRC = "10.1.0.200"          # no such host: replies go nowhere
PROBE_SRC, PROBE_DST = "10.77.0.1", "10.77.0.2"
# netem on both satellite directions: the mixes the fault loop cycles.
MIXES = [{},
         {"loss": 1, "duplicate": 1, "corrupt": 0.5, "reorder": 5},
         {"loss": 3, "duplicate": 2, "corrupt": 1, "reorder": 10,
          "jitter": 2},
         {"loss": 0.5, "duplicate": 5, "corrupt": 2, "reorder": 20},
         {"loss": 5, "duplicate": 0.5, "corrupt": 0.2, "reorder": 2,
          "jitter": 4}]
# TCP options for crafted SYNs and segments: sane, odd and malformed.
TCP_OPTS = [b"\x02\x04\x05\xb4", b"\x02\x04\x00\x00", b"\x03\x03\x0e",
            b"\x03\x03\xff", b"\x03\x02", b"\x04\x02",
            b"\x08\x0a" + bytes(8), b"\x05\x0a" + bytes(8),
            b"\x05\x12" + bytes(16), b"\x01\x01\x00", b"\x02\x00",
            b"\x02\x01", b"\xfe\x28", b"\x13\x12" + bytes(16),
            b"\x1e\x04\x00\x00", b"\x04\x03"]



class Faults:
    """Steps of the faults thread, for the Soak: its topology and
    scenario, the probe (made by setup_probe()), check() and count()."""

    def setup_probe(self):
        """A dummy device whose root epdn (mode v2, corrupt 20 %: it drops
        and records) gets only what the soak sends it."""
        self.probe = self.pfx + "-probe"
        host.ip_batch(["netns add " + self.probe])
        self.namespaces.append(self.probe)
        host.disable_ipv6(self.probe)
        host.ip_batch(["link set lo up", "link add pd0 type dummy",
                       "link set pd0 up"], ns=self.probe)
        host.run(["tc", "qdisc", "add", "dev", "pd0", "root", "handle", "1:",
                  "epdn", "limit", "64", "mode", "v2", "corrupt", "20%",
                  "flows", "64", "idle", "60s"], ns=self.probe)
        add_counter("pd0", self.probe)
        self.probe_sock = self.packet_socket(self.probe)
        self.probe_seq = collections.defaultdict(lambda: 1000)
        self.probe_in = 0

    def netem_lines(self, mix):
        """R2's satellite stages (Topology.satellite_stages) with @mix's
        faults in place of the scenario's."""
        t, sc = self.topo, self.sc
        stages = [("b", sc.ack, 0.0)] + [("r%d" % i, sc.fwd, ACCESS_DELAY_MS)
                                         for i in range(sc.pairs)]
        lines = []
        for dev, d, extra in stages:
            delay = topo.netem_args(d, extra)[:2]
            if mix.get("jitter"):
                delay.append("%.1fms" % mix["jitter"])
            a = "qdisc change dev %s root netem %s" % (dev, " ".join(delay))
            for k in ("loss", "duplicate", "corrupt"):
                if mix.get(k):
                    a += " %s %g%%" % (k, mix[k])
            if mix.get("reorder"):
                a += " reorder %g%% 25%%" % mix["reorder"]
            lines.append(a + " limit %d" % sc.netem_limit(d))
        return t.r2, lines

    def set_mix(self, mix):
        ns, lines = self.netem_lines(mix)
        self.topo.tc_batch(ns, lines)
        now = time.monotonic()
        with self.lock:
            self.mix_seconds[self.mix["name"]] += now - self.mix["since"]
            self.mix = {"name": " ".join("%s %g%%" % (k, v) if k != "jitter"
                                         else "jitter %gms" % v
                                         for k, v in mix.items()) or "calm",
                        "since": now}

    def faults_step(self, rnd):
        if time.monotonic() > getattr(self, "next_mix", 0):
            self.set_mix(rnd.choice(MIXES))
            self.count("faults.netem_changes")
            self.next_mix = time.monotonic() + rnd.uniform(6, 12)
        self.inject(rnd)
        self.probe_batch(rnd, check=self.n["faults.probe_batches"] % 10 == 0)

    def hostile(self, rnd):
        """Crafted frames from a host that does not exist to a receiver:
        odd IPv4 and EPDN options and headers for the two EPDN routers,
        SYNs with odd TCP options and segments with odd IP options for
        the receiver's hooks (and its listening socket)."""
        t = self.topo
        i = rnd.randrange(self.sc.pairs)
        dst = t.rcv_addr(i)
        k = self.n["faults.hostile_batches"]
        frames = odd_frames(HOSTILE_SRC, dst, sport=20000 + k % 5000)
        frames += fuzz_frames(40, k, HOSTILE_SRC, dst, sport=26000)
        ip_opts = [[], [epdn_opt(63, F_EMPTY | F_HOST).hex()],
                   [epdn_opt(63, F_HOST, 1000, 900000).hex()],
                   [epdn_opt(64, F_HOST, 5, 3).hex()],
                   [epdn_opt(63, 0, length=8).hex()],
                   [epdn_opt(63, F_HOST, version=2).hex()],
                   [RR_OPT.hex(), epdn_opt(63, F_HOST, 1, 2).hex()],
                   ["01", "44", "04", "05"]]     # NOP, a cut timestamp
        for j in range(12):
            sport = 30000 + rnd.randrange(2000)
            isn = rnd.randrange(1 << 32)
            opts = b"".join(rnd.sample(TCP_OPTS, rnd.randrange(1, 4)))[:40]
            spec = dict(src=HOSTILE_SRC, dst=dst, sport=sport, dport=PORT,
                        seq=isn, flags="S", len=0, tcpopts=opts,
                        ttl=rnd.choice([64, 2, 1]))
            frames.append((ETH_P_IP, raw_tcp(spec)))
            for flags, n in (("PA", 500), ("A", 0), ("FPA", 10),
                             (rnd.choice(["R", "RA", "SA", "UPA"]), 0)):
                frames.append((ETH_P_IP, raw_tcp(dict(
                    spec, seq=isn + 1 + rnd.randrange(3000), flags=flags,
                    len=n, ack=rnd.randrange(1 << 32),
                    opts=rnd.choice(ip_opts),
                    tcpopts=b"".join(rnd.sample(TCP_OPTS, 2))[:40]))))
        return frames

    def inject(self, rnd):
        """Out of R1's bottleneck device, as R1's own packets to R2."""
        hdr = bytes.fromhex(topo.Topology.mac(0, 1).replace(":", "") +
                            topo.Topology.mac(0, 0).replace(":", ""))
        frames = self.hostile(rnd)
        for etype, payload in frames:
            xmit(self.inject_sock, hdr + struct.pack("!H", etype) + payload,
                 ("b", etype))
        self.count("faults.hostile_batches")
        self.count("faults.hostile_frames", len(frames))

    def probe_batch(self, rnd, check=False, wait=False):
        """Frames of six flows (and some odd ones) into the probe qdisc;
        with @check, its counters must add up exactly after the batch.
        Without @wait, nothing is sent while a sweep has the probe."""
        hdr = bytes.fromhex("020000000002020000000001")
        frames = []
        for _ in range(24):
            sport = 9000 + rnd.randrange(6)
            n = rnd.randrange(1, 1400)
            frames.append((ETH_P_IP, ipv4(PROBE_SRC, PROBE_DST, tcp(
                sport, 80, self.probe_seq[sport], n))))
            self.probe_seq[sport] += n
        if rnd.random() < 0.3:
            frames += odd_frames(PROBE_SRC, PROBE_DST, sport=9000)
        if not self.probe_lock.acquire(blocking=wait):
            return None                 # a fail-nth sweep has it
        try:
            for etype, payload in frames:
                xmit(self.probe_sock, hdr + struct.pack("!H", etype) +
                     payload, ("pd0", etype))
            self.probe_in += len(frames)
            self.count("faults.probe_batches")
            self.count("faults.probe_frames", len(frames))
            if not check:
                return None
            # Nothing else reaches pd0: the count is exact, at once.
            st = qdisc_stats("pd0", self.probe)
            bad = epdn_identities(st, self.probe_in)
            self.check("epdn counters add up", not bad, "probe: " +
                       "; ".join(bad))
            return st
        finally:
            self.probe_lock.release()
