# SPDX-License-Identifier: GPL-2.0
"""A matrix of runs (algorithms x repetitions), several topologies at once.

Each run has its own namespaces, so runs in parallel share only the VM's
CPUs; setup and self-check are serialised (design.md: setup saturates the
emulated CPU).  --serial-control repeats one algorithm alone, one run at a
time, so the report can show whether parallelism changed the results.
"""

import argparse
import queue
import sys
import threading
import time

from .cli import append, one_run
from .scenario import load_profile, load_scenario


def run_matrix(sc, profile, ccs, reps, width, out, mode):
    jobs = queue.Queue()
    for rep in range(reps):
        for cc in ccs:
            jobs.put((cc, rep))
    lock = threading.Lock()
    write = threading.Lock()
    errors = []

    def worker(wid):
        while True:
            try:
                cc, rep = jobs.get_nowait()
            except queue.Empty:
                return
            try:
                rec = one_run(sc, profile, cc, rep,
                              tag="%s%d-%d" % (mode[0], wid, rep),
                              setup_lock=lock)
            except Exception as e:       # report, keep the matrix going
                errors.append("%s rep %d: %s" % (cc, rep, e))
                print("bench: %s rep %d FAILED: %s" % (cc, rep, e),
                      flush=True)
                continue
            rec["mode"] = mode
            rec["width"] = width
            with write:
                append(out, rec)
            print("bench: %-8s %s rep %d goodput %7.0f bit/s retrans %s" %
                  (mode, cc, rep, rec["goodput_bps"], rec["retransmits"]),
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
    p.add_argument("--cc", default="reno,cubic,hybla,westwood,bbr")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--width", type=int, default=5)
    p.add_argument("-t", "--duration", type=float)
    p.add_argument("--serial-control", metavar="CC")
    p.add_argument("-o", "--out", required=True)
    a = p.parse_args(argv)
    over = {"run.duration_s": a.duration} if a.duration else {}
    sc = load_scenario(a.scenario, over)
    profile = load_profile(sc.profile)
    t0 = time.monotonic()
    errors = run_matrix(sc, profile, a.cc.split(","), a.reps, a.width,
                        a.out, "parallel")
    if a.serial_control:
        errors += run_matrix(sc, profile, [a.serial_control], a.reps, 1,
                             a.out, "serial")
    print("bench: %d runs failed; wall time %.0f s" %
          (len(errors), time.monotonic() - t0))
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
