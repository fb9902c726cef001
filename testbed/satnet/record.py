# SPDX-License-Identifier: GPL-2.0
"""The run record: one versioned JSON file per run (docs/experiments.md).

Every run, single-flow or mixed, writes the same shape; `summary` holds
the metrics the report uses, computed once here.
"""

import glob
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import time

from . import kmod, mice
from .castate import CA_STATES
from .checkout import git_state
from .experiment import MICE
from .host import OWN_DEPENDS
from .paths import MODULES, RESULTS_DIR, TOP
from .topo import steering_mask

SCHEMA = "satnet.run/1"
REQUIRED = ("schema", "experiment", "mode", "variant", "point", "rep",
            "meta", "flows", "bottleneck", "host", "selfcheck", "summary")


def _read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


_builds = {}


_SRCVERSION = re.compile(rb"(?:^|\0)srcversion=([0-9A-F]{1,64})\0")


def ko_srcversion(path):
    """The srcversion in a .ko's .modinfo strings (what `modinfo -F
    srcversion` prints), read from the file so that no kmod is needed;
    None when the file is missing or carries none."""
    try:
        with open(path, "rb") as f:
            m = _SRCVERSION.search(f.read())
    except OSError:
        return None
    return m.group(1).decode() if m else None


def module_builds(top=None):
    """The srcversion of each project module as built now in the checkout,
    None for a module not built."""
    from .paths import MODULES, TOP
    top = top or TOP
    if top not in _builds:
        _builds[top] = {m: ko_srcversion(os.path.join(top, ko))
                        for m, ko in MODULES.items()}
    return _builds[top]


def used_modules(rec):
    """The project modules whose code a record's point ran, from its
    meta.spec: its flows' congestion controls and the modules whose
    parameters they set, the epdn qdisc on its bottleneck, and in an EPDN
    domain the RN-TCP receiver and origin (rn_host) and the epdn qdisc of
    its router, and the modules those call into (host.OWN_DEPENDS: tcp_r
    uses tcp_rn's).  A module merely resident (an earlier point of the guest
    loaded it) runs none of its code for this point: rn_host's hooks
    return at once where net.rn.receiver and net.rn.epdn_origin are off.
    None when the spec does not say (a record without one, or a mix with
    short flows, whose variant the spec names but not its module): then
    every module the record lists counts."""
    spec = (rec.get("meta") or {}).get("spec")
    sc = isinstance(spec, dict) and spec.get("scenario")
    if not isinstance(sc, dict) or spec.get("mice") or \
            not spec.get("flows"):
        return None
    used = set()
    for f in spec["flows"]:
        used.add("tcp_" + str(f.get("cc")))
        used.update(f.get("params") or {})
    if sc.get("qdisc") == "epdn":
        used.add("sch_epdn")
    if sc.get("epdn_domain"):
        used.update(("rn_host", "sch_epdn"))
    for m in list(used):            # and the modules they call into
        used.update(OWN_DEPENDS.get(m, ()))
    return used & set(MODULES)


def stale(rec, builds):
    """The project modules a record's point ran (used_modules()) whose
    build differs from @builds (module_builds()): [] when the record is
    current.  A module not built now cannot be judged and is not
    counted."""
    mods = (rec.get("meta") or {}).get("modules") or {}
    used = used_modules(rec)
    return sorted(m for m, d in mods.items()
                  if (used is None or m in used) and builds.get(m) and
                  (d or {}).get("srcversion") != builds[m])


def stale_note(n):
    """What a verdict says of its @n stale runs: '' when there are none."""
    return " (%d stale run%s)" % (n, "" if n == 1 else "s") if n else ""


def project_modules():
    """srcversion and parameters of every project module loaded."""
    out = {}
    for m in MODULES:
        d = "/sys/module/" + m
        if not os.path.isdir(d):
            continue
        out[m] = {"srcversion": _read(os.path.join(d, "srcversion")),
                  "parameters": kmod.read_params(m)}
    return out


def iperf3_version():
    r = subprocess.run(["iperf3", "--version"], capture_output=True,
                       text=True)
    return (r.stdout.splitlines() or ["?"])[0]


def clock():
    """The guest's clock, as tools/vm-run set it: real, or QEMU's
    instruction-counted virtual clock with its shift.  Its CPUs too, and
    the mask that steers each flow to one of them (topo.Topology.steer:
    records of two CPUs without it saw packets reordered)."""
    mode = os.environ.get("SATNET_CLOCK", "real")
    out = {"mode": mode}
    if mode == "virtual":
        out["icount_shift"] = int(os.environ.get("SATNET_ICOUNT_SHIFT", "0"))
    if os.environ.get("SATNET_ACCEL") in ("tcg", "kvm"):
        out["accel"] = os.environ["SATNET_ACCEL"]
    out["cpus"] = os.cpu_count() or 1
    mask = steering_mask()
    if mask:
        out["rps_cpus"] = mask
    return out


def clock_name(meta):
    """A record's clock in words; records from before the field ran on
    the real clock, and real-clock records from before `cpus` on a
    guest of two CPUs that did not steer flows (docs/testbed.md)."""
    c = meta.get("clock") or {"mode": "real"}
    if c.get("mode") == "virtual":
        return "virtual (icount shift %s)" % c.get("icount_shift", "?")
    if "cpus" not in c:
        return "real (before flow steering)"
    return c.get("mode", "real")


def wall_date(rtc="/sys/class/rtc/rtc0/since_epoch"):
    """When the record was made, by the host's clock.  On the virtual
    clock the guest's own time runs ahead of it (it skips idle time), so
    read the RTC, which tools/vm-run keeps at the host's time there."""
    t = time.time()
    if os.environ.get("SATNET_CLOCK") == "virtual":
        try:
            with open(rtc) as f:
                t = int(f.read())
        except (OSError, ValueError):
            pass
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def base_meta(width):
    return {"git": git_state(), "modules": project_modules(),
            "clock": clock(),
            "kernel": os.uname().release,
            "date": wall_date(),
            "host": socket.gethostname(),
            "command": " ".join(["satnet"] + sys.argv[1:]),
            "iperf3": iperf3_version(), "width": width}


def diff_counters(before, after):
    """after - before for every counter that moved."""
    return {k: v - before.get(k, 0) for k, v in after.items()
            if isinstance(v, (int, float)) and v != before.get(k, 0)}


def jain(xs):
    """Jain's fairness index: 1 when all equal, 1/n when one takes all."""
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs)) if any(xs) \
        else None


def ca_share(flows):
    """Mean share of time in each congestion-avoidance state over the
    flows that have one (flows[].ca); None when none has (older runs)."""
    shares = [f["ca"]["share"] for f in flows
              if (f.get("ca") or {}).get("share")]
    if not shares:
        return None
    return {k: statistics.fmean(s.get(k) or 0.0 for s in shares)
            for k in CA_STATES}


def limit_bps(sc):
    """Goodput a perfect sender gets from a scenario record
    (meta.scenario): the bottleneck rate less framing (40 B of headers, 12
    of timestamps, 14 of Ethernet, which HTB counts) and less the data
    path's non-congestion loss.  Seed 000's GEO path: 94.5 % of 1.5
    Mbit/s."""
    mss = sc.get("mss") or 1460
    payload, wire = mss - 12, mss + 40 + 14
    fwd = sc.get("forward") or {}
    lost = fwd.get("mean_loss")
    if lost is None:                # records from before mean_loss
        lost = 1 - (1 - (fwd.get("per") or 0)) * (1 - (fwd.get("loss") or 0))
    return sc["rate_bps"] * payload / wire * (1 - lost)


RECOVERY_COUNTERS = ("TcpExtTCPSackRecovery", "TcpExtTCPRenoRecovery")


def recoveries(flows):
    """Fast recoveries begun per flow (with SACK or without), mean over
    @flows: the kernel's count of fast retransmits that opened a recovery,
    the nearest of the seeds' fast retransmit ratio."""
    return sum(f["counters"].get(c, 0) for f in flows
               for c in RECOVERY_COUNTERS) / len(flows)


def mice_summary(m):
    """The short flows of a run as one more "variant": their mean
    throughput as goodput (Mbit/s), retransmissions and timeouts from
    their senders' counters (timeouts per mouse begun)."""
    out = mice.summary(m["flows"])
    c = m["counters"]
    sent = c.get("TcpOutSegs", 0)
    out.update(retrans_share=c.get("TcpRetransSegs", 0) / sent
               if sent else None,
               timeouts=c.get("TcpExtTCPTimeouts", 0) / out["started"]
               if out["started"] else None)
    return out


def summarize(rec, rate_bps, mss):
    """The metrics of docs/experiments.md, per variant of the run (each
    flow has its own sender namespace, so its own counters)."""
    flows = rec["flows"]
    sc = (rec.get("meta") or {}).get("scenario")
    limit = limit_bps(sc) if sc else None
    out = {}
    for v in dict.fromkeys(f["variant"] for f in flows):
        fs = [f for f in flows if f["variant"] == v]
        g = sum(f["goodput_bps"] for f in fs) / len(fs)
        sent = sum(f["counters"].get("TcpOutSegs", 0) for f in fs)
        rtx = sum(f["counters"].get("TcpRetransSegs", 0) for f in fs)
        out[v] = {"goodput": g / 1e6, "goodput_share": g / rate_bps,
                  "limit_share": g / limit if limit else None,
                  "packets": sum(f["bytes"] for f in fs) / len(fs) / mss,
                  "retrans_share": rtx / sent if sent else None,
                  "timeouts": sum(f["counters"].get("TcpExtTCPTimeouts", 0)
                                  for f in fs) / len(fs),
                  "recoveries": recoveries(fs),
                  "flows": len(fs), "ca_share": ca_share(fs)}
    j = jain([f["goodput_bps"] for f in flows])
    for v in out.values():
        v["jain"] = j
    if rec.get("mice"):
        out[MICE] = mice_summary(rec["mice"])
    cpu = (rec.get("host") or {}).get("cpu") or {}
    return {"variants": out,
            "goodput_bps": sum(f["goodput_bps"] for f in flows), "jain": j,
            "cpu_bound": cpu.get("cpu_bound")}


def write(rec, path):
    """Atomically, so that an interrupted run leaves no half record."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(rec, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def problems(rec):
    """What makes a record unusable, as text (empty: fine)."""
    if not isinstance(rec, dict):
        return ["not a JSON object"]
    missing = [k for k in REQUIRED if k not in rec]
    if missing:
        return ["missing " + ", ".join(missing)]
    if rec["schema"] != SCHEMA:
        return ["schema %r, expected %r" % (rec["schema"], SCHEMA)]
    if not rec["flows"]:
        return ["no flows"]
    return []


def load(path):
    with open(path) as f:
        rec = json.load(f)
    bad = problems(rec)
    if bad:
        raise ValueError("%s: %s" % (path, "; ".join(bad)))
    rec["_path"] = path
    return rec


def load_all(results=RESULTS_DIR, experiments=None, warn=print):
    """Every record under results/, optionally of some experiments only.
    A file that is not a record is reported and skipped."""
    recs = []
    for path in sorted(glob.glob(os.path.join(results, "*", "*", "*",
                                              "*.json"))):
        exp = os.path.relpath(path, results).split(os.sep)[0]
        if experiments and exp not in experiments:
            continue
        try:
            recs.append(load(path))
        except (OSError, ValueError) as e:
            warn("satnet: skipping %s" % e)
    return recs


# A counter of the receiving host: "receiver.TcpExtPAWSEstab",
# "receiver.rn_host.data_paws_discarded".
RECEIVER = "receiver."


def _host_counters(rec, name):
    """The host-wide counters @name lives in, and its name there: the
    receiver's nstat and /proc/net files for a receiver. name, else the
    sender's /proc/net files (rn_sender.timeouts)."""
    h = rec["host"]
    if name.startswith(RECEIVER):
        return {**h.get("nstat_receiver", {}),
                **h.get("proc_receiver", {})}, name[len(RECEIVER):]
    return h.get("proc_sender", {}), name


def counter(rec, variant, name):
    """Counter @name (a `counters` name of docs/experiments.md) of a run:
    the mean over @variant's flows, None when the run has none of them."""
    fs = [f for f in rec["flows"] if f["variant"] == variant]
    if len(rec["flows"]) == 1 and fs and name not in fs[0]["counters"]:
        # a module's own counters (rn_sender.timeouts, /proc/net) and the
        # receiver's are a host's, so they are one flow's only when it
        # is alone
        have, key = _host_counters(rec, name)
        return have.get(key, 0)
    return sum(f["counters"].get(name, 0) for f in fs) / len(fs) \
        if fs else None


def has_counter(rec, name):
    """Does the run count @name at all (a flow's or a host's)?"""
    have, key = _host_counters(rec, name)
    return any(name in f["counters"] for f in rec["flows"]) or key in have


EXPORT_FIELDS = ("experiment", "mode", "variant", "point", "rep", "flows",
                 "goodput_mbps", "goodput_share", "limit_share",
                 "retrans_share", "timeouts", "jain", "duration_s",
                 "clock", "kernel", "commit", "dirty", "date", "cpu_bound",
                 "stale", "path")


def rows(recs, builds=None, counters=()):
    """One flat row per variant of each run, for pandas or a spreadsheet:
    the metrics of the summary, what made the run and the @counters
    (counter())."""
    builds = module_builds() if builds is None else builds
    out = []
    for r in recs:
        m = r["meta"]
        git = m.get("git") or {}
        for v, s in sorted(r["summary"]["variants"].items()):
            out.append({
                "experiment": r["experiment"], "mode": r["mode"],
                "variant": v,
                "point": ",".join("%s=%s" % kv
                                  for kv in sorted(r["point"].items())),
                "rep": r["rep"], "flows": s.get("flows"),
                "goodput_mbps": s.get("goodput"),
                "goodput_share": s.get("goodput_share"),
                "limit_share": s.get("limit_share"),
                "retrans_share": s.get("retrans_share"),
                "timeouts": s.get("timeouts"), "jain": s.get("jain"),
                "duration_s": m.get("duration_s"),
                "clock": clock_name(m), "kernel": m.get("kernel"),
                "commit": git.get("commit"), "dirty": git.get("dirty"),
                "date": m.get("date"),
                "cpu_bound": r["summary"].get("cpu_bound"),
                "stale": bool(stale(r, builds)),
                "path": r.get("_path"),
                **{c: counter(r, v, c) for c in counters}})
    return out
