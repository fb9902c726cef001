# SPDX-License-Identifier: GPL-2.0
"""Runs every userspace unit-test binary built by `make unit`."""

import glob
import os
import subprocess

import pytest

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCES = sorted(glob.glob(os.path.join(TOP, "tests", "unit", "test_*.c")))


@pytest.mark.parametrize("src", SOURCES, ids=os.path.basename)
def test_unit_binary(src):
    binary = os.path.join(TOP, "build", "unit",
                          os.path.basename(src)[:-2])
    assert os.path.exists(binary), "not built: run `make unit`"
    r = subprocess.run([binary], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr


def test_bpf_esack_object():
    """make bpf's object (tcp_esack/esack.bpf.c: the module's core and
    hooks built for BPF) holds the seven struct_ops programs of
    bpf_esack and nothing of the core beside them (it is all inlined,
    none of it left for the verifier to check as a global function),
    calls no kernel function but Reno's helpers, the kfuncs 6.1 gives
    BPF congestion controls, and has the satnet_cc_info map."""
    obj = os.path.join(TOP, "build", "bpf", "esack.bpf.o")
    assert os.path.exists(obj), "not built: run `make bpf`"
    r = subprocess.run(["llvm-nm", obj], capture_output=True, text=True,
                       check=True)
    syms = {}
    for line in r.stdout.splitlines():
        kind, name = line.split()[-2:]
        if not name.startswith("LBB"):
            syms.setdefault(kind.upper(), set()).add(name)
    assert syms["T"] == {"bpf_esack_" + op for op in (
        "init", "ssthresh", "cong_avoid", "undo_cwnd", "set_state",
        "cwnd_event", "in_ack_event")}
    assert syms["U"] == {"tcp_reno_ssthresh", "tcp_reno_cong_avoid",
                         "tcp_reno_undo_cwnd"}
    assert {"bpf_esack", "satnet_cc_info"} <= syms["D"]
