# SPDX-License-Identifier: GPL-2.0
"""Every scripted-peer script (tests/peer/scripts/*/*.py) as one test:
a real kernel socket against a peer played packet by packet
(tests/peer/README.md).  The script's timeline is printed on failure."""

import glob
import os
import subprocess

import pytest

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
SCRIPTS = sorted(glob.glob(os.path.join(TOP, "tests", "peer", "scripts",
                                        "*", "*.py")))


@pytest.mark.parametrize("script", SCRIPTS,
                         ids=lambda p: os.path.relpath(
                             p, os.path.join(TOP, "tests", "peer",
                                             "scripts")))
def test_script(script):
    r = subprocess.run(["/usr/bin/python3",
                        os.path.join(TOP, "tests", "peer", "run.py"),
                        script], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
