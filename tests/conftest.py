# SPDX-License-Identifier: GPL-2.0
"""Shared fixtures: markers, BPF congestion controls (our modules load
through satnet.kmod)."""

import gzip
import os
import shutil
import subprocess

import sys

import pytest

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The tests import this checkout's satnet (testbed/), whatever another
# checkout's editable install or the current folder provides, and their
# own kit from tests/lib (import lib.packets, ...).
sys.path[:0] = [os.path.join(TOP, "testbed"), os.path.dirname(__file__)]


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "statistical: a statistical run over netem; `make test` "
        "runs these on QEMU's virtual clock (tools/vm-run --clock virtual), "
        "where load on the host cannot change their outcome")
    config.addinivalue_line(
        "markers", "realtime: measures the CPU or the wall clock (packet "
        "rates, floods); never on the virtual clock")


def pytest_collection_modifyitems(config, items):
    """Integration tests need root, namespaces and netem: run them through
    tools/vm-run (make test), which provides all three."""
    if os.environ.get("SATNET_CLOCK") == "virtual":
        skip = pytest.mark.skip(reason="measures the CPU or the wall clock: "
                                "not on the virtual clock")
        for item in items:
            if item.get_closest_marker("realtime"):
                item.add_marker(skip)
    if os.geteuid() == 0 and subprocess.call(
            ["modprobe", "sch_netem"], stderr=subprocess.DEVNULL) == 0:
        return
    skip = pytest.mark.skip(reason="needs root and netem: run `make test`")
    for item in items:
        if "integration" in str(item.fspath):
            item.add_marker(skip)


@pytest.fixture(scope="session")
def top():
    return TOP


def kasan_kernel():
    """True under a KASAN kernel (make test-debug): every memory access is
    checked, so work per packet costs several times more, and freed slab
    objects wait in KASAN's quarantine, so slab grows where it would not.
    Assertions on speed or on slab growth hold only without it."""
    try:
        with gzip.open("/proc/config.gz", "rt") as f:
            return "\nCONFIG_KASAN=y\n" in f.read()
    except OSError:
        return False


def parallel(flow, jobs, timeout=900):
    """Run flow(port=..., barrier=..., **job) for every job in its own
    thread: each flow sets up its own topology, waits at the barrier until
    all are up, runs, and waits again before reading counters, so that the
    flows share the emulated CPU alike.  Results in job order; the first
    error is raised."""
    from satnet.runner import together

    return together(lambda i, barrier, **kw:
                    flow(port=5201 + i, barrier=barrier, **kw), jobs, timeout)


def bpf_struct_ops_missing():
    """Why this machine cannot register a BPF congestion control, or
    None: bpftool, the kernel's BTF and its tcp_congestion_ops struct_ops
    (CONFIG_BPF_JIT, CONFIG_DEBUG_INFO_BTF) are needed."""
    if not shutil.which("bpftool"):
        return "no bpftool (tools/install-deps.sh installs it)"
    try:
        with open("/sys/kernel/btf/vmlinux", "rb") as f:
            btf = f.read()
    except OSError:
        return "the kernel has no BTF (/sys/kernel/btf/vmlinux)"
    if b"bpf_struct_ops_tcp_congestion_ops" not in btf:
        return "the kernel has no BPF struct_ops for tcp_congestion_ops"
    return None


def bpf_unregister(name):
    """Unregister the struct_ops map @name (the C variable of the
    .struct_ops section); True when one was registered."""
    return subprocess.call(["bpftool", "struct_ops", "unregister", "name",
                            name], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL) == 0


@pytest.fixture(scope="session")
def bpf_esack():
    """The BPF version of esack (make bpf, docs/esack.md) registered as
    congestion control bpf_esack for the session, beside the module;
    skipped where BPF congestion controls are not to be had, failed when
    the object is missing or the kernel refuses it (the verifier's log
    is in the message)."""
    why = bpf_struct_ops_missing()
    if why:
        pytest.skip(why)
    obj = os.path.join(TOP, "build", "bpf", "esack.bpf.o")
    if not os.path.exists(obj):
        pytest.fail("%s: not built (make bpf)" % obj)
    bpf_unregister("bpf_esack")         # a stale one from an aborted run
    r = subprocess.run(["bpftool", "struct_ops", "register", obj],
                       capture_output=True, text=True)
    assert r.returncode == 0, "bpftool struct_ops register %s:\n%s%s" % (
        obj, r.stdout, r.stderr)
    yield "bpf_esack"
    assert bpf_unregister("bpf_esack"), "bpf_esack was unregistered"
