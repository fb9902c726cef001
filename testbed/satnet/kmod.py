# SPDX-License-Identifier: GPL-2.0
"""Our kernel modules on the running kernel: loading them from a build
tree, unloading them, and their parameters.  The testbed (host.modprobe),
the runner, the tests, the scripted peer and the tools all go through
here."""

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


# ---- parameters (/sys/module/NAME/parameters) ----

def param_path(module, param):
    return SYS_MODULE + "%s/parameters/%s" % (module, param)


def param_text(value):
    """A parameter as get_param() reads it: booleans as 1 or 0."""
    return str(int(value) if isinstance(value, bool) else value)


def get_param(module, param, raw=False):
    """The value as text; a bool parameter's Y or N as 1 or 0 unless
    @raw."""
    try:
        with open(param_path(module, param)) as f:
            v = f.read().strip()
    except OSError as e:
        raise RuntimeError("cannot read %s.%s: %s" %
                           (module, param, e)) from None
    return v if raw else {"Y": "1", "N": "0"}.get(v, v)


def set_param(module, param, value):
    try:
        with open(param_path(module, param), "w") as f:
            f.write("%s\n" % value)
    except OSError as e:
        raise RuntimeError("cannot set %s.%s=%s: %s" %
                           (module, param, value, e)) from None


def read_params(module, writable=False):
    """Every parameter of a loaded @module (only those root may write,
    with @writable) by name, as the kernel shows it (None where it cannot
    be read); {} for a module not loaded or without parameters."""
    d = SYS_MODULE + module + "/parameters"
    names = sorted(os.listdir(d)) if os.path.isdir(d) else []
    out = {}
    for p in names:
        path = os.path.join(d, p)
        if writable and not os.stat(path).st_mode & 0o200:
            continue
        try:
            with open(path) as f:
                out[p] = f.read().strip()
        except OSError:
            out[p] = None
    return out


def set_params(params):
    """Write {module: {param: value}}; returns what restore_params()
    writes back."""
    old = []
    for module, kv in params.items():
        for k, v in kv.items():
            old.append((module, k, get_param(module, k, raw=True)))
            set_param(module, k, v)
    return old


def restore_params(old):
    for module, k, v in reversed(old):
        set_param(module, k, v)
