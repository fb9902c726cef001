# SPDX-License-Identifier: GPL-2.0
"""Host plumbing under the testbed: programs run in network namespaces
(this thread entering them), ip and tc in batches, modules loaded, sysctls
and /proc/net read and written without starting a program, and the tc
library folder (our netem tables and the epdn plugin) that tc reads.
The dumbbell built from them is topo.Topology."""

import contextlib
import ctypes
import os
import shutil
import signal
import subprocess
import tempfile
import threading

from . import dist, kmod
from .paths import MODULES, TOP, hang_limit, ko

TC_LIB = os.path.join(TOP, "build", "tclib")
_tclib_lock = threading.Lock()
_tclib_done = []

# rtnetlink's message type and flag that castate's sock_diag dump needs.
NLMSG_ERROR = 2
NLM_F_REQUEST = 1


class TopologyError(RuntimeError):
    pass


def run(cmd, check=True, inp=None, timeout=120, ns=None):
    """Run a command, in network namespace @ns when given (this thread
    enters it, and the command starts there)."""
    with netns(ns):
        r = subprocess.run(local_argv(cmd), input=inp, capture_output=True,
                           text=True, timeout=hang_limit(timeout),
                           env=program_env(cmd))
    if check and r.returncode:
        raise TopologyError("%s failed (%d): %s" %
                            (" ".join(cmd), r.returncode,
                             (r.stderr or r.stdout).strip()))
    return r


# In the VM the checkout is a 9p share: every file tc reads from it is a
# request to the host, and under the virtual clock the guest's time runs
# on while it waits.  There tc reads a copy in the guest's own tmpfs.
GUEST_TC_LIB = "/run/satnet/tclib"
_tc_lib = [TC_LIB]


def tc_env():
    env = dict(os.environ)
    env["TC_LIB_DIR"] = _tc_lib[0]
    return env


def prepare_tclib():
    """Our netem tables (and tc plugins) live in build/tclib."""
    with _tclib_lock:
        if not _tclib_done:
            dist.write_tables(TC_LIB)
            _tclib_done.append(True)
    plugin = os.path.join(TOP, "build", "tc", "q_epdn.so")
    if os.path.exists(plugin):
        link = os.path.join(TC_LIB, "q_epdn.so")
        with _tclib_lock:
            if not os.path.lexists(link):
                try:
                    os.symlink(plugin, link)
                except FileExistsError:     # another guest made it
                    pass
    if os.environ.get("SATNET_IN_VM") == "1":
        with _tclib_lock:
            if _tc_lib[0] != GUEST_TC_LIB:
                copy_files(TC_LIB, GUEST_TC_LIB)
                _tc_lib[0] = GUEST_TC_LIB


# The host's root is a 9p share in the VM too: a program started from it
# opens its binary and each of its libraries there, 40-60 requests a start.
# The programs the harness starts around and in a measured window run from
# copies in the guest's tmpfs instead, through a copy of the dynamic loader
# named after the program (so that its process keeps its name).
GUEST_BIN = "/run/satnet/bin"
LOCAL_PROGRAMS = ("ip", "tc", "ping", "iperf3")
_local = {}
_local_lock = threading.Lock()


def ldd(path):
    """The shared libraries of program @path as {soname: file}, and its
    dynamic loader, from ldd's answer."""
    out = subprocess.run(["ldd", path], capture_output=True, text=True,
                         check=True).stdout
    libs, loader = {}, None
    for line in out.splitlines():
        words = line.split()
        if "=>" in words:
            i = words.index("=>")
            if i + 1 < len(words) and words[i + 1].startswith("/"):
                libs[words[0]] = words[i + 1]
            elif "not found" in line:
                raise TopologyError("ldd %s: %s" % (path, line.strip()))
        elif words and words[0].startswith("/"):
            loader = words[0]
    if not loader:
        raise TopologyError("ldd %s: no dynamic loader named" % path)
    return libs, loader


def localize(name, where=None):
    """Copy program @name, its libraries and its loader under @where
    (GUEST_BIN); the command line that starts the copy."""
    where = where or GUEST_BIN
    path = shutil.which(name)
    if not path:
        raise TopologyError("no program %s" % name)
    libs, loader = ldd(path)
    libdir = os.path.join(where, "lib")
    os.makedirs(os.path.join(where, "libexec"), exist_ok=True)
    os.makedirs(libdir, exist_ok=True)
    for soname, f in libs.items():
        copy_file(f, os.path.join(libdir, soname), 0o755)
    prog = os.path.join(where, "libexec", name)
    copy_file(path, prog, 0o755)
    start = os.path.join(where, name)
    copy_file(loader, start, 0o755)
    return [start, "--library-path", libdir, "--argv0", name, prog]


def prepare_programs():
    """In the VM, the programs of LOCAL_PROGRAMS run from the guest's
    tmpfs from now on (local_argv)."""
    if os.environ.get("SATNET_IN_VM") != "1":
        return
    with _local_lock:
        for name in LOCAL_PROGRAMS:
            if name not in _local:
                _local[name] = localize(name)


def local_argv(cmd):
    """@cmd, started from the guest's copy of its program when there is
    one (prepare_programs)."""
    start = _local.get(cmd[0]) if cmd else None
    return start + list(cmd[1:]) if start else cmd


def program_env(cmd):
    """The environment of a program the harness starts: tc_env(), and
    for a guest copy the C locale and a time zone spelled out, whose
    files would be read from the host (ping reads a dozen for the
    locale, iperf3 /etc/localtime)."""
    env = tc_env()
    if cmd and cmd[0] in _local:
        env.update(LC_ALL="C", TZ="UTC0")
    return env


def copy_file(src, dst, mode=0o644):
    """File @src (a symbolic link followed) to @dst, replaced whole:
    another process may be reading the old one."""
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(dst) + ".",
                               suffix=".tmp", dir=os.path.dirname(dst))
    with open(src, "rb") as f, os.fdopen(fd, "wb") as out:
        shutil.copyfileobj(f, out)
    os.chmod(tmp, mode)
    os.replace(tmp, dst)


def copy_files(src, dst):
    """The files of folder @src into @dst (copy_file)."""
    os.makedirs(dst, exist_ok=True)
    for name in os.listdir(src):
        path = os.path.join(src, name)
        if name.endswith(".tmp") or not os.path.isfile(path):
            continue
        copy_file(path, os.path.join(dst, name))


# What insmod cannot resolve by itself (modprobe reads modules.dep).
OWN_DEPENDS = {"tcp_r": ("tcp_rn",)}


def modprobe(*mods):
    """Load modules: the kernel's with modprobe; ours with modprobe when
    installed (make install), otherwise with insmod from the build tree."""
    for m in mods:
        if kmod.loaded(m):
            continue
        r = run(["modprobe", m], check=False)
        if r.returncode and m in MODULES:
            modprobe(*OWN_DEPENDS.get(m, ()))
            try:
                kmod.insmod(ko(m), reload=False)
                continue
            except kmod.ModuleError as e:
                if kmod.loaded(m):
                    continue             # a concurrent run loaded it
                raise TopologyError("cannot load %s: %s" % (m, e)) from None
        if r.returncode:
            raise TopologyError("cannot load %s: %s" %
                                (m, (r.stderr or r.stdout).strip()))


def ip_batch(lines, check=True, ns=None):
    """ip commands in one program (in namespace @ns); -force: all of them,
    even after one fails."""
    return run(["ip"] + (["-n", ns] if ns else []) + ["-force", "-batch",
                                                      "-"],
               check=check, inp="".join(ln + "\n" for ln in lines))


def remove_netns(*names):
    """Kill what runs in the namespaces @names, then delete them; True
    when every one was deleted."""
    pids = ip_batch(["netns pids " + ns for ns in names],
                    check=False).stdout.split()
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(pid), signal.SIGKILL)
    return ip_batch(["netns del " + ns for ns in names],
                    check=False).returncode == 0


# ---- network namespaces entered by one thread ----------------------------

_libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNET = 0x40000000


def _setns(fd):
    if _libc.setns(fd, CLONE_NEWNET):
        err = ctypes.get_errno()
        raise OSError(err, "setns: " + os.strerror(err))


@contextlib.contextmanager
def netns(name):
    """Move this thread into network namespace @name (ip netns), and back
    after; sockets opened inside stay in it.  None: stay where we are."""
    if not name:
        yield
        return
    home = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    try:
        fd = os.open("/run/netns/" + name, os.O_RDONLY)
        try:
            _setns(fd)
        finally:
            os.close(fd)
        yield
    finally:
        _setns(home)
        os.close(home)


def sysctl_write(ns, key, value):
    """Write one sysctl of namespace @ns without starting a program."""
    with netns(ns):
        with open("/proc/sys/" + key.replace(".", "/"), "w") as f:
            f.write(str(value))


# A network namespace shares the host's table of established sockets
# (16384 buckets in a 2 GB guest) unless net.ipv4.tcp_child_ehash_entries
# (Linux 6.1 on) was set in its parent when it was made.  A sock_diag dump
# walks every bucket: under the virtual clock 0.7 ms of the guest's CPU,
# and castate samples 20 times a second.  Ours get a table of their own;
# at 1024 buckets the kernel's limits derived from it stay above what a
# flow needs (512 sockets in TIME_WAIT, a SYN backlog of 128).
NETNS_EHASH = 1024
CHILD_EHASH = "/proc/sys/net/ipv4/tcp_child_ehash_entries"
_ehash_lock = threading.Lock()


@contextlib.contextmanager
def sysctl_set(path, value):
    """The /proc/sys file @path holds @value meanwhile, then what it held
    before (nothing is done where the kernel has no such file)."""
    try:
        with open(path) as f:
            old = f.read().strip()
    except FileNotFoundError:
        old = None
    if old is not None:
        with open(path, "w") as f:
            f.write(str(value))
    try:
        yield
    finally:
        if old is not None:
            with open(path, "w") as f:
                f.write(old)


@contextlib.contextmanager
def own_ehash(entries=NETNS_EHASH, path=CHILD_EHASH):
    """Namespaces made inside get their own @entries-bucket table of
    established sockets; the parent's setting is put back after (a kernel
    without the sysctl makes them as before)."""
    with _ehash_lock, sysctl_set(path, entries):
        yield


def disable_ipv6(ns):
    """No IPv6 in namespace @ns, on its devices and on those to come: no
    router solicitations, DAD or MLD among the packets a test counts."""
    for conf in ("all", "default"):
        sysctl_write(ns, "net.ipv6.conf.%s.disable_ipv6" % conf, 1)


def proc_net(ns, name):
    """/proc/net/@name as namespace @ns sees it."""
    with netns(ns):
        with open("/proc/thread-self/net/" + name) as f:
            return f.read()
