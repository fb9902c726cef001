# SPDX-License-Identifier: GPL-2.0
"""Paced UDP sender and counting receiver for the testbed's checks.

  udp.py send DST RATE_BPS SECONDS [SIZE]   numbered datagrams at a rate
  udp.py recv PORT SECONDS                  counts for SECONDS from the
                                            first datagram, then prints
                                            '<distinct> <max_seq+1>' and
                                            the missing numbers below
                                            max_seq+1 on one line
"""

import socket
import struct
import sys
import time

PORT = 9


def send(dst, rate, seconds, size=1472, port=PORT):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    wire = size + 42                        # UDP + IP + Ethernet headers
    pps = rate / 8 / wire
    pad = b"\0" * (size - 8)
    t0 = time.monotonic()
    seq = 0
    while True:
        now = time.monotonic() - t0
        if now >= seconds:
            break
        due = int(now * pps) + 1
        while seq < due:
            try:
                s.sendto(struct.pack("!Q", seq) + pad, (dst, port))
            except OSError:
                pass                         # ICMP errors, full queues
            seq += 1
        time.sleep(0.005)
    return seq


def recv(port, seconds):
    """The window opens at the first datagram: a sender that starts late
    (on the virtual clock a slow program load takes guest seconds) still
    gets all of it.  With no datagram at all it gives up after ten
    windows."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("0.0.0.0", port))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    s.settimeout(0.5)
    seen, top = set(), 0
    end = time.monotonic() + 10 * seconds
    while time.monotonic() < end:
        try:
            data = s.recv(65536)
        except socket.timeout:
            continue
        if not seen:
            end = time.monotonic() + seconds
        seq = struct.unpack("!Q", data[:8])[0]
        seen.add(seq)
        top = max(top, seq + 1)
    print(len(seen), top)
    print(" ".join(str(i) for i in range(top) if i not in seen))


if __name__ == "__main__":
    if sys.argv[1] == "send":
        n = send(sys.argv[2], float(sys.argv[3]), float(sys.argv[4]),
                 *(int(a) for a in sys.argv[5:]))
        print(n)
    else:
        recv(int(sys.argv[2]), float(sys.argv[3]))
