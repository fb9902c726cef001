# SPDX-License-Identifier: GPL-2.0
"""Today's LEO paths: Gilbert-Elliott burst loss (leo-ge)."""

import re
import subprocess
import sys
import time

from satnet import measure
from satnet.scenario import ge_loss, load_profile, load_scenario
from satnet.topo import Topology

UDP = measure.BLAST
# A stronger chain than leo-ge's, so that 10 000 datagrams measure it:
# mean 0.1 x 80 % + 0.9 x 1 % = 8.9 %, P(loss | loss before) about 40 %.
# Bad and good losses differ, so a swapped 1-h or 1-k shows in the mean.
GE = {"p": 5, "r": 45, "bad_loss": 80, "good_loss": 1}


def test_gemodel_loses_in_bursts():
    """Numbered datagrams across leo-ge's data path (10 Mbit/s bottleneck,
    so that only the satellite stage loses): the loss rate is the chain's
    stationary mean within 20 % (4 standard deviations of a 10 000-packet
    run), netem's drop counter accounts for every gap, and a loss follows
    a loss 2.5 times more often than the mean (Bernoulli loss: 1 time,
    15 standard deviations below)."""
    sc = load_scenario("leo-ge", {"bottleneck.rate_mbit": 10,
                                  "bottleneck.limit": 1000,
                                  "forward.gemodel": GE})
    with Topology(sc, load_profile("linux")) as topo:
        rcv = topo.popen(topo.rcv[0], [sys.executable, UDP, "recv", "9",
                                       "30"], stdout=subprocess.PIPE,
                         text=True)
        measure.wait_listening(topo, topo.rcv[0], 9, udp=True)
        topo.ex(topo.snd[0], [sys.executable, UDP, "send",
                              topo.rcv_addr(0), "8e6", "16"], timeout=60)
        out, _ = rcv.communicate(timeout=60)
        stage = topo.ex(topo.r2, ["tc", "-s", "qdisc", "show", "dev",
                                  "r0"]).stdout
    head, gaps = out.split("\n")[:2]
    n = int(head.split()[1])
    lost = set(map(int, gaps.split()))
    assert n > 8000, head
    assert "loss gemodel" in stage, stage
    # the stage's own drops: the gaps, and any after the last arrival or
    # among the few IPv6 packets the links sent as they came up
    drops = int(re.search(r"dropped (\d+)", stage).group(1))
    assert 0 <= drops - len(lost) <= 20, (drops, len(lost), stage)
    mean = len(lost) / n
    want = ge_loss(**GE)
    assert abs(mean - want) <= 0.2 * want, "loss %.4f, chain %.4f" % (
        mean, want)
    followed = [i + 1 in lost for i in lost if i + 1 < n]
    cond = sum(followed) / len(followed)
    assert cond >= 2.5 * mean, "P(loss | loss) %.3f, mean %.3f" % (cond,
                                                                    mean)
    print("GE: %d datagrams, loss %.4f (chain %.4f), P(loss | loss) %.3f, "
          "netem drops %d" % (n, mean, want, cond, drops))

