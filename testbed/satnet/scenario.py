# SPDX-License-Identifier: GPL-2.0
"""Scenario and sysctl-profile files, and the values derived from them.

A scenario (testbed/scenarios/*.toml) describes one figure family of the seeds,
or one of today's LEO paths: bottleneck, satellite path, errors, loss,
reordering, ACK path, and how the path changes while a run goes on.  A
profile (testbed/profiles/*.toml) names the sysctls applied to the sender's and
the receiver's namespaces.  See docs/testbed.md for every key.
"""

import copy
import math
import os
import random
import tomllib

from .paths import PROFILE_DIR, SCENARIO_DIR

ACCESS_RATE_BPS = 10_000_000      # access links: 10 Mbit/s ...
ACCESS_DELAY_MS = 1.0             # ... and 1 ms, one-way (seed 000 §3)
ACK_BYTES = 66                    # 40 B of headers + 12 of timestamps + L2
EPDN_MSS = 1448                   # 1460 - the 12-byte EPDN option
DISTS = ("normal", "uniform", "exponential", "fixed")
# netem's loss gemodel p r 1-h 1-k, in percent (tc-netem(8)), and the
# defaults netem gives 1-h and 1-k
GE_KEYS = ("p", "r", "bad_loss", "good_loss")
GE_DEFAULTS = {"bad_loss": 100.0, "good_loss": 0.0}
QDISCS = ("pfifo", "red", "epdn")
# Where the forward path's corruption and random loss happen: on the path
# after the gateway (netem at R2), or at the gateway's entry, where an
# epdn gateway drops them itself: as link-layer CRC failures ("corrupt",
# recorded in mode v2 only) or as drops it records whatever its mode
# ("congestion", for a seed's congestion drops at a fixed rate).
GATEWAY_LOSS = ("path", "corrupt", "congestion")
# Keys added after records were made, with the default they had before:
# at that default they stay out of a point's identity (experiment.resolved).
LATER_KEYS = {"gateway_loss": "path"}


class ScenarioError(ValueError):
    pass


def ber_to_per(ber, nbytes):
    """Packet error rate of an nbytes packet under independent bit errors."""
    return 1.0 - (1.0 - ber) ** (8 * nbytes)


def ge_loss(p, r, bad_loss, good_loss):
    """Stationary loss rate of a Gilbert-Elliott chain (Gilbert 1960,
    Elliott 1963), every argument in percent: p and r the good -> bad and
    bad -> good transition probabilities, bad_loss (netem's 1-h) and
    good_loss (1-k) the loss probabilities in each state.  The chain is
    in the bad state a fraction pi_B = p / (p + r) of the packets."""
    pi_b = p / (p + r)
    return (pi_b * bad_loss + (1 - pi_b) * good_loss) / 100


def _load(path):
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except FileNotFoundError:
        raise ScenarioError("no such file: %s" % path) from None
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError("%s: %s" % (path, e)) from None


def _resolve(name, folder):
    if os.sep in name or name.endswith(".toml"):
        return name
    return os.path.join(folder, name + ".toml")


def _check_keys(section, where, allowed):
    extra = set(section) - set(allowed)
    if extra:
        raise ScenarioError("%s: unknown key(s) %s" %
                            (where, ", ".join(sorted(extra))))


def _positive(val, where, allow_zero=True):
    if not isinstance(val, (int, float)) or val < 0 or \
            (val == 0 and not allow_zero):
        raise ScenarioError("%s must be a %s number, not %r" %
                            (where, "non-negative" if allow_zero else
                             "positive", val))
    return float(val)


def _percent(val, where):
    if not isinstance(val, (int, float)) or isinstance(val, bool) or \
            not 0 <= val <= 100:
        raise ScenarioError("%s must be a percentage 0..100, not %r" %
                            (where, val))
    return float(val)


def _range_ms(val, where):
    """[low, high], two non-negative numbers."""
    if not isinstance(val, list) or len(val) != 2:
        raise ScenarioError("%s must be [low, high], not %r" % (where, val))
    low, high = (_positive(v, where) for v in val)
    if low > high:
        raise ScenarioError("%s: low %g exceeds high %g" % (where, low, high))
    return [low, high]


def gemodel(d, where):
    """A direction's gemodel table, checked: every key in percent, p and
    r required and positive, bad_loss 100 and good_loss 0 by default (as
    netem's 1-h and 1-k)."""
    if not isinstance(d, dict):
        raise ScenarioError("%s must be a table {p, r, bad_loss, good_loss}"
                            % where)
    _check_keys(d, where, GE_KEYS)
    for k in ("p", "r"):
        if k not in d:
            raise ScenarioError("%s.%s is required" % (where, k))
    g = {k: _percent(d.get(k, GE_DEFAULTS.get(k)), "%s.%s" % (where, k))
         for k in GE_KEYS}
    if not g["p"] or not g["r"]:
        raise ScenarioError("%s: p and r must be above 0 (with p = 0 the "
                            "chain never leaves the good state: use loss)"
                            % where)
    return g


class Reorder:
    """A fraction of packets gets an extra delay (seed 000 §4.1/§4.2)."""

    def __init__(self, d, where):
        _check_keys(d, where, ("fraction", "dist", "mean_ms"))
        self.fraction = _positive(d.get("fraction", 0.0), where + ".fraction")
        if self.fraction > 1:
            raise ScenarioError(where + ".fraction must be <= 1")
        self.dist = d.get("dist", "normal")
        if self.dist not in DISTS:
            raise ScenarioError("%s.dist must be one of %s" %
                                (where, ", ".join(DISTS)))
        self.mean_ms = _positive(d.get("mean_ms", 0.0), where + ".mean_ms")

    @property
    def active(self):
        return self.fraction > 0 and self.mean_ms > 0

    def max_extra_ms(self):
        """Largest extra delay the model can draw."""
        return {"normal": 2, "uniform": 2, "exponential": 6,
                "fixed": 1}[self.dist] * self.mean_ms


class Direction:
    """One direction of the satellite link: delay, errors, loss,
    reordering."""

    def __init__(self, d, where, nbytes, default_delay=None):
        _check_keys(d, where, ("delay_ms", "ber", "per", "loss", "gemodel",
                               "packet_bytes", "reorder"))
        delay = d.get("delay_ms", default_delay)
        if delay is None:
            raise ScenarioError(where + ".delay_ms is required")
        self.delay_ms = _positive(delay, where + ".delay_ms")
        self.packet_bytes = int(d.get("packet_bytes", nbytes))
        if "ber" in d and "per" in d:
            raise ScenarioError(where + ": give ber or per, not both")
        if "per" in d:
            self.per = _positive(d["per"], where + ".per")
        else:
            self.per = ber_to_per(_positive(d.get("ber", 0.0),
                                            where + ".ber"),
                                  self.packet_bytes)
        self.ber = d.get("ber")
        self.loss = _positive(d.get("loss", 0.0), where + ".loss")
        # netem runs one loss model per qdisc: random or Gilbert-Elliott
        if "loss" in d and "gemodel" in d:
            raise ScenarioError(where + ": give loss or gemodel, not both "
                                "(netem takes one loss model)")
        self.gemodel = gemodel(d["gemodel"], where + ".gemodel") \
            if "gemodel" in d else None
        if self.per >= 1 or self.loss_rate() >= 1:
            raise ScenarioError(where + ": error and loss rates must be < 1")
        self.reorder = Reorder(d.get("reorder", {}), where + ".reorder")

    def loss_rate(self):
        """Mean rate of the loss model: random, or Gilbert-Elliott's
        stationary loss."""
        return ge_loss(**self.gemodel) if self.gemodel else self.loss

    def max_delay_ms(self):
        return self.delay_ms + (self.reorder.max_extra_ms()
                                if self.reorder.active else 0)

    def moved(self, delay_ms, loss=None):
        """This direction with another delay and, given a loss rate,
        random loss at that rate in place of its loss model."""
        d = copy.copy(self)
        d.delay_ms = delay_ms
        if loss is not None:
            d.loss, d.gemodel = loss, None
        return d


class Schedule:
    """The path changing while the flows run (LEO satellite handovers):
    every period_s a new one-way delay for both directions, uniform in
    delay_ms; for spike_ms after each change the forward delay is higher
    by a jump uniform in jump_ms, and both directions lose burst_loss of
    their packets at random in place of their own loss model.  The draws
    follow seed, so every run of a scenario sees the same path."""

    def __init__(self, d):
        where = "schedule"
        _check_keys(d, where, ("period_s", "delay_ms", "jump_ms",
                               "spike_ms", "burst_loss", "seed"))
        self.period_s = _positive(d.get("period_s"), where + ".period_s",
                                  False)
        self.delay_ms = _range_ms(d.get("delay_ms"), where + ".delay_ms")
        self.jump_ms = _range_ms(d.get("jump_ms", [0, 0]),
                                 where + ".jump_ms")
        self.spike_ms = _positive(d.get("spike_ms", 0), where + ".spike_ms")
        self.burst_loss = _positive(d.get("burst_loss", 0),
                                    where + ".burst_loss")
        self.seed = d.get("seed", 1)
        if self.burst_loss > 1:
            raise ScenarioError(where + ".burst_loss must be <= 1")
        if self.spike_ms >= self.period_s * 1000:
            raise ScenarioError(where + ".spike_ms must be shorter than "
                                "schedule.period_s")
        if (self.jump_ms[1] or self.burst_loss) and not self.spike_ms:
            raise ScenarioError(where + ".jump_ms and schedule.burst_loss "
                                "need schedule.spike_ms above 0")
        if not isinstance(self.seed, int) or isinstance(self.seed, bool):
            raise ScenarioError(where + ".seed must be an integer")

    def max_delay_ms(self):
        """Largest one-way delay the schedule sets."""
        return self.delay_ms[1] + self.jump_ms[1]

    def spike_share(self):
        """Fraction of a long run spent in spikes."""
        return self.spike_ms / 1000 / self.period_s

    def events(self, duration_s, fwd, ack):
        """(t, forward, return) of every change before duration_s, t in
        seconds from the flows' start; the first change comes at
        period_s, so the first period runs on the scenario's own path."""
        rnd = random.Random(self.seed)
        out = []
        n = 1
        while n * self.period_s < duration_s:
            t = n * self.period_s
            delay = rnd.uniform(*self.delay_ms)
            jump = rnd.uniform(*self.jump_ms)
            settled = (t + self.spike_ms / 1000, fwd.moved(delay),
                       ack.moved(delay))
            if self.spike_ms:
                burst = self.burst_loss or None
                out.append((t, fwd.moved(delay + jump, burst),
                            ack.moved(delay, burst)))
            if settled[0] < duration_s:
                out.append(settled)
            n += 1
        return out


class Scenario:
    def __init__(self, d, path):
        self.path = path
        _check_keys(d, path, ("name", "source", "bottleneck", "forward",
                              "ack", "run", "sysctl", "schedule"))
        self.name = d.get("name") or os.path.basename(path)[:-5]
        self.source = d.get("source", "")
        b = d.get("bottleneck", {})
        _check_keys(b, "bottleneck", ("rate_mbit", "qdisc", "limit",
                                      "epdn", "red", "epdn_domain",
                                      "epdn_red", "burst_bytes",
                                      "gateway_loss"))
        self.rate_bps = _positive(b.get("rate_mbit", 0),
                                  "bottleneck.rate_mbit", False) * 1e6
        if self.rate_bps > ACCESS_RATE_BPS:
            raise ScenarioError("bottleneck.rate_mbit exceeds the 10 Mbit/s "
                                "access links")
        self.qdisc = b.get("qdisc", "pfifo")
        if self.qdisc not in QDISCS:
            raise ScenarioError("bottleneck.qdisc must be one of " +
                                ", ".join(QDISCS))
        self.limit = b.get("limit", "bdp")
        self.epdn_args = b.get("epdn", "")
        self.burst_bytes = int(b.get("burst_bytes", 0))
        if not 0 <= self.burst_bytes <= 1 << 20:
            raise ScenarioError("bottleneck.burst_bytes must be 0..1048576")
        # RN-TCP and TCP-R: origin at the senders, RN-TCP receivers, R2
        # an EPDN router too (Topology.epdn_domain()).
        self.epdn_domain = b.get("epdn_domain", False)
        if not isinstance(self.epdn_domain, bool):
            raise ScenarioError("bottleneck.epdn_domain must be true or "
                                "false")
        if self.epdn_domain and self.qdisc != "epdn":
            raise ScenarioError("bottleneck.epdn_domain needs "
                                "bottleneck.qdisc = \"epdn\"")
        self.red = b.get("red", {})
        # an epdn bottleneck standing in for a RED/ECN one marks as it would
        self.epdn_red = b.get("epdn_red", False)
        if self.epdn_red not in (True, False) or \
                (self.epdn_red and self.qdisc != "epdn"):
            raise ScenarioError("bottleneck.epdn_red is true or false, and "
                                "needs bottleneck.qdisc = \"epdn\"")
        self.fwd = Direction(d.get("forward", {}), "forward", 1500)
        self.ack = Direction(d.get("ack", {}), "ack", ACK_BYTES,
                             self.fwd.delay_ms)
        self.schedule = Schedule(d["schedule"]) if "schedule" in d else None
        self.gateway_loss = b.get("gateway_loss", "path")
        if self.gateway_loss not in GATEWAY_LOSS:
            raise ScenarioError("bottleneck.gateway_loss must be one of " +
                                ", ".join(GATEWAY_LOSS))
        if self.gateway_loss != "path" and (self.fwd.gemodel or
                                            self.schedule):
            raise ScenarioError("bottleneck.gateway_loss takes random loss "
                                "and corruption, not a Gilbert-Elliott "
                                "model or a schedule")
        if self.gateway_loss != "path" and "corrupt" in self.epdn_args:
            raise ScenarioError("bottleneck.gateway_loss sets the epdn "
                                "gateway's corrupt: leave it out of "
                                "bottleneck.epdn")
        r = d.get("run", {})
        _check_keys(r, "run", ("duration_s", "profile", "pairs", "mss",
                               "clock"))
        self.duration_s = _positive(r.get("duration_s", 60), "run.duration_s",
                                    False)
        self.profile = r.get("profile", "linux")
        # The clock `satnet run` chooses for this path: "virtual" only once
        # the clock check has shown its family measures there what it
        # measures on the real clock (docs/testbed.md).
        self.clock = r.get("clock", "real")
        if self.clock not in ("real", "virtual"):
            raise ScenarioError("run.clock must be \"real\" or "
                                "\"virtual\"")
        self.pairs = int(r.get("pairs", 1))
        if not 1 <= self.pairs <= 64:
            raise ScenarioError("run.pairs must be 1..64")
        self.sysctl = d.get("sysctl", {})
        # EPDN's 12-byte IPv4 option must fit in the 1500-byte MTU
        # (docs/epdn.md), so EPDN paths advertise a 12-byte smaller MSS.
        self.mss = int(r.get("mss", EPDN_MSS if self.qdisc == "epdn"
                             else 0))
        if self.mss and not 536 <= self.mss <= 1460:
            raise ScenarioError("run.mss must be 536..1460")

    def base_rtt_ms(self):
        """Idle RTT of the shortest path, without queueing."""
        return 4 * ACCESS_DELAY_MS + self.fwd.delay_ms + self.ack.delay_ms

    def bdp_packets(self):
        bdp = self.rate_bps * self.base_rtt_ms() / 1000 / 8
        return max(4, math.ceil(bdp / self.fwd.packet_bytes))

    def limit_packets(self):
        if self.limit == "bdp":
            return self.bdp_packets()
        if isinstance(self.limit, int) and self.limit > 0:
            return self.limit
        raise ScenarioError("bottleneck.limit must be \"bdp\" or a positive "
                            "packet count, not %r" % (self.limit,))

    def netem_limit(self, direction):
        """Packets a delay stage must hold: rate x largest delay (a
        schedule's too), counted in small packets so that ACKs and probes
        never overflow it."""
        pps = self.rate_bps / 8 / 200
        delay = direction.max_delay_ms()
        if self.schedule:
            delay += max(0.0, self.schedule.max_delay_ms() -
                         direction.delay_ms)
        return int(pps * delay / 1000 * 1.5) + 1000

    def mean_loss(self, direction):
        """Non-congestion loss of a direction over a long run: corruption
        (PER) and the loss model, which the schedule's bursts replace for
        their share of the time."""
        lost = direction.loss_rate()
        if self.schedule and self.schedule.burst_loss:
            share = self.schedule.spike_share()
            lost = (1 - share) * lost + share * self.schedule.burst_loss
        return 1 - (1 - direction.per) * (1 - lost)

    def gateway_drop(self):
        """The share of forward packets dropped at the gateway's entry
        (bottleneck.gateway_loss): corruption and random loss together."""
        if self.gateway_loss == "path":
            return 0.0
        return 1 - (1 - self.fwd.per) * (1 - self.fwd.loss)

    def sender_drop(self):
        """The share of forward packets the senders' access links drop in
        place of a gateway that cannot (gateway_loss without epdn)."""
        return 0.0 if self.qdisc == "epdn" else self.gateway_drop()

    def path_forward(self):
        """The forward satellite stage as netem runs it: without what the
        gateway drops instead."""
        if self.gateway_loss == "path":
            return self.fwd
        d = self.fwd.moved(self.fwd.delay_ms, 0.0)
        d.per = 0.0
        return d

    def describe(self):
        return {
            "name": self.name, "source": self.source,
            "rate_bps": self.rate_bps, "qdisc": self.qdisc,
            "epdn_domain": self.epdn_domain, "burst_bytes": self.burst_bytes,
            "gateway_loss": self.gateway_loss,
            "limit_packets": self.limit_packets(),
            "base_rtt_ms": self.base_rtt_ms(),
            "forward": {**vars_of(self.fwd),
                        "mean_loss": self.mean_loss(self.fwd)},
            "ack": {**vars_of(self.ack),
                    "mean_loss": self.mean_loss(self.ack)},
            "schedule": vars(self.schedule) if self.schedule else None,
            "duration_s": self.duration_s, "profile": self.profile,
            "pairs": self.pairs, "sysctl": self.sysctl, "mss": self.mss,
        }


def vars_of(direction):
    d = {k: v for k, v in vars(direction).items() if k != "reorder"}
    d["reorder"] = vars(direction.reorder)
    return d


def load_scenario(name, overrides=None):
    path = _resolve(name, SCENARIO_DIR)
    d = _load(path)
    for key, val in (overrides or {}).items():
        node = d
        parts = key.split(".")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = val
    return Scenario(d, path)


class Profile:
    def __init__(self, d, path):
        _check_keys(d, path, ("description", "both", "sender", "receiver"))
        self.name = os.path.basename(path)[:-5]
        self.description = d.get("description", "")
        both = d.get("both", {})
        self.sender = {**both, **d.get("sender", {})}
        self.receiver = {**both, **d.get("receiver", {})}


def load_profile(name):
    path = _resolve(name, PROFILE_DIR)
    return Profile(_load(path), path)
