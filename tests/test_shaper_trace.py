# SPDX-License-Identifier: GPL-2.0
"""tools/shaper-trace: its arguments and its reading of a trace, host
only; the guests it boots are tools/vm-run's."""

import struct
import subprocess
import sys

import pytest

from lib import tools

TOOL = tools.path("shaper-trace")


def load_tool():
    return tools.load("shaper-trace")


def run(*args):
    return subprocess.run([sys.executable, TOOL, *args],
                          capture_output=True, text=True, timeout=60)


def test_help_and_bad_arguments_run_nothing():
    r = run("--help")
    assert r.returncode == 0 and "--clocks" in r.stdout
    r = run("--clocks", "wall")
    assert r.returncode == 2 and "unknown clock wall" in r.stderr
    r = run("--seconds", "0")
    assert r.returncode == 2 and "positive" in r.stderr
    r = run("--scenario", "no-such-path")
    assert r.returncode == 2 and "no-such-path.toml" in r.stderr


def test_a_late_shaper_shows_in_the_gaps():
    """590-byte packets at 1.5 Mbit/s leave every 3.147 ms; one sent
    2 ms late and the next on time after it: a +2 ms gap, then a -2 ms
    one.  A pause of more than two packet times is an empty queue, not
    a gap; a packet of another size still takes the link."""
    t = load_tool()
    step = 590 * 8 / 1.5e6
    times = [i * step for i in range(100)]
    times[50] += 0.002
    times += [times[-1] + 1.0 + i * step for i in range(3)]
    pkts = [(x, 590) for x in times]
    s = t.summary(pkts, 1.5e6)
    assert s["wire_bytes"] == 590 and abs(s["packet_ms"] - 3.1467) < 1e-3
    assert s["departures"] == 103
    # 101 backlogged gaps (the 1 s pause left out): two off by 2 ms
    assert s["off_share"] == pytest.approx(2 / 101)
    assert s["gap_pct_ms"][2] == pytest.approx(0.0, abs=0.01)
    dev = sorted(t.service_gaps(pkts, 1.5e6)[2])
    assert dev[0] == pytest.approx(-0.002, abs=1e-9)
    assert dev[-1] == pytest.approx(0.002, abs=1e-9)
    other = sorted(pkts + [(times[10] + step / 2, 1514)])
    assert len(t.service_gaps(other, 1.5e6)[2]) == 102
    with pytest.raises(ValueError):
        t.summary([(0.0, 590), (10.0, 590)], 1.5e6)    # never backlogged


def test_captures_keep_their_timestamps(tmp_path):
    """tests/lib's reader, which the tool's capture goes through: each
    frame with its time, from microsecond and nanosecond pcaps of either
    byte order."""
    from lib.packets import read_pcap
    for magic, unit, endian in ((0xa1b2c3d4, 1e-6, "<"),
                                (0xa1b23c4d, 1e-9, ">")):
        path = tmp_path / ("t%x.pcap" % magic)
        head = struct.pack(endian + "IHHiIII", magic, 2, 4, 0, 0, 80, 1)
        recs = b"".join(struct.pack(endian + "IIII", 7, frac, 3, 60) + b"abc"
                        for frac in (5, 250))
        path.write_bytes(head + recs)
        assert read_pcap(str(path)) == [b"abc", b"abc"]
        got = read_pcap(str(path), times=True)
        assert [f for _, f in got] == [b"abc", b"abc"]
        assert [t for t, _ in got] == pytest.approx([7 + 5 * unit,
                                                     7 + 250 * unit])
