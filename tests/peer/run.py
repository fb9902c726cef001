#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Run scripted-peer scripts against the real kernel (tests/peer/README.md).

Each script runs in a network namespace of its own, once per address
family it names, after its modules are loaded and the sysctls of
defaults.sysctl and its own SYSCTL are set.  Prints PASS or FAIL per run,
and the timeline of each failure (of every run with -v).  Needs root and
a kernel that loads our modules: inside `tools/vm-run`, or natively.
"""

import argparse
import importlib.util
import os
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
# This checkout's satnet, and the tests' kit (packet.py takes csum there).
sys.path[:0] = [os.path.join(TOP, "testbed"), os.path.join(TOP, "tests")]
from satnet import kmod  # noqa: E402
from satnet.paths import ko  # noqa: E402

DEFAULTS = os.path.join(HERE, "defaults.sysctl")


def load_script(path):
    """A script's folder may hold a lib/ of steps its scripts share."""
    lib = os.path.join(os.path.dirname(os.path.abspath(path)), "lib")
    if os.path.isdir(lib) and lib not in sys.path:
        sys.path.insert(0, lib)
    name = "script_" + os.path.basename(path)[:-3]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    if not callable(getattr(mod, "run", None)):
        raise SystemExit("%s: no run(t) function" % path)
    return mod


def defaults():
    out = []
    with open(DEFAULTS) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                name, value = (x.strip() for x in line.split("=", 1))
                out.append((name, value))
    return out


def load_modules(names):
    if not os.path.exists("/sys/class/misc/tun"):   # built in, or loaded
        subprocess.run(["modprobe", "tun"], check=True)
    for name in names:
        try:
            kmod.insmod(ko(name), reload=False)
        except kmod.ModuleError as e:
            raise SystemExit(str(e)) from None


def child(path, family, cc_map):
    """Inside the new namespace: sysctls, then the script's timeline."""
    sys.path.insert(0, HERE)
    import peer

    mod = load_script(path)
    t = None
    try:
        for name, value in defaults() + list(getattr(mod, "SYSCTL",
                                                     {}).items()):
            with open("/proc/sys/" + name.replace(".", "/"), "w") as f:
                f.write("%s\n" % value)
        t = peer.Peer(family, cc_map)
        mod.run(t)
        status, why = 0, "ok"
    except peer.ScriptFailure as e:
        status, why = 1, str(e)
    except Exception:               # a bug in the script or the harness
        status, why = 2, traceback.format_exc().strip()
    if t is not None:
        for line in t.timeline:
            print(line)
        t.close()
    print("RESULT %d %s" % (status, why.replace("\n", "\n    ")))
    return status


def run_one(path, family, verbose, timeout, ccs):
    cmd = ["unshare", "--net", sys.executable, os.path.abspath(__file__),
           "--child", "--family", str(family), path]
    for old_new in ccs:
        cmd += ["--cc", old_new]
    start = time.monotonic()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True,
                           timeout=timeout)
        out, status = r.stdout + r.stderr, r.returncode
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) \
            else (e.stdout or "")
        out, status = out + "RESULT 3 timed out after %ds" % timeout, 3
    took = time.monotonic() - start
    lines = out.rstrip("\n").split("\n")
    result = [ln for ln in lines if ln.startswith("RESULT ")]
    why = result[-1].split(" ", 2)[2] if result else "no result"
    rel = os.path.relpath(path, TOP)
    word = "PASS" if status == 0 else "FAIL"
    print("%s %s (IPv%d, %.1fs)%s" % (word, rel, family, took,
                                      "" if status == 0 else ": " + why))
    if status or verbose:
        for ln in lines:
            if not ln.startswith("RESULT "):
                print("    " + ln)
    sys.stdout.flush()
    return status == 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="Scripts and their API: "
                                 "tests/peer/README.md")
    ap.add_argument("scripts", nargs="+", metavar="SCRIPT.py")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="print the timeline of passing runs too")
    ap.add_argument("-4", dest="only", action="store_const", const=4,
                    help="IPv4 runs only")
    ap.add_argument("-6", dest="only", action="store_const", const=6,
                    help="IPv6 runs only")
    ap.add_argument("--timeout", type=int, default=180,
                    help="seconds per run (default 180)")
    ap.add_argument("--cc", action="append", default=[], metavar="OLD=NEW",
                    help="connect and listen with congestion control NEW "
                    "where a script asks for OLD (esack=bpf_esack: the "
                    "BPF version, registered beforehand); repeatable")
    ap.add_argument("--no-modules", action="store_true",
                    help="load none of the scripts' MODULES (a kernel "
                    "that refuses unsigned modules, with --cc)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--family", type=int, default=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if any(x.count("=") != 1 for x in args.cc):
        ap.error("--cc takes OLD=NEW")
    if args.child:
        sys.exit(child(args.scripts[0], args.family,
                       dict(x.split("=") for x in args.cc)))
    if os.geteuid() != 0:
        sys.exit("run.py: needs root (namespaces, insmod); "
                 "try: tools/vm-run -- python3 tests/peer/run.py ...")
    ok = True
    for path in args.scripts:
        mod = load_script(path)
        load_modules([] if args.no_modules else getattr(mod, "MODULES", []))
        old = kmod.set_params(getattr(mod, "PARAMS", {}))
        try:
            for fam in getattr(mod, "FAMILIES", (4,)):
                if args.only in (None, fam):
                    ok &= run_one(path, fam, args.verbose, args.timeout,
                                  args.cc)
        finally:
            kmod.restore_params(old)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
