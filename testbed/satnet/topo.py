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

import contextlib
import ctypes
import errno
import itertools
import json
import os
import random
import select
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import threading
import time

from . import dist, kmod
from .paths import MODULES, TOP, hang_limit, ko
from .scenario import ACCESS_DELAY_MS, ACCESS_RATE_BPS, GE_KEYS

TC_LIB = os.path.join(TOP, "build", "tclib")
_counter = itertools.count()
_tclib_lock = threading.Lock()
_tclib_done = []


class TopologyError(RuntimeError):
    pass


def run(cmd, check=True, inp=None, timeout=120, ns=None):
    """Run a command, in network namespace @ns when given (this thread
    enters it, and the command starts there)."""
    with netns(ns):
        r = subprocess.run(cmd, input=inp, capture_output=True, text=True,
                           timeout=hang_limit(timeout), env=tc_env())
    if check and r.returncode:
        raise TopologyError("%s failed (%d): %s" %
                            (" ".join(cmd), r.returncode,
                             (r.stderr or r.stdout).strip()))
    return r


# In the VM the checkout is a 9p share: every file tc reads from it is a
# request to the host, and under the virtual clock the guest's time runs
# on while it waits.  There tc reads a copy in the guest's own tmpfs.
GUEST_TC_LIB = "/run/satnet/tclib"
_tc_lib = [TC_LIB]


def tc_env():
    env = dict(os.environ)
    env["TC_LIB_DIR"] = _tc_lib[0]
    return env


def prepare_tclib():
    """Our netem tables (and tc plugins) live in build/tclib."""
    with _tclib_lock:
        if not _tclib_done:
            dist.write_tables(TC_LIB)
            _tclib_done.append(True)
    plugin = os.path.join(TOP, "build", "tc", "q_epdn.so")
    if os.path.exists(plugin):
        link = os.path.join(TC_LIB, "q_epdn.so")
        with _tclib_lock:
            if not os.path.lexists(link):
                try:
                    os.symlink(plugin, link)
                except FileExistsError:     # another guest made it
                    pass
    if os.environ.get("SATNET_IN_VM") == "1":
        with _tclib_lock:
            if _tc_lib[0] != GUEST_TC_LIB:
                copy_files(TC_LIB, GUEST_TC_LIB)
                _tc_lib[0] = GUEST_TC_LIB


def copy_files(src, dst):
    """The files of folder @src (symbolic links followed) into @dst, each
    replaced whole: another process may be reading the old one."""
    os.makedirs(dst, exist_ok=True)
    for name in os.listdir(src):
        path = os.path.join(src, name)
        if name.endswith(".tmp") or not os.path.isfile(path):
            continue
        fd, tmp = tempfile.mkstemp(prefix=name + ".", suffix=".tmp", dir=dst)
        with open(path, "rb") as f, os.fdopen(fd, "wb") as out:
            shutil.copyfileobj(f, out)
        os.chmod(tmp, 0o644)
        os.replace(tmp, os.path.join(dst, name))


# What insmod cannot resolve by itself (modprobe reads modules.dep).
OWN_DEPENDS = {"tcp_r": ("tcp_rn",)}


def modprobe(*mods):
    """Load modules: the kernel's with modprobe; ours with modprobe when
    installed (make install), otherwise with insmod from the build tree."""
    for m in mods:
        if kmod.loaded(m):
            continue
        r = run(["modprobe", m], check=False)
        if r.returncode and m in MODULES:
            modprobe(*OWN_DEPENDS.get(m, ()))
            try:
                kmod.insmod(ko(m), reload=False)
                continue
            except kmod.ModuleError as e:
                if kmod.loaded(m):
                    continue             # a concurrent run loaded it
                raise TopologyError("cannot load %s: %s" % (m, e)) from None
        if r.returncode:
            raise TopologyError("cannot load %s: %s" %
                                (m, (r.stderr or r.stdout).strip()))


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


def ip_batch(lines, check=True, ns=None):
    """ip commands in one program (in namespace @ns); -force: all of them,
    even after one fails."""
    return run(["ip"] + (["-n", ns] if ns else []) + ["-force", "-batch",
                                                      "-"],
               check=check, inp="".join(ln + "\n" for ln in lines))


def remove_netns(*names):
    """Kill what runs in the namespaces @names, then delete them; True
    when every one was deleted."""
    pids = ip_batch(["netns pids " + ns for ns in names],
                    check=False).stdout.split()
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(pid), signal.SIGKILL)
    return ip_batch(["netns del " + ns for ns in names],
                    check=False).returncode == 0


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
        # One ip for all (in the VM each program started costs a few dozen
        # 9p requests); down() removes whatever part of them exists.
        self.created = self.all_ns()
        ip_batch(["netns add " + ns for ns in self.created])
        self.links()
        self.addresses()
        self.offloads()
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
        """TSO/GSO/GRO off: netem limits count GSO packets, not wire packets."""
        for ns in self.all_ns():
            for d in self.devices(ns):
                run(["ethtool", "-K", d, "tso", "off", "gso", "off", "gro",
                     "off"], ns=ns)

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
        for ns in self.snd + self.rcv:
            self.tc_batch(ns, ["qdisc add dev eth0 root " + acc])
        r1 = ["qdisc add dev s%d root %s" % (i, acc)
              for i in range(self.sc.pairs)]
        r1 += self.bottleneck_lines("b")
        self.tc_batch(self.r1, r1)
        self.tc_batch(self.r2, self.satellite_stages(self.sc.fwd, self.sc.ack))

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
                         (limit, sc.epdn_args, self.epdn_red_args()))
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


# ---- network namespaces entered by one thread ----------------------------

_libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNET = 0x40000000


def _setns(fd):
    if _libc.setns(fd, CLONE_NEWNET):
        err = ctypes.get_errno()
        raise OSError(err, "setns: " + os.strerror(err))


@contextlib.contextmanager
def netns(name):
    """Move this thread into network namespace @name (ip netns), and back
    after; sockets opened inside stay in it.  None: stay where we are."""
    if not name:
        yield
        return
    home = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    try:
        fd = os.open("/run/netns/" + name, os.O_RDONLY)
        try:
            _setns(fd)
        finally:
            os.close(fd)
        yield
    finally:
        _setns(home)
        os.close(home)


def sysctl_write(ns, key, value):
    """Write one sysctl of namespace @ns without starting a program."""
    with netns(ns):
        with open("/proc/sys/" + key.replace(".", "/"), "w") as f:
            f.write(str(value))


def proc_net(ns, name):
    """/proc/net/@name as namespace @ns sees it."""
    with netns(ns):
        with open("/proc/thread-self/net/" + name) as f:
            return f.read()


def rn_host_stats(ns):
    """/proc/net/rn_host (tcp_rn/rn_host.ko) of a namespace as a dict."""
    return {k: int(v) for k, v in (ln.split() for ln in
                                   proc_net(ns, "rn_host").splitlines())}


def qdisc_stats(dev, ns=None, kind="epdn"):
    """The qdisc of @kind on @dev as `tc -s -j` prints it: its options,
    the basic and queue counters, and the qdisc's own xstats, flat."""
    prepare_tclib()             # tc reads epdn's options through our plugin
    out = json.loads(run(["tc", "-s", "-j", "qdisc", "show", "dev", dev],
                         ns=ns).stdout)
    (q,) = [q for q in out if q["kind"] == kind]
    return q


# ---- the kernel console -----------------------------------------------------

class Kmsg:
    """Kernel log lines written since creation."""

    def __init__(self):
        self.fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
        os.lseek(self.fd, 0, os.SEEK_END)

    def read(self):
        """The lines since the last read."""
        out = []
        while True:
            try:
                rec = os.read(self.fd, 8192)
            except BlockingIOError:
                break
            except BrokenPipeError:     # overwritten: go on from here
                continue
            out.append(rec.decode(errors="replace").split(";", 1)[-1])
        return out

    def lines(self):
        """The lines since the last read; closes the log."""
        out = self.read()
        os.close(self.fd)
        return out


# ---- crafted packets (IPv4, TCP, the EPDN option) ----------------------------

OPT_TYPE = 0x9e                     # the EPDN IPv4 option (epdn_wire.h)
F_EMPTY, F_HOST, F_V2 = 1, 2, 4
ETH_P_ALL, ETH_P_IP, ETH_P_IPV6, ETH_P_8021Q = 0x0003, 0x0800, 0x86dd, 0x8100
RR_OPT = bytes([7, 7, 4, 0, 0, 0, 0])     # record route, one empty slot


def csum(data):
    """The Internet checksum."""
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def epdn_opt(ttl, flags, lo=0, hi=0, version=1, length=12):
    """An EPDN option; a @length below 12 cuts it short (malformed)."""
    body = struct.pack("!BBBBII", OPT_TYPE, length, ttl, version << 4 | flags,
                       lo, hi)
    return body[:length] if length < 12 else body


def ipv4(src, dst, payload, ttl=64, proto=6, opts=b"", frag=0, ident=0x1234,
         tos=0):
    """An IPv4 packet with a correct header checksum; @tos carries the ECN
    field in its low two bits."""
    opts += b"\0" * (-len(opts) % 4)
    ihl = 5 + len(opts) // 4
    hdr = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, tos, ihl * 4 + len(payload),
                      ident, frag, ttl, proto, 0, socket.inet_aton(src),
                      socket.inet_aton(dst)) + opts
    hdr = hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:]
    return hdr + payload


def tcp(sport, dport, seq, paylen, flags=0x18, doff=5):
    """A TCP header (checksum 0) and @paylen bytes: enough for a qdisc."""
    return struct.pack("!HHIIBBHHH", sport, dport, seq, 1, doff << 4, flags,
                       65535, 0, 0) + b"x" * paylen


def raw_tcp(p):
    """A TCP/IPv4 packet that a host accepts (both checksums right) from a
    dict: src, dst, sport, dport, seq, ack, flags ("FSRPAU" letters), win,
    len (payload bytes), ttl, opts (IPv4 options, hex strings), tcpopts
    (TCP options, bytes) and csum_xor (flips TCP checksum bits)."""
    src, dst = socket.inet_aton(p["src"]), socket.inet_aton(p["dst"])
    flags = sum(1 << "FSRPAU".index(c) for c in p.get("flags", "PA"))
    topts = p.get("tcpopts", b"")
    topts += b"\0" * (-len(topts) % 4)
    data = b"x" * p.get("len", 100)
    th = struct.pack("!HHIIBBHHH", p.get("sport", 4000), p.get("dport", 80),
                     p.get("seq", 1), p.get("ack", 0),
                     (5 + len(topts) // 4) << 4, flags, p.get("win", 65535),
                     0, 0) + topts + data
    pseudo = src + dst + struct.pack("!BBH", 0, 6, len(th))
    check = csum(pseudo + th) ^ p.get("csum_xor", 0)
    th = th[:16] + struct.pack("!H", check) + th[18:]
    opts = b"".join(bytes.fromhex(h) for h in p.get("opts", []))
    return ipv4(p["src"], p["dst"], th, ttl=p.get("ttl", 64), opts=opts,
                ident=1)


def xmit(s, frame, addr=None):
    """Send on an AF_PACKET socket; a qdisc drop comes back as ENOBUFS.
    True when the frame was queued."""
    try:
        if addr:
            s.sendto(frame, addr)
        else:
            s.send(frame)
    except OSError as e:
        if e.errno != errno.ENOBUFS:
            raise
        return False
    return True


def odd_frames(src, dst, sport=8001):
    """(ethertype, payload) pairs of flow @src:@sport -> @dst:80 that an
    EPDN router must pass byte for byte: not IPv4, fragments, malformed
    headers, options it must not touch, not TCP, odd TCP headers."""
    g = ipv4(src, dst, tcp(sport, 80, 5000, 100))
    tcp_ok = tcp(sport, 80, 6000, 100)
    return [
        (ETH_P_IPV6, bytes([0x60]) + b"\0" * 60),                  # IPv6
        (ETH_P_8021Q, b"\x45\x00\x08\x00" + g),       # VLAN tag in payload
        (ETH_P_IP, ipv4(src, dst, tcp_ok, frag=0x2000)),           # MF
        (ETH_P_IP, ipv4(src, dst, b"x" * 64, frag=10)),            # offset
        (ETH_P_IP, g[:30]),                                        # truncated
        (ETH_P_IP, b""),                                           # empty
        (ETH_P_IP, b"\x45"),                                       # 1 byte
        (ETH_P_IP, bytes([0x4f]) + g[1:]),                         # ihl 15
        (ETH_P_IP, bytes([0x44]) + g[1:]),                         # ihl 4
        (ETH_P_IP, bytes([0x65]) + g[1:]),                         # version 6
        (ETH_P_IP, g[:2] + b"\x05\xdc" + g[4:]),                   # tot_len >
        (ETH_P_IP, g[:2] + b"\x00\x10" + g[4:]),                   # tot_len <
        (ETH_P_IP, bytes([0x46]) + g[1:20] + bytes([7, 40, 4, 0]) +
         g[20:]),                                                  # opt len
        (ETH_P_IP, ipv4(src, dst, tcp_ok, opts=bytes([0x9e, 8]) +
                        b"\0" * 6)),                               # EPDN len 8
        (ETH_P_IP, ipv4(src, dst, tcp_ok, opts=epdn_opt(64, 0, 1, 2,
                                                        version=2))),
        (ETH_P_IP, ipv4(src, dst, tcp_ok, opts=b"\0" + epdn_opt(64, 0)
                        [:11])),                                   # EOL first
        (ETH_P_IP, ipv4(src, dst, tcp_ok, proto=17)),              # UDP
        (ETH_P_IP, ipv4(src, dst, b"\x01\x02")),                   # TCP 2 B
        (ETH_P_IP, ipv4(src, dst, tcp(sport, 80, 6000, 10,
                                      doff=15))),                  # doff > len
        (ETH_P_IP, ipv4(src, dst, tcp(sport, 80, 6000, 100,
                                      doff=4))),                   # doff 4
        (ETH_P_IP, ipv4(src, dst, tcp(sport, 80, 6000, 0,
                                      flags=0x10))),               # pure ACK
    ]


def fuzz_frames(n, seed, src, dst, sport=8100):
    """@n crafted TCP/IPv4 packets of four flows (@sport..@sport+3 ->
    @dst:80), mutated: headers, lengths, options, flags, truncation and
    wrapping sequence numbers; a few IPv6 or VLAN-tagged."""
    rnd = random.Random(seed)
    out = []
    for _ in range(n):
        port = sport + rnd.randrange(4)
        seq = rnd.choice([rnd.randrange(1 << 32), 0xffffff00 +
                          rnd.randrange(512) & 0xffffffff])
        opts = rnd.choice([b"", epdn_opt(rnd.randrange(256),
                                         rnd.randrange(16),
                                         rnd.randrange(1 << 32),
                                         rnd.randrange(1 << 32)),
                           RR_OPT, b"\x01" * 3 + epdn_opt(64, 1),
                           epdn_opt(64, 3) + RR_OPT])
        p = bytearray(ipv4(src, dst, tcp(port, 80, seq, rnd.randrange(200),
                                         flags=rnd.randrange(256)),
                           opts=opts))
        for _ in range(rnd.randrange(4)):
            what = rnd.randrange(6)
            if what == 0 and p:           # any header byte
                p[rnd.randrange(min(len(p), 80))] = rnd.randrange(256)
            elif what == 1:
                p = p[:rnd.randrange(len(p) + 1)]
            elif what == 2 and p:
                p[0] = 0x40 | rnd.randrange(16)
            elif what == 3 and len(p) >= 4:
                struct.pack_into("!H", p, 2, rnd.randrange(1 << 16))
            elif what == 4 and len(p) >= 8:
                struct.pack_into("!H", p, 6, rnd.choice([0x2000, 1, 0x4000]))
            elif what == 5:
                ihl = (p[0] & 15) * 4 if p else 0
                if len(p) > ihl + 12:
                    p[ihl + 12] = rnd.randrange(256)
        etype = rnd.choices([ETH_P_IP, ETH_P_IPV6, ETH_P_8021Q],
                            [95, 3, 2])[0]
        if etype == ETH_P_8021Q:          # a tag, then the IPv4 packet
            p = struct.pack("!HH", rnd.randrange(1 << 16), ETH_P_IP) + p
        out.append((etype, bytes(p)))
    return out


# ---- captured packets (tcpdump -w, read back) --------------------------------

def parse_epdn(ip):
    """The EPDN option of an IPv4 packet as a dict, or None."""
    ihl = (ip[0] & 15) * 4
    i = 20
    while i < min(ihl, len(ip)):
        t = ip[i]
        if t == 0:
            break
        if t == 1:
            i += 1
            continue
        if i + 1 >= len(ip):
            break
        ln = max(ip[i + 1], 2)
        if t == OPT_TYPE and ln == 12 and i + 12 <= len(ip):
            ettl, vf, lo, hi = struct.unpack("!BBII", ip[i + 2:i + 12])
            return dict(ettl=ettl, version=vf >> 4, flags=vf & 15,
                        min=lo, max=hi, at=i)
        i += ln
    return None


def parse_sack(opts):
    """The SACK blocks [(left, right), ...] among TCP options."""
    i, out = 0, []
    while i < len(opts):
        kind = opts[i]
        if kind == 0:
            break
        if kind == 1:
            i += 1
            continue
        if i + 1 >= len(opts) or opts[i + 1] < 2:
            break
        ln = opts[i + 1]
        if kind == 5:
            body = opts[i + 2:i + ln]
            out += [struct.unpack("!II", body[j:j + 8])
                    for j in range(0, len(body) - 7, 8)]
        i += ln
    return out


def parse_ip(ip):
    """What the tests look at in a captured IPv4 packet; for TCP also the
    ports, sequence and ACK numbers, payload length, the drop-negative bit
    (the lowest reserved bit, tcp[12] & 2) and the SACK blocks."""
    ihl = (ip[0] & 15) * 4
    d = dict(ttl=ip[8], ihl=ihl, len=struct.unpack("!H", ip[2:4])[0],
             ident=struct.unpack("!H", ip[4:6])[0],
             proto=ip[9], src=socket.inet_ntoa(ip[12:16]),
             csum_ok=csum(ip[:ihl]) == 0, opt=parse_epdn(ip),
             sport=None, seq=None)
    if ip[9] == 6 and len(ip) >= ihl + 14:
        d["sport"], d["dport"], d["seq"], d["ack"] = struct.unpack(
            "!HHII", ip[ihl:ihl + 12])
        doff = (ip[ihl + 12] >> 4) * 4
        d["payload"] = d["len"] - ihl - doff
        d["dn"] = bool(ip[ihl + 12] & 0x02)
        d["sack"] = parse_sack(ip[ihl + 20:ihl + doff])
    return d


def read_pcap(path):
    """The frames of a pcap file (either byte order)."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        return []
    endian = "<" if data[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") \
        else ">"
    out, off = [], 24
    while off + 16 <= len(data):
        incl = struct.unpack(endian + "I", data[off + 8:off + 12])[0]
        off += 16
        if off + incl > len(data):
            break
        out.append(data[off:off + incl])
        off += incl
    return out


class Tcpdump:
    """tcpdump -w at a device of namespace @ns; stop() parses what it
    wrote: the IPv4 packets (parse_ip), in the order the device saw them."""

    def __init__(self, ns, dev, filt, snaplen=256):
        fd, self.path = tempfile.mkstemp(prefix="satnet-", suffix=".pcap")
        os.close(fd)
        self.proc = subprocess.Popen(
            ["ip", "netns", "exec", ns, "tcpdump", "-Z", "root", "-n", "-U",
             "-s", str(snaplen), "-i", dev, "-w", self.path, filt],
            stderr=subprocess.PIPE, text=True)
        text, end = "", time.time() + 60
        while "listening on" not in text and time.time() < end:
            ready, _, _ = select.select([self.proc.stderr], [], [], 1)
            line = self.proc.stderr.readline() if ready else ""
            if ready and not line:
                break
            text += line
        if "listening on" not in text:
            self.proc.kill()
            raise TopologyError("tcpdump did not start: " + text)

    def packets(self):
        return [parse_ip(f[14:]) for f in read_pcap(self.path)
                if len(f) >= 34 and f[12:14] == b"\x08\x00"]

    def stop(self, want=0, timeout=20):
        """Stop once @want packets were written (or after @timeout)."""
        end = time.time() + timeout
        while time.time() < end and len(self.packets()) < want:
            time.sleep(0.1)
        time.sleep(0.3)
        self.proc.send_signal(signal.SIGINT)
        self.proc.communicate(timeout=30)
        seen = self.packets()
        os.unlink(self.path)
        return seen


# ---- rtnetlink, raw: what tc itself would never send ------------------------

RTM_NEWQDISC, NLMSG_ERROR = 36, 2
NLM_F_REQUEST, NLM_F_ACK, NLM_F_EXCL, NLM_F_CREATE = 1, 4, 0x200, 0x400
NLM_F_CAPPED, NLM_F_ACK_TLVS = 0x100, 0x200
NLA_F_NESTED = 0x8000
SOL_NETLINK, NETLINK_EXT_ACK = 270, 11
NLMSGERR_ATTR_MSG, NLMSGERR_ATTR_OFFS = 1, 2
TCA_KIND, TCA_OPTIONS = 1, 2
TC_H_ROOT = 0xFFFFFFFF
(TCA_EPDN_LIMIT, TCA_EPDN_BYTE_LIMIT, TCA_EPDN_MODE, TCA_EPDN_IDLE,
 TCA_EPDN_FLOWS, TCA_EPDN_CORRUPT, TCA_EPDN_RED, TCA_EPDN_RED_MIN,
 TCA_EPDN_RED_MAX, TCA_EPDN_RED_PROB, TCA_EPDN_RED_EWMA, TCA_EPDN_RED_ECN,
 TCA_EPDN_RED_HARDDROP) = range(1, 14)
TCA_EPDN_U8 = {TCA_EPDN_MODE, TCA_EPDN_RED, TCA_EPDN_RED_EWMA,
               TCA_EPDN_RED_ECN, TCA_EPDN_RED_HARDDROP}
# Offset of the first attribute inside TCA_OPTIONS of an epdn request:
# nlmsghdr, tcmsg, TCA_KIND (12 bytes padded), the TCA_OPTIONS header.
EPDN_FIRST_OPT = 16 + 20 + 12 + 4


def nla(kind, data):
    return struct.pack("HH", 4 + len(data), kind) + data + \
        b"\0" * (-len(data) % 4)


def epdn_qdisc_msg(dev, attrs, flags=NLM_F_CREATE | NLM_F_EXCL,
                   handle=0x10000, parent=TC_H_ROOT):
    """RTM_NEWQDISC for an epdn qdisc with TCA_EPDN_* @attrs, (type,
    value) pairs: by default a new root 1: on @dev; flags 0 and the
    qdisc's handle and parent change an existing one."""
    opts = b"".join(nla(k, struct.pack("B" if k in TCA_EPDN_U8 else "I", v))
                    for k, v in attrs)
    body = struct.pack("BxxxiIII", socket.AF_UNSPEC,
                       socket.if_nametoindex(dev), handle, parent, 0) + \
        nla(TCA_KIND, b"epdn\0") + nla(TCA_OPTIONS | NLA_F_NESTED, opts)
    return struct.pack("IHHII", 16 + len(body), RTM_NEWQDISC,
                       NLM_F_REQUEST | NLM_F_ACK | flags, 1, 0) + body


def rtnl_socket(timeout=30):
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW,
                      socket.NETLINK_ROUTE)
    s.setsockopt(SOL_NETLINK, NETLINK_EXT_ACK, 1)
    s.settimeout(timeout)
    return s


def rtnl_ack(s, msg):
    """Send one request on rtnetlink socket @s and read its ack: the
    error (0 or a positive errno; an error of the socket itself, such as
    ENOBUFS for an ack that could not be allocated, counts too), the
    extack message and the offset of the attribute the kernel blamed."""
    try:
        s.send(msg)
        reply = s.recv(65536)
    except OSError as e:
        return e.errno, "", 0
    _, kind, rflags, _, _ = struct.unpack_from("IHHII", reply)
    if kind != NLMSG_ERROR:
        raise TopologyError("rtnetlink answered %d, not an ack" % kind)
    (err,) = struct.unpack_from("i", reply, 16)
    pos = 20 + (16 if rflags & NLM_F_CAPPED else len(msg))
    text, offs = "", 0
    while rflags & NLM_F_ACK_TLVS and pos + 4 <= len(reply):
        alen, atype = struct.unpack_from("HH", reply, pos)
        if atype == NLMSGERR_ATTR_MSG:
            text = reply[pos + 4:pos + alen].rstrip(b"\0").decode()
        elif atype == NLMSGERR_ATTR_OFFS:
            (offs,) = struct.unpack_from("I", reply, pos + 4)
        pos += (alen + 3) & ~3
    return -err, text, offs
