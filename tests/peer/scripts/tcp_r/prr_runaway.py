"""A modified fast recovery that turns standard reduces cwnd by PRR (RFC
6937) toward half the window, and PRR never sends more than was
delivered while more than ssthresh is in flight.  The window of a
modified recovery is kept, not cut, and may have grown well past the cwnd
before the loss; when an unmarked dupACK then turns the recovery standard,
ssthresh is half that window.  PRR sends ceil(ssthresh * delivered /
RecoverFS) - out; with RecoverFS the cwnd before the loss and ssthresh
above it, that released several segments per segment delivered (measured:
cwnd 1117 -> 6063 under ssthresh 513).  Here the window of the modified
recovery is grown as far as the module lets it (marked dupACKs that SACK
everything sent), then unmarked dupACKs SACK one segment each: on every
ACK in Recovery, cwnd stays within max(ssthresh, inflight before the ACK)
+ the segments it delivered.  Classic dupthresh, so that no lost
retransmission turns the recovery standard first."""

import rflow

MODULES = rflow.MODULES
SYSCTL = rflow.SYSCTL
PARAMS = rflow.PARAMS
MSS = rflow.MSS


def runaway(t):
    t.sysctl("net.ipv4.tcp_recovery", 0)
    c = t.connect(cc="r", mss=MSS, initcwnd=10, rto_min=3, win=4000000)
    c.write(1000000)
    c.drain(within=0.3)
    before, hole, _, _ = rflow.recovery(t, c, [True, True, True])
    # Marked dupACKs that SACK everything sent: the window grows.
    edge = hole + 4 * MSS
    for k in range(5):
        if c.info().snd_cwnd >= 60:
            break
        edge = c.snd_nxt
        rflow.bounded_ack(t, c, hole, "marked dupACK %d" % k,
                          sack=[(hole + MSS, edge)], dn=True)
    grown = c.info()
    t.check(grown.ca_state == t.RECOVERY, "still in Recovery")
    t.check(c.snd_nxt > edge + 2 * MSS, "data in flight above the SACKed")
    # Unmarked dupACKs, one more segment SACKed each: the recovery turns
    # standard on the first, and PRR takes over.
    for k in range(1, 9):
        if edge + k * MSS > c.snd_nxt:
            break
        i, _ = rflow.bounded_ack(t, c, hole, "unmarked dupACK %d" % k,
                                 sack=[(hole + MSS, edge + k * MSS)],
                                 dn=False)
        if k == 1:
            wnd = max(before.snd_cwnd, grown.snd_cwnd)
            t.check(i.snd_ssthresh == rflow.halved(wnd),
                    "turned standard: ssthresh halved from the window "
                    "kept (%d)" % wnd)
        if i.ca_state != t.RECOVERY:
            break


def run(t):
    runaway(t)
