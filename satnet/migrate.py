# SPDX-License-Identifier: GPL-2.0
"""python3 -m satnet.migrate: result files of the old tools to run records.

Reads JSON-lines files (one old record a line) and single JSON files (the
whole file is one record) written by the tools the project had before the
run record of docs/experiments.md, and writes one "satnet.run/1" file per
run under RESULTS/legacy-STEM/legacy/VARIANT/POINT-repN.json.  Each new
record names the line it came from in meta.converted_from; every old field
that has no place in the run record is kept under "legacy".

  python3 -m satnet.migrate [--results DIR] [--dry-run] FILE...

A file that exists with the same content is left alone; one that exists
with other content is an error (nothing is overwritten).
"""

import argparse
import json
import os
import re
import statistics
import sys

from .paths import RESULTS_DIR, TOP

SCHEMA = "satnet.run/1"
KEYS = ("schema", "experiment", "mode", "variant", "point", "rep", "meta",
        "flows", "bottleneck", "host", "selfcheck", "summary")

# shape: (producer, test on the record's keys); the first that matches wins
SHAPES = {
    "esack-fig1": ("tests/integration/test_esack.py fig1",
                   lambda k: {"meta", "runs"} <= k),
    "deepspace-trace": ("tools/deepspace-trace", lambda k: "trace" in k),
    "bench": ("testbed/satnet/bench.py (cli.one_run)",
              lambda k: {"sweep", "label", "counters"} <= k),
    "mix": ("testbed/satnet/mix.py (mixed_run)", lambda k: "per_cc" in k),
    "tcp-r-mix-summary": ("tests/integration/test_tcp_r.py, "
                          "test_many_r_flows_over_red_ecn before 2a68838",
                          lambda k: "r_goodput_bps" in k),
    "rn-bench-udp": ("tools/bench-rn --udp",
                     lambda k: {"udp_offered_bps", "tag"} <= k),
    "rn-bench": ("tools/bench-rn", lambda k: {"tag", "rn"} <= k),
    "rn-e2e": ("tests/integration/test_rn_e2e.py record()",
               lambda k: {"test", "rn", "ss_kval"} <= k),
    "tcp-r-flow": ("tests/integration/test_tcp_r.py record()",
                   lambda k: {"test", "proven"} <= k),
}

# named sender counters of tools/bench-rn and the tests -> nstat names
NSTAT_NAMES = {"recoveries": "TcpExtTCPSackRecovery",
               "fast_retrans_segs": "TcpExtTCPFastRetrans",
               "retrans_segs": "TcpRetransSegs",
               "dsacks": "TcpExtTCPDSACKRecv",
               "timeouts": "TcpExtTCPTimeouts",
               "spurious_rtos": "TcpExtTCPSpuriousRTOs",
               "lost_retransmits": "TcpExtTCPLostRetransmit"}


class ShapeError(ValueError):
    pass


def shape_of(old):
    keys = set(old)
    for name, (_, test) in SHAPES.items():
        if test(keys):
            return name
    raise ShapeError("no known shape has the keys %s" % sorted(keys))


def experiment_of(source):
    stem = os.path.splitext(os.path.basename(source))[0]
    return "legacy-" + safe_name(stem.replace("_", "-"))


def safe_name(s):
    """A variant or experiment name usable as one path component."""
    s = re.sub(r"[^a-z0-9._-]+", "-", str(s).lower()).strip("-.")
    return re.sub(r"-{2,}", "-", s) or "none"


def point_name(point):
    if not point:
        return "base"
    text = ",".join("%s=%s" % (k, v) for k, v in point.items())
    return re.sub(r"[^A-Za-z0-9._,=+-]", "_", text).lstrip(".")


def jain(xs):
    """Jain's fairness index (satnet.mix's formula)."""
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs)) \
        if any(xs) else None


def _bytes(goodput_bps, duration):
    """The bytes behind goodput = bytes * 8 / duration, when exact."""
    if goodput_bps is None or not duration:
        return None
    b = goodput_bps * duration / 8
    return round(b) if abs(b - round(b)) < 1e-3 else None


def _flow(variant, cc, goodput_bps, duration, **more):
    f = {"variant": variant, "cc": cc, "goodput_bps": goodput_bps}
    b = _bytes(goodput_bps, duration)
    if b is not None:
        f["bytes"] = b
    f.update({k: v for k, v in more.items() if v is not None})
    return f


def _record(source, line, shape, variant, point, rep):
    return {
        "schema": SCHEMA, "experiment": experiment_of(source),
        "mode": "legacy", "variant": variant, "point": point, "rep": rep,
        "meta": {"git": {"commit": None, "dirty": None},
                 "converted_from": {"file": source, "line": line,
                                    "shape": shape,
                                    "producer": SHAPES[shape][0]}},
        "flows": [], "bottleneck": {}, "host": {}, "selfcheck": None,
        "summary": {}}


def _pop_same(o, key, value):
    """Drop o[key] when it only repeats value (kept otherwise)."""
    if key in o and o[key] == value:
        del o[key]


def _old_meta(rec, m, cc=None):
    """The meta dict of testbed/satnet/measure.metadata()."""
    meta = rec["meta"]
    for k in ("kernel", "date", "scenario", "profile", "iperf3"):
        if k in m:
            meta[k] = m.pop(k)
    if "sysctl_sender" in m or "sysctl_receiver" in m:
        meta["sysctl"] = {"sender": m.pop("sysctl_sender", None),
                          "receiver": m.pop("sysctl_receiver", None)}
    params = m.pop("module_params", None)
    if params and cc:
        meta["modules"] = {"tcp_" + cc: {"srcversion": None,
                                         "parameters": params}}
    elif params == {}:
        pass                            # nothing loaded: nothing to say
    elif params is not None:
        m["module_params"] = params
    if "bottleneck_qdisc" in m:
        rec["bottleneck"]["qdisc"] = m.pop("bottleneck_qdisc")


def _selfcheck(o):
    sc = o.pop("selfcheck", None)
    if "selfcheck_retries" in o:
        n = o.pop("selfcheck_retries")
        sc = dict(sc or {}, attempts=n + 1)
    return sc


def _nstat_from(o):
    """Sender counters that the old record kept under short names."""
    out = {}
    for k, name in NSTAT_NAMES.items():
        if k in o:
            out[name] = o.pop(k)
    for k, v in (o.get("undo") or {}).items():
        out["TcpExt" + k] = v
    o.pop("undo", None)
    mib = o.get("mib") or {}
    if all(out.get(k, v) == v for k, v in mib.items()):
        out.update(o.pop("mib", {}))    # else the whole dict stays in legacy
    return out


def _summarize(rec, rate_bps=None, per_variant=None, jain_all=None,
               total=None):
    flows = rec["flows"]
    g = total if total is not None else \
        sum(f["goodput_bps"] for f in flows
            if f.get("goodput_bps") is not None)
    s = {"goodput_bps": g, "goodput": g / 1e6}
    if rate_bps:
        s["goodput_share"] = g / rate_bps
    snd = rec["host"].get("nstat_sender") or {}
    if snd.get("TcpOutSegs") and "TcpRetransSegs" in snd:
        s["retrans_share"] = snd["TcpRetransSegs"] / snd["TcpOutSegs"]
    if "TcpExtTCPTimeouts" in snd:
        s["timeouts"] = snd["TcpExtTCPTimeouts"]
    if len(flows) > 1 or per_variant is not None:
        s["jain"] = jain_all if jain_all is not None else \
            jain([f["goodput_bps"] for f in flows])
        s["per_variant"] = per_variant or {}
        for f in flows:
            pv = s["per_variant"].setdefault(f["variant"], {})
            pv.setdefault("_g", []).append(f["goodput_bps"])
        for v in s["per_variant"].values():
            xs = v.pop("_g", [])
            v.setdefault("flows", len(xs))
            v.setdefault("goodput_bps", statistics.mean(xs) if xs else None)
            v.setdefault("jain", jain(xs) if xs else None)
            if v["goodput_bps"] is not None:
                v["goodput"] = v["goodput_bps"] / 1e6
    rec["summary"] = s


def _old_total(rec, o):
    """A mix's old goodput_bps is the sum of its flows, summed in another
    order (so it may differ in the last bits): it is the summary's when it
    agrees, and stays in legacy when it does not."""
    total = o.pop("goodput_bps")
    flows = sum(f["goodput_bps"] for f in rec["flows"])
    if abs(total - flows) <= 1e-9 * abs(total):
        return total
    o["goodput_bps"] = total
    return None


def _finish(rec, o):
    meta = rec["meta"]
    meta["converted_from"] = meta.pop("converted_from")     # last
    if o:
        rec["legacy"] = o
    return rec


# ---- one converter per shape: o is a copy, each pops what it places ----

def _bench(o, rec):
    """satnet.bench: one flow, sender/receiver nstat, self-check."""
    cc, dur = o.pop("cc"), o.pop("duration_s")
    m = dict(o.pop("meta", {}))
    _old_meta(rec, m, cc)
    rec["meta"]["duration_s"] = dur
    if "width" in o:
        rec["meta"]["width"] = o.pop("width")
    sc = rec["meta"].get("scenario")
    _pop_same(o, "scenario", sc.get("name") if isinstance(sc, dict) else sc)
    _pop_same(o, "profile", rec["meta"].get("profile"))
    if "profile" in o and "profile" not in rec["meta"]:
        rec["meta"]["profile"] = o.pop("profile")
    counters = o.pop("counters", {})
    rec["flows"] = [_flow(rec["variant"], cc, o.pop("goodput_bps"), dur,
                          retransmits=o.pop("retransmits", None),
                          segs_out=counters.get("TcpOutSegs"),
                          ss=o.pop("ss", None),
                          intervals=o.pop("intervals", None))]
    bn = rec["bottleneck"]
    diff = {}
    if o.get("throughput_bps") is not None:
        b = _bytes(o["throughput_bps"], dur)
        if b is not None:
            diff["sent_bytes"] = b
        bn["throughput_bps"] = o.pop("throughput_bps")
    if "bottleneck_dropped" in o:
        diff["dropped"] = o.pop("bottleneck_dropped")
    if diff:
        bn["diff"] = diff
    rec["host"] = {"nstat_sender": counters}
    if "receiver_counters" in o:
        rec["host"]["nstat_receiver"] = o.pop("receiver_counters")
    rec["selfcheck"] = _selfcheck(o)
    if m:
        o["meta"] = m
    _summarize(rec, sc.get("rate_bps") if isinstance(sc, dict) else None)
    if "overhead" in o:                 # seed 003's, receiver side
        rec["summary"]["overhead"] = o.pop("overhead")
    return _finish(rec, o)


def _one_flow_mib(o, rec, cc, exact=True):
    """tools/bench-rn and the integration tests: named counters.  exact:
    goodput_bps is bytes * 8 / duration_s (flows[0].bytes from it)."""
    dur = o.pop("duration_s")
    meta = rec["meta"]
    for k in ("kernel", "date", "profile"):
        if k in o:
            meta[k] = o.pop(k)
    meta["duration_s"] = dur
    if "overrides" in o:
        meta["scenario"] = {"overrides": o.pop("overrides")}
    if "parallel" in o:
        meta["width"] = o.pop("parallel")
    rec["flows"] = [_flow(rec["variant"], cc, o.pop("goodput_bps"),
                          dur if exact else None)]
    nstat = _nstat_from(o)
    if nstat:
        rec["host"]["nstat_sender"] = nstat
    if "rn" in o:
        rec["host"]["rn_sender"] = o.pop("rn")
    if "rn_host" in o:
        rec["host"]["rn_host"] = o.pop("rn_host")
    diff = {}
    if "bottleneck_sent_bytes" in o:
        diff["sent_bytes"] = o.pop("bottleneck_sent_bytes")
    if "qdisc_drops" in o:
        diff["dropped"] = o.pop("qdisc_drops")
    if diff:
        rec["bottleneck"]["diff"] = diff
    backlog = {k[len("backlog_"):]: o.pop(k) for k in
               ("backlog_mean", "backlog_max", "backlog_zero_share")
               if k in o}
    if backlog:
        rec["bottleneck"]["backlog_packets"] = backlog


def _one_flow(o, rec):
    """tools/bench-rn and test_tcp_r.py record(): one flow's MIB."""
    cc = o.pop("cc")
    _one_flow_mib(o, rec, cc)
    _summarize(rec)
    return _finish(rec, o)


def _rn_udp(o, rec):
    """tools/bench-rn --udp: what the path carries, no TCP at all."""
    cc = o.pop("cc")
    o["goodput_bps"] = o.pop("udp_received_bps")
    _one_flow_mib(o, rec, cc, exact=False)
    _summarize(rec)
    return _finish(rec, o)


def _rn_e2e(o, rec):
    cc = o.pop("cc")
    params = o.pop("params", None)
    if params is not None:
        rec["meta"]["modules"] = {"tcp_rn": {"srcversion": None,
                                             "parameters": params}}
    if "tcp_recovery" in o:
        rec["meta"]["sysctl"] = {"sender": {
            "net.ipv4.tcp_recovery": o.pop("tcp_recovery")}}
    _one_flow_mib(o, rec, cc)
    _summarize(rec)
    return _finish(rec, o)


def _trace(o, rec):
    """tools/deepspace-trace: a bench-like record, a packet-trace summary
    (its --per is the scenario's forward.per: the point)."""
    o.pop("per")
    return _bench(o, rec)


def _mix(o, rec):
    """satnet.mix: several flows, one bottleneck."""
    dur = o.pop("duration_s")
    m = dict(o.pop("meta", {}))
    _old_meta(rec, m)
    rec["meta"]["duration_s"] = dur
    sc = rec["meta"].get("scenario")
    _pop_same(o, "scenario", sc.get("name") if isinstance(sc, dict) else sc)
    _pop_same(o, "profile", rec["meta"].get("profile"))
    flows = o.pop("flows")
    _pop_same(o, "ccs", [f["cc"] for f in flows])
    for f in flows:
        f = dict(f)
        cc = f.pop("cc")
        ss_last = f.pop("ss_last", None)
        rec["flows"].append(_flow(safe_name(cc), cc, f.pop("goodput_bps"),
                                  dur, retransmits=f.pop("retransmits", None),
                                  ss=[ss_last] if ss_last else [], **f))
    bn = rec["bottleneck"]
    diff = dict(o.pop("qdisc", {}))
    b = _bytes(o.get("bottleneck_bps"), dur)
    if b is not None:
        diff["sent_bytes"] = b
    bn["diff"] = diff
    bn["throughput_bps"] = o.pop("bottleneck_bps")
    rec["selfcheck"] = _selfcheck(o)
    per_variant = {safe_name(cc): {"flows": v["flows"],
                                   "goodput_bps": v["mean_bps"],
                                   "jain": v["jain"]}
                   for cc, v in o.pop("per_cc").items()}
    rate = o.pop("rate_bps", None)
    _summarize(rec, rate, per_variant, o.pop("jain_all", None),
               _old_total(rec, o))
    if "useful" in o:
        rec["summary"]["useful"] = o.pop("useful")
    if m:
        o["meta"] = m
    return _finish(rec, o)


def _tcpr_mix_summary(o, rec):
    """The first test_many_r_flows_over_red_ecn: per-algorithm lists."""
    dur = o.pop("duration_s")
    for k in ("kernel", "date"):
        rec["meta"][k] = o.pop(k)
    rec["meta"]["duration_s"] = dur
    rate = o.pop("rate_bps")
    rec["meta"]["scenario"] = {"rate_bps": rate}
    paths = o.pop("r_paths")
    for n, g in enumerate(o.pop("r_goodput_bps")):
        rec["flows"].append(_flow("r", "r", g, dur, paths=paths[n]))
    for g in o.pop("reno_goodput_bps"):
        rec["flows"].append(_flow("reno", "reno", g, dur))
    _pop_same(o, "flows", len(rec["flows"]))
    bn = rec["bottleneck"]
    diff = dict(o.pop("qdisc", {}))
    b = _bytes(o.get("bottleneck_bps"), dur)
    if b is not None:
        diff["sent_bytes"] = b
    bn["diff"] = diff
    bn["throughput_bps"] = o.pop("bottleneck_bps")
    per_variant = {"r": {"jain": o.pop("jain_r")}}
    _summarize(rec, rate, per_variant, o.pop("jain_all"),
               _old_total(rec, o))
    return _finish(rec, o)


def _esack(old, source, line):
    """One record per run of the file's "runs"; the file's meta in each."""
    out = []
    for label, run in old["runs"].items():
        m = dict(old["meta"])
        o = dict(run)
        rec = _record(source, line, "esack-fig1", safe_name(label),
                      {}, 0)
        meta = rec["meta"]
        meta["converted_from"]["run"] = label
        for k in ("kernel", "date", "command", "profile", "duration_s"):
            if k in m:
                meta[k] = m.pop(k)
        meta["scenario"] = {"name": m.pop("scenario")}
        for k in ("ber", "mtu", "initial_ssthresh"):
            if k in m:
                meta["scenario"][k] = m.pop(k)
        meta["modules"] = {"tcp_esack": {"srcversion": None,
                                         "parameters": o.pop("params")}}
        cc = o.pop("cc")
        rec["flows"] = [_flow(rec["variant"], cc, o.pop("goodput_bps"),
                              None, retransmits=o.pop("retransmits", None))]
        _summarize(rec)
        o["label"] = label
        if m:
            o["meta"] = m
        out.append(_finish(rec, o))
    return out


CONVERTERS = {"bench": _bench, "deepspace-trace": _trace, "mix": _mix,
              "tcp-r-mix-summary": _tcpr_mix_summary,
              "rn-bench": _one_flow, "rn-bench-udp": _rn_udp,
              "rn-e2e": _rn_e2e, "tcp-r-flow": _one_flow}


def _variant_of(shape, o):
    if shape == "bench":
        return o["label"]
    if shape in ("mix", "tcp-r-mix-summary"):
        return "mix"
    if o.get("profile"):
        return "%s:%s" % (o["cc"], o["profile"])
    return o["cc"]


def _point_of(shape, o):
    """The old sweep dict; a mix's label "k=v[,k=v]" (satnet.mix --label,
    which tools/bench-tcp-r used for its sweep) is one too."""
    if shape == "bench":
        return dict(o["sweep"])
    if shape == "deepspace-trace":
        return {"forward.per": o["per"]}
    label = o.get("label") if shape == "mix" else None
    if label and re.fullmatch(r"[\w.]+=[^,=]+(,[\w.]+=[^,=]+)*", label):
        point = {}
        for kv in label.split(","):
            k, v = kv.split("=", 1)
            try:
                point[k] = json.loads(v)
            except ValueError:
                point[k] = v
        return point
    return {}


def convert(old, source, line=None):
    """One old record (a line of a JSON-lines file, or a whole JSON file)
    to a list of run records.  source: the old file, as it should be
    named in meta.converted_from (e.g. results/baseline-geo.jsonl)."""
    shape = shape_of(old)
    if shape == "esack-fig1":
        return _esack(old, source, line)
    o = dict(old)
    variant = _variant_of(shape, o)
    point = _point_of(shape, o)
    rec = _record(source, line, shape, safe_name(variant), point,
                  o.get("rep", 0))
    o.pop("rep", None)
    if shape == "bench":
        o.pop("sweep")
        o.pop("label")
        if safe_name(variant) != variant:
            o["label"] = variant
    return [CONVERTERS[shape](o, rec)]


def path_of(rec, results_dir, taken=None):
    """results_dir/EXPERIMENT/MODE/VARIANT/POINT-repN.json.  A serial
    control run of satnet.bench gets "-serial"; with taken (a set of the
    paths given out so far, updated here) a path already given out gets
    "-2", "-3", ..."""
    name = "%s-rep%d" % (point_name(rec["point"]), rec["rep"])
    if (rec.get("legacy") or {}).get("mode") == "serial":
        name += "-serial"
    base = os.path.join(results_dir, rec["experiment"], rec["mode"],
                        rec["variant"], name)
    path, n = base + ".json", 1
    while taken is not None and path in taken:
        n += 1
        path = "%s-%d.json" % (base, n)
    if taken is not None:
        taken.add(path)
    return path


def check(rec):
    """Problems of a run record (an empty list: none)."""
    bad = ["missing key %s" % k for k in KEYS if k not in rec]
    if rec.get("schema") != SCHEMA:
        bad.append("schema is %r" % rec.get("schema"))
    if not isinstance(rec.get("rep"), int):
        bad.append("rep is not an integer")
    if not isinstance(rec.get("point"), dict):
        bad.append("point is not a table")
    if not rec.get("flows"):
        bad.append("no flows")
    for f in rec.get("flows") or []:
        if f.get("goodput_bps") is None:
            bad.append("a flow without goodput_bps")
    return bad


def read_old(path):
    """(line number, record) of a JSON-lines file, or (1, the whole
    document) of a .json file."""
    with open(path) as f:
        if path.endswith(".json"):
            yield 1, json.load(f)
            return
        for n, text in enumerate(f, 1):
            if text.strip():
                yield n, json.loads(text)


def _source_name(path):
    full = os.path.abspath(path)
    rel = os.path.relpath(full, TOP)
    return full if rel.startswith(os.pardir) else rel


def _dump(rec):
    return json.dumps(rec, ensure_ascii=False) + "\n"


def plan(path, results_dir, taken):
    """[(new path, text, shape, old line)] of one old file, all checked;
    paths given out go into taken.  Raises ValueError or OSError."""
    source, out = _source_name(path), []
    for n, old in read_old(path):
        for rec in convert(old, source, n):
            bad = check(rec)
            if bad:
                raise ShapeError("line %d: %s" % (n, "; ".join(bad)))
            out.append((path_of(rec, results_dir, taken), _dump(rec),
                        rec["meta"]["converted_from"]["shape"], n))
    return out


def write(items):
    """Write the planned files; one that exists must hold the same text.
    Returns how many were there already."""
    same = 0
    for path, text, _, _ in items:
        if os.path.exists(path):
            with open(path) as f:
                if f.read() != text:
                    raise FileExistsError("%s exists with other content"
                                          % path)
            same += 1
    for path, text, _, _ in items:
        if not os.path.exists(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
    return same


def main(argv=None):
    p = argparse.ArgumentParser(
        prog="python3 -m satnet.migrate", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="+", metavar="FILE",
                   help="old .jsonl or .json result files")
    p.add_argument("--results", default=RESULTS_DIR, metavar="DIR",
                   help="where the run records go (default: %(default)s)")
    p.add_argument("--dry-run", action="store_true",
                   help="convert and check, write nothing")
    a = p.parse_args(argv)
    taken, failed = set(), 0
    for path in a.files:
        try:
            items = plan(path, a.results, taken)
            same = 0 if a.dry_run else write(items)
        except (OSError, ValueError) as e:
            print("%s: %s" % (path, e), file=sys.stderr)
            failed += 1
            continue
        shapes = {}
        for _, _, shape, _ in items:
            shapes[shape] = shapes.get(shape, 0) + 1
        lines = len({n for _, _, _, n in items})
        dirs = sorted({os.path.relpath(x[0], a.results).split(os.sep)[0]
                       for x in items})
        print("%s: %d old record%s -> %d run record%s (%s) in %s%s" % (
            _source_name(path), lines, "" if lines == 1 else "s",
            len(items), "" if len(items) == 1 else "s",
            ", ".join("%s %d" % kv for kv in sorted(shapes.items())),
            ", ".join(dirs),
            "; dry run, nothing written" if a.dry_run else
            "; %d already there" % same if same else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
