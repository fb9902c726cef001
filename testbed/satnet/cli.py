# SPDX-License-Identifier: GPL-2.0
"""satnet: reproduce the seeds' experiments on a real Linux kernel.

  satnet list                       experiments, scenarios, variants, profiles
  satnet run s000-fig2 --quick      run an experiment (boots the VM if needed)
  satnet report                     rebuild docs/results.md from results/
  satnet show RUN.json              one run, readable, with a cwnd plot
  satnet export -o runs.csv         every run as a table, for pandas
  satnet compare OLD/ NEW/          two results folders side by side
  satnet up geo --variant tcp-r     a path left up; satnet exec snd0 -- CMD;
                                    satnet down
  satnet ss                         ss -ti with our modules' state by name

`satnet COMMAND --help` describes each command; --help never runs
anything.  docs/experiments.md describes the files.
"""

import argparse
import contextlib
import fcntl
import glob
import hashlib
import itertools
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

from . import experiment as xp
from .paths import (EXPERIMENT_DIR, MODULES, PROFILE_DIR, RESULTS_DIR,
                    SCENARIO_DIR, TC_PLUGIN, TESTBED, TOP, VM_RUN)
from .stats import MIN_RUNS

DEFAULT_MD = os.path.join(TOP, "docs", "results.md")
MODULE_FILES = tuple(MODULES.values()) + (TC_PLUGIN,)


def fail(msg):
    print("satnet: " + msg, file=sys.stderr)
    sys.exit(2)


def count(least):
    """An argparse type: an integer no smaller than @least."""
    def parse(text):
        try:
            n = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError("%r is not a whole number"
                                             % text)
        if n < least:
            raise argparse.ArgumentTypeError("must be at least %d, not %d"
                                             % (least, n))
        return n
    return parse


def seconds(text):
    """An argparse type: a positive, finite number of seconds."""
    try:
        s = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not a number" % text)
    if not 0 < s < float("inf"):
        raise argparse.ArgumentTypeError("must be above 0, not %s" % text)
    return s


def percent(text):
    """An argparse type: a percentage above 0 and at most 50 (a
    self-check that let through more would not check the path)."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not a number" % text)
    if not 0 < v <= 50:
        raise argparse.ArgumentTypeError("must be above 0 and at most 50, "
                                         "not %s" % text)
    return v


def inside(path, top):
    """True when @path is @top or lies under it."""
    path, top = os.path.realpath(path), os.path.realpath(top)
    return os.path.commonpath([path, top]) == top


def writable_dir(path):
    """Fail unless @path is (or can be made) a folder we can write."""
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        fail("cannot create %s: %s" % (path, e.strerror))
    if not os.access(path, os.W_OK | os.X_OK):
        fail("%s is not writable" % path)


# ---- list -----------------------------------------------------------------

def _first_line(text):
    return " ".join((text or "").split())[:100]


def cmd_list(a):
    import tomllib
    from .scenario import load_profile
    kinds = ["experiments", "scenarios", "variants", "profiles"]
    bad = [w for w in a.what if w not in kinds]
    if bad:
        fail("list: unknown kind %s (one of %s)" % (bad[0], ", ".join(kinds)))
    what = a.what or kinds
    if "experiments" in what:
        print("experiments (satnet run NAME):")
        for e in xp.load_all():
            quick = "quick" if "quick" in e.modes else "full only"
            print("  %-16s %-30s %s [%s]" % (e.name, e.source[:30],
                                             _first_line(e.title), quick))
    if "scenarios" in what:
        print("scenarios (testbed/scenarios/NAME.toml), each with the "
              "clock satnet run uses for it:")
        for p in sorted(glob.glob(os.path.join(SCENARIO_DIR, "*.toml"))):
            with open(p, "rb") as f:
                sc = tomllib.load(f)
            print("  %-16s %-7s %s" % (os.path.basename(p)[:-5],
                                       sc.get("run", {}).get("clock", "real"),
                                       _first_line(sc.get("source", ""))))
    if "variants" in what:
        print("variants (testbed/variants.toml):")
        for v in xp.load_variants().values():
            print("  %-16s cc %-8s %s" % (v.name, v.cc,
                                          _first_line(v.description)))
    if "profiles" in what:
        print("profiles (testbed/profiles/NAME.toml):")
        for p in sorted(glob.glob(os.path.join(PROFILE_DIR, "*.toml"))):
            name = os.path.basename(p)[:-5]
            print("  %-16s %s" % (name, _first_line(
                load_profile(name).description)))


# ---- run ------------------------------------------------------------------

def selected_points(a):
    """The points the arguments name.  Records go to the mode's folder
    (quick or full); a run with another --duration is not that mode's
    point and goes to "point"."""
    mode = "full" if a.full or a.claims else "quick"
    names = a.experiment or [e.name for e in xp.load_all()
                             if mode == "full" or "quick" in e.modes]
    variants = xp.load_variants()
    if a.claims:
        return claim_points(a, names, variants)
    points = []
    for name in names:
        exp = xp.load_experiment(name, variants)
        point, vs = xp.parse_point(a.point, exp)
        m = mode if mode in exp.modes else "full"
        pts = exp.points(m, a.reps, vs or None, a.duration,
                         every=bool(point))
        if point:
            pts = [p for p in pts if all(p.point.get(k) in vals
                                         for k, vals in point.items())]
        if a.rep is not None:
            pts = [p for p in pts if p.rep == a.rep]
        if a.duration and a.duration != exp.modes[m]["duration_s"]:
            for p in pts:
                p.mode = "point"
        points += pts
    if not points:
        raise xp.ExperimentError("no point matches %s" % " ".join(
            ["--point " + p for p in a.point] +
            (["--rep %d" % a.rep] if a.rep is not None else [])))
    return points


def claim_points(a, names, variants):
    """--claims: the full-length points of every cell the claims of the
    experiments @names compare (Experiment.claim_cells()), those of
    another experiment a claim reads included, and the cells of @names
    that the claims of the experiments beside them read; each once."""
    if a.point:
        raise xp.ExperimentError("--claims chooses the points: no --point")
    cells, exps = set(), {}
    for name in names:
        exp = xp.load_experiment(name, variants)
        exps[exp.name] = exp
        cells |= exp.claim_cells()
    cells |= read_by_others(exps, variants)
    if not cells:
        raise xp.ExperimentError("no claim in %s, nor one beside it that "
                                 "reads it" % ", ".join(exps))
    for name in sorted({c[0] for c in cells} - set(exps)):
        # beside the experiment whose claim reads it (check_refs)
        home = next(e for e in exps.values() if any(
            c[0] == name for c in e.claim_cells()))
        exps[name] = xp.load_experiment(os.path.join(
            os.path.dirname(home.path), name + ".toml"), variants)
    # a mix runs all its flows, and its mice, in one point
    cells = {(n, "mix" if exps[n].mix else v, k) for n, v, k in cells}
    points = []
    for name, exp in exps.items():
        full = exp.modes["full"]["duration_s"]
        for p in exp.points("full", a.reps, None, a.duration, every=True):
            if (name, p.variant, p.key()) not in cells or \
                    a.rep is not None and p.rep != a.rep:
                continue
            if a.duration and a.duration != full:
                p.mode = "point"
            points.append(p)
    return points


def read_by_others(exps, variants):
    """The cells of the experiments @exps that the claims of the others
    in their folders compare (a baseline run that only a claim of
    another experiment reads, as s001-fig23-sack's)."""
    cells = set()
    for folder in sorted({os.path.dirname(e.path) for e in exps.values()}):
        for other in xp.load_all(variants, folder):
            if other.name not in exps:
                cells |= {c for c in other.claim_cells() if c[0] in exps}
    return cells


def alone(p):
    """A point of the width check's alone arm."""
    m = xp.CHECK_MODE.match(p.mode)
    return bool(m and m.group(2) == "alone")


def interleave(xs, ys):
    """@xs and @ys merged so that each is spread evenly over the whole:
    item i of a list of n sits at (i + 0.5) / n; @xs first on a tie."""
    pos = [((i + 0.5) / len(xs), 0, x) for i, x in enumerate(xs)] + \
        [((i + 0.5) / len(ys), 1, y) for i, y in enumerate(ys)]
    return [x for _, _, x in sorted(pos, key=lambda t: t[:2])]


def width_check_blocks(a, points):
    """--width-check EXP:VARIANT: that variant's cells (sweep values) of
    this run again in two arms, alone (width 1) and --width at once, as
    blocks run one after another: each alone run is a block, each batch
    of --width runs side by side is one, and the two arms alternate
    evenly in time so that a drift of the host affects both alike.  Each
    arm has at least stats.MIN_RUNS reps a cell, which a verdict needs,
    and the side-by-side arm whole batches."""
    if not a.width_check:
        return []
    name, _, variant = a.width_check.partition(":")
    width = a.width
    cells = {}
    for p in points:
        if p.exp.name == name and p.variant == variant:
            cells.setdefault(p.key(), []).append(p)
    if not cells:
        fail("--width-check %s matches no point of this run" %
             a.width_check)
    alone_runs, batches = [], []
    for ps in cells.values():
        p = ps[0]
        reps = more(sorted(q.rep for q in ps), MIN_RUNS - len(ps))
        alone_runs += [[xp.Point(p.exp, "check%d-alone" % width, variant,
                                 p.point, r, p.duration)] for r in reps]
        reps = more(reps, -len(reps) % width)
        beside = [xp.Point(p.exp, "check%d-beside" % width, variant,
                           p.point, r, p.duration) for r in reps]
        batches += [beside[i:i + width] for i in range(0, len(beside),
                                                         width)]
    return interleave(alone_runs, batches)


def more(reps, n):
    """@reps and @n reps after its last."""
    return reps + list(range(reps[-1] + 1, reps[-1] + 1 + max(0, n)))


def check_width_check(a):
    """The arguments a width check cannot run with."""
    if a.serial_control:
        fail("--serial-control is now --width-check %s, which runs the "
             "two arms interleaved and judges them" % a.serial_control)
    if not a.width_check:
        return
    name, sep, variant = a.width_check.partition(":")
    if not (name and sep and variant):
        fail("--width-check %s: give EXPERIMENT:VARIANT" % a.width_check)
    if variant == "mix":
        fail("--width-check: a mix always runs alone; name a variant")
    if a.width < 2:
        fail("--width-check compares width 1 with --width, which is %d: "
             "give --width 2 or more" % a.width)
    if a.emit_jobs:
        fail("--width-check runs its two arms interleaved in one kernel; "
             "--emit-jobs cannot spread that over independent jobs")


def check_built():
    missing = [f for f in MODULE_FILES
               if not os.path.exists(os.path.join(TOP, f))]
    if missing:
        fail("not built: %s; run `make` in %s first" %
             (", ".join(missing), TOP))


# The estimate counts guest seconds; how many wall seconds they take on
# the virtual clock depends on the path's packet rate and the host's load.
VIRTUAL_PACE = (" (virtual minutes: on a quiet host they pass faster than "
                "wall minutes, on a busy one slower; docs/testbed.md, "
                "\"What sets the virtual clock's pace\")")


def estimate_s(points, width):
    together = sum(p.duration + 50 for p in points
                   if p.variant != "mix" and not alone(p))
    by_itself = sum(p.duration + 50 for p in points
                    if p.variant != "mix" and alone(p))
    mixes = sum(p.duration * 1.5 + 120 for p in points if p.variant == "mix")
    return together / max(1, width) + by_itself + mixes


def guest_count(a):
    """--guests, else one guest per host core on the virtual clock (a
    guest there has one vCPU: SMP guests hang under icount), one guest
    on the real clock (it has two vCPUs)."""
    if a.guests is not None:
        return a.guests
    return os.cpu_count() or 1 if a.clock == "virtual" else 1


def check_guests(a):
    """--guests boots VMs; the options that boot none refuse it."""
    if a.guests is None:
        return
    if a.native:
        fail("run: --guests boots VMs, --native boots none")
    if a.emit_jobs:
        fail("run: --emit-jobs runs nothing; spread its commands with GNU "
             "parallel or Slurm, not --guests")


def split(todo, n, width):
    """@todo over @n guests, as n lists in @todo's order: every point
    once.  A job is a point, or the width check's points together (its
    arms share one kernel and one time line); the longest job (by
    estimate_s) goes first to the guest with the least work, the lower
    guest on a tie, so the split depends on nothing but its arguments."""
    check = [p for p in todo if xp.CHECK_MODE.match(p.mode)]
    jobs = [[p] for p in todo if not xp.CHECK_MODE.match(p.mode)] + \
        ([check] if check else [])
    cost = [estimate_s(j, width) for j in jobs]
    load, owner = [0.0] * n, {}
    for i in sorted(range(len(jobs)), key=lambda i: -cost[i]):
        g = min(range(n), key=lambda g: (load[g], g))
        load[g] += cost[i]
        owner.update((id(p), g) for p in jobs[i])
    return [[p for p in todo if owner[id(p)] == g] for g in range(n)]


def queues(shares, check=()):
    """What each guest is given, from split()'s @shares: its own share
    first, then, to take over once its own are done, the other guests'
    shares from their ends (where their owners reach last), round the
    guests in turn.  The width check's points (@check) stay with their
    owner: their arms share one kernel."""
    out, fixed = [], {id(p) for p in check}
    for g, own in enumerate(shares):
        others = [[p for p in reversed(shares[(g + k) % len(shares)])
                   if id(p) not in fixed] for k in range(1, len(shares))]
        rest = [o[i] for i in range(max(map(len, others), default=0))
                for o in others if i < len(o)]
        out.append(own + rest)
    return out


def claimer(folder):
    """A claim on a point among guests that share @folder: True for the
    one guest whose exclusive create of the point's file succeeds (an
    atomic open on the host's file system, also through 9p)."""
    def claim(p):
        name = hashlib.sha1(p.relpath().encode()).hexdigest()
        try:
            os.close(os.open(os.path.join(folder, name),
                             os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return False
        return True
    return claim


def read_only(path, todo):
    """The points of @todo that the file @path (--only) names, one
    record path a line, in the file's order: what the host gave this
    guest."""
    try:
        with open(path) as f:
            want = [ln for ln in f.read().split("\n") if ln]
    except OSError as e:
        fail("--only %s: %s" % (path, e.strerror))
    by = {p.relpath(): p for p in todo}
    return [by[r] for r in dict.fromkeys(want) if r in by]


def cmd_run(a):
    from .runner import stored
    check_guests(a)
    check_width_check(a)
    try:
        points = selected_points(a)
    except (xp.ExperimentError, ValueError) as e:
        fail(str(e))
    blocks = width_check_blocks(a, points)
    points += [p for b in blocks for p in b]
    todo = [p for p in points if not stored(p, a.results, a.reuse_stale)]
    left = len(todo)
    if a.only:
        todo = read_only(a.only, todo)
    if a.emit_jobs:
        return emit_jobs(todo, a)
    if a.clock == "virtual" and a.native:
        fail("run: --clock virtual needs the VM, not --native")
    # The guest side (--here) and --native run in this one kernel.
    here = a.here or a.native
    groups = [(a.clock, todo)] if here else clock_groups(a, todo)
    runs = []
    for clock, pts in groups:
        ga = argparse.Namespace(**{**vars(a), "clock": clock})
        n = 1 if here else guest_count(ga)
        runs.append((ga, [s for s in split(pts, n, a.width) if s] or [[]]))
    print("satnet: %d points, %d stored, %d to run%s, about %.0f min at "
          "width %d%s%s" % (len(points), len(points) - left, left,
                            ", %s%d of them here" % (
                                "up to " if a.claim_dir else "", len(todo))
                            if a.only else "",
                            sum(max(estimate_s(s, a.width) for s in shares)
                                for _, shares in runs) / 60,
                            a.width, "" if here else ", then".join(
                                on_guests(ga, shares, len(runs) > 1)
                                for ga, shares in runs),
                            VIRTUAL_PACE if any(ga.clock == "virtual"
                                                for ga, _ in runs) else ""),
          file=sys.stderr)
    if a.dry_run:
        for p in todo:
            print(p.relpath())
        return 0
    if not todo:
        return 0
    writable_dir(a.results)
    check_built()
    if not here and not inside(a.results, TOP):
        fail("run: --results %s is outside %s, the only folder the VM can "
             "write; choose a folder inside it, or --native" %
             (a.results, TOP))
    if here:
        return run_here(a, todo, blocks)
    check = [p for b in blocks for p in b]
    rc = max(in_vm(ga, shares, check) for ga, shares in runs)
    if blocks:
        print_width_check(a, blocks[0][0].exp)
    return rc


def clock_groups(a, todo):
    """@todo by the clock it runs on, the virtual clock's first: --clock
    for every point, else each point's path's (run.clock in its
    scenario).  [(clock, points)], in @todo's order within each."""
    if a.clock:
        return [(a.clock, todo)]
    by = {}
    for p in todo:
        by.setdefault(p.clock(), []).append(p)
    return sorted(by.items(), key=lambda kv: kv[0] != "virtual") or \
        [("real", [])]


def on_guests(a, shares, count):
    """What the run's summary line says of one clock's guests (and, when
    @count, of its points)."""
    return " on the %s clock%s%s" % (
        a.clock, " (%d points)" % sum(map(len, shares)) if count else "",
        ", %d guests at once" % len(shares) if len(shares) > 1 else "")


def run_here(a, todo, blocks=()):
    """@todo in this kernel: the run's points --width at once, then the
    width check's @blocks one after another (each alone run by itself,
    each batch of the side-by-side arm at once)."""
    from tqdm import tqdm

    from .runner import Runner
    pending = {id(p) for p in todo}
    checked = {id(p) for b in blocks for p in b}
    t0 = time.monotonic()
    with tqdm(total=len(todo), unit="point", file=sys.stderr,
              dynamic_ncols=True, mininterval=5) as bar:
        runner = Runner(a.width, a.results, bar, log=bar.write,
                        reuse_stale=a.reuse_stale,
                        rtt_tolerance=a.rtt_tolerance / 100,
                        claim=claimer(a.claim_dir) if a.claim_dir else None)
        runner.run([p for p in todo if id(p) not in checked])
        for block in blocks:
            run = [p for p in block if id(p) in pending]
            if run:
                # meta.width: how many ran at once, also in a batch left
                # part done by an interrupted run
                runner.width = len(run)
                runner.run(run)
    print("satnet: %d points in %.0f s, %d failed%s" %
          (runner.ran, time.monotonic() - t0, len(runner.errors),
           ", %d run by other guests" % (len(todo) - runner.ran)
           if a.claim_dir else ""), file=sys.stderr)
    for e in runner.errors:
        print("  " + e, file=sys.stderr)
    return 1 if runner.errors else 0


def print_width_check(a, exp):
    """The width check's verdicts, from the records now stored."""
    from . import record, report
    recs = record.load_all(a.results, experiments=[exp.name],
                           warn=lambda m: print(m, file=sys.stderr))
    try:
        lines = report.width_check({exp.name: report.Results(exp, recs)})
    except ImportError as e:             # the run itself is done
        lines = ["satnet: no verdict here (%s); satnet report judges the "
                 "width check where scipy is installed" % e]
    print("\n".join(lines), file=sys.stderr)


def console_logs(n, stack):
    """The console logs of @n guests, under a lock that @stack releases:
    a second `satnet run` in this checkout while one runs writes logs of
    its own (satnet-console-run2-I.log) instead of truncating the
    first's, which its fault check reads."""
    build = os.path.join(TOP, "build")
    os.makedirs(build, exist_ok=True)
    for k in itertools.count(1):
        tag = "-run%d" % k if k > 1 else ""
        lock = open(os.path.join(build, "satnet-console%s.lock" % tag), "w")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.close()
            continue
        stack.callback(lock.close)
        return [os.path.join(build, "satnet-console%s%s.log" %
                             (tag, "-%d" % (i + 1) if n > 1 else ""))
                for i in range(n)]


def guest_timeout(a, share):
    """Seconds a guest may take for @share: twice the estimate and 15
    minutes more.  On the virtual clock they are guest seconds, and a
    guest waiting on the host (9p) while the host is busy sees its clock
    race from timer to timer (docs/testbed.md): a start seen taking 400
    guest seconds there, hence 30 more minutes.  A hung guest that idles
    reaches any limit there at once."""
    extra = 900 + (1800 if a.clock == "virtual" else 0)
    return int(estimate_s(share, a.width) * 2 + extra)


def guest_command(a, only, log, timeout, vm):
    """tools/vm-run running this command on the points of the file @only
    inside a kernel that loads our modules (natively where this one can,
    unless @vm).  The guest runs this checkout's package, whatever an
    installed `satnet` command points at."""
    argv = ["env", "PYTHONPATH=" + TESTBED, "python3", "-m", "satnet.cli"] + \
        a.argv + ["--only", only, "--here"]
    cmd = [sys.executable, VM_RUN, "--timeout", str(timeout), "--log", log]
    if a.clock == "virtual":
        cmd += ["--clock", "virtual"]
    elif a.vm or vm:
        cmd.append("--vm")
    elif a.native:
        cmd.append("--native")
    return cmd + ["--"] + argv


def in_vm(a, shares, check=()):
    """Each share of the points in a guest of its own, all at once.
    Several guests are always VMs: module parameters are global to a
    kernel, so two runs in one would need one ParamGate.  A guest done
    with its share takes over the points the others have not begun
    (queues(), each point claimed once), so that no guest idles while
    another has work: a point's guest seconds are its estimate, but its
    wall seconds grow with its packet rate.  The status is nonzero when
    any guest failed."""
    run_dir = tempfile.mkdtemp(prefix="satnet-run-",
                               dir=os.path.join(TOP, "build"))
    n, procs = len(shares), []
    claims = os.path.join(run_dir, "claimed")
    os.mkdir(claims)
    with exit_on_term(), contextlib.ExitStack() as cleanup:
        cleanup.callback(shutil.rmtree, run_dir, ignore_errors=True)
        cleanup.callback(stop_guests, procs)
        logs = console_logs(n, cleanup)
        for i, (share, queue) in enumerate(zip(shares,
                                               queues(shares, check))):
            only = os.path.join(run_dir, "guest-%d.points" % (i + 1))
            with open(only, "w") as f:
                f.write("".join(p.relpath() + "\n" for p in queue))
            # a guest may end up running all of them
            cmd = guest_command(a, only, logs[i],
                                guest_timeout(a, queue), vm=n > 1)
            if n > 1:
                cmd += ["--claim-dir", claims]
            if n == 1:
                procs.append((subprocess.Popen(cmd), None))
                return procs[0][0].wait()
            print("satnet: guest %d/%d: %d points, about %.0f min, console "
                  "%s" % (i + 1, n, len(share),
                          estimate_s(share, a.width) / 60,
                          os.path.relpath(logs[i])),
                  file=sys.stderr)
            procs.append(guest(cmd, "guest %d/%d: " % (i + 1, n)))
        rcs = [(p.wait(), t.join())[0] for p, t in procs]
    for i, ((p, _), rc) in enumerate(zip(procs, rcs)):
        print("satnet: guest %d/%d: %s in %.0f s" % (
            i + 1, n, "done" if rc == 0 else
            "FAILED (status %d, console %s)" %
            (rc, os.path.relpath(logs[i])),
            getattr(p, "wall_s", 0)), file=sys.stderr)
    return 1 if any(rcs) else 0


@contextlib.contextmanager
def exit_on_term():
    """SIGTERM and SIGHUP end a run as Ctrl-C does, through its cleanup,
    so that no guest outlives it (a `kill` of satnet alone reaches no
    child); once one has come, further ones are ignored until the
    cleanup is done."""
    sigs = (signal.SIGTERM, signal.SIGHUP)

    def leave(signum, _frame):
        for s in sigs:
            signal.signal(s, signal.SIG_IGN)
        raise SystemExit(128 + signum)

    old = {s: signal.signal(s, leave) for s in sigs}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def stop_guests(procs, grace_s=60):
    """Stop the guests of @procs still running: SIGTERM, which vm-run
    passes on to its VM, then SIGKILL after @grace_s."""
    live = [p for p, _ in procs if p.poll() is None]
    for p in live:
        p.terminate()
    for p in live:
        try:
            p.wait(grace_s)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def guest(cmd, prefix):
    """Start @cmd with its output copied to stderr line by line, each
    line (and each progress bar frame) after @prefix."""
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    t0 = time.monotonic()

    def copy():
        buf = b""
        while True:
            chunk = proc.stdout.read1(65536)
            if not chunk:
                break
            *lines, buf = re.split(rb"[\r\n]", buf + chunk)
            for ln in lines:
                if ln.strip():
                    sys.stderr.write(prefix + ln.decode(errors="replace")
                                     + "\n")
            sys.stderr.flush()
        if buf.strip():
            sys.stderr.write(prefix + buf.decode(errors="replace") + "\n")
        proc.wall_s = time.monotonic() - t0

    t = threading.Thread(target=copy, daemon=True)
    t.start()
    return proc, t


def emit_jobs(todo, a):
    """One command per point; each writes its own record file, so GNU
    parallel or a Slurm array can run them anywhere that shares (or later
    copies back) results/."""
    for p in todo:
        args = ["satnet", "run", p.exp.name, "--reps", str(p.rep + 1),
                "--rep", str(p.rep), "--point", "variant=" + p.variant]
        if p.mode == "point":
            args += ["--duration", "%g" % p.duration]
        if p.mode == "full":
            args.append("--full")
        if p.point:
            args += ["--point", "%s=%s" % next(iter(p.point.items()))]
        if a.results != RESULTS_DIR:
            args += ["--results", a.results]
        if a.reuse_stale:
            args.append("--reuse-stale")
        if a.clock:
            args += ["--clock", a.clock]
        if p.variant == "mix":
            args += ["--width", "1"]
        print(" ".join(shlex.quote(x) for x in args))
    return 0


# ---- report, show, ss -----------------------------------------------------

def cmd_report(a):
    from .report import build
    try:
        for n in a.experiment:
            xp.load_experiment(os.path.join(a.experiments, n + ".toml"))
    except xp.ExperimentError as e:
        fail(str(e))
    if a.experiment and a.md is None:
        fail("report: a page of some experiments would replace %s, which "
             "covers all of them; give --md PATH for it" %
             DEFAULT_MD)
    if not os.path.isdir(a.results):
        fail("report: no results folder %s" % a.results)
    try:
        md = build(a.experiment or None, md=a.md or DEFAULT_MD,
                   results=a.results, command=a.command,
                   warn=lambda m: print(m, file=sys.stderr),
                   experiments=a.experiments)
    except OSError as e:
        fail("report: cannot write %s: %s" % (e.filename, e.strerror))
    print("satnet: wrote %s" % os.path.relpath(md))
    return 0


def cmd_show(a):
    from .show import FORMATS, show
    if a.png:
        ext = os.path.splitext(a.png)[1].lstrip(".").lower()
        if ext not in FORMATS:
            fail("show: --png %s: the name must end in one of .%s" %
                 (a.png, ", .".join(FORMATS)))
        folder = os.path.dirname(os.path.abspath(a.png))
        if not os.path.isdir(folder):
            fail("show: --png %s: no folder %s" % (a.png, folder))
    return show(a.run, a.png)


def _testbed_call(fn, *args):
    from .testbed import TestbedError
    from .host import TopologyError
    if os.geteuid() != 0:
        fail("%s needs root (namespaces, netem, modules); in this "
             "project's VM: tools/vm-run --shell" % fn.__name__)
    try:
        return fn(*args)
    except (TestbedError, TopologyError) as e:
        fail(str(e))


def cmd_up(a):
    from . import testbed
    st = _testbed_call(testbed.up, a.scenario, a.variant)
    print("satnet: %s is up%s; base RTT %g ms, bottleneck %g Mbit/s" %
          (st["scenario"], ", senders on %s" % st["cc"] if st["cc"] else "",
           st["base_rtt_ms"], st["rate_bps"] / 1e6))
    for node, ns in st["nodes"].items():
        print("  %-5s %-14s %s" % (node, ns, st["addresses"].get(node, "")))
    print("satnet exec NODE -- CMD runs a command there; satnet down ends "
          "it.")
    return 0


def cmd_exec(a):
    from . import testbed
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not cmd:
        fail("exec: no command (satnet exec NODE -- CMD)")
    from .host import tc_env
    argv = _testbed_call(testbed.exec_argv, a.node, cmd)
    os.execvpe(argv[0], argv, tc_env())   # tc finds the epdn plugin


def cmd_down(a):
    from . import testbed
    n = _testbed_call(testbed.down)
    print("satnet: %d namespaces removed" % n)
    return 0


def cmd_compare(a):
    from .experiment import METRICS
    from .report import compare
    for d in (a.a, a.b):
        if not os.path.isdir(d):
            fail("compare: no results folder %s" % d)
    if a.metric not in METRICS:
        fail("compare: unknown metric %s (one of %s)" %
             (a.metric, ", ".join(METRICS)))
    lines = compare(a.a, a.b, a.metric,
                    warn=lambda m: print(m, file=sys.stderr))
    print("%s: A = %s, B = %s\n" % (a.metric, a.a, a.b))
    print("\n".join(lines))
    return 0


def cmd_export(a):
    import csv
    import json
    from . import record
    if not os.path.isdir(a.results):
        fail("export: no results folder %s" % a.results)
    recs = record.load_all(a.results, experiments=a.experiment or None,
                           warn=lambda m: print(m, file=sys.stderr))
    counters = list(dict.fromkeys(a.counter))
    for c in counters:
        if not any(record.has_counter(r, c) for r in recs):
            fail("export: no run counts %s (`satnet show RUN.json` lists a "
                 "run's counters)" % c)
    rows = record.rows(recs, counters=counters)
    try:
        out = open(a.output, "w", newline="") if a.output else sys.stdout
    except OSError as e:
        fail("export: cannot write %s: %s" % (a.output, e.strerror))
    with out if a.output else contextlib.nullcontext(out):
        if a.format == "json":
            json.dump(rows, out, indent=1)
            out.write("\n")
        else:
            w = csv.DictWriter(out, fieldnames=record.EXPORT_FIELDS +
                               tuple(counters))
            w.writeheader()
            w.writerows(rows)
    if a.output:
        print("satnet: wrote %d rows to %s" % (len(rows), a.output),
              file=sys.stderr)
    return 0


def cmd_ss(a):
    from .ssdecode import format_ss
    if a.file == "-":
        text = sys.stdin.read()
    elif a.file:
        try:
            with open(a.file) as f:
                text = f.read()
        except OSError as e:
            fail("ss: %s: %s" % (a.file, e.strerror))
    else:
        r = subprocess.run(["ss", "-tinH"] + a.filter, capture_output=True,
                           text=True)
        if r.returncode:
            fail("ss: " + r.stderr.strip())
        text = r.stdout
    sys.stdout.write(format_ss(text))
    return 0


# ---- the parser -----------------------------------------------------------

def parser():
    p = argparse.ArgumentParser(
        prog="satnet", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version="%(prog)s " +
                   version(), help="print the version and exit")
    sub = p.add_subparsers(dest="cmd", metavar="COMMAND", required=True)

    ls = sub.add_parser("list", help="experiments, scenarios, variants, "
                        "profiles, one line each",
                        description="List what can be run.")
    ls.add_argument("what", nargs="*", metavar="KIND",
                    help="only these: experiments, scenarios, variants, "
                    "profiles (default: all)")
    ls.set_defaults(fn=cmd_list)

    r = sub.add_parser(
        "run", help="run experiments, or one point of one",
        description="Run experiments (default: every experiment with a "
        "quick set).  Points already stored under the results folder are "
        "not run again, so an interrupted run resumes.  Where this kernel "
        "cannot load the project's modules, the run happens in a VM "
        "(tools/vm-run) with the same files.")
    r.add_argument("experiment", nargs="*",
                   help="experiment names (satnet list experiments)")
    m = r.add_mutually_exclusive_group()
    m.add_argument("--quick", action="store_true",
                   help="the experiments' quick sets (the default)")
    m.add_argument("--full", action="store_true",
                   help="every sweep value, variant and rep")
    m.add_argument("--claims", action="store_true",
                   help="the full length, only the points the "
                   "experiments' claims compare (a claim's variants at "
                   "its sweep points, and the points of these "
                   "experiments other claims read): what the report's "
                   "verdicts need")
    r.add_argument("--point", action="append", default=[],
                   metavar="K=V", help="only the sweep value K=V, and/or "
                   "variant=NAME (repeatable: a point matches any value "
                   "given for the key, and any variant given)")
    r.add_argument("--reps", type=count(1), help="repetitions (default: the "
                   "experiment's for the mode)")
    r.add_argument("--rep", type=count(0), help="only repetition N (0-based)")
    r.add_argument("--duration", type=seconds, metavar="S",
                   help="seconds per run (default: the experiment's)")
    r.add_argument("--width", type=count(1), default=3, help="points run at "
                   "once, each in its own namespaces (default 3)")
    r.add_argument("--width-check", metavar="EXP:VARIANT",
                   help="run that variant's points of this run again, "
                   "alone and --width at once, the two interleaved in "
                   "time; the report judges whether the width changed "
                   "the results (same, differs or inconclusive)")
    r.add_argument("--serial-control", help=argparse.SUPPRESS)
    r.add_argument("--guests", type=count(1), metavar="N",
                   help="VMs booted at once, each running its share of "
                   "the points, --width at a time (default: one per host "
                   "core with --clock virtual, whose guests have one "
                   "vCPU; 1 on the real clock)")
    r.add_argument("--results", default=RESULTS_DIR,
                   help="folder of run records (default %(default)s)")
    r.add_argument("--reuse-stale", action="store_true",
                   help="count a stored point as done even when other "
                   "builds of the project's modules made it (by default "
                   "it is run again)")
    r.add_argument("--emit-jobs", action="store_true", help="print one "
                   "`satnet run` command per point still to run, for GNU "
                   "parallel or a Slurm array, and run nothing")
    r.add_argument("--dry-run", action="store_true",
                   help="print the records that would be written")
    w = r.add_mutually_exclusive_group()
    w.add_argument("--vm", action="store_true",
                   help="always boot the VM, even where this kernel would do")
    w.add_argument("--native", action="store_true",
                   help="never boot the VM (needs root, netem and modules)")
    r.add_argument("--clock", choices=("real", "virtual"),
                   help="the VM's clock (tools/vm-run --clock): real, or "
                   "QEMU's instruction-counted virtual clock, one vCPU a "
                   "guest (default: each path's run.clock, virtual where "
                   "the clock check showed its family measures the same "
                   "as on the real clock, real elsewhere; docs/testbed.md)")
    r.add_argument("--rtt-tolerance", type=percent, default=2.0,
                   metavar="PCT", help="how far the idle RTT of a point's "
                   "self-check may be from the path's, in percent "
                   "(default 2; on the real clock of an emulated guest "
                   "up to 4 ms more above it, which the emulation adds: "
                   "docs/testbed.md); kept in the record's selfcheck")
    r.add_argument("--here", action="store_true", help=argparse.SUPPRESS)
    r.add_argument("--only", help=argparse.SUPPRESS)
    r.add_argument("--claim-dir", help=argparse.SUPPRESS)
    r.set_defaults(fn=cmd_run)

    rp = sub.add_parser(
        "report", help="rebuild tables, plots and docs/results.md from "
        "stored records", description="Rebuild the report from the run "
        "records; nothing is run.")
    rp.add_argument("experiment", nargs="*", help="only these experiments")
    rp.add_argument("--results", default=RESULTS_DIR,
                    help="folder of run records (default %(default)s)")
    rp.add_argument("--md", default=None,
                    help="the page to write (default docs/results.md, "
                    "which covers every experiment, so it cannot be given "
                    "with experiment names); plots and CSVs go to the "
                    "folder beside it named results/")
    rp.add_argument("--experiments", default=EXPERIMENT_DIR,
                    help="folder of experiment files (default "
                    "%(default)s)")
    rp.add_argument("--command", help="the command named in the page "
                    "(default: satnet report)")
    rp.set_defaults(fn=cmd_report)

    sh = sub.add_parser("show", help="one run's record, readable",
                        description="Print one run's record: what ran, "
                        "the self-check, per-flow results, counters; "
                        "--png draws its cwnd and ssthresh.")
    sh.add_argument("run", help="a record file (results/EXP/MODE/VARIANT/"
                    "POINT-repN.json)")
    sh.add_argument("--png", help="write the cwnd/ssthresh plot here "
                    "(.png, .svg or .pdf)")
    sh.set_defaults(fn=cmd_show)

    ex = sub.add_parser("export", help="every run as one row per variant, "
                        "CSV or JSON, for pandas",
                        description="Write the stored runs as a table: one "
                        "row per variant of each run, with its metrics and "
                        "what made it (clock, kernel, commit, whether its "
                        "module builds are stale).  Nothing is run.")
    ex.add_argument("experiment", nargs="*", help="only these experiments")
    ex.add_argument("--results", default=RESULTS_DIR,
                    help="folder of run records (default %(default)s)")
    ex.add_argument("--format", choices=("csv", "json"), default="csv",
                    help="csv (default) or json (a list of objects)")
    ex.add_argument("-o", "--output", help="write here instead of stdout")
    ex.add_argument("--counter", action="append", default=[], metavar="NAME",
                    help="add a column: the counter's value per run, the "
                    "mean over the variant's flows, as a claim's `counters` "
                    "shows it (an nstat name such as TcpExtTCPTimeouts, or "
                    "a module's, such as rn_sender.timeouts; repeatable)")
    ex.set_defaults(fn=cmd_export)

    up = sub.add_parser("up", help="bring a scenario's path up and leave "
                        "it", description="Build a scenario's namespaces, "
                        "links, netem stages, bottleneck qdisc and sysctls "
                        "(as a run does) and leave them up; needs root and "
                        "a kernel with netem and the modules (in the VM: "
                        "tools/vm-run --shell).")
    up.add_argument("scenario", help="a scenario (satnet list scenarios)")
    up.add_argument("--variant", help="a variant: its congestion control "
                    "becomes the senders' default, with its profile, "
                    "module parameters and scenario overrides")
    up.set_defaults(fn=cmd_up)
    xc = sub.add_parser("exec", help="run a command in a node of the path "
                        "that is up", description="Run CMD in NODE (snd0, "
                        "rcv0, r1, r2, ...) of the path `satnet up` left.")
    xc.add_argument("node", help="snd0, rcv0, ..., r1 or r2")
    xc.add_argument("command", nargs=argparse.REMAINDER,
                    help="-- and the command, e.g. -- ss -ti")
    xc.set_defaults(fn=cmd_exec)
    dn = sub.add_parser("down", help="tear down the path that is up",
                        description="Remove every namespace `satnet up` "
                        "made, also after a crash.")
    dn.set_defaults(fn=cmd_down)

    cp = sub.add_parser("compare", help="two results folders (two commits) "
                        "side by side", description="For every experiment, "
                        "point and variant stored in both folders: the two "
                        "means, B / A with its 95 % CI (log scale), and "
                        "whether they are the same within the equivalence "
                        "margin (docs/experiments.md).  Nothing is run.")
    cp.add_argument("a", help="the first results folder (A)")
    cp.add_argument("b", help="the second results folder (B)")
    cp.add_argument("--metric", default="goodput", help="a per-variant "
                    "metric of the summary (default goodput)")
    cp.set_defaults(fn=cmd_compare)

    ss = sub.add_parser("ss", help="ss -ti with rn, r and esack state by "
                        "name", description="Run `ss -tinH` (or read its "
                        "output) and print our modules' state by name "
                        "instead of ss's dctcp:(...) label.")
    ss.add_argument("--file", help="read ss -tinH output from a file "
                    "('-': stdin) instead of running ss")
    ss.add_argument("filter", nargs="*", help="an ss filter, e.g. dst "
                    "10.2.0.1")
    ss.set_defaults(fn=cmd_ss)
    return p


def version():
    from importlib import metadata
    try:
        return metadata.version("satnet")
    except metadata.PackageNotFoundError:
        return "(not installed)"


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    a = parser().parse_args(argv)
    a.argv = argv
    try:
        rc = a.fn(a) or 0
        sys.stdout.flush()      # a closed pipe shows here, not at exit
    except KeyboardInterrupt:
        sys.exit(130)
    except BrokenPipeError:
        # The reader went away (satnet list | head): not an error of ours.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(0)
    sys.exit(rc)


if __name__ == "__main__":
    main()
