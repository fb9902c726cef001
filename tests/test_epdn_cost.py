# SPDX-License-Identifier: GPL-2.0
"""tools/epdn-cost and its driver tests/bench/epdn_cost.c, host only.

The driver runs natively in a small mode: its self-checks (hits found,
evictions made, colliding keys in one set, ...) must hold for the current
core and for the old one.  The report is built from made-up counts.  A
tiny callgrind run goes through the whole tool when valgrind is there.
Everything is written under pytest's tmp_path, never to tracked files.
"""

import json
import os
import shutil
import subprocess
import sys

import pytest

from lib import tools

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOL = tools.path("epdn-cost")
tool = tools.load("epdn-cost")


def have_old_core():
    return subprocess.call(
        ["git", "-C", TOP, "cat-file", "-e", tool.OLD_REV + "^{commit}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) == 0


CORES = ["new", pytest.param("old", marks=pytest.mark.skipif(
    not have_old_core(), reason="commit %s not in this clone" % tool.OLD_REV))]

# Cases each core's driver must run (op, scenario).
EXPECTED = {
    "new": {("lookup_hit", "full"), ("lookup_miss", "full"),
            ("record_new", "full"), ("record_merge", "full"),
            ("record_evict", "full"), ("remove", "full"), ("sweep", "full"),
            ("record_evict", "flood"), ("record_evict", "tied"),
            ("lookup_miss", "tied-expired"), ("sweep", "tied-expired"),
            ("lookup_hit", "colliding"), ("record_evict", "colliding"),
            ("parse", "plain"), ("parse", "40-nops"), ("opt_find", "40-nops"),
            ("stamp_decide", "insert"), ("opt_encode", "plain"),
            ("opt_decode", "plain"), ("hash", "plain")},
    "old": {("lookup_hit", "full"), ("lookup_miss", "full"),
            ("record_evict", "full"), ("record_evict", "tied"),
            ("record_evict_rescan", "tied"), ("sweep", "tied-expired"),
            ("lookup_miss", "colliding"), ("remove", "colliding")},
}


def test_help_runs_nothing(tmp_path):
    r = subprocess.run([sys.executable, TOOL, "--help"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert "--check" in r.stdout
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("core", CORES)
def test_driver_self_checks(core, tmp_path):
    exe = tool.build_driver(core, str(tmp_path))
    r = subprocess.run([exe] + tool.driver_args(64, [1, 1000]),
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-4000:]
    assert r.stdout.rstrip().endswith(" 0 failed")
    cases = [tool.parse_desc(line) for line in r.stdout.splitlines()
             if line.startswith("epdn-cost ")]
    assert {c["core"] for c in cases} == {core}
    got = {(c["op"], c["scenario"]) for c in cases}
    assert EXPECTED[core] <= got, EXPECTED[core] - got
    assert all(0 < c["ops"] <= c["units"] for c in cases)
    assert {c["flows"] for c in cases if c["op"] == "record_evict"} == \
        {1, 1000}


def fake_cases(grow=1.0):
    """Counts of a made-up run: @grow scales the 1000-flow lookup miss."""
    cases = []

    def add(core, op, scen, flows, per_op, ops=100, units=100):
        cases.append(dict(core=core, op=op, scenario=scen, flows=flows,
                          ops=ops, units=units, ir=int(per_op * units)))
    for core in ("new", "old"):
        for f in (1, 1000):
            add(core, "lookup_hit", "full", f, 200)
            add(core, "lookup_miss", "full", f,
                300 * (grow if f == 1000 and core == "new" else 1))
            add(core, "record_evict", "full", f, 600 if core == "new"
                else 300 * f)
            add(core, "sweep", "full", f, 100, ops=10, units=1280)
            add(core, "sweep", "tied-expired", f, 400, ops=1, units=128)
        add(core, "lookup_hit", "colliding", 1000, 250)
        add(core, "parse", "plain", 0, 108)
        add(core, "empty", "plain", 0, 1)
    add("old", "record_evict_rescan", "tied", 1000, 123456, ops=1, units=1)
    return cases


def test_rows_and_check():
    rows = tool.rows_of(fake_cases(), "new", [1, 1000])
    hit = next(r for r in rows if r["op"] == "lookup_hit")
    assert hit["cols"] == {1: 200, 1000: 200}
    assert hit["adversarial"] == (250, "colliding", 1000)
    assert hit["ratio"] == pytest.approx(1.25)
    assert not tool.failures(rows)
    sweep = [r for r in rows if r["op"] == "sweep"]
    assert {r["per"] for r in sweep} == {"op", "unit"}
    assert not any(r["per_packet"] for r in sweep)
    grown = tool.failures(tool.rows_of(fake_cases(grow=2.5), "new",
                                       [1, 1000]))
    assert [r["op"] for r in grown] == ["lookup_miss"]


def test_markdown_section_replaced():
    meta = dict(flows=[1, 1000], cores=["new", "old"], command="x",
                valgrind="valgrind-0", compiler="cc", commit="abc",
                date="now", runtime_s=1.0, ops=100, old_evict_ops="32")
    section = tool.markdown(meta, fake_cases())
    assert section.startswith(tool.BEGIN) and section.rstrip().endswith(
        tool.END)
    assert "123,456" in section and "**met**" in section
    doc = "# title\n\nkept\n"
    once = tool.replace_section(doc, section)
    assert once.startswith(doc.rstrip("\n")) and once.count(tool.BEGIN) == 1
    twice = tool.replace_section(once + "\ntail\n", section)
    assert twice.count(tool.BEGIN) == 1 and twice.endswith("\ntail\n")


def test_parse_callgrind(tmp_path):
    out = tmp_path / "callgrind.out"
    out.write_text(
        "part: 1\ndesc: Trigger: Client Request: epdn-cost core=new "
        "op=parse scenario=plain flows=0 ops=10 units=10\n"
        "summary: 0\ntotals: 1080\n"
        "part: 2\ndesc: Trigger: Program termination\ntotals: 0\n")
    assert tool.parse_callgrind(str(out)) == [dict(
        core="new", op="parse", scenario="plain", flows=0, ops=10,
        units=10, ir=1080)]


@pytest.mark.skipif(not shutil.which("valgrind"), reason="needs valgrind")
def test_tool_under_callgrind(tmp_path):
    """The whole tool, tiny: --check writes no docs, only under tmp_path."""
    js = tmp_path / "cost.json"
    args = [sys.executable, TOOL, "--check", "--ops", "64", "--flows", "1",
            "1000", "--json", str(js), "--build-dir", str(tmp_path / "b"),
            "--jobs", "2"]
    if not have_old_core():
        args.append("--no-old")
    r = subprocess.run(args, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    data = json.loads(js.read_text())
    assert data["cases"] and all(c["ir"] > 0 for c in data["cases"])
    assert {c["core"] for c in data["cases"]} == set(data["meta"]["cores"])
