# SPDX-License-Identifier: GPL-2.0
"""fail-nth on a debug kernel: `tc qdisc change ... flows N` sent over
raw rtnetlink with the n-th allocation of the call failed, n = 1, 2, ...
until the call goes through without a fault, on the probe qdisc and on
the bottleneck; after each call the change is whole or absent as the
answer says, and the qdisc works and its counters add up.  Without
fail-nth, the same changes are plain netlink requests."""

import errno
import os
import time

from satnet.host import netns
from lib.kernel import qdisc_stats
from lib.rtnl import (TC_H_ROOT, TCA_EPDN_FLOWS, epdn_qdisc_msg, rtnl_ack,
                      rtnl_socket)

from .counters import epdn_identities

FAIL_NTH = "/proc/thread-self/fail-nth"
FAILNTH_FLOWS = (16, 32, 64, 128)   # tables within a page: kvcalloc fails
TABLE_ENOMEM = "epdn: cannot allocate the flow table"


class FailNth:
    """Steps of the fail-nth thread, for the Soak: its topology, probe,
    locks (b_lock, probe_lock), fault_window() (memory.Memory),
    probe_batch() (faults.Faults), check() and count()."""

    def failnth_step(self, rnd):
        if self.soaked() < 15:
            return                      # failslab's own period goes first
        k = self.n["faults.failnth_sweeps"] + self.n["ops.netlink_changes"]
        target = "probe" if k % 2 == 0 else "bottleneck"
        nth = os.open(FAIL_NTH, os.O_RDWR) if self.has["fail-nth"] else None
        try:
            self.netlink_change(rnd, target, nth)
        finally:
            if nth is not None:
                os.close(nth)

    def nth_call(self, ns, msg, nth=None, n=0):
        """One rtnetlink request from this thread, with its @n-th
        allocation failed when @nth (its fail-nth file) is given: the
        error, the extack message, and whether the fault was injected."""
        with netns(ns):
            s = rtnl_socket()
        try:
            if nth is None:
                return rtnl_ack(s, msg)[:2] + (False,)
            with self.fault_window():
                os.write(nth, b"%d" % n)
                try:
                    err, text, _ = rtnl_ack(s, msg)
                    left = int(os.pread(nth, 32, 0))
                finally:
                    os.write(nth, b"0")
            return err, text, left == 0
        finally:
            s.close()

    def qdisc_of(self, target):
        """(namespace, device, handle, parent, lock) of a target qdisc."""
        if target == "probe":
            return self.probe, "pd0", 0x10000, TC_H_ROOT, self.probe_lock
        return self.topo.r1, "b", 0x100000, 0x10001, self.b_lock

    def netlink_change(self, rnd, target, nth):
        """RTM_NEWQDISC changing `flows` of @target's epdn, sent by this
        thread itself; with @nth (this thread's fail-nth, open), for n =
        1, 2, ... with the n-th allocation of the call failed, each call
        from the old table, until one goes through without a fault.  After
        each call the change is whole or not at all, as the answer says,
        and the qdisc works and its counters add up."""
        ns, dev, handle, parent, lock = self.qdisc_of(target)
        with lock:
            old = qdisc_stats(dev, ns)["options"]["flows"]
            new = rnd.choice([f for f in FAILNTH_FLOWS if f != old])
            with netns(ns):
                msg, back = (epdn_qdisc_msg(dev, [(TCA_EPDN_FLOWS, f)],
                                            flags=0, handle=handle,
                                            parent=parent)
                             for f in (new, old))
            points, enomem, n = 0, 0, 0
            while True:
                n += 1
                err, text, injected = self.nth_call(ns, msg, nth, n)
                points += injected
                enomem += text == TABLE_ENOMEM
                st = self.qdisc_works(rnd, target)
                flows = st["options"]["flows"]
                whole = flows == new if err == 0 else \
                    flows in (old, new) if err == errno.ENOBUFS else \
                    flows == old
                self.check("tc qdisc change over netlink applied exactly "
                           "when acked", whole and (injected or err == 0),
                           "%s n=%d: error %d %r, injected %s, flows %d "
                           "(was %d, asked %d)" % (target, n, err, text,
                                                   injected, flows, old,
                                                   new))
                if nth is None or not injected:
                    break
                if self.stop.is_set():
                    self.count("faults.failnth_sweeps_cut")
                    return
                if flows != old:        # a fault the call survived
                    err, text, _ = self.nth_call(ns, back)
                    self.check("tc qdisc change over netlink applied "
                               "exactly when acked", err == 0,
                               "%s back to %d: %d %r" % (target, old, err,
                                                         text))
        if nth is None:
            self.count("ops.netlink_changes")
            return
        self.count("faults.failnth_sweeps")
        self.count("faults.failnth_points", points)
        self.count("faults.failnth_table_enomem", enomem)
        self.check("fail-nth reached the flow table allocation", enomem > 0,
                   "%s: %d points, none failed the table" % (target, points))

    def qdisc_works(self, rnd, target):
        """After a change: the probe counts a batch exactly; the
        bottleneck's records add up and it passes traffic.  Returns the
        qdisc's counters."""
        if target == "probe":
            return self.probe_batch(rnd, check=True, wait=True)
        ns = self.topo.r1
        st = qdisc_stats("b", ns)
        bad = [b for b in epdn_identities(st) if b.startswith("records")]
        self.check("epdn counters add up", not bad,
                   "bottleneck after a change: " + "; ".join(bad))
        end = time.monotonic() + 20
        while time.monotonic() < end:
            if qdisc_stats("b", ns)["packets"] > st["packets"]:
                return st
            time.sleep(0.2)
        self.check("bottleneck passes traffic after a change", False,
                   "no packet in 20 s")
        return st
