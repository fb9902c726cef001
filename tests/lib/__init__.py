# SPDX-License-Identifier: GPL-2.0
"""The tests' kit, beside the satnet package they test: crafted and
captured packets (packets), raw rtnetlink requests for the epdn qdisc
(rtnl), the kernel's console and counters (kernel), pktgen floods
(pktgen), the scripts of tools/ imported as modules (tools).
tests/conftest.py puts tests/ on sys.path; a tool that uses
the kit (tests/soak, tools/bench-epdn, tools/rn-hook-cost) does too."""
