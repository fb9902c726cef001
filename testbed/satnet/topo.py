# SPDX-License-Identifier: GPL-2.0
"""The seeds' dumbbell in network namespaces.

    snd0 --eth0--- s0 [R1] b ===bottleneck=== b [R2] r0 ---eth0-- rcv0
    snd1 --eth0--- s1 [  ]                      [  ] r1 ---eth0-- rcv1
            10 Mbit/s, 1 ms    rate, qdisc,       satellite delay,
                               limit (R1 egress)  errors, reordering
                                                  (R2 egress, both ways)

Where each impairment sits (one stage per effect, docs/testbed.md):
  snd*/eth0, rcv*/eth0, R1/s*  netem delay 1 ms rate 10 Mbit/s (access)
  R1/b                         htb rate R -> pfifo | red ecn | epdn
  R2/r*                        forward satellite stage: netem delay P + 1 ms
                               (the far access link's delay; its 10 Mbit/s
                               never binds behind the bottleneck), corrupt
                               PER, loss (random or Gilbert-Elliott), and
                               the reordering bands
  R2/b                         return satellite stage: delay, ACK errors
                               and loss, ACK reordering
  (a scenario's [schedule] changes both stages while the flows run)

Addresses: snd i 10.1.i.1/24, R1 10.1.i.254; R1 10.0.0.1/30 - R2 10.0.0.2;
rcv i 10.2.i.1/24, R2 10.2.i.254.
"""

import itertools
import os
import re
import subprocess

from .host import (TopologyError, ip_batch, modprobe, netns, own_ehash,
                   prepare_programs, prepare_tclib, remove_netns, run,
                   sysctl_write, tc_env)
from .scenario import ACCESS_DELAY_MS, ACCESS_RATE_BPS, GE_KEYS

_counter = itertools.count()


def red_ewma_log(min_packets, burst):
    """iproute2's tc_red_eval_ewma(): the smallest Wlog for which a burst
    of `burst` packets arriving at an idle queue stays below the minimum
    threshold on average."""
    a = burst + 1 - min_packets
    w = 0.5
    for wlog in range(1, 32):
        if a <= (1 - (1 - w) ** burst) / w:
            return wlog
        w /= 2
    raise TopologyError("RED burst %d too large" % burst)


def rps_mask(cpus):
    """The steering mask of all @cpus CPUs as sysfs takes it; "" for one
    (nothing to steer between)."""
    if cpus < 2:
        return ""
    digits = "%x" % ((1 << cpus) - 1)
    digits = digits.zfill(-(-len(digits) // 8) * 8)
    return ",".join(digits[i:i + 8] for i in range(0, len(digits), 8))


def steering_mask():
    """The mask Topology.steer gives every interface on this machine."""
    return rps_mask(os.cpu_count() or 1)


def rps_files(dev):
    return "/sys/class/net/%s/queues/rx-0/rps_cpus" % dev


def netem_args(direction, extra_ms=0.0):
    """netem options for one band of a satellite stage."""
    args = ["delay", "%.3fms" % (direction.delay_ms + extra_ms)]
    if direction.per > 0:
        args += ["corrupt", "%.6f%%" % (direction.per * 100)]
    if direction.gemodel:
        args += ["loss", "gemodel"] + ["%.6f%%" % direction.gemodel[k]
                                       for k in GE_KEYS]
    elif direction.loss > 0:
        args += ["loss", "random", "%.6f%%" % (direction.loss * 100)]
    return args


def reorder_band_args(direction, base_extra_ms):
    """netem options for the band of delayed packets (seed 000 §4.1)."""
    r = direction.reorder
    mean = r.mean_ms
    if r.dist == "fixed":
        return netem_args(direction, base_extra_ms + mean)
    # uniform: [0, 2 mean]; normal: N(mean, mean/3) clipped to +-3 sigma;
    # exponential: mean + mean * (Exp(1) - 1).
    sigma = {"uniform": mean, "normal": mean / 3,
             "exponential": mean}[r.dist]
    args = netem_args(direction, base_extra_ms + mean)
    args[2:2] = ["%.3fms" % sigma]
    if r.dist == "normal":
        args[3:3] = ["distribution", "satnet-normal3"]
    elif r.dist == "exponential":
        args[3:3] = ["distribution", "satnet-exp"]
    return args


class Topology:
    """Fresh namespaces per run; teardown even when the run fails."""

    def __init__(self, sc, profile, tag=None, pair_profiles=None):
        """pair_profiles: one profile per sender/receiver pair (a mix of
        variants on different profiles); default: profile everywhere."""
        self.sc = sc
        self.profile = profile
        self.pair_profiles = pair_profiles or [profile] * sc.pairs
        self.tag = tag if tag is not None else \
            "%d-%d" % (os.getpid(), next(_counter))
        self.pfx = "sn%s-" % self.tag
        self.r1 = self.pfx + "r1"
        self.r2 = self.pfx + "r2"
        self.snd = [self.pfx + "snd%d" % i for i in range(sc.pairs)]
        self.rcv = [self.pfx + "rcv%d" % i for i in range(sc.pairs)]
        self.created = []

    # -- helpers --------------------------------------------------------
    def all_ns(self):
        return [self.r1, self.r2] + self.snd + self.rcv

    def ex(self, ns, cmd, check=True, timeout=120, inp=None):
        return run(["ip", "netns", "exec", ns] + cmd, check=check,
                   timeout=timeout, inp=inp)

    def popen(self, ns, cmd, **kw):
        return subprocess.Popen(["ip", "netns", "exec", ns] + cmd,
                                env=tc_env(), **kw)

    def tc_batch(self, ns, lines):
        run(["tc", "-batch", "-"], inp="\n".join(lines) + "\n", ns=ns)

    @staticmethod
    def snd_addr(i):
        return "10.1.%d.1" % i

    @staticmethod
    def rcv_addr(i):
        return "10.2.%d.1" % i

    # -- build ----------------------------------------------------------
    def __enter__(self):
        try:
            self.up()
        except BaseException:
            self.down()
            raise
        return self

    def __exit__(self, *exc):
        self.down()

    def up(self):
        modprobe("sch_netem", "sch_htb", "sch_prio", "sch_red", "cls_basic",
                 "em_meta")
        if self.sc.qdisc == "epdn":
            modprobe("sch_epdn")
        prepare_tclib()
        prepare_programs()
        # One ip for all (in the VM each program started costs a few dozen
        # 9p requests); down() removes whatever part of them exists.
        self.created = self.all_ns()
        with own_ehash():
            ip_batch(["netns add " + ns for ns in self.created])
        self.links()
        self.addresses()
        self.offloads()
        self.steer()
        self.sysctls()
        self.qdiscs()
        if self.sc.epdn_domain:
            self.epdn_domain()

    def link_table(self):
        """(ns, dev, addr/prefix) pairs of every veth link."""
        links = [((self.r1, "b", "10.0.0.1/30"), (self.r2, "b", "10.0.0.2/30"))]
        for i in range(self.sc.pairs):
            links.append(((self.snd[i], "eth0", "10.1.%d.1/24" % i),
                          (self.r1, "s%d" % i, "10.1.%d.254/24" % i)))
            links.append(((self.r2, "r%d" % i, "10.2.%d.254/24" % i),
                          (self.rcv[i], "eth0", "10.2.%d.1/24" % i)))
        return links

    @staticmethod
    def mac(link, side):
        return "02:5a:%02x:%02x:00:%02x" % (link >> 8, link & 0xff, side)

    def links(self):
        lines = []
        for n, ends in enumerate(self.link_table()):
            (a, an, _), (b, bn, _) = ends
            lines.append("link add name %s netns %s address %s type veth "
                         "peer name %s netns %s address %s" %
                         (an, a, self.mac(n, 0), bn, b, self.mac(n, 1)))
        ip_batch(lines)

    def addresses(self):
        """Addresses, routes, and permanent neighbour entries: ARP through
        a satellite stage would take the propagation delay, longer than
        the neighbour code waits (deep space) or skewing the first RTTs."""
        batch = {ns: ["link set dev lo up"] for ns in self.all_ns()}
        for n, ends in enumerate(self.link_table()):
            for side in (0, 1):
                ns, dev, addr = ends[side]
                peer = ends[1 - side][2].split("/")[0]
                batch[ns] += ["addr add %s dev %s" % (addr, dev),
                              "link set dev %s up" % dev,
                              "neigh replace %s lladdr %s dev %s nud "
                              "permanent" % (peer, self.mac(n, 1 - side),
                                             dev)]
        batch[self.r1].append("route add 10.2.0.0/16 via 10.0.0.2")
        batch[self.r2].append("route add 10.1.0.0/16 via 10.0.0.1")
        for i in range(self.sc.pairs):
            for ns, net in ((self.snd[i], 1), (self.rcv[i], 2)):
                batch[ns].append("route add default via 10.%d.%d.254%s" %
                                 (net, i, self.advmss()))
            batch[self.snd[i]] += self.sender_segments()
        for ns, lines in batch.items():
            run(["ip", "-n", ns, "-batch", "-"], inp="\n".join(lines) + "\n")

    def advmss(self):
        """End hosts advertise run.mss, leaving room for IP options."""
        return " advmss %d" % self.sc.mss if self.sc.mss else ""

    def devices(self, ns):
        if ns == self.r1:
            return ["b"] + ["s%d" % i for i in range(self.sc.pairs)]
        if ns == self.r2:
            return ["b"] + ["r%d" % i for i in range(self.sc.pairs)]
        return ["eth0"]

    def offloads(self):
        """TSO/GSO/GRO off: netem limits count GSO packets, not wire packets
        (on the routers; a sender's own qdisc still sees TCP's GSO
        packets, see sender_segments)."""
        for ns in self.all_ns():
            for d in self.devices(ns):
                run(["ethtool", "-K", d, "tso", "off", "gso", "off", "gro",
                     "off"], ns=ns)

    def steer(self):
        """Receive packet steering on every veth, by flow hash over all of
        the guest's CPUs.  A veth hands a packet to the input backlog of
        the CPU that sent it.  When consecutive packets of one flow leave
        a qdisc on two CPUs (a netem timer fires on one, a sender runs on
        the other), each waits in its own CPU's backlog and the later one
        can go first: milliseconds apart when the host deschedules one
        vCPU, which a path that models no reordering must not do.  Steered,
        a flow keeps one backlog.  One CPU cannot reorder; left alone."""
        mask = steering_mask()
        if not mask:
            return
        lines = []
        for ns in self.all_ns():
            files = " ".join(rps_files(d) for d in self.devices(ns))
            lines.append("ip netns exec %s sh -ec 'for f in %s; do echo %s "
                         "> $f; done'" % (ns, files, mask))
        run(["sh", "-e"], inp="\n".join(lines) + "\n")

    def read_rps(self, ns):
        """{device: its receive queue's steering mask}, as sysfs shows it
        inside @ns."""
        out = self.ex(ns, ["cat"] + [rps_files(d)
                                     for d in self.devices(ns)]).stdout
        return dict(zip(self.devices(ns), out.split()))

    def sysctls(self):
        router = {"net.ipv4.ip_forward": 1,
                  "net.ipv4.conf.all.rp_filter": 0,
                  "net.ipv4.conf.default.rp_filter": 0}
        plan = [(ns, router) for ns in (self.r1, self.r2)]
        plan += [(ns, {**p.sender, **self.sc.sysctl})
                 for ns, p in zip(self.snd, self.pair_profiles)]
        plan += [(ns, {**p.receiver, **self.sc.sysctl})
                 for ns, p in zip(self.rcv, self.pair_profiles)]
        # Written in this process: in the VM every program started costs
        # a few dozen 9p requests to the host.
        for ns, kv in plan:
            for k, v in kv.items():
                try:
                    sysctl_write(ns, k, v)
                except OSError as e:
                    raise TopologyError("sysctl %s=%s in %s: %s" %
                                        (k, v, ns, e)) from None

    def read_sysctls(self, ns, keys):
        """As `sysctl -n` prints them, read without starting a program."""
        out = {}
        with netns(ns):
            for k in keys:
                with open("/proc/sys/" + k.replace(".", "/")) as f:
                    out[k] = f.read().rstrip("\n")
        return out

    # -- queueing disciplines --------------------------------------------
    def access_netem(self):
        return ["netem", "delay", "%.3fms" % ACCESS_DELAY_MS,
                "rate", "%dbit" % ACCESS_RATE_BPS, "limit", "1000"]

    def qdiscs(self):
        acc = " ".join(self.access_netem())
        for ns in self.rcv:
            self.tc_batch(ns, ["qdisc add dev eth0 root " + acc])
        snd = " ".join(self.access_netem() + self.sender_loss())
        for ns in self.snd:
            self.tc_batch(ns, ["qdisc add dev eth0 root " + snd])
        r1 = ["qdisc add dev s%d root %s" % (i, acc)
              for i in range(self.sc.pairs)]
        r1 += self.bottleneck_lines("b")
        self.tc_batch(self.r1, r1)
        self.tc_batch(self.r2, self.satellite_stages(self.sc.path_forward(),
                                                     self.sc.ack))

    def sender_loss(self):
        """bottleneck.gateway_loss without an epdn gateway to drop it: the
        same share lost on the senders' access links, which also reach the
        gateway's entry, so that it never takes the bottleneck's time."""
        p = self.sc.sender_drop()
        if not p:
            return []
        return ["loss", "random", "%.6f%%" % (p * 100)]

    def sender_segments(self):
        """One TCP segment per packet on the senders' links where they
        drop (sender_loss).  TCP hands its own qdisc GSO packets whatever
        the device's offloads (software segmentation comes after the
        qdisc), at least tcp_min_tso_segs (2) segments each, and netem
        drops a GSO packet whole: a drop would take two segments, at half
        the rate of loss events asked for.  gso_max_segs caps what TCP
        builds.  The ip lines for a sender's batch (addresses())."""
        if not self.sc.sender_drop():
            return []
        return ["link set dev eth0 gso_max_segs 1"]

    def epdn_args(self):
        """The epdn gateway's options, with bottleneck.gateway_loss's
        drops: CRC failures it records in mode v2 only, or, for
        "congestion", in mode v2, so that every mode records them (v2 and
        v3 differ only in CRC failures, and the option's V2 flag, which
        receivers ignore)."""
        sc = self.sc
        p = sc.gateway_drop()
        if not p:
            return sc.epdn_args
        args = sc.epdn_args
        if sc.gateway_loss == "congestion":
            args = re.sub(r"\s*\bmode\s+v[23]\b", "", args) + " mode v2"
        return "%s corrupt %.6f%%" % (args.strip(), p * 100)

    def bottleneck_lines(self, dev):
        sc = self.sc
        limit = sc.limit_packets()
        burst = " burst %d cburst %d" % (sc.burst_bytes, sc.burst_bytes) \
            if sc.burst_bytes else ""
        lines = ["qdisc add dev %s root handle 1: htb default 1" % dev,
                 "class add dev %s parent 1: classid 1:1 htb rate %dbit "
                 "ceil %dbit%s quantum 1514" % (dev, sc.rate_bps, sc.rate_bps,
                                                burst)]
        child = "qdisc add dev %s parent 1:1 handle 10: " % dev
        if sc.qdisc == "pfifo":
            lines.append(child + "pfifo limit %d" % limit)
        elif sc.qdisc == "red":
            lines.append(child + self.red_args(limit))
        else:
            lines.append(child + "epdn limit %d %s%s" %
                         (limit, self.epdn_args(), self.epdn_red_args()))
        return lines

    def red_params(self):
        """ns-2's RED defaults (the seeds give none): thresholds 5 and 15
        packets, max_p 0.1; bottleneck.red overrides them."""
        return {"min": 5, "max": 15, "probability": 0.1, **self.sc.red}

    def red_burst(self):
        red = self.red_params()
        return (2 * red["min"] + red["max"]) // 3 + 1

    def epdn_red_args(self):
        """The same RED, with ECN, inside an epdn qdisc (bytes), with the
        averaging weight tc gives the red qdisc for the same burst."""
        if not self.sc.epdn_red:
            return ""
        pkt, red = self.sc.fwd.packet_bytes, self.red_params()
        return " red min %d max %d probability %g ewma %d ecn" % (
            red["min"] * pkt, red["max"] * pkt, red["probability"],
            red_ewma_log(red["min"], self.red_burst()))

    def red_args(self, limit):
        """RED with ECN marking."""
        pkt, red = self.sc.fwd.packet_bytes, self.red_params()
        return ("red limit %d min %d max %d avpkt %d burst %d "
                "probability %g bandwidth %dbit ecn" %
                (max(limit, red["max"] * 2) * pkt, red["min"] * pkt,
                 red["max"] * pkt, pkt, self.red_burst(),
                 red["probability"], self.sc.rate_bps))

    def satellite_stages(self, fwd, ack, verb="add"):
        """R2's satellite stages: the return path on b, the forward path
        on every r<i>.  verb "change" gives the lines that move existing
        stages to other directions (the schedule): only their netem
        qdiscs, each with every option, since `tc qdisc change` resets
        what a netem line leaves out."""
        lines = self.satellite_lines("b", ack, 0.0, verb)
        for i in range(self.sc.pairs):
            lines += self.satellite_lines("r%d" % i, fwd, ACCESS_DELAY_MS,
                                          verb)
        return lines

    def satellite_lines(self, dev, direction, extra_ms, verb="add"):
        """One satellite stage; reordering as two prio bands, the second
        taking a random fraction of IPv4 packets (meta random, 32-bit)."""
        limit = " limit %d" % self.sc.netem_limit(direction)
        base = " ".join(netem_args(direction, extra_ms)) + limit
        if not direction.reorder.active:
            return ["qdisc %s dev %s root netem %s" % (verb, dev, base)]
        late = " ".join(reorder_band_args(direction, extra_ms)) + limit
        bands = [
            "qdisc %s dev %s parent 1:1 handle 10: netem %s" %
            (verb, dev, base),
            "qdisc %s dev %s parent 1:2 handle 20: netem %s" %
            (verb, dev, late)]
        if verb == "change":
            return bands
        thresh = int(direction.reorder.fraction * 0xffffffff)
        return [
            "qdisc add dev %s root handle 1: prio bands 2 priomap "
            "0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0" % dev] + bands + [
            "filter add dev %s parent 1: protocol ip prio 1 basic match "
            "'meta(random mask 0xffffffff lt %d)' flowid 1:2" % (dev, thresh)]

    def schedule_steps(self, duration_s):
        """The scenario's schedule as (t, namespace, tc lines) steps, t in
        seconds from the flows' start; none without a schedule."""
        sc = self.sc
        if not sc.schedule:
            return []
        return [(t, self.r2, self.satellite_stages(fwd, ack, "change"))
                for t, fwd, ack in sc.schedule.events(duration_s, sc.fwd,
                                                      sc.ack)]

    # -- teardown ---------------------------------------------------------
    def epdn_domain(self, r2=True):
        """Make the path one EPDN domain for RN-TCP and TCP-R: every
        sender originates the EPDN option (net.rn.epdn_origin), every
        receiver runs the RN-TCP receiver (net.rn.receiver), and, with r2,
        R2 is an EPDN router: what it forwards to the receivers passes an
        epdn qdisc (on an ifb, redirected from clsact egress, ahead of the
        satellite stage's netem), which brings EPDN-TTL down with TTL, so
        that EPDN-TTL equals TTL at the receiver.  Needs an epdn bottleneck
        and rn_host.ko (docs/rn-tcp.md)."""
        modprobe("rn_host", "sch_epdn")
        for ns in self.snd:
            sysctl_write(ns, "net.rn.epdn_origin", 1)
        for ns in self.rcv:
            sysctl_write(ns, "net.rn.receiver", 1)
        if not r2:
            return
        modprobe("ifb", "act_mirred", "cls_u32", "sch_ingress")
        ip_batch(["link add ifb0 type ifb", "link set ifb0 up"], ns=self.r2)
        lines = ["qdisc add dev ifb0 root epdn limit 10000"]
        for i in range(self.sc.pairs):
            lines += ["qdisc add dev r%d clsact" % i,
                      "filter add dev r%d egress protocol ip u32 match u32 "
                      "0 0 action mirred egress redirect dev ifb0" % i]
        self.tc_batch(self.r2, lines)

    def down(self):
        if self.created:
            remove_netns(*reversed(self.created))
        self.created = []
