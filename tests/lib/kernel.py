# SPDX-License-Identifier: GPL-2.0
"""What the kernel tells the tests: the console's new lines, the
counters of rn_host and of a qdisc in a namespace, and one idle socket
as `ss` and the harness's sock_diag see it."""

import json
import os
import time

from satnet.host import prepare_tclib, proc_net, run


def rn_host_stats(ns):
    """/proc/net/rn_host (tcp_rn/rn_host.ko) of a namespace as a dict."""
    return {k: int(v) for k, v in (ln.split() for ln in
                                   proc_net(ns, "rn_host").splitlines())}


def qdisc_stats(dev, ns=None, kind="epdn"):
    """The qdisc of @kind on @dev as `tc -s -j` prints it: its options,
    the basic and queue counters, and the qdisc's own xstats, flat."""
    prepare_tclib()             # tc reads epdn's options through our plugin
    out = json.loads(run(["tc", "-s", "-j", "qdisc", "show", "dev", dev],
                         ns=ns).stdout)
    (q,) = [q for q in out if q["kind"] == kind]
    return q


# ---- the kernel console -----------------------------------------------------

class Kmsg:
    """Kernel log lines written since creation."""

    def __init__(self):
        self.fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
        os.lseek(self.fd, 0, os.SEEK_END)

    def read(self):
        """The lines since the last read."""
        out = []
        while True:
            try:
                rec = os.read(self.fd, 8192)
            except BlockingIOError:
                break
            except BrokenPipeError:     # overwritten: go on from here
                continue
            out.append(rec.decode(errors="replace").split(";", 1)[-1])
        return out

    def lines(self):
        """The lines since the last read; closes the log."""
        out = self.read()
        os.close(self.fd)
        return out


def ss_and_diag(ns, dst, dport, sport, tries=20):
    """(parse_ss row of `ss -tinH`, castate.ss_row) of the TCP socket
    from local port @sport to @dst:@dport in namespace @ns, once it is
    idle (nothing unacknowledged) and the sock_diag rows read just before
    and just after ss are the same: what both saw could not change in
    between.  AssertionError if that never happens in @tries."""
    from satnet import castate
    from satnet.measure import parse_ss

    def diag():
        return [castate.ss_row(r)
                for r in d.dump(dport, castate.SS_STATES)
                if r["sport"] == sport and r["dst"] == dst]

    d = castate.DiagSocket(ns)
    try:
        for _ in range(tries):
            before = diag()
            text = run(["ss", "-tinH", "dst", "%s:%d" % (dst, dport)],
                       ns=ns).stdout
            after = diag()
            ss = [r for r in parse_ss(text) if r["sport"] == sport]
            if len(after) == 1 and before == after and \
                    "unacked" not in after[0]:
                return ss[0] if len(ss) == 1 else None, after[0]
            time.sleep(0.1)
    finally:
        d.close()
    raise AssertionError("socket %d never idle: %r" % (sport, after))
