# SPDX-License-Identifier: GPL-2.0
"""Time in each TCP congestion-avoidance state, sampled by sock_diag,
and the flow's `ss -tin` series from the same dumps.

`ss` does not print tcpi_ca_state, so a small NETLINK_SOCK_DIAG client
dumps the TCP sockets of a sender namespace (SOCK_DIAG_BY_FAMILY with an
inet_diag_req_v2 asking for INET_DIAG_INFO and the DCTCP slot) and
reads struct tcp_info (include/uapi/linux/tcp.h) and the congestion
control's tcp_dctcp_info from each reply.  CaSampler does that every
period (default CA_PERIOD) from its own thread; ca_summary turns the
samples of one socket into the share of time in each state.  It is
sampling: an episode shorter than the period can be missed, and a change
of state is placed within one period.  Every SS_PERIOD the sampler also
keeps ss_row() of each socket: the fields measure.parse_ss reads from
`ss -tinH`, under the same names and with ss's rules for leaving one
out, without starting `ss` (under the VM every program started is ~100
requests to the host over 9p).
"""

import os
import re
import socket
import struct
import threading
import time

from .host import NLM_F_REQUEST, NLMSG_ERROR, netns

CA_STATES = ("open", "disorder", "cwr", "recovery", "loss")   # TCP_CA_*
CA_LABELS = ("Open", "Disorder", "CWR", "Recovery", "Loss")
# Each sample is a dump of the namespace's TCP sockets: about 0.2 ms of
# CPU natively, but 2.7 ms of a vCPU under the VM's software emulation,
# where 20 ms cost 13-17 % of a vCPU per flow and 50 ms 5-7 %, still
# many samples per RTT on the satellite paths.
CA_PERIOD = 0.05
SS_PERIOD = 1.0

NETLINK_SOCK_DIAG = 4
SOCK_DIAG_BY_FAMILY = 20
NLMSG_DONE = 3
NLM_F_DUMP = 0x300
INET_DIAG_INFO = 2
INET_DIAG_VEGASINFO = 3
INET_DIAG_DCTCPINFO = 9
# idiag_ext is 8 bits wide: no bit asks for DCTCPINFO (9).  As ss does,
# the request asks for VEGASINFO, which DCTCP and our modules answer
# with their DCTCPINFO attribute (include/satnet/cc_info.h).
REQUEST_EXT = (1 << (INET_DIAG_INFO - 1)) | (1 << (INET_DIAG_VEGASINFO - 1))
# The TCP states in which a sender can have data in flight: ESTABLISHED,
# FIN_WAIT1, CLOSE_WAIT, LAST_ACK, CLOSING (1 << TCP_*).
SENDING_STATES = (1 << 1) | (1 << 4) | (1 << 8) | (1 << 9) | (1 << 11)
# The states `ss` lists by default: all but LISTEN, CLOSE, TIME_WAIT
# and SYN_RECV (SENDING_STATES, SYN_SENT and FIN_WAIT2).
SS_STATES = SENDING_STATES | (1 << 2) | (1 << 5)

NLMSGHDR = struct.Struct("=IHHII")
RTATTR = struct.Struct("=HH")
# family, protocol, ext, pad, states, then inet_diag_sockid: sport and
# dport (big endian), src[4], dst[4] (network order), if, cookie[2]
REQ_V2 = struct.Struct("=BBBxI2s2s16s16sI8s")
# family, state, timer, retrans, inet_diag_sockid, expires, rqueue,
# wqueue, uid, inode
DIAG_MSG = struct.Struct("=BBBB2s2s16s16sI8sIIIII")

# struct tcp_info fields read: name, offset, format.  A field beyond the
# end of the kernel's tcp_info is left out of the row.
TCP_INFO = tuple((name, off, struct.Struct("=" + fmt)) for name, off, fmt in
                 (("tcp_state", 0, "B"), ("ca_state", 1, "B"),
                  ("retransmits", 2, "B"), ("backoff", 4, "B"),
                  ("rto_us", 8, "I"), ("unacked", 24, "I"),
                  ("sacked", 28, "I"), ("lost", 32, "I"),
                  ("retrans", 36, "I"), ("rtt_us", 68, "I"),
                  ("rttvar_us", 72, "I"), ("ssthresh", 76, "I"),
                  ("cwnd", 80, "I"), ("reordering", 88, "I"),
                  ("retrans_total", 100, "I"), ("bytes_acked", 120, "Q"),
                  ("bytes_sent", 200, "Q"), ("bytes_retrans", 208, "Q")))
INFINITE_SSTHRESH = 0x7fffffff
# struct tcp_dctcp_info, the slot our modules report through
# (include/satnet/cc_info.h): enabled, ce_state (u16), alpha, ab_ecn,
# ab_tot (u32).
DCTCP_INFO = struct.Struct("=HHIII")
DCTCP_KEYS = ("dctcp_enabled", "dctcp_ce_state", "dctcp_alpha",
              "dctcp_ab_ecn", "dctcp_ab_tot")
# What ss (iproute2 6.1, misc/ss.c: tcp_show_info, tcp_stats_print)
# leaves out: ssthresh from 0xffff up, an rto of TCP_TIMEOUT_INIT,
# reordering at its default of 3.
SS_SSTHRESH_BOUND = 0xffff
SS_RTO_HIDDEN_US = 3000000
SS_REORDERING_HIDDEN = 3


class DiagError(ValueError):
    """A sock_diag reply that does not parse, or an error the kernel
    answered."""


def _align(n):
    return (n + 3) & ~3


def dump_request(seq, dport=0, family=socket.AF_INET,
                 states=SENDING_STATES):
    """SOCK_DIAG_BY_FAMILY dump request for the TCP sockets of @family in
    @states with INET_DIAG_INFO and the congestion control's info
    (REQUEST_EXT); a non-zero @dport lets the kernel skip sockets to
    other ports (the parser's caller filters again)."""
    req = REQ_V2.pack(family, socket.IPPROTO_TCP, REQUEST_EXT, states,
                      b"\0\0", struct.pack(">H", dport), bytes(16),
                      bytes(16), 0, bytes(8))
    return NLMSGHDR.pack(NLMSGHDR.size + len(req), SOCK_DIAG_BY_FAMILY,
                         NLM_F_REQUEST | NLM_F_DUMP, seq, 0) + req


def messages(buf):
    """(type, seq, payload) of every netlink message in @buf; a length
    that does not fit the buffer is an error."""
    off = 0
    while off < len(buf):
        if len(buf) - off < NLMSGHDR.size:
            raise DiagError("%d stray bytes after the last message" %
                            (len(buf) - off))
        length, kind, _, seq, _ = NLMSGHDR.unpack_from(buf, off)
        if length < NLMSGHDR.size or length > len(buf) - off:
            raise DiagError("message length %d at offset %d of %d" %
                            (length, off, len(buf)))
        yield kind, seq, buf[off + NLMSGHDR.size:off + length]
        off += _align(length)


def attributes(buf):
    """(type, payload) of every rtattr in @buf, bounded likewise."""
    off = 0
    while len(buf) - off >= RTATTR.size:
        length, kind = RTATTR.unpack_from(buf, off)
        if length < RTATTR.size or length > len(buf) - off:
            raise DiagError("attribute length %d at offset %d of %d" %
                            (length, off, len(buf)))
        yield kind, buf[off + RTATTR.size:off + length]
        off += _align(length)


def tcp_info(blob):
    """The fields of TCP_INFO that @blob (a tcp_info of any length) holds."""
    out = {}
    for name, off, st in TCP_INFO:
        if off + st.size <= len(blob):
            (out[name],) = st.unpack_from(blob, off)
    if out.get("ssthresh", 0) >= INFINITE_SSTHRESH:
        del out["ssthresh"]                  # as ss: not set yet
    return out


def diag_socket(payload):
    """One inet_diag_msg with its attributes: the socket's ports, peer
    address (IPv4 or IPv6, as text), the tcp_info fields and, when the
    congestion control fills it whole, the DCTCP slot (DCTCP_KEYS)."""
    if len(payload) < DIAG_MSG.size:
        raise DiagError("inet_diag_msg of %d bytes" % len(payload))
    family, state, _, _, sport, dport, _, dst = DIAG_MSG.unpack_from(
        payload)[:8]
    if family not in (socket.AF_INET, socket.AF_INET6):
        raise DiagError("address family %d" % family)
    addr = dst[:4] if family == socket.AF_INET else dst
    row = {"sport": int.from_bytes(sport, "big"),
           "dport": int.from_bytes(dport, "big"), "state": state,
           "dst": socket.inet_ntop(family, addr)}
    for kind, data in attributes(payload[DIAG_MSG.size:]):
        if kind == INET_DIAG_INFO:
            row.update(tcp_info(data))
        elif kind == INET_DIAG_DCTCPINFO and len(data) >= DCTCP_INFO.size:
            row.update(zip(DCTCP_KEYS, DCTCP_INFO.unpack_from(data)))
    return row


def _ss_ms(usec):
    """@usec as ss prints it in ms ("%g") and parse_ss reads it back:
    an int when the text has no point; None (left out) for 0, for a
    missing field and for a text parse_ss would not read."""
    if not usec:
        return None
    text = "%g" % (usec / 1000)
    if not re.fullmatch(r"[\d.]+", text):
        return None
    return float(text) if "." in text else int(text)


def _nz(x):
    return x or None


def _ss_values(row):
    """(key, value, or None where ss prints nothing) in the order of
    measure.SS_FIELDS."""
    g = row.get
    ssthresh = g("ssthresh", 0)
    retrans = bool(g("retrans") or g("retrans_total"))
    reordering = g("reordering", SS_REORDERING_HIDDEN)
    rto = g("rto_us")
    return (("cwnd", _nz(g("cwnd"))),
            ("ssthresh", ssthresh if 0 < ssthresh < SS_SSTHRESH_BOUND
             else None),
            ("rtt_ms", _ss_ms(g("rtt_us"))),
            ("bytes_acked", _nz(g("bytes_acked"))),
            ("bytes_sent", _nz(g("bytes_sent"))),
            ("bytes_retrans", _nz(g("bytes_retrans"))),
            ("retrans_out", g("retrans", 0) if retrans else None),
            ("retrans_total", g("retrans_total", 0) if retrans else None),
            ("sacked", _nz(g("sacked"))),
            ("reordering", reordering
             if reordering != SS_REORDERING_HIDDEN else None),
            ("lost", _nz(g("lost"))),
            ("rto_ms", _ss_ms(rto) if rto != SS_RTO_HIDDEN_US else None),
            ("backoff", _nz(g("backoff"))),
            ("unacked", _nz(g("unacked"))),
            *((k, g(k) if g("dctcp_enabled") else None)
              for k in DCTCP_KEYS[1:]))


def ss_row(row):
    """The row measure.parse_ss makes of `ss -tinH`'s text for the socket
    of diag_socket() row @row: the same keys and values, each present
    only when ss prints it (zero counters, an unset ssthresh, the default
    reordering and the DCTCP slot of a congestion control without one
    are left out)."""
    out = {"sport": row["sport"]}
    out.update((k, v) for k, v in _ss_values(row) if v is not None)
    return out


def parse_dump(buf, seq):
    """The sockets in one read of a dump reply to request @seq, and
    whether the dump is done.  Messages of other requests are skipped;
    an NLMSG_ERROR or a DONE that carries an error raises."""
    rows = []
    for kind, mseq, payload in messages(buf):
        if mseq != seq:
            continue
        if kind in (NLMSG_ERROR, NLMSG_DONE):
            if kind == NLMSG_ERROR and len(payload) < 4:
                raise DiagError("error message of %d bytes" % len(payload))
            err = struct.unpack_from("=i", payload)[0] \
                if len(payload) >= 4 else 0
            if err < 0:
                raise DiagError("sock_diag: %s" % os.strerror(-err))
            if kind == NLMSG_DONE:
                return rows, True
        elif kind == SOCK_DIAG_BY_FAMILY:
            rows.append(diag_socket(payload))
    return rows, False


class DiagSocket:
    """A sock_diag netlink socket opened in namespace @ns (None: here)."""

    def __init__(self, ns=None, timeout=5.0):
        with netns(ns):
            self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW,
                                      NETLINK_SOCK_DIAG)
        self.sock.settimeout(timeout)
        self.seq = 0

    def dump(self, dport=0, states=SENDING_STATES):
        """Every TCP socket in @states (to @dport if non-zero)."""
        self.seq += 1
        self.sock.send(dump_request(self.seq, dport, states=states))
        rows, done = [], False
        while not done:
            got, done = parse_dump(self.sock.recv(1 << 16), self.seq)
            rows += got
        return rows

    def close(self):
        self.sock.close()


class CaSampler(threading.Thread):
    """The sockets to @dst:@dport in namespace @ns, every @period s:
    rows of sport, t (s since the first dump), ca_state, bytes_acked
    (sockets in SENDING_STATES).  Every @ss_period s, in ss_rows, the
    ss_row() of each such socket in SS_STATES, t (as above, to the ms)
    added.  A dump that fails is counted and skipped (its time goes to
    the sample before it; a due ss row comes with the next dump)."""

    def __init__(self, ns, dst, dport, period=CA_PERIOD,
                 ss_period=SS_PERIOD):
        super().__init__(daemon=True)
        self.diag = DiagSocket(ns)
        self.dst, self.dport, self.period = dst, dport, period
        self.ss_period = ss_period
        self.rows, self.dumps, self.errors, self.error = [], 0, 0, None
        self.ss_rows, self.ss_due = [], None
        self.cpu_s = 0.0
        self.halt = threading.Event()
        self.crash = None

    def run(self):
        """Samples on a fixed schedule; one that comes a period or more
        late starts a new schedule from itself, rather than catching up
        with samples in a burst."""
        t0 = due = self.ss_due = time.monotonic()
        try:
            while not self.halt.is_set():
                now = time.monotonic()
                self.sample(now, t0)
                due += self.period
                if due <= now:
                    due = now + self.period
                self.halt.wait(due - time.monotonic())
        except Exception as e:      # noqa: BLE001 (finish() raises it)
            self.crash = e
        self.cpu_s = time.thread_time()

    def sample(self, now, t0):
        try:
            rows = self.diag.dump(self.dport, SS_STATES)
        except (OSError, DiagError) as e:
            self.errors += 1
            self.error = str(e)
            return
        self.dumps += 1
        mine = [r for r in rows
                if r["dst"] == self.dst and r["dport"] == self.dport]
        t = now - t0
        self.rows += [{"sport": r["sport"], "t": round(t, 4),
                       "ca_state": r["ca_state"],
                       "bytes_acked": r.get("bytes_acked", 0)}
                      for r in mine if "ca_state" in r and
                      (1 << r["state"]) & SENDING_STATES]
        if now >= self.ss_due:
            self.ss_rows += [dict(ss_row(r), t=round(t, 3)) for r in mine]
            self.ss_due += self.ss_period
            if self.ss_due <= now:
                self.ss_due = now + self.ss_period

    def finish(self):
        """Stop sampling; a sampler that died raises here, so a run never
        keeps empty series without saying why."""
        self.halt.set()
        self.join()
        self.diag.close()
        if self.crash:
            raise RuntimeError("the sock_diag sampler failed: %r" %
                               self.crash) from self.crash

    def summary(self, rows):
        """ca_summary of @rows (one socket's) with this sampler's
        period, CPU time and failed dumps."""
        out = ca_summary(rows, self.period)
        out.update(dumps=self.dumps, cpu_s=round(self.cpu_s, 3),
                   errors=self.errors)
        if self.error:
            out["error"] = self.error
        return out


def ca_summary(rows, period):
    """Share of time in each CA state of one socket's samples (in time
    order), each sample holding until the next; entries into Recovery
    and Loss (changes seen between two samples); the transitions as
    [t, state]; and the sampling achieved."""
    out = {"period_s": period, "samples": len(rows)}
    if len(rows) < 2:
        return out
    secs = dict.fromkeys(CA_STATES + ("other",), 0.0)
    entries = {"recovery": 0, "loss": 0}
    trans = [[rows[0]["t"], rows[0]["ca_state"]]]
    gap = 0.0
    for a, b in zip(rows, rows[1:]):
        dt = b["t"] - a["t"]
        gap = max(gap, dt)
        secs[state_name(a["ca_state"])] += dt
        if b["ca_state"] != a["ca_state"]:
            trans.append([b["t"], b["ca_state"]])
            name = state_name(b["ca_state"])
            if name in entries:
                entries[name] += 1
    span = rows[-1]["t"] - rows[0]["t"]
    if not secs["other"]:
        del secs["other"]
    out.update(span_s=round(span, 3),
               interval_s=round(span / (len(rows) - 1), 4),
               max_gap_s=round(gap, 4),
               share={k: round(v / span, 5) if span else None
                      for k, v in secs.items()},
               entries=entries, transitions=trans)
    return out


def state_name(ca_state):
    return CA_STATES[ca_state] if ca_state < len(CA_STATES) else "other"


def fmt_shares(share):
    """'Open 83% / Disorder 1% / CWR 0% / Recovery 15% / Loss 1%'; a
    state without a value shows '–'."""
    return " / ".join("%s %s" % (label, _percent(share.get(k)))
                      for k, label in zip(CA_STATES, CA_LABELS))


def _percent(x):
    if x is None:
        return "–"
    return "%.1f%%" % (100 * x) if 0 < x < 0.01 else "%.0f%%" % (100 * x)
