# SPDX-License-Identifier: GPL-2.0
"""The soak: setup, the threads that run its steps until the end, the
teardown that undoes what it made even when it fails."""

import collections
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback

from satnet import host, kmod, measure, topo
from satnet.console import BAD
from satnet.host import netns
from satnet.scenario import load_profile, load_scenario
from lib.kernel import Kmsg

from . import log, read, write
from .churn import Churn
from .control import DEFAULT_CCS, OURS, Control
from .counters import add_counter, settled
from .failnth import FAIL_NTH, FailNth
from .faults import Faults
from .final import Final
from .flows import PORT, SHORT_THREADS
from .memory import (FAILSLAB, KMEMLEAK, Memory, kmemleak_ours,
                     kmemleak_works)
from .modules import FLOW_CACHE, SLAB, Modules
from .report import Report

PY = sys.executable or "/usr/bin/python3"
END_BUDGET_S = 6 * 60               # setup and checks, past --minutes
TEARDOWN_S = 4 * 60
ALLOWED_CC = "/proc/sys/net/ipv4/tcp_allowed_congestion_control"


class Soak(Control, Modules, Churn, Faults, Memory, FailNth, Final, Report):
    """One soak run: the state every thread's steps share (the mixed-in
    classes), its locks, counters and checks."""

    def __init__(self, args, me):
        """@me: the program to start flow workers with (run.py)."""
        self.me = me
        self.args = args
        self.seed = args.seed
        self.t0 = time.monotonic()
        self.started = time.time()
        self.soak_t0 = None                 # setup done, soak started
        self.soak_end = None
        self.stop = threading.Event()
        self.lock = threading.Lock()        # counters and checks
        self.rn_lock = threading.Lock()     # rn_host loaded, net.rn.* set
        self.esack_lock = threading.Lock()  # tcp_esack loaded
        self.fault_lock = threading.Lock()  # failslab's attributes
        self.b_lock = threading.RLock()     # the bottleneck's options
        self.probe_lock = threading.RLock()  # the probe qdisc
        self.n = collections.Counter()
        self.checks = collections.OrderedDict()
        self.skipped = []
        self.errors = []
        self.pfx = "sk%d" % (os.getpid() % 100000)
        self.scratch = tempfile.mkdtemp(prefix="soak-")
        self.stop_file = os.path.join(self.scratch, "stop")
        self.esack_off = os.path.join(self.scratch, "esack-off")
        self.topo = None
        self.sc = None
        self.servers, self.clients = [], []
        self.namespaces = []
        self.socks = []
        self.loaded = []
        self.saved_params = {}
        self.saved_failslab = {}
        self.rn_sum = {"snd": collections.Counter(),
                       "rcv": collections.Counter(),
                       "churn": collections.Counter()}
        self.mix = {"name": "calm", "since": time.monotonic()}
        self.mix_seconds = collections.Counter()
        self.final = {}
        self.kmsg = Kmsg()
        self.has = {"kmemleak": kmemleak_works(),
                    "failslab": os.path.isdir(FAILSLAB),
                    "fail-nth": os.path.exists(FAIL_NTH)}
        self.flow_cache_own = False
        self.allowed_cc = None
        self.base = {}

    # -- bookkeeping --

    def count(self, what, n=1):
        with self.lock:
            self.n[what] += n

    def check(self, name, ok, detail=""):
        with self.lock:
            c = self.checks.setdefault(name, {"passed": 0, "failed": []})
            if ok:
                c["passed"] += 1
            else:
                c["failed"].append(str(detail))
        if not ok:
            log("FAIL: %s: %s" % (name, detail))
        return ok

    def skip(self, what):
        """A debug-only part this kernel lacks."""
        if self.args.require_debug:
            self.check("debug kernel part present", False,
                       "%s: not in this kernel (--require-debug)" % what)
        else:
            self.skipped.append(what)
            log("%s: skipped: not in this kernel" % what)

    def packet_socket(self, ns):
        """A raw packet socket in namespace @ns, closed at the teardown."""
        with netns(ns):
            s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        self.socks.append(s)
        return s

    def elapsed(self):
        return time.monotonic() - self.t0

    def soaked(self):
        """Seconds of churn and faults so far."""
        if not self.soak_t0:
            return 0
        return (self.soak_end or time.monotonic()) - self.soak_t0

    def loop(self, name, step, period):
        """Run step(rnd) until the end, one error at a time recorded."""
        rnd = random.Random("%s-%s" % (self.seed, name))
        while not self.stop.is_set():
            try:
                step(rnd)
            except Exception:         # noqa: BLE001 - every error fails
                tb = traceback.format_exc().strip().splitlines()
                self.check("operations ran without unexpected errors",
                           False, "%s: %s (%s)" % (name, tb[-1],
                                                   tb[-3].strip()))
                self.stop.wait(2)
            self.stop.wait(period if not callable(period)
                           else period(rnd))

    # -- setup --

    def setup(self):
        if not self.has["kmemleak"]:
            self.skip("kmemleak")
        if not self.has["failslab"]:
            self.skip("failslab")
        if not self.has["fail-nth"]:
            self.skip("fail-nth (systematic fault injection)")
        if any(c["failed"] for c in self.checks.values()):
            return                      # --require-debug: no soak
        self.setup_kernel()
        host.prepare_tclib()    # tc reads epdn's options through our plugin
        self.setup_probe()
        self.setup_path()
        self.start_flows()

    def setup_kernel(self):
        """Modules loaded, their parameters saved, the congestion controls
        a namespace may make its default, kmemleak cleared."""
        self.loaded = [m for m in OURS if not kmod.loaded(m)]
        host.modprobe("sch_netem", "sch_htb", "cls_matchall", "act_gact",
                      "dummy", "ifb", "act_mirred", "cls_u32")
        host.modprobe(*OURS)
        self.save_params()
        # A namespace may make only these its default (rn and r: not
        # esack, which must be free to unload).
        self.allowed_cc = read(ALLOWED_CC)
        write(ALLOWED_CC, " ".join(sorted(set(
            self.allowed_cc.split()) | set(DEFAULT_CCS))))
        cache = os.path.join(SLAB, FLOW_CACHE)
        self.flow_cache_own = os.path.isdir(cache) and \
            not os.path.islink(cache)
        if self.has["kmemleak"]:
            write(KMEMLEAK, "clear")        # what came before is not ours

    def setup_path(self):
        """The dumbbell, with a tc action counting what enters each epdn
        qdisc, and a raw socket at R1 for crafted frames."""
        self.sc = load_scenario("mild-reorder", {
            "bottleneck.qdisc": "epdn", "bottleneck.limit": 16,
            "bottleneck.rate_mbit": 10, "bottleneck.burst_bytes": 30000,
            "bottleneck.epdn": "flows 1024 idle 2s",
            "bottleneck.epdn_domain": True, "forward.delay_ms": 10,
            "ack.delay_ms": 10, "forward.reorder.fraction": 0.0,
            "run.pairs": 2})
        self.topo = topo.Topology(self.sc, load_profile("linux"),
                                  tag=self.pfx)
        self.topo.__enter__()
        t = self.topo
        # No IPv6 chatter (router solicitations, DAD, MLD) from here on: the
        # epdn qdiscs got some before their counters were in place, which
        # the baseline below takes out.
        for ns in t.all_ns():
            host.disable_ipv6(ns)
        add_counter("b", t.r1)          # packets into the bottleneck epdn
        add_counter("ifb0", t.r2)       # ... into R2's epdn (redirected)
        add_counter("b", t.r2)          # ... into the return netem
        # R2 drops too (overflow, emulated CRC errors): its records merge
        # into the options R1 made.
        host.run(["tc", "qdisc", "change", "dev", "ifb0", "root", "epdn",
                  "limit", "24", "mode", "v2", "corrupt", "0.5%"], ns=t.r2)
        time.sleep(1)
        for label, ns, dev, counter in self.epdn_qdiscs(probe=False):
            st, entered = settled(ns, dev, counter)
            self.base[label] = st["packets"] + st["drops"] + st["qlen"] - \
                entered
        self.inject_sock = self.packet_socket(t.r1)

    def start_flows(self):
        t = self.topo
        for i in range(self.sc.pairs):
            cfg = {"port": PORT, "stats": os.path.join(self.scratch,
                                                       "server%d.json" % i)}
            self.servers.append((self.start_worker(t.rcv[i], "server", cfg),
                                 cfg))
        for i in range(self.sc.pairs):
            measure.wait_listening(t, t.rcv[i], PORT, timeout=60)
        for i in range(self.sc.pairs):
            cfg = {"dst": t.rcv_addr(i), "port": PORT,
                   "threads": SHORT_THREADS, "long": [i, i + 2],
                   "stop": self.stop_file, "esack_off": self.esack_off,
                   "stats": os.path.join(self.scratch, "client%d.json" % i),
                   "seed": self.seed * 10 + i}
            self.clients.append((self.start_worker(t.snd[i], "client", cfg),
                                 cfg))

    def start_worker(self, ns, kind, cfg):
        out = open(os.path.join(self.scratch, "%s-%s.log" % (kind, ns)), "w")
        return self.topo.popen(ns, [PY, self.me, "--worker", kind,
                                    json.dumps(cfg)],
                               stdout=out, stderr=subprocess.STDOUT)

    def threads(self):
        specs = [("control", self.control_step,
                  lambda r: r.uniform(0.3, 1.2)),
                 ("modules", self.modules_step, 8),
                 ("churn", self.churn_step, 1),
                 ("faults", self.faults_step, 2),
                 ("fail-nth", self.failnth_step, 20)]
        if self.has["failslab"] and self.failslab_setup():
            specs.append(("memory", self.memory_step, 0))
        out = [threading.Thread(target=self.loop, args=spec, daemon=True,
                                name=spec[0]) for spec in specs]
        for th in out:
            th.start()
        return out

    def progress(self):
        short = collections.Counter()
        for st in self.worker_stats("client"):
            for kinds in st.get("short", {}).values():
                short.update(kinds)
        with self.lock:             # a check may be added meanwhile
            n = collections.Counter(self.n)
            failed = sum(len(c["failed"]) for c in self.checks.values())
        log("%.1f/%g min: short flows %d ok %d failed, netns %d, "
            "qdisc changes %d, params %d, frames %d, failnth points %d, "
            "checks failed %d" % (
                self.soaked() / 60, self.args.minutes, short["ok"],
                short["failed"] + short["corrupt"], n["ops.netns_created"],
                n["ops.qdisc_change"] + n["ops.netlink_changes"],
                n["ops.param_write"], n["faults.hostile_frames"],
                n["faults.failnth_points"], failed))

    def worker_stats(self, kind):
        out = []
        for _, cfg in self.clients if kind == "client" else self.servers:
            try:
                with open(cfg["stats"]) as f:
                    out.append(json.load(f))
            except (OSError, ValueError):
                out.append({})
        return out

    def on_alarm(self, *_):
        if getattr(self, "tearing", False):
            log("FAIL: teardown overran its time; exiting as it stands")
            os._exit(3)
        raise TimeoutError("the soak overran --minutes by %d s" %
                           END_BUDGET_S)

    def run(self):
        signal.signal(signal.SIGALRM, self.on_alarm)
        signal.signal(signal.SIGTERM, self.on_alarm)
        signal.alarm(int(self.args.minutes * 60 + END_BUDGET_S))
        threads = []
        try:
            self.setup()
            if not self.checks or all(not c["failed"] for c in
                                      self.checks.values()):
                threads = self.soak()
                self.finish()
        except BaseException:       # noqa: BLE001 - recorded, torn down
            tb = traceback.format_exc().strip()
            self.check("the soak ran to its end", False, tb)
        finally:
            self.stop.set()
            for th in threads:
                th.join(timeout=60)
            self.tearing = True
            signal.alarm(TEARDOWN_S)
            self.teardown()
        self.post_checks()
        signal.alarm(0)
        return self.report()

    def soak(self):
        """The threads run their steps for --minutes; returns them,
        stopped."""
        log("soaking for %g min (seed %d), debug parts: %s" % (
            self.args.minutes, self.seed,
            ", ".join(k for k, v in self.has.items() if v) or "none"))
        self.soak_t0 = time.monotonic()
        deadline = self.soak_t0 + self.args.minutes * 60
        threads = self.threads()
        next_report = time.monotonic()
        while time.monotonic() < deadline:
            time.sleep(1)
            if time.monotonic() > next_report:
                self.progress()
                next_report += 30
        self.soak_end = time.monotonic()
        self.stop.set()
        for th in threads:
            th.join(timeout=120)
        return threads

    def teardown(self):
        log("tearing down")
        try:
            write(self.stop_file, "1")
        except OSError:
            pass
        for p, _ in self.servers + self.clients:
            if p.poll() is None:
                p.kill()
            p.wait()
        try:
            with self.fault_lock:
                self.failslab_restore()
        except OSError as e:
            log("failslab: %s" % e)
        for s in self.socks:
            s.close()
        if self.topo:
            self.topo.__exit__(None, None, None)
        if self.namespaces:
            host.ip_batch(["netns del " + ns for ns in self.namespaces],
                          check=False)
        self.restore_params()
        if self.allowed_cc is not None:
            write(ALLOWED_CC, self.allowed_cc)
        self.unload()

    def post_checks(self):
        if self.has["kmemleak"]:
            leaks = kmemleak_ours()
            self.final["kmemleak_ours"] = leaks
            self.check("kmemleak: no leak naming our modules", not leaks,
                       "\n".join(leaks[:5]))
        bad = [ln for ln in self.kmsg.lines() if BAD.search(ln)]
        self.check("kernel console clean", not bad, "\n".join(bad[:20]))
