# SPDX-License-Identifier: GPL-2.0
"""Steps shared by the RN-TCP sender scripts (tests/peer/scripts/rn_sender).

The peer plays an RN-TCP receiver: its dupACKs carry the drop-negative
bit (dn=True) when it believes the hole reordered.  The module reports
its state through TCP_CC_INFO: ce_state = false fast retransmits,
alpha = the dupthresh in force, ab_ecn = kval in per-mille,
ab_tot = ACKs seen with the bit."""

import math

from satnet import kmod

MODULES = ["rn_host", "tcp_rn"]
MSS = 1000
DUPTHRESH_MAX = 300                 # net.ipv4.tcp_max_reordering
# (initcwnd, SYN-ACK delay, ACK delay, ACK rounds before the train):
# swnd 4, 11 and 21 at the train; srtt/min_rtt about 1-2 and several.
DUPTHRESH_CASES = ((3, 0.1, 0.1, 0), (10, 0.1, 0.1, 0), (10, 0.08, 0.25, 1))


def counters():
    """/proc/net/rn_sender of this namespace, as a dict."""
    with open("/proc/net/rn_sender") as f:
        return {k: int(v) for k, v in (ln.split() for ln in f)}


def param(name):
    return kmod.get_param("tcp_rn", name, raw=True)


def start(t, initcwnd=10, synack_delay=0.1, rto_min=10.0, nbytes=600000,
          **kw):
    """An rn connection with a full initial window in flight.  The
    SYN-ACK waits @synack_delay, which sets min_rtt; the long RTO keeps
    timeouts out of the dupACK trains."""
    c = t.connect(cc="rn", mss=MSS, initcwnd=initcwnd, rto_min=rto_min,
                  synack_delay=synack_delay, **kw)
    c.write(nbytes)
    c.expect_data(count=initcwnd)
    return c


def ack_round(t, c, delay, count=None):
    """After @delay, ACK the first @count segments in flight one by one
    (each an RTT sample of about @delay; slow start sends two new
    segments per ACK)."""
    t.sleep(delay)
    end = c.data_high
    una = c.snd_una
    n = count if count is not None else (end - una) // MSS
    for i in range(1, n + 1):
        c.ack(una + i * MSS)
    c.drain()


def kval_rule(info, kval_before):
    """kval = max(ceil(srtt / min_rtt) * c, kval), c = 0.1, per-mille."""
    ratio = math.ceil(info.rtt / info.min_rtt) if info.min_rtt else 1
    return max(min(ratio * 100, 64000), kval_before)


def dupthresh_rule(swnd, kval):
    """dupthresh = max(4, swnd + swnd * kval), rounded up, bounded."""
    d = swnd + -(-swnd * kval // 1000)
    return min(max(4, d), DUPTHRESH_MAX)


def rwnd_segments(c):
    return ((c.win >> c.wscale) << c.wscale) // MSS


def dupacks(t, c, n_from, n_to, dn=True, hole=None, gap=0.12):
    """DupACKs number @n_from..@n_to for the hole at @hole (snd_una), the
    k-th SACKing k segments above it.  Returns the number of the dupACK
    after which the hole was retransmitted, or None, and the new data
    segments sent meanwhile."""
    hole = c.snd_una if hole is None else hole
    new = 0
    for k in range(n_from, n_to + 1):
        top = hole + MSS + k * MSS
        t.check(top <= c.data_high,
                "segment %d:%d was sent, to be SACKed" % (top - MSS, top))
        c.ack(hole, sack=[(hole + MSS, top)], dn=dn)
        for seg in c.drain(within=gap):
            if c.k_rel(seg.seq) == hole and seg.payload:
                return k, new
            if seg.payload:
                new += 1
    return None, new


def next_hole(t, c, delay=0.1):
    """After @delay, ACK one segment; after @delay again, the next one is
    the hole of a train.  Returns it."""
    t.sleep(delay)
    ack_round(t, c, 0, count=1)
    t.sleep(delay)
    return c.snd_una


def open_train(t, c, kval_before=0):
    """The first marked dupACK of a train: kval and dupthresh must follow
    the rules, computed from the kernel's own srtt, min_rtt and cwnd.
    Returns (dupthresh, kval)."""
    swnd = min(c.info().snd_cwnd, rwnd_segments(c))
    k, _ = dupacks(t, c, 1, 1)
    t.check(k is None, "no retransmission at the first marked dupACK")
    i, cc = c.info(), c.cc_info()
    kval = kval_rule(i, kval_before)
    want = dupthresh_rule(swnd, kval)
    t.check(cc["ab_ecn"] == kval, "kval %d = max(ceil(%d/%d) * 0.1, %d)" %
            (kval, i.rtt, i.min_rtt, kval_before))
    t.check(cc["alpha"] == want and i.reordering == want,
            "dupthresh %d = max(4, %d + %d * kval) in tp->reordering" %
            (want, swnd, swnd))
    return want, kval


def check_dupthresh(t, initcwnd, synack_delay, delay, rounds, kval_min):
    """One connection: shape the RTT samples, open a marked train, and
    the hole must be retransmitted at exactly the dupthresh-th dupACK.
    Returns dupthresh."""
    c = start(t, initcwnd=initcwnd, synack_delay=synack_delay)
    for _ in range(rounds):
        ack_round(t, c, delay)
    next_hole(t, c, delay)
    want, kval = open_train(t, c)
    t.check(kval >= kval_min, "the ACK delays gave kval >= %d" % kval_min)
    k, _ = dupacks(t, c, 2, want)
    t.check(k == want, "the hole retransmitted at dupACK %d = dupthresh" %
            want)
    finish(t, c)
    return want


def check_dupthresh_cases(t):
    """check_dupthresh() at three swnd and two srtt/min_rtt ratios: three
    different dupthresholds."""
    seen = set()
    for initcwnd, sd, delay, rounds in DUPTHRESH_CASES:
        seen.add(check_dupthresh(t, initcwnd, sd, delay, rounds,
                                 300 if rounds else 100))
    t.check(len(seen) == 3, "three different dupthresholds: %s" %
            sorted(seen))


def train_after_timeout(t, c):
    """After a timeout: the peer takes everything, two ACK rounds let cwnd
    grow, then a marked train of three dupACKs.  Returns the hole and the
    number of the dupACK that brought its retransmission, or None."""
    finish(t, c)
    for _ in range(2):
        ack_round(t, c, 0.1)
    t.sleep(0.1)
    hole = c.snd_una
    k, _ = dupacks(t, c, 1, 3)
    return hole, k


def finish(t, c):
    """The peer takes everything sent so far (the hole arrived)."""
    c.ack(c.data_high)
    c.drain()


def bad_ack(c, ack, sack=(), dn=True):
    """An ACK whose TCP checksum fails: TCP discards it, and so must the
    hook that reads the drop-negative bit."""
    una = c.snd_una
    seg = c.segment(c.rcv_nxt, 0, ack=ack, sack=sack, dn=dn)
    seg.bad_csum = True
    c.send(seg)
    c.snd_una = una                 # the kernel saw no ACK
