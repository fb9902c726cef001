"""RN-TCP's dupthresh is this connection's rule, not the path's reordering
(seed 001 §IV-B2): it must not reach the TCP metrics cache, from which
every later connection to the host takes its initial tp->reordering,
whatever its congestion control.  An rn connection raises dupthresh on a
reordered hole, the hole arrives, the connection closes through TIME-WAIT
(where tcp_update_metrics() saves); a reno connection to the same peer
then starts with the sysctl's reordering (3), and the cache holds none."""

import subprocess


import rnsnd

MODULES = rnsnd.MODULES
FAMILIES = (4, 6)
SYSCTL = {"net.ipv4.tcp_recovery": 0, "net.ipv4.tcp_no_metrics_save": 0,
          "net.ipv4.tcp_no_ssthresh_metrics_save": 0}
NBYTES = 40000
ROUTE = "ssthresh lock 100"


def close_time_wait(t, c, end):
    """The kernel closes after @end bytes, the peer closes too: TIME-WAIT,
    where tcp_update_metrics() runs."""
    c.close()
    c.expect(seq=end, flags="FA")
    c.ack(end + 1)
    c.data(1, 0, flags="FA", ack=end + 1)
    c.expect(ack=2, flags="A")


def run(t):
    # tcp_update_metrics() saves reordering only after the initial slow
    # start.  A route ssthresh ends it from the start, but only for a
    # connection that finds a metrics entry (a first one creates it) and
    # with tcp_no_ssthresh_metrics_save=0.
    close_time_wait(t, t.connect(cc="reno", route=ROUTE), 1)
    c = rnsnd.start(t, initcwnd=10, nbytes=NBYTES, route=ROUTE)
    t.check(c.info().snd_ssthresh == 100, "ssthresh 100 from the route")
    hole = rnsnd.next_hole(t, c)
    rnsnd.dupacks(t, c, 1, 3)
    d = c.cc_info()["alpha"]
    t.check(d > 3 and c.info().reordering == d,
            "dupthresh %d in tp->reordering while the hole waits" % d)
    # The hole arrives: the ACK covers the SACKed segments only, so the
    # reordering the stack measures (4 segments) stays below dupthresh
    # and it keeps its own estimate (3).
    c.ack(hole + 4 * rnsnd.MSS)
    c.drain()
    for _ in range(20):
        if c.snd_una == NBYTES + 1:
            break
        rnsnd.finish(t, c)
    back = c.info().reordering     # checked last: the cache comes first
    close_time_wait(t, c, NBYTES + 1)
    out = subprocess.run(["ip", "tcp_metrics", "show", t.peer],
                         capture_output=True, text=True).stdout.strip()
    t.log("#", "ip tcp_metrics show: %s" % out)
    t.check(out != "", "the metrics cache has an entry for the peer")
    t.check("reordering" not in out, "no reordering in the cache")
    c2 = t.connect(cc="reno", mss=rnsnd.MSS)
    t.check(c2.info().reordering == 3,
            "a new reno connection starts with reordering 3")
    t.check(back == 3, "the rn connection had its reordering (3) back "
            "before it closed")
