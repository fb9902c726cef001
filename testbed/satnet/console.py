# SPDX-License-Identifier: GPL-2.0
"""The kernel console lines that mean a fault: tools/vm-run fails a run
on them, and the tests and the soak (tests/soak) check the kernel log
with them; and the kmemleak reports that are ours."""

import re

from .paths import MODULES

BAD = re.compile(r"Oops|BUG:|WARNING:|general protection|KASAN|UBSAN|"
                 r"Kernel panic|kernel BUG|Call Trace:|ODEBUG|"
                 r"INFO: (possible|trying to register|lockdep|suspicious)")
# A backtrace frame of ours: named, or left as a bare address by a module
# unloaded before the scan (the kernel's own frames always resolve; module
# space starts at 0xffffffffa0000000 without KASLR, ...c0000000 with it).
OWN_FRAME = re.compile(r"\[(%s)\]|\] 0xffffffff[a-f]" % "|".join(MODULES))


def kmemleak_reports(lines):
    """kmemleak's reports among @lines, each the list of its lines."""
    reports = []
    for line in lines:
        if line.startswith("unreferenced object"):
            reports.append([])
        if reports:
            reports[-1].append(line)
    return reports


def own_leaks(lines):
    """The kmemleak reports among @lines whose backtrace is ours."""
    return [rep for rep in kmemleak_reports(lines)
            if any(OWN_FRAME.search(ln) for ln in rep)]
