# SPDX-License-Identifier: GPL-2.0
"""Rebuild a report (markdown table + goodput plot) from stored runs.

    python3 -m satnet.report RUNS.jsonl --md docs/x.md --png docs/x.png
"""

import argparse
import json
import os
import statistics
from collections import defaultdict

COLUMNS = [("goodput_bps", "goodput kbit/s", 1e-3),
           ("retransmits", "retransmits", 1),
           ("TcpExtTCPFastRetrans", "fast retrans", 1),
           ("TcpExtTCPTimeouts", "timeouts", 1),
           ("TcpExtTCPSACKReorder", "SACK reorder", 1),
           ("TcpExtTCPDSACKRecv", "DSACK recv", 1)]


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def value(rec, key):
    return rec["counters"][key] if key.startswith("Tcp") else rec[key]


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
    mean, sd, lo, hi = stats([v * scale for v in vals])
    return "%.1f ± %.1f (%.1f–%.1f)" % (mean, sd, lo, hi) if scale != 1 \
        else "%.1f ± %.1f (%g–%g)" % (mean, sd, lo, hi)


def group(recs, mode):
    g = defaultdict(list)
    for r in recs:
        if r.get("mode", "parallel") == mode:
            g[key_of(r)].append(r)
    return g


def table(groups):
    cols = list(COLUMNS)
    if all(r.get("overhead") is not None for rs in groups.values()
           for r in rs):
        cols.insert(1, ("overhead", "overhead %", 100))
    head = "| variant | runs | " + " | ".join(c[1] for c in cols) + " |"
    rows = [head, "|" + "---|" * (len(cols) + 2)]
    for cc, rs in groups.items():
        cells = [fmt([value(r, k) for r in rs], s) for k, _, s in cols]
        rows.append("| %s | %d | %s |" % (cc, len(rs), " | ".join(cells)))
    return "\n".join(rows)


def plot(groups, png, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
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
    a = p.parse_args(argv)
    recs = load(a.runs)
    if not recs:
        raise SystemExit("report: no runs in " + a.runs)
    m = recs[0]["meta"]
    sc = m["scenario"]
    groups = group(recs, "parallel")
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
        "rebuild this page with `python3 -m satnet.report` "
        "(run from `testbed/`)." % os.path.relpath(a.runs),
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
        "",
        table(groups),
        "",
        "![goodput](%s)" % os.path.basename(a.png),
        "",
    ]
    ctl = control(recs)
    if ctl:
        lines += ["## Do parallel topologies change the results?", "",
                  "The same algorithm run again alone, one topology at a "
                  "time:", "", ctl, ""]
    with open(a.md, "w") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    main()
