# SPDX-License-Identifier: GPL-2.0
"""Our modules during the soak: tcp_esack unloaded when no socket uses it
(and rmmod refused while one does), rn_host unloaded under traffic with
its counters checked first; their parameters saved and restored, and the
modules the soak loaded unloaded at the end."""

import os
import socket
import struct
import time

from satnet import kmod
from satnet.host import modprobe, netns, sysctl_write
from lib.kernel import rn_host_stats

from . import log, write
from .control import OURS
from .counters import rn_identities, stable
from .flows import PORT

UNLOAD_ORDER = ("tcp_esack", "tcp_r", "tcp_rn", "rn_host", "sch_epdn")
SLAB = "/sys/kernel/slab"
FLOW_CACHE = "rn_flow"              # KMEM_CACHE(rn_flow) in rn_hooks.c


def module_users(mod):
    """The module's reference count, -1 when it is not loaded."""
    n = kmod.refcnt(mod)
    return -1 if n == "-" else int(n)


def try_rmmod(mod, wait):
    """Unload @mod, trying for @wait s: "" when it went, else why not."""
    try:
        kmod.rmmod(mod, wait=wait, check=True)
    except kmod.ModuleError as e:
        return str(e)
    return ""


class Modules:
    """Steps of the modules thread, for the Soak: its topology, its locks
    (rn_lock, esack_lock), the esack-off file the flows read, check() and
    count()."""

    def modules_step(self, rnd):
        self.esack_cycle(rnd)
        if self.soaked() > getattr(self, "next_rn", 45):
            self.rn_host_cycle()
            self.next_rn = self.soaked() + 60

    def esack_cycle(self, rnd):
        t = self.topo
        with self.esack_lock:
            self.esack_refused(t)
            write(self.esack_off, "1")
            try:
                end = time.monotonic() + 30
                while module_users("tcp_esack") > 0 and \
                        time.monotonic() < end and not self.stop.is_set():
                    time.sleep(0.2)
                if module_users("tcp_esack") != 0:
                    self.count("ops.esack_unload_deferred")
                    return
                # A flow may have picked it just before.
                why = try_rmmod("tcp_esack", wait=10)
                if "in use" in why:
                    self.count("ops.esack_unload_deferred")
                    return
                self.check("tcp_esack unloads when no socket uses it",
                           not why and not kmod.loaded("tcp_esack"), why)
                self.stop.wait(rnd.uniform(1, 4))
                modprobe("tcp_esack")
                self.count("ops.esack_rmmod_insmod")
            finally:
                os.unlink(self.esack_off)

    def esack_refused(self, t):
        """rmmod must be refused while a socket has esack."""
        with netns(t.snd[0]):
            hold = socket.socket()
        hold.settimeout(30)
        try:
            hold.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION,
                            b"esack")
            hold.connect((t.rcv_addr(0), PORT))
            hold.sendall(struct.pack("!II", 0, 0))
        except OSError as e:            # the path is lossy: next time
            self.count("ops.esack_hold_connect_failed")
            hold.close()
            log("esack hold: %s" % e)
            return
        try:
            users = module_users("tcp_esack")
            why = try_rmmod("tcp_esack", wait=0)
            self.check("rmmod tcp_esack refused while a socket uses it",
                       "in use" in why and users >= 1 and
                       kmod.loaded("tcp_esack"),
                       "refcnt %d: %s" % (users, why or "unloaded"))
            self.count("ops.rmmod_refused_in_use")
        finally:
            hold.close()

    def hooks(self):
        t = self.topo
        return [(ns, "net.rn.epdn_origin") for ns in t.snd] + \
            [(ns, "net.rn.receiver") for ns in t.rcv]

    def check_rn(self, label):
        """The rn_host counters of the dumbbell's hosts, hooks off."""
        t = self.topo
        for role, nss in (("snd", t.snd), ("rcv", t.rcv)):
            for ns in nss:
                st = stable(lambda: rn_host_stats(ns))
                bad = rn_identities(st)
                self.check("rn_host counters add up", not bad,
                           "%s %s: %s" % (label, ns, "; ".join(bad)))
                with self.lock:
                    self.rn_sum[role].update(
                        {k: v for k, v in st.items()
                         if k not in ("receiver", "epdn_origin",
                                      "require_host", "max_flows",
                                      "flows_live")})

    def rn_host_cycle(self):
        """Counters checked with the hooks off; then the hooks on again and
        rmmod at once, under traffic: rn_host has no users to wait for, its
        pernet exit unhooks and frees every flow."""
        with self.rn_lock:
            for ns, key in self.hooks():
                sysctl_write(ns, key, 0)
            time.sleep(0.5)
            self.check_rn("before reload %d" % (self.n["ops.rn_host_reload"]
                                                 + 1))
            for ns, key in self.hooks():
                sysctl_write(ns, key, 1)
            time.sleep(0.3)
            why = try_rmmod("rn_host", wait=0)
            cache = os.path.join(SLAB, FLOW_CACHE)
            self.check("rn_host unloads with its hooks live",
                       not why and not kmod.loaded("rn_host") and
                       not (self.flow_cache_own and os.path.exists(cache)),
                       why)
            modprobe("rn_host")
            for ns, key in self.hooks():
                sysctl_write(ns, key, 1)
            self.count("ops.rn_host_reload")

    def save_params(self):
        for mod in OURS:
            for p, v in kmod.read_params(mod, writable=True).items():
                if v is not None:
                    self.saved_params[(mod, p)] = v

    def restore_params(self):
        for (mod, p), v in self.saved_params.items():
            try:
                kmod.set_param(mod, p, v)
            except RuntimeError:
                pass            # the module is gone, or refuses: logged

    def unload(self):
        """The modules this run loaded go again; a socket or namespace
        still holding one is a leak."""
        for m in UNLOAD_ORDER:
            if m in self.loaded:        # namespaces are freed lazily
                why = try_rmmod(m, wait=120)
                self.check("our modules unload at the end",
                           not kmod.loaded(m), why or None)
