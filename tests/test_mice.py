# SPDX-License-Identifier: GPL-2.0
"""Short flows (seed 001 §XII-A): their sizes and arrivals, the sender
and sink on loopback, the experiment key and the run's summary."""

import os
import random
import socket
import statistics
import threading

import pytest

from satnet import experiment as xp
from satnet import mice, record

SPEC = {"per_s": 20, "mean_bytes": 10000, "shape": 1.5, "cc": "reno"}


def test_pareto_sizes_have_the_mean_and_scale_asked_for():
    rnd = random.Random(1)
    sizes = [mice.pareto_bytes(rnd, 10000, 1.5) for _ in range(200000)]
    assert min(sizes) == 3333                    # mean (shape - 1) / shape
    assert statistics.median(sizes) == pytest.approx(3333 * 2 ** (1 / 1.5),
                                                     rel=0.02)
    assert 9000 < statistics.mean(sizes) < 11000  # a heavy tail: loose


def test_arrivals_are_a_poisson_process_cut_at_the_run_end():
    arr = mice.arrivals(random.Random(2), 0.5, 20000, 10000, 1.5)
    starts = [t for t, _ in arr]
    assert starts == sorted(starts) and 0 < starts[0] and starts[-1] < 20000
    assert len(arr) == pytest.approx(10000, rel=0.05)
    gaps = [b - a for a, b in zip(starts, starts[1:])]
    assert statistics.mean(gaps) == pytest.approx(2.0, rel=0.05)
    assert statistics.median(gaps) == pytest.approx(2.0 * 0.6931, rel=0.06)
    assert mice.arrivals(random.Random(2), 0.5, 20000, 10000, 1.5) == arr


def test_every_mouse_finishes_on_loopback_and_the_plan_is_seeded():
    port = free_port()
    sink = mice.Sink([None], port=port, host="127.0.0.1")
    sink.start()
    driver = mice.Mice([(None, "127.0.0.1")] * 2, SPEC, 1.0, seed="s",
                       port=port)
    plan = list(driver.plan)
    driver.start()
    driver.join()                   # every mouse of the plan begun
    flows, errors = driver.finish(5.0)
    sink.stop()
    assert errors == [] and len(flows) == len(plan) > 10
    assert sorted((f[1], f[0], f[2]) for f in flows) == \
        [(round(t, 3), i, size) for t, i, size in plan]
    assert all(f[3] and f[3] > 0 for f in flows)
    s = mice.summary(flows)
    assert s["flows"] == s["started"] == len(flows) and s["done_share"] == 1
    assert s["goodput"] == pytest.approx(statistics.mean(
        f[2] * 8 / f[3] for f in flows) / 1e6)
    again = mice.Mice([(None, "127.0.0.1")] * 2, SPEC, 1.0, seed="s")
    assert again.plan == plan and mice.Mice(
        [(None, "127.0.0.1")] * 2, SPEC, 1.0, seed="t").plan != plan


def test_a_sink_never_started_closes_its_sockets_on_stop():
    sink = mice.Sink([None], port=free_port(), host="127.0.0.1")
    lsock = sink.listeners[0]
    sink.stop()
    assert lsock.fileno() == -1


def test_a_mouse_the_run_outlasts_is_cut_without_a_time():
    """A receiver that never reads: the mouse is still sending (or
    waiting) when the run ends, and is cut, with no time and no error."""
    lsock = socket.socket()
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(8)
    held = []
    threading.Thread(target=lambda: held.append(lsock.accept()),
                     daemon=True).start()
    driver = mice.Mice([(None, "127.0.0.1")],
                       {**SPEC, "per_s": 50, "mean_bytes": 50_000_000}, 0.1,
                       port=lsock.getsockname()[1])
    driver.start()
    driver.join()
    flows, errors = driver.finish(0.3)
    lsock.close()
    assert flows and all(f[3] is None for f in flows) and errors == []
    assert mice.summary(flows)["goodput"] is None


def test_a_refused_mouse_is_an_error_not_a_time():
    driver = mice.Mice([(None, "127.0.0.1")], {**SPEC, "per_s": 50}, 0.2,
                       port=free_port())
    driver.start()
    driver.join()
    flows, errors = driver.finish(2.0)
    assert flows and all(f[3] is None for f in flows)
    assert errors and "refused" in errors[0].lower()


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


MICE_EXP = '''name = "fx-mice"
title = "Fixture: long flows among short ones"
source = "seed 001 §XII-A"
scenario = "mild-reorder"
mix = { "reno" = 2 }
variants = ["reno"]
%s

[full]
reps = 3
duration_s = 10

[[claim]]
id = "fx-mice-same"
text = "the short flows do as well"
same = { a = "mice", b = "reno" }
'''


def write(tmp_path, mice_line):
    p = tmp_path / "fx-mice.toml"
    p.write_text(MICE_EXP % mice_line)
    return str(p)


def test_an_experiments_mice_have_pairs_of_their_own_in_its_identity(
        tmp_path):
    exp = xp.load_experiment(write(tmp_path, 'mice = { variant = "sack", '
                                   'pairs = 3, per_s = 0.5 }'))
    assert exp.mice == {"variant": "sack", "pairs": 3, "per_s": 0.5,
                        "mean_bytes": 10000, "shape": 1.5, "cc": "reno"}
    pt = exp.points("full")[0]
    assert pt.variant == "mix"
    assert exp.scenario_for("mix", {}, 10).pairs == 2 + 3
    spec = pt.spec()
    assert spec["mice"] == {**exp.mice, "profile": "sack"}
    assert [f["variant"] for f in spec["flows"]] == ["reno", "reno"]
    assert exp.claim_cells() == {("fx-mice", "mix", "base")}


@pytest.mark.parametrize("line, msg", [
    ('mice = { variant = "nope", per_s = 1 }', "variant must be"),
    ('mice = { variant = "tcp-r", per_s = 1 }', "without params"),
    ('mice = { variant = "sack", per_s = 0 }', "per_s"),
    ('mice = { variant = "sack", per_s = 1, shape = 1 }', "shape above 1"),
    ('mice = { variant = "sack", per_s = 1, pairs = 0 }', "pairs 1..32"),
    ('mice = { variant = "sack", per_s = 1, size = 3 }', "unknown key"),
])
def test_bad_mice_are_refused(tmp_path, line, msg):
    with pytest.raises(xp.ExperimentError, match=msg):
        xp.load_experiment(write(tmp_path, line))


def test_mice_need_a_mix_and_claims_name_them_only_where_they_run(
        tmp_path):
    p = tmp_path / "fx-mice.toml"
    p.write_text((MICE_EXP % 'mice = { variant = "sack", per_s = 1 }')
                 .replace('mix = { "reno" = 2 }\n', ""))
    with pytest.raises(xp.ExperimentError, match="beside a mix"):
        xp.load_experiment(str(p))
    with pytest.raises(xp.ExperimentError, match="not in the experiment"):
        xp.load_experiment(write(tmp_path, ""))


def test_a_runs_mice_are_summarised_as_one_more_variant():
    rec = {"flows": [{"variant": "reno", "goodput_bps": 1e6, "bytes": 1,
                      "counters": {}}],
           "mice": {"flows": [[0, 0.1, 10000, 0.5], [1, 0.2, 5000, 0.1],
                              [0, 0.3, 9999, None]],
                    "counters": {"TcpOutSegs": 40, "TcpRetransSegs": 2,
                                 "TcpExtTCPTimeouts": 3}}}
    m = record.summarize(rec, 6e6, 1448)["variants"]["mice"]
    assert m["goodput"] == pytest.approx((10000 * 8 / 0.5 +
                                          5000 * 8 / 0.1) / 2 / 1e6)
    assert (m["flows"], m["started"]) == (2, 3)
    assert m["done_share"] == pytest.approx(2 / 3)
    assert m["retrans_share"] == pytest.approx(0.05)
    assert m["timeouts"] == pytest.approx(1.0)
