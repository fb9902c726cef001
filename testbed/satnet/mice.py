# SPDX-License-Identifier: GPL-2.0
"""Short flows beside the long ones (seed 001 §XII-A): each mice sender
opens connections to its receiver at exponential intervals, sends a
Pareto-sized file on each and closes it; the receivers' sink reads every
connection to its end and closes it.  A mouse's completion time runs from
connect() to the sink's close, seen at the sender.

Sender and sink are threads of the runner, their sockets opened in the
pairs' namespaces (host.netns): no program per flow.
"""

import errno
import os
import random
import select
import selectors
import socket
import threading
import time

from .host import netns

PORT = 5301
CHUNK = 65536


def pareto_bytes(rnd, mean, shape):
    """A Pareto size with @mean bytes and @shape (above 1): the scale is
    mean (shape - 1) / shape, drawn by inverting the CDF."""
    scale = mean * (shape - 1) / shape
    return max(1, int(scale / (1.0 - rnd.random()) ** (1.0 / shape)))


def arrivals(rnd, rate, duration, mean, shape):
    """(start_s, bytes) of one sender's mice: a Poisson process of @rate
    a second (exponential gaps, as the seed's), up to @duration."""
    out, t = [], rnd.expovariate(rate)
    while t < duration:
        out.append((t, pareto_bytes(rnd, mean, shape)))
        t += rnd.expovariate(rate)
    return out


class Sink(threading.Thread):
    """Reads every connection accepted on the listening sockets to its
    end, then closes it.  One thread for all the receivers."""

    def __init__(self, namespaces, port=PORT, host=""):
        super().__init__(daemon=True)
        self.sel = selectors.DefaultSelector()
        self.stopped = threading.Event()
        self.listeners = []
        for ns in namespaces:
            with netns(ns):
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind((host, port))
            s.listen(128)
            s.setblocking(False)
            self.sel.register(s, selectors.EVENT_READ, None)
            self.listeners.append(s)

    def run(self):
        while not self.stopped.is_set():
            for key, _ in self.sel.select(timeout=0.2):
                if key.data is None:
                    self._accept(key.fileobj)
                else:
                    self._read(key.fileobj)
        self._close()

    def _close(self):
        for key in list(self.sel.get_map().values()):
            key.fileobj.close()
        self.sel.close()

    def _accept(self, lsock):
        try:
            conn, _ = lsock.accept()
        except BlockingIOError:
            return
        conn.setblocking(False)
        self.sel.register(conn, selectors.EVENT_READ, "conn")

    def _read(self, conn):
        try:
            data = conn.recv(CHUNK)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self.sel.unregister(conn)
            conn.close()

    def stop(self):
        """End the thread, or, never started, close its sockets."""
        self.stopped.set()
        if self.ident is None:
            self._close()
        else:
            self.join()


class Cut(Exception):
    """The run ended before the mouse did."""


class Mouse(threading.Thread):
    """One short flow: connect, send @size bytes, shut the sending side,
    wait for the sink's close.  fct_s stays None when it did not finish
    (an error, or cut: the run's end came first).  Every wait is a poll
    of POLL_S, so that a cut mouse ends within it."""

    POLL_S = 0.5

    def __init__(self, ns, dst, size, cc, port=PORT):
        super().__init__(daemon=True)
        self.ns, self.dst, self.size, self.cc = ns, dst, size, cc
        self.port = port
        self.fct_s, self.error = None, None
        self.cut = threading.Event()

    def run(self):
        t0 = time.monotonic()
        with netns(self.ns):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            if self.cc:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION,
                                self.cc.encode())
            self._connect(sock)
            sock.settimeout(self.POLL_S)
            left, block = self.size, bytes(CHUNK)
            while left:
                left -= self._io(sock.send, block[:min(left, CHUNK)])
            sock.shutdown(socket.SHUT_WR)
            while self._io(sock.recv, CHUNK):
                pass
            self.fct_s = time.monotonic() - t0
        except Cut:
            pass
        except OSError as e:
            self.error = e.strerror or str(e)
        finally:
            sock.close()

    def _connect(self, sock):
        sock.setblocking(False)
        err = sock.connect_ex((self.dst, self.port))
        while err in (errno.EINPROGRESS, errno.EALREADY):
            if self.cut.is_set():
                raise Cut()
            if select.select([], [sock], [], self.POLL_S)[1]:
                err = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if err:
            raise OSError(err, os.strerror(err))

    def _io(self, fn, arg):
        """fn(arg), a socket call, retried on each POLL_S timeout."""
        while True:
            if self.cut.is_set():
                raise Cut()
            try:
                return fn(arg)
            except TimeoutError:
                continue


class Mice(threading.Thread):
    """The mice of every (sender namespace, destination) in @senders,
    each sender's drawn by arrivals() from a generator seeded by @seed
    and its index, so that the arms of a comparison, given one seed,
    meet the same mice."""

    def __init__(self, senders, spec, duration, seed=0, port=PORT):
        super().__init__(daemon=True)
        self.senders, self.spec, self.port = senders, spec, port
        self.plan = []
        for i in range(len(senders)):
            rnd = random.Random("%s-%d" % (seed, i))
            self.plan += [(t, i, size) for t, size in arrivals(
                rnd, spec["per_s"], duration, spec["mean_bytes"],
                spec["shape"])]
        self.plan.sort()
        self.started = []            # (pair, start_s, Mouse)
        self.stopped = threading.Event()

    def run(self):
        t0 = time.monotonic()
        for t, i, size in self.plan:
            if self.stopped.wait(max(0.0, t0 + t - time.monotonic())):
                return
            ns, dst = self.senders[i]
            m = Mouse(ns, dst, size, self.spec.get("cc"), self.port)
            self.started.append((i, round(t, 3), m))
            m.start()

    def finish(self, grace_s):
        """Start no more mice; give those under way @grace_s to end, then
        cut them.  [[pair, start_s, bytes, fct_s or None], ...] and the
        errors seen."""
        self.stopped.set()
        self.join()
        end = time.monotonic() + grace_s
        for _, _, m in self.started:
            m.join(max(0.0, end - time.monotonic()))
        for _, _, m in self.started:
            m.cut.set()
            m.join()
        flows = [[i, t, m.size, None if m.fct_s is None else
                  round(m.fct_s, 4)] for i, t, m in self.started]
        errors = sorted({m.error for _, _, m in self.started if m.error})
        return flows, errors


def summary(flows):
    """Mean throughput of the mice that finished (bytes over completion
    time, Mbit/s), with counts: the seed's "average throughput of the
    small flows"."""
    done = [(b, fct) for _, _, b, fct in flows if fct]
    return {"goodput": sum(b * 8 / fct for b, fct in done) / len(done) / 1e6
            if done else None,
            "flows": len(done), "started": len(flows),
            "done_share": len(done) / len(flows) if flows else None}
