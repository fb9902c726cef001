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
