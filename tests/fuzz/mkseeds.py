#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Writes the seed inputs of the fuzz targets into tests/fuzz/corpus/T/.

Each seed is a short scenario in the target's input format (described at
the top of tests/fuzz/fuzz_T.c): the cases the unit tests and the papers
walk through, so that fuzzing starts from meaningful states; the tc
plugin's are commands as tests/tc-cases/epdn.json runs them.  Run it again
after a change of an input format:

    python3 tests/fuzz/mkseeds.py
"""

import os
import shlex
import struct

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(TOP, "tests", "fuzz", "corpus")


def packer(fmt, bits):
    return lambda v: struct.pack(fmt, v & ((1 << bits) - 1))


u8, u16, u32, u64 = (packer(f, b) for f, b in
                     (("<B", 8), ("<H", 16), ("<I", 32), ("<Q", 64)))
be16, be32 = packer(">H", 16), packer(">I", 32)


# fuzz_near(): base + int8 / int16 / int32, or a value as is.
def off(d):
    if -128 <= d < 128:
        return u8(0) + u8(d)
    if -32768 <= d < 32768:
        return u8(1) + u16(d)
    return u8(2) + u32(d)


def absolute(v):
    return u8(3) + u32(v)


# fuzz_len(): 8, 16 or 32 bits, or within 2^8 of the wide value.
def length(v):
    if v < 256:
        return u8(0) + u8(v)
    if v < 65536:
        return u8(1) + u16(v)
    return u8(2) + u32(v)


def wide(d=0):
    return u8(3) + u8(d)


def write(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# ---- fuzz_epdn_opt ----

def ipv4(tot_len, ttl=64, opts=b"", frag=0):
    ihl = (20 + len(opts)) // 4
    return (u8(0x40 | ihl) + u8(0) + be16(tot_len) + be16(0) + be16(frag) +
            u8(ttl) + u8(6) + be16(0) + bytes([10, 0, 0, 1, 10, 0, 0, 2]) +
            opts)


def epdn_opt(ttl, flags, lo, hi, version=1):
    return bytes([0x9e, 12, ttl, version << 4 | flags]) + be32(lo) + be32(hi)


def tcp(seq, flags=0x10, doff=5):
    return (be16(5001) + be16(80) + be32(seq) + be32(0) +
            u8(doff << 4) + u8(flags) + be16(65535) + be32(0) +
            bytes(4 * (doff - 5)))


def opt_seed(hdr, avail, flags, th, l4=0, stamp=(63, 0, 1500)):
    return (u8(len(hdr)) + u32(avail) + u8(flags) + hdr +
            u8(len(th)) + u32(l4) + th +
            u8(stamp[0]) + u8(stamp[1]) + u16(stamp[2]))


def seeds_epdn_opt():
    t = "fuzz_epdn_opt"
    l4 = 4  # flags bit 2: l4_len from the IPv4 header
    write(t, "plain-insert", opt_seed(ipv4(1040), 0, 2 | l4, tcp(1000)))
    write(t, "plain-mtu-defer", opt_seed(ipv4(1500), 0, 2 | l4, tcp(1000)))
    o = epdn_opt(60, 0x02, 100, 199)
    write(t, "carried-merge",
          opt_seed(ipv4(1500, 61, o), 0, 2 | l4, tcp(5000)))
    o = bytes([1, 7, 7, 4, 0, 0, 0, 0]) + epdn_opt(64, 0x01 | 0x02, 0, 0)
    write(t, "rr-then-empty-option",
          opt_seed(ipv4(1500, 64, o), 0, 2 | l4, tcp(0xffffff00)))
    o = epdn_opt(64, 0, 0xfffff000, 0x10)
    write(t, "gso-wrapping-range",
          opt_seed(ipv4(0, 64, o), 64000, 1 | l4, tcp(0xfffff800)))
    o = bytes([7, 40, 0, 0])
    write(t, "bad-option-length",
          opt_seed(ipv4(1500, 64, o), 0, 2 | l4, tcp(1)))
    o = epdn_opt(64, 0, 1, 2, version=2) + bytes([1, 1, 1, 0])
    write(t, "foreign-version",
          opt_seed(ipv4(1500, 64, o, frag=0x2000), 0, 2 | l4, tcp(7, 0x03)))


# ---- fuzz_epdn_table ----

RECORD, FIND, STAMP, SWEEP, RESIZE, REMOVE, MERGE = range(7)


def tkey(n):
    return u8(n % 192)  # one of the 64 pooled keys


def rng(lo, span):
    return u32(lo) + length(span)


def table_seed(flows, idle, clock, ops):
    return u16(flows - 1) + u32(idle) + u32(clock) + u64(0x9e3779b97f4a7c15) + \
        u64(7) + b"".join(ops)


def seeds_epdn_table():
    t = "fuzz_epdn_table"
    write(t, "record-merge-stamp", table_seed(64, 1000, 10, [
        u8(RECORD) + tkey(1) + rng(1000, 447) + off(0),
        u8(RECORD) + tkey(1) + rng(2000, 447) + off(10),
        u8(RECORD) + tkey(1) + rng(500, 447) + off(10),
        u8(FIND) + tkey(1) + off(1),
        u8(STAMP) + tkey(1) + off(1),
        u8(FIND) + tkey(1) + off(1)]))
    write(t, "full-set-evicts", table_seed(8, 1000, 100, [
        u8(RECORD) + tkey(k) + rng(k * 1000, 999) + off(1) for k in range(12)
    ] + [u8(SWEEP) + u16(4) + off(0)]))
    write(t, "idle-expiry-and-sweep", table_seed(16, 500, 1000, [
        u8(RECORD) + tkey(k) + rng(k, 0) + off(0) for k in range(10)
    ] + [u8(FIND) + tkey(3) + off(501), u8(SWEEP) + u16(1) + off(1),
         u8(SWEEP) + u16(100) + off(0), u8(RECORD) + tkey(3) + rng(7, 1) + off(0)]))
    write(t, "clock-wraps", table_seed(32, 300, 0xffffff00, [
        u8(RECORD) + tkey(5) + rng(1, 2) + off(0),
        u8(FIND) + tkey(5) + off(0xf4),
        u8(FIND) + tkey(5) + absolute(0x1f5),
        u8(RECORD) + tkey(5) + rng(0xffffff00, 0x1ff) + absolute(0)]))
    write(t, "span-reset-and-resize", table_seed(128, 1 << 30, 40, [
        u8(RECORD) + tkey(1) + rng(500, 100) + off(1),
        u8(RECORD) + tkey(1) + rng(500 + 0x40000000, 100) + off(1),
        u8(RECORD) + tkey(2) + rng(0, 0x3fffffff) + off(1),
        u8(RESIZE) + u16(15) + u64(2) + u64(3),
        u8(RECORD) + tkey(1) + rng(9, 9) + off(1),
        u8(REMOVE) + u16(0)]))
    write(t, "merges", table_seed(8, 100, 1, [
        u8(MERGE) + u32(0xfffffff0) + length(10) + absolute(5) + length(0x1b),
        u8(MERGE) + u32(0) + length(99) + absolute(0x3fffff9c) + length(99),
        u8(MERGE) + u32(0) + length(99) + absolute(0x80000000) + length(16),
        u8(MERGE) + u32(10) + wide(0) + off(5) + length(1)]))


# ---- fuzz_rn_recv ----

DATA, PACKET, ACK, ACKPKT, INIT, FIN, RSET = range(7)
NXT, QSTART, QEND, RIGHT = range(4)
MSS = 1000
EMPTY, ABSENT, DROPS, UNTRUSTED = 1, 0, 2, 3


def seq(mark, d):
    return u8(mark) + off(d)


def pk(n):
    """Packet n of the §IV examples: a range at rcv_nxt + n * MSS."""
    return seq(NXT, n * MSS) + length(MSS)


def ev(kind, lo=0, hi=0):
    return u8(kind) + seq(NXT, lo * MSS) + length((hi - lo + 1) * MSS)


def recv_seed(nxt, wnd, ops, setup=0):
    return u32(nxt) + length(wnd) + u8(7) + u8(setup) + u32(nxt) + \
        b"".join(ops)


def ip_epdn(flags, lo, n):
    """PACKET options, mode 1: an EPDN option at offset 0, EPDN-TTL = TTL."""
    return u8(1) + u8(0) + seq(NXT, lo * MSS) + u8(flags) + length(n * MSS)


def packet(ttl, ipopts, seg, tcpflags=0x10):
    # ttl, options, flags, payload, then the TCP header: seq, doff, flags
    return u8(PACKET) + u8(ttl) + ipopts + u8(0) + u16(MSS) + \
        seq(NXT, seg * MSS) + u8(0) + u8(tcpflags)


def tsopt(tsval):
    """NOP NOP TS: the 12 option bytes TCP sends, TSecr 0."""
    return u8(1) + u8(1) + u8(8) + u8(10) + be32(tsval) + be32(0)


def packet_ts(ttl, ipopts, seg, tsval):
    """A data packet whose TCP header carries a timestamp (doff 8)."""
    return u8(PACKET) + u8(ttl) + ipopts + u8(0) + u16(MSS) + \
        seq(NXT, seg * MSS) + u8(3) + u8(0x10) + tsopt(tsval)


def seeds_rn_recv():
    t = "fuzz_rn_recv"
    # PAWS: our ACKs carry timestamps; 1 and 3 are late, 1's
    # retransmission moves TS.Recent, and 3's late original is discarded
    # (offsets from rcv_nxt, which each ACK moves).
    write(t, "paws-late-original", recv_seed(1000, 64 * MSS, [
        u8(ACKPKT) + u8(1) + seq(NXT, 0) + u16(64) + u8(12) + tsopt(7),
        packet_ts(64, u8(2), 0, 100),
        u8(ACK) + seq(NXT, 1 * MSS) + length(64 * MSS),
        packet_ts(64, u8(2), 1, 100),
        packet_ts(64, u8(2), 3, 100),
        packet_ts(64, u8(2), 0, 200),
        u8(ACK) + seq(NXT, 2 * MSS) + length(64 * MSS),
        packet_ts(64, u8(2), 0, 100),
        u8(ACK) + seq(NXT, 0) + length(64 * MSS)]))
    # Seed 001 §II: Q = 2, P = <7, max 5, min 4>: 3 and 6 reordered.
    write(t, "sec2-example", recv_seed(1000, 64 * MSS, [
        u8(DATA) + pk(0) + ev(EMPTY),
        u8(DATA) + pk(2) + ev(EMPTY),
        u8(DATA) + pk(7) + ev(DROPS, 4, 5),
        u8(ACK) + seq(NXT, 3 * MSS) + length(64 * MSS),
        u8(DATA) + pk(0) + ev(EMPTY),
        u8(ACK) + seq(NXT, 1 * MSS) + length(64 * MSS)]))
    write(t, "packets-with-options", recv_seed(5000, 64 * MSS, [
        u8(PACKET) + u8(64) + u8(2) + u8(0) + u16(MSS) + seq(NXT, 0) +
        u8(0) + u8(0x10),
        packet(64, ip_epdn(0x02, 3, 2), 6),
        packet(64, ip_epdn(0x02 | 0x04, 8, 1), 10, 0x11),
        u8(ACK) + seq(NXT, 1 * MSS) + length(64 * MSS),
        u8(FIN) + seq(QEND, 0)]))
    write(t, "syn-and-sack", recv_seed(0xfffff000, 1000, [
        u8(ACKPKT) + u8(2) + seq(NXT, 0) + u16(512) + u8(2) + u8(1) +
        u8(7) + off(3000) + length(1000) + off(5000) + length(1000),
        u8(DATA) + seq(NXT, 5000) + length(1000) + ev(EMPTY),
        u8(ACKPKT) + u8(0) + seq(NXT, 1000) + u16(64) + u8(1) + u8(0) +
        off(2000) + length(500)]))
    # A range 2^31 - 1 wide, trusted, on a proven path.
    write(t, "hostile-2-31", recv_seed(0x7fffff00, 64 * MSS, [
        u8(DATA) + pk(0) + ev(EMPTY),
        u8(DATA) + pk(2) + u8(DROPS) + seq(NXT, 0) + wide(0xff),
        u8(DATA) + pk(4) + u8(DROPS) + seq(NXT, -0x400) + wide(0),
        u8(ACK) + seq(NXT, 0x7fffffff) + u8(2) + u32(0xffffffff)]))
    # Sixteen dropped ranges and one more: the drop list coarsens.
    write(t, "drop-cap", recv_seed(0, 200 * MSS, [
        u8(DATA) + pk(99) + ev(EMPTY)] + [
        u8(DATA) + pk(99) + ev(DROPS, 10 + 3 * i, 10 + 3 * i)
        for i in range(18)]))
    write(t, "range-sets", recv_seed(1 << 31, MSS, [
        u8(RSET) + u8(0 << 2) + u16(100) + u8(50),
        u8(RSET) + u8(0 << 2) + u16(200) + u8(50),
        u8(RSET) + u8(1 << 2) + u16(120) + u8(10),
        u8(RSET) + u8(1 | 0 << 2) + u16(90) + u8(200),
        u8(RSET) + u8(2 << 2) + u16(130) + u8(100),
        u8(RSET) + u8(3 << 2) + u16(125) + u8(0),
        u8(RSET) + u8(4 << 2) + u16(140) + u8(0)]))


# ---- fuzz_rn_sender ----

WIRE, SACK_ACK, ENTER, UNDO, LTSTOP, RTT, PURE = range(7)


def wire(ack_d, dn, blocks, ece=0):
    # mode 0: built; opts mode 0: SACK only; the blocks near the ACK
    opts = u8(0) + u8(len(blocks) - 1) + b"".join(
        off(s) + length(n) for s, n in blocks)
    return u8(WIRE) + u8(0) + off(ack_d) + opts + u32(1) + \
        u8(0x02 if dn else 0) + u8(0x40 if ece else 0)


def sack_ack(una_d, sacked, cwnd, bits=0, state=0, ms=1):
    return (u8(SACK_ACK) + u8(bits) + off(una_d) + off(ms) + length(sacked) +
            length(cwnd + sacked) + length(cwnd) + length(10000) +
            u32(110000) + u32(100000) + u8(state) + u8(0) + off(100) +
            u32(500000))


def sender_seed(ops, lt=1):
    return u16(100) + u16(296) + u8(0) + u8(lt) + b"".join(ops)


def seeds_rn_sender():
    t = "fuzz_rn_sender"
    train = []
    for i in range(1, 8):
        train += [wire(0, 1, [(2000, 1000)]), sack_ack(0, i, 10)]
    write(t, "reorder-train", sender_seed(
        [sack_ack(1000, 0, 10)] + train + [sack_ack(20000, 0, 10)]))
    write(t, "drop-train", sender_seed([
        wire(1000, 0, [(2000, 1000)]), sack_ack(1000, 1, 50),
        wire(0, 1, [(3000, 1000)]), sack_ack(0, 2, 50),
        wire(0, 0, [(4000, 1000)]), sack_ack(0, 3, 50)]))
    write(t, "false-fast-retransmit", sender_seed([
        wire(1000, 1, [(2000, 1000)]), sack_ack(1000, 1, 50),
        u8(ENTER) + u8(2) + off(0) + length(1448) + off(10),
        wire(100, 0, [(-100, 1448), (1000, 1000)]),
        sack_ack(100, 0, 25, bits=2, state=1),
        sack_ack(0, 0, 25, bits=2, state=1)]))
    write(t, "rto-fallback-undo", sender_seed([
        wire(1000, 1, [(2000, 1000)]), sack_ack(1000, 1, 50),
        u8(ENTER) + u8(1) + off(0) + length(0),
        sack_ack(0, 5, 1, state=1),
        wire(4000, 1, [(2000, 1000)]), sack_ack(4000, 1, 10),
        u8(UNDO), sack_ack(0, 2, 10), u8(LTSTOP)]))
    write(t, "ece-and-rtt", sender_seed([
        sack_ack(500, 0, 50, bits=1),
        wire(500, 1, [(1000, 1000)], ece=1), sack_ack(500, 1, 50),
        u8(RTT) + length(100000) + u32(200000),
        u8(RTT) + length(180000) + u32(200000),
        u8(RTT) + wide(0) + u32(0),
        u8(PURE) + u32(200) + u32(110000) + u32(100000) + u32(50) +
        u32(2448) + off(0) + u32(3)], lt=0))


# ---- fuzz_r ----

R_ACK, R_BEGIN, R_END, R_PURE, R_GROW = range(5)


def r_ack(una_d, ms_d, dn_set, dn_clear, bits=1):
    return u8(R_ACK) + u8(bits) + off(una_d) + u32(100 * 8000) + \
        off(ms_d) + u16(dn_set) + u16(dn_clear)


def seeds_r():
    t = "fuzz_r"
    write(t, "modified-then-drop", u8(0) + b"".join([
        r_ack(1000, 1000, 3, 0), u8(R_BEGIN) + u32(40),
        u8(R_END) + u8(0) + u32(40),
        r_ack(8000, 2000, 0, 3), u8(R_BEGIN) + u32(40),
        u8(R_END) + u8(0) + u32(40)]))
    write(t, "repeat-within-rtt", u8(0) + b"".join([
        r_ack(20000, 4000, 3, 0), u8(R_BEGIN) + u32(40),
        u8(R_END) + u8(0) + u32(40),
        r_ack(0, 50, 3, 0), u8(R_BEGIN) + u32(40),
        r_ack(0, 100, 3, 0)]))
    write(t, "turns-standard", u8(2) + b"".join([
        r_ack(1000, 5000, 3, 0), u8(R_BEGIN) + u32(64),
        r_ack(1448, 10, 4, 0), r_ack(0, 10, 4, 1),
        r_ack(0, 10, 3, 0), u8(R_BEGIN) + u32(64),
        r_ack(0, 10, 3, 0, bits=1 | 8), u8(R_BEGIN) + u32(64),
        r_ack(0, 10, 3, 0, bits=1 | 4),
        u8(R_END) + u8(1) + u32(40), u8(R_PURE) + u32(5) + u32(20) +
        u32(40) + u8(1)]))
    # wnd, delivered, min RTT (us), rtt0_ms: slow start to the saved 40,
    # Reno, Hybla at a GEO RTT, and a window at the top of u32.
    write(t, "grow", u8(0) + b"".join([
        r_ack(1000, 1000, 3, 0), u8(R_BEGIN) + u32(40)] + [
        u8(R_GROW) + u32(w) + u32(a) + u32(rtt) + u16(rtt0)
        for w, a, rtt, rtt0 in ((20, 30, 600000, 0), (40, 80, 600000, 0),
                                (75, 75, 600000, 25), (75, 75, 600000, 150),
                                (0xfffffffe, 0xffffffff, 1000, 0))]))


# ---- fuzz_esack ----

E_LOSS, E_TIMEOUT, E_CANCEL, E_UNDO, E_ACK, E_PURE = range(6)
EMSS = 460


def loss(una_d, nxt_d, cwnd, span=1, first=60):
    return (u8(E_LOSS) + off(una_d) + off(nxt_d) + length(cwnd) +
            length(max(cwnd // 2, 2)) + u16(EMSS) + u32(first) + u32(span))


def seeds_esack():
    t = "fuzz_esack"
    write(t, "a2-then-b1-b2", u32(70) + u32(0) + b"".join([
        loss(0, 88 * EMSS, 88), u8(E_ACK) + off(88 * EMSS),
        loss(10 * EMSS, 50 * EMSS, 53),
        loss(100 * EMSS, 80 * EMSS, 120), loss(EMSS, 80 * EMSS, 80)]))
    write(t, "timeouts", u32(70) + u32(0xffff0000) + b"".join([
        loss(0, 40 * EMSS, 40), u8(E_TIMEOUT) + off(55 * EMSS),
        u8(E_TIMEOUT) + off(55 * EMSS), loss(60 * EMSS, 10 * EMSS, 30),
        u8(E_TIMEOUT) + off(20 * EMSS)]))
    write(t, "undo-cancel-expiry", u32(70) + u32(1000) + b"".join([
        loss(0, 40 * EMSS, 40), u8(E_UNDO), u8(E_UNDO),
        loss(0, 40 * EMSS, 40), u8(E_CANCEL),
        loss(0, 40 * EMSS, 40), u8(E_ACK) + off(40 * EMSS),
        u8(E_ACK) + off(80 * EMSS), loss(100, 100, 30)]))
    write(t, "span-default-and-max", u32(0xffffffff) + u32(0) + b"".join([
        loss(0, 100, 300, span=0), u8(E_ACK) + off(0x7fff0000),
        loss(0, 100, 300, span=64, first=101),
        loss(-1, 100, 0xffff, span=65, first=49),
        u8(E_PURE) + u32(0xffffffff) + u32(60) + u32(70) + u8(3)]))


# ---- fuzz_tc_epdn ----

# Commands after "epdn", most of them from tests/tc-cases/epdn.json.
TC_PICKS = [
    "", "limit 300", "limit 0x10", "bytelimit 450kb", "bytelimit 4294967295",
    "idle 1234567", "idle 250ms corrupt 0.1% red min 3k max 9k probability 0.5 ecn",
    "limit 300 bytelimit 450kb mode v2 idle 250ms flows 4096 corrupt 0.1% "
    "red min 30000 max 90000 probability 0.02 ewma 7 ecn harddrop",
    "red off", "red min 100k", "help", "mode v4",
]


def seeds_tc_epdn():
    t = "fuzz_tc_epdn"
    for n, cmd in enumerate(TC_PICKS):
        words = shlex.split(cmd)
        write(t, "cmd-%02d" % n, b"\0" + b"\0".join(w.encode() for w in words))
    # What a kernel dumps: every attribute, for epdn_print_opt().
    dump = b"".join(struct.pack("<HHI", 8, a, v) for a, v in
                    ((1, 1000), (2, 0), (4, 2000000), (5, 65536), (6, 0)))
    dump += struct.pack("<HHB3x", 5, 3, 3) + struct.pack("<HHB3x", 5, 7, 0)
    write(t, "print-dump", b"\xff" + dump)


if __name__ == "__main__":
    seeds_epdn_opt()
    seeds_epdn_table()
    seeds_rn_recv()
    seeds_rn_sender()
    seeds_r()
    seeds_esack()
    seeds_tc_epdn()
