# SPDX-License-Identifier: GPL-2.0
"""Who may use our modules from a network namespace that an unprivileged
user made (docs/rn-tcp.md, "Who may switch it on").

Any user can run `unshare -Urn` and is then root in a user namespace of
their own, with CAP_NET_ADMIN and CAP_NET_RAW over the new network
namespace: its sysctls, its qdiscs, raw sockets.  The tests run as uid
65534 (setpriv) and check:

* rn_host: a namespace that the initial user namespace does not own has
  no net.rn sysctls (open gives ENOENT, for its root and for the host's)
  and no hooks: a TCP transfer, a raw-socket flood of pure ACKs and data
  with malformed EPDN options leave every counter at 0.  In a namespace
  root made (ip netns add) the same probe switches both features on.
* sch_epdn: tc qdisc add epdn works in the user's own namespace (as for
  every qdisc), the netlink policy bounds it, and its flow table is
  charged to the caller's memory cgroup.
* rn, r, esack: an unprivileged socket gets them only in a namespace
  whose user namespace it is root of, and no such namespace may make
  them the default (the kernel's rules for restricted algorithms).
* The module parameters stay writable by the host's root only.

Run inside tools/vm-run (make test), as root, after `make modules tc`.

This file is also its own helper: `--probe` runs inside the namespace
under test and prints what it could do as JSON.
"""

import contextlib
import ctypes
import errno
import json
import os
import re
import socket
import stat
import subprocess
import sys
import threading
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path[:0] = [TOP, os.path.join(TOP, "testbed"), os.path.join(TOP, "tests"),
                os.path.dirname(os.path.abspath(__file__))]

ME = os.path.abspath(__file__)
PY = ["/usr/bin/python3", "-B"]
NOBODY = PY + [ME, "--unchroot", "setpriv", "--reuid=65534",
               "--regid=65534", "--clear-groups"]
USERNS = ["unshare", "-Urn"]
CLONE_NEWNS = 0x00020000
MS_MOVE, MS_REC, MS_PRIVATE = 0x2000, 0x4000, 0x40000
RN_SYSCTLS = (("receiver", 1), ("epdn_origin", 1), ("require_host", 0))
OUR_CC = ("rn", "r", "esack")
TCP_CONGESTION = 13
PROBE_ACKS = 1000
PROBE_BAD = 20
PROBE_BYTES = 200000


# ---- inside the namespace under test ----

def try_write(path, value):
    """"ok", or the errno's name."""
    try:
        fd = os.open(path, os.O_WRONLY)
    except OSError as e:
        return errno.errorcode[e.errno]
    try:
        os.write(fd, str(value).encode())
        return "ok"
    except OSError as e:
        return errno.errorcode[e.errno]
    finally:
        os.close(fd)


def transfer(nbytes, cc=None):
    """Send nbytes over lo, with congestion control cc; bytes received."""
    s = socket.socket()
    if cc:
        s.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, cc.encode())
    # Segments that leave room for the origin's option on lo.
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, 1000)
    s.settimeout(60)
    srv = socket.create_server(("127.0.0.1", 0))
    srv.settimeout(60)
    got = []

    def drain():
        c, _ = srv.accept()
        n = 0
        while True:
            b = c.recv(65536)
            if not b:
                break
            n += len(b)
        got.append(n)
        c.close()

    t = threading.Thread(target=drain)
    t.start()
    s.connect(srv.getsockname())
    s.sendall(b"x" * nbytes)
    s.close()
    t.join(60)
    srv.close()
    return got[0] if got else -1


def rn_host():
    with open("/proc/net/rn_host") as f:
        return {k: int(v) for k, v in (ln.split() for ln in f)}


def probe_hooks():
    """Switch every net.rn sysctl on, then feed the hooks: TCP over lo,
    pure ACKs from a raw socket (they leave by a veth whose peer never
    answers; the receiver leaves a raw socket's packets as built and
    starts no flow for them) and data with an 8-byte EPDN option
    (malformed) to a closed port."""
    from test_rn_receiver import F_EMPTY, F_HOST, epdn_opt, send_raw

    res = {"sysctl": {k: try_write("/proc/sys/net/rn/" + k, v)
                      for k, v in RN_SYSCTLS}}
    subprocess.run(["ip", "-batch", "-"], check=True, text=True, input=(
        "link set lo up\n"
        "link add rnu0 type veth peer name rnu1\n"
        "addr add 10.9.9.1/24 dev rnu0\n"
        "link set rnu0 up\nlink set rnu1 up\n"))
    res["tcp_bytes"] = transfer(PROBE_BYTES)
    bad = epdn_opt(64, F_EMPTY | F_HOST, length=8).hex()
    spec = [dict(src="10.9.9.1", dst="10.9.9.2", sport=20000 + i, dport=80,
                 flags="A", ack=1, len=0) for i in range(PROBE_ACKS)]
    spec += [dict(src="127.0.0.1", dst="127.0.0.1", sport=30000 + i,
                  dport=9, seq=1, opts=[bad]) for i in range(PROBE_BAD)]
    send_raw(spec)
    res["raw_sent"] = len(spec)
    time.sleep(0.5)
    res["rn_host"] = rn_host()
    return res


def probe_cc():
    """Each of our congestion controls on a socket, with a transfer over
    lo where this namespace is ours to bring lo up, and as the default."""
    own = subprocess.run(["ip", "link", "set", "lo", "up"],
                         stderr=subprocess.DEVNULL).returncode == 0
    res = {}
    for cc in OUR_CC:
        s = socket.socket()
        try:
            s.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, cc.encode())
            res[cc] = transfer(PROBE_BYTES, cc) if own else "ok"
        except OSError as e:
            res[cc] = errno.errorcode[e.errno]
        finally:
            s.close()
    res["default"] = {cc: try_write(
        "/proc/sys/net/ipv4/tcp_congestion_control", cc) for cc in OUR_CC}
    return res


def probe_params():
    """Write every module parameter of ours back as it is."""
    from satnet.kmod import param_path, read_params
    res = {}
    for mod in ("rn_host", "tcp_rn", "tcp_r", "tcp_esack"):
        for p, v in read_params(mod).items():
            res[mod + "." + p] = try_write(param_path(mod, p), v)
    return res


def unchroot():
    """tools/vm-run runs the tests chrooted into the host's files, and the
    kernel refuses a user namespace to a chrooted process (create_user_ns:
    current_chrooted()).  In a mount namespace of our own, climb out of
    the chroot and move our root onto the namespace's root, as
    switch_root does.  Needs root; a no-op outside a chroot."""
    try:
        init = os.stat("/proc/1/root")
    except OSError:
        return                  # a sandbox that hides init: leave it be
    st = os.stat("/")
    if (st.st_dev, st.st_ino) == (init.st_dev, init.st_ino):
        return
    libc = ctypes.CDLL(None, use_errno=True)

    def check(rc, what):
        if rc:
            e = ctypes.get_errno()
            raise OSError(e, "%s: %s" % (what, os.strerror(e)))

    check(libc.unshare(CLONE_NEWNS), "unshare")
    top = os.open("/", os.O_RDONLY | os.O_DIRECTORY)
    os.chroot("/proc")
    os.fchdir(top)
    for _ in range(64):
        os.chdir("..")
    os.chroot(".")
    check(libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None),
          "mount --make-rprivate /")
    os.fchdir(top)
    check(libc.mount(b".", b"/", None, MS_MOVE, None), "mount --move . /")
    os.chroot(".")
    os.chdir("/")


def main():
    if sys.argv[1] == "--unchroot":
        unchroot()
        os.execvp(sys.argv[2], sys.argv[2:])
    probe = {"hooks": probe_hooks, "cc": probe_cc,
             "params": probe_params}[sys.argv[2]]
    print(json.dumps(probe()))


if __name__ == "__main__":
    main()
    sys.exit(0)

# ---- host side ----

import pytest  # noqa: E402

from satnet.paths import MODULES  # noqa: E402
from satnet.host import (modprobe, prepare_tclib, run,  # noqa: E402
                         sysctl_set)

CGROOT = "/sys/fs/cgroup"
CLONE_SYSCTL = "/proc/sys/kernel/unprivileged_userns_clone"


@pytest.fixture(scope="module", autouse=True)
def setup():
    """Our modules and veth loaded; unprivileged user namespaces allowed
    (Debian's switch, on by default); the checkout readable by uid
    65534, which runs this file and our tc plugin from it."""
    modprobe("veth", *MODULES)
    prepare_tclib()
    with searchable(TOP), clone_sysctl():
        yield


@contextlib.contextmanager
def searchable(path):
    """A checkout in a directory of mode 0700 (mktemp -d) hides its files
    from every other user: open it to them (o+rx: Python's import lists
    the directory) for the tests, and close it again after."""
    mode = stat.S_IMODE(os.stat(path).st_mode)
    others = stat.S_IROTH | stat.S_IXOTH
    if mode & others == others:
        yield
        return
    os.chmod(path, mode | others)
    try:
        yield
    finally:
        os.chmod(path, mode)


def clone_sysctl():
    """Unprivileged user namespaces allowed meanwhile."""
    return sysctl_set(CLONE_SYSCTL, 1)


def probe(prefix, what, check=True):
    """Run `--probe what` under prefix; its JSON."""
    r = run(prefix + PY + [ME, "--probe", what], check=check, timeout=300)
    return json.loads(r.stdout.strip().splitlines()[-1])


def netns_of(pid):
    return os.readlink("/proc/%d/ns/net" % pid)


@pytest.fixture
def user_netns():
    """A user namespace and network namespace of uid 65534, held open by
    a sleeping process: nsenter's argument prefix into its netns."""
    holder = subprocess.Popen(NOBODY + USERNS + ["sleep", "600"])
    try:
        # seconds on a busy host or under the debug kernel (seen: > 5 s)
        deadline = time.monotonic() + 60
        while netns_of(holder.pid) == netns_of(os.getpid()):
            if time.monotonic() > deadline or holder.poll() is not None:
                raise AssertionError("unshare -Urn did not start")
            time.sleep(0.05)
        yield ["nsenter", "--net=/proc/%d/ns/net" % holder.pid]
    finally:
        holder.kill()
        holder.wait()


@pytest.fixture
def root_netns():
    """A namespace of the initial user namespace (ip netns add)."""
    name = "rnu%d" % os.getpid()
    run(["ip", "netns", "add", name])
    try:
        yield ["ip", "netns", "exec", name]
    finally:
        run(["ip", "netns", "del", name], check=False)


def fed(res):
    """The probe's traffic did happen: the test is not vacuous."""
    assert res["tcp_bytes"] == PROBE_BYTES, res
    assert res["raw_sent"] == PROBE_ACKS + PROBE_BAD, res


@pytest.mark.parametrize("who", ["uid65534", "host-root"])
def test_hooks_stay_off_in_a_user_namespace(who, request):
    """Neither the user who made the namespace nor the host's root (who
    has every capability there) finds a net.rn sysctl; the hooks see
    nothing of what the probe sends."""
    if who == "uid65534":
        res = probe(NOBODY + USERNS, "hooks")
    else:
        res = probe(request.getfixturevalue("user_netns"), "hooks")
    fed(res)
    assert res["sysctl"] == {k: "ENOENT" for k, _ in RN_SYSCTLS}, res
    st = res["rn_host"]
    assert (st["receiver"], st["epdn_origin"]) == (0, 0), st
    busy = {k: v for k, v in st.items()
            if v and k not in ("require_host", "max_flows")}
    assert not busy, "hooks ran in a user namespace: %s" % busy


def test_root_switches_hooks_on_in_its_namespaces(root_netns):
    """The same probe in a namespace root made: both features on, the
    transfer tracked, the raw flood of ACKs left alone, the bad options
    counted.  In the initial namespace the sysctls are there and
    writable."""
    res = probe(root_netns, "hooks")
    fed(res)
    assert res["sysctl"] == {k: "ok" for k, _ in RN_SYSCTLS}, res
    st = res["rn_host"]
    assert (st["receiver"], st["epdn_origin"], st["require_host"]) == \
        (1, 1, 0), st
    assert 1 <= st["flows_created"] < PROBE_ACKS, st
    assert st["flows_live"] <= st["max_flows"], st
    assert st["origin_stamped"] > 0 and st["data_segments"] > 0, st
    assert st["opt_malformed"] >= PROBE_BAD, st
    for k, _ in RN_SYSCTLS:
        path = "/proc/sys/net/rn/" + k
        with open(path) as f:
            assert try_write(path, f.read().strip()) == "ok"


def test_module_parameters_are_the_hosts():
    """/sys/module belongs to the host's root: root in a user namespace
    cannot write a parameter (max_flows sizes every namespace)."""
    res = probe(NOBODY + USERNS, "params")
    assert res and set(res.values()) == {"EACCES"}, res


def test_congestion_controls_follow_the_kernels_rules():
    """Restricted algorithms (ours do not set TCP_CONG_NON_RESTRICTED):
    EPERM for an unprivileged socket in the initial namespace, allowed in
    the user's own one, where they carry a transfer; the default of a
    namespace other than the initial one stays a non-restricted one."""
    with open("/proc/sys/net/ipv4/tcp_allowed_congestion_control") as f:
        allowed = f.read().strip()
    res = probe(NOBODY, "cc")
    assert [res[cc] for cc in OUR_CC] == ["EPERM"] * 3, \
        "%s (allowed: %s)" % (res, allowed)
    res = probe(NOBODY + USERNS, "cc")
    assert [res[cc] for cc in OUR_CC] == [PROBE_BYTES] * 3, res
    assert res["default"] == {cc: "EPERM" for cc in OUR_CC}, res


# ---- sch_epdn: the kernel's rule, memory charged to the caller ----

@pytest.fixture
def memcg():
    """A fresh memory cgroup (cgroup2 mounted if it is not)."""
    mounted = False
    if not os.path.exists(CGROOT + "/cgroup.controllers"):
        run(["mount", "-t", "cgroup2", "none", CGROOT])
        mounted = True
    with open(CGROOT + "/cgroup.subtree_control", "w") as f:
        f.write("+memory")
    cg = "%s/satnet-userns-%d" % (CGROOT, os.getpid())
    os.mkdir(cg)
    try:
        yield cg
    finally:
        for _ in range(50):
            try:
                os.rmdir(cg)
                break
            except OSError:
                time.sleep(0.1)
        if mounted:
            run(["umount", CGROOT], check=False)


MAX_FLOWS = 1 << 20


def test_epdn_qdisc_in_a_user_namespace_is_charged_to_its_user(memcg):
    """qdisc netlink needs CAP_NET_ADMIN in the namespace's owner: not in
    the initial namespace, but in the user's own.  There the largest table
    the policy allows (2^20 flows, tens of MB) is charged to the caller's
    memory cgroup, so memory.max bounds what the user makes the kernel
    allocate."""
    r = run(NOBODY + ["tc", "qdisc", "add", "dev", "lo", "root", "epdn"],
            check=False)
    assert r.returncode and "Operation not permitted" in r.stderr, r
    mem = memcg + "/memory.current"
    script = ("ip link set lo up; "
              "cat %s; tc qdisc add dev lo root epdn flows %d; cat %s; "
              "tc -j -s qdisc show dev lo" % (mem, MAX_FLOWS, mem))
    r = run(["sh", "-c", 'echo $$ > %s/cgroup.procs && exec "$@"' % memcg,
             "sh"] + NOBODY + USERNS + ["sh", "-c", script], check=False)
    out = r.stdout.splitlines()
    before, after = int(out[0]), int(out[1])
    used = int(re.search(r'"memory_used":(\d+)', r.stdout).group(1))
    assert '"kind":"epdn"' in r.stdout and used >= MAX_FLOWS * 16, r
    assert after - before >= used * 0.9, \
        "memory.current %d -> %d for a %d-byte table" % (before, after, used)
