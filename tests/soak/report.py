# SPDX-License-Identifier: GPL-2.0
"""The soak's report: DIR/soak.json with the figures and every check,
and the table printed at the end."""

import json
import os
import platform
import time

from . import log
from .memory import FAIL_BASE, FAIL_BURST


class Report:
    """The report of the Soak: its counters, checks, skipped parts and
    final figures."""

    def report(self):
        with self.lock:
            self.mix_seconds[self.mix["name"]] += \
                time.monotonic() - self.mix["since"]
        ok = all(not c["failed"] for c in self.checks.values())
        flows = self.final.get("flows", {})
        total = flows.get("short_total", {})
        longs = flows.get("long", [])
        rn = {k: dict(v) for k, v in self.rn_sum.items()}
        nomem = sum(v.get("flows_nomem", 0) for v in rn.values())
        n = dict(self.n)
        summary = {
            "ok": ok, "minutes": round(self.soaked() / 60, 2),
            "minutes_total": round(self.elapsed() / 60, 2),
            "minutes_asked": self.args.minutes, "seed": self.seed,
            "kernel": platform.release(), "debug_parts": self.has,
            "skipped": self.skipped,
            "flows": {"short": total, "short_by_cc": flows.get("short"),
                      "short_errors": flows.get("errors"),
                      "long": longs, "churn": n.get("flows.churn", 0),
                      "churn_cut": n.get("flows.churn_cut", 0),
                      "server": flows.get("server"),
                      "client": flows.get("client")},
            "faults": {"netem": self.final.get("netem"),
                       "netem_seconds_by_mix": {
                           k: round(v) for k, v in self.mix_seconds.items()},
                       "failslab_rn_flow_nomem": nomem},
            "counters": n, "rn_host": rn,
            "epdn": self.final.get("epdn"),
            "kmemleak_ours": self.final.get("kmemleak_ours"),
            "checks": self.checks,
        }
        os.makedirs(self.args.out, exist_ok=True)
        path = os.path.join(self.args.out, "soak.json")
        with open(path, "w") as f:
            json.dump(summary, f, indent=1, sort_keys=True)
        self.table(summary, total, longs, nomem)
        log("%s (%s)" % ("PASS" if ok else "FAIL", path))
        return 0 if ok else 1

    def table(self, s, total, longs, nomem):
        n = self.n
        rows = [("soaked", "%.1f of %g min (%.1f min in all), seed %d, "
                 "kernel %s" % (s["minutes"], s["minutes_asked"],
                                s["minutes_total"], self.seed, s["kernel"]))]
        by_cc = s["flows"]["short_by_cc"] or {}
        rows.append(("short flows", "%d ok, %d failed, %d changed; %s" % (
            total.get("ok", 0), total.get("failed", 0),
            total.get("corrupt", 0), ", ".join(
                "%s %d" % (cc, v.get("ok", 0))
                for cc, v in sorted(by_cc.items())))))
        rows.append(("long flows", "%d, %d completed, %.0f MB, %d cc "
                     "switches" % (len(longs), sum(r["ok"] for r in longs),
                                   sum(r["bytes"] for r in longs) / 1e6,
                                   sum(len(r["cc"]) - 1 for r in longs))))
        rows.append(("churn flows", "%d through namespaces created for "
                     "them (%d cut by deletion)" % (n["flows.churn"],
                                                    n["flows.churn_cut"])))
        for d, f in sorted((s["faults"]["netem"] or {}).items()):
            rows.append(("netem " + d, "%d packets: %d lost, %d duplicated; "
                         "seen at the hosts: %d corrupt, %d out of order" %
                         (f["packets"], f["lost"], f["duplicated"],
                          f["corrupt_seen"], f["out_of_order_seen"])))
        rows.append(("netem mixes", "%d changes; %s" % (
            n["faults.netem_changes"], ", ".join(
                "%s %ds" % kv for kv in
                s["faults"]["netem_seconds_by_mix"].items()))))
        rows.append(("crafted frames", "%d towards receivers (%d batches), "
                     "%d into the probe" % (n["faults.hostile_frames"],
                                            n["faults.hostile_batches"],
                                            n["faults.probe_frames"])))
        rows.append(("failslab", "skipped: not in this kernel"
                     if not n["faults.failslab_periods"] else
                     "rn_flow and skbuff_head_cache atomic allocations "
                     "failing %d %% (%d periods), %d %% in %d bursts: "
                     "rn_host flows_nomem %d" % (
                         FAIL_BASE, n["faults.failslab_periods"], FAIL_BURST,
                         n["faults.failslab_bursts"], nomem)))
        rows.append(("fail-nth", "skipped: not in this kernel (%d plain "
                     "netlink changes)" % n["ops.netlink_changes"]
                     if not self.has["fail-nth"] else
                     "%d sweeps, %d points failed, %d of them the flow "
                     "table" % (n["faults.failnth_sweeps"],
                                n["faults.failnth_points"],
                                n["faults.failnth_table_enomem"])))
        rows.append(("kmemleak", "skipped: not in this kernel"
                     if not self.has["kmemleak"] else
                     "%d leaks naming our modules" %
                     len(s["kmemleak_ours"] or [])))
        rows.append(("control ops", "tc change %d (+%d refused), module "
                     "parameters %d (+%d refused), net.rn sysctls %d (+%d "
                     "refused), default cc %d" % (
                         n["ops.qdisc_change"],
                         n["ops.qdisc_change_refused"], n["ops.param_write"],
                         n["ops.param_refused"], n["ops.sysctl_write"],
                         n["ops.sysctl_refused"], n["ops.default_cc"])))
        rows.append(("", "netns %d created, %d deleted (%d under "
                     "traffic)" % (n["ops.netns_created"],
                                   n["ops.netns_deleted"],
                                   n["ops.netns_deleted_under_traffic"])))
        rows.append(("", "tcp_esack rmmod+insmod %d (%d deferred, rmmod "
                     "refused in use %d); rn_host reloads %d" % (
                         n["ops.esack_rmmod_insmod"],
                         n["ops.esack_unload_deferred"],
                         n["ops.rmmod_refused_in_use"],
                         n["ops.rn_host_reload"])))
        for label, st in sorted((s["epdn"] or {}).items()):
            rows.append(("epdn " + label, "in %d = sent %d + dropped %d + "
                         "queued %d; recorded %d, stamps %d, merges %d" % (
                             st["entered"], st["packets"], st["drops"],
                             st["qlen"], st["recorded"], st["stamps"],
                             st["merges"])))
        width = max(len(r[0]) for r in rows)
        print()
        for k, v in rows:
            print("%-*s  %s" % (width, k, v))
        print()
        for name, c in s["checks"].items():
            print("%-4s %-62s %5d passed %3d failed" % (
                "ok" if not c["failed"] else "FAIL", name, c["passed"],
                len(c["failed"])))
            for d in c["failed"][:3]:
                print("       " + str(d).replace("\n", "\n       "))
        for what in self.skipped:
            print("skip %s: skipped: not in this kernel" % what)
        print(flush=True)
