# SPDX-License-Identifier: GPL-2.0
"""The soak (run.py): the project's modules under churn and faults for a
bounded time.  soak.Soak runs it; each thread's steps are a class of
their own (control, modules, churn, faults, memory, failnth), mixed into
it; flows are the worker processes, counters the identities checked,
final the checks at the end, report the table and soak.json."""


def log(msg):
    print("soak: " + msg, flush=True)


def read(path):
    with open(path) as f:
        return f.read().strip()


def write(path, value):
    with open(path, "w") as f:
        f.write(str(value))
