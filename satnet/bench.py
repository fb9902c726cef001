# SPDX-License-Identifier: GPL-2.0
"""A matrix of runs (algorithms x repetitions), several topologies at once.

Each run has its own namespaces, so runs in parallel share only the VM's
CPUs; setup and self-check are serialised (measured: setup saturates the
emulated CPU).  --serial-control repeats one algorithm alone, one run at a
time, so the report can show whether parallelism changed the results.
"""

import argparse
import queue
import sys
import threading
import time

from .cli import append, one_run, parse_set
from .measure import SelfCheckError
from .scenario import load_profile, load_scenario

SELF_CHECK_ATTEMPTS = 3


class Variant:
    """label:cc[:profile] - one line of the report."""

    def __init__(self, spec):
        parts = spec.split(":")
        if not 1 <= len(parts) <= 3 or not all(parts):
            raise SystemExit("bench: bad variant %r (label:cc[:profile])"
                             % spec)
        self.cc = parts[1] if len(parts) > 1 else parts[0]
        self.label = parts[0]
        self.profile = parts[2] if len(parts) > 2 else None


def jobs_for(variants, sweep, reps):
    """(variant, overrides, rep), repetition-major so that the first
    results cover every variant."""
    key, values = sweep if sweep else (None, [None])
    q = queue.Queue()
    for rep in range(reps):
        for val in values:
            for v in variants:
                q.put((v, {key: val} if key else {}, rep))
    return q


def attempt(base, over, v, rep, tag, lock):
    """One run; a self-check failure (the emulated machine was too busy
    to keep timing) is retried on a fresh topology, and counted."""
    sc = load_scenario(base, over)
    profile = load_profile(v.profile or sc.profile)
    for n in range(SELF_CHECK_ATTEMPTS):
        try:
            rec = one_run(sc, profile, v.cc, rep, tag="%s%d" % (tag, n),
                          setup_lock=lock)
            rec["selfcheck_retries"] = n
            return rec
        except SelfCheckError as e:
            print("bench: %s rep %d self-check failed (%s), retrying" %
                  (v.label, rep, e), flush=True)
            last = e
    raise last


def run_matrix(base, over, variants, sweep, reps, width, out, mode):
    jobs = jobs_for(variants, sweep, reps)
    lock, write = threading.Lock(), threading.Lock()
    errors = []

    def worker(wid):
        while True:
            try:
                v, extra, rep = jobs.get_nowait()
            except queue.Empty:
                return
            name = "%s rep %d %s" % (v.label, rep, extra or "")
            try:
                rec = attempt(base, {**over, **extra}, v, rep,
                              "%s%d-" % (mode[0], wid), lock)
            except Exception as e:       # report, keep the matrix going
                errors.append("%s: %s" % (name, e))
                print("bench: %s FAILED: %s" % (name, e), flush=True)
                continue
            rec.update(mode=mode, width=width, label=v.label,
                       sweep=extra)
            with write:
                append(out, rec)
            print("bench: %-8s %s goodput %7.0f bit/s retrans %s" %
                  (mode, name, rec["goodput_bps"], rec["retransmits"]),
                  flush=True)

    threads = [threading.Thread(target=worker, args=(w,))
               for w in range(width)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def main(argv=None):
    p = argparse.ArgumentParser(prog="satnet.bench", description=__doc__)
    p.add_argument("-s", "--scenario", default="geo")
    p.add_argument("--cc", default="reno,cubic,hybla,westwood,bbr",
                   help="algorithms, each its own variant")
    p.add_argument("--variant", action="append", default=[],
                   metavar="LABEL:CC[:PROFILE]", help="instead of --cc")
    p.add_argument("--sweep", metavar="KEY=V1,V2,...",
                   help="repeat the matrix for each value of a key")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VAL")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--width", type=int, default=5)
    p.add_argument("-t", "--duration", type=float)
    p.add_argument("--serial-control", metavar="CC",
                   help="repeat this variant alone, one run at a time")
    p.add_argument("-o", "--out", required=True)
    a = p.parse_args(argv)
    over = parse_set(a.set)
    if a.duration:
        over["run.duration_s"] = a.duration
    variants = [Variant(v) for v in a.variant] or \
        [Variant(cc) for cc in a.cc.split(",")]
    sweep = None
    if a.sweep:
        key, _, vals = a.sweep.partition("=")
        sweep = (key, [parse_set(["v=" + x])["v"] for x in vals.split(",")])
    load_scenario(a.scenario, over)      # fail early on bad input
    t0 = time.monotonic()
    errors = run_matrix(a.scenario, over, variants, sweep, a.reps, a.width,
                        a.out, "parallel")
    if a.serial_control:
        ctl = [v for v in variants if v.label == a.serial_control] or \
            [Variant(a.serial_control)]
        errors += run_matrix(a.scenario, over, ctl, sweep, a.reps, 1,
                             a.out, "serial")
    print("bench: %d runs failed; wall time %.0f s" %
          (len(errors), time.monotonic() - t0))
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
