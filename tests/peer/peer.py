# SPDX-License-Identifier: GPL-2.0
"""The scripted peer: a TUN device in this network namespace plays the
remote TCP endpoint of a real kernel socket, packet by packet.

tests/peer/README.md documents the API that scripts use.  Sequence numbers
in the API are relative (SYN = 0, first data byte = 1, in each direction);
segments on the wire carry absolute ones.
"""

import ctypes
import errno
import fcntl
import os
import select
import socket
import struct
import subprocess
import time

from satnet import kmod
from packet import (Segment, parse, flags_bits, flags_str, epdn_option,
                    Malformed)

TUNSETIFF = 0x400454ca
IFF_TUN, IFF_NO_PI = 0x0001, 0x1000
TCP_CONGESTION, TCP_INFO, TCP_CC_INFO = 13, 11, 26

HOST = {4: "192.0.2.1", 6: "fd00:2::1"}
PEER = {4: "192.0.2.2", 6: "fd00:2::2"}
PEER_ISN = 0x40000000           # the peer's initial sequence number

# A BPF congestion control cannot have get_info on 6.1: ours store what
# it would report (the DCTCP slot of TCP_CC_INFO) in a socket storage map
# of this name (tcp_esack/esack.bpf.c).
BPF_CC_INFO_MAP = b"satnet_cc_info"
SYS_BPF = 321                   # x86_64
BPF_MAP_LOOKUP_ELEM, BPF_MAP_GET_NEXT_ID = 1, 12
BPF_MAP_GET_FD_BY_ID, BPF_OBJ_GET_INFO_BY_FD = 14, 15
_libc = ctypes.CDLL(None, use_errno=True)


def _bpf(cmd, attr):
    """bpf(2) with @attr, a ctypes buffer; the result or -errno."""
    r = _libc.syscall(ctypes.c_long(SYS_BPF), ctypes.c_int(cmd), attr,
                      ctypes.c_uint(len(attr)))
    return r if r >= 0 else -ctypes.get_errno()


def bpf_sk_storage(sock, name, size):
    """@size bytes that a socket storage map named @name holds for
    @sock, or None: no such map (or no bpf(2)), or no entry for it."""
    map_id = 0
    while True:
        attr = ctypes.create_string_buffer(struct.pack("=I", map_id), 64)
        if _bpf(BPF_MAP_GET_NEXT_ID, attr) < 0:
            return None
        map_id = struct.unpack_from("=I", attr.raw, 4)[0]
        attr = ctypes.create_string_buffer(struct.pack("=I", map_id), 64)
        fd = _bpf(BPF_MAP_GET_FD_BY_ID, attr)
        if fd < 0:
            continue
        try:
            info = ctypes.create_string_buffer(80)
            attr = ctypes.create_string_buffer(struct.pack(
                "=IIQ", fd, len(info), ctypes.addressof(info)), 64)
            if _bpf(BPF_OBJ_GET_INFO_BY_FD, attr) < 0 or \
                    info.raw[24:40].rstrip(b"\0") != name:
                continue
            key = ctypes.c_int(sock.fileno())
            value = ctypes.create_string_buffer(size)
            attr = ctypes.create_string_buffer(struct.pack(
                "=IIQQQ", fd, 0, ctypes.addressof(key),
                ctypes.addressof(value), 0), 64)
            if _bpf(BPF_MAP_LOOKUP_ELEM, attr) == 0:
                return value.raw
        finally:
            os.close(fd)

# struct tcp_info of include/uapi/linux/tcp.h, as in 6.1 (232 bytes).
TCP_INFO_FIELDS = (
    "state ca_state retransmits probes backoff options wscale app_limited "
    "rto ato snd_mss rcv_mss unacked sacked lost retrans fackets "
    "last_data_sent last_ack_sent last_data_recv last_ack_recv "
    "pmtu rcv_ssthresh rtt rttvar snd_ssthresh snd_cwnd advmss reordering "
    "rcv_rtt rcv_space total_retrans "
    "pacing_rate max_pacing_rate bytes_acked bytes_received "
    "segs_out segs_in notsent_bytes min_rtt data_segs_in data_segs_out "
    "delivery_rate busy_time rwnd_limited sndbuf_limited "
    "delivered delivered_ce bytes_sent bytes_retrans "
    "dsack_dups reord_seen rcv_ooopack snd_wnd").split()
TCP_INFO_FMT = "=8B24I4Q6I4Q2I2Q4I"
CC_INFO_FIELDS = ("enabled", "ce_state", "alpha", "ab_ecn", "ab_tot")
CA_STATES = ("Open", "Disorder", "CWR", "Recovery", "Loss")


class ScriptFailure(Exception):
    pass


class Info:
    """tcp_info, fields as attributes, in the kernel's units."""

    def __init__(self, fields):
        self.__dict__.update(fields)

    def __repr__(self):
        return ("ca_state %s cwnd %d ssthresh %d reordering %d unacked %d "
                "sacked %d lost %d retrans %d total_retrans %d rtt %dus "
                "rto %dus" % (
                    CA_STATES[self.ca_state] if self.ca_state < 5
                    else self.ca_state, self.snd_cwnd, self.snd_ssthresh,
                    self.reordering, self.unacked, self.sacked, self.lost,
                    self.retrans, self.total_retrans, self.rtt, self.rto))


def sh(*argv):
    r = subprocess.run(argv, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError("%s: %s" % (" ".join(argv), r.stderr.strip()))
    return r.stdout


class Peer:
    """One script run: the TUN device, the clock and the timeline."""

    OPEN, DISORDER, CWR, RECOVERY, LOSS = range(5)

    def __init__(self, family=4, cc_map=None):
        self.family = family
        # run.py --cc OLD=NEW: a script's cc OLD is replaced by NEW
        self.cc_map = dict(cc_map or {})
        self.host, self.peer = HOST[family], PEER[family]
        self.t0 = time.monotonic()
        self.timeline = []
        self.conns = {}
        self.listeners = []
        self.next_port = 40000
        self.fd = self._tun()

    # ---- setup ----

    def _tun(self):
        fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
        fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", b"tun0",
                                               IFF_TUN | IFF_NO_PI))
        sh("ip", "link", "set", "lo", "up")
        if self.family == 6:
            sh("ip", "-6", "addr", "add", self.host + "/64", "dev", "tun0",
               "nodad")
        else:
            self.sysctl("net.ipv6.conf.tun0.disable_ipv6", 1, quiet=True)
            sh("ip", "addr", "add", self.host + "/24", "dev", "tun0")
        sh("ip", "link", "set", "tun0", "up")
        return fd

    def close(self):
        """Abort what is left (SO_LINGER 0: a RST): no orphan socket may
        outlive the run and keep the module under test in use."""
        for c in list(self.conns.values()):
            if c.sock is not None and c.sock.fileno() >= 0:
                c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                  struct.pack("ii", 1, 0))
                c.sock.close()
        for s in self.listeners:
            s.close()
        os.close(self.fd)

    def now(self):
        return time.monotonic() - self.t0

    def log(self, mark, text):
        self.timeline.append("%8.3f %s %s" % (self.now(), mark, text))

    def fail(self, what):
        self.log("!", what)
        raise ScriptFailure(what)

    def check(self, cond, what):
        if not cond:
            self.fail("check failed: " + what)
        self.log("=", "ok: " + what)

    def sleep(self, s):
        self.log("#", "sleep %.3f" % s)
        end = time.monotonic() + s
        while True:
            left = end - time.monotonic()
            if left <= 0:
                break
            self._pump(left)

    def sysctl(self, name, value, quiet=False):
        path = "/proc/sys/" + name.replace(".", "/")
        with open(path, "w") as f:
            f.write("%s\n" % value)
        if not quiet:
            self.log("#", "sysctl %s=%s" % (name, value))

    def param(self, module, name, value):
        kmod.set_param(module, name, value)
        self.log("#", "%s.%s=%s" % (module, name, value))

    def route(self, opts):
        """Route to the peer with attributes (`initcwnd 20 ssthresh 8`)."""
        prefix = self.peer + ("/128" if self.family == 6 else "/32")
        sh("ip", "-%d" % self.family, "route", "replace", prefix, "dev",
           "tun0", *opts.split())
        self.log("#", "route %s %s" % (prefix, opts))

    # ---- packets ----

    def _pump(self, timeout):
        """Read what the kernel sent (up to @timeout s for the first)."""
        r, _, _ = select.select([self.fd], [], [], max(timeout, 0))
        if not r:
            return
        while True:
            try:
                pkt = os.read(self.fd, 65536)
            except BlockingIOError:
                return
            try:
                seg = parse(pkt)
            except Malformed as e:
                self.fail("the kernel sent a malformed packet: %s" % e)
            if seg is None:
                continue
            seg.t = self.now()
            c = self.conns.get((seg.sport, seg.dport))
            if c is not None:
                c.arrive(seg)
            else:
                self.log(">", "%s:%d > %s:%d flags %s (no connection)" % (
                    seg.src, seg.sport, seg.dst, seg.dport,
                    flags_str(seg.flags)))

    def inject(self, seg):
        os.write(self.fd, seg.pack())

    # ---- connections ----

    def connect(self, cc=None, mss=1000, wscale=7, sack=True, ts=True,
                ecn=False, initcwnd=None, route=None, win=65535, port=8080,
                lport=None, sndbuf=4 << 20, rto_min=1.0, synack_delay=0):
        """The kernel opens a connection to the peer (active open).

        @rto_min (s) goes on the route so that emulation jitter cannot
        fire a retransmission timeout in the middle of a timeline; None
        leaves the kernel's 200 ms.  @synack_delay (s) holds the SYN-ACK
        back: the handshake's RTT sample, and so min_rtt, is that long."""
        cc = self.cc_map.get(cc, cc)
        attrs = []
        if initcwnd:
            attrs.append("initcwnd %d" % initcwnd)
        if rto_min:
            attrs.append("rto_min %dms" % int(rto_min * 1000))
        if route:
            attrs.append(route)
        if attrs:
            self.route(" ".join(attrs))
        self.sysctl("net.ipv4.tcp_ecn", 1 if ecn else 2, quiet=True)
        s = socket.socket(socket.AF_INET6 if self.family == 6
                          else socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, sndbuf)
        if cc:
            s.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, cc.encode())
        if lport is None:
            lport = self.next_port
            self.next_port += 1
        s.bind((self.host, lport))
        s.setblocking(False)
        err = s.connect_ex((self.peer, port))
        if err not in (0, errno.EINPROGRESS):
            self.fail("connect: %s" % os.strerror(err))
        c = Conn(self, s, lport, port, active=True)
        self.conns[(lport, port)] = c
        self.log("#", "connect %s:%d -> %s:%d cc %s" % (
            self.host, lport, self.peer, port, cc or "default"))
        syn = c.expect(flags="SEC" if ecn else "S", within=3)
        c.isn = syn.seq
        c.snd_wscale = syn.wscale
        c.ts_ok = ts and syn.ts is not None
        if syn.ts:
            c.ts_recent = syn.ts[0]
        if synack_delay:
            self.sleep(synack_delay)
        # @mss is the payload per segment: the option also pays for TS.
        c.send(c.segment(0, 0, flags="SAE" if ecn else "SA",
                         mss=mss + (12 if c.ts_ok else 0),
                         wscale=wscale if syn.wscale is not None else None,
                         sackok=sack and syn.sackok, win=min(win, 65535),
                         ts=ts and syn.ts is not None, raw_seq=PEER_ISN,
                         raw_ack=syn.seq + 1))
        c.expect(seq=1, ack=1, flags="A", within=3)
        c.win = win
        c.wscale = wscale if syn.wscale is not None else 0
        return c

    def listen(self, cc=None, port=8080):
        cc = self.cc_map.get(cc, cc)
        s = socket.socket(socket.AF_INET6 if self.family == 6
                          else socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if cc:
            s.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, cc.encode())
        s.bind((self.host, port))
        s.listen(8)
        s.setblocking(False)
        self.listeners.append(s)
        self.listen_port = port
        self.log("#", "listen %s:%d cc %s" % (self.host, port,
                                              cc or "default"))
        return s

    def accept(self, mss=1000, wscale=7, sack=True, ts=True, ecn=False,
               ttl=64, opts=None, win=65535, port=None, sport=None):
        """The peer opens a connection to the listening kernel socket."""
        port = port or self.listen_port
        if sport is None:
            sport = self.next_port
            self.next_port += 1
        self.sysctl("net.ipv4.tcp_ecn", 1 if ecn else 2, quiet=True)
        c = Conn(self, None, port, sport, active=False)
        c.isn = None
        self.conns[(port, sport)] = c
        c.ts_ok = ts
        c.send(c.segment(0, 0, flags="SEC" if ecn else "S",
                         mss=mss + (12 if ts else 0),
                         wscale=wscale, sackok=sack, ts=ts, ttl=ttl,
                         ipopts=opts, win=min(win, 65535),
                         raw_seq=PEER_ISN, raw_ack=0))
        synack = c.expect(flags="SAE" if ecn else "SA", within=3, ack=1)
        c.snd_wscale = synack.wscale
        c.ts_ok = ts and synack.ts is not None
        c.win = win
        c.wscale = wscale if synack.wscale is not None else 0
        c.ack(1, ttl=ttl, ipopts=opts)
        deadline = time.monotonic() + 3
        while True:
            try:
                s, _ = self.listeners[-1].accept()
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    self.fail("the kernel did not accept the connection")
                self._pump(0.01)
        s.setblocking(False)
        c.sock = s
        return c


class Conn:
    """One connection between the kernel socket and the peer."""

    def __init__(self, peer, sock, lport, pport, active):
        self.p = peer
        self.sock = sock
        self.lport, self.pport = lport, pport     # kernel side, peer side
        self.active = active
        self.queue = []
        self.isn = None
        self.snd_nxt = 1        # highest end the kernel sent (relative)
        self.snd_una = 1        # highest ACK the peer sent (relative)
        self.data_high = 1      # end of the data the script has seen
        self.rcv_nxt = 1        # peer's next data byte (relative)
        self.ts_ok = False
        self.ts_recent = 0
        self.snd_wscale = None
        self.wscale = 0
        self.win = 65535
        self.pending = b""

    # ---- relative <-> absolute ----

    def k_rel(self, seq):
        return (seq - self.isn) & 0xffffffff

    def p_abs(self, seq):
        return (PEER_ISN + seq) & 0xffffffff

    def k_abs(self, seq):
        return (self.isn + seq) & 0xffffffff

    def p_rel(self, seq):
        return (seq - PEER_ISN) & 0xffffffff

    # ---- the kernel socket ----

    def write(self, nbytes):
        self.pending += b"x" * nbytes
        self._flush()
        self.p.log("#", "app writes %d bytes" % nbytes)

    def _flush(self):
        while self.pending:
            try:
                n = self.sock.send(self.pending)
            except BlockingIOError:
                return
            self.pending = self.pending[n:]

    def read(self):
        out = b""
        while True:
            try:
                d = self.sock.recv(1 << 20)
            except BlockingIOError:
                return out
            if not d:
                return out
            out += d

    def close(self):
        self.p.log("#", "app closes")
        self.sock.close()

    def shutdown(self):
        self.p.log("#", "app shuts down writing")
        self.sock.shutdown(socket.SHUT_WR)

    def info(self):
        raw = self.sock.getsockopt(socket.IPPROTO_TCP, TCP_INFO, 232)
        raw += b"\0" * (232 - len(raw))
        i = Info(dict(zip(TCP_INFO_FIELDS, struct.unpack(TCP_INFO_FMT,
                                                         raw))))
        self.p.log("=", "tcp_info " + repr(i))
        return i

    def cc_info(self):
        raw = self.sock.getsockopt(socket.IPPROTO_TCP, TCP_CC_INFO, 64)
        if not raw:             # no get_info: a BPF congestion control
            raw = bpf_sk_storage(self.sock, BPF_CC_INFO_MAP, 16) or b""
        raw += b"\0" * (16 - len(raw))
        i = dict(zip(CC_INFO_FIELDS, struct.unpack("=HHIII", raw[:16])))
        self.p.log("=", "cc_info %s" % i)
        return i

    # ---- injecting ----

    def segment(self, seq, length=0, flags="A", ack=None, sack=(),
                dsack=None, dn=False, ece=False, cwr=False, win=None,
                tsval=None, tsecr=None, ts=None, ttl=64, epdn=None,
                ipopts=None, tos=0, mss=None, wscale=None, sackok=False,
                raw_seq=None, raw_ack=None, doff=None, payload=None):
        bits = flags_bits(flags) | (0x40 if ece else 0) | (0x80 if cwr
                                                            else 0)
        if raw_ack is None:
            raw_ack = self.k_abs(self.snd_una if ack is None else ack)
        blocks = ([dsack] if dsack else []) + list(sack)
        opts = ipopts or b""
        if epdn is not None:
            e = dict(epdn)
            lo, hi = e.get("min", 0), e.get("max", 0)
            if not e.get("raw") and "min" in e:
                lo, hi = self.p_abs(lo), self.p_abs(hi)
            opts += epdn_option(e.get("ttl", ttl), e["flags"], lo, hi,
                                e.get("version", 1))
        if ts is None:
            ts = self.ts_ok
        if win is None:
            win = self.win >> self.wscale if not flags_bits(flags) & 2 \
                else self.win
        return Segment(
            self.p.peer, self.p.host, self.pport, self.lport,
            seq=raw_seq if raw_seq is not None else self.p_abs(seq),
            ack=raw_ack if bits & 0x10 else 0, flags=bits,
            win=min(win, 65535),
            payload=payload if payload is not None else b"y" * length,
            mss=mss, wscale=wscale, sackok=sackok,
            sack=[(self.k_abs(a), self.k_abs(b)) for a, b in blocks],
            ts=(self.p_tsval() if tsval is None else tsval,
                self.ts_recent if tsecr is None else tsecr) if ts else None,
            dn=dn, ttl=ttl, ipopts=opts, tos=tos, doff=doff)

    def p_tsval(self):
        return 1000 + int(self.p.now() * 1000)

    def send(self, seg):
        self.p.inject(seg)
        if seg.flags & 0x10 and self.isn is not None:
            ack = self.k_rel(seg.ack)
            if 0 < ack - self.snd_una < 1 << 31:
                self.snd_una = ack
        end = self.p_rel(seg.end)
        if len(seg.payload) and 0 < end - self.rcv_nxt < 1 << 31:
            self.rcv_nxt = end
        self.p.log("<", self.describe(seg, mine=True))

    def ack(self, ack, sack=(), dsack=None, dn=False, ece=False, cwr=False,
            win=None, tsecr=None, flags="A", ttl=64, ipopts=None, epdn=None):
        self.send(self.segment(self.rcv_nxt, 0, flags=flags, ack=ack,
                               sack=sack, dsack=dsack, dn=dn, ece=ece,
                               cwr=cwr, win=win, tsecr=tsecr, ttl=ttl,
                               ipopts=ipopts, epdn=epdn))

    def data(self, seq, length, flags="PA", ack=None, ttl=64, epdn=None,
             ipopts=None, tsval=None, tos=0, ece=False, cwr=False):
        self.send(self.segment(seq, length, flags=flags, ack=ack, ttl=ttl,
                               epdn=epdn, ipopts=ipopts, tsval=tsval,
                               tos=tos, ece=ece, cwr=cwr))

    # ---- what the kernel sends ----

    def arrive(self, seg):
        if self.isn is None and seg.flags & 2:
            self.isn = seg.seq
        if seg.ts and self.ts_ok:
            self.ts_recent = seg.ts[0]
        end = self.k_rel(seg.end)
        if 0 < end - self.snd_nxt < 1 << 31:
            self.snd_nxt = end
        self.queue.append(seg)

    def _next(self, within):
        end = time.monotonic() + within
        while not self.queue:
            if self.pending:
                self._flush()
            left = end - time.monotonic()
            if left <= 0:
                return None
            self.p._pump(min(left, 0.05) if self.pending else left)
        return self.queue.pop(0)

    def expect(self, seq=None, end=None, ack=None, flags=None, dn=None,
               ece=None, cwr=None, sack=None, length=None, within=2.0):
        want = self._want(seq=seq, end=end, ack=ack, flags=flags, dn=dn,
                          ece=ece, cwr=cwr, sack=sack, length=length)
        seg = self._next(within)
        if seg is None:
            self.p.log("?", "expected %s within %.1fs: nothing came" %
                       (want, within))
            self.p.fail("expected %s within %.1fs, nothing came" %
                        (want, within))
        self._seen(seg)
        bad = self._mismatch(seg, seq=seq, end=end, ack=ack, flags=flags,
                             dn=dn, ece=ece, cwr=cwr, sack=sack,
                             length=length)
        if bad:
            self.p.log("?", "expected %s" % want)
            self.p.fail("expected %s, got %s (%s)" % (
                want, self.describe(seg), bad))
        return seg

    def expect_data(self, count=1, within=2.0):
        """The next @count segments each carry new data, in order."""
        out = []
        for _ in range(count):
            start = self.data_high
            seg = self.expect(within=within)
            if not seg.payload or self.k_rel(seg.seq) != start:
                self.p.fail("expected new data from %d, got %s" %
                            (start, self.describe(seg)))
            out.append(seg)
        return out

    def expect_none(self, within=0.5):
        seg = self._next(within)
        if seg is not None:
            self._seen(seg)
            self.p.fail("expected nothing for %.1fs, got %s" %
                        (within, self.describe(seg)))
        self.p.log("?", "nothing sent for %.1fs, as expected" % within)

    def drain(self, within=0.3):
        out = []
        while True:
            seg = self._next(within if not out else 0.05)
            if seg is None:
                return out
            self._seen(seg)
            out.append(seg)

    def bottleneck(self, rate, delay, seconds, every=0.25):
        """Play the receiver behind a bottleneck for @seconds: each data
        segment the kernel sends is acknowledged (cumulatively, one ACK
        each) @delay s after it was sent, or 1/@rate s after the previous
        ACK if that is later: a link of @rate segments/s with a queue as
        long as needed and a base RTT of @delay.  Returns tcp_info every
        @every s, as (time, info)."""
        gap, due, infos = 1.0 / rate, [], []
        stop = self.p.now() + seconds
        last, probe, top = self.p.now(), self.p.now(), self.snd_una
        while True:
            now = self.p.now()
            while due and due[0][0] <= now:
                self.ack(due.pop(0)[1])
            if now >= probe:
                infos.append((now, self.info()))
                probe = now + every
            if now >= stop:
                return infos
            self.p._pump(max(min(due[0][0] if due else stop, probe,
                                 stop) - now, 0))
            if self.pending:
                self._flush()
            while self.queue:
                seg = self.queue.pop(0)
                self._seen(seg)
                end = self.k_rel(seg.end)
                if not seg.payload or not 0 < end - top < 1 << 31:
                    continue
                top = end
                last = max(seg.t + delay, last + gap)
                due.append((last, end))

    def _seen(self, seg):
        self.p.log(">", self.describe(seg))
        end = self.k_rel(seg.end)
        if seg.payload and 0 < end - self.data_high < 1 << 31:
            self.data_high = end

    # ---- matching and printing ----

    def _want(self, **kw):
        parts = []
        for k, v in kw.items():
            if v is None:
                continue
            parts.append("%s %s" % (k, v))
        return ", ".join(parts) or "any segment"

    def _mismatch(self, seg, seq, end, ack, flags, dn, ece, cwr, sack,
                  length):
        got_flags = flags_str(seg.flags)
        checks = [
            (seq, lambda: self.k_rel(seg.seq), "seq"),
            (end, lambda: self.k_rel(seg.end), "end"),
            (ack, lambda: self.p_rel(seg.ack), "ack"),
            (length, lambda: len(seg.payload), "length"),
            (dn, lambda: seg.dn, "dn"),
            (ece, lambda: bool(seg.flags & 0x40), "ece"),
            (cwr, lambda: bool(seg.flags & 0x80), "cwr"),
            (sack, lambda: [(self.p_rel(a), self.p_rel(b))
                            for a, b in seg.sack], "sack"),
        ]
        for want, got, name in checks:
            if want is None:
                continue
            if name == "sack":
                want = [tuple(b) for b in want]
            if got() != want:
                return "%s is %s, not %s" % (name, got(), want)
        if flags is not None and \
                sorted(got_flags) != sorted(flags_str(flags_bits(flags))):
            return "flags are %s, not %s" % (got_flags or ".", flags)
        return None

    def describe(self, seg, mine=False):
        """tcpdump-like, relative to each side's ISN."""
        if mine:
            sseq = self.p_rel
            aseq = self.k_rel if self.isn is not None else (lambda x: x)
            blk = self.k_rel if self.isn is not None else (lambda x: x)
        else:
            sseq = self.k_rel if self.isn is not None else (lambda x: x)
            aseq = self.p_rel
            blk = self.p_rel
        f = flags_str(seg.flags).replace("A", ".") or "-"
        s = "%-4s %d:%d(%d)" % (f, sseq(seg.seq), sseq(seg.end),
                                len(seg.payload))
        if seg.flags & 0x10:
            s += " ack %d" % aseq(seg.ack)
        s += " win %d" % seg.win
        opts = []
        if seg.mss is not None:
            opts.append("mss %d" % seg.mss)
        if seg.sackok:
            opts.append("sackOK")
        if seg.ts:
            opts.append("TS %d:%d" % seg.ts)
        if seg.wscale is not None:
            opts.append("wscale %d" % seg.wscale)
        if seg.sack:
            opts.append("sack " + " ".join("%d:%d" % (blk(a), blk(b))
                                           for a, b in seg.sack))
        if opts:
            s += " <%s>" % ",".join(opts)
        if seg.dn:
            s += " DN"
        if seg.ipopts and seg.ipopts.strip(b"\0"):
            s += " ipopts %s" % seg.ipopts.hex()
        if seg.ttl != 64:
            s += " ttl %d" % seg.ttl
        return s
