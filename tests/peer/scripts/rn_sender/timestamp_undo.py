"""rn keeps Linux's timestamp undo: when the fast retransmission of a
reordered hole (made at dupthresh, seed 001 §IV-B2) proves unneeded
because the ACK that fills the hole echoes the TSval of the hole's first
transmission (RFC 3522; tcp_try_undo_partial(), TCPPartialUndo), the
stack undoes the recovery: ssthresh goes back to the one from before,
and undo_cwnd() gives back the cwnd that the limited-transmit cap held
back during the train, not the capped one.  The same ACK echoing the
retransmission's TSval undoes nothing.  Under classic dupthresh and
under RACK."""

import rnsnd

from satnet import measure

MODULES = rnsnd.MODULES
FAMILIES = (4, 6)


def undos():
    """TCPPartialUndo of this namespace."""
    with open("/proc/net/netstat") as f:
        return measure.parse_mib(f.read())["TcpExtTCPPartialUndo"]


def episode(t, rec, echo_first):
    """A marked train up to its fast retransmission, then the ACK that
    fills the hole.  Returns tcp_info in the recovery and after that ACK,
    and how many partial undos the ACK made."""
    t.sysctl("net.ipv4.tcp_recovery", rec)
    c = rnsnd.start(t, initcwnd=10)
    first = c.ts_recent                 # the initial window's TSval
    hole = rnsnd.next_hole(t, c)
    want, _ = rnsnd.open_train(t, c)
    k, _ = rnsnd.dupacks(t, c, 2, want)
    t.check(k == want, "fast retransmit at dupthresh %d" % want)
    held = c.info()
    t.check(held.ca_state == t.RECOVERY, "in Recovery")
    echo = first if echo_first else c.ts_recent
    before = undos()
    c.ack(hole + (want + 1) * rnsnd.MSS, tsecr=echo)
    c.drain()
    return held, c.info(), undos() - before


def run(t):
    t.check(rnsnd.param("ack_order_ok") == "Y", "RACK steering usable")
    for rec in (0, 1):
        held, i, n = episode(t, rec, True)
        t.check(n == 1, "one partial undo (TCPPartialUndo +%d)" % n)
        t.check(i.ca_state == t.OPEN, "the recovery was undone")
        t.check(i.snd_ssthresh > 0x7fff0000,
                "ssthresh given back: the initial one (%d)" %
                i.snd_ssthresh)
        t.check(i.snd_cwnd >= 2 * held.snd_ssthresh > held.snd_cwnd,
                "cwnd %d: the held-back cwnd (2 * ssthresh %d), more than"
                " the capped %d" % (i.snd_cwnd, held.snd_ssthresh,
                                    held.snd_cwnd))

        held, i, n = episode(t, rec, False)
        t.check(n == 0, "no undo when the retransmission's TSval is"
                " echoed (TCPPartialUndo +%d)" % n)
        t.check(i.ca_state == t.RECOVERY, "still in Recovery")
        t.check(i.snd_ssthresh == held.snd_ssthresh, "ssthresh kept")
