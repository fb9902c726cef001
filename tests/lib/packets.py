# SPDX-License-Identifier: GPL-2.0
"""Packets for the tests: crafted (IPv4, TCP, the EPDN option), sent on
AF_PACKET sockets, and captured (tcpdump -w at a device, read back)."""

import errno
import os
import random
import select
import signal
import socket
import struct
import subprocess
import tempfile
import time

from satnet.host import TopologyError


# ---- crafted packets (IPv4, TCP, the EPDN option) ----------------------------

OPT_TYPE = 0x9e                     # the EPDN IPv4 option (epdn_wire.h)
F_EMPTY, F_HOST, F_V2 = 1, 2, 4
ETH_P_ALL, ETH_P_IP, ETH_P_IPV6, ETH_P_8021Q = 0x0003, 0x0800, 0x86dd, 0x8100
RR_OPT = bytes([7, 7, 4, 0, 0, 0, 0])     # record route, one empty slot


def csum(data):
    """The Internet checksum."""
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def epdn_opt(ttl, flags, lo=0, hi=0, version=1, length=12):
    """An EPDN option; a @length below 12 cuts it short (malformed)."""
    body = struct.pack("!BBBBII", OPT_TYPE, length, ttl, version << 4 | flags,
                       lo, hi)
    return body[:length] if length < 12 else body


def ipv4(src, dst, payload, ttl=64, proto=6, opts=b"", frag=0, ident=0x1234,
         tos=0):
    """An IPv4 packet with a correct header checksum; @tos carries the ECN
    field in its low two bits."""
    opts += b"\0" * (-len(opts) % 4)
    ihl = 5 + len(opts) // 4
    hdr = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, tos, ihl * 4 + len(payload),
                      ident, frag, ttl, proto, 0, socket.inet_aton(src),
                      socket.inet_aton(dst)) + opts
    hdr = hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:]
    return hdr + payload


def tcp(sport, dport, seq, paylen, flags=0x18, doff=5):
    """A TCP header (checksum 0) and @paylen bytes: enough for a qdisc."""
    return struct.pack("!HHIIBBHHH", sport, dport, seq, 1, doff << 4, flags,
                       65535, 0, 0) + b"x" * paylen


def raw_tcp(p):
    """A TCP/IPv4 packet that a host accepts (both checksums right) from a
    dict: src, dst, sport, dport, seq, ack, flags ("FSRPAU" letters), win,
    len (payload bytes), ttl, opts (IPv4 options, hex strings), tcpopts
    (TCP options, bytes) and csum_xor (flips TCP checksum bits)."""
    src, dst = socket.inet_aton(p["src"]), socket.inet_aton(p["dst"])
    flags = sum(1 << "FSRPAU".index(c) for c in p.get("flags", "PA"))
    topts = p.get("tcpopts", b"")
    topts += b"\0" * (-len(topts) % 4)
    data = b"x" * p.get("len", 100)
    th = struct.pack("!HHIIBBHHH", p.get("sport", 4000), p.get("dport", 80),
                     p.get("seq", 1), p.get("ack", 0),
                     (5 + len(topts) // 4) << 4, flags, p.get("win", 65535),
                     0, 0) + topts + data
    pseudo = src + dst + struct.pack("!BBH", 0, 6, len(th))
    check = csum(pseudo + th) ^ p.get("csum_xor", 0)
    th = th[:16] + struct.pack("!H", check) + th[18:]
    opts = b"".join(bytes.fromhex(h) for h in p.get("opts", []))
    return ipv4(p["src"], p["dst"], th, ttl=p.get("ttl", 64), opts=opts,
                ident=1)


def xmit(s, frame, addr=None):
    """Send on an AF_PACKET socket; a qdisc drop comes back as ENOBUFS.
    True when the frame was queued."""
    try:
        if addr:
            s.sendto(frame, addr)
        else:
            s.send(frame)
    except OSError as e:
        if e.errno != errno.ENOBUFS:
            raise
        return False
    return True


def odd_frames(src, dst, sport=8001):
    """(ethertype, payload) pairs of flow @src:@sport -> @dst:80 that an
    EPDN router must pass byte for byte: not IPv4, fragments, malformed
    headers, options it must not touch, not TCP, odd TCP headers."""
    g = ipv4(src, dst, tcp(sport, 80, 5000, 100))
    tcp_ok = tcp(sport, 80, 6000, 100)
    return [
        (ETH_P_IPV6, bytes([0x60]) + b"\0" * 60),                  # IPv6
        (ETH_P_8021Q, b"\x45\x00\x08\x00" + g),       # VLAN tag in payload
        (ETH_P_IP, ipv4(src, dst, tcp_ok, frag=0x2000)),           # MF
        (ETH_P_IP, ipv4(src, dst, b"x" * 64, frag=10)),            # offset
        (ETH_P_IP, g[:30]),                                        # truncated
        (ETH_P_IP, b""),                                           # empty
        (ETH_P_IP, b"\x45"),                                       # 1 byte
        (ETH_P_IP, bytes([0x4f]) + g[1:]),                         # ihl 15
        (ETH_P_IP, bytes([0x44]) + g[1:]),                         # ihl 4
        (ETH_P_IP, bytes([0x65]) + g[1:]),                         # version 6
        (ETH_P_IP, g[:2] + b"\x05\xdc" + g[4:]),                   # tot_len >
        (ETH_P_IP, g[:2] + b"\x00\x10" + g[4:]),                   # tot_len <
        (ETH_P_IP, bytes([0x46]) + g[1:20] + bytes([7, 40, 4, 0]) +
         g[20:]),                                                  # opt len
        (ETH_P_IP, ipv4(src, dst, tcp_ok, opts=bytes([0x9e, 8]) +
                        b"\0" * 6)),                               # EPDN len 8
        (ETH_P_IP, ipv4(src, dst, tcp_ok, opts=epdn_opt(64, 0, 1, 2,
                                                        version=2))),
        (ETH_P_IP, ipv4(src, dst, tcp_ok, opts=b"\0" + epdn_opt(64, 0)
                        [:11])),                                   # EOL first
        (ETH_P_IP, ipv4(src, dst, tcp_ok, proto=17)),              # UDP
        (ETH_P_IP, ipv4(src, dst, b"\x01\x02")),                   # TCP 2 B
        (ETH_P_IP, ipv4(src, dst, tcp(sport, 80, 6000, 10,
                                      doff=15))),                  # doff > len
        (ETH_P_IP, ipv4(src, dst, tcp(sport, 80, 6000, 100,
                                      doff=4))),                   # doff 4
        (ETH_P_IP, ipv4(src, dst, tcp(sport, 80, 6000, 0,
                                      flags=0x10))),               # pure ACK
    ]


def fuzz_frames(n, seed, src, dst, sport=8100):
    """@n crafted TCP/IPv4 packets of four flows (@sport..@sport+3 ->
    @dst:80), mutated: headers, lengths, options, flags, truncation and
    wrapping sequence numbers; a few IPv6 or VLAN-tagged."""
    rnd = random.Random(seed)
    out = []
    for _ in range(n):
        port = sport + rnd.randrange(4)
        seq = rnd.choice([rnd.randrange(1 << 32), 0xffffff00 +
                          rnd.randrange(512) & 0xffffffff])
        opts = rnd.choice([b"", epdn_opt(rnd.randrange(256),
                                         rnd.randrange(16),
                                         rnd.randrange(1 << 32),
                                         rnd.randrange(1 << 32)),
                           RR_OPT, b"\x01" * 3 + epdn_opt(64, 1),
                           epdn_opt(64, 3) + RR_OPT])
        p = bytearray(ipv4(src, dst, tcp(port, 80, seq, rnd.randrange(200),
                                         flags=rnd.randrange(256)),
                           opts=opts))
        for _ in range(rnd.randrange(4)):
            what = rnd.randrange(6)
            if what == 0 and p:           # any header byte
                p[rnd.randrange(min(len(p), 80))] = rnd.randrange(256)
            elif what == 1:
                p = p[:rnd.randrange(len(p) + 1)]
            elif what == 2 and p:
                p[0] = 0x40 | rnd.randrange(16)
            elif what == 3 and len(p) >= 4:
                struct.pack_into("!H", p, 2, rnd.randrange(1 << 16))
            elif what == 4 and len(p) >= 8:
                struct.pack_into("!H", p, 6, rnd.choice([0x2000, 1, 0x4000]))
            elif what == 5:
                ihl = (p[0] & 15) * 4 if p else 0
                if len(p) > ihl + 12:
                    p[ihl + 12] = rnd.randrange(256)
        etype = rnd.choices([ETH_P_IP, ETH_P_IPV6, ETH_P_8021Q],
                            [95, 3, 2])[0]
        if etype == ETH_P_8021Q:          # a tag, then the IPv4 packet
            p = struct.pack("!HH", rnd.randrange(1 << 16), ETH_P_IP) + p
        out.append((etype, bytes(p)))
    return out


# ---- captured packets (tcpdump -w, read back) --------------------------------

def parse_epdn(ip):
    """The EPDN option of an IPv4 packet as a dict, or None."""
    ihl = (ip[0] & 15) * 4
    i = 20
    while i < min(ihl, len(ip)):
        t = ip[i]
        if t == 0:
            break
        if t == 1:
            i += 1
            continue
        if i + 1 >= len(ip):
            break
        ln = max(ip[i + 1], 2)
        if t == OPT_TYPE and ln == 12 and i + 12 <= len(ip):
            ettl, vf, lo, hi = struct.unpack("!BBII", ip[i + 2:i + 12])
            return dict(ettl=ettl, version=vf >> 4, flags=vf & 15,
                        min=lo, max=hi, at=i)
        i += ln
    return None


def parse_sack(opts):
    """The SACK blocks [(left, right), ...] among TCP options."""
    i, out = 0, []
    while i < len(opts):
        kind = opts[i]
        if kind == 0:
            break
        if kind == 1:
            i += 1
            continue
        if i + 1 >= len(opts) or opts[i + 1] < 2:
            break
        ln = opts[i + 1]
        if kind == 5:
            body = opts[i + 2:i + ln]
            out += [struct.unpack("!II", body[j:j + 8])
                    for j in range(0, len(body) - 7, 8)]
        i += ln
    return out


def parse_ip(ip):
    """What the tests look at in a captured IPv4 packet; for TCP also the
    ports, sequence and ACK numbers, payload length, the drop-negative bit
    (the lowest reserved bit, tcp[12] & 2) and the SACK blocks."""
    ihl = (ip[0] & 15) * 4
    d = dict(ttl=ip[8], ihl=ihl, len=struct.unpack("!H", ip[2:4])[0],
             ident=struct.unpack("!H", ip[4:6])[0],
             proto=ip[9], src=socket.inet_ntoa(ip[12:16]),
             csum_ok=csum(ip[:ihl]) == 0, opt=parse_epdn(ip),
             sport=None, seq=None)
    if ip[9] == 6 and len(ip) >= ihl + 14:
        d["sport"], d["dport"], d["seq"], d["ack"] = struct.unpack(
            "!HHII", ip[ihl:ihl + 12])
        doff = (ip[ihl + 12] >> 4) * 4
        d["payload"] = d["len"] - ihl - doff
        d["dn"] = bool(ip[ihl + 12] & 0x02)
        d["sack"] = parse_sack(ip[ihl + 20:ihl + doff])
    return d


def read_pcap(path, times=False):
    """The frames of a pcap file (either byte order), or with @times
    (seconds, frame) pairs."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        return []
    endian = "<" if data[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") \
        else ">"
    unit = 1e-9 if data[:4] in (b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d") \
        else 1e-6
    out, off = [], 24
    while off + 16 <= len(data):
        sec, frac, incl = struct.unpack(endian + "III", data[off:off + 12])
        off += 16
        if off + incl > len(data):
            break
        frame = data[off:off + incl]
        out.append((sec + frac * unit, frame) if times else frame)
        off += incl
    return out


class Tcpdump:
    """tcpdump -w at a device of namespace @ns; stop() parses what it
    wrote: the IPv4 packets (parse_ip, and "t" the capture's timestamp
    in seconds), in the order the device saw them."""

    def __init__(self, ns, dev, filt, snaplen=256):
        fd, self.path = tempfile.mkstemp(prefix="satnet-", suffix=".pcap")
        os.close(fd)
        self.proc = subprocess.Popen(
            ["ip", "netns", "exec", ns, "tcpdump", "-Z", "root", "-n", "-U",
             "-s", str(snaplen), "-i", dev, "-w", self.path, filt],
            stderr=subprocess.PIPE, text=True)
        text, end = "", time.time() + 60
        while "listening on" not in text and time.time() < end:
            ready, _, _ = select.select([self.proc.stderr], [], [], 1)
            line = self.proc.stderr.readline() if ready else ""
            if ready and not line:
                break
            text += line
        if "listening on" not in text:
            self.proc.kill()
            raise TopologyError("tcpdump did not start: " + text)

    def packets(self):
        return [dict(parse_ip(f[14:]), t=t)
                for t, f in read_pcap(self.path, times=True)
                if len(f) >= 34 and f[12:14] == b"\x08\x00"]

    def stop(self, want=0, timeout=20):
        """Stop once @want packets were written (or after @timeout)."""
        end = time.time() + timeout
        while time.time() < end and len(self.packets()) < want:
            time.sleep(0.1)
        time.sleep(0.3)
        self.proc.send_signal(signal.SIGINT)
        self.proc.communicate(timeout=30)
        seen = self.packets()
        os.unlink(self.path)
        return seen
