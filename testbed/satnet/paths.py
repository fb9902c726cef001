# SPDX-License-Identifier: GPL-2.0
"""Where the project's files are.  satnet is installed in editable mode
from a checkout (tools/install-deps.sh), because a run needs the modules,
the tc plugin and the VM runner that live beside it; the data files are
found relative to this package.

The package lives in testbed/ (with the scenarios, profiles, experiments
and variants it reads); TOP is the checkout root above it, where the
modules, build/, tools/ and results/ are."""

import os

TESTBED = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOP = os.path.dirname(TESTBED)
SCENARIO_DIR = os.path.join(TESTBED, "scenarios")
PROFILE_DIR = os.path.join(TESTBED, "profiles")
EXPERIMENT_DIR = os.path.join(TESTBED, "experiments")
VARIANTS_FILE = os.path.join(TESTBED, "variants.toml")
RESULTS_DIR = os.path.join(TOP, "results")
VM_RUN = os.path.join(TOP, "tools", "vm-run")

# The project's kernel modules: name -> .ko under TOP (the one list).
MODULES = {"sch_epdn": "sch_epdn/sch_epdn.ko",
           "tcp_rn": "tcp_rn/tcp_rn.ko",
           "rn_host": "tcp_rn/rn_host.ko",
           "tcp_r": "tcp_r/tcp_r.ko",
           "tcp_esack": "tcp_esack/tcp_esack.ko"}
TC_PLUGIN = "build/tc/q_epdn.so"


def ko(name):
    """The build tree's .ko of our module @name (a key of MODULES)."""
    return os.path.join(TOP, MODULES[name])


# Under QEMU's virtual clock (tools/vm-run --clock virtual) a guest that
# waits for the host (a 9p read) is idle, and its clock jumps from timer
# to timer until the reply comes: a file read can cost minutes of guest
# time.  Timeouts that only catch hangs are then stretched by this
# factor; vm-run's own timeout, on the host's clock, still ends a run
# that hangs.
VIRTUAL = os.environ.get("SATNET_CLOCK") == "virtual"
# The real clock of an emulated (TCG) guest, where the emulation itself
# delays packets (measure.RTT_SLACK_MS).
EMULATED_REAL = os.environ.get("SATNET_CLOCK") == "real" and \
    os.environ.get("SATNET_ACCEL") == "tcg"
HANG_SCALE = 100 if VIRTUAL else 1


def hang_limit(seconds):
    """A timeout that only catches a hang, on this guest's clock."""
    return seconds * HANG_SCALE
