# SPDX-License-Identifier: GPL-2.0
"""tools/clock-check: its arguments, host only; the runs it starts are
satnet run's, tested elsewhere."""

import json
import subprocess
import sys

from lib import tools

TOOL = tools.path("clock-check")


def run(*args):
    return subprocess.run([sys.executable, TOOL, *args],
                          capture_output=True, text=True, timeout=60)


def load_tool():
    return tools.load("clock-check")


def test_help_runs_nothing(tmp_path):
    r = run("--help", "--out", str(tmp_path / "c"))
    assert r.returncode == 0 and "usage: clock-check" in r.stdout
    assert "h2h-geo" in r.stdout or "family" in r.stdout
    assert not (tmp_path / "c").exists()


def test_bad_input_is_refused_before_anything_runs(tmp_path):
    out = str(tmp_path / "c")
    for args, msg in ((["--arms", "real,sundial"], "no arm sundial"),
                      (["--reps", "0"], "at least 1"),
                      (["--duration", "0"], "at least 1"),
                      (["--families", "h2h-geo,s999"],
                       "not a family's experiment: s999"),
                      (["--families", "s003-fig3", "--variants", "cubic"],
                       "no family runs cubic")):
        r = run(*args, "--out", out)
        assert r.returncode == 2 and msg in r.stderr, (args, r.stderr)
    assert not (tmp_path / "c").exists()


def test_families_name_experiments_that_exist_and_cover_every_path():
    from satnet import experiment as xp
    names = {e.name: e for e in xp.load_all()}
    for fam, exp, variants, points in load_tool().FAMILIES:
        assert exp in names, fam
        assert set(variants) <= set(names[exp].variants), fam
        point, _ = xp.parse_point(list(points), names[exp])
        assert bool(point) == (names[exp].sweep is not None), fam
    assert {names[f[1]].scenario for f in load_tool().FAMILIES} == \
        {e.scenario for e in names.values()}


def test_variants_narrow_the_families():
    tool = load_tool()
    fams, why = tool.chosen("h2h-geo,h2h-geo-reorder,s003-fig3", "cubic")
    assert why is None
    assert [(f[1], f[2]) for f in fams] == [("h2h-geo", ("cubic",)),
                                            ("h2h-geo-reorder", ("cubic",))]
    assert tool.chosen(None, None) == (tool.FAMILIES, None)


def test_flow_seconds_add_up_the_stored_runs(tmp_path):
    d = tmp_path / "h2h-geo" / "quick" / "cubic"
    d.mkdir(parents=True)
    for i, s in enumerate((60, 60, 30)):
        (d / ("base-rep%d.json" % i)).write_text(
            json.dumps({"meta": {"duration_s": s}}))
    assert load_tool().flow_seconds(str(tmp_path), "h2h-geo") == 150
    assert load_tool().flow_seconds(str(tmp_path), "h2h-leo-ge") == 0


def test_guest_cpu_counts_the_runs_flagged_cpu_bound(tmp_path):
    d = tmp_path / "h2h-geo" / "quick" / "cubic"
    d.mkdir(parents=True)
    for i, b in enumerate((0.8, 0.2, 0.5)):
        cpu = {"busy_share": b, "cpu_bound": b > 0.5}
        (d / ("base-rep%d.json" % i)).write_text(
            json.dumps({"meta": {}, "host": {"cpu": cpu}}))
    (d / "old-rep0.json").write_text(json.dumps({"meta": {}, "host": {}}))
    mean, bound, n = load_tool().guest_cpu(str(tmp_path), "h2h-geo")
    assert (round(mean, 3), bound, n) == (0.5, 1, 3)
    assert load_tool().guest_cpu(str(tmp_path), "h2h-leo-ge") == (0.0, 0, 0)


def test_a_failed_family_does_not_stop_the_arm(tmp_path, monkeypatch):
    tool = load_tool()
    ran = []

    class Done:
        def __init__(self, rc):
            self.returncode = rc

    def fake_run(cmd, cwd=None, env=None):
        exp = cmd[cmd.index("run") + 1]
        ran.append(exp)
        assert cmd[cmd.index("--duration") + 1] == "300"
        assert cmd[cmd.index("--rtt-tolerance") + 1] == "4.0"
        return Done(1 if exp == "h2h-geo" else 0)

    monkeypatch.setattr(tool.subprocess, "run", fake_run)
    args = type("A", (), {"out": str(tmp_path), "reps": 1, "width": 1,
                          "load": 1, "duration": 300,
                          "rtt_tolerance": 4.0})()
    walls, failed = {}, []
    tool.run_arm("virtual", args, tool.FAMILIES[:3], walls, failed)
    assert ran == [f[1] for f in tool.FAMILIES[:3]]
    assert failed == ["virtual: h2h-geo"]
    assert set(walls["virtual"]) == set(ran)


def test_walls_keep_what_another_check_added_meanwhile(tmp_path):
    """Two checks into one --out (the real arm of one family beside the
    virtual arm of another) each add their own wall time."""
    tool = load_tool()
    args = type("A", (), {"out": str(tmp_path)})()
    mine = {}
    tool.add_wall(args, mine, "real", "h2h-geo", 100)
    other = tool.load_walls(args)
    tool.add_wall(args, other, "virtual", "h2h-geo", 30)
    tool.add_wall(args, mine, "real", "h2h-geo", 50)
    assert tool.load_walls(args) == mine == \
        {"real": {"h2h-geo": 150}, "virtual": {"h2h-geo": 30}}


def test_the_satnet_it_starts_is_this_checkouts():
    tool = load_tool()
    r = subprocess.run(tool.SATNET + ["run", "--help"], env=tool.ENV, cwd="/",
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "--duration" in r.stdout, r.stderr
