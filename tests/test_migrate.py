# SPDX-License-Identifier: GPL-2.0
"""satnet.migrate: old result lines to satnet.run/1 records.

The fixtures in tests/fixtures/migrate/ are real lines from the history of
results/ (ss, intervals and traces cut to three samples), one file per old
file name, so that the experiment names come out as they did for results/.
"""

import collections
import json
import os

import pytest

from satnet import migrate

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIX = os.path.join(TOP, "tests", "fixtures", "migrate")


def old(name, line=1):
    """(record, source) of a fixture: line N of a .jsonl, or the .json."""
    path = os.path.join(FIX, name)
    for n, rec in migrate.read_old(path):
        if n == line:
            return rec, "results/" + name
    raise KeyError(line)


def one(name, line=1):
    rec, source = old(name, line)
    out = migrate.convert(rec, source, line)
    assert len(out) == 1
    return rec, out[0]


def leaves(v, out):
    if isinstance(v, dict):
        for x in v.values():
            leaves(x, out)
    elif isinstance(v, list):
        for x in v:
            leaves(x, out)
    else:
        out.append(json.dumps(v))
    return out


ALL = [("baseline-geo.jsonl", 1, "bench"), ("baseline-geo.jsonl", 2, "bench"),
       ("deep-space.jsonl", 1, "bench"),
       ("deep-space-trace.jsonl", 1, "deepspace-trace"),
       ("tcp-r-mix.jsonl", 1, "mix"), ("tcp_r.jsonl", 1, "tcp-r-flow"),
       ("tcp_r.jsonl", 2, "tcp-r-mix-summary"), ("tcp_r.jsonl", 3, "mix"),
       ("rn_bench.jsonl", 1, "rn-bench"),
       ("rn_bench.jsonl", 2, "rn-bench-udp"),
       ("rn_e2e.jsonl", 1, "rn-e2e"), ("rn_e2e.jsonl", 2, "rn-e2e"),
       ("esack-fig1.json", 1, "esack-fig1")]


@pytest.mark.parametrize("name,line,shape", ALL)
def test_every_shape_converts_to_a_complete_record(name, line, shape):
    rec, source = old(name, line)
    assert migrate.shape_of(rec) == shape
    out = migrate.convert(rec, source, line)
    assert out
    for new in out:
        assert list(new)[:len(migrate.KEYS)] == list(migrate.KEYS)
        assert migrate.check(new) == []
        assert new["schema"] == "satnet.run/1"
        assert new["mode"] == "legacy"
        assert new["meta"]["git"] == {"commit": None, "dirty": None}
        cf = new["meta"]["converted_from"]
        assert (cf["file"], cf["line"], cf["shape"]) == (source, line, shape)
        assert cf["producer"]
        assert new["summary"]["goodput_bps"] == pytest.approx(
            sum(f["goodput_bps"] for f in new["flows"]))
        assert new["summary"]["goodput"] == pytest.approx(
            new["summary"]["goodput_bps"] / 1e6)
        json.dumps(new, allow_nan=False)


@pytest.mark.parametrize("name,line,shape", ALL)
def test_no_old_value_is_lost(name, line, shape):
    """Every value of the old record is somewhere in the new ones, except
    a count that is now the length of the flows list."""
    rec, source = old(name, line)
    have = collections.Counter()
    for new in migrate.convert(rec, source, line):
        have.update(leaves(new, []))
    lost = [v for v in leaves(rec, []) if not have[v]]
    if shape == "tcp-r-mix-summary":
        assert rec["flows"] == 10
        lost.remove("10")
    assert lost == []


def test_bench_record():
    rec, new = one("baseline-geo.jsonl", 1)
    assert new["experiment"] == "legacy-baseline-geo"
    assert (new["variant"], new["point"], new["rep"]) == ("reno", {}, 0)
    meta = new["meta"]
    assert meta["kernel"] == rec["meta"]["kernel"] == "6.1.0-56-amd64"
    assert meta["date"] == rec["meta"]["date"]
    assert meta["scenario"] == rec["meta"]["scenario"]
    assert meta["scenario"]["name"] == "geo"
    assert meta["profile"] == "linux-ecn"
    assert meta["sysctl"] == {"sender": rec["meta"]["sysctl_sender"],
                              "receiver": rec["meta"]["sysctl_receiver"]}
    assert meta["iperf3"] == rec["meta"]["iperf3"]
    assert meta["width"] == 3 and meta["duration_s"] == 90.0
    assert "modules" not in meta            # reno: no module parameters
    f, = new["flows"]
    assert f["variant"] == "reno" and f["cc"] == "reno"
    assert f["goodput_bps"] == rec["goodput_bps"]
    assert f["bytes"] * 8 / 90.0 == pytest.approx(rec["goodput_bps"])
    assert f["retransmits"] == rec["retransmits"]
    assert f["segs_out"] == rec["counters"]["TcpOutSegs"]
    assert f["ss"] == rec["ss"] and f["intervals"] == rec["intervals"]
    assert new["host"] == {"nstat_sender": rec["counters"],
                           "nstat_receiver": rec["receiver_counters"]}
    assert new["bottleneck"]["qdisc"] == rec["meta"]["bottleneck_qdisc"]
    assert new["bottleneck"]["throughput_bps"] == rec["throughput_bps"]
    assert new["selfcheck"] == dict(rec["selfcheck"], attempts=1)
    s, c = new["summary"], rec["counters"]
    assert s["retrans_share"] == c["TcpRetransSegs"] / c["TcpOutSegs"]
    assert s["timeouts"] == c["TcpExtTCPTimeouts"]
    assert s["goodput_share"] == rec["goodput_bps"] / 1.5e6
    assert s["overhead"] == rec["overhead"]
    assert new["legacy"] == {"mode": "parallel",
                             "meta": {"project": "/work/main"}}


def test_bench_module_parameters():
    """measure.module_params(cc): /sys/module/tcp_CC/parameters (a hybla
    record of results/deep-space-hybla.jsonl had {"rtt0": "25"})."""
    rec, source = old("deep-space.jsonl")
    rec = dict(rec, cc="hybla",
               meta=dict(rec["meta"], module_params={"rtt0": "25"}))
    new, = migrate.convert(rec, source, 1)
    assert new["meta"]["modules"] == {
        "tcp_hybla": {"srcversion": None, "parameters": {"rtt0": "25"}}}
    assert "module_params" not in new["legacy"]["meta"]


def test_bench_sweep_point():
    rec, new = one("deep-space.jsonl")
    assert (new["experiment"], new["variant"]) == ("legacy-deep-space",
                                                   "rack")
    assert new["point"] == rec["sweep"] == {"forward.per": 0.0001}
    assert new["bottleneck"]["diff"]["dropped"] == rec["bottleneck_dropped"]
    assert new["host"]["nstat_receiver"]["TcpInCsumErrors"] == 0
    assert migrate.path_of(new, "R") == \
        "R/legacy-deep-space/legacy/rack/forward.per=0.0001-rep0.json"


def test_serial_control_gets_its_own_file():
    a = one("baseline-geo.jsonl", 1)[1]
    b = one("baseline-geo.jsonl", 2)[1]
    assert (b["variant"], b["rep"], b["meta"]["width"]) == ("reno", 0, 1)
    assert b["legacy"]["mode"] == "serial"
    taken = set()
    assert migrate.path_of(a, "R", taken).endswith("/reno/base-rep0.json")
    assert migrate.path_of(b, "R", taken).endswith(
        "/reno/base-rep0-serial.json")


def test_path_of_numbers_collisions_and_escapes():
    rec = one("rn_bench.jsonl")[1]
    taken = set()
    p1 = migrate.path_of(rec, "R", taken)
    p2 = migrate.path_of(rec, "R", taken)
    p3 = migrate.path_of(rec, "R", taken)
    assert p1 == "R/legacy-rn-bench/legacy/reno-linux/base-rep0.json"
    assert p2 == "R/legacy-rn-bench/legacy/reno-linux/base-rep0-2.json"
    assert p3.endswith("base-rep0-3.json")
    assert migrate.path_of(rec, "R") == p1          # without taken: no state
    odd = dict(rec, point={"bottleneck.epdn": "mode v3 red/ecn", "x": 1},
               rep=2)
    name = os.path.basename(migrate.path_of(odd, "R"))
    assert name == "bottleneck.epdn=mode_v3_red_ecn,x=1-rep2.json"
    assert migrate.safe_name("rn:linux") == "rn-linux"
    assert migrate.safe_name("SACK (Linux reno)") == "sack-linux-reno"
    assert migrate.experiment_of("results/rn_bench.jsonl") == \
        "legacy-rn-bench"


def test_deepspace_trace():
    rec, new = one("deep-space-trace.jsonl")
    assert new["variant"] == "reno-linux"
    assert new["point"] == {"forward.per": rec["per"]}
    assert new["meta"]["scenario"]["forward"]["per"] == rec["per"]
    assert new["selfcheck"] is None
    assert new["host"]["nstat_receiver"] == rec["receiver_counters"]
    assert new["legacy"]["trace"] == rec["trace"]


def test_mix_record():
    rec, new = one("tcp-r-mix.jsonl")
    assert (new["experiment"], new["variant"]) == ("legacy-tcp-r-mix", "mix")
    assert (new["point"], new["rep"]) == ({"y": 1}, 0)
    assert new["legacy"]["label"] == "y=1"
    assert [f["cc"] for f in new["flows"]] == rec["ccs"]
    for f, o in zip(new["flows"], rec["flows"]):
        assert f["variant"] == o["cc"]
        assert f["goodput_bps"] == o["goodput_bps"]
        assert f["retransmits"] == o["retransmits"]
        assert f["ss"] == [o["ss_last"]]
    assert new["bottleneck"]["throughput_bps"] == rec["bottleneck_bps"]
    diff = new["bottleneck"]["diff"]
    assert {k: diff[k] for k in rec["qdisc"]} == rec["qdisc"]
    assert diff["sent_bytes"] * 8 / 80 == pytest.approx(rec["bottleneck_bps"])
    s = new["summary"]
    assert s["goodput_bps"] == rec["goodput_bps"]
    assert s["jain"] == rec["jain_all"]
    assert s["useful"] == rec["useful"]
    assert s["goodput_share"] == rec["goodput_bps"] / rec["rate_bps"]
    for cc, v in rec["per_cc"].items():
        pv = s["per_variant"][cc]
        assert (pv["flows"], pv["goodput_bps"], pv["jain"]) == \
            (v["flows"], v["mean_bps"], v["jain"])
        assert pv["goodput"] == v["mean_bps"] / 1e6
    assert new["selfcheck"] == dict(rec["selfcheck"], attempts=1)


def test_mix_written_by_test_tcp_r():
    rec, new = one("tcp_r.jsonl", 3)
    assert (new["variant"], new["point"]) == ("mix", {})
    assert new["selfcheck"] is None
    assert new["legacy"]["test"] == "many_flows_red_ecn"
    assert new["bottleneck"]["diff"]["dropped"] == rec["qdisc"]["dropped"]


def test_old_mix_summary_of_test_tcp_r():
    rec, new = one("tcp_r.jsonl", 2)
    assert (new["experiment"], new["variant"]) == ("legacy-tcp-r", "mix")
    r = [f for f in new["flows"] if f["cc"] == "r"]
    reno = [f for f in new["flows"] if f["cc"] == "reno"]
    assert [f["goodput_bps"] for f in r] == rec["r_goodput_bps"]
    assert [f["paths"] for f in r] == rec["r_paths"]
    assert [f["goodput_bps"] for f in reno] == rec["reno_goodput_bps"]
    s = new["summary"]
    assert s["goodput_bps"] == rec["goodput_bps"]
    assert s["jain"] == rec["jain_all"]
    assert s["per_variant"]["r"]["jain"] == rec["jain_r"]
    assert s["per_variant"]["reno"]["jain"] == pytest.approx(
        migrate.jain(rec["reno_goodput_bps"]))
    assert new["meta"]["scenario"] == {"rate_bps": rec["rate_bps"]}
    assert new["legacy"] == {"test": "many_flows_red_ecn", "cc": "r+reno",
                             "ecn_marks": rec["ecn_marks"]}


def test_tcp_r_flow():
    rec, new = one("tcp_r.jsonl", 1)
    assert new["variant"] == "r-linux"
    assert new["host"]["nstat_sender"] == {
        "TcpExtTCPSackRecovery": rec["recoveries"],
        "TcpExtTCPTimeouts": rec["timeouts"],
        "TcpExtTCPLostRetransmit": rec["lost_retransmits"],
        "TcpRetransSegs": rec["retrans_segs"]}
    assert new["summary"]["timeouts"] == rec["timeouts"]
    assert "retrans_share" not in new["summary"]    # no TcpOutSegs
    assert new["meta"]["scenario"] == {"overrides": {}}
    assert new["legacy"] == {"test": "corruption", "proven": True,
                             "paths": rec["paths"],
                             "cwnd_mean": rec["cwnd_mean"]}


def test_rn_bench():
    rec, new = one("rn_bench.jsonl", 1)
    assert (new["variant"], new["rep"]) == ("reno-linux", rec["rep"])
    assert new["meta"]["width"] == rec["parallel"]
    snd = new["host"]["nstat_sender"]
    assert snd["TcpExtTCPSackRecovery"] == rec["recoveries"]
    assert snd["TcpExtTCPFastRetrans"] == rec["fast_retrans_segs"]
    assert snd["TcpRetransSegs"] == rec["retrans_segs"]
    assert snd["TcpExtTCPDSACKRecv"] == rec["dsacks"]
    assert snd["TcpExtTCPSpuriousRTOs"] == rec["spurious_rtos"]
    for k, v in rec["undo"].items():
        assert snd["TcpExt" + k] == v
    assert new["host"]["rn_sender"] == rec["rn"]
    assert new["host"]["rn_host"] == rec["rn_host"]
    bn = new["bottleneck"]
    assert bn["diff"] == {"sent_bytes": rec["bottleneck_sent_bytes"],
                          "dropped": rec["qdisc_drops"]}
    assert bn["backlog_packets"] == {"mean": rec["backlog_mean"],
                                     "max": rec["backlog_max"],
                                     "zero_share": rec["backlog_zero_share"]}
    assert new["legacy"]["tag"] == "cap5-reno"
    assert new["legacy"]["burst"] == 30000


def test_rn_bench_udp():
    rec, new = one("rn_bench.jsonl", 2)
    f, = new["flows"]
    assert (f["variant"], f["cc"]) == ("udp-linux", "udp")
    assert f["goodput_bps"] == rec["udp_received_bps"]
    assert "bytes" not in f             # UDP: not bytes * 8 / duration
    assert new["legacy"]["udp_offered_bps"] == rec["udp_offered_bps"]
    assert new["legacy"]["udp_lost_percent"] == rec["udp_lost_percent"]


def test_rn_e2e():
    rec, new = one("rn_e2e.jsonl", 2)
    assert new["experiment"] == "legacy-rn-e2e"
    assert new["variant"] == "rn-sack-nots"
    assert new["meta"]["modules"] == {
        "tcp_rn": {"srcversion": None, "parameters": rec["params"]}}
    assert new["meta"]["sysctl"] == {
        "sender": {"net.ipv4.tcp_recovery": rec["tcp_recovery"]}}
    snd = new["host"]["nstat_sender"]
    for k, v in rec["mib"].items():
        assert snd[k] == v
    assert snd["TcpExtTCPTimeouts"] == rec["timeouts"]
    assert new["legacy"]["test"] == "mild_reorder_serial"
    assert new["legacy"]["ss_kval"] == rec["ss_kval"]
    assert "mib" not in new["legacy"]


def test_esack_fig1_one_record_per_run():
    rec, source = old("esack-fig1.json")
    out = migrate.convert(rec, source, 1)
    assert [r["variant"] for r in out] == ["esack", "sack-linux-reno",
                                           "esack-window_span-1"]
    assert [r["meta"]["converted_from"]["run"] for r in out] == \
        list(rec["runs"])
    for r, (label, run) in zip(out, rec["runs"].items()):
        assert r["experiment"] == "legacy-esack-fig1"
        assert r["meta"]["command"] == rec["meta"]["command"]
        assert r["meta"]["scenario"] == {"name": "leo-ber", "ber": 1e-07,
                                         "mtu": 512, "initial_ssthresh": 70}
        assert r["meta"]["modules"]["tcp_esack"]["parameters"] == \
            run["params"]
        f, = r["flows"]
        assert (f["cc"], f["goodput_bps"], f["retransmits"]) == \
            (run["cc"], run["goodput_bps"], run["retransmits"])
        assert r["legacy"]["probe"] == run["probe"]
        assert r["legacy"]["label"] == label
    paths = {migrate.path_of(r, "R", set()) for r in out}
    assert len(paths) == 3


def test_unknown_shape_is_an_error():
    with pytest.raises(migrate.ShapeError):
        migrate.convert({"goodput": 1}, "results/x.jsonl", 1)


def listing(d):
    return sorted(os.path.relpath(os.path.join(p, f), d)
                  for p, _, fs in os.walk(d) for f in fs)


def fixtures():
    return sorted(os.path.join(FIX, f) for f in os.listdir(FIX))


def test_help_and_dry_run_write_nothing(tmp_path, capsys):
    before = listing(os.path.join(TOP, "results"))
    with pytest.raises(SystemExit) as e:
        migrate.main(["--help"])
    assert e.value.code == 0
    assert migrate.main(["--dry-run", "--results", str(tmp_path)] +
                        fixtures()) == 0
    assert "dry run" in capsys.readouterr().out
    assert listing(str(tmp_path)) == []
    assert listing(os.path.join(TOP, "results")) == before


def test_main_writes_one_file_per_run(tmp_path, capsys):
    res = str(tmp_path / "results")
    assert migrate.main(["--results", res] + fixtures()) == 0
    files = listing(res)
    assert len(files) == 2 + 1 + 1 + 3 + 2 + 2 + 1 + 3
    assert "legacy-baseline-geo/legacy/reno/base-rep0-serial.json" in files
    assert "legacy-tcp-r-mix/legacy/mix/y=1-rep0.json" in files
    for f in files:
        with open(os.path.join(res, f)) as fh:
            rec = json.load(fh)
        assert migrate.check(rec) == []
        assert f.startswith(rec["experiment"] + "/legacy/" +
                            rec["variant"] + "/")
    out = capsys.readouterr().out
    assert "baseline-geo.jsonl: 2 old records -> 2 run records" in out
    # again: the same files, nothing rewritten
    assert migrate.main(["--results", res] + fixtures()) == 0
    assert "already there" in capsys.readouterr().out
    assert listing(res) == files
    # a file with other content is never overwritten
    victim = os.path.join(res, files[0])
    with open(victim, "w") as fh:
        fh.write("{}\n")
    assert migrate.main(["--results", res] + fixtures()) == 1
    with open(victim) as fh:
        assert fh.read() == "{}\n"
