# SPDX-License-Identifier: GPL-2.0
"""The soak's counter checks: the identities an epdn qdisc's and an
rn_host namespace's counters must satisfy, and how they are read while
packets still move (a tc action counting what enters a qdisc)."""

import json
import time

from satnet import host
from lib.kernel import qdisc_stats


def epdn_identities(st, entered=None):
    """What does not add up in one epdn qdisc's counters (`tc -s -j`)."""
    bad = []
    drops = st["overflow_drops"] + st["corrupt_drops"] + st["red_drops"]
    if st["drops"] != drops:
        bad.append("drops %d != overflow + corrupt + red %d" %
                   (st["drops"], drops))
    # A record is stamped into many packets until its hold runs out, then
    # released: stamps count packets, not records.
    made = st["recorded"] - st["rec_merged"]
    gone = (st["records"] + st["released"] + st["aged"] + st["evicted"] +
            st["flushed"])
    if made != gone:
        bad.append("records made %d != live + released + aged + evicted + "
                   "flushed %d" % (made, gone))
    low = st["stamps"] + st["merges"] + st["untouched"]
    if not low <= st["packets"] <= low + st["ttl_updates"]:
        bad.append("sent %d outside stamps + merges + untouched %d "
                   "(+ ttl_updates %d)" % (st["packets"], low,
                                            st["ttl_updates"]))
    if entered is not None and \
            entered != st["packets"] + st["drops"] + st["qlen"]:
        bad.append("entered %d != sent %d + dropped %d + queued %d" %
                   (entered, st["packets"], st["drops"], st["qlen"]))
    return bad


RN_OPT_CLASSES = ("opt_absent", "opt_trusted", "opt_distrusted",
                  "opt_not_host", "opt_malformed")
RN_FREED = ("flows_evicted", "flows_freed_fin", "flows_freed_rst",
            "flows_aged")


def rn_identities(st):
    """What does not add up in one namespace's /proc/net/rn_host."""
    bad = []
    classes = sum(st[k] for k in RN_OPT_CLASSES)
    if classes != st["data_segments"]:
        bad.append("data_segments %d != segments by option class %d" %
                   (st["data_segments"], classes))
    extra = st["flows_created"] - st["flows_live"] - \
        sum(st[k] for k in RN_FREED)
    if not 0 <= extra <= st["flows_restarted"]:
        bad.append("flows created - live - freed = %d, not within "
                   "[0, restarted %d]" % (extra, st["flows_restarted"]))
    if st["data_untracked"] + st["data_outside_window"] + \
            st["opt_wide_range"] > st["data_segments"]:
        bad.append("untracked + outside + wide > data_segments")
    return bad


def action_packets(dev, ns, where="egress"):
    """Packets counted by the tc actions of @dev's filters (@where)."""
    out = json.loads(host.run(["tc", "-s", "-j", "filter", "show", "dev",
                               dev, where], ns=ns).stdout or "[]")
    seen = {}

    def walk(o):
        if isinstance(o, dict):
            if o.get("kind") == "gact" and "stats" in o:
                seen[(o["kind"], o.get("index"))] = o["stats"]["packets"]
            for v in o.values():
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)
    walk(out)
    return sum(seen.values())


def settled(ns, dev, counter, tries=20):
    """An epdn qdisc's counters and counter(), the packets a tc action
    counted into it, read while none arrived: the count was the same
    before and after the qdisc's."""
    for _ in range(tries):
        before = counter()
        st = qdisc_stats(dev, ns)
        after = counter()
        if before == after:
            break
        time.sleep(0.5)
    return st, after


def add_counter(dev, ns):
    """A matchall action on @dev's egress, ahead of its qdisc: it counts
    every packet that enters the qdisc."""
    host.run(["tc", "-batch", "-"], ns=ns, inp=(
        "qdisc add dev %s clsact\n"
        "filter add dev %s egress prio 1 matchall action pass\n" %
        (dev, dev)))



def stable(read, tries=20):
    """Read until two reads agree (the hooks are off; the ageing timer may
    still be freeing flows)."""
    last = read()
    for _ in range(tries):
        time.sleep(0.3)
        cur = read()
        if cur == last:
            return cur
        last = cur
    return last
