"""TCP-R retransmits a segment it believes reordered or corrupted "only
once in a RTT" (seed 000 §2.2.1).  With RACK the retransmission of the
hole is found lost when data sent after it is SACKed, and the hole goes
out a second time: the modified fast recovery then turns standard and
ssthresh is halved from the window it had grown to (not from the smaller
cwnd before the recovery).  RACK only: classic
loss detection finds a lost retransmission by the timer alone
(timeout_in_modified.py)."""

import rflow

MODULES = rflow.MODULES
SYSCTL = rflow.SYSCTL
PARAMS = rflow.PARAMS


def lost_again(t):
    c = rflow.start(t, 1)
    before, hole, end, _ = rflow.recovery(t, c, [True, True, True])
    more = rflow.sack_rest(t, c, hole, end)
    t.check(c.snd_nxt > end, "new data sent after the retransmission")
    t.sleep(0.2)
    more += rflow.sack_rest(t, c, hole, c.snd_nxt)   # they arrive, the
    more += c.drain(within=0.3)                      # hole does not
    t.check(rflow.retransmissions(c, more, hole) == 1,
            "RACK: the hole goes out a second time")
    grown = rflow.check_kept(t, c, before)
    t.check(grown.snd_cwnd > before.snd_cwnd,
            "the window grew in the recovery")
    rflow.sack_rest(t, c, hole, c.snd_nxt)
    i = rflow.check_halved(t, c, before, "lost again", "ab_tot", grown)
    t.check(i.ca_state == t.RECOVERY, "still in Recovery")


def run(t):
    lost_again(t)
