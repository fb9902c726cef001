# SPDX-License-Identifier: GPL-2.0
"""testbed/run: one congestion algorithm over one scenario.

Writes one JSON line per run (with time series and metadata) to --out and a
summary row to the CSV beside it.
"""

import argparse
import contextlib
import csv
import json
import os
import sys
import tomllib

from .measure import iperf3_run, metadata, nstat, self_check, summarize
from .scenario import ScenarioError, load_profile, load_scenario
from .topo import Topology, modprobe

CSV_FIELDS = ("scenario", "label", "cc", "profile", "rep", "duration_s",
              "goodput_bps", "throughput_bps", "overhead", "retransmits",
              "TcpExtTCPFastRetrans", "TcpExtTCPTimeouts",
              "TcpExtTCPLossProbes", "TcpExtTCPSACKReorder",
              "TcpExtTCPDSACKRecv", "rtt_ms", "rate_bps", "kernel", "date")


def load_cc(cc):
    """Built-in algorithms that are modules in Debian's kernel."""
    if cc not in ("reno", "cubic"):
        modprobe("tcp_" + cc)


def one_run(sc, profile, cc, rep=0, tag=None, setup_lock=None):
    """Fresh topology, self-check, run, counters.  Returns the record.
    setup_lock staggers the CPU-heavy setup of parallel runs."""
    load_cc(cc)
    with contextlib.ExitStack() as stack:
        with setup_lock or contextlib.nullcontext():
            topo = stack.enter_context(Topology(sc, profile, tag=tag))
            check = self_check(topo)
            meta = metadata(topo, cc)
        res, rows = iperf3_run(topo, cc, sc.duration_s)
        counters = nstat(topo, topo.snd[0])
        rcv = nstat(topo, topo.rcv[0])
    rec = summarize(cc, res, rows, counters, sc.duration_s)
    rec.update(receiver_counters={k: rcv.get(k, 0) for k in RECEIVER_KEYS},
               overhead=overhead(rcv))
    rec.update(scenario=sc.name, profile=profile.name, rep=rep,
               selfcheck=check, meta=meta)
    return rec


RECEIVER_KEYS = ("TcpInSegs", "TcpExtTCPDSACKOldSent",
                 "TcpExtTCPDSACKOfoSent", "TcpExtTCPOFOQueue",
                 # frames the error stage corrupted: dropped by checksum
                 "TcpInCsumErrors", "IpExtInCsumErrors", "IpInHdrErrors")


def overhead(rcv):
    """Seed 003: duplicate data received / all data received.  Each
    duplicate segment makes the receiver send one DSACK (RFC 2883), which
    Linux counts as DSACKOldSent (below rcv_nxt) or DSACKOfoSent; the
    denominator is every segment received (a handful of them carry no
    data).  Needs DSACK on at the receiver (tcp_dsack=1)."""
    dup = rcv.get("TcpExtTCPDSACKOldSent", 0) + \
        rcv.get("TcpExtTCPDSACKOfoSent", 0)
    return dup / rcv["TcpInSegs"] if rcv.get("TcpInSegs") else None


def csv_row(rec):
    row = {k: rec.get(k) for k in CSV_FIELDS}
    row.update({k: rec["counters"].get(k) for k in CSV_FIELDS
                if k.startswith("Tcp")})
    row.update(rtt_ms=rec["selfcheck"]["rtt_ms"],
               rate_bps=rec["selfcheck"]["rate_bps"],
               kernel=rec["meta"]["kernel"], date=rec["meta"]["date"])
    return row


def append(out, rec):
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "a") as f:
        f.write(json.dumps(rec) + "\n")
    path = os.path.splitext(out)[0] + ".csv"
    new = not os.path.exists(path)
    with open(path, "a", newline="") as f:
        w = csv.DictWriter(f, CSV_FIELDS)
        if new:
            w.writeheader()
        w.writerow(csv_row(rec))


def parse_set(items):
    out = {}
    for it in items:
        key, _, val = it.partition("=")
        try:
            out[key] = tomllib.loads("v = " + val)["v"]
        except tomllib.TOMLDecodeError:
            out[key] = val
    return out


def main(argv=None):
    p = argparse.ArgumentParser(prog="testbed/run", description=__doc__)
    p.add_argument("-s", "--scenario", required=True,
                   help="name in testbed/scenarios or a .toml path")
    p.add_argument("-C", "--cc", default="cubic",
                   help="congestion control (iperf3 -C)")
    p.add_argument("-t", "--duration", type=float,
                   help="seconds (default: the scenario's run.duration_s)")
    p.add_argument("-p", "--profile", help="sysctl profile name")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VAL",
                   help="override a scenario key, e.g. forward.ber=1e-7")
    p.add_argument("-o", "--out", default="results/runs.jsonl")
    p.add_argument("--rep", type=int, default=0)
    a = p.parse_args(argv)
    try:
        over = parse_set(a.set)
        if a.duration:
            over["run.duration_s"] = a.duration
        if a.profile:
            over["run.profile"] = a.profile
        sc = load_scenario(a.scenario, over)
        profile = load_profile(sc.profile)
    except ScenarioError as e:
        sys.exit("testbed/run: %s" % e)
    rec = one_run(sc, profile, a.cc, a.rep)
    append(a.out, rec)
    print("%s %s rep %d: goodput %.0f bit/s, retransmits %s, rtt %.1f ms" %
          (sc.name, a.cc, a.rep, rec["goodput_bps"], rec["retransmits"],
           rec["selfcheck"]["rtt_ms"]))


if __name__ == "__main__":
    main()
