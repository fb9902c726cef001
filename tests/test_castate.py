# SPDX-License-Identifier: GPL-2.0
"""satnet.castate: the sock_diag request, the parser of the kernel's
reply (crafted byte strings laid out as include/uapi/linux/
inet_diag.h and tcp.h say, written here field by field rather than with
the module's own structs), the time share of each CA state, and a real
dump of a loopback connection on this host."""

import errno
import os
import random
import socket
import struct
import time

import pytest

from satnet import castate, host
from satnet.castate import DiagError, ca_summary, parse_dump

SEQ = 7
NLM_F_MULTI = 2


def nlmsg(kind, payload, seq=SEQ, length=None):
    n = 16 + len(payload) if length is None else length
    return struct.pack("=IHHII", n, kind, NLM_F_MULTI, seq, 4242) + \
        payload + b"\0" * (-len(payload) % 4)


def rta(kind, data, length=None):
    n = 4 + len(data) if length is None else length
    return struct.pack("=HH", n, kind) + data + b"\0" * (-len(data) % 4)


def info(ca_state=3, cwnd=42, ssthresh=21, total_retrans=9,
         bytes_acked=123456, size=232):
    """A struct tcp_info of the running kernel's size (232 in 6.1), cut
    to @size bytes as an older kernel would send it."""
    b = bytearray(232)
    b[0], b[1], b[2] = 1, ca_state, 2        # ESTABLISHED, CA, retransmits
    struct.pack_into("=I", b, 76, ssthresh)
    struct.pack_into("=I", b, 80, cwnd)
    struct.pack_into("=I", b, 100, total_retrans)
    struct.pack_into("=Q", b, 120, bytes_acked)
    return bytes(b[:size])


def diag_msg(sport=40000, dport=5201, dst="10.2.0.1", attrs=None,
             family=socket.AF_INET):
    addr = socket.inet_pton(family, dst).ljust(16, b"\0")
    body = struct.pack("=BBBB", family, 1, 0, 0) + \
        struct.pack(">HH", sport, dport) + bytes(16) + addr + \
        struct.pack("=I8sIIIII", 0, bytes(8), 0, 0, 0, 0, 0)
    assert len(body) == 72
    return body + (rta(2, info()) if attrs is None else attrs)


def done(err=0):
    return nlmsg(3, struct.pack("=i", err))


# ---- the request -------------------------------------------------------------

def test_dump_request_layout():
    req = castate.dump_request(SEQ, dport=5201)
    assert len(req) == 16 + 56
    n, kind, flags, seq, pid = struct.unpack_from("=IHHII", req)
    assert (n, kind, flags, seq, pid) == (72, 20, 0x301, SEQ, 0)
    family, proto, ext, pad, states = struct.unpack_from("=BBBBI", req, 16)
    # INET_DIAG_INFO, and VEGASINFO for the DCTCP slot (ext is 8 bits)
    assert (family, proto, ext, pad) == (socket.AF_INET, 6, 0b110, 0)
    assert states == (1 << 1) | (1 << 4) | (1 << 8) | (1 << 9) | (1 << 11)
    assert struct.unpack_from(">HH", req, 24) == (0, 5201)
    assert req[28:] == bytes(44)


# ---- the reply -----------------------------------------------------------------

def test_two_sockets_and_done_in_one_read():
    buf = nlmsg(20, diag_msg()) + \
        nlmsg(20, diag_msg(sport=40001, attrs=rta(2, info(ca_state=0)))) + \
        done()
    rows, fin = parse_dump(buf, SEQ)
    assert fin
    assert rows[0] == {"sport": 40000, "dport": 5201, "state": 1,
                       "dst": "10.2.0.1", "tcp_state": 1, "ca_state": 3,
                       "retransmits": 2, "ssthresh": 21, "cwnd": 42,
                       "retrans_total": 9, "bytes_acked": 123456,
                       "backoff": 0, "rto_us": 0, "unacked": 0,
                       "sacked": 0, "lost": 0, "retrans": 0, "rtt_us": 0,
                       "rttvar_us": 0, "reordering": 0, "bytes_sent": 0,
                       "bytes_retrans": 0}
    assert rows[1]["sport"] == 40001 and rows[1]["ca_state"] == 0


def test_a_dump_spread_over_reads():
    rows, fin = parse_dump(nlmsg(20, diag_msg()), SEQ)
    assert len(rows) == 1 and not fin
    rows, fin = parse_dump(done(), SEQ)
    assert rows == [] and fin


@pytest.mark.parametrize("size, have, lack", [
    (104, {"ca_state", "cwnd", "retrans_total"}, {"bytes_acked"}),
    (84, {"ca_state", "cwnd", "ssthresh"}, {"retrans_total"}),
    (82, {"ca_state", "ssthresh"}, {"cwnd"}),
    (2, {"ca_state", "tcp_state"}, {"retransmits", "cwnd"}),
    (1, {"tcp_state"}, {"ca_state"}),
    (0, set(), {"tcp_state", "ca_state"}),
])
def test_short_tcp_info_gives_the_fields_it_holds(size, have, lack):
    buf = nlmsg(20, diag_msg(attrs=rta(2, info(size=size)))) + done()
    (row,), _ = parse_dump(buf, SEQ)
    assert have <= set(row) and not lack & set(row), row


def test_no_info_attribute_and_other_attributes():
    cong = rta(4, b"reno\0")
    (row,), _ = parse_dump(nlmsg(20, diag_msg(attrs=cong)), SEQ)
    assert "ca_state" not in row and row["dport"] == 5201
    (row,), _ = parse_dump(nlmsg(20, diag_msg(attrs=cong +
                                              rta(2, info(ca_state=4)))),
                           SEQ)
    assert row["ca_state"] == 4


def test_infinite_ssthresh_is_left_out():
    attrs = rta(2, info(ssthresh=0x7fffffff))
    (row,), _ = parse_dump(nlmsg(20, diag_msg(attrs=attrs)), SEQ)
    assert "ssthresh" not in row and row["cwnd"] == 42


def test_ipv6_peer():
    (row,), _ = parse_dump(nlmsg(20, diag_msg(dst="fd00:2::1",
                                              family=socket.AF_INET6)), SEQ)
    assert row["dst"] == "fd00:2::1"


def test_messages_of_another_request_are_skipped():
    buf = nlmsg(20, diag_msg(), seq=SEQ - 1) + nlmsg(3, struct.pack(
        "=i", 0), seq=SEQ - 1) + nlmsg(20, diag_msg(sport=1))
    rows, fin = parse_dump(buf, SEQ)
    assert [r["sport"] for r in rows] == [1] and not fin


def test_error_and_done_with_error_raise():
    err = nlmsg(2, struct.pack("=i", -errno.ENOENT) + bytes(16))
    with pytest.raises(DiagError, match="No such file"):
        parse_dump(err, SEQ)
    with pytest.raises(DiagError, match="not permitted"):
        parse_dump(done(-errno.EPERM), SEQ)
    with pytest.raises(DiagError, match="error message of 2 bytes"):
        parse_dump(nlmsg(2, b"\0\0"), SEQ)
    ack = nlmsg(2, struct.pack("=i", 0) + bytes(16))
    assert parse_dump(ack + done(), SEQ) == ([], True)
    assert parse_dump(nlmsg(3, b""), SEQ) == ([], True)


@pytest.mark.parametrize("buf, words", [
    (nlmsg(20, diag_msg(), length=500), "message length 500"),
    (nlmsg(20, diag_msg(), length=0), "message length 0"),
    (nlmsg(20, diag_msg(), length=15), "message length 15"),
    (nlmsg(20, diag_msg()) + b"\1\2\3", "3 stray bytes"),
    (nlmsg(20, diag_msg()[:71]), "inet_diag_msg of 71 bytes"),
    (nlmsg(20, diag_msg(attrs=rta(2, info(), length=0))),
     "attribute length 0"),
    (nlmsg(20, diag_msg(attrs=rta(2, info(), length=3))),
     "attribute length 3"),
    (nlmsg(20, diag_msg(attrs=rta(2, info(), length=300))),
     "attribute length 300"),
])
def test_every_length_is_bounded(buf, words):
    with pytest.raises(DiagError, match=words):
        parse_dump(buf, SEQ)


def damaged(good, seed):
    """Every prefix of the reply @good, and 3000 copies with 1-4 random
    bytes changed."""
    bad = [good[:n] for n in range(len(good))]
    rnd = random.Random(seed)
    for _ in range(3000):
        b = bytearray(good)
        for _ in range(rnd.randint(1, 4)):
            b[rnd.randrange(len(b))] = rnd.randrange(256)
        bad.append(bytes(b))
    return bad


def test_cut_and_damaged_replies_parse_or_raise_diag_error():
    """Every prefix of a reply, and replies with random bytes changed,
    either parse or raise DiagError: nothing reads past a length."""
    good = nlmsg(20, diag_msg()) + nlmsg(20, diag_msg(sport=2)) + done()
    bad = damaged(good, 1)
    parsed = 0
    for b in bad:
        try:
            parse_dump(b, SEQ)
            parsed += 1
        except DiagError:
            pass
    assert 0 < parsed < len(bad)


# ---- the ss row ---------------------------------------------------------------

# struct tcp_info (include/uapi/linux/tcp.h): field, offset, format.
TCPI = {"backoff": (4, "B"), "rto": (8, "I"), "unacked": (24, "I"),
        "sacked": (28, "I"), "lost": (32, "I"), "retrans": (36, "I"),
        "rtt": (68, "I"), "rttvar": (72, "I"), "snd_ssthresh": (76, "I"),
        "snd_cwnd": (80, "I"), "reordering": (88, "I"),
        "total_retrans": (100, "I"), "bytes_acked": (120, "Q"),
        "bytes_sent": (200, "Q"), "bytes_retrans": (208, "Q")}
BUSY = {"backoff": 2, "rto": 1236000, "unacked": 352, "sacked": 340,
        "lost": 7, "retrans": 1, "rtt": 612345, "rttvar": 4100,
        "snd_ssthresh": 13, "snd_cwnd": 22, "reordering": 9,
        "total_retrans": 176, "bytes_acked": 1506402,
        "bytes_sent": 2263173, "bytes_retrans": 251300}
IDLE = {"backoff": 0, "rto": 3000000, "unacked": 0, "sacked": 0, "lost": 0,
        "retrans": 0, "rtt": 0, "rttvar": 0, "snd_ssthresh": 0x7fffffff,
        "snd_cwnd": 10, "reordering": 3, "total_retrans": 0,
        "bytes_acked": 0, "bytes_sent": 0, "bytes_retrans": 0}


def tcpi(fields, size=232):
    b = bytearray(232)
    b[0] = 1
    for k, v in fields.items():
        off, fmt = TCPI[k]
        struct.pack_into("=" + fmt, b, off, v)
    return bytes(b[:size])


def dctcp(enabled=1, ce_state=3, alpha=60, ab_ecn=200, ab_tot=1234):
    return rta(9, struct.pack("=HHIII", enabled, ce_state, alpha, ab_ecn,
                              ab_tot))


def ss_text(f, dc=None, size=232):
    """What ss -tinH (iproute2 6.1, misc/ss.c tcp_show_info and
    tcp_stats_print) prints for tcp_info @f cut to @size bytes (ss pads
    it with zeros) and DCTCP slot @dc (enabled, ce_state, alpha, ab_ecn,
    ab_tot), in its order."""
    f = {k: (v if TCPI[k][0] + struct.calcsize(TCPI[k][1]) <= size else 0)
         for k, v in f.items()}
    out = ["ESTAB 0 0 10.0.1.1:40000 10.2.0.1:5201\n\t r"]
    if f["rto"] and f["rto"] != 3000000:
        out.append("rto:%g" % (f["rto"] / 1000))
    if f["backoff"]:
        out.append("backoff:%u" % f["backoff"])
    if f["rtt"]:
        out.append("rtt:%g/%g" % (f["rtt"] / 1000, f["rttvar"] / 1000))
    out.append("mss:1448")
    if f["snd_cwnd"]:
        out.append("cwnd:%u" % f["snd_cwnd"])
    if 0 < f["snd_ssthresh"] < 0xffff:
        out.append("ssthresh:%d" % f["snd_ssthresh"])
    for k in ("bytes_sent", "bytes_retrans", "bytes_acked"):
        if f[k]:
            out.append("%s:%u" % (k, f[k]))
    if dc and dc[0]:
        out.append("dctcp:(ce_state:%u,alpha:%u,ab_ecn:%u,ab_tot:%u)" %
                   dc[1:])
    elif dc:
        out.append("dctcp:fallback_mode")
    if f["unacked"]:
        out.append("unacked:%u" % f["unacked"])
    if f["retrans"] or f["total_retrans"]:
        out.append("retrans:%u/%u" % (f["retrans"], f["total_retrans"]))
    for k in ("lost", "sacked"):
        if f[k]:
            out.append("%s:%u" % (k, f[k]))
    if f["reordering"] != 3:
        out.append("reordering:%d" % f["reordering"])
    return " ".join(out) + "\n"


def diag_row(fields, dc=None, size=232):
    attrs = rta(2, tcpi(fields, size)) + (dctcp(*dc) if dc else b"")
    (row,), _ = parse_dump(nlmsg(20, diag_msg(attrs=attrs)), SEQ)
    return row


@pytest.mark.parametrize("fields, dc", [
    (BUSY, (1, 3, 60, 200, 1234)),
    (BUSY, (1, 0, 0, 0, 0)),
    (BUSY, (0, 3, 60, 200, 1234)),
    (BUSY, None),
    (IDLE, None),
    (dict(IDLE, rtt=600000, rttvar=300000, rto=1000000), (1, 65535, 1, 2,
                                                         3)),
    (dict(BUSY, rtt=1234567, rto=120000000, snd_ssthresh=0xfffe,
          reordering=0, retrans=0), None),
    (dict(BUSY, snd_ssthresh=0xffff, total_retrans=0, rtt=1), None),
    (dict(IDLE, snd_cwnd=0, snd_ssthresh=0, rto=0, reordering=300), None),
])
def test_ss_row_is_what_parse_ss_reads_from_ss(fields, dc):
    """Each field under ss's name and in ss's units (rtt, rto: "%g" of
    ms), present exactly when ss prints it: parse_ss of the text ss
    would print for the same tcp_info is the same row."""
    from satnet.measure import parse_ss
    (want,) = parse_ss(ss_text(fields, dc))
    assert castate.ss_row(diag_row(fields, dc)) == want


@pytest.mark.parametrize("size", [0, 4, 12, 40, 72, 80, 84, 92, 104, 128,
                                  200, 208, 216, 231])
def test_ss_row_of_a_short_tcp_info(size):
    """A tcp_info cut where an older kernel ends it: the fields it holds,
    as ss shows them; those beyond its end are left out (ss would print
    a zero for them, which a zero-padded row also leaves out)."""
    from satnet.measure import parse_ss
    (want,) = parse_ss(ss_text(BUSY, (1, 3, 60, 200, 1234), size))
    got = castate.ss_row(diag_row(BUSY, (1, 3, 60, 200, 1234), size))
    if size < 92:                       # reordering absent: ss prints 0
        want.pop("reordering", None)
    assert got == want


def test_ss_row_without_or_with_a_short_dctcp_slot():
    """No DCTCPINFO (a congestion control without get_info), or one too
    short to hold the slot: no dctcp_* keys, the rest as before."""
    bare = castate.ss_row(diag_row(BUSY))
    assert "dctcp_alpha" not in bare and bare["cwnd"] == 22
    short = rta(2, tcpi(BUSY)) + rta(9, bytes(15))
    (row,), _ = parse_dump(nlmsg(20, diag_msg(attrs=short)), SEQ)
    assert castate.ss_row(row) == bare
    with pytest.raises(DiagError, match="attribute length 40"):
        parse_dump(nlmsg(20, diag_msg(attrs=rta(2, tcpi(BUSY)) +
                                      rta(9, bytes(16), length=40))), SEQ)


def test_damaged_replies_give_ss_rows_or_diag_error():
    """A reply with the DCTCP slot, cut or with random bytes changed,
    parses into rows ss_row takes, or raises DiagError, nothing else."""
    attrs = rta(2, tcpi(BUSY)) + dctcp()
    good = nlmsg(20, diag_msg(attrs=attrs)) + \
        nlmsg(20, diag_msg(sport=2, attrs=attrs)) + done()
    bad = damaged(good, 2)
    parsed = 0
    for b in bad:
        try:
            rows, _ = parse_dump(b, SEQ)
        except DiagError:
            continue
        for r in rows:
            castate.ss_row(r)
        parsed += 1
    assert 0 < parsed < len(bad)


# ---- the time share ----------------------------------------------------------------

def rows_of(*samples):
    return [{"sport": 1, "t": t, "ca_state": s, "bytes_acked": 0}
            for t, s in samples]


def test_share_is_weighted_by_the_time_to_the_next_sample():
    s = ca_summary(rows_of((0, 0), (1, 0), (2, 3), (2.5, 3), (4, 0),
                           (5, 4), (6, 0), (6.5, 0)), 0.5)
    assert s["samples"] == 8 and s["span_s"] == 6.5
    assert s["share"] == {"open": round(3.5 / 6.5, 5), "disorder": 0.0,
                          "cwr": 0.0, "recovery": round(2 / 6.5, 5),
                          "loss": round(1 / 6.5, 5)}
    assert s["entries"] == {"recovery": 1, "loss": 1}
    assert s["transitions"] == [[0, 0], [2, 3], [4, 0], [5, 4], [6, 0]]
    assert s["interval_s"] == round(6.5 / 7, 4) and s["max_gap_s"] == 1.5
    assert s["period_s"] == 0.5


def test_recovery_to_loss_and_back_counts_each_entry():
    s = ca_summary(rows_of((0, 3), (1, 4), (2, 3), (3, 1), (4, 3),
                           (5, 3)), 1)
    assert s["entries"] == {"recovery": 2, "loss": 1}
    assert s["share"]["recovery"] == 0.6 and s["share"]["disorder"] == 0.2


def test_too_few_samples_and_unknown_states():
    assert ca_summary([], 0.02) == {"period_s": 0.02, "samples": 0}
    assert ca_summary(rows_of((3, 3)), 0.02) == {"period_s": 0.02,
                                                  "samples": 1}
    s = ca_summary(rows_of((0, 0), (1, 9), (2, 0)), 1)
    assert s["share"]["other"] == 0.5 and s["share"]["open"] == 0.5


def test_fmt_shares():
    assert castate.fmt_shares({"open": 0.831, "disorder": 0.004, "cwr": 0,
                               "recovery": 0.15, "loss": None}) == \
        "Open 83% / Disorder 0.4% / CWR 0% / Recovery 15% / Loss –"


# ---- a real dump on this host --------------------------------------------------------

@pytest.fixture
def connection():
    """An established loopback connection and its client side, in a
    network namespace of its own with lo up (the VM's own lo is down)."""
    ns = "castate-%d" % os.getpid()
    try:
        host.run(["ip", "netns", "add", ns])
    except (OSError, host.TopologyError) as e:
        pytest.skip("cannot make a network namespace: %s" % e)
    try:
        host.run(["ip", "-n", ns, "link", "set", "lo", "up"])
        with host.netns(ns):
            srv = socket.create_server(("127.0.0.1", 0))
            port = srv.getsockname()[1]
            cli = socket.create_connection(("127.0.0.1", port))
            acc, _ = srv.accept()
        yield cli, port, ns
        for s in (cli, acc, srv):
            s.close()
    finally:
        host.run(["ip", "netns", "del", ns], check=False)


def diag_or_skip(ns):
    try:
        d = castate.DiagSocket(ns)
        d.dump()
        return d
    except OSError as e:
        pytest.skip("no sock_diag here: %s" % e)


def test_dump_finds_a_loopback_connection(connection):
    cli, port, ns = connection
    d = diag_or_skip(ns)
    cli.sendall(b"x" * 10000)
    rows = [r for r in d.dump(port) if r["dport"] == port]
    d.close()
    me = [r for r in rows if r["sport"] == cli.getsockname()[1]]
    assert len(me) == 1, rows
    assert me[0]["dst"] == "127.0.0.1" and me[0]["ca_state"] == 0
    assert me[0]["cwnd"] >= 10 and me[0]["tcp_state"] == 1


def test_sampler_on_a_loopback_connection(connection):
    cli, port, ns = connection
    diag_or_skip(ns).close()
    s = castate.CaSampler(ns, "127.0.0.1", port, period=0.01)
    s.start()
    t0 = time.monotonic()
    for _ in range(20):
        cli.sendall(b"x" * 1000)
        time.sleep(0.01)
    # what a 10 ms sleep takes on this host now: a loaded host stretches
    # the sampler's period as much, so it bounds the interval, not 10 ms
    tick = (time.monotonic() - t0) / 20
    s.finish()
    sport = cli.getsockname()[1]
    mine = [r for r in s.rows if r["sport"] == sport]
    out = s.summary(mine)
    assert out["samples"] >= 5 and out["errors"] == 0, out
    assert out["share"]["open"] == 1.0 and out["dumps"] >= out["samples"]
    assert 0.009 < out["interval_s"] < 10 * tick and out["cpu_s"] > 0, \
        (out, tick)
    assert {r["sport"] for r in s.rows} == {sport}, "only the client side"


def test_a_sampler_that_dies_says_so(connection, monkeypatch):
    """An error the sampler does not expect ends its thread; finish()
    raises it rather than leave the run with empty series."""
    cli, port, ns = connection
    diag_or_skip(ns).close()
    s = castate.CaSampler(ns, "127.0.0.1", port, period=0.01)

    def broken(*_):
        raise KeyError("tcp_state")

    monkeypatch.setattr(s, "sample", broken)
    s.start()
    with pytest.raises(RuntimeError, match="sampler failed.*tcp_state"):
        s.finish()


def test_ss_row_of_an_idle_connection_is_what_ss_prints(connection):
    """The same idle socket read by `ss -tinH` and by the sampler's
    sock_diag: the same row (tests/integration/test_tcp_r.py does it with
    one of our modules, whose DCTCP slot ss prints too)."""
    from lib.kernel import ss_and_diag
    cli, port, ns = connection
    diag_or_skip(ns).close()
    cli.sendall(b"x" * 100000)
    ss, row = ss_and_diag(ns, "127.0.0.1", port, cli.getsockname()[1])
    assert {"cwnd", "rtt_ms", "rto_ms", "bytes_acked",
            "bytes_sent"} <= set(row), row
    assert row == ss
