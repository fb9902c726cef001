# SPDX-License-Identifier: GPL-2.0
"""satnet.ssdecode: our modules' DCTCP-slot fields in `ss -tinH` output.

The samples follow iproute2 6.1's layout (misc/ss.c: the address line,
then "\\n\\t" and tcp_show_info()'s fields: option flags, the congestion
control's name, wscale, rto, rtt, ..., cwnd, ssthresh, ..., dctcp:(...),
..., reordering, ...), with the values of docs/rn-tcp.md, docs/tcp-r.md and
docs/esack.md.  ss pads the info line of a socket with spaces when the
previous one was longer; the samples keep that.
"""

import pytest

from satnet.ssdecode import decode_fields, decode_ss, format_ss

RN = (
    "ESTAB 0      1351520   10.1.0.1:42514   10.2.0.1:5201\n"
    "\t ts sack rn wscale:9,7 rto:1212 rtt:1008.52/3.113 mss:1448 "
    "pmtu:1500 rcvmss:536 advmss:1448 cwnd:86 ssthresh:43 "
    "bytes_sent:9471680 bytes_retrans:63712 bytes_acked:8244712 "
    "segs_out:6542 segs_in:3297 data_segs_out:6540 "
    "dctcp:(ce_state:1,alpha:60,ab_ecn:200,ab_tot:1234) "
    "send 988Kbps lastrcv:19372 pacing_rate 1.19Mbps "
    "delivery_rate 870Kbps delivered:5695 busy:19368ms unacked:85 "
    "retrans:0/44 sacked:12 dsack_dups:1 reordering:60 reord_seen:14 "
    "rcv_space:14480 rcv_ssthresh:64088 notsent:1228416 minrtt:1004.7 "
    "snd_wnd:1468416\n")

R = (
    "ESTAB 0      412880    10.1.1.1:50120   10.2.1.1:5201\n"
    "\t ts sack r wscale:9,7 rto:1220 rtt:1016.1/5.5 mss:1448 "
    "pmtu:1500 rcvmss:536 advmss:1448 cwnd:35 ssthresh:35 "
    "bytes_sent:2896000 bytes_acked:2500000 segs_out:2000 segs_in:1200 "
    "data_segs_out:1998 dctcp:(ce_state:21,alpha:3,ab_ecn:0,ab_tot:0) "
    "send 399Kbps lastrcv:9000 pacing_rate 478Kbps unacked:35 "
    "retrans:0/24 rcv_space:14480 minrtt:1004.2 snd_wnd:1468416\n")

ESACK_V6 = (
    "ESTAB 0      50680     [fd00:1::1]:33304   [fd00:2::1]:5201\n"
    "\t ts sack ecn esack wscale:9,7 rto:620 rtt:416.3/2.4 mss:1428 "
    "pmtu:1500 rcvmss:536 advmss:1428 cwnd:35 ssthresh:35 "
    "bytes_sent:1713600 bytes_acked:1663620 segs_out:1200 "
    "segs_in:800 data_segs_out:1199 "
    "dctcp:(ce_state:51,alpha:2,ab_ecn:3,ab_tot:0) send 960Kbps "
    "unacked:35 retrans:0/10 minrtt:410.1 snd_wnd:1468416"
    "                              \n")

CUBIC = (
    "ESTAB 0      0         10.1.2.1:41230   10.2.2.1:5201\n"
    "\t cubic wscale:9,7 rto:1004 rtt:1000.2/0.5 ato:40 mss:1448 "
    "pmtu:1500 rcvmss:536 advmss:1448 cwnd:10 bytes_sent:140 "
    "bytes_acked:141 bytes_received:4 segs_out:6 segs_in:5 "
    "data_segs_out:3 data_segs_in:2 send 116Kbps lastsnd:1004 "
    "lastrcv:1004 lastack:1004 pacing_rate 232Kbps delivery_rate 11Kbps "
    "delivered:4 app_limited rcv_space:14480 rcv_ssthresh:64088 "
    "minrtt:1000.1 snd_wnd:64256\n")

# DCTCP itself: its fields are its own, never renamed.
DCTCP = (
    "ESTAB 0      0         10.1.3.1:41990   10.2.3.1:5201\n"
    "\t ts sack ecn dctcp wscale:9,7 rto:204 rtt:0.3/0.1 mss:1448 "
    "cwnd:10 ssthresh:7 dctcp:(ce_state:0,alpha:1024,ab_ecn:12,"
    "ab_tot:300) send 386Mbps minrtt:0.2\n")

SAMPLE = RN + R + ESACK_V6 + CUBIC + DCTCP


def test_decode_fields_rn():
    assert decode_fields("rn", 1, 60, 200, 1234) == {
        "false_frs": 1, "dupthresh": 60, "kval_permille": 200,
        "kval": 0.2, "dn_acks": 1234}


def test_decode_fields_r():
    assert decode_fields("r", 21, 3, 4, 5) == {
        "modified": 21, "drop": 3, "ece": 4, "repeat": 5}


@pytest.mark.parametrize("ce_state, secwnd, b2", [
    (0, 0, 0), (1, 1, 0), (51, 1, 5), (50, 0, 5), (65531, 1, 6553)])
def test_decode_fields_esack_splits_secwnd_and_b2(ce_state, secwnd, b2):
    assert decode_fields("esack", ce_state, 2, 3, 4) == {
        "secwnd": secwnd, "b2": b2, "a1": 2, "a2": 3, "b1": 4}


@pytest.mark.parametrize("cc", ["cubic", "dctcp", "reno", ""])
def test_decode_fields_refuses_other_ccs(cc):
    with pytest.raises(ValueError):
        decode_fields(cc, 0, 0, 0, 0)


def test_decode_ss_one_entry_per_connection():
    rows = decode_ss(SAMPLE)
    assert [r["cc"] for r in rows] == ["rn", "r", "esack", "cubic", "dctcp"]
    assert rows[0]["state"] == "ESTAB"
    assert rows[0]["local"] == "10.1.0.1:42514"
    assert rows[0]["peer"] == "10.2.0.1:5201"
    assert rows[2]["local"] == "[fd00:1::1]:33304"
    assert rows[2]["peer"] == "[fd00:2::1]:5201"


def test_decode_ss_rn():
    row = decode_ss(RN)[0]
    assert (row["cwnd"], row["ssthresh"]) == (86, 43)
    assert (row["rtt_ms"], row["rttvar_ms"]) == (1008.52, 3.113)
    assert row["dctcp"] == {"ce_state": 1, "alpha": 60, "ab_ecn": 200,
                            "ab_tot": 1234}
    assert row["module"] == decode_fields("rn", 1, 60, 200, 1234)
    assert row["module"]["dupthresh"] == 60


def test_decode_ss_r_and_esack():
    r, esack = decode_ss(R + ESACK_V6)
    assert r["module"] == {"modified": 21, "drop": 3, "ece": 0,
                           "repeat": 0}
    assert esack["module"] == {"secwnd": 1, "b2": 5, "a1": 2, "a2": 3,
                               "b1": 0}
    assert (esack["cwnd"], esack["ssthresh"], esack["rtt_ms"]) == \
        (35, 35, 416.3)


def test_decode_ss_other_ccs_have_no_module_fields():
    cubic, dctcp = decode_ss(CUBIC + DCTCP)
    assert cubic["module"] is None and cubic["dctcp"] is None
    assert cubic["ssthresh"] is None      # ss leaves out an infinite one
    assert (cubic["cwnd"], cubic["rtt_ms"]) == (10, 1000.2)
    assert dctcp["module"] is None
    assert dctcp["dctcp"]["alpha"] == 1024


def test_decode_ss_skips_lines_that_are_no_socket():
    text = ("State  Recv-Q Send-Q Local Address:Port Peer Address:Port\n"
            "@1700000000.123456789\n" + RN + "\n")
    assert [r["cc"] for r in decode_ss(text)] == ["rn"]
    assert decode_ss("") == []


def test_decode_ss_without_state_column_and_with_extras():
    # `ss -tinH state established` drops the State column; -p and -e add
    # fields to the address line that must not be taken for the cc.
    text = ("0      0   10.1.0.1:42514  10.2.0.1:5201 "
            "users:((\"iperf3\",pid=812,fd=5)) uid:0 ino:41237 "
            "sk:3001 cgroup:/ <->\n" + RN.split("\n", 1)[1])
    row = decode_ss(text)[0]
    assert row["state"] is None and row["local"] == "10.1.0.1:42514"
    assert row["cc"] == "rn" and row["module"]["kval_permille"] == 200


def test_decode_ss_oneline():
    # `ss -tinHO`: the info on the address line.
    row = decode_ss(R.replace("\n\t", " ", 1))[0]
    assert row["cc"] == "r" and row["module"]["modified"] == 21


def test_format_ss_names_the_fields():
    out = format_ss(SAMPLE)
    assert " rn:(false_frs:1,dupthresh:60,kval:0.200,dn_acks:1234) " in out
    assert " r:(modified:21,drop:3,ece:0,repeat:0) " in out
    assert " esack:(secwnd:1,a1:2,a2:3,b1:0,b2:5) " in out
    assert out.count("dctcp:(") == 1           # DCTCP's own, kept


def test_format_ss_changes_nothing_else():
    out = format_ss(SAMPLE)
    assert out.replace(
        "rn:(false_frs:1,dupthresh:60,kval:0.200,dn_acks:1234)",
        "dctcp:(ce_state:1,alpha:60,ab_ecn:200,ab_tot:1234)").replace(
        "r:(modified:21,drop:3,ece:0,repeat:0)",
        "dctcp:(ce_state:21,alpha:3,ab_ecn:0,ab_tot:0)").replace(
        "esack:(secwnd:1,a1:2,a2:3,b1:0,b2:5)",
        "dctcp:(ce_state:51,alpha:2,ab_ecn:3,ab_tot:0)") == SAMPLE


@pytest.mark.parametrize("text", [CUBIC, DCTCP, CUBIC + DCTCP, "", "\n",
                                  "\t ts sack cubic cwnd:10\n"])
def test_format_ss_passes_other_ccs_through(text):
    assert format_ss(text) == text


def test_format_ss_kval_keeps_per_mille_exact():
    out = format_ss(RN.replace("ab_ecn:200", "ab_ecn:64000"))
    assert "kval:64.000," in out
    out = format_ss(RN.replace("ab_ecn:200", "ab_ecn:5"))
    assert "kval:0.005," in out
