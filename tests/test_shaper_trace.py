# SPDX-License-Identifier: GPL-2.0
"""tools/shaper-trace: its arguments and its reading of a trace, host
only; the guests it boots are tools/vm-run's."""

import os
import struct
import subprocess
import sys

import pytest

from lib import tools

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOL = os.path.join(TOP, "tools", "shaper-trace")


def load_tool():
    return tools.load("shaper-trace")


def run(*args):
    return subprocess.run([sys.executable, TOOL, *args],
                          capture_output=True, text=True, timeout=60)


def write_pcap(path, packets):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 80, 1))
        for t, n in packets:
            cap = min(n, 80)
            f.write(struct.pack("<IIII", int(t), round(t % 1 * 1e6), cap,
                                n) + b"\0" * cap)


def test_help_and_bad_arguments_run_nothing():
    r = run("--help")
    assert r.returncode == 0 and "--clocks" in r.stdout
    r = run("--clocks", "wall")
    assert r.returncode == 2 and "unknown clock wall" in r.stderr
    r = run("--seconds", "0")
    assert r.returncode == 2 and "positive" in r.stderr


def test_a_late_shaper_shows_in_the_gaps(tmp_path):
    """590-byte packets at 1.5 Mbit/s leave every 3.147 ms; one sent
    2 ms late and the next on time after it: a +2 ms gap, then a -2 ms
    one.  A pause of more than two packet times is an empty queue, not
    a gap; an ACK-sized packet is not the commonest size."""
    t = load_tool()
    step = 590 * 8 / 1.5e6
    times = [i * step for i in range(100)]
    times[50] += 0.002
    times += [times[-1] + 1.0 + i * step for i in range(3)]
    pkts = [(x, 590) for x in times] + [(times[10] + 0.0001, 66)]
    pkts.sort()
    path = str(tmp_path / "t.pcap")
    write_pcap(path, pkts)
    got = t.read_pcap(path)
    assert [n for _, n in got] == [n for _, n in pkts]
    assert abs(got[50][0] - pkts[50][0]) < 2e-6
    s = t.summary([p for p in got if p[1] > 200], 1.5e6)
    assert s["wire_bytes"] == 590 and abs(s["packet_ms"] - 3.1467) < 1e-3
    assert s["departures"] == 103
    # 101 backlogged gaps (the 1 s pause left out): two off by 2 ms
    assert s["off_share"] == pytest.approx(2 / 101)
    assert s["gap_pct_ms"][2] == pytest.approx(0.0, abs=0.01)
    dev = sorted(t.service_gaps([p for p in got if p[1] > 200], 1.5e6)[2])
    assert dev[0] == pytest.approx(-0.002, abs=1e-5)
    assert dev[-1] == pytest.approx(0.002, abs=1e-5)
    with pytest.raises(ValueError):
        t.read_pcap(TOOL)                   # not a pcap
