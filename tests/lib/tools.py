# SPDX-License-Identifier: GPL-2.0
"""A script of tools/ (no .py suffix) imported as a module, for the host
tests of its parts."""

import importlib.machinery
import importlib.util
import os

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def path(name):
    return os.path.join(TOP, "tools", name)


def load(name):
    loader = importlib.machinery.SourceFileLoader(
        name.replace("-", "_") + "_tool", path(name))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod
