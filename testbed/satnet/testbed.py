# SPDX-License-Identifier: GPL-2.0
"""A satellite path left up to stand in: `satnet up`, `exec`, `down`.

`up` builds the same namespaces, links, netem stages, bottleneck qdisc
and sysctls as a run (satnet.topo.Topology) and leaves them; the state
file names them, so `exec` finds a node and `down` removes them, also
after a crash (every namespace of the testbed's prefix goes).
"""

import json
import os
import subprocess

from .host import remove_netns
from .topo import Topology

TAG = "up"                       # namespaces are named sn<TAG>-NODE
STATE = os.environ.get("SATNET_TESTBED_STATE", "/run/satnet/testbed.json")


class TestbedError(RuntimeError):
    pass


def nodes(topo):
    """Node name -> namespace: snd0, rcv0, ..., r1, r2."""
    out = {"r1": topo.r1, "r2": topo.r2}
    for i, (s, r) in enumerate(zip(topo.snd, topo.rcv)):
        out["snd%d" % i], out["rcv%d" % i] = s, r
    return out


def plan(scenario, variant=None):
    """(scenario, profile, congestion control, module parameters) of a
    scenario, with a variant's overrides when one is named."""
    from .experiment import load_variants
    from .scenario import load_profile, load_scenario
    v = None
    if variant:
        cat = load_variants()
        if variant not in cat:
            raise TestbedError("no variant %r (satnet list variants)" %
                               variant)
        v = cat[variant]
    sc = load_scenario(scenario, v.set if v else None)
    profile = load_profile((v and v.profile) or sc.profile)
    return sc, profile, (v.cc if v else None), (v.params if v else {})


def up(scenario, variant=None):
    """Bring the path up and leave it; returns the state written."""
    from .kmod import set_param
    from .runner import load_cc
    if os.path.exists(STATE):
        raise TestbedError("a testbed is up (%s): satnet down first" % STATE)
    sc, profile, cc, params = plan(scenario, variant)
    if cc:
        load_cc(cc)
    for mod, ps in params.items():
        for p, val in ps.items():
            set_param(mod, p, val)
    allowed = allow(cc) if cc else None
    topo = Topology(sc, profile, tag=TAG)
    try:
        topo.up()
        if cc:
            for ns in topo.snd:
                topo.ex(ns, ["sysctl", "-q", "-w",
                             "net.ipv4.tcp_congestion_control=" + cc])
    except BaseException:
        topo.down()
        restore_allowed(allowed)
        raise
    state = {"scenario": sc.name, "variant": variant, "cc": cc,
             "allowed_before": allowed,
             "nodes": nodes(topo),
             "addresses": {"snd%d" % i: topo.snd_addr(i)
                           for i in range(sc.pairs)} |
             {"rcv%d" % i: topo.rcv_addr(i) for i in range(sc.pairs)},
             "base_rtt_ms": sc.base_rtt_ms(), "rate_bps": sc.rate_bps}
    os.makedirs(os.path.dirname(STATE), exist_ok=True)
    with open(STATE, "w") as f:
        json.dump(state, f, indent=1)
    return state


ALLOWED = "/proc/sys/net/ipv4/tcp_allowed_congestion_control"


def allow(cc):
    """A namespace other than the first may make only an allowed algorithm
    its default (tcp_set_default_congestion_control()): add @cc to the
    host's list; returns the list before, for down()."""
    with open(ALLOWED) as f:
        before = f.read().strip()
    if cc not in before.split():
        with open(ALLOWED, "w") as f:
            f.write(" ".join(before.split() + [cc]))
    return before


def restore_allowed(before):
    if before is not None:
        with open(ALLOWED, "w") as f:
            f.write(before)


def state():
    try:
        with open(STATE) as f:
            return json.load(f)
    except FileNotFoundError:
        raise TestbedError("no testbed is up: satnet up SCENARIO") from None


def namespace(node):
    st = state()
    if node not in st["nodes"]:
        raise TestbedError("no node %r; the nodes are %s" %
                           (node, ", ".join(st["nodes"])))
    return st["nodes"][node]


def exec_argv(node, cmd):
    return ["ip", "netns", "exec", namespace(node)] + list(cmd)


def down():
    """Every namespace of the testbed, listed or left by a crash; returns
    how many went."""
    r = subprocess.run(["ip", "netns", "list"], capture_output=True,
                       text=True)
    prefix = "sn%s-" % TAG
    gone = 0
    for line in r.stdout.splitlines():
        ns = line.split()[0] if line.split() else ""
        if ns.startswith(prefix) and remove_netns(ns):
            gone += 1
    if os.path.exists(STATE):
        with open(STATE) as f:
            restore_allowed(json.load(f).get("allowed_before"))
        os.unlink(STATE)
    return gone
