# SPDX-License-Identifier: GPL-2.0
"""Self-check, one iperf3 run, counters and metadata."""

import json
import os
import re
import subprocess
import threading
import time

from .castate import CA_PERIOD, CaSampler
from .paths import hang_limit
from .scenario import ACCESS_RATE_BPS

BLAST = os.path.join(os.path.dirname(os.path.abspath(__file__)), "udp.py")
# (udp.py also counts datagrams and names the missing ones: burst-loss test.)
RTT_TOLERANCE = 0.02
RATE_TOLERANCE = 0.10


class SelfCheckError(RuntimeError):
    pass


CPU_BOUND = 0.5     # a run whose CPU was busier measured the CPU


def cpu_ticks(path="/proc/stat"):
    """(busy, total) jiffies of every CPU of this machine: all namespaces
    share them, so this is the whole guest's load."""
    with open(path) as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # + iowait
    total = sum(fields[:8])                 # guest time is inside user
    return total - idle, total


def cpu_use(before, after):
    """The share of CPU time the machine was busy between two cpu_ticks(),
    and whether that makes the run CPU-bound."""
    busy, total = after[0] - before[0], after[1] - before[1]
    share = busy / total if total > 0 else 0.0
    return {"busy_share": round(share, 4), "cpus": os.cpu_count(),
            "cpu_bound": share > CPU_BOUND}


def nstat(topo, ns):
    """All TCP/IP MIB counters of a namespace (fresh, so absolute)."""
    text = topo.ex(ns, ["cat", "/proc/net/netstat", "/proc/net/snmp"]).stdout
    counters = {}
    lines = text.splitlines()
    for head, vals in zip(lines[0::2], lines[1::2]):
        names, values = head.split(), vals.split()
        prefix = names[0].rstrip(":")
        for n, v in zip(names[1:], values[1:]):
            counters[prefix + n] = int(v)
    return counters


def ping_rtt(topo, i=0, count=10):
    wait = max(5, int(topo.sc.base_rtt_ms() / 1000 * 2) + 1)
    out = topo.ex(topo.snd[i], ["ping", "-n", "-q", "-c", str(count), "-i",
                                "0.2", "-W", str(wait), topo.rcv_addr(i)],
                  check=False, timeout=120 + wait).stdout
    m = re.search(r"= ([\d.]+)/([\d.]+)/([\d.]+)", out)
    if not m:
        raise SelfCheckError("no ping reply across the path: " + out.strip())
    return float(m.group(1))


def expected_ping_ms(sc, nbytes=98):
    """Base RTT plus the serialisation of one ping at each rate stage."""
    ser = nbytes * 8 * (3 / ACCESS_RATE_BPS + 1 / sc.rate_bps) * 1000
    return sc.base_rtt_ms() + ser


def link_bytes(topo, ns, dev):
    return int(topo.ex(ns, ["cat", "/sys/class/net/%s/statistics/rx_bytes"
                            % dev]).stdout)


def wait_listening(topo, ns, port, timeout=20, udp=False):
    """iperf3 -s (or a UDP receiver) takes a while to start on a loaded
    emulated machine."""
    deadline = time.monotonic() + hang_limit(timeout)
    kind = "u" if udp else "t"
    while time.monotonic() < deadline:
        out = topo.ex(ns, ["ss", "-Hl%sn" % kind, "sport",
                           "= :%d" % port]).stdout
        if out.strip():
            return
        time.sleep(0.1)
    raise RuntimeError("iperf3 server in %s did not listen on %d" %
                       (ns, port))


def bottleneck_rate(topo, seconds=2.0):
    """Offer 1.5x the rate toward R2 (iperf3 UDP, 1472-byte datagrams: a
    python sender fell behind on a loaded host); R2's receive
    counter over a steady window gives the rate the bottleneck delivers,
    at layer 2.  R1's receive counter over the same window proves the
    offered load really exceeded the rate."""
    sc = topo.sc
    rate = min(sc.rate_bps * 1.5, ACCESS_RATE_BPS * 0.98)
    srv = topo.popen(topo.r2, ["iperf3", "-s", "-1", "-p", "5299"],
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_listening(topo, topo.r2, 5299)
    gen = topo.popen(topo.snd[0], ["iperf3", "-c", "10.0.0.2", "-p", "5299",
                                   "-u", "-l", "1472", "-b",
                                   "%d" % (rate * 1472 / 1514), "-t", "600"],
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        start = link_bytes(topo, topo.r2, "b")
        deadline = time.monotonic() + hang_limit(30)
        while link_bytes(topo, topo.r2, "b") - start < 20000:
            if time.monotonic() > deadline or gen.poll() is not None:
                raise SelfCheckError("no traffic reached R2 in 30 s")
            time.sleep(0.1)
        time.sleep(0.5)                  # let the bottleneck queue fill
        o0, b0, t0 = (link_bytes(topo, topo.r1, "s0"),
                      link_bytes(topo, topo.r2, "b"), time.monotonic())
        time.sleep(seconds)
        o1, b1, t1 = (link_bytes(topo, topo.r1, "s0"),
                      link_bytes(topo, topo.r2, "b"), time.monotonic())
    finally:
        for p in (gen, srv):
            p.kill()
            p.wait()
    offered = (o1 - o0) * 8 / (t1 - t0)
    if offered < 1.1 * sc.rate_bps:
        raise SelfCheckError("load generator offered only %.0f bit/s, "
                             "cannot test a %.0f bit/s bottleneck" %
                             (offered, sc.rate_bps))
    return (b1 - b0) * 8 / (t1 - t0)


def queued(topo):
    """Packets still held by the bottleneck's qdiscs (every level)."""
    return sum(q.get("qlen", 0) for q in bottleneck_json(topo))


def wait_drained(topo, timeout=30.0):
    """After the rate test: the bottleneck queue empty, then one base RTT
    for the delay stages to deliver what they hold, so the flows start
    on an idle path.  Returns the seconds it took."""
    t0 = time.monotonic()
    while queued(topo):
        if time.monotonic() - t0 > hang_limit(timeout):
            raise SelfCheckError("the bottleneck queue still held %d "
                                 "packets %.0f s after the rate test" %
                                 (queued(topo), timeout))
        time.sleep(0.05)
    time.sleep(topo.sc.base_rtt_ms() / 1000)
    return round(time.monotonic() - t0, 3)


def self_check(topo):
    """Idle RTT within 2 % and bottleneck rate within 10 %, or fail; then
    the path is left idle."""
    sc = topo.sc
    rtt = ping_rtt(topo)
    want_rtt = expected_ping_ms(sc)
    if abs(rtt - want_rtt) > RTT_TOLERANCE * want_rtt:
        raise SelfCheckError("idle RTT %.2f ms, expected %.2f ms (+-2%%)" %
                             (rtt, want_rtt))
    rate = bottleneck_rate(topo)
    res = {"rtt_ms": rtt, "rtt_expected_ms": round(want_rtt, 3),
           "rate_bps": round(rate), "rate_expected_bps": sc.rate_bps}
    if abs(rate - sc.rate_bps) > RATE_TOLERANCE * sc.rate_bps:
        raise SelfCheckError("bottleneck rate %.0f bit/s, expected %.0f "
                             "(+-10%%)" % (rate, sc.rate_bps))
    res["drain_s"] = wait_drained(topo)
    return res


SS_FIELDS = {"cwnd": r"\bcwnd:(\d+)", "ssthresh": r"\bssthresh:(\d+)",
             "rtt_ms": r"\brtt:([\d.]+)/", "bytes_acked": r"bytes_acked:(\d+)",
             "bytes_sent": r"bytes_sent:(\d+)",
             "bytes_retrans": r"bytes_retrans:(\d+)",
             "retrans_out": r"\bretrans:(\d+)/",
             "retrans_total": r"\bretrans:\d+/(\d+)",
             "sacked": r"\bsacked:(\d+)",
             "reordering": r"\breordering:(\d+)",
             "lost": r"\blost:(\d+)",
             "rto_ms": r"\brto:([\d.]+)",
             "backoff": r"\bbackoff:(\d+)",
             "unacked": r"\bunacked:(\d+)",
             # Our modules report through the DCTCP slot of get_info
             # (rn, r, esack: see each module's docs for the meaning).
             "dctcp_ce_state": r"dctcp:\(ce_state:(\d+)",
             "dctcp_alpha": r"dctcp:\([^)]*\balpha:(\d+)",
             "dctcp_ab_ecn": r"dctcp:\([^)]*\bab_ecn:(\d+)",
             "dctcp_ab_tot": r"dctcp:\([^)]*\bab_tot:(\d+)"}


def parse_ss(text):
    """One row per connection of `ss -tinH`, keyed by the local port."""
    rows = []
    for block in re.split(r"\n(?=\S)", text):
        m = re.search(r":(\d+)\s+\S+:\d+", block)
        if not m:
            continue
        row = {"sport": int(m.group(1))}
        for k, pat in SS_FIELDS.items():
            m = re.search(pat, block)
            if m:
                row[k] = float(m.group(1)) if "." in m.group(1) \
                    else int(m.group(1))
        rows.append(row)
    return rows


def data_flow(rows):
    """The samples of the connection that moved the most data (iperf3's
    control connection shares the port pair's destination)."""
    if not rows:
        return []
    top = max(rows, key=lambda r: r.get("bytes_acked", 0))["sport"]
    return [r for r in rows if r["sport"] == top]


def last_cc_row(rows):
    """The last sample that carries the congestion control's counters
    (the dctcp slot, include/satnet/cc_info.h).  inet_diag asks the
    congestion control only below TIME_WAIT: once the peer has closed
    first (CLOSE_WAIT, LAST_ACK), ss still shows the socket, without them."""
    return next((r for r in reversed(rows) if "dctcp_ce_state" in r), {})


class Sampler(threading.Thread):
    """Polls `ss -tin` in the sender namespace: cwnd/ssthresh over time.
    One shell loop per run, so that sampling costs one `ss` a period and
    no process spawning in the harness (it matters under emulation)."""

    def __init__(self, topo, ns, dst, period=1.0):
        super().__init__(daemon=True)
        self.rows = []
        loop = "while :; do echo @$(date +%%s.%%N); ss -tinH dst %s; " \
            "sleep %g; done" % (dst, period)
        self.proc = topo.popen(ns, ["sh", "-c", loop], text=True,
                               stdout=subprocess.PIPE)

    def run(self):
        t0, now, block = None, None, []
        for line in self.proc.stdout:
            if line.startswith("@"):
                self.flush(now, block)
                now = float(line[1:])
                t0 = now if t0 is None else t0
                now, block = round(now - t0, 3), []
            else:
                block.append(line)
        self.flush(now, block)

    def flush(self, now, block):
        for row in parse_ss("".join(block)) if now is not None else []:
            row["t"] = now
            self.rows.append(row)

    def finish(self):
        self.proc.kill()
        self.proc.wait()
        self.join()


def iperf3_run(topo, cc, duration, i=0, port=5201, bottleneck=True,
               ca_period=CA_PERIOD):
    """One flow, pair i: returns iperf3's JSON and the ss time series.
    The JSON gains "ca": the data flow's time in each congestion-avoidance
    state, sampled every ca_period s (castate.ca_summary).  With
    bottleneck, it also holds the bytes the bottleneck sent and the
    packets it dropped meanwhile (flows alone on the path only)."""
    dst = topo.rcv_addr(i)
    server = topo.popen(topo.rcv[i], ["iperf3", "-s", "-1", "-p", str(port)],
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_listening(topo, topo.rcv[i], port)
    if bottleneck:
        sent0, drop0 = bottleneck_stats(topo)
    castate = CaSampler(topo.snd[i], dst, port, ca_period)
    sampler = Sampler(topo, topo.snd[i], dst)
    sampler.start()
    castate.start()
    try:
        r = topo.ex(topo.snd[i], ["iperf3", "-c", dst, "-p", str(port), "-C",
                                  cc, "-t", str(duration), "-J", "-i", "1",
                                  "--connect-timeout", "30000"],
                    check=False, timeout=duration * 3 + 120)
    finally:
        castate.finish()
        sampler.finish()
        server.kill()
        server.wait()
    try:
        res = json.loads(r.stdout)
    except json.JSONDecodeError:
        raise RuntimeError("iperf3 gave no JSON: " + r.stderr.strip()) \
            from None
    if "error" in res:
        raise RuntimeError("iperf3: " + res["error"])
    if bottleneck:
        sent1, drop1 = bottleneck_stats(topo)
        res["bottleneck_sent_bytes"] = sent1 - sent0
        res["bottleneck_dropped"] = drop1 - drop0
    res["ca"] = castate.summary(data_flow(castate.rows))
    return res, data_flow(sampler.rows)


def bottleneck_json(topo):
    """`tc -s -j qdisc show` of the bottleneck (R1's egress b)."""
    out = topo.ex(topo.r1, ["tc", "-s", "-j", "qdisc", "show", "dev",
                            "b"]).stdout
    return json.loads(out or "[]")


def bottleneck_stats(topo):
    """Bytes R1's bottleneck qdisc has sent (layer 2, all packets) and
    packets it has dropped (the root counts its queue's drops)."""
    root = [q for q in bottleneck_json(topo) if q.get("root")][0]
    return root["bytes"], root["drops"]


def goodput_bps(res, duration):
    """Bytes the receiving application got over the receiver's own
    elapsed time: iperf3 stops sending after -t seconds, and what was
    still queued on the path arrives after that."""
    got = res["end"]["sum_received"]
    secs = got.get("seconds") or 0
    return got["bytes"] * 8 / max(secs, duration)


def intervals(res):
    """iperf3's per-second intervals: rate, cwnd, RTT, retransmissions."""
    return [{"t": round(iv["sum"]["end"], 2),
             "bps": iv["sum"]["bits_per_second"],
             "cwnd": iv["streams"][0].get("snd_cwnd"),
             "rtt_us": iv["streams"][0].get("rtt"),
             "retransmits": iv["sum"].get("retransmits")}
            for iv in res.get("intervals", [])]


def sysctl_keys(topo):
    """The sysctls a record reads back: the profile's, the scenario's, and
    those that decide loss recovery whatever the profile says."""
    keys = set(topo.sc.sysctl)
    for p in topo.pair_profiles:
        keys |= set(p.sender) | set(p.receiver)
    return sorted(keys |
                  {"net.ipv4.tcp_recovery", "net.ipv4.tcp_dsack",
                   "net.ipv4.tcp_ecn", "net.ipv4.tcp_frto",
                   "net.ipv4.tcp_sack", "net.ipv4.tcp_timestamps",
                   "net.ipv4.tcp_reordering", "net.ipv4.tcp_max_reordering",
                   "net.ipv4.tcp_congestion_control"})
