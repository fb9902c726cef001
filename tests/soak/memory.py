# SPDX-License-Identifier: GPL-2.0
"""Memory faults and leaks, on a debug kernel: failslab failing atomic
allocations of rn_host's flow cache and of skbuff_head_cache, and
kmemleak's scan for leaks of our modules at the end."""

import contextlib
import os
import time

from satnet.console import own_leaks

from . import read, write
from .modules import FLOW_CACHE, SLAB

KMEMLEAK = "/sys/kernel/debug/kmemleak"
FAILSLAB = "/sys/kernel/debug/failslab"
SKB_CACHE = "skbuff_head_cache"
FAIL_BASE, FAIL_BURST = 2, 25       # failslab probability, %


def kmemleak_works():
    try:
        with open(KMEMLEAK) as f:
            f.read(1)
        return True
    except OSError:
        return False


def kmemleak_ours():
    """Leaks whose backtrace names our modules or an address no module
    resolves any more (ours are unloaded by now)."""
    time.sleep(6)           # younger objects are not reported
    write(KMEMLEAK, "scan")
    time.sleep(5)
    write(KMEMLEAK, "scan")
    return ["\n".join(rep).rstrip()
            for rep in own_leaks(read(KMEMLEAK).splitlines())]


class Memory:
    """failslab for the Soak: the memory thread's steps, and the window
    a fail-nth call runs in; its fault_lock, stop event, skip() and
    count().

    Which caches failslab may fail is fixed at boot on 6.1 (slub_debug=A,
    list; /sys/kernel/slab/*/failslab is read-only): rn_flow and
    skbuff_head_cache, both at FAIL_BASE % all along and FAIL_BURST % in
    bursts, atomic allocations only.  The probability is always the first
    attribute lowered and the last raised: with the filters off (a
    fail-nth window) any chance failure would hit every allocation."""

    FS_ATTRS = ("verbose", "times", "interval", "space", "task-filter",
                "ignore-gfp-wait", "cache-filter")

    def fs(self, attr, value=None):
        path = os.path.join(FAILSLAB, attr)
        if value is None:
            return read(path)
        write(path, value)
        return None

    def failslab_setup(self):
        """False when failslab cannot fail our caches on this boot."""
        for a in ("probability",) + self.FS_ATTRS:
            self.saved_failslab[a] = self.fs(a)
        self.fs("probability", 0)
        for a, v in (("verbose", 0), ("times", -1), ("interval", 1),
                     ("space", 0), ("task-filter", "N"),
                     ("ignore-gfp-wait", "Y"), ("cache-filter", "Y")):
            self.fs(a, v)
        flagged = {}
        for cache in (FLOW_CACHE, SKB_CACHE):
            try:
                flagged[cache] = read(os.path.join(SLAB, cache,
                                                   "failslab")) == "1"
            except OSError:
                flagged[cache] = False
        if all(flagged.values()):
            return True
        self.skip("failslab on %s: not flagged at boot (slub_debug=A,%s,%s)"
                  % (", ".join(c for c, f in flagged.items() if not f),
                     FLOW_CACHE, SKB_CACHE))
        return False

    def failslab_restore(self):
        if not self.saved_failslab:
            return
        try:
            self.fs("probability", 0)
        finally:
            for a in self.FS_ATTRS + ("probability",):
                self.fs(a, self.saved_failslab[a])

    def memory_step(self, rnd):
        with self.fault_lock:
            self.fs("probability", FAIL_BASE)
        self.count("faults.failslab_periods")
        self.stop.wait(rnd.uniform(6, 12))
        if self.stop.is_set():
            return
        with self.fault_lock:
            self.fs("probability", FAIL_BURST)
            try:
                self.stop.wait(rnd.uniform(0.5, 2))
            finally:
                self.fs("probability", FAIL_BASE)
        self.count("faults.failslab_bursts")

    @contextlib.contextmanager
    def fault_window(self):
        """failslab for one fail-nth call: nothing fails by chance, and
        every allocation of this thread may be its n-th, from any cache,
        allocations that may sleep too."""
        if not self.has["failslab"]:
            yield
            return
        with self.fault_lock:
            prob = self.fs("probability")
            self.fs("probability", 0)
            try:
                self.fs("cache-filter", "N")
                self.fs("ignore-gfp-wait", "N")
                yield
            finally:
                self.fs("cache-filter", "Y")
                self.fs("ignore-gfp-wait", "Y")
                self.fs("probability", prob)
