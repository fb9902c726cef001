# SPDX-License-Identifier: GPL-2.0
"""The one runner: a point is a fresh topology, a self-check, one iperf3
flow per sender/receiver pair (all started together; an experiment's
short flows, satnet.mice, from pairs of their own), probes beside them,
the scenario's schedule of path changes applied while they run, and a
record.  Several points run at once, each in its own namespaces.

Module parameters are global to the kernel, so two points whose variants
need different values of one parameter never run at the same time
(ParamGate).  Topology setup is serialised: it saturates an emulated CPU.
"""

import contextlib
import json
import os
import queue
import re
import threading
import time

from . import measure, mice, record
from .host import modprobe, proc_net
from .kmod import get_param, param_text, set_param
from .measure import SelfCheckError
from .paths import RESULTS_DIR, hang_limit
from .scenario import load_profile
from .topo import Topology

SELF_CHECK_ATTEMPTS = 3
# How long the mice under way when the long flows end may take to finish.
MICE_GRACE_S = 10.0
PROC_FILES = ("rn_sender", "rn_host")


def load_cc(cc):
    """Built-in algorithms need nothing; the others are modules."""
    if cc not in ("reno", "cubic"):
        modprobe("tcp_" + cc)


def load_modules(pt):
    """Every flow's congestion control, and the modules whose parameters
    the variants set."""
    for v in set(pt.exp.flows(pt.variant)):
        load_cc(pt.exp.catalogue[v].cc)
    modprobe(*pt.params())
    # The samplers' sock_diag would load them on first use, in the
    # measured window.
    modprobe("inet_diag", "tcp_diag")


class ParamGate:
    """Points run together only when the module parameters they pin
    agree.  hold() blocks until no running point needs another value of
    a parameter this point pins, then writes the values.  None pins a
    parameter to the value it had before the gate first wrote it, and
    the last point to release a parameter writes that value back: no
    point runs with a value another variant left behind."""

    def __init__(self):
        self.cond = threading.Condition()
        self.held = {}               # (module, param) -> [value, users]
        self.before = {}             # (module, param) -> value found

    def _value(self, m, p, v):
        if v is not None:
            return param_text(v)
        if (m, p) not in self.before:
            self.before[(m, p)] = get_param(m, p)
        return self.before[(m, p)]

    def _free(self, want):
        return all(self.held.get(k, [v])[0] == v for k, v in want.items())

    @contextlib.contextmanager
    def hold(self, params):
        with self.cond:
            want = {(m, p): self._value(m, p, v)
                    for m, ps in params.items() for p, v in ps.items()}
            self.cond.wait_for(lambda: self._free(want))
            for (m, p), v in want.items():
                if (m, p) not in self.held:
                    self.before.setdefault((m, p), get_param(m, p))
                    if v != self.before[(m, p)]:
                        set_param(m, p, v)
                    self.held[(m, p)] = [v, 0]
                self.held[(m, p)][1] += 1
        try:
            yield
        finally:
            with self.cond:
                for k in want:
                    self.held[k][1] -= 1
                    if not self.held[k][1]:
                        if self.held.pop(k)[0] != self.before[k]:
                            set_param(*k, self.before[k])
                self.cond.notify_all()


# Levels, not counters: their difference over a run means nothing.
GAUGES = {"refcnt", "backlog", "qlen", "records", "flows", "record_bytes",
          "memory_used",
          "handle", "parent"}


def qdisc_totals(qdiscs):
    """Sum of every counter over the bottleneck's qdiscs, by kind, e.g.
    {"htb.drops": 0, "epdn.overflow_drops": 3}."""
    out = {}
    for q in qdiscs:
        for k, v in q.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool) \
                    and k not in GAUGES:
                key = "%s.%s" % (q.get("kind"), k)
                out[key] = out.get(key, 0) + v
        for k, v in (q.get("xstats") or {}).items():
            if isinstance(v, (int, float)) and not isinstance(v, bool) \
                    and k not in GAUGES:
                key = "%s.xstats.%s" % (q.get("kind"), k)
                out[key] = out.get(key, 0) + v
    return out


PROC_LINE = re.compile(r"^\s*([A-Za-z_][\w]*)\s*[:=]?\s+(-?\d+)\s*$")


def proc_counters(topo, ns):
    """/proc/net/rn_sender and rn_host of a namespace, as name -> value
    (lines 'name value' or 'name: value'); absent files are skipped."""
    out = {}
    for name in PROC_FILES:
        try:
            text = proc_net(ns, name)
        except FileNotFoundError:
            continue
        for line in text.splitlines():
            m = PROC_LINE.match(line)
            if m:
                out["%s.%s" % (name, m.group(1))] = int(m.group(2))
    return out


def _sum(dicts):
    out = {}
    for d in dicts:
        for k, v in d.items():
            out[k] = out.get(k, 0) + v
    return out


def _flow(topo, i, barrier, cc, duration):
    barrier.wait()
    res, rows = measure.iperf3_run(topo, cc, duration, i=i, port=5201 + i,
                                   bottleneck=False)
    end = res["end"]
    got = end["sum_received"]["bytes"]
    return {"cc": cc, "goodput_bps": measure.goodput_bps(res, duration),
            "bytes": got,
            "retransmits": end["sum_sent"].get("retransmits"),
            "intervals": measure.intervals(res), "ss": rows,
            "ca": res["ca"]}


def together(fn, jobs, timeout=900, action=None):
    """fn(i, barrier, **job) for every job, each in its own thread; the
    barrier lets them start together, and calls action() (if any) as they
    pass it.  Results in job order; the first error is raised, after
    aborting the barrier so that no thread waits for a party that
    failed."""
    out, errs = [None] * len(jobs), []
    barrier = threading.Barrier(len(jobs), action=action,
                                timeout=hang_limit(timeout))

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


class ScheduleError(RuntimeError):
    pass


class PathSchedule(threading.Thread):
    """Applies a scenario's schedule while the flows run: each step
    (t, namespace, tc lines) at t seconds after start(), through
    apply(namespace, lines), which raises when tc fails.  Every step
    applied is logged (when due, begun and done, namespace, commands,
    result);
    a failed one ends the schedule, and result() raises it.  Used as a
    context manager, it stops on exit, so a run that ends or fails early
    leaves no change pending.  clock and wait (wait(seconds) returns True
    once stopped) are injectable for tests."""

    def __init__(self, steps, apply, clock=time.monotonic, wait=None):
        super().__init__(daemon=True)
        self.steps, self.apply, self.clock = steps, apply, clock
        self.stopped = threading.Event()
        self.wait = wait or self.stopped.wait
        self.log = []

    def run(self):
        t0 = self.clock()
        for due, ns, lines in self.steps:
            if self.wait(max(0.0, t0 + due - self.clock())):
                return
            entry = {"due_s": due, "t_s": round(self.clock() - t0, 3),
                     "ns": ns, "commands": lines, "result": "ok"}
            self.log.append(entry)
            try:
                self.apply(ns, lines)
            except Exception as e:          # result() raises it
                entry["result"] = "failed: %s" % e
                return
            finally:
                entry["end_s"] = round(self.clock() - t0, 3)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stopped.set()
        if self.ident is not None:          # started
            self.join()

    def result(self):
        """The steps applied, or ScheduleError when one failed."""
        for e in self.log:
            if e["result"] != "ok":
                raise ScheduleError("path change due at %.3f s (started at "
                                    "%.3f s) in %s %s" %
                                    (e["due_s"], e["t_s"], e["ns"],
                                     e["result"]))
        return self.log


def read_back(topo, keys):
    """The sysctls of the first pair, and of every pair when a mix puts
    its flows on different profiles."""
    out = {"sender": topo.read_sysctls(topo.snd[0], keys),
           "receiver": topo.read_sysctls(topo.rcv[0], keys)}
    if len({p.name for p in topo.pair_profiles}) > 1:
        out["pairs"] = [{"sender": topo.read_sysctls(s, keys),
                         "receiver": topo.read_sysctls(r, keys)}
                        for s, r in zip(topo.snd, topo.rcv)]
    return out


def snapshot(topo):
    return {"qdisc": measure.bottleneck_json(topo),
            "snd": [measure.nstat(topo, ns) for ns in topo.snd],
            "rcv": [measure.nstat(topo, ns) for ns in topo.rcv],
            "proc_snd": _sum(proc_counters(topo, ns) for ns in topo.snd),
            "proc_rcv": _sum(proc_counters(topo, ns) for ns in topo.rcv)}


def mice_for(pt, topo):
    """The point's short flows (experiment [mice]): from the pairs after
    the long flows', seeded by the point and repetition, so that every
    arm of a claim meets the same mice; None without."""
    spec = pt.exp.mice
    if not spec:
        return None
    first = len(pt.exp.flows(pt.variant))
    senders = [(topo.snd[i], topo.rcv_addr(i))
               for i in range(first, first + spec["pairs"])]
    return mice.Mice(senders, spec, pt.duration,
                     seed="%s-%d" % (pt.key(), pt.rep))


def mice_result(driver, done, first, before, after):
    """What the mice did (@done: driver.finish()), and their senders'
    counters summed."""
    flows, errors = done
    n = len(driver.senders)
    return {"variant": driver.spec["variant"], "cc": driver.spec["cc"],
            "flows": flows, "errors": errors,
            "counters": _sum(record.diff_counters(before["snd"][i],
                                                  after["snd"][i])
                             for i in range(first, first + n))}


def measure_point(pt, topo, check):
    """The flows of one point on a topology that passed its self-check."""
    variants = pt.exp.flows(pt.variant)
    ccs = [pt.exp.catalogue[v].cc for v in variants]
    before = snapshot(topo)
    measure.check_idle(before["qdisc"])
    driver = mice_for(pt, topo)
    sink = mice.Sink(topo.rcv[len(variants):]) if driver else None
    cpu0 = measure.cpu_times()

    def start():
        schedule.start()
        if driver:
            sink.start()
            driver.start()

    done = None
    try:
        with PathSchedule(topo.schedule_steps(pt.duration),
                          topo.tc_batch) as schedule:
            flows = together(lambda i, barrier, cc: _flow(
                topo, i, barrier, cc, pt.duration),
                [{"cc": cc} for cc in ccs], action=start)
        if driver:
            done = driver.finish(MICE_GRACE_S)
    finally:
        if driver and done is None and driver.is_alive():
            driver.finish(0)
        if sink:
            sink.stop()
    cpu = measure.cpu_use(cpu0, measure.cpu_times())
    applied = schedule.result()
    after = snapshot(topo)
    for i, (f, v) in enumerate(zip(flows, variants)):
        f["variant"] = v
        f["counters"] = record.diff_counters(before["snd"][i],
                                             after["snd"][i])
    q0, q1 = qdisc_totals(before["qdisc"]), qdisc_totals(after["qdisc"])
    extra = {"mice": mice_result(driver, done, len(variants), before,
                                 after)} if driver else {}
    return {
        **extra,
        "flows": flows,
        "bottleneck": {"before": before["qdisc"], "after": after["qdisc"],
                       "delta": record.diff_counters(q0, q1)},
        "host": {
            "nstat_sender": _sum(f["counters"] for f in flows),
            "nstat_receiver": _sum(record.diff_counters(b, a) for b, a in
                                   zip(before["rcv"], after["rcv"])),
            "proc_sender": record.diff_counters(before["proc_snd"],
                                                after["proc_snd"]),
            "proc_receiver": record.diff_counters(before["proc_rcv"],
                                                  after["proc_rcv"]),
            "cpu": cpu},
        "selfcheck": check,
        "schedule": applied,
    }


def run_point(pt, width=1, tag=None, setup_lock=None,
              rtt_tolerance=measure.RTT_TOLERANCE):
    """One point, on a fresh topology; a failed self-check (the emulated
    machine was too busy to keep time) is retried on a fresh one."""
    sc = pt.exp.scenario_for(pt.variant, pt.point, pt.duration)
    profile = load_profile(pt.exp.profile_for(pt.variant, sc, pt.point))
    spec = pt.spec()
    pairs = [load_profile(f["profile"]) for f in spec["flows"]]
    if "mice" in spec:
        pairs += [load_profile(spec["mice"]["profile"])] * \
            spec["mice"]["pairs"]
    for n in range(SELF_CHECK_ATTEMPTS):
        try:
            with contextlib.ExitStack() as stack:
                with setup_lock or contextlib.nullcontext():
                    topo = stack.enter_context(
                        Topology(sc, profile, tag="%s%d" % (tag or "p", n),
                                 pair_profiles=pairs))
                    check = measure.self_check(topo, rtt_tolerance)
                    keys = measure.sysctl_keys(topo)
                    sysctl = read_back(topo, keys)
                check["attempts"] = n + 1
                body = measure_point(pt, topo, check)
            break
        except SelfCheckError as e:
            last = e
    else:
        raise last
    meta = record.base_meta(width)
    meta.update(scenario=sc.describe(), profile=profile.name, sysctl=sysctl,
                duration_s=pt.duration, spec=spec)
    rec = {"schema": record.SCHEMA, "experiment": pt.exp.name,
           "mode": pt.mode, "variant": pt.variant, "point": pt.point,
           "rep": pt.rep, "meta": meta, **body}
    rec["summary"] = record.summarize(rec, sc.rate_bps, sc.mss or 1448)
    return rec


def stored(pt, results=RESULTS_DIR, reuse_stale=False):
    """The point's record exists, ran what the files say now (its
    meta.spec, resolved values) and, unless @reuse_stale, was made by the
    project's modules as built now (their srcversions)."""
    path = os.path.join(results, pt.relpath())
    if not os.path.exists(path):
        return False
    try:
        with open(path) as f:
            rec = json.load(f)
        if not pt.ran_by(rec):
            return False
    except (OSError, ValueError, KeyError):
        return False
    return reuse_stale or not record.stale(rec, record.module_builds())


class Runner:
    """Runs points `width` at a time and writes each record as it ends.
    Stored points are skipped, so an interrupted run resumes."""

    def __init__(self, width=3, results=RESULTS_DIR, progress=None,
                 log=print, reuse_stale=False,
                 rtt_tolerance=measure.RTT_TOLERANCE, claim=None):
        self.width, self.results = width, results
        # @claim(point): False when another runner has taken the point
        self.claim, self.ran = claim, 0
        self.reuse_stale = reuse_stale
        self.rtt_tolerance = rtt_tolerance
        self.gate, self.setup = ParamGate(), threading.Lock()
        self.progress, self.log = progress, log
        self.errors = []

    def run(self, points):
        todo = [p for p in points
                if not stored(p, self.results, self.reuse_stale)]
        if todo:
            record.git_state()      # once, before the points (it is slow)
        # a mix runs alone: its flows need every CPU cycle
        singles = [p for p in todo if p.variant != "mix"]
        mixes = [p for p in todo if p.variant == "mix"]
        self._parallel(singles, self.width)
        self._parallel(mixes, 1)
        return len(todo)

    def _parallel(self, points, width):
        jobs = queue.Queue()
        for p in points:
            jobs.put(p)
        threads = [threading.Thread(target=self._worker, args=(jobs, w,
                                                               width))
                   for w in range(min(width, len(points)))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    def _worker(self, jobs, wid, width):
        while True:
            try:
                pt = jobs.get_nowait()
            except queue.Empty:
                return
            if self.claim and not self.claim(pt):
                if self.progress:
                    self.progress.update(1)
                continue
            self.ran += 1
            t0 = time.monotonic()
            try:
                load_modules(pt)
                with self.gate.hold(pt.pinned()):
                    rec = run_point(pt, width, "%d%d-" % (os.getpid() % 100,
                                                          wid), self.setup,
                                   self.rtt_tolerance)
                rec["meta"]["wall_s"] = round(time.monotonic() - t0, 1)
                record.write(rec, os.path.join(self.results, pt.relpath()))
                s = rec["summary"]
                self.log("%s: goodput %.3f Mbit/s, jain %s" %
                         (pt, s["goodput_bps"] / 1e6,
                          "%.2f" % s["jain"] if s["jain"] else "-"))
            except Exception as e:       # report, keep the others going
                self.errors.append("%s: %s" % (pt, e))
                self.log("%s: FAILED: %s" % (pt, e))
            if self.progress:
                self.progress.update(1)
