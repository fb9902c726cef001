# SPDX-License-Identifier: GPL-2.0
"""Integration tests of the ESACK congestion module (tcp_esack/,
docs/esack.md), with the rules of seed 002 Fig. 1 checked per recovery.

Run inside tools/vm-run (make test), as root, after `make modules`.

 snd0 --eth0-- [R1] ===1.5 Mbit/s, pfifo 50=== [R2] --50 ms, BER--> rcv0
   route: mtu lock 512 (the seed's 512-byte packets)
          ssthresh lock 70 (the seed's initial ssthresh; it reaches the
          socket through the tcp_metrics cache, so the sender saves
          metrics and one short connection primes the cache)
 scenarios/leo-ber.toml (seed 002, Results and Discussion);
 profile "sack" (no RACK, no DSACK, no F-RTO): Linux reno there is the
 seed's SACK baseline.

The tests read cwnd per ACK from the tcp:tcp_probe tracepoint and the
recovery states from tcp:tcp_cong_state_set, in a private tracefs
instance, and ESACK's counters from `ss -ti` (dctcp:(...) fields).

The experiment itself (goodput of Fig. 1's variants, with their cwnd
series) is `satnet run s002-fig1`.
"""

import json
import os
import re
import subprocess
import sys
import threading
import time

import pytest

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(TOP, "tests"))

from satnet import castate  # noqa: E402
from satnet.console import BAD  # noqa: E402
from satnet.kmod import get_param, insmod, rmmod, set_param  # noqa: E402
from satnet.paths import ko  # noqa: E402

KO = os.environ.get("ESACK_KO", ko("tcp_esack"))
SYSMOD = "/sys/module/tcp_esack"
TRACING = "/sys/kernel/tracing"
INIT_SSTHRESH = 70
MTU = 512
DIAG = re.compile(r"dctcp:\(ce_state:(\d+),alpha:(\d+),ab_ecn:(\d+),"
                  r"ab_tot:(\d+)\)")


def sh(cmd, check=True, timeout=60):
    r = subprocess.run(cmd, shell=True, capture_output=True, text=True,
                       timeout=timeout)
    if check and r.returncode:
        raise RuntimeError("%s: %s" % (cmd, r.stderr.strip()))
    return r


def counters(st, a1, a2, b1):
    """ESACK's counters from the DCTCP slot (docs/esack.md, Visibility)."""
    return {"secwnd": st % 10, "B2": st // 10, "A1": a1, "A2": a2, "B1": b1}


def diag(text):
    """ESACK's counters from `ss -ti`'s text."""
    m = DIAG.search(text)
    return counters(*map(int, m.groups())) if m else None


def diag_row(row):
    """ESACK's counters from a sampler's row (castate.ss_row)."""
    if "dctcp_ce_state" not in row:
        return None
    return counters(*(row["dctcp_" + k] for k in ("ce_state", "alpha",
                                                   "ab_ecn", "ab_tot")))


def refcnt():
    try:
        return int(open(SYSMOD + "/refcnt").read())
    except OSError:
        return None


def unload(timeout=20):
    """rmmod once no socket holds the module (netns teardown is async)."""
    rmmod("tcp_esack", wait=timeout, check=True)


# ---- tracing: per-ACK cwnd and recovery states ----

class Trace:
    """tcp_probe + tcp_cong_state_set in a private tracefs instance,
    filtered by destination port (the sender's view of each flow)."""

    EVENTS = ("tcp_probe", "tcp_cong_state_set")

    def __init__(self, ports, kb=16384):
        self.ports = list(ports)
        self.kb = kb
        self.dir = "%s/instances/esack%d" % (TRACING, os.getpid())

    def _w(self, rel, val):
        with open(os.path.join(self.dir, rel), "w") as f:
            f.write(val)

    def __enter__(self):
        os.mkdir(self.dir)
        try:
            self._w("buffer_size_kb", str(self.kb))
            self._w("trace_clock", "global")    # one clock for all CPUs
            flt = " || ".join("dport == %d" % p for p in self.ports)
            for ev in self.EVENTS:
                self._w("events/tcp/%s/filter" % ev, flt)
                self._w("events/tcp/%s/enable" % ev, "1")
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc):
        for ev in self.EVENTS:
            try:
                self._w("events/tcp/%s/enable" % ev, "0")
            except OSError:
                pass
        os.rmdir(self.dir)

    @property
    def marker(self):
        return os.path.join(self.dir, "trace_marker")

    def read(self):
        with open(os.path.join(self.dir, "trace")) as f:
            text = f.read()
        flows = parse_trace(text)
        flows["marks"] = {m.group(2): float(m.group(1)) for m in re.finditer(
            r"\s([\d.]+): tracing_mark_write: (.*)", text)}
        return flows


PROBE = re.compile(r"\s([\d.]+): tcp_probe: .*?dest=[\d.]+:(\d+) .*?"
                   r"data_len=(\d+) snd_nxt=(0x[0-9a-f]+) "
                   r"snd_una=(0x[0-9a-f]+) snd_cwnd=(\d+) ssthresh=(\d+) "
                   r"snd_wnd=\d+ srtt=(\d+)")
STATE = re.compile(r"\s([\d.]+): tcp_cong_state_set: .*?sport=(\d+) "
                   r"dport=(\d+) .*cong_state=(\d+)")


def parse_trace(text):
    """{dport: {"sport": the data connection's port, "probe": [(t, cwnd,
    ssthresh, una, nxt, srtt_us)], "state": [(t, state)], "bytes"}}.
    iperf3's control connection shares the port; the source port that
    moved the most data wins."""
    flows = {}
    for line in text.splitlines():
        m = PROBE.search(line)
        if m:
            t, dport, _, nxt, una, cwnd, ssth, srtt = m.groups()
            sport = int(re.search(r"src=[\d.]+:(\d+)", line).group(1))
            f = flows.setdefault((int(dport), sport), {"probe": [],
                                                       "state": []})
            f["probe"].append((float(t), int(cwnd), int(ssth),
                               int(una, 16), int(nxt, 16), int(srtt)))
            continue
        m = STATE.search(line)
        if m:
            t, sport, dport, st = m.groups()
            f = flows.setdefault((int(dport), int(sport)), {"probe": [],
                                                            "state": []})
            f["state"].append((float(t), int(st)))
    out = {}
    for (dport, sport), f in flows.items():
        f["bytes"] = (f["probe"][-1][3] - f["probe"][0][3]) & 0xffffffff \
            if f["probe"] else 0
        best = out.get(dport)
        if best is None or f["bytes"] > best["bytes"]:
            out[dport] = dict(f, sport=sport)
    return out


def episodes(flow):
    """Loss episodes: from leaving Open/Disorder until back.  cwnd before
    is the last per-ACK sample before the start, cwnd/ssthresh after the
    first sample after the end (the post-recovery cwnd).  When the ACK
    that ends a recovery starts the next one (a loss just after the
    recovery point), no sample shows the end: ssthresh is then the one
    seen during the recovery (tcp_probe reports it exactly there), cwnd
    after it is that ssthresh (tcp_end_cwnd_reduction), and the next
    episode starts from that cwnd."""
    probe, eps, cur = flow["probe"], [], None
    for t, st in flow["state"]:
        if st in (3, 4) and cur is None:
            cur = {"t": t, "loss": st == 4, "state": st}
        elif cur is not None and st in (3, 4):
            cur["loss"] = cur["loss"] or st == 4
        elif cur is not None and st in (0, 1):
            cur["end"] = t
            eps.append(cur)
            cur = None
    chained_cwnd = None
    for n, e in enumerate(eps):
        before = [p for p in probe if p[0] < e["t"]]
        during = [p for p in probe if e["t"] < p[0] < e["end"]]
        after = [p for p in probe if p[0] > e["end"]]
        nxt = eps[n + 1]["t"] if n + 1 < len(eps) else None
        e["chained"] = nxt is not None and (not after or after[0][0] > nxt)
        cwnd_before, chained_cwnd = chained_cwnd, None
        if not before or (e["chained"] and not during) or \
                (not e["chained"] and not after):
            e["ratio"] = None
            continue
        e["cwnd_before"] = cwnd_before or before[-1][1]
        e["ssthresh_before"] = before[-1][2]
        e["una"] = before[-1][3]
        e["nxt"] = before[-1][4]
        if e["chained"]:
            e["ssthresh_after"] = e["cwnd_after"] = during[-1][2]
            chained_cwnd = e["cwnd_after"]
        else:
            e["cwnd_after"] = after[0][1]
            e["ssthresh_after"] = after[0][2]
        e["ratio"] = e["cwnd_after"] / e["cwnd_before"]
    return [e for e in eps if e["ratio"] is not None]


# ---- the seed 002 LEO path ----

def leo_scenario(ber):
    from satnet.scenario import load_scenario
    return load_scenario("leo-ber", {"forward.ber": ber, "ack.ber": ber})


def prime_ssthresh(topo, i=0, port=5299):
    """Seed 002's initial ssthresh (70) and 512-byte packets.  A route's
    ssthresh metric reaches new sockets only through the tcp_metrics
    cache (tcp_init_metrics), so the sender saves metrics and one short
    connection creates the cache entry; "lock" keeps it at 70."""
    snd, rcv, dst = topo.snd[i], topo.rcv[i], topo.rcv_addr(i)
    srv = topo.popen(rcv, ["iperf3", "-s", "-p", str(port)],
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    script = ("sysctl -q -w net.ipv4.tcp_no_metrics_save=0 "
              "net.ipv4.tcp_no_ssthresh_metrics_save=0 || exit 1; "
              "ip route replace default via 10.1.%d.254 dev eth0 mtu lock %d "
              "ssthresh lock %d || exit 1; " % (i, MTU, INIT_SSTHRESH) +
              "for n in $(seq 50); do iperf3 -c %s -p %d -n 20K "
              ">/dev/null 2>&1 && break; sleep 0.3; done; "
              # the entry appears when the closing handshake completes
              "for n in $(seq 50); do ip tcp_metrics show %s 2>/dev/null | "
              "grep -q ssthresh && break; sleep 0.2; done; "
              "ip tcp_metrics show %s" % (dst, port, dst, dst))
    try:
        out = topo.ex(snd, ["sh", "-c", script], timeout=120, check=False)
    finally:
        srv.kill()
        srv.wait()
    assert "ssthresh %d" % INIT_SSTHRESH in out.stdout, \
        "priming failed (%d): %s %s" % (out.returncode, out.stdout,
                                         out.stderr)


SINK = """
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("", int(sys.argv[1])))
s.listen(8)
for _ in range(int(sys.argv[2])):
    c, _ = s.accept()
    while c.recv(65536):
        pass
    c.close()
"""

CONNECT = """
import socket, time
def connect(addr, port):
    for _ in range(100):
        try:
            return socket.create_connection((addr, port), timeout=30)
        except ConnectionRefusedError:
            time.sleep(0.2)
    raise RuntimeError("nobody listens on %s:%d" % (addr, port))
"""


class DiagPoller(castate.CaSampler):
    """The data connection's row (castate.ss_row) every @period s from
    the sampler's sock_diag dumps, and ESACK's counters in the last;
    "esack-ss <port> <k>" goes to the trace @marker before the k-th."""

    def __init__(self, ns, dst, port, period=0.5, marker=None):
        super().__init__(ns, dst, port, period=period, ss_period=period)
        self.marker, self.k, self.port = marker, 0, port
        self.last, self.last_k, self.row = None, None, {}

    def sample(self, now, t0):
        if now >= self.ss_due:
            self.k += 1
            if self.marker:
                with open(self.marker, "w") as f:
                    f.write("esack-ss %d %d\n" % (self.port, self.k))
        n = len(self.ss_rows)
        super().sample(now, t0)
        # the data connection is the one with bytes_acked beyond a few KB
        for row in self.ss_rows[n:]:
            if row.get("bytes_acked", 0) > 100000:
                self.row = row
                d = diag_row(row)
                if d:
                    self.last, self.last_k = d, self.k


def wait_listen(topo, ns, port, timeout=30):
    """Servers start slowly under emulation: wait for the socket."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        out = topo.ex(ns, ["ss", "-ltnH", "sport = :%d" % port]).stdout
        if out.strip():
            return
        time.sleep(0.2)
    raise RuntimeError("nothing listens on port %d in %s" % (port, ns))


def run_flow(topo, cc, port, duration, i=0, during=None, marker=None,
             period=0.5):
    """One iperf3 flow; returns iperf3's JSON and the DiagPoller (which
    writes "esack-ss <port> <k>" to the trace marker before its k-th
    sample)."""
    srv = topo.popen(topo.rcv[i], ["iperf3", "-s", "-1", "-p", str(port)],
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_listen(topo, topo.rcv[i], port)
    poll = DiagPoller(topo.snd[i], topo.rcv_addr(i), port, period=period,
                      marker=marker)
    poll.start()
    try:
        cli = topo.popen(topo.snd[i], ["iperf3", "-c", topo.rcv_addr(i),
                                       "-p", str(port), "-C", cc, "-t",
                                       str(duration), "-J",
                                       "--connect-timeout", "30000"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
        if during:
            during(poll)
        out, err = cli.communicate(timeout=duration * 3 + 60)
    finally:
        poll.finish()
        srv.kill()
        srv.wait()
    res = json.loads(out) if out.strip() else {"error": err}
    assert "error" not in res, res.get("error")
    return res, poll


def undo_count(topo, i=0):
    """Reductions the sender's stack undid (one flow per topology)."""
    from satnet import measure
    c = measure.nstat(topo, topo.snd[i])
    return sum(c.get("TcpExt" + k, 0) for k in (
        "TCPFullUndo", "TCPPartialUndo", "TCPLossUndo", "TCPDSACKUndo"))


def fig1(variants, duration, ber):
    """Seed 002 Fig. 1 on leo-ber: variants = [(label, cc, params)].
    Variants with the same module parameters run in parallel."""
    from satnet.scenario import load_profile
    from satnet.topo import Topology

    groups = []
    for v in variants:
        if groups and groups[-1][0][2] == v[2]:
            groups[-1].append(v)
        else:
            groups.append([v])
    out = {}
    for group in groups:
        for k, val in group[0][2].items():
            set_param("tcp_esack", k, val)
        sc = leo_scenario(ber)
        ports = [5201 + n for n in range(len(group))]
        topos = []
        try:
            for n, _ in enumerate(group):
                t = Topology(sc, load_profile(sc.profile))
                t.__enter__()
                topos.append(t)
                prime_ssthresh(t)
            res = [None] * len(group)

            def one(n, marker):
                res[n] = run_flow(topos[n], group[n][1], ports[n], duration,
                                  marker=marker)

            with Trace(ports) as tr:
                th = [threading.Thread(target=one, args=(n, tr.marker))
                      for n in range(len(group))]
                for x in th:
                    x.start()
                for x in th:
                    x.join()
                flows = tr.read()
            undos = [undo_count(t) for t in topos]
        finally:
            for t in topos:
                t.__exit__(None, None, None)
        for n, (label, cc, params) in enumerate(group):
            assert res[n] is not None, "flow %s did not finish" % label
            r, poll = res[n]
            flow = flows.get(ports[n], {"probe": [], "state": [],
                                        "bytes": 0})
            out[label] = {
                "cc": cc, "params": params, "probe": flow["probe"],
                "bytes": flow["bytes"],
                "state": flow["state"], "episodes": episodes(flow),
                "diag": poll.last, "ss_last": poll.row,
                "diag_t": flows["marks"].get("esack-ss %d %s" %
                                             (ports[n], poll.last_k)),
                "undos": undos[n],
                "goodput_bps": r["end"]["sum_received"]["bits_per_second"],
                "retransmits": r["end"]["sum_sent"].get("retransmits"),
            }
    return out


# ---- tests ----


@pytest.fixture(scope="module", autouse=True)
def module_loaded():
    assert os.path.exists(KO), "not built: run `make modules`"
    insmod(KO)
    yield
    if os.path.isdir(SYSMOD):
        set_param("tcp_esack", "first_factor", 60)
        set_param("tcp_esack", "window_span", SPAN)
    unload()


SPAN = 0            # window_span's default: the seed's alternation
MSS = MTU - 52          # IPv4 20 + TCP 20 + timestamps 12: 460 bytes
TOL = 4 * MSS           # una/nxt seen at the previous ACK, not at the hook


def seq_before(a, b):
    return ((a - b) & 0xffffffff) >= 0x80000000


def expected(parity, cwnd, ref=INIT_SSTHRESH, first=60):
    """(rule, ssthresh) of docs/esack.md for an event of that parity."""
    if parity == "odd":
        rule, w = ("A1", cwnd) if cwnd < ref else ("A2", cwnd * first // 100)
    else:
        rule, w = ("B1", cwnd // 2) if cwnd < ref else ("B2", ref // 2)
    return rule, max(w, 2)


def undone(e):
    """The stack undid the reduction (a spurious retransmission seen by
    timestamps): ssthresh is back where it was."""
    return e["ssthresh_after"] >= e["ssthresh_before"] and \
        e["cwnd_after"] >= e["cwnd_before"] - 2


def esack_rules(eps, span=SPAN, undos=0):
    """The rule of docs/esack.md each fast recovery before the first RTO
    should get, matched against the ssthresh it left: a list of (rule,
    cwnd before, ratio, ok).  Near a window boundary (una seen within TOL
    of it) either parity is accepted; an undone episode is no event
    (esack_undo restores the state before it).  An undone A1 looks like a
    kept one, so when the stack undid anything (`undos`) a loss after an
    A1 may be odd too."""
    out, prev = [], None
    for e in eps:
        if e["loss"]:
            break
        una, cwnd = e["una"], e["cwnd_before"]
        if prev is None or prev["parity"] == "even":
            cands = ["odd"]
        elif span == 0 or seq_before(una, (prev["end"] - TOL) & 0xffffffff):
            cands = ["even"]
        elif seq_before(una, (prev["end"] + TOL) & 0xffffffff):
            cands = ["even", "odd"]
        else:
            cands = ["odd"]
        if undos and prev is not None and prev["rule"] == "A1" and \
                "odd" not in cands:
            cands.append("odd")
        got = {p: expected(p, cwnd) for p in cands}
        match = [p for p in cands if got[p][1] == e["ssthresh_after"]]
        if not match and undone(e):
            out.append(("undo", cwnd, e["ratio"], True))
            continue
        if not match:
            out.append((str(got), cwnd, e["ratio"], False))
            continue
        rule, w = got[match[0]]
        out.append((rule, cwnd, e["ratio"],
                    w <= e["cwnd_after"] <= w + 2))
        prev = {"parity": match[0], "rule": rule,
                "end": (e["nxt"] + span * w * MSS) & 0xffffffff}
    return out


def check_esack_episodes(eps, span=SPAN, undos=0):
    """esack_rules(), every episode as expected: [(rule, cwnd, ratio)]."""
    rules = esack_rules(eps, span, undos)
    bad = [(r, e) for r, e in zip(rules, eps) if not r[3]]
    assert not bad, "episodes against the rules: %s" % bad
    return [r[:3] for r in rules]


def ko_imports(path):
    """Symbols a module imports: its undefined symbols (nm -u)."""
    out = sh("nm -u %s" % path).stdout
    return {ln.split()[-1] for ln in out.splitlines() if ln.strip()}


def test_module_has_no_allocations_locks_or_timers():
    """Per-socket state lives in icsk_ca_priv (BUILD_BUG_ON at
    registration); the module calls nothing that could grow state."""
    allowed = {"__fentry__", "__stack_chk_fail", "__x86_return_thunk",
               "memset",
               "module_layout", "kstrtoint", "param_get_int",
               "tcp_register_congestion_control",
               "tcp_unregister_congestion_control", "tcp_reno_cong_avoid",
               "tcp_reno_ssthresh", "tcp_reno_undo_cwnd"}
    # KASAN and UBSAN (the debug kernel) add their checks' entry points
    # (and memset for what KASAN does not inline).
    sanitizers = ("__asan_", "__ubsan_", "__kasan_", "__sanitizer_")
    syms = {s for s in ko_imports(KO) if not s.startswith(sanitizers)}
    assert "tcp_reno_ssthresh" in syms
    assert syms <= allowed, syms - allowed


def test_registered_with_parameters():
    avail = open("/proc/sys/net/ipv4/tcp_available_congestion_control")
    assert "esack" in avail.read().split()
    assert get_param("tcp_esack", "first_factor") == "60"
    assert get_param("tcp_esack", "window_span") == str(SPAN)
    info = sh("modinfo %s" % KO).stdout
    assert "parm:           first_factor:" in info
    assert "parm:           window_span:" in info


@pytest.mark.parametrize("name,bad,good", [
    ("first_factor", ["49", "101", "-60", "abc", "\n"], ["50", "100", "60"]),
    ("window_span", ["-1", "65", "1.5", "x"], ["0", "64", "1"]),
])
def test_bad_parameters_are_rejected(name, bad, good):
    path = "%s/parameters/%s" % (SYSMOD, name)
    for v in bad:
        before = open(path).read()
        with pytest.raises(OSError):
            with open(path, "w") as f:
                f.write(v)
        assert open(path).read() == before, v
    for v in good:
        with open(path, "w") as f:
            f.write(v)
        assert open(path).read().strip() == v


def test_insmod_refuses_bad_parameters():
    unload()
    for arg in ("first_factor=20", "first_factor=101", "window_span=65",
                "window_span=-3", "first_factor=sixty"):
        r = sh("insmod %s %s" % (KO, arg), check=False)
        assert r.returncode != 0, arg
        assert not os.path.isdir(SYSMOD), arg
    sh("insmod %s first_factor=75 window_span=0" % KO)
    assert get_param("tcp_esack", "first_factor") == "75"
    unload()
    insmod(KO)


def wait_refcnt_zero(timeout=20):
    deadline = time.monotonic() + timeout
    while refcnt() != 0 and time.monotonic() < deadline:
        time.sleep(0.2)
    return refcnt()


HOLD = """
import json, socket, struct, sys
socks, info = [], {}
if sys.argv[1] == "one":
    s = socket.socket()
    s.setsockopt(socket.IPPROTO_TCP, 13, b"esack")
    socks = [s]
else:
    lst = socket.socket()
    lst.bind(("127.0.0.1", 0))
    lst.listen(1)
    cli = socket.socket()
    cli.setsockopt(socket.IPPROTO_TCP, 13, b"esack")
    cli.connect(lst.getsockname())
    srv, _ = lst.accept()
    if sys.argv[1] == "pair":
        srv.setsockopt(socket.IPPROTO_TCP, 13, b"esack")
    cli.sendall(b"x" * 100000)
    srv.recv(65536)
    raw = cli.getsockopt(socket.IPPROTO_TCP, 26, 20)
    info = {"port": cli.getsockname()[1],
            "cc_info": list(struct.unpack("HHIII", raw[:16]))}
    socks = [cli, srv, lst]
print("ready " + json.dumps(info), flush=True)
sys.stdin.readline()
for x in socks:
    x.close()
"""


class Holder:
    """Sockets that use esack, held by a helper in a private namespace
    (with loopback up) until the context ends."""

    def __init__(self, mode):
        self.mode = mode
        self.ns = "esack-hold-%d" % os.getpid()

    def __enter__(self):
        sh("ip netns add %s" % self.ns)
        sh("ip -n %s link set lo up" % self.ns)
        self.proc = subprocess.Popen(
            ["ip", "netns", "exec", self.ns, sys.executable, "-c", HOLD,
             self.mode], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("ready "):
            self.__exit__()
            raise RuntimeError("holder failed: %r" % line)
        self.info = json.loads(line[6:])
        return self

    def ss(self):
        return sh("ip netns exec %s ss -tinH sport = :%d" %
                  (self.ns, self.info["port"])).stdout

    def __exit__(self, *exc):
        try:
            self.proc.communicate("\n", timeout=30)
        finally:
            sh("ip netns del %s" % self.ns, check=False)


def test_rmmod_refused_while_a_socket_uses_it():
    """tcp_set_congestion_control takes a module reference per socket
    (bpf_try_module_get); rmmod fails with EBUSY until it is released."""
    assert wait_refcnt_zero() == 0
    with Holder("one"):
        assert refcnt() == 1
        r = sh("rmmod tcp_esack", check=False)
        assert r.returncode != 0 and "in use" in r.stderr, r.stderr
        assert os.path.isdir(SYSMOD)
    assert wait_refcnt_zero() == 0

    # A connected pair with data in flight: one reference per socket.
    with Holder("pair"):
        assert refcnt() == 2
        assert sh("rmmod tcp_esack", check=False).returncode != 0
    assert wait_refcnt_zero() == 0
    sh("rmmod tcp_esack")
    assert not os.path.isdir(SYSMOD)
    insmod(KO)


def test_ss_and_tcp_cc_info_show_the_state():
    """Visibility: ss -ti prints dctcp:(ce_state:S,alpha:A1,ab_ecn:A2,
    ab_tot:B1), S = SecWnd + 10 * B2; TCP_CC_INFO returns the same."""
    with Holder("client") as h:
        out = h.ss()
        assert " esack " in out, out
        assert diag(out) == {"secwnd": 1, "B2": 0, "A1": 0, "A2": 0,
                             "B1": 0}, out
        assert h.info["cc_info"] == [1, 1, 0, 0, 0]


def check_fig1_run(runs):
    """Everything a Fig. 1 run must show; returns ESACK's A2 events."""
    for label, r in runs.items():
        assert r["bytes"] > 500000, "%s moved %d bytes" % (label, r["bytes"])
        assert r["probe"][0][2] == INIT_SSTHRESH, \
            (label, r["probe"][:3], r["state"][:4])

    reno = [e for e in runs["reno"]["episodes"]
            if not e["loss"] and not undone(e)]
    assert reno, "reno saw no fast recovery"
    assert 0.45 <= reno[0]["ratio"] <= 0.55, reno[0]
    for e in reno:
        assert e["ssthresh_after"] == max(e["cwnd_before"] // 2, 2), e

    es = runs["esack"]
    checked = check_esack_episodes(es["episodes"],
                                   es["params"]["window_span"], es["undos"])
    rules = [x for x in checked if x[0] != "undo"]
    if rules:
        first = rules[0]
        assert first[0] in ("A1", "A2"), first
        if first[0] == "A2":
            assert 0.55 <= first[2] <= 0.65, first
        else:                       # BER loss in slow start: cwnd kept
            assert 0.95 <= first[2] <= 1.05, first
    # ss saw the counters at diag_t (trace clock): every episode that
    # started well before is in them, unless the stack undid it (an
    # undone A1 leaves cwnd and ssthresh as a kept one: only the
    # counters and nstat tell)
    d, t = es["diag"], es["diag_t"]
    assert d is not None and t is not None, es["ss_last"]
    seen = [x for x, e in zip(checked, es["episodes"]) if e["t"] < t - 0.2]
    for rule in ("A1", "A2", "B1", "B2"):
        assert d[rule] + es["undos"] >= sum(1 for x in seen
                                            if x[0] == rule), (d, seen)
    assert sum(d.values()) - d["secwnd"] <= len(es["episodes"]) + 1
    return [x for x in rules if x[0] == "A2"]


@pytest.mark.statistical
def test_fig1_first_loss_above_ssthresh():
    """Seed 002, Results and Discussion, Fig. 1: after the first loss
    above ssthresh (70) SACK (Linux reno, profile sack) halves cwnd and
    ESACK keeps 60 % (A2).  Both flows run at once on separate leo-ber
    paths (BER 1e-7, 512-byte packets); every fast recovery of ESACK must
    match the rule of its window.  Two outcomes leave no A2 to check, and
    the pair then runs again (at most three times): a bit error during
    slow start makes ESACK's first loss an A1 (about one run in ten), and
    a lost retransmission in the first recovery ends it in an RTO (about
    one run in eight: the profile has no RACK), after which the rules of
    the seed no longer apply."""
    for attempt in range(3):
        a2 = check_fig1_run(fig1([("esack", "esack", {"window_span": SPAN}),
                                  ("reno", "reno", {"window_span": SPAN})],
                                 12, 1e-7))
        if a2:
            break
    assert a2, "no loss above ssthresh checked in three runs"
    assert 0.55 <= a2[0][2] <= 0.65, a2[0]


def test_rto_gets_the_standard_timeout():
    """Rule A3: a timeout in an odd window is Reno's (ssthresh = cwnd/2,
    cwnd from 1), not A2's 60 %.  The forward path goes dark once cwnd is
    above ssthresh; a queue of 1000 packets and no bit errors keep any
    other loss away, so the moment does not matter."""
    from satnet.scenario import load_profile, load_scenario
    from satnet.topo import Topology

    sc = load_scenario("leo-ber", {"forward.ber": 0, "ack.ber": 0,
                                   "bottleneck.limit": 1000})
    port = 5203
    dark = []

    def blackout(poll):
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if poll.row.get("cwnd", 0) >= INIT_SSTHRESH + 2:
                break
            time.sleep(0.1)
        topo.ex(topo.r2, netem + ["loss", "100%"])
        dark.append(time.monotonic())
        time.sleep(1)
        topo.ex(topo.r2, netem + ["loss", "0%"])

    with Topology(sc, load_profile(sc.profile)) as topo:
        prime_ssthresh(topo)
        cur = topo.ex(topo.r2, ["tc", "qdisc", "show", "dev", "r0"]).stdout
        netem = ["tc", "qdisc", "change", "dev", "r0", "root", "netem"] + \
            cur.split(" root refcnt ")[1].split(None, 1)[1].split()
        with Trace([port]) as tr:
            _, poll = run_flow(topo, "esack", port, 14, during=blackout,
                               marker=tr.marker, period=0.2)
            flows = tr.read()
            flow, flow_marks = flows[port], flows["marks"]
        undos = undo_count(topo)
    assert dark, "no blackout"
    # the first RTO (Loss) of the flow: ssthresh and cwnd just after it
    # (it need not have ended before the flow did)
    rto = [t for t, st in flow["state"] if st == 4]
    assert rto, flow["state"]
    before = [p for p in flow["probe"] if p[0] < rto[0]]
    after = [p for p in flow["probe"] if p[0] > rto[0]]
    assert before and after, (rto, len(before), len(after))
    cwnd = before[-1][1]
    assert cwnd >= INIT_SSTHRESH, before[-1]
    # Half the cwnd at the timeout, which may have grown by one since the
    # last ACK the trace kept (seen: 79 sampled, ssthresh 40 after).
    assert cwnd // 2 <= after[0][2] <= (cwnd + 2) // 2, (before[-1],
                                                         after[:3])
    assert after[0][2] != cwnd * 60 // 100
    assert min(p[1] for p in after[:5]) <= 3, after[:5]   # cwnd from ~1
    # the fast recoveries before it, if any, are in ss's counts
    eps = [e for e in episodes(flow) if e["t"] < rto[0]]
    d, t = poll.last, flow_marks.get("esack-ss %d %s" % (port,
                                                         poll.last_k))
    assert d is not None and t is not None
    fast = [(x, f["t"]) for x, f in zip(check_esack_episodes(eps, SPAN, undos),
                                        eps) if x[0] != "undo"]
    early = [x for x, start in fast if start < t - 0.2]
    assert len(early) - undos <= d["A1"] + d["A2"] + d["B1"] + d["B2"], \
        (d, fast, undos)


SWITCHER = CONNECT + """
import json, socket, struct, sys, time
ccs = [b"esack", b"reno", b"cubic", b"esack", b"esack"]
s = connect(sys.argv[1], int(sys.argv[2]))
s.settimeout(0.05)
end, n, infos, bad = time.monotonic() + float(sys.argv[3]), 0, 0, 0
buf = b"y" * 16384
next_sw = 0
while time.monotonic() < end:
    if time.monotonic() >= next_sw:
        cc = ccs[n % len(ccs)]
        s.setsockopt(socket.IPPROTO_TCP, 13, cc)
        n += 1
        next_sw = time.monotonic() + 0.1
        if cc == b"esack":
            raw = s.getsockopt(socket.IPPROTO_TCP, 26, 20)
            en, st, a1, a2, b1 = struct.unpack("HHIII", raw[:16])
            infos += 1
            bad += en != 1 or st % 10 > 1
    try:
        s.send(buf)
    except socket.timeout:
        pass
s.close()
print(json.dumps({"switches": n, "infos": infos, "bad": bad}))
"""


def test_survives_loss_reordering_undo_and_switching():
    """Robustness: 3 % data and 2 % ACK loss, reordering, Linux's RACK,
    DSACK and F-RTO undo, an esack flow beside one that switches its
    congestion control every 100 ms.  No warning in the kernel log,
    counters consistent, every module reference released."""
    from satnet import measure
    from satnet.scenario import load_profile, load_scenario
    from satnet.topo import Topology

    sc = load_scenario("mild-reorder", {"forward.per": 0.03,
                                        "ack.per": 0.02,
                                        "bottleneck.rate_mbit": 3})
    log0 = len(sh("dmesg").stdout.splitlines())
    with Topology(sc, load_profile("linux")) as topo:
        srv = topo.popen(topo.rcv[0], [sys.executable, "-c", SINK, "5300",
                                       "1"])
        time.sleep(0.5)
        sw = topo.popen(topo.snd[0], [sys.executable, "-c", SWITCHER,
                                      topo.rcv_addr(0), "5300", "6"],
                        stdout=subprocess.PIPE, text=True)
        _, poll = run_flow(topo, "esack", 5201, 6)
        swout = json.loads(sw.communicate(timeout=60)[0])
        srv.wait(timeout=30)
        nst = measure.nstat(topo, topo.snd[0])
    assert swout["switches"] >= 30 and swout["infos"] >= 10, swout
    assert swout["bad"] == 0, swout
    d = poll.last
    assert d is not None, poll.row
    events = d["A1"] + d["A2"] + d["B1"] + d["B2"]
    assert events > 0, d
    # the kernel names it TCPSackRecovery
    assert events <= nst.get("TcpExtTCPSackRecovery", 0) + \
        nst.get("TcpExtTCPTimeouts", 0), (d, nst)
    new = sh("dmesg").stdout.splitlines()[log0:]
    assert not [x for x in new if BAD.search(x)], new
    assert wait_refcnt_zero() == 0

