# SPDX-License-Identifier: GPL-2.0
"""python3 -m satnet.mix: several algorithms sharing one bottleneck.

Seed 000 §4.6 runs SACK, DSACK-R, DSACK-TA, RN-TCP and TCP-R flows
together over one RED+ECN bottleneck.  This runs one flow per entry of
--cc, each on its own sender/receiver pair of one topology, all started
together, and records per-flow goodput (with the ss series' last values),
the bottleneck's bytes and qdisc counters, and a summary per algorithm.

  python3 -m satnet.mix -s geo --cc r,r,reno,reno -t 60 -o ../results/mix.jsonl
"""

import argparse
import json
import os
import re
import statistics
import sys
import threading

from .cli import load_cc, parse_set
from .measure import (SelfCheckError, bottleneck_sent, iperf3_run,
                      metadata, self_check)
from .scenario import ScenarioError, load_profile, load_scenario
from .topo import Topology

SELFCHECK_TRIES = 3
QDISC_COUNTERS = re.compile(r"\b(overflow_drops|corrupt_drops|"
                            r"red_drops|red_marks|recorded|stamps) (\d+)")


def jain(xs):
    """Jain's fairness index: 1 when all equal, 1/n when one takes all."""
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs)) if any(xs) \
        else None


def qdisc_counters(topo):
    out = topo.ex(topo.r1, ["tc", "-s", "qdisc", "show", "dev", "b"]).stdout
    c = {}
    for k, v in QDISC_COUNTERS.findall(out):
        c[k] = c.get(k, 0) + int(v)
    return c


def together(fn, jobs, timeout=900):
    """fn(i, barrier, **job) for every job, each in its own thread; the
    barrier (one party per job) lets them start together.  Results in job
    order; the first error is raised, after aborting the barrier so that
    no thread waits for a party that failed."""
    out, errs = [None] * len(jobs), []
    barrier = threading.Barrier(len(jobs), timeout=timeout)

    def work(i, kw):
        try:
            out[i] = fn(i, barrier, **kw)
        except BaseException as e:          # reported below
            errs.append(e)
            barrier.abort()

    threads = [threading.Thread(target=work, args=(i, kw))
               for i, kw in enumerate(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errs:
        raise errs[0]
    return out


def _flow(topo, i, barrier, cc, duration):
    barrier.wait()
    res, rows = iperf3_run(topo, cc, duration, i=i, port=5301 + i)
    return {"cc": cc,
            "goodput_bps": res["end"]["sum_received"]["bytes"] * 8 / duration,
            "retransmits": res["end"]["sum_sent"].get("retransmits"),
            "ss_last": rows[-1] if rows else {}}


def mixed_run(sc, profile, ccs, duration, check=True):
    """One run: len(ccs) pairs (run.pairs), one flow each, after the
    self-check (check=False skips it)."""
    for cc in sorted(set(ccs)):
        load_cc(cc)
    if sc.pairs != len(ccs):
        raise ScenarioError("run.pairs must equal the number of flows")
    with Topology(sc, profile) as topo:
        check = self_check(topo) if check else None
        meta = metadata(topo, ",".join(ccs))
        q0, sent0 = qdisc_counters(topo), bottleneck_sent(topo)
        flows = together(lambda i, barrier, cc: _flow(topo, i, barrier, cc,
                                                     duration),
                         [{"cc": cc} for cc in ccs])
        q1, sent1 = qdisc_counters(topo), bottleneck_sent(topo)
    total = sum(f["goodput_bps"] for f in flows)
    per_cc = {}
    for cc in ccs:
        g = [f["goodput_bps"] for f in flows if f["cc"] == cc]
        per_cc[cc] = {"flows": len(g), "mean_bps": statistics.mean(g),
                      "jain": jain(g)}
    return {"scenario": sc.name, "profile": profile.name, "ccs": ccs,
            "duration_s": duration, "rate_bps": sc.rate_bps,
            "flows": flows, "per_cc": per_cc,
            "goodput_bps": total,
            "bottleneck_bps": (sent1 - sent0) * 8 / duration,
            "useful": total / ((sent1 - sent0) * 8 / duration)
            if sent1 > sent0 else None,
            "jain_all": jain([f["goodput_bps"] for f in flows]),
            "qdisc": {k: q1.get(k, 0) - q0.get(k, 0) for k in q1},
            "selfcheck": check, "meta": meta}


def report(path):
    """A markdown table of the runs in a JSON-lines file: per scenario
    variant and algorithm, mean goodput per flow over runs."""
    runs = [json.loads(line) for line in open(path) if line.strip()]
    rows = {}
    for r in runs:
        key = (r.get("label", ""), r["scenario"])
        for cc, v in r["per_cc"].items():
            rows.setdefault(key, {}).setdefault(cc, []).append(v["mean_bps"])
        rows[key].setdefault("_total", []).append(r["goodput_bps"])
        rows[key].setdefault("_useful", []).append(r["useful"] or 0)
        rows[key].setdefault("_jain", []).append(r["jain_all"] or 0)
    ccs = sorted({cc for r in runs for cc in r["per_cc"]})
    lines = ["| variant | runs | " + " | ".join(
        "%s kbit/s per flow" % cc for cc in ccs) +
        " | all flows kbit/s | useful | Jain |",
        "|---" * (len(ccs) + 5) + "|"]
    for (label, scen), v in rows.items():
        def ms(xs, scale=1e3):
            if not xs:
                return "–"
            sd = statistics.stdev(xs) if len(xs) > 1 else 0
            return "%.0f ± %.0f" % (statistics.mean(xs) / scale, sd / scale)
        lines.append("| %s | %d | %s | %s | %.2f | %.2f |" % (
            label or scen, len(v["_total"]),
            " | ".join(ms(v.get(cc, [])) for cc in ccs), ms(v["_total"]),
            statistics.mean(v["_useful"]), statistics.mean(v["_jain"])))
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m satnet.mix",
                                description=__doc__)
    p.add_argument("-s", "--scenario")
    p.add_argument("--cc", help="comma-separated, one flow per entry")
    p.add_argument("--label", default="", help="names this variant")
    p.add_argument("--report", metavar="JSONL",
                   help="print a markdown table of earlier runs and exit")
    p.add_argument("-t", "--duration", type=float)
    p.add_argument("-p", "--profile")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VAL")
    p.add_argument("--reps", type=int, default=1)
    p.add_argument("-o", "--out", default="../results/mix.jsonl")
    a = p.parse_args(argv)
    if a.report:
        print(report(a.report))
        return 0
    if not a.scenario or not a.cc:
        p.error("-s and --cc are required")
    ccs = [c for c in a.cc.split(",") if c]
    try:
        sc = load_scenario(a.scenario, {**parse_set(a.set),
                                        "run.pairs": len(ccs)})
        profile = load_profile(a.profile or sc.profile)
    except (ScenarioError, OSError) as e:
        print("satnet.mix: %s" % e, file=sys.stderr)
        return 2
    dur = a.duration or sc.duration_s
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    for rep in range(a.reps):
        for attempt in range(SELFCHECK_TRIES):
            try:
                rec = mixed_run(sc, profile, ccs, dur)
                break
            except SelfCheckError as e:
                print("rep %d: self-check failed (%s), retrying on a fresh "
                      "topology" % (rep, e), file=sys.stderr)
        else:
            print("satnet.mix: self-check failed %d times: the host is "
                  "overloaded" % SELFCHECK_TRIES, file=sys.stderr)
            return 1
        rec.update(rep=rep, label=a.label, selfcheck_retries=attempt)
        with open(a.out, "a") as f:
            f.write(json.dumps(rec) + "\n")
        print("rep %d: %s; total %.0f kbit/s of %.0f, useful %.2f, Jain "
              "%.2f, qdisc %s" %
              (rep, ", ".join("%s %.0f kbit/s" % (cc, v["mean_bps"] / 1e3)
                              for cc, v in rec["per_cc"].items()),
               rec["goodput_bps"] / 1e3, rec["rate_bps"] / 1e3,
               rec["useful"] or 0, rec["jain_all"] or 0, rec["qdisc"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
