# SPDX-License-Identifier: GPL-2.0
"""Self-check, one iperf3 run, counters and metadata.

From the self-check to the end of the flows the harness reads counters in
its own process (/proc/thread-self/net of the namespace, sock_diag for
the sockets) and starts only the programs that do the work (ping, iperf3,
tc): in the VM every program started is a few dozen 9p requests to the
host, during which the virtual clock runs on at the host's pace.
"""

import json
import math
import os
import re
import subprocess
import time

from .castate import CA_PERIOD, CaSampler
from .paths import EMULATED_REAL, hang_limit
from .scenario import ACCESS_RATE_BPS
from .host import local_argv, netns, proc_net, program_env, run

BLAST = os.path.join(os.path.dirname(os.path.abspath(__file__)), "udp.py")
# (udp.py also counts datagrams and names the missing ones: burst-loss test.)
RTT_TOLERANCE = 0.02
# On the real clock of an emulated guest the emulation adds 0.7-4.2 ms to
# an idle ping (its timers fire late; never early): the self-check allows
# this much more above the expected RTT there, none below it.
RTT_SLACK_MS = 4.0
RATE_TOLERANCE = 0.10
RATE_PACKETS = 100      # frames the rate test counts at least


class SelfCheckError(RuntimeError):
    pass


CPU_BOUND = 0.5     # a run whose CPU was busier measured the CPU


def cpu_times(path="/proc/stat", now=None):
    """(idle seconds summed over the online CPUs, their number, the
    monotonic time): all namespaces share them, so this is the whole
    machine's load.  With the tick stopped in idle (NO_HZ, as Debian's
    kernels) /proc/stat's idle and iowait are measured, but its user and
    system are ticks sampled at HZ, which a thread woken on the tick's
    grid (castate's sampler) can dodge or fill: busy time is the elapsed
    time less idle."""
    with open(path) as f:
        lines = f.read().splitlines()
    fields = [int(x) for x in lines[0].split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # + iowait
    cpus = sum(1 for ln in lines[1:] if re.match(r"cpu\d", ln))
    return (idle / os.sysconf("SC_CLK_TCK"), cpus or 1,
            time.monotonic() if now is None else now)


def cpu_use(before, after):
    """The share of CPU time the machine was busy between two
    cpu_times(), and whether that makes the run CPU-bound."""
    span = (after[2] - before[2]) * after[1]
    busy = span - (after[0] - before[0])
    share = min(1.0, max(0.0, busy / span)) if span > 0 else 0.0
    return {"busy_share": round(share, 4), "cpus": after[1],
            "cpu_bound": share > CPU_BOUND}


def nstat(topo, ns):
    """All TCP/IP MIB counters of a namespace (fresh, so absolute)."""
    return parse_mib(proc_net(ns, "netstat") + proc_net(ns, "snmp"))


def parse_mib(text):
    """/proc/net/netstat or snmp text as {"TcpExtTCPTimeouts": n, ...},
    the names nstat prints."""
    counters = {}
    lines = text.splitlines()
    for head, vals in zip(lines[0::2], lines[1::2]):
        names, values = head.split(), vals.split()
        prefix = names[0].rstrip(":")
        for n, v in zip(names[1:], values[1:]):
            counters[prefix + n] = int(v)
    return counters


def ping_count(sc, miss=1e-3, least=5, most=10):
    """Pings enough that the chance that every one takes a reordering
    band's longer path (so that the minimum is not the base RTT) is below
    @miss; at least @least (a loss burst), at most @most."""
    late = 1 - (1 - sc.fwd.reorder.fraction * sc.fwd.reorder.active) * \
        (1 - sc.ack.reorder.fraction * sc.ack.reorder.active)
    if late <= 0:
        return least
    if late >= 1:
        return most
    return min(most, max(least, math.ceil(math.log(miss) / math.log(late))))


def ping_rtt(topo, i=0, count=None):
    count = count or ping_count(topo.sc)
    wait = max(5, int(topo.sc.base_rtt_ms() / 1000 * 2) + 1)
    out = run(["ping", "-n", "-q", "-c", str(count), "-i", "0.2", "-W",
               str(wait), topo.rcv_addr(i)], check=False,
              timeout=120 + wait, ns=topo.snd[i]).stdout
    m = re.search(r"= ([\d.]+)/([\d.]+)/([\d.]+)", out)
    if not m:
        raise SelfCheckError("no ping reply across the path: " + out.strip())
    return float(m.group(1))


def expected_ping_ms(sc, nbytes=98):
    """Base RTT plus the serialisation of one ping at each rate stage."""
    ser = nbytes * 8 * (3 / ACCESS_RATE_BPS + 1 / sc.rate_bps) * 1000
    return sc.base_rtt_ms() + ser


def rx_bytes(text, dev):
    """The bytes @dev received, from /proc/net/dev."""
    for line in text.splitlines()[2:]:
        name, _, fields = line.partition(":")
        if name.strip() == dev:
            return int(fields.split()[0])
    raise RuntimeError("no device %s in /proc/net/dev" % dev)


def link_bytes(topo, ns, dev):
    return rx_bytes(proc_net(ns, "dev"), dev)


def listens(text, port, udp=False):
    """/proc/net/{tcp,udp}[6] shows a socket bound to local @port, and
    for TCP listening (state 0A)."""
    for line in text.splitlines()[1:]:
        f = line.split()
        if len(f) > 3 and f[1].endswith(":%04X" % port) and \
                (udp or f[3] == "0A"):
            return True
    return False


def wait_listening(topo, ns, port, timeout=20, udp=False):
    """iperf3 -s (or a UDP receiver) takes a while to start on a loaded
    emulated machine.  iperf3 listens on IPv6 (dual stack) where it can."""
    deadline = time.monotonic() + hang_limit(timeout)
    while time.monotonic() < deadline:
        if listening(ns, port, udp):
            return
        time.sleep(0.05)
    raise RuntimeError("iperf3 server in %s did not listen on %d" %
                       (ns, port))


def listening(ns, port, udp=False):
    kind = "udp" if udp else "tcp"
    for name in (kind, kind + "6"):
        try:
            if listens(proc_net(ns, name), port, udp):
                return True
        except FileNotFoundError:       # a kernel without IPv6
            pass
    return False


def spawn(ns, cmd, **kw):
    """A program started in namespace @ns directly, without `ip netns
    exec` (one program fewer)."""
    kw.setdefault("env", program_env(cmd))
    with netns(ns):
        return subprocess.Popen(local_argv(cmd), **kw)


def rate_window(sc, packets=RATE_PACKETS, least=0.5, most=2.0):
    """Seconds in which the bottleneck sends @packets full frames: the
    counters' granularity (a frame at each end) is then within 2 %."""
    return min(most, max(least, packets * 1514 * 8 / sc.rate_bps))


def bottleneck_rate(topo, seconds=None):
    """Offer 1.5x the rate toward R2 (iperf3 UDP, 1472-byte datagrams: a
    python sender fell behind on a loaded host); R2's receive
    counter over a steady window gives the rate the bottleneck delivers,
    at layer 2.  R1's receive counter over the same window proves the
    offered load really exceeded the rate.  Once traffic reaches R2 the
    queue is already growing at half the rate: a short wait settles it."""
    sc = topo.sc
    seconds = seconds or rate_window(sc)
    rate = min(sc.rate_bps * 1.5, ACCESS_RATE_BPS * 0.98)
    srv = spawn(topo.r2, ["iperf3", "-s", "-1", "-p", "5299"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_listening(topo, topo.r2, 5299)
    gen = spawn(topo.snd[0], ["iperf3", "-c", "10.0.0.2", "-p", "5299",
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
        time.sleep(0.2)                  # let the bottleneck queue fill
        o0, b0, t0 = (link_bytes(topo, topo.r1, "s0"),
                      link_bytes(topo, topo.r2, "b"), time.monotonic())
        time.sleep(seconds)
        o1, b1, t1 = (link_bytes(topo, topo.r1, "s0"),
                      link_bytes(topo, topo.r2, "b"), time.monotonic())
    finally:
        for p in (gen, srv):
            p.kill()
            p.wait()
    check_offered(sc, (o1 - o0) * 8 / (t1 - t0))
    return (b1 - b0) * 8 / (t1 - t0)


def check_offered(sc, offered):
    """SelfCheckError unless the load reaching R1 exceeded the bottleneck
    rate by 10 %.  No load can exceed the access links' rate: a bottleneck
    as fast as they are (seed 001's 10 Mbit/s, as in the seed) needs the
    load at 95 % of it, and the test then shows the path's rate, the
    access links' as much as the bottleneck's."""
    need = min(1.1 * sc.rate_bps, 0.95 * ACCESS_RATE_BPS)
    if offered < need:
        raise SelfCheckError("load generator offered only %.0f bit/s, "
                             "cannot test a %.0f bit/s bottleneck (needs "
                             "%.0f)" % (offered, sc.rate_bps, need))


def backlog(qdiscs):
    """(packets, bytes) the fullest of the bottleneck's qdiscs holds, as
    `tc -s -j qdisc show` gives them (the root counts its children's)."""
    return (max((q.get("qlen", 0) for q in qdiscs), default=0),
            max((q.get("backlog", 0) for q in qdiscs), default=0))


def queued(topo):
    """Packets still held by the bottleneck's qdiscs (every level)."""
    return backlog(bottleneck_json(topo))[0]


def wait_drained(topo, timeout=30.0):
    """After the rate test: the bottleneck queue empty (no packet, no
    byte), then one base RTT for the delay stages to deliver what they
    hold, so the flows start on an idle path.  The queue drains at the
    bottleneck's rate: the next look comes when it should be empty.
    Returns the seconds it took."""
    t0 = time.monotonic()
    while True:
        packets, nbytes = backlog(bottleneck_json(topo))
        if not packets and not nbytes:
            break
        if time.monotonic() - t0 > hang_limit(timeout):
            raise SelfCheckError("the bottleneck queue still held %d "
                                 "packets (%d bytes) %.0f s after the rate "
                                 "test" % (packets, nbytes, timeout))
        time.sleep(max(0.05, nbytes * 8 / topo.sc.rate_bps))
    time.sleep(topo.sc.base_rtt_ms() / 1000)
    return round(time.monotonic() - t0, 3)


def check_idle(qdiscs):
    """SelfCheckError unless the bottleneck holds nothing (the flows of a
    point start on an empty queue)."""
    packets, nbytes = backlog(qdiscs)
    if packets or nbytes:
        raise SelfCheckError("%d packets (%d bytes) queued at the bottleneck "
                             "as the flows were to start" % (packets, nbytes))


def rtt_slack_ms():
    """What an emulated real clock may add to the idle RTT."""
    return RTT_SLACK_MS if EMULATED_REAL else 0.0


def self_check(topo, rtt_tolerance=RTT_TOLERANCE, slack_ms=None):
    """Idle RTT within @rtt_tolerance (2 %), and up to @slack_ms more
    above it (rtt_slack_ms()), and bottleneck rate within 10 %, or fail;
    then the path is left idle."""
    sc = topo.sc
    slack = rtt_slack_ms() if slack_ms is None else slack_ms
    rtt = ping_rtt(topo)
    want_rtt = expected_ping_ms(sc)
    off = rtt - want_rtt
    if off > rtt_tolerance * want_rtt + slack or \
            -off > rtt_tolerance * want_rtt:
        raise SelfCheckError("idle RTT %.2f ms, expected %.2f ms (+-%g%%%s)"
                             % (rtt, want_rtt, rtt_tolerance * 100,
                                ", +%g ms on an emulated real clock" % slack
                                if slack else ""))
    rate = bottleneck_rate(topo)
    res = {"rtt_ms": rtt, "rtt_expected_ms": round(want_rtt, 3),
           "rtt_tolerance": rtt_tolerance, "rtt_slack_ms": slack,
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
    """One row per connection of `ss -tinH`, keyed by the local port.
    castate.ss_row makes the same rows from sock_diag: the two change
    together."""
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


def iperf3_run(topo, cc, duration, i=0, port=5201, bottleneck=True,
               ca_period=CA_PERIOD):
    """One flow, pair i: returns iperf3's JSON and the ss time series
    (parse_ss's rows of the data flow once a second, from sock_diag:
    castate.ss_row).  The JSON gains "ca": the data flow's time in each
    congestion-avoidance state, sampled every ca_period s
    (castate.ca_summary) by the same thread and dumps.  With
    bottleneck, it also holds the bytes the bottleneck sent and the
    packets it dropped meanwhile (flows alone on the path only)."""
    dst = topo.rcv_addr(i)
    server = spawn(topo.rcv[i], ["iperf3", "-s", "-1", "-p", str(port)],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_listening(topo, topo.rcv[i], port)
    if bottleneck:
        sent0, drop0 = bottleneck_stats(topo)
    castate = CaSampler(topo.snd[i], dst, port, ca_period)
    castate.start()
    try:
        r = run(["iperf3", "-c", dst, "-p", str(port), "-C", cc, "-t",
                 str(duration), "-J", "-i", "1", "--connect-timeout",
                 "30000"], check=False, timeout=duration * 3 + 120,
                ns=topo.snd[i])
    finally:
        castate.finish()
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
    return res, data_flow(castate.ss_rows)


def bottleneck_json(topo):
    """`tc -s -j qdisc show` of the bottleneck (R1's egress b)."""
    out = run(["tc", "-s", "-j", "qdisc", "show", "dev", "b"],
              ns=topo.r1).stdout
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
