# SPDX-License-Identifier: GPL-2.0
"""The epdn option cases of tests/tc-cases/*.json, run as tdc runs them.

The cases are in the format of the kernel's tc-testing (tdc): setup,
cmdUnderTest with its expected exit code, verifyCmd whose output must
match matchPattern matchCount times, teardown.  As in tdc, $TC, $IP and
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
import socket
import string
import struct
import subprocess

import pytest

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

RTM_NEWQDISC, NLMSG_ERROR = 36, 2
NLM_F_REQUEST, NLM_F_ACK, NLM_F_EXCL, NLM_F_CREATE = 1, 4, 0x200, 0x400
NLM_F_CAPPED, NLM_F_ACK_TLVS = 0x100, 0x200
NLA_F_NESTED = 0x8000
SOL_NETLINK, NETLINK_EXT_ACK = 270, 11
NLMSGERR_ATTR_MSG, NLMSGERR_ATTR_OFFS = 1, 2
TCA_KIND, TCA_OPTIONS = 1, 2
TC_H_ROOT = 0xFFFFFFFF
(TCA_EPDN_LIMIT, TCA_EPDN_BYTE_LIMIT, TCA_EPDN_MODE, TCA_EPDN_IDLE,
 TCA_EPDN_FLOWS, TCA_EPDN_CORRUPT, TCA_EPDN_RED, TCA_EPDN_RED_MIN,
 TCA_EPDN_RED_MAX, TCA_EPDN_RED_PROB, TCA_EPDN_RED_EWMA, TCA_EPDN_RED_ECN,
 TCA_EPDN_RED_HARDDROP) = range(1, 14)
U8 = {TCA_EPDN_MODE, TCA_EPDN_RED, TCA_EPDN_RED_EWMA, TCA_EPDN_RED_ECN,
      TCA_EPDN_RED_HARDDROP}
# The policy answers ERANGE, the checks of combinations EINVAL.
RANGE = (errno.ERANGE, "integer out of range")


def nla(kind, data):
    return struct.pack("HH", 4 + len(data), kind) + data + \
        b"\0" * (-len(data) % 4)


def add_qdisc(dev, attrs):
    """RTM_NEWQDISC epdn with @attrs; the error and extack message, and
    the offset of the attribute the kernel blamed (0 if none)."""
    opts = b"".join(nla(k, struct.pack("B" if k in U8 else "I", v))
                    for k, v in attrs)
    body = struct.pack("BxxxiIII", socket.AF_UNSPEC,
                       socket.if_nametoindex(dev), 0x10000, TC_H_ROOT, 0) + \
        nla(TCA_KIND, b"epdn\0") + nla(TCA_OPTIONS | NLA_F_NESTED, opts)
    flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_EXCL | NLM_F_CREATE
    msg = struct.pack("IHHII", 16 + len(body), RTM_NEWQDISC, flags, 1, 0) \
        + body
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW,
                       socket.NETLINK_ROUTE) as s:
        s.setsockopt(SOL_NETLINK, NETLINK_EXT_ACK, 1)
        s.send(msg)
        reply = s.recv(65536)
    _, kind, rflags, _, _ = struct.unpack_from("IHHII", reply)
    assert kind == NLMSG_ERROR
    (err,) = struct.unpack_from("i", reply, 16)
    pos = 20 + (16 if rflags & NLM_F_CAPPED else len(msg))
    text, offs = "", 0
    while rflags & NLM_F_ACK_TLVS and pos + 4 <= len(reply):
        alen, atype = struct.unpack_from("HH", reply, pos)
        if atype == NLMSGERR_ATTR_MSG:
            text = reply[pos + 4:pos + alen].rstrip(b"\0").decode()
        elif atype == NLMSGERR_ATTR_OFFS:
            (offs,) = struct.unpack_from("I", reply, pos + 4)
        pos += (alen + 3) & ~3
    return -err, text, offs


# Offset of the first attribute inside TCA_OPTIONS: nlmsghdr, tcmsg,
# TCA_KIND (12 bytes padded), the TCA_OPTIONS header.
FIRST_OPT = 16 + 20 + 12 + 4


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
    assert (err, text, offs) == want + (FIRST_OPT,)


def test_kernel_policy_accepts_the_bounds(dummy):  # noqa: F811
    bounds = [(TCA_EPDN_LIMIT, 1048576), (TCA_EPDN_MODE, 2),
              (TCA_EPDN_IDLE, 3600000000), (TCA_EPDN_FLOWS, 8),
              (TCA_EPDN_BYTE_LIMIT, 64), (TCA_EPDN_RED_EWMA, 23)]
    assert add_qdisc(dummy, bounds) == (0, "", 0)
