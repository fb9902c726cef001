# SPDX-License-Identifier: GPL-2.0
"""Namespace churn: pairs of namespaces created with a veth, an epdn
qdisc and the RN hooks inside, four flows through them, and deleted
again (every other pair under traffic, the others after their counters
are checked)."""

import os
import socket
import struct
import threading
import time

from satnet import host
from satnet.host import netns, sysctl_write
from lib.kernel import rn_host_stats

from .control import DEFAULT_CCS
from .counters import (action_packets, add_counter, epdn_identities,
                       rn_identities, settled, stable)
from .flows import CCS

CHURN = ("10.99.0.1", "10.99.0.2")


class Churn:
    """Steps of the churn thread, for the Soak: its namespace prefix and
    list, rn_lock, the esack-off file, check() and count()."""

    def churn_step(self, rnd):
        k = self.n["ops.netns_pairs"]
        a, b = "%s-c%da" % (self.pfx, k), "%s-c%db" % (self.pfx, k)
        under_traffic = k % 2 == 1
        host.ip_batch(["netns add " + a, "netns add " + b])
        self.namespaces += [a, b]
        self.count("ops.netns_created", 2)
        socks = []
        try:
            self.churn_build(rnd, a, b)
            threads = self.churn_traffic(rnd, a, b, socks)
            if under_traffic:
                self.stop.wait(rnd.uniform(0.3, 1.5))
            else:
                for th in threads:
                    th.join(timeout=30)
                time.sleep(0.3)
                self.churn_check(a, b)
        finally:
            host.ip_batch(["netns del " + a, "netns del " + b], check=False)
            # The last socket closed, the namespaces go, with their qdisc
            # and rn_host flows.  Flows cut short are reset: an orphan
            # would retransmit into the void for minutes, and keep its
            # congestion control module.
            for s in socks:
                try:
                    if under_traffic:
                        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                     struct.pack("ii", 1, 0))
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()
            self.namespaces = [n for n in self.namespaces if n not in (a, b)]
            self.count("ops.netns_deleted", 2)
        self.count("ops.netns_pairs")
        if under_traffic:
            self.count("ops.netns_deleted_under_traffic", 2)

    def churn_build(self, rnd, a, b):
        for ns in (a, b):
            host.disable_ipv6(ns)
        # One segment per skb (TCP builds GSO skbs whatever the device
        # offers): the tc action counts packets, the drops count skbs.
        host.run(["ip", "link", "add", "ca", "gso_max_segs", "1", "netns", a,
                  "type", "veth", "peer", "name", "cb", "gso_max_segs", "1",
                  "netns", b])
        for ns, dev, addr in ((a, "ca", CHURN[0]), (b, "cb", CHURN[1])):
            host.ip_batch(["link set lo up", "addr add %s/24 dev %s" %
                           (addr, dev), "link set %s up" % dev], ns=ns)
        host.run(["tc", "qdisc", "add", "dev", "ca", "root", "handle", "1:",
                  "epdn", "limit", "8", "mode", "v2", "corrupt", "3%",
                  "flows", "64", "idle", "500ms"], ns=a)
        add_counter("ca", a)
        host.run(["tc", "qdisc", "add", "dev", "cb", "root", "netem",
                  "delay", "2ms"], ns=b)
        with self.rn_lock:              # rn_host is not being reloaded
            for ns in (a, b):
                sysctl_write(ns, "net.rn.receiver", 1)
                sysctl_write(ns, "net.rn.epdn_origin", 1)
        sysctl_write(a, "net.ipv4.tcp_congestion_control",
                     rnd.choice(DEFAULT_CCS))

    def churn_traffic(self, rnd, a, b, socks):
        """A listener in b that reads everything, four flows from a."""
        with netns(b):
            ls = socket.socket()
        ls.bind((CHURN[1], 80))
        ls.listen(64)
        ls.settimeout(20)
        socks.append(ls)

        def sink():
            for _ in range(4):
                try:
                    c, _ = ls.accept()
                except OSError:
                    return
                socks.append(c)
                c.settimeout(20)
                threading.Thread(target=drain, args=(c,), daemon=True).start()

        def drain(c):
            try:
                while c.recv(65536):
                    pass
                c.shutdown(socket.SHUT_WR)
            except OSError:
                pass

        def flow(cc, n):
            with netns(a):
                s = socket.socket()
            socks.append(s)
            s.settimeout(20)
            try:
                if cc != "default":
                    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION,
                                 cc.encode())
                s.connect((CHURN[1], 80))
                s.sendall(b"x" * n)
                s.shutdown(socket.SHUT_WR)
                while s.recv(4096):     # the peer's FIN: all delivered
                    pass
                self.count("flows.churn")
            except OSError:
                self.count("flows.churn_cut")

        ccs = [c for c in CCS + ("default",)
               if c != "esack" or not os.path.exists(self.esack_off)]
        threads = [threading.Thread(target=sink, daemon=True)]
        threads += [threading.Thread(target=flow, daemon=True, args=(
            rnd.choice(ccs), rnd.randrange(20000, 200000)))
            for _ in range(4)]
        for th in threads:
            th.start()
        return threads

    def churn_check(self, a, b):
        st, entered = settled(a, "ca", lambda: action_packets("ca", a))
        bad = epdn_identities(st, entered)
        self.check("epdn counters add up", not bad, "%s/ca: %s" %
                   (a, "; ".join(bad)))
        self.count("checks.epdn_churn_instances")
        with self.rn_lock:              # a reload would zero them
            sts = [(ns, stable(lambda: rn_host_stats(ns))) for ns in (a, b)]
        for ns, st in sts:
            bad = rn_identities(st)
            self.check("rn_host counters add up", not bad,
                       "%s: %s" % (ns, "; ".join(bad)))
            with self.lock:
                self.rn_sum["churn"].update(
                    {k: v for k, v in st.items() if k.startswith(
                        ("data_", "opt_", "flows_", "acks_", "origin_"))
                     and k != "flows_live"})
