# SPDX-License-Identifier: GPL-2.0
"""The soak's control plane under load: tc qdisc change of the live epdn
qdiscs, writes of our modules' parameters, of the net.rn sysctls and of
the senders' default congestion control; what is invalid must be refused
and change nothing."""

from satnet import host, kmod
from satnet.host import sysctl_write
from satnet.paths import MODULES
from lib.kernel import qdisc_stats

OURS = tuple(MODULES)
# What a namespace may make its default: not esack, which must be free to
# unload.
DEFAULT_CCS = ("rn", "r", "cubic", "reno")

# tc qdisc change of a live epdn: `limit` stays small, so it drops.
CHANGES = ["limit 8", "limit 16", "limit 32 flows 64", "limit 4 flows 1024",
           "flows 16 idle 100ms", "flows 65536 idle 2s", "idle 50ms",
           "idle 5s", "mode v2 corrupt 0.5%", "mode v3 corrupt 0",
           "red min 3000 max 12000 probability 0.05",
           "red min 1500 max 9000 probability 0.2 ecn harddrop", "red off",
           "bytelimit 12k", "bytelimit 0", "limit 16 bytelimit 6k",
           "mode v2", "mode v3 flows 256"]
# ... and what must be refused, changing nothing.
BAD_CHANGES = ["flows 7", "limit 0", "bytelimit 63",
               "red min 9000 max 3000 probability 0.1", "idle 999us"]
FAILNTH_FLOWS = (16, 32, 64, 128)   # tables within a page: kvcalloc fails
# Writable module parameters: (valid values, values that must be refused).
PARAMS = {
    "rn_host": {"max_flows": (["16", "64", "256", "1024", "4096"], []),
                "flow_idle_ms": (["100", "500", "2000", "30000"], [])},
    "tcp_rn": {"c_permille": (["50", "100", "400"], ["x"]),
               "es": (["0", "1"], ["2"]), "lt_ext": (["0", "1"], ["2"]),
               "rack_steer": (["0", "1"], ["2"]),
               "ece_rtts": (["1", "2", "8"], ["-1"]),
               "ack_order_ok": (["0"], ["2"]),
               "rtt0_ms": (["0", "25", "1000"], ["1001", "-1"])},
    "tcp_r": {"ece_rtts": (["1", "2", "8"], ["-1"]),
              "rack_steer": (["0", "1"], ["2"]),
              "rtt0_ms": (["0", "25", "1000"], ["1001", "-1"])},
    "tcp_esack": {"first_factor": (["50", "60", "80", "100"],
                                   ["49", "101"]),
                  "window_span": (["0", "1", "8", "64"], ["65", "-1"])},
}


class Control:
    """Steps of the control thread, for the Soak: its topology, its
    locks (b_lock, rn_lock, esack_lock), check() and count()."""

    def control_step(self, rnd):
        op = rnd.choices([self.op_qdisc, self.op_param, self.op_sysctl,
                          self.op_default_cc], [4, 3, 2, 1])[0]
        op(rnd)

    def epdn_change(self, dev, ns, words, check=True):
        head = ["parent", "1:1", "handle", "10:"] if dev == "b" else ["root"]
        return host.run(["tc", "qdisc", "change", "dev", dev] + head +
                        ["epdn"] + words, ns=ns, check=check)

    def op_qdisc(self, rnd):
        t = self.topo
        dev, ns = ("b", t.r1) if rnd.random() < 0.75 else ("ifb0", t.r2)
        if not self.b_lock.acquire(blocking=False):
            return                      # a fail-nth sweep has it
        try:
            if rnd.random() < 0.15:
                bad = rnd.choice(BAD_CHANGES)
                before = qdisc_stats(dev, ns)["options"]
                r = self.epdn_change(dev, ns, bad.split(), check=False)
                after = qdisc_stats(dev, ns)["options"]
                self.check("invalid tc qdisc change refused, nothing "
                           "changed", r.returncode and before == after,
                           "%s on %s: exit %d, %s -> %s" %
                           (bad, dev, r.returncode, before, after))
                self.count("ops.qdisc_change_refused")
                return
            self.epdn_change(dev, ns, rnd.choice(CHANGES).split())
        finally:
            self.b_lock.release()
        self.count("ops.qdisc_change")

    def op_param(self, rnd):
        mod = rnd.choice(OURS)
        lock = {"rn_host": self.rn_lock,
                "tcp_esack": self.esack_lock}.get(mod)
        if lock and not lock.acquire(blocking=False):
            return                      # being unloaded right now
        try:
            names = sorted(kmod.read_params(mod, writable=True))
            if not names:
                return
            p = rnd.choice(names)
            old = kmod.get_param(mod, p)
            good, bad = PARAMS.get(mod, {}).get(p, ([old], []))
            if bad and rnd.random() < 0.3:
                v = rnd.choice(bad)
                try:
                    kmod.set_param(mod, p, v)
                    refused = False
                except RuntimeError:
                    refused = True
                now = kmod.get_param(mod, p)
                self.check("invalid module parameter refused, value kept",
                           refused and now == old, "%s/%s=%s: %s, %s -> %s" %
                           (mod, p, v, "refused" if refused else "taken",
                            old, now))
                self.count("ops.param_refused")
                return
            v = rnd.choice(good)
            kmod.set_param(mod, p, v)
            now = kmod.get_param(mod, p)
            self.check("module parameter reads back as written",
                       now == v,
                       "%s/%s=%s reads %s" % (mod, p, v, now))
            self.count("ops.param_write")
        finally:
            if lock:
                lock.release()

    def op_sysctl(self, rnd):
        if not self.rn_lock.acquire(blocking=False):
            return
        try:
            t = self.topo
            what = rnd.randrange(4)
            if what == 0:
                sysctl_write(rnd.choice(t.rcv), "net.rn.require_host",
                             rnd.randrange(2))
            elif what in (1, 2):        # a hook off for a moment
                ns, key = (rnd.choice(t.rcv), "net.rn.receiver") \
                    if what == 1 else (rnd.choice(t.snd),
                                       "net.rn.epdn_origin")
                sysctl_write(ns, key, 0)
                self.count("ops.sysctl_write")
                self.stop.wait(rnd.uniform(0.2, 1))
                sysctl_write(ns, key, 1)
            else:
                ns = rnd.choice(t.rcv + t.snd)
                key = rnd.choice(["net.rn.receiver", "net.rn.epdn_origin",
                                  "net.rn.require_host"])
                old = t.read_sysctls(ns, [key])[key]
                v = rnd.choice(["2", "-1", "x"])
                try:
                    sysctl_write(ns, key, v)
                    refused = False
                except OSError:
                    refused = True
                now = t.read_sysctls(ns, [key])[key]
                self.check("invalid net.rn sysctl refused, value kept",
                           refused and now == old,
                           "%s %s=%s: %s -> %s" % (ns, key, v, old, now))
                self.count("ops.sysctl_refused")
                return
            self.count("ops.sysctl_write")
        finally:
            self.rn_lock.release()

    def op_default_cc(self, rnd):
        key = "net.ipv4.tcp_congestion_control"
        ns, cc = rnd.choice(self.topo.snd), rnd.choice(DEFAULT_CCS)
        sysctl_write(ns, key, cc)
        now = self.topo.read_sysctls(ns, [key])[key]
        self.check("default congestion control switched", now == cc,
                   "%s: %s reads %s" % (ns, cc, now))
        self.count("ops.default_cc")
