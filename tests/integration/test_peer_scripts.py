# SPDX-License-Identifier: GPL-2.0
"""Every scripted-peer script (tests/peer/scripts/*/*.py) as one test:
a real kernel socket against a peer played packet by packet
(tests/peer/README.md).  The script's timeline is printed on failure.

The esack scripts run once more against the BPF version, bpf_esack
(tcp_esack/esack.bpf.c), and must pass there with the module's trace:
the same ca_state, cwnd and ssthresh at every point the script reads
tcp_info, and the same counters."""

import glob
import itertools
import os
import re
import subprocess

import pytest

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
SCRIPTS = sorted(glob.glob(os.path.join(TOP, "tests", "peer", "scripts",
                                        "*", "*.py")))
ESACK = [p for p in SCRIPTS if os.path.basename(os.path.dirname(p)) ==
         "esack"]
TRACE = re.compile(r" = (tcp_info ca_state \S+ cwnd \d+ ssthresh \d+|"
                   r"cc_info .*$)")


def script_id(path):
    return os.path.relpath(path, os.path.join(TOP, "tests", "peer",
                                              "scripts"))


def run_scripts(*args):
    """tests/peer/run.py with @args."""
    return subprocess.run(["/usr/bin/python3",
                           os.path.join(TOP, "tests", "peer", "run.py")] +
                          list(args), capture_output=True, text=True,
                          timeout=900)


def trace(out):
    """What the congestion control decided, in the order a script read
    it: ca_state, cwnd and ssthresh of each tcp_info, and each
    TCP_CC_INFO, from run.py -v's timelines."""
    return [m.group(1) for m in map(TRACE.search, out.splitlines()) if m]


@pytest.mark.parametrize("script", SCRIPTS, ids=script_id)
def test_script(script):
    r = run_scripts(script)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("script", ESACK, ids=script_id)
def test_bpf_esack_same_trace(script, bpf_esack):
    """The module (esack) and BPF (bpf_esack, both registered at once)
    pass the script with the same trace."""
    module = run_scripts("-v", script)
    assert module.returncode == 0, module.stdout + module.stderr
    bpf = run_scripts("-v", "--cc", "esack=" + bpf_esack, script)
    assert bpf.returncode == 0, bpf.stdout + bpf.stderr
    with open("/proc/sys/net/ipv4/tcp_available_congestion_control") as f:
        assert {"esack", bpf_esack} <= set(f.read().split())
    assert " cc %s\n" % bpf_esack in bpf.stdout
    want, got = trace(module.stdout), trace(bpf.stdout)
    assert want, "no tcp_info in the module's timeline"
    print("%s: %d tcp_info and %d cc_info reads, module %s bpf_esack" % (
        script_id(script), sum(x.startswith("tcp_info") for x in want),
        sum(x.startswith("cc_info") for x in want),
        "==" if got == want else "!="))
    assert got == want, "module | bpf_esack\n" + "\n".join(
        "%-3d %-60s %s" % (i, w, "" if w == g else "<> " + g)
        for i, (w, g) in enumerate(itertools.zip_longest(want, got,
                                                         fillvalue="")))
