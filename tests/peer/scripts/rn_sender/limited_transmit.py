"""Extended limited transmit (seed 001 §IV-B1): while the sender waits
for a reordered hole (marked dupACKs, up to dupthresh) it sends new data,
up to dupthresh - 1 segments beyond cwnd but never more than one more
cwnd.  With dupthresh - 1 > cwnd, exactly cwnd new segments leave before
the retransmission."""

import rnsnd

MODULES = rnsnd.MODULES
SYSCTL = {"net.ipv4.tcp_recovery": 0}


def run(t):
    c = rnsnd.start(t, initcwnd=10)
    rnsnd.next_hole(t, c)
    i = c.info()
    cwnd = i.snd_cwnd
    t.check(i.unacked == cwnd, "a full window in flight (%d)" % cwnd)
    k, new1 = rnsnd.dupacks(t, c, 1, 1)
    d = c.cc_info()["alpha"]
    t.check(d - 1 > cwnd, "dupthresh %d: dupthresh - 1 > cwnd %d" %
            (d, cwnd))
    k, new = rnsnd.dupacks(t, c, 2, d)
    t.check(k == d, "retransmitted at dupthresh %d" % d)
    t.check(new1 + new == cwnd,
            "%d new segments during the train = one more cwnd (%d)" %
            (new1 + new, cwnd))
