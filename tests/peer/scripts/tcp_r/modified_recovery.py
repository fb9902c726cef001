"""TCP-R's modified fast recovery (seed 000 §2.2.1): "If all the three
duplicate ACKs received have their drop-negative bit set and the ECE bit
is set to zero ... the sender ... retransmits the packet immediately.  The
procedure of reducing the ssthresh and the cwnd in the fast recovery
procedure are bypassed."  Three marked dupACKs and no ECE give exactly one
retransmission.  The window is not cut, and it goes on growing through the
recovery as Reno's grows outside one (here in slow start: one segment per
segment delivered); when the recovery ends ssthresh is what it was before
it, and cwnd is the window grown, in the recovery (PRR would send one
segment more than was delivered per ACK) and after it, not the ssthresh
left by an earlier timeout (the stack leaves Recovery before it sets
cwnd to ssthresh, so r gives ssthresh back only after that).  Under
classic dupthresh and under RACK."""

import rflow

MODULES = rflow.MODULES
SYSCTL = rflow.SYSCTL
FAMILIES = (4, 6)


def modified(t, rec):
    c = rflow.start(t, rec, initcwnd=40, write=2000)
    rflow.timeout_first(t, c)
    c.write(400000)
    rflow.grow(t, c, 6)
    before = c.info()
    t.check(before.snd_ssthresh > before.snd_cwnd + 2,
            "slow start below a finite ssthresh (%d < %d)" % (
                before.snd_cwnd, before.snd_ssthresh))
    _, hole, end, sent = rflow.recovery(t, c, [True, True, True])
    rflow.check_kept(t, c, before)
    more = rflow.sack_rest(t, c, hole, end)
    t.check(rflow.retransmissions(c, more, hole) == 0,
            "no second retransmission")
    # Delivered in the recovery, after the third dupACK: what the last
    # dupACK SACKed.  The hole's own ACK ends the recovery, and Reno's
    # growth outside it counts that ACK (+1 in slow start).
    grown = rflow.reno_grow(before.snd_cwnd, before.snd_ssthresh,
                            (end - hole) // rflow.MSS - 4)
    i = c.info()
    t.check(i.snd_ssthresh == grown,
            "the window grew in the recovery: %d -> %d" %
            (before.snd_cwnd, grown))
    t.check(i.snd_cwnd == grown,
            "cwnd is that window in the recovery, not PRR's: %d" %
            i.snd_cwnd)
    i = rflow.close_hole(t, c, end)
    t.check(i.ca_state == t.OPEN, "Recovery over")
    t.check(i.snd_ssthresh == before.snd_ssthresh,
            "ssthresh unchanged (%d)" % before.snd_ssthresh)
    t.check(grown <= i.snd_cwnd <= grown + 1,
            "cwnd %d, +1 at most from this ACK, no jump to ssthresh" %
            grown)
    t.check(i.total_retrans == before.total_retrans + 1,
            "one retransmission in the recovery")


def run(t):
    for rec in (0, 1):
        modified(t, rec)
