"""A path-MTU drop is neither a timeout nor congestion.  Seed 002's
A3/B3 ("if the RTO expires") apply to timeouts only; Linux enters Loss
without one when an ICMP "fragmentation needed" shrinks the MSS:
tcp_v4_mtu_reduced() -> tcp_simple_retransmit() marks the oversized
segments lost and sets the Loss state with cwnd and ssthresh untouched
(no ssthresh(), no CA_EVENT_LOSS).  Here it hits the recovery of an A1
event (cwnd 20 kept, Linux's infinite ssthresh): the event must stay an
A1 with ssthresh 20, not become an A3 with Reno's 10; the lost segments
go out again at the new MSS."""

import socket
import struct

from esack_peer import (MODULES, SYSCTL,  # noqa: F401
                        counts, dupacks, outstanding, start)
from packet import csum

MTU = 576               # the smallest PMTU Linux accepts (min_pmtu 552)
NEW_MSS = MTU - 20 - 20 - 12


def ipv4(src, dst, proto, payload, flags=0):
    h = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), 0, flags,
                    64, proto, 0, socket.inet_aton(src),
                    socket.inet_aton(dst))
    return h[:10] + struct.pack("!H", csum(h)) + h[12:] + payload


class Raw:
    """A prebuilt packet for t.inject()."""

    def __init__(self, pkt):
        self.pkt = pkt

    def pack(self):
        return self.pkt


def frag_needed(t, c, seq):
    """ICMP type 3 code 4 from the path, quoting the segment at @seq."""
    quote = ipv4(t.host, t.peer, 6, struct.pack("!HHI", c.lport, c.pport,
                                                c.k_abs(seq)), 0x4000)
    icmp = struct.pack("!BBHHH", 3, 4, 0, 0, MTU) + quote
    icmp = icmp[:2] + struct.pack("!H", csum(icmp)) + icmp[4:]
    t.inject(Raw(ipv4(t.peer, t.host, 1, icmp)))
    t.log("<", "ICMP frag needed, mtu %d, quoting seq %d" % (MTU, seq))


def run(t):
    c = start(t, 20)
    una, _ = outstanding(c)
    before = c.info()
    dupacks(c, una)                                 # fast retransmit: A1
    i = c.info()
    t.check(i.ca_state == t.RECOVERY and i.snd_ssthresh == 20,
            "A1: Recovery, ssthresh = cwnd 20")
    c.drain()
    frag_needed(t, c, una)
    again = c.drain(within=0.5)
    i = c.info()
    t.check(i.ca_state == t.LOSS, "the PMTU drop entered Loss")
    t.check(i.snd_mss == NEW_MSS, "MSS %d" % NEW_MSS)
    t.check(i.snd_ssthresh == 20, "ssthresh still A1's 20, not Reno's 10")
    d = counts(c)
    t.check(d["A1"] == 1 and d["secwnd"] == 0,
            "still one A1 (no A3), SecWnd 0")
    t.check(again and all(0 < len(s.payload) <= NEW_MSS for s in again),
            "the lost data goes out again in segments of at most %d"
            % NEW_MSS)
    t.check(i.total_retrans > before.total_retrans + 1,
            "retransmitted after the PMTU drop")
    c.ack(c.snd_nxt)
    i = c.info()
    t.check(i.ca_state == t.OPEN and i.snd_ssthresh == 20,
            "Loss over, ssthresh 20")
