# SPDX-License-Identifier: GPL-2.0
"""satnet show: one run record, readable, and its cwnd/ssthresh plot."""

import json
import sys

from . import record
from .castate import fmt_shares

COUNTERS = ("TcpOutSegs", "TcpRetransSegs", "TcpExtTCPFastRetrans",
            "TcpExtTCPTimeouts", "TcpExtTCPLossProbes",
            "TcpExtTCPSACKReorder", "TcpExtTCPDSACKRecv",
            "TcpExtTCPDSACKUndo", "TcpExtTCPLossUndo",
            "TcpExtTCPSpuriousRTOs", "TcpExtTCPLostRetransmit")


def describe(rec):
    m = rec["meta"]
    git = m.get("git") or {}
    sc = m.get("scenario") or {}
    out = ["%s  %s  variant %s  point %s  rep %d" %
           (rec["experiment"], rec["mode"], rec["variant"],
            json.dumps(rec["point"]), rec["rep"]),
           "kernel %s, commit %s%s, %s, width %s, clock %s" %
           (m.get("kernel"), (git.get("commit") or "?")[:12],
            " (dirty)" if git.get("dirty") else "", m.get("date"),
            m.get("width"), record.clock_name(m)),
           "scenario %s: %s Mbit/s, %s, base RTT %s ms, %s s, profile %s" %
           (sc.get("name"), (sc.get("rate_bps") or 0) / 1e6,
            sc.get("qdisc"), sc.get("base_rtt_ms"), m.get("duration_s"),
            m.get("profile"))]
    for mod, d in sorted((m.get("modules") or {}).items()):
        out.append("module %s srcversion %s %s" % (
            mod, d.get("srcversion"), " ".join(
                "%s=%s" % kv for kv in d.get("parameters", {}).items())))
    chk = rec.get("selfcheck") or {}
    if chk:
        out.append("self-check: RTT %s ms (expected %s), rate %s bit/s "
                   "(expected %s), attempts %s" %
                   (chk.get("rtt_ms"), chk.get("rtt_expected_ms"),
                    chk.get("rate_bps"), chk.get("rate_expected_bps"),
                    chk.get("attempts", 1)))
    cpu = (rec.get("host") or {}).get("cpu")
    if cpu:
        out.append("CPU: busy %.0f %% of the flows' time on %s CPU(s)%s" %
                   (100 * cpu["busy_share"], cpu.get("cpus"),
                    "; CPU-BOUND: this run measured the CPU, not the "
                    "network" if cpu.get("cpu_bound") else ""))
    out.append("")
    out.append("%-4s %-12s %-8s %12s %10s %s" % ("flow", "variant", "cc",
                                              "goodput b/s", "retrans",
                                              "counters"))
    for i, f in enumerate(rec["flows"]):
        c = f.get("counters", {})
        out.append("%-4d %-12s %-8s %12.0f %10s %s" % (
            i, f.get("variant"), f.get("cc"), f["goodput_bps"],
            f.get("retransmits"), " ".join(
                "%s=%s" % (k.replace("TcpExt", ""), c[k])
                for k in COUNTERS if c.get(k))))
    out += ca_lines(rec["flows"])
    delta = (rec.get("bottleneck") or {}).get("delta") or {}
    if delta:
        out.append("")
        out.append("bottleneck: " + " ".join(
            "%s=%s" % kv for kv in sorted(delta.items())))
    for side in ("proc_sender", "proc_receiver"):
        d = (rec.get("host") or {}).get(side) or {}
        if d:
            out.append("%s: %s" % (side, " ".join(
                "%s=%s" % kv for kv in sorted(d.items()))))
    out.append("")
    out.append("summary: " + json.dumps(rec["summary"].get(
        "variants", rec["summary"])))
    return "\n".join(out)


def ca_lines(flows):
    """Each flow's time in each congestion-avoidance state, its entries
    into Recovery and Loss, and the sampling behind them."""
    out = []
    for i, f in enumerate(flows):
        ca = f.get("ca") or {}
        if not ca.get("share"):
            continue
        if not out:
            out.append("")
        out.append("%-4d CA states %s; entries Recovery %d, Loss %d "
                   "(%d samples over %.1f s, every %.0f ms, asked %.0f, "
                   "longest gap %.0f ms)" % (
                       i, fmt_shares(ca["share"]),
                       ca["entries"]["recovery"], ca["entries"]["loss"],
                       ca["samples"], ca["span_s"], 1000 * ca["interval_s"],
                       1000 * ca["period_s"], 1000 * ca["max_gap_s"]))
    return out


FORMATS = ("png", "svg", "pdf")     # what plot() writes, by file name


def plot(rec, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.6))
    for i, f in enumerate(rec["flows"]):
        rows = f.get("ss") or []
        t = [r["t"] for r in rows if "cwnd" in r]
        ax.plot(t, [r["cwnd"] for r in rows if "cwnd" in r],
                label="%d %s cwnd" % (i, f.get("variant")))
        st = [(r["t"], r["ssthresh"]) for r in rows if "ssthresh" in r]
        if st:
            ax.plot(*zip(*st), linestyle="--",
                    label="%d %s ssthresh" % (i, f.get("variant")))
    ax.set_xlabel("time (s)")
    ax.set_ylabel("segments")
    ax.set_title("%s %s %s rep %d" % (rec["experiment"], rec["variant"],
                                      json.dumps(rec["point"]), rec["rep"]),
                 fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def show(path, png=None):
    try:
        rec = record.load(path)
    except (OSError, ValueError) as e:
        print("satnet show: %s" % e, file=sys.stderr)
        return 2
    print(describe(rec))
    if png:
        try:
            plot(rec, png)
        except OSError as e:
            print("satnet show: cannot write %s: %s" % (png, e.strerror),
                  file=sys.stderr)
            return 2
        print("wrote " + png)
    return 0
