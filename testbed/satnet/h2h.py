# SPDX-License-Identifier: GPL-2.0
"""The head-to-head page: every `h2h-*` experiment (one path each, every
variant in one run) as one table and one plot, written between two
markers of docs/head-to-head.md so that the text around them stays.
Built from stored records only, as the rest of the report.
"""

import math
import os

from . import stats
from .castate import fmt_shares
from .checkout import replace_block
from .measure import last_cc_row
from .record import clock_name, limit_bps, stale_note

PREFIX = "h2h-"
BEGIN = "<!-- satnet report: head-to-head, begin -->"
END = "<!-- satnet report: head-to-head, end -->"
METRIC = "limit_share"
OWN_CC = ("r", "rn", "esack")      # the congestion controls of our modules
# A variant that retransmits more than this share of the segments it sends
# is flagged and not ranked: its goodput is bought with the path's capacity.
RETRANS_MAX = 0.10
# A window more than this many times what the path holds (BDP and queue)
# is a runaway: it only fills the queue and is dropped there.
CWND_MAX = 2.0
# The sender the goals are set for, the Linux senders it must not fall
# behind, and the share of what it sends it may retransmit.
GOAL_VARIANT = "tcp-r"
GOAL_LINUX = ("cubic", "bbr", "hybla")
GOAL_RETRANS = 0.05


def experiments(results):
    """The head-to-head experiments with runs, in name order."""
    return [results[n] for n in sorted(results) if n.startswith(PREFIX)
            and results[n].recs]


def _limit(res):
    """Mbit/s a perfect sender gets on the path (the first record's: every
    variant of a head-to-head runs the same scenario)."""
    return limit_bps(res.recs[0]["meta"]["scenario"]) / 1e6


def path_packets(sc):
    """Packets the path of a scenario record (meta.scenario) holds: its
    BDP at the base RTT, as the scenario sizes it, plus the queue."""
    if "limit_packets" not in sc:         # records from before it
        return None
    bdp = sc["rate_bps"] * sc["base_rtt_ms"] / 1000 / 8 / \
        sc["forward"]["packet_bytes"]
    return max(4, math.ceil(bdp)) + sc["limit_packets"]


def cwnd_peaks(res, variant):
    """Per run of @variant: its flows' largest cwnd in the `ss` series
    (sampled each second) over what the path holds."""
    out = []
    for rec in res.runs(variant, {}):
        cwnd = [s["cwnd"] for f in rec["flows"] if f["variant"] == variant
                for s in f.get("ss") or [] if "cwnd" in s]
        holds = path_packets(rec["meta"]["scenario"])
        if cwnd and holds:
            out.append(max(cwnd) / holds)
    return out


def _over(peaks):
    """Runs whose window went over CWND_MAX times what the path holds."""
    return sum(p > CWND_MAX for p in peaks)


def _peaks(peaks):
    if not peaks:
        return "–"
    over = _over(peaks)
    return "%.2f%s" % (max(peaks), ", **%d of %d runs over %g**" % (
        over, len(peaks), CWND_MAX) if over else "")


def rows(res):
    """One dict per variant with runs: the metrics of the table."""
    out = []
    for v in res.exp.variants:
        e = res.estimate(v, {}, METRIC)
        if not e.n:
            continue
        ca = {k: c.mean for k, c in res.ca_shares(v, {}).items()}
        rtx = res.estimate(v, {}, "retrans_share")
        out.append({"variant": v, "share": e, "retrans": rtx,
                    "retrans_new": stats.Estimate(
                        [x / (1 - x) for x in rtx.values if x < 1]),
                    "timeouts": res.estimate(v, {}, "timeouts"),
                    "ca": ca if ca["open"] is not None else None})
    return out


def _pct(e):
    if e.mean is None:
        return "–"
    if e.half is None:
        return "%.1f %%" % (100 * e.mean)
    return "%.1f ± %.1f %%" % (100 * e.mean, 100 * e.half)


def ours(res):
    return [v for v in res.exp.variants
            if res.exp.catalogue[v].cc in OWN_CC]


def flagged(row):
    """Does the variant of @row retransmit too much to be ranked?"""
    m = row["retrans"].mean
    return m is not None and m > RETRANS_MAX


def best(res, table, names):
    """The row of @table for the best of @names (Results.best()) among
    those not flagged, or None."""
    names = [r["variant"] for r in table
             if r["variant"] in names and not flagged(r)]
    b = res.best(names, {}, METRIC) if names else None
    return next(r for r in table if r["variant"] == b[0]) if b else None


def _judge(res, a, b):
    """Ratio and non-inferiority verdict of row @a against row @b."""
    runs = min(a["share"].n, b["share"].n)
    r = stats.Ratio(a["share"], b["share"])
    j = stats.decided(stats.judge_at_least(r, res.mode == "full", runs),
                      [(stats.judge_at_least, r, {})])
    old = res.stale([a["variant"], b["variant"]], {})
    return r, "**%s**%s%s" % (j.verdict, stats.decide_note(j),
                              stale_note(old))


def _runaways(peaks):
    over = _over(peaks)
    return "%d of %d%s" % (over, len(peaks), " (**missed**)" if over
                           else "") if peaks else "–"


def goals_table(exps):
    """Per path, GOAL_VARIANT against its goals: retransmissions under
    GOAL_RETRANS of what it sends, no window over CWND_MAX times what the
    path holds, and at least the best of GOAL_LINUX."""
    lines = ["| path | runs | `%s`, share of limit | retransmitted, of "
             "sent (goal < %g %%) | runs with cwnd over %g × (BDP + queue) "
             "| best of %s | `%s` / it | `%s` ≥ it (margin %g×) | clock |" % (
                 GOAL_VARIANT, 100 * GOAL_RETRANS, CWND_MAX,
                 ", ".join(GOAL_LINUX), GOAL_VARIANT, GOAL_VARIANT,
                 stats.EQUIV_MARGIN),
             "|---|---|---|---|---|---|---|---|---|"]
    for res in exps:
        table = rows(res)
        a = next((r for r in table if r["variant"] == GOAL_VARIANT), None)
        b = best(res, table, GOAL_LINUX)
        if not a or not b:
            continue
        r, verdict = _judge(res, a, b)
        peaks = cwnd_peaks(res, GOAL_VARIANT)
        rtx = a["retrans"].mean
        clocks = sorted({clock_name(rec["meta"]) for v in (
            GOAL_VARIANT, b["variant"]) for rec in res.runs(v, {})})
        lines.append("| %s | %d | %s | %s%s | %s | %s %s | %s | %s | %s |"
                     % (res.exp.name[len(PREFIX):], a["share"].n,
                        _pct(a["share"]), _pct(a["retrans"]),
                        " (**missed**)" if rtx is not None and
                        rtx >= GOAL_RETRANS else "",
                        _runaways(peaks), b["variant"], _pct(b["share"]),
                        r.fmt(), verdict, ", ".join(clocks)))
    return lines


def summary_table(exps):
    lines = ["| path | limit (Mbit/s) | our best | share of limit | "
             "retransmitted, of sent | Linux's best | share of limit | "
             "retransmitted, of sent | ours / Linux's | ours ≥ Linux's (margin " +
             "%g×) | not ranked (retransmitted > %g %%) |" % (
                 stats.EQUIV_MARGIN, 100 * RETRANS_MAX),
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for res in exps:
        own, table = ours(res), rows(res)
        a = best(res, table, own)
        b = best(res, table, [v for v in res.exp.variants if v not in own])
        if not a or not b:
            continue
        r, verdict = _judge(res, a, b)
        out = ", ".join(r["variant"] for r in table if flagged(r)) or "–"
        lines.append("| %s | %.3f | %s | %s | %s | %s | %s | %s | %s | "
                     "%s | %s |" % (
                         res.exp.name[len(PREFIX):], _limit(res),
                         a["variant"], _pct(a["share"]), _pct(a["retrans"]),
                         b["variant"], _pct(b["share"]), _pct(b["retrans"]),
                         r.fmt(), verdict, out))
    return lines


def path_table(res):
    lines = ["### %s" % res.exp.name, "", res.exp.title + ".", "",
             "| variant | n | goodput / limit | retransmitted, of segments "
             "sent | retransmissions per new segment | timeouts per run | "
             "largest cwnd / (BDP + queue) | time in CA state |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows(res):
        lines.append("| %s | %d | %s | %s | %s | %s | %s | %s |" % (
            r["variant"] + (" (not ranked)" if flagged(r) else ""),
            r["share"].n, _pct(r["share"]), _pct(r["retrans"]),
            _pct(r["retrans_new"]), "%.1f" % r["timeouts"].mean,
            _peaks(cwnd_peaks(res, r["variant"])),
            fmt_shares(r["ca"]) if r["ca"] else "–"))
    return lines + [""]


def plot(exps, path):
    """Grouped bars: one group per path, one bar per variant (error bars:
    95 % CI), goodput as a share of the path's limit."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    variants = list(dict.fromkeys(v for res in exps
                                  for v in res.exp.variants))
    width = 0.8 / len(variants)
    fig, ax = plt.subplots(figsize=(max(6.4, 1.3 * len(exps)), 4.2))
    for i, v in enumerate(variants):
        xs, ys, errs = [], [], []
        for x, res in enumerate(exps):
            e = res.estimate(v, {}, METRIC)
            if e.n:
                xs.append(x - 0.4 + (i + 0.5) * width)
                ys.append(e.mean)
                errs.append(e.half or 0)
        ax.bar(xs, ys, width, yerr=errs, capsize=1.5, label=v,
               color="C%d" % (i % 10))
    ax.set_xticks(range(len(exps)),
                  [res.exp.name[len(PREFIX):] for res in exps],
                  rotation=20, ha="right", fontsize=8)
    ax.axhline(1.0, color="black", linewidth=0.6)
    ax.set_ylabel("goodput / physical limit")
    ax.set_ylim(0, 1.1)
    ax.legend(fontsize=7, ncol=5, loc="upper center",
              bbox_to_anchor=(0.5, -0.25))
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def _queue_drops(rec):
    """Packets the bottleneck dropped during the run (its qdiscs' largest
    drop counter: a parent counts its child's drops again)."""
    delta = (rec.get("bottleneck") or {}).get("delta") or {}
    return max((v for k, v in delta.items() if k.endswith(".drops")),
               default=0)


def r_verdicts(res):
    """TCP-R's recoveries by reason, run by run, beside the bottleneck's
    drops and the receiver's unclassified holes: which verdict each loss
    got, and what the path did to deserve it."""
    lines = ["| variant | run | modified | standard: unmarked dupACK | "
             "standard: ECE | standard: repeat | timeouts | queue "
             "drops | receiver list overflows | unclassified ACKs |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for v in res.exp.variants:
        if res.exp.catalogue[v].cc != "r":
            continue
        for rec in sorted(res.runs(v, {}), key=lambda r: r["rep"]):
            flows = [f for f in rec["flows"] if f["variant"] == v]
            cc = [last_cc_row(f.get("ss") or []) for f in flows]
            rcv = (rec.get("host") or {}).get("proc_receiver") or {}
            lines.append("| %s | %d | %s | %d | %d | %d | %d | %d | %d | %d "
                         "|" % (
                             v, rec["rep"],
                             sum(c.get("dctcp_ce_state", 0) for c in cc),
                             sum(c.get("dctcp_alpha", 0) for c in cc),
                             sum(c.get("dctcp_ab_ecn", 0) for c in cc),
                             sum(c.get("dctcp_ab_tot", 0) for c in cc),
                             sum(f["counters"].get("TcpExtTCPTimeouts", 0)
                                 for f in flows),
                             _queue_drops(rec),
                             rcv.get("rn_host.range_overflows", 0),
                             rcv.get("rn_host.acks_unclassified", 0)))
    if len(lines) == 2:
        return []
    return ["TCP-R's recoveries by reason (`ss -ti`'s dctcp fields at the "
            "flow's end, docs/tcp-r.md), the kernel's timeouts "
            "(TcpExtTCPTimeouts), the bottleneck's drops and the "
            "receiver's `/proc/net/rn_host` counters, per run:", ""] + \
        lines + [""]


def block(exps, figdir, mddir, header):
    """The generated part of the page."""
    plot(exps, os.path.join(figdir, "head-to-head.png"))
    rel = os.path.relpath(figdir, mddir)
    out = [BEGIN, ""] + header + [
        "", "![head-to-head](%s/head-to-head.png)" % rel, "",
        "Goodput as a share of each path's physical limit (the bottleneck "
        "rate less framing and the data path's non-congestion loss), mean "
        "± 95 % CI over the runs; retransmitted, of segments sent: "
        "segments retransmitted / all segments sent (new and again); "
        "retransmissions per new segment: segments retransmitted / new "
        "segments sent, the cost in extra sends of each segment of data "
        "(above the first share when it is large: 50 % of sent is 100 % "
        "of new). " + (
            "The largest cwnd is the largest of any run, from the `ss` "
            "samples (one a second), over the packets the path holds (its "
            "BDP at the base RTT and the queue); runs over %g are counted "
            "in bold: a window that large only fills the queue. " %
            CWND_MAX) + (
            "A variant that retransmits more than %g %% of what it sends "
            "is not ranked: it is left out of both bests and marked *not "
            "ranked* in its path's table. " % (100 * RETRANS_MAX)) + (
            "The last column judges ours against Linux's "
        "best as non-inferiority (experiments.md, \"How a claim is "
        "judged\"): *reproduced* when the log-scale CI of ours / "
        "Linux's lies above 1/%g, *contradicted* when it lies below, "
        "*pilot* below 3 full-length runs a side. Both bests are picked "
        "on the runs shown, so a *reproduced* needs fresh runs to "
        "confirm it." % stats.EQUIV_MARGIN), ""]
    out += summary_table(exps) + [""]
    out += ["`%s` against its goals on each path: retransmissions under "
            "%g %% of the segments it sends, no run whose window exceeds "
            "%g times what the path holds, and non-inferior to the best of "
            "%s (that best picked among those not flagged). A verdict "
            "counts stale runs (other module builds) where there are "
            "any." % (GOAL_VARIANT, 100 * GOAL_RETRANS, CWND_MAX,
                      ", ".join(GOAL_LINUX)), ""]
    out += goals_table(exps) + [""]
    for res in exps:
        out += path_table(res) + r_verdicts(res)
    return out + [END]


def write(path, lines):
    """Replace the block between the markers of @path (the whole file
    when it has none)."""
    text = open(path).read() if os.path.exists(path) else ""
    block = "\n".join(lines)
    text = replace_block(text, BEGIN, END, block)
    if text is None:
        text = "# Head to head\n\n" + block + "\n"
    with open(path, "w") as f:
        f.write(text)
