# SPDX-License-Identifier: GPL-2.0
"""satnet end to end: a two-point experiment through the installed
`satnet run` (in this kernel, as the VM runs it), then `satnet report`
from the records it wrote.  Everything goes to a temporary folder."""

import collections
import glob
import json
import os
import re
import shutil
import subprocess

import pytest

from satnet import record
from satnet.paths import TOP, hang_limit

EXP_DIR = os.path.join(TOP, "tests", "fixtures", "experiments")
EXP = os.path.join(EXP_DIR, "fx-sweep.toml")


def satnet(*args):
    exe = shutil.which("satnet")
    assert exe, "satnet is not installed: run tools/install-deps.sh"
    return subprocess.run([exe] + list(args), capture_output=True,
                          text=True, timeout=hang_limit(900))


def test_satnet_is_installed_from_this_checkout():
    """The command imports the package of the checkout under test (the
    last one tools/install-deps.sh set up), from any folder."""
    exe = shutil.which("satnet")
    assert exe, "satnet is not installed: run tools/install-deps.sh"
    interp = open(exe).readline()[2:].strip()
    r = subprocess.run([interp, "-c", "import satnet.paths as p; "
                        "print(p.TOP)"], capture_output=True, text=True,
                       cwd="/")
    assert r.stdout.strip() == TOP, "satnet comes from %r: run " \
        "tools/install-deps.sh in %s" % (r.stdout.strip(), TOP)


@pytest.mark.statistical
def test_run_two_points_then_report(tmp_path):
    res = str(tmp_path / "results")
    args = ["run", EXP, "--point", "forward.per=0.001", "--reps", "1",
            "--duration", "8", "--width", "2", "--results", res]
    r = satnet(*args, "--here")
    assert r.returncode == 0, r.stdout + r.stderr
    recs = record.load_all(res, warn=lambda m: (_ for _ in ()).throw(
        AssertionError(m)))
    assert sorted(x["variant"] for x in recs) == ["reno", "tcp-r"]
    for x in recs:
        assert x["mode"] == "point" and x["point"] == {"forward.per": 0.001}
        assert x["meta"]["width"] == 2 and x["meta"]["duration_s"] == 8
        assert x["meta"]["clock"]["mode"] == \
            os.environ.get("SATNET_CLOCK", "real")
        assert x["selfcheck"]["attempts"] >= 1
        assert x["flows"][0]["ss"], "no ss samples"
        assert x["summary"]["variants"][x["variant"]]["goodput"] > 0.3
    tcpr = [x for x in recs if x["variant"] == "tcp-r"][0]
    assert tcpr["meta"]["modules"]["tcp_r"]["srcversion"]
    assert tcpr["host"]["proc_receiver"], "the RN-TCP receiver saw nothing"
    assert tcpr["bottleneck"]["delta"].get("epdn.packets", 0) > 100

    again = satnet(*args, "--here")                 # resumes: nothing to do
    assert again.returncode == 0 and "2 stored, 0 to run" in again.stderr

    md = tmp_path / "report" / "results.md"
    md.parent.mkdir()
    r = satnet("report", "--results", res, "--md", str(md),
               "--experiments", EXP_DIR)
    assert r.returncode == 0, r.stderr
    text = md.read_text()
    assert "from 2 stored runs" in text and "## fx-sweep" in text
    assert (md.parent / "results" / "fx-sweep.png").exists()
    rows = open(md.parent / "results" / "fx-sweep.csv").read().splitlines()
    assert len(rows) == 3, rows
    assert json.load(open(glob.glob(os.path.join(
        res, "fx-sweep", "point", "reno", "*.json"))[0]))["schema"] == \
        record.SCHEMA


def netns_names():
    return subprocess.run(["ip", "netns", "list"], capture_output=True,
                          text=True).stdout


def test_up_exec_down(tmp_path, monkeypatch):
    """A path left up to stand in: the variant's algorithm is the senders'
    default, the bottleneck's epdn is readable through tc -j (the plugin
    found), a command runs in a node, and down removes it all, also
    what a crashed `up` left without a state file."""
    monkeypatch.setenv("SATNET_TESTBED_STATE", str(tmp_path / "tb.json"))
    allowed = open("/proc/sys/net/ipv4/tcp_allowed_congestion_control").read()
    r = satnet("up", "geo", "--variant", "tcp-r")
    try:
        assert r.returncode == 0, r.stderr
        assert "snd0" in r.stdout and "10.2.0.1" in r.stdout
        assert "snup-r1" in netns_names()
        r2 = satnet("up", "geo")
        assert r2.returncode == 2 and "satnet down first" in r2.stderr
        cc = satnet("exec", "snd0", "--", "sysctl", "-n",
                    "net.ipv4.tcp_congestion_control")
        assert cc.returncode == 0 and cc.stdout.strip() == "r", cc.stderr
        q = satnet("exec", "r1", "--", "tc", "-s", "-j", "qdisc", "show",
                   "dev", "b")
        kinds = {x["kind"]: x for x in json.loads(q.stdout)}
        assert "limit" in kinds["epdn"]["options"], q.stdout
        p = satnet("exec", "snd0", "--", "ping", "-c", "3", "-q",
                   "10.2.0.1")
        assert p.returncode == 0, p.stdout + p.stderr
        bad = satnet("exec", "nowhere", "--", "true")
        assert bad.returncode == 2 and "the nodes are" in bad.stderr
    finally:
        d = satnet("down")
    assert d.returncode == 0 and "4 namespaces removed" in d.stdout
    assert "snup-" not in netns_names()
    assert open("/proc/sys/net/ipv4/tcp_allowed_congestion_control").read() \
        == allowed
    # a crash left a namespace and no state file
    subprocess.run(["ip", "netns", "add", "snup-r1"], check=True)
    d = satnet("down")
    assert d.returncode == 0 and "1 namespaces removed" in d.stdout
    assert "snup-" not in netns_names()
    r = satnet("exec", "snd0", "--", "true")
    assert r.returncode == 2 and "no testbed is up" in r.stderr


TRACING = "/sys/kernel/tracing"
NINE_P = re.compile(r"^\s*(.+?)-\d+\s+\[.*9p_client_req: client (\d+) "
                    r"request (\S+)")


def trace_write(name, text):
    with open(os.path.join(TRACING, name), "w") as f:
        f.write(text)


def nine_p_requests(text, begin, end):
    """(process, client, request) of every 9p request traced between the
    markers @begin and @end, and the client that served each marker's
    first request (the marker's line is followed by a stat of a file)."""
    inside, after, first, out = False, None, {}, []
    for line in text.splitlines():
        m = re.search(r"tracing_mark_write: (\S+)", line)
        if m:
            after = m.group(1)
            inside = after == begin or (inside and after != end)
            continue
        m = NINE_P.match(line)
        if m:
            first.setdefault(after, m.group(2))
            if inside:
                out.append(m.groups())
    return out, first


@pytest.mark.skipif(not any(ln.split()[1:3] == [TOP, "9p"]
                            for ln in open("/proc/mounts")),
                    reason="the checkout is not a 9p share here (the VM)")
def test_a_point_asks_the_checkout_for_nothing(monkeypatch):
    """Under the virtual clock a guest that waits for the host is idle and
    its clock runs on at the host's pace.  From the self-check to the
    end of the flows nothing is read from or written to the checkout (a
    9p share), and the harness's own process asks the host for nothing:
    the programs it starts (ping, iperf3, tc) run from copies in the
    guest's tmpfs and ask it for a file or two each; the flow's ss series
    comes from sock_diag, no `ss` is started.  A GEO point on an epdn
    bottleneck: tc reads our plugin and netem tables.  The requests in
    the window, per program, are printed (pytest -s)."""
    from satnet import experiment as xp
    from satnet import measure, runner
    check, flows = measure.self_check, runner.measure_point

    def marked(fn, before=None, after=None):
        def call(*a, **kw):
            if before:
                trace_write("trace_marker", before)
            try:
                return fn(*a, **kw)
            finally:
                if after:
                    trace_write("trace_marker", after)
        return call

    monkeypatch.setattr(measure, "self_check",
                        marked(check, before="window-begin"))
    monkeypatch.setattr(runner, "measure_point",
                        marked(flows, after="window-end"))
    (pt,) = xp.load_experiment("h2h-geo").points("quick", 1, ["cubic"], 3)
    runner.load_modules(pt)
    event = "events/9p/9p_client_req/enable"
    trace_write("buffer_size_kb", "8192")
    trace_write("trace", "")
    trace_write(event, "1")
    trace_write("tracing_on", "1")
    try:
        trace_write("trace_marker", "project")
        os.stat(os.path.join(TOP, "Makefile"))
        trace_write("trace_marker", "run")
        rec = runner.run_point(pt)
        with open(os.path.join(TRACING, "trace")) as f:
            text = f.read()
    finally:
        trace_write(event, "0")
    assert rec["flows"][0]["goodput_bps"] > 0
    reqs, first = nine_p_requests(text, "window-begin", "window-end")
    assert "window-begin" in text and "window-end" in text
    assert reqs, "no 9p request traced at all: the event is off?"
    project = [r for r in reqs if r[1] == first["project"]]
    assert not project, project
    own = [r for r in reqs if r[0].startswith("python")]
    assert not own, own
    print("9p requests in the window: %d %s" %
          (len(reqs), dict(collections.Counter(r[0] for r in reqs))))
    # The programs start from the guest's tmpfs (host.prepare_programs):
    # a start asks for /etc/ld.so.preload, iperf3 for one file more; 492
    # when they started from the host's root.
    assert len(reqs) <= 20, reqs
    assert not [r for r in reqs if r[0] == "ss"]
    assert rec["flows"][0]["ss"], "no ss series"
