# SPDX-License-Identifier: GPL-2.0
"""Rebuild a report (markdown table + goodput plot) from stored runs.

    python3 -m satnet.report RUNS.jsonl --md docs/x.md --png docs/x.png

Everything after the KEEP marker line in an existing --md file is kept, so a
hand-written discussion survives a rebuild.  Runs of a --sweep are plotted
as goodput against the swept value, one line per variant.
"""

import argparse
import json
import os
import shlex
import statistics
import sys
from collections import defaultdict

COLUMNS = [("goodput_bps", "goodput kbit/s", 1e-3),
           ("retransmits", "retransmits", 1),
           ("TcpExtTCPFastRetrans", "fast retrans", 1),
           ("TcpExtTCPTimeouts", "timeouts", 1),
           ("TcpExtTCPSACKReorder", "SACK reorder", 1),
           ("TcpExtTCPDSACKRecv", "DSACK recv", 1)]
KEEP = "<!-- satnet.report: hand-written text below this line is kept -->"


def _last_ss(rec, field):
    rows = [r for r in rec.get("ss") or [] if field in r]
    return rows[-1][field] if rows else None


def _ratio(num, den):
    def f(rec):
        c = rec["counters"]
        return c[num] / c[den] if c.get(den) else None
    return f


def _rto_data(rec):
    c = rec["counters"]
    if "TcpExtTCPSynRetrans" not in c and c.get("TcpExtTCPTimeouts"):
        return None             # older record: SYN timeouts not separable
    return c.get("TcpExtTCPTimeouts", 0) - c.get("TcpExtTCPSynRetrans", 0)


def _syn_timeouts(rtt_ms):
    """SYN retransmissions before the SYN-ACK of a path with this RTT
    arrives: the initial RTO of 1 s doubles (timeouts at 1, 3, 7, 15 s)."""
    n, t = 0, 1000.0
    while t < rtt_ms:
        n, t = n + 1, 2 * t + 1000.0
    return n


def _lost_rtx_data(rec):
    """TCPLostRetransmit without the handshakes' share.  A SYN that times
    out k times is marked lost at the first timeout and counted as a lost
    retransmission at each later one (tcp_timeout_mark_lost ->
    tcp_mark_skb_lost), k - 1 in all.  A bench run opens three
    connections from the sender: the self-check's iperf3 control
    connection to R2 (RTT = return delay + 2 ms) and iperf3's control and
    data connections (base RTT).  Their expected SYN timeouts must add up
    to the measured TCPSynRetrans, or the value is not given."""
    c = rec["counters"]
    sc = rec["meta"]["scenario"]
    if "TcpExtTCPSynRetrans" not in c or "selfcheck" not in rec:
        return None
    conns = [_syn_timeouts(sc["ack"]["delay_ms"] + 2)] + \
        [_syn_timeouts(sc["base_rtt_ms"])] * 2
    if sum(conns) != c["TcpExtTCPSynRetrans"]:
        return None
    return c["TcpExtTCPLostRetransmit"] - sum(max(k - 1, 0) for k in conns)


def _corrupted(rec):
    rc = rec.get("receiver_counters") or {}
    keys = ("TcpInCsumErrors", "IpExtInCsumErrors", "IpInHdrErrors")
    return sum(rc[k] for k in keys) if all(k in rc for k in keys) else None


# --columns NAME: metrics computed from a record (else: a counter name)
DERIVED = {
    "rto_data": ("RTOs after handshake", 1, _rto_data,
                 "TCPTimeouts − TCPSynRetrans of the sender's namespace: "
                 "retransmission timeouts of established connections (a "
                 "SYN's initial 1 s RTO expires on every long path, and "
                 "TCPTimeouts counts it)"),
    "lost_rtx_data": ("lost retransmissions", 1, _lost_rtx_data,
                      "TCPLostRetransmit without the handshakes' share "
                      "(a SYN that times out k times adds k − 1): with "
                      "RACK, retransmissions RACK found lost again; "
                      "without it, retransmissions still unacknowledged "
                      "when an RTO fired"),
    "corrupted": ("corrupted rcvd", 1, _corrupted,
                  "frames the receiver dropped by checksum (TcpInCsumErrors "
                  "+ IpExtInCsumErrors + IpInHdrErrors): the error stage's "
                  "losses"),
    "bottleneck_dropped": ("queue drops", 1,
                           lambda r: r.get("bottleneck_dropped"),
                           "packets the bottleneck queue dropped during the "
                           "flow (tc -s)"),
    "retrans_share": ("retrans % of sent", 100,
                      _ratio("TcpRetransSegs", "TcpOutSegs"),
                      "sender's retransmitted segments / all segments it "
                      "sent (TcpRetransSegs / TcpOutSegs)"),
    "cwnd_end": ("cwnd at end", 1, lambda r: _last_ss(r, "cwnd"),
                 "the data flow's cwnd in the last `ss` sample"),
    "ssthresh_end": ("ssthresh at end", 1,
                     lambda r: _last_ss(r, "ssthresh"),
                     "its ssthresh in the last `ss` sample"),
}


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def value(rec, key):
    if key in DERIVED:
        return DERIVED[key][2](rec)
    if key.startswith("Tcp"):
        return rec["counters"].get(key, 0)
    return rec[key]


def sweep_value(rec):
    """The swept value as a sort key (numbers before strings)."""
    vals = list((rec.get("sweep") or {}).values())
    return tuple((0, v) if isinstance(v, (int, float)) else (1, str(v))
                 for v in vals)


def key_of(rec):
    """A report line: the variant label, and the swept value if any."""
    k = rec.get("label", rec["cc"])
    for name, val in (rec.get("sweep") or {}).items():
        k += " %s=%s" % (name.split(".")[-1], val)
    return k


def stats(vals):
    mean = statistics.fmean(vals)
    sd = statistics.stdev(vals) if len(vals) > 1 else 0.0
    return mean, sd, min(vals), max(vals)


def fmt(vals, scale):
    vals = [v for v in vals if v is not None]
    if not vals:
        return "–"
    mean, sd, lo, hi = stats([v * scale for v in vals])
    return "%.1f ± %.1f (%.1f–%.1f)" % (mean, sd, lo, hi) if scale != 1 \
        else "%.1f ± %.1f (%g–%g)" % (mean, sd, lo, hi)


def group(recs, mode, first=()):
    """Report lines in a stable order: by swept value, then the variants
    named in `first`, then the others in the order they first appear
    (parallel runs finish in any order)."""
    g = defaultdict(list)
    order = {label: n for n, label in enumerate(first)}
    for r in recs:
        order.setdefault(r.get("label", r["cc"]), len(order))
        if r.get("mode", "parallel") == mode:
            g[key_of(r)].append(r)
    return dict(sorted(g.items(), key=lambda kv: (
        sweep_value(kv[1][0]), order[kv[1][0].get("label", kv[1][0]["cc"])])))


def column_spec(name):
    if name in DERIVED:
        label, scale = DERIVED[name][:2]
        return name, label, scale
    short = name[len("TcpExt"):] if name.startswith("TcpExt") else name
    return name, short, 1


def table(groups, extra=(), hide=()):
    cols = [c for c in COLUMNS if c[0] not in hide] + \
        [column_spec(c) for c in extra]
    if all(r.get("overhead") is not None for rs in groups.values()
           for r in rs):
        cols.insert(1, ("overhead", "overhead %", 100))
    head = "| variant | runs | " + " | ".join(c[1] for c in cols) + " |"
    rows = [head, "|" + "---|" * (len(cols) + 2)]
    for cc, rs in groups.items():
        cells = [fmt([value(r, k) for r in rs], s) for k, _, s in cols]
        rows.append("| %s | %d | %s |" % (cc, len(rs), " | ".join(cells)))
    return "\n".join(rows)


def ratios(groups, pairs):
    """Mean goodput of variant A over variant B at each swept value."""
    by = defaultdict(dict)
    for rs in groups.values():
        r = rs[0]
        by[sweep_value(r)][r.get("label", r["cc"])] = \
            statistics.fmean(x["goodput_bps"] for x in rs)
    names = {sweep_value(rs[0]): ", ".join(
        "%s=%s" % (k.split(".")[-1], v)
        for k, v in (rs[0].get("sweep") or {}).items()) or "all"
        for rs in groups.values()}
    rows = ["| swept value | " + " | ".join(
        "goodput %s / %s" % p for p in pairs) + " |",
        "|---|" + "---|" * len(pairs)]
    for sv in sorted(by):
        cells = ["%.2f" % (by[sv][a] / by[sv][b])
                 if by[sv].get(a) and b in by[sv] else "–"
                 for a, b in pairs]
        rows.append("| %s | %s |" % (names[sv], " | ".join(cells)))
    return "\n".join(rows)


def plot_sweep(groups, ax):
    """Goodput against the swept value, one line per variant."""
    lines = defaultdict(list)
    key = None
    for rs in groups.values():
        (key, x), = rs[0]["sweep"].items()
        lines[rs[0].get("label", rs[0]["cc"])].append(
            (x, [r["goodput_bps"] / 1e3 for r in rs]))
    xs = sorted({x for pts in lines.values() for x, _ in pts})
    for n, (label, pts) in enumerate(lines.items()):
        pts.sort()
        # a small sideways offset keeps the error bars apart
        off = 1 + 0.06 * (n - (len(lines) - 1) / 2)
        mx = [x * off for x, _ in pts]
        st = [stats(v) for _, v in pts]
        ax.errorbar(mx, [m for m, *_ in st], yerr=[sd for _, sd, *_ in st],
                    marker="o", capsize=3, label=label)
        for x, (_, v) in zip(mx, pts):
            ax.plot([x] * len(v), v, "k.", ms=3)
    if xs[0] > 0 and xs[-1] / xs[0] >= 100:
        ax.set_xscale("log")
    ax.set_xlabel(key)
    ax.legend(fontsize=8)


def plot(groups, png, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    swept = all(len(rs[0].get("sweep") or {}) == 1 and
                isinstance(next(iter(rs[0]["sweep"].values())), (int, float))
                for rs in groups.values())
    if swept:
        plot_sweep(groups, ax)
        ax.set_ylabel("goodput (kbit/s)")
        ax.set_title(title, fontsize=9)
        fig.tight_layout()
        fig.savefig(png, dpi=110)
        return
    names = list(groups)
    for i, cc in enumerate(names):
        vals = [r["goodput_bps"] / 1e3 for r in groups[cc]]
        mean, sd, _, _ = stats(vals)
        ax.bar(i, mean, yerr=sd, capsize=4, color="#7aa6c2")
        ax.plot([i] * len(vals), vals, "k.", ms=5)
    ax.set_xticks(range(len(names)), names, rotation=20 if
                  max(map(len, names)) > 10 else 0, fontsize=8)
    ax.set_ylabel("goodput (kbit/s)")
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


def control(recs):
    """Parallel vs serial runs of the same algorithm."""
    par, ser = group(recs, "parallel"), group(recs, "serial")
    out = []
    for cc, rs in ser.items():
        if cc not in par:
            continue
        for key, label, scale in (("goodput_bps", "goodput kbit/s", 1e-3),):
            out.append("| %s | %s | %s | %s |" %
                       (cc, label, fmt([value(r, key) for r in par[cc]],
                                       scale),
                        fmt([value(r, key) for r in rs], scale)))
        out.append("| %s | self-check RTT ms | %s | %s |" %
                   (cc, fmt([r["selfcheck"]["rtt_ms"] for r in par[cc]], 1),
                    fmt([r["selfcheck"]["rtt_ms"] for r in rs], 1)))
    if not out:
        return ""
    return "\n".join(["| algorithm | metric | parallel | serial |",
                      "|---|---|---|---|"] + out)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("runs")
    p.add_argument("--md", required=True)
    p.add_argument("--png", required=True)
    p.add_argument("--command", default="")
    p.add_argument("--wall", default="")
    p.add_argument("--title", default="Baseline: Linux's algorithms")
    p.add_argument("--columns", action="append", default=[],
                   help="extra columns, comma-separated, may repeat: "
                   "counter names (TcpExt...) or " + ", ".join(DERIVED))
    p.add_argument("--ratio", action="append", default=[], metavar="A/B",
                   help="table of mean goodput of variant A over B per "
                   "swept value")
    p.add_argument("--order", default="",
                   help="variant labels to list first, in this order")
    p.add_argument("--hide", default="",
                   help="default columns to leave out (their keys)")
    a = p.parse_args(argv)
    extra = [c for arg in a.columns for c in arg.split(",") if c]
    hide = [c for c in a.hide.split(",") if c]
    recs = load(a.runs)
    if not recs:
        raise SystemExit("report: no runs in " + a.runs)
    rebuild = " " + " ".join(shlex.quote(x) for x in
                             (argv if argv is not None else sys.argv[1:]))
    m = recs[0]["meta"]
    sc = m["scenario"]
    groups = group(recs, "parallel", [x for x in a.order.split(",") if x])
    title = "%s: %.1f Mbit/s, base RTT %g ms, %s, %g s runs" % (
        sc["name"], sc["rate_bps"] / 1e6, sc["base_rtt_ms"], sc["qdisc"],
        sc["duration_s"])
    plot(groups, a.png, title)
    lines = [
        "# %s on the %s scenario" % (a.title, sc["name"]),
        "",
        "Produced by `%s` on kernel %s, %s (UTC).%s" %
        (a.command, m["kernel"], m["date"][:10],
         " Wall time: %s." % a.wall if a.wall else ""),
        "Raw runs (JSON lines, with time series and metadata): `%s`; "
        "rebuild this page with `python3 -m satnet.report%s` "
        "(run from `testbed/`)." % (os.path.relpath(a.runs), rebuild),
        "",
        "Scenario (`testbed/scenarios/%s.toml`): %s" %
        (sc["name"], " ".join(sc["source"].split())),
        "",
        "Profiles %s; bottleneck `%s`; up to %d runs in parallel "
        "topologies." %
        (", ".join("`%s`" % p for p in sorted({r["profile"] for r in recs})),
         " / ".join(m["bottleneck_qdisc"]),
         max(r.get("width", 1) for r in recs)),
        "Goodput = bytes the receiver's application got (cumulatively "
        "ACKed) / duration. Cells: mean ± sample s.d. (min–max).",
    ] + ([
        "Overhead (seed 003, after Utsumi et al. 2008) = duplicate data "
        "received / all data received, at the receiver: the receiver sends "
        "one DSACK per duplicate segment, so duplicates = "
        "TCPDSACKOldSent + TCPDSACKOfoSent of its namespace, over its "
        "TcpInSegs."] if all(r.get("overhead") is not None
                             for rs in groups.values() for r in rs)
         else []) + ["%s: %s." % (DERIVED[c][0][0].upper() + DERIVED[c][0][1:],
                      DERIVED[c][3]) for c in extra if c in DERIVED] + [
        "",
        table(groups, extra, hide),
        "",
    ]
    pairs = [tuple(r.split("/", 1)) for r in a.ratio]
    if pairs:
        lines += [ratios(groups, pairs), ""]
    lines += ["![goodput](%s)" % os.path.basename(a.png), ""]
    ctl = control(recs)
    if ctl:
        lines += ["## Do parallel topologies change the results?", "",
                  "The same algorithm run again alone, one topology at a "
                  "time:", "", ctl, ""]
    kept = ""
    if os.path.exists(a.md):
        with open(a.md) as f:
            old = f.read()
        if KEEP in old:
            kept = old[old.index(KEEP):]
    with open(a.md, "w") as f:
        f.write("\n".join(lines) + ("\n" + kept if kept else ""))


if __name__ == "__main__":
    main()
