# SPDX-License-Identifier: GPL-2.0
"""Our kernel modules on the running kernel: loading them from a build
tree and unloading them.  The testbed (topo.modprobe), the tests and the
tools all load through here."""

import os
import subprocess
import time

from .paths import TOP

SYS_MODULE = "/sys/module/"


class ModuleError(RuntimeError):
    """A module that would not load or unload."""


def loaded(name):
    return os.path.isdir(SYS_MODULE + name)


def refcnt(name):
    """The module's reference count as the kernel shows it, "-" when it
    is not loaded."""
    try:
        with open(SYS_MODULE + name + "/refcnt") as f:
            return f.read().strip()
    except OSError:
        return "-"


def rmmod(name, wait=10.0, check=False):
    """Unload @name and the modules that depend on it (tcp_r holds tcp_rn).
    Sockets of a namespace being torn down hold a congestion module for a
    moment after a scripted-peer run, so a busy module gets @wait s; after
    that it stays loaded, or with @check ModuleError is raised."""
    holders = SYS_MODULE + name + "/holders"
    for h in os.listdir(holders) if os.path.isdir(holders) else []:
        rmmod(h, wait, check)
    end = time.monotonic() + wait
    while loaded(name):
        r = subprocess.run(["rmmod", name], capture_output=True, text=True)
        if r.returncode == 0:
            return
        if time.monotonic() > end:
            if check:
                raise ModuleError("rmmod %s: %s (refcnt %s)" %
                                  (name, r.stderr.strip(), refcnt(name)))
            return
        time.sleep(0.2)


def insmod(path, reload=True):
    """Load the .ko at @path (one of ours, from a build tree).  A module
    of that name already loaded is replaced (a stale build) with @reload,
    kept without it."""
    name = os.path.basename(path)[:-3]
    if loaded(name):
        if not reload:
            return
        rmmod(name)
    if not os.path.exists(path):
        raise ModuleError("%s: not built (run `make modules`)" %
                          os.path.relpath(path, TOP))
    r = subprocess.run(["insmod", path], capture_output=True, text=True)
    if r.returncode:
        raise ModuleError("insmod %s: %s (refcnt %s)" %
                          (path, r.stderr.strip(), refcnt(name)))
