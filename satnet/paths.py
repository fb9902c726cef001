# SPDX-License-Identifier: GPL-2.0
"""Where the project's files are.  satnet is installed in editable mode
from a checkout (tools/install-deps.sh), because a run needs the modules,
the tc plugin and the VM runner that live beside it; the data files are
found relative to this package."""

import os

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCENARIO_DIR = os.path.join(TOP, "scenarios")
PROFILE_DIR = os.path.join(TOP, "profiles")
EXPERIMENT_DIR = os.path.join(TOP, "experiments")
VARIANTS_FILE = os.path.join(TOP, "variants.toml")
RESULTS_DIR = os.path.join(TOP, "results")
BUILD_DIR = os.path.join(TOP, "build")
VM_RUN = os.path.join(TOP, "tools", "vm-run")

# The project's kernel modules: name -> .ko under TOP (the one list).
MODULES = {"sch_epdn": "sch_epdn/sch_epdn.ko",
           "tcp_rn": "tcp_rn/tcp_rn.ko",
           "rn_host": "tcp_rn/rn_host.ko",
           "tcp_r": "tcp_r/tcp_r.ko",
           "tcp_esack": "tcp_esack/tcp_esack.ko"}
TC_PLUGIN = "build/tc/q_epdn.so"
