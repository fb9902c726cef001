# SPDX-License-Identifier: GPL-2.0
"""TCP segments over IPv4 and IPv6, built and parsed byte by byte.

No scapy: the harness parses every packet the kernel sends, and scapy's
import and dissection cost seconds under software emulation.  Only what a
scripted peer needs: IPv4 (with options) and IPv6 (no extension headers),
TCP with MSS, window scale, SACK-permitted, SACK, timestamps, and the
reserved bit RN-TCP uses (include/satnet/rn_wire.h).
"""

import ipaddress
import struct

from lib.packets import csum   # noqa: F401 - the scripts take it from here

PROTO_TCP = 6
FLAG_BITS = "FSRPAUEC"          # bit i of TCP header byte 13
DN_MASK = 0x02                  # drop-negative bit, in header byte 12

OPT_EOL, OPT_NOP, OPT_MSS, OPT_WS, OPT_SACKOK, OPT_SACK, OPT_TS = \
    0, 1, 2, 3, 4, 5, 8

EPDN_OPT_TYPE = 0x9e
EPDN_EMPTY, EPDN_HOST, EPDN_V2, EPDN_UNKNOWN = 0x01, 0x02, 0x04, 0x08


class Malformed(Exception):
    pass


def flags_bits(s):
    bits = 0
    for ch in s:
        if ch == ".":
            continue
        i = FLAG_BITS.find(ch)
        if i < 0:
            raise ValueError("unknown TCP flag %r in %r" % (ch, s))
        bits |= 1 << i
    return bits


def flags_str(bits):
    return "".join(ch for i, ch in enumerate(FLAG_BITS) if bits & (1 << i))


def epdn_option(ttl, flags, lo=0, hi=0, version=1):
    """The EPDN IPv4 option (include/satnet/epdn_wire.h): 12 bytes."""
    return struct.pack("!BBBBII", EPDN_OPT_TYPE, 12, ttl,
                       (version << 4) | (flags & 0x0f),
                       lo & 0xffffffff, hi & 0xffffffff)


class Segment:
    """One TCP segment with its IP header fields; sequence numbers absolute."""

    def __init__(self, src, dst, sport, dport, seq=0, ack=0, flags=0,
                 win=65535, payload=b"", mss=None, wscale=None,
                 sackok=False, sack=(), ts=None, dn=False, ttl=64,
                 ipopts=b"", tos=0, doff=None, extra_opts=b""):
        self.src, self.dst = src, dst
        self.sport, self.dport = sport, dport
        self.seq, self.ack = seq & 0xffffffff, ack & 0xffffffff
        self.flags = flags
        self.win = win
        self.payload = payload
        self.mss, self.wscale, self.sackok = mss, wscale, sackok
        self.sack = list(sack)          # absolute (start, end) blocks
        self.ts = ts                    # (tsval, tsecr) or None
        self.dn = dn
        self.ttl, self.ipopts, self.tos = ttl, ipopts, tos
        self.doff = doff
        self.extra_opts = extra_opts
        self.bad_csum = False           # a TCP checksum that fails

    @property
    def family(self):
        return 6 if ":" in self.src else 4

    @property
    def end(self):
        return (self.seq + len(self.payload) + bool(self.flags & 2) +
                bool(self.flags & 1)) & 0xffffffff

    def tcp_options(self):
        o = b""
        if self.mss is not None:
            o += struct.pack("!BBH", OPT_MSS, 4, self.mss)
        if self.sackok:
            o += struct.pack("!BB", OPT_SACKOK, 2)
        if self.ts is not None:
            if not self.sackok:
                o += struct.pack("!BB", OPT_NOP, OPT_NOP)
            o += struct.pack("!BBII", OPT_TS, 10, *self.ts)
        if self.wscale is not None:
            o += struct.pack("!BBBB", OPT_NOP, OPT_WS, 3, self.wscale)
        if self.sack:
            o += struct.pack("!BBBB", OPT_NOP, OPT_NOP, OPT_SACK,
                             2 + 8 * len(self.sack))
            for a, b in self.sack:
                o += struct.pack("!II", a & 0xffffffff, b & 0xffffffff)
        o += self.extra_opts
        o += bytes([OPT_EOL]) * (-len(o) % 4)
        if len(o) > 40:
            raise ValueError("TCP options take %d bytes, more than 40"
                             % len(o))
        return o

    def pack(self):
        opts = self.tcp_options()
        doff = self.doff if self.doff is not None else 5 + len(opts) // 4
        th = struct.pack("!HHIIBBHHH", self.sport, self.dport, self.seq,
                         self.ack, (doff << 4) | (DN_MASK if self.dn else 0),
                         self.flags, self.win, 0, 0) + opts + self.payload
        s, d = (ipaddress.ip_address(a).packed for a in (self.src, self.dst))
        if self.family == 4:
            pseudo = s + d + struct.pack("!BBH", 0, PROTO_TCP, len(th))
        else:
            pseudo = s + d + struct.pack("!IxxxB", len(th), PROTO_TCP)
        check = csum(pseudo + th) ^ (0x5a5a if self.bad_csum else 0)
        th = th[:16] + struct.pack("!H", check) + th[18:]
        if self.family == 6:
            return struct.pack("!IHBB", (6 << 28) | (self.tos << 20),
                               len(th), PROTO_TCP, self.ttl) + s + d + th
        ipopts = self.ipopts + b"\0" * (-len(self.ipopts) % 4)
        ihl = 5 + len(ipopts) // 4
        ip = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, self.tos,
                         ihl * 4 + len(th), 1, 0x4000, self.ttl, PROTO_TCP,
                         0, s, d) + ipopts
        return ip[:10] + struct.pack("!H", csum(ip)) + ip[12:] + th


def parse_tcp_options(buf, seg):
    i = 0
    while i < len(buf):
        kind = buf[i]
        if kind == OPT_EOL:
            break
        if kind == OPT_NOP:
            i += 1
            continue
        if i + 1 >= len(buf) or buf[i + 1] < 2 or i + buf[i + 1] > len(buf):
            raise Malformed("TCP option %d runs past the header" % kind)
        n = buf[i + 1]
        body = buf[i + 2:i + n]
        if kind == OPT_MSS and n == 4:
            seg.mss = struct.unpack("!H", body)[0]
        elif kind == OPT_WS and n == 3:
            seg.wscale = body[0]
        elif kind == OPT_SACKOK and n == 2:
            seg.sackok = True
        elif kind == OPT_TS and n == 10:
            seg.ts = struct.unpack("!II", body)
        elif kind == OPT_SACK and (n - 2) % 8 == 0:
            seg.sack = [struct.unpack("!II", body[j:j + 8])
                        for j in range(0, n - 2, 8)]
        i += n


def parse(pkt):
    """A Segment from a raw IP packet, or None when it is not TCP."""
    if not pkt:
        return None
    ver = pkt[0] >> 4
    if ver == 4:
        if len(pkt) < 20:
            raise Malformed("short IPv4 header")
        ihl = (pkt[0] & 0x0f) * 4
        tot = struct.unpack("!H", pkt[2:4])[0]
        if pkt[9] != PROTO_TCP:
            return None
        src = str(ipaddress.IPv4Address(pkt[12:16]))
        dst = str(ipaddress.IPv4Address(pkt[16:20]))
        tos, ttl, ipopts = pkt[1], pkt[8], bytes(pkt[20:ihl])
        th = pkt[ihl:tot]
    elif ver == 6:
        if len(pkt) < 40:
            raise Malformed("short IPv6 header")
        plen = struct.unpack("!H", pkt[4:6])[0]
        if pkt[6] != PROTO_TCP:
            return None
        src = str(ipaddress.IPv6Address(pkt[8:24]))
        dst = str(ipaddress.IPv6Address(pkt[24:40]))
        tos = (struct.unpack("!I", pkt[0:4])[0] >> 20) & 0xff
        ttl, ipopts = pkt[7], b""
        th = pkt[40:40 + plen]
    else:
        return None
    if len(th) < 20:
        raise Malformed("short TCP header")
    sport, dport, seq, ack, off, flags, win = \
        struct.unpack("!HHIIBBH", th[:16])
    doff = (off >> 4) * 4
    if doff < 20 or doff > len(th):
        raise Malformed("bad TCP data offset")
    seg = Segment(src, dst, sport, dport, seq, ack, flags, win,
                  bytes(th[doff:]), ttl=ttl, ipopts=ipopts, tos=tos,
                  dn=bool(off & DN_MASK))
    parse_tcp_options(th[20:doff], seg)
    return seg
