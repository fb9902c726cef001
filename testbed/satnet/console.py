# SPDX-License-Identifier: GPL-2.0
"""The kernel console lines that mean a fault: tools/vm-run fails a run
on them, and the tests and tools/soak check the kernel log with them."""

import re

BAD = re.compile(r"Oops|BUG:|WARNING:|general protection|KASAN|UBSAN|"
                 r"Kernel panic|kernel BUG|Call Trace:|ODEBUG|"
                 r"INFO: (possible|trying to register|lockdep|suspicious)")
