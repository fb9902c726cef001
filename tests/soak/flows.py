# SPDX-License-Identifier: GPL-2.0
"""The flows of the soak: worker processes inside the dumbbell's end
hosts, started as `run.py --worker server|client CONFIG`.

A flow: the client sends an 8-byte header (length, 0), then that many
bytes (a long flow: length STREAM, bytes until it shuts down its side);
the server answers with what it received, 8-byte count and CRC-32, and
closes.  Workers write their counters as JSON every 2 s."""

import collections
import errno
import json
import os
import random
import selectors
import signal
import socket
import struct
import threading
import time
import zlib

from satnet import record

CCS = ("rn", "r", "esack", "cubic", "reno")
LONG_CCS = ("rn", "r", "cubic", "reno")       # never esack: it must unload
PORT = 7100
STREAM = 0xffffffff                 # header length of a long flow
FLOW_TIMEOUT = 60                   # s: one short flow, one long send
LONG_SWITCH_S = 15
SHORT_THREADS = 10                  # per sender


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("EOF after %d of %d bytes" % (len(buf), n))
        buf += chunk
    return buf




def serve(cfg):
    """Answer every flow with its byte count and CRC, until SIGTERM."""
    stats = collections.Counter()
    done = []
    signal.signal(signal.SIGTERM, lambda *_: done.append(1))
    sel = selectors.DefaultSelector()
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("0.0.0.0", cfg["port"]))
    ls.listen(1024)
    ls.setblocking(False)
    sel.register(ls, selectors.EVENT_READ)

    def answer(c, st):
        c.setblocking(True)
        c.settimeout(10)
        try:
            c.sendall(struct.pack("!QI", st["got"], st["crc"]))
        except OSError:
            stats["reply_failed"] += 1
        finish(c)

    def finish(c):
        sel.unregister(c)
        c.close()

    last = 0
    while not done:
        for key, _ in sel.select(0.5):
            if key.data is None:
                try:
                    c, _ = ls.accept()
                except OSError:
                    continue
                c.setblocking(False)
                stats["accepted"] += 1
                sel.register(c, selectors.EVENT_READ,
                             {"hdr": b"", "n": None, "got": 0, "crc": 0})
                continue
            c, st = key.fileobj, key.data
            try:
                data = c.recv(65536)
            except BlockingIOError:
                continue
            except OSError:
                stats["reset"] += 1
                finish(c)
                continue
            if not data:
                if st["n"] == STREAM:
                    stats["long_done"] += 1
                    answer(c, st)
                else:
                    stats["aborted"] += 1
                    finish(c)
                continue
            if st["n"] is None:
                st["hdr"] += data
                if len(st["hdr"]) < 8:
                    continue
                st["n"], _ = struct.unpack("!II", st["hdr"][:8])
                data = st["hdr"][8:]
            st["got"] += len(data)
            st["crc"] = zlib.crc32(data, st["crc"])
            stats["bytes"] += len(data)
            if st["n"] != STREAM and st["got"] >= st["n"]:
                stats["short_done"] += 1
                answer(c, st)
        if time.monotonic() - last > 2:
            record.write(stats, cfg["stats"])
            last = time.monotonic()
    record.write(stats, cfg["stats"])


class Client:
    """Short flows on many threads, long flows on a few, until the stop
    file appears; the esack-off file keeps esack out of new choices."""

    def __init__(self, cfg):
        self.cfg = cfg
        self.lock = threading.Lock()
        self.short = collections.defaultdict(collections.Counter)
        self.errors = collections.Counter()
        self.long = []
        self.n = collections.Counter()

    def stopping(self):
        return os.path.exists(self.cfg["stop"])

    def allowed(self, ccs):
        if os.path.exists(self.cfg["esack_off"]):
            return [c for c in ccs if c != "esack"]
        return list(ccs)

    def set_cc(self, s, cc):
        """The congestion control @cc on @s; False when it is refused."""
        try:
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION,
                         cc.encode())
            return True
        except OSError:
            with self.lock:
                self.n["cc_refused"] += 1
            return False

    @staticmethod
    def cc_of(s):
        return s.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION,
                            16).rstrip(b"\0").decode()

    def error(self, e):
        if isinstance(e, socket.timeout):
            return "timeout"
        if isinstance(e, OSError) and e.errno:
            return errno.errorcode.get(e.errno, str(e.errno))
        return type(e).__name__

    def short_flow(self, rnd, buf):
        cc = rnd.choice(self.allowed(CCS) + ["default"])
        n = int(2 ** rnd.uniform(10, 18))
        switch = rnd.randrange(n) if rnd.random() < 0.15 else -1
        s = socket.socket()
        s.settimeout(FLOW_TIMEOUT)
        used = "?"
        try:
            if cc != "default":
                self.set_cc(s, cc)
            used = self.cc_of(s)
            s.connect((self.cfg["dst"], self.cfg["port"]))
            s.sendall(struct.pack("!II", n, 0))
            sent, crc = 0, 0
            while sent < n:
                off = rnd.randrange(len(buf) // 2)
                chunk = buf[off:off + min(16384, n - sent)]
                s.sendall(chunk)
                crc = zlib.crc32(chunk, crc)
                if sent <= switch < sent + len(chunk):
                    if self.set_cc(s, rnd.choice(self.allowed(CCS))):
                        with self.lock:
                            self.n["switched_short"] += 1
                sent += len(chunk)
            s.shutdown(socket.SHUT_WR)
            got, rcrc = struct.unpack("!QI", recv_exact(s, 12))
            kind = "ok" if (got, rcrc) == (n, crc) else "corrupt"
        except Exception as e:        # noqa: BLE001 - counted by kind
            kind = "failed"
            with self.lock:
                self.errors[self.error(e)] += 1
        finally:
            s.close()
        with self.lock:
            self.short[used][kind] += 1
            if kind == "ok":
                self.n["short_bytes"] += n

    def short_loop(self, seed):
        rnd = random.Random(seed)
        buf = rnd.randbytes(1 << 16)
        while not self.stopping():
            self.short_flow(rnd, buf)

    def long_flow(self, rnd, buf, first):
        rec = {"cc": [], "bytes": 0, "ok": False, "error": None,
               "started": time.time()}
        with self.lock:
            self.long.append(rec)
        s = socket.socket()
        s.settimeout(FLOW_TIMEOUT)
        try:
            self.set_cc(s, LONG_CCS[first])
            rec["cc"].append(self.cc_of(s))
            s.connect((self.cfg["dst"], self.cfg["port"]))
            s.sendall(struct.pack("!II", STREAM, 0))
            crc, k, switched = 0, first, time.monotonic()
            while not self.stopping():
                off = rnd.randrange(len(buf) // 2)
                chunk = buf[off:off + 16384]
                s.sendall(chunk)
                crc = zlib.crc32(chunk, crc)
                rec["bytes"] += len(chunk)
                if time.monotonic() - switched > LONG_SWITCH_S:
                    k = (k + 1) % len(LONG_CCS)
                    if self.set_cc(s, LONG_CCS[k]):
                        rec["cc"].append(self.cc_of(s))
                    switched = time.monotonic()
            s.shutdown(socket.SHUT_WR)
            s.settimeout(3 * FLOW_TIMEOUT)     # the queues drain first
            got, rcrc = struct.unpack("!QI", recv_exact(s, 12))
            rec["ok"] = (got, rcrc) == (rec["bytes"], crc)
            if not rec["ok"]:
                rec["error"] = "server got %d bytes crc %08x, sent %d crc " \
                    "%08x" % (got, rcrc, rec["bytes"], crc)
        except Exception as e:        # noqa: BLE001 - reported
            rec["error"] = self.error(e)
        finally:
            s.close()
            rec["ended"] = time.time()

    def long_loop(self, seed, first):
        rnd = random.Random(seed)
        buf = rnd.randbytes(1 << 16)
        while not self.stopping():
            self.long_flow(rnd, buf, first)
            if not self.stopping():
                time.sleep(1)     # it failed: the check says so; go on

    def snapshot(self):
        with self.lock:
            return {"short": {k: dict(v) for k, v in self.short.items()},
                    "errors": dict(self.errors), "n": dict(self.n),
                    "long": [dict(r) for r in self.long]}

    def run(self):
        seed = self.cfg["seed"]
        threads = [threading.Thread(target=self.short_loop,
                                    args=(seed * 100 + i,), daemon=True)
                   for i in range(self.cfg["threads"])]
        threads += [threading.Thread(target=self.long_loop,
                                     args=(seed * 100 + 50 + i, first),
                                     daemon=True)
                    for i, first in enumerate(self.cfg["long"])]
        for t in threads:
            t.start()
        while any(t.is_alive() for t in threads):
            record.write(self.snapshot(), self.cfg["stats"])
            time.sleep(2)
        record.write(self.snapshot(), self.cfg["stats"])


def worker(argv):
    cfg = json.loads(argv[1])
    if argv[0] == "server":
        serve(cfg)
    else:
        Client(cfg).run()
