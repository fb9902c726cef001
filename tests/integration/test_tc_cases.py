# SPDX-License-Identifier: GPL-2.0
"""The epdn option cases of tests/tc-cases/*.json, run as tdc runs them.

The cases are in the format of the kernel's tc-testing (tdc): setup,
cmdUnderTest with its expected exit code, verifyCmd whose output must
match matchPattern matchCount times, teardown; a case with dependsOn is
skipped when that probe command fails.  As in tdc, $TC, $IP and
$DEV are substituted, commands run through the shell, and a command that
fails with something on stderr has its stderr as output: a case that
repeats a rejected command as its verifyCmd matches the error message.
Each case gets a fresh dummy device.

A second test sends out-of-range attributes over raw netlink, which the
plugin never lets through, to check the kernel's own policy.
"""

import errno
import glob
import json
import os
import re
import shutil
import string
import subprocess

import pytest

from lib.rtnl import (EPDN_FIRST_OPT, TCA_EPDN_BYTE_LIMIT, TCA_EPDN_FLOWS,
                      TCA_EPDN_IDLE, TCA_EPDN_LIMIT, TCA_EPDN_MODE,
                      TCA_EPDN_RED, TCA_EPDN_RED_ECN, TCA_EPDN_RED_EWMA,
                      TCA_EPDN_RED_HARDDROP, TCA_EPDN_RED_MAX,
                      TCA_EPDN_RED_PROB, epdn_qdisc_msg, rtnl_ack,
                      rtnl_socket)
from test_epdn import TC_LIB, console_clean, dummy, module_loaded  # noqa: F401

CASES = os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "tc-cases")


def load_cases():
    cases = []
    for path in sorted(glob.glob(os.path.join(CASES, "*.json"))):
        with open(path) as f:
            cases += json.load(f)
    ids = [c["id"] for c in cases]
    assert len(ids) == len(set(ids)), "duplicate case ids"
    return cases


def exec_cmd(cmd, dev):
    """tdc's exec_cmd: the exit code, and stdout, or stderr on failure."""
    names = {"TC": shutil.which("tc"), "IP": shutil.which("ip"), "DEV": dev}
    cmd = string.Template(cmd).safe_substitute(names)
    r = subprocess.run(cmd, shell=True, capture_output=True, text=True,
                       env=dict(os.environ, TC_LIB_DIR=TC_LIB), timeout=120)
    out = r.stderr if r.returncode and r.stderr else r.stdout
    return r.returncode, cmd, out


def run_stage(cmds, dev):
    """setup or teardown: a string must succeed, [cmd, codes...] may also
    exit with one of codes."""
    for entry in cmds:
        cmd, *codes = [entry] if isinstance(entry, str) else entry
        rc, cmd, out = exec_cmd(cmd, dev)
        assert rc == 0 or rc in codes, "%s: exit %d: %s" % (cmd, rc, out)


@pytest.mark.parametrize("case", [pytest.param(c, id=c["id"])
                                  for c in load_cases()])
def test_tc_case(dummy, case):  # noqa: F811
    if "dependsOn" in case:
        # tdc's probe: a case whose kernel lacks a feature is skipped
        rc, cmd, out = exec_cmd(case["dependsOn"], dummy)
        if rc:
            pytest.skip("probe failed: %s: %s" % (cmd, out.strip()))
    run_stage(case["setup"], dummy)
    try:
        rc, cmd, out = exec_cmd(case["cmdUnderTest"], dummy)
        assert rc == int(case["expExitCode"]), \
            "%s: %s: exit %d, expected %s: %s" % (
                case["name"], cmd, rc, case["expExitCode"], out)
        _, cmd, out = exec_cmd(case["verifyCmd"], dummy)
        found = re.findall(case["matchPattern"], out, re.DOTALL | re.MULTILINE)
        assert len(found) == int(case["matchCount"]), \
            "%s: %r matched %d times, expected %s, in the output of %s:\n%s" \
            % (case["name"], case["matchPattern"], len(found),
               case["matchCount"], cmd, out)
    finally:
        run_stage(case["teardown"], dummy)


# ---- the kernel's policy, past the plugin ----

# The policy answers ERANGE, the checks of combinations EINVAL.
RANGE = (errno.ERANGE, "integer out of range")


def add_qdisc(dev, attrs):
    """RTM_NEWQDISC epdn with @attrs; the error and extack message, and
    the offset of the attribute the kernel blamed (0 if none)."""
    with rtnl_socket() as s:
        return rtnl_ack(s, epdn_qdisc_msg(dev, attrs))


@pytest.mark.parametrize("attr,value,want", [
    (TCA_EPDN_LIMIT, 0, RANGE),
    (TCA_EPDN_LIMIT, 1048577, RANGE),
    (TCA_EPDN_MODE, 1, RANGE),
    (TCA_EPDN_MODE, 4, RANGE),
    (TCA_EPDN_IDLE, 999, RANGE),
    (TCA_EPDN_IDLE, 3600000001, RANGE),
    (TCA_EPDN_FLOWS, 7, RANGE),
    (TCA_EPDN_FLOWS, 1048577, RANGE),
    (TCA_EPDN_RED, 2, RANGE),
    (TCA_EPDN_RED_MAX, 0, RANGE),
    (TCA_EPDN_RED_PROB, 0, RANGE),
    (TCA_EPDN_RED_EWMA, 24, RANGE),
    (TCA_EPDN_RED_ECN, 2, RANGE),
    (TCA_EPDN_RED_HARDDROP, 2, RANGE),
    (TCA_EPDN_BYTE_LIMIT, 63, (errno.EINVAL,
                               "epdn: bytelimit must be 0 (none) or at "
                               "least 64 bytes")),
])
def test_kernel_policy_rejects(dummy, attr, value, want):  # noqa: F811
    err, text, offs = add_qdisc(dummy, [(attr, value)])
    assert (err, text, offs) == want + (EPDN_FIRST_OPT,)


def test_kernel_policy_accepts_the_bounds(dummy):  # noqa: F811
    bounds = [(TCA_EPDN_LIMIT, 1048576), (TCA_EPDN_MODE, 2),
              (TCA_EPDN_IDLE, 3600000000), (TCA_EPDN_FLOWS, 8),
              (TCA_EPDN_BYTE_LIMIT, 64), (TCA_EPDN_RED_EWMA, 23)]
    assert add_qdisc(dummy, bounds) == (0, "", 0)
