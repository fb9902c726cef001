# SPDX-License-Identifier: GPL-2.0
"""The end of the soak, with the flows stopped: every epdn qdisc's and
rn_host namespace's counters must add up, what netem did in each
direction, and the flows' figures (none may lose or change a byte)."""

import collections
import json
import subprocess
import time

from satnet import host, measure
from satnet.host import sysctl_write
from lib.kernel import qdisc_stats

from . import log, write
from .counters import action_packets, epdn_identities, settled
from .flows import CCS, FLOW_TIMEOUT


class Final:
    """The final checks of the Soak: its topology, probe, flow workers,
    base counts and the figures it reports (final)."""

    def finish(self):
        log("stopping the flows")
        write(self.stop_file, "1")
        end = time.monotonic() + 3 * FLOW_TIMEOUT + 60
        for p, _ in self.clients:
            try:
                p.wait(timeout=max(1, end - time.monotonic()))
            except subprocess.TimeoutExpired:
                self.check("flow workers stop in time", False, p.args)
        for p, _ in self.servers:
            p.terminate()
            p.wait(timeout=30)
        self.set_mix({})
        with self.fault_lock:
            if self.saved_failslab:
                self.fs("probability", 0)
        self.quiesce()
        self.final_checks()

    def epdn_qdiscs(self, probe=True):
        """(label, namespace, device, a function that reads the packets
        counted into it)."""
        t = self.topo
        out = [("bottleneck R1/b", t.r1, "b",
                lambda: action_packets("b", t.r1)),
               ("R2 EPDN router ifb0", t.r2, "ifb0",
                lambda: action_packets("ifb0", t.r2))]
        if probe:
            out.append(("probe", self.probe, "pd0",
                        lambda: action_packets("pd0", self.probe)))
        return out

    def quiesce(self, timeout=30):
        t = self.topo
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            busy = [(ns, q["dev"], q["qlen"]) for ns in (t.r1, t.r2)
                    for q in json.loads(host.run(
                        ["tc", "-s", "-j", "qdisc", "show"], ns=ns).stdout)
                    if q["qlen"]]
            if not busy:
                break
            time.sleep(0.5)
        time.sleep(1)

    def final_checks(self):
        self.final["epdn"] = {}
        for label, ns, dev, counter in self.epdn_qdiscs():
            st, entered = settled(ns, dev, counter)
            entered += self.base.get(label, 0)
            bad = epdn_identities(st, entered)
            self.check("epdn counters add up", not bad,
                       "%s at the end: %s" % (label, "; ".join(bad)))
            self.final["epdn"][label] = dict(
                st, entered=entered, before_counter=self.base.get(label, 0))
        self.check("the probe's tc action counted every frame sent to it",
                   self.final["epdn"]["probe"]["entered"] == self.probe_in,
                   "%d counted, %d sent" % (
                       self.final["epdn"]["probe"]["entered"], self.probe_in))
        with self.rn_lock:
            for ns, key in self.hooks():
                sysctl_write(ns, key, 0)
            self.check_rn("at the end")
        self.final["netem"] = self.netem_figures()
        self.final["flows"] = self.flow_figures()
        if self.n["faults.failslab_periods"]:
            nomem = sum(c["flows_nomem"] for c in self.rn_sum.values())
            self.check("failslab failed rn_flow allocations, and rn_host "
                       "counted them", nomem > 0, "flows_nomem %d in %d "
                       "periods" % (nomem, self.n["faults.failslab_periods"]))

    def netem_figures(self):
        """What netem did in each direction: loss and duplicates exactly
        (netem's drops; what left or waits beyond what came in), corrupt
        and reordered packets as the end hosts saw them."""
        t = self.topo
        out = {}
        ack = qdisc_stats("b", t.r2, kind="netem")
        fwd = [qdisc_stats("r%d" % i, t.r2, kind="netem")
               for i in range(self.sc.pairs)]
        into_fwd = self.final["epdn"]["R2 EPDN router ifb0"]["packets"]
        for name, qs, came, ends in (
                ("data", fwd, into_fwd, t.rcv),
                ("ack", [ack], action_packets("b", t.r2), t.snd)):
            seen = [measure.nstat(t, ns) for ns in ends]
            out[name] = {
                "packets": came,
                "lost": sum(q["drops"] for q in qs),
                "duplicated": sum(q["packets"] + q["drops"] + q["qlen"]
                                  for q in qs) - came,
                "corrupt_seen": sum(s["TcpInCsumErrors"] +
                                    s["IpInHdrErrors"] for s in seen),
                "out_of_order_seen": sum(s["TcpExtTCPOFOQueue"]
                                         for s in seen)}
        return out

    def flow_figures(self):
        short = collections.defaultdict(collections.Counter)
        errors, n, longs = collections.Counter(), collections.Counter(), []
        for st in self.worker_stats("client"):
            for cc, kinds in st.get("short", {}).items():
                short[cc].update(kinds)
            errors.update(st.get("errors", {}))
            n.update(st.get("n", {}))
            longs += st.get("long", [])
        total = collections.Counter()
        for kinds in short.values():
            total.update(kinds)
        self.check("no flow lost or changed a byte",
                   total["corrupt"] == 0 and
                   not any(r["error"] and r["error"].startswith("server")
                           for r in longs),
                   "%d short flows and %s long flows arrived changed" %
                   (total["corrupt"], [r for r in longs if r["error"]]))
        self.check("long flows ran the whole soak and completed",
                   longs and all(r["ok"] for r in longs),
                   [{k: r[k] for k in ("cc", "bytes", "error")}
                    for r in longs if not r["ok"]])
        self.check("every congestion control carried short flows",
                   all(short[cc]["ok"] for cc in CCS),
                   {cc: dict(short[cc]) for cc in CCS})
        done = total["ok"] + total["failed"] + total["corrupt"]
        self.check("short flows complete (at most 2 % fail)",
                   done and total["failed"] <= 0.02 * done,
                   "%d of %d failed: %s" % (total["failed"], done,
                                            dict(errors)))
        servers = collections.Counter()
        for st in self.worker_stats("server"):
            servers.update(st)
        return {"short": {cc: dict(v) for cc, v in short.items()},
                "short_total": dict(total), "errors": dict(errors),
                "long": longs, "client": dict(n), "server": dict(servers)}
