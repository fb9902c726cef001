# SPDX-License-Identifier: GPL-2.0
"""Name the state our congestion modules report in `ss -ti`.

rn, r and esack report four numbers through the DCTCP slot of get_info
(include/satnet/cc_info.h), the only tcp_cc_info layout that iproute2's
ss prints field by field.  So ss shows them as
"dctcp:(ce_state:A,alpha:B,ab_ecn:C,ab_tot:D)" although nothing of DCTCP
is used.  What A-D mean for each module (docs/rn-tcp.md, docs/tcp-r.md,
docs/esack.md):

  cc     ce_state              alpha      ab_ecn          ab_tot
  rn     false fast retrans.   dupthresh  kval, per-mille drop-negative ACKs
  r      modified recoveries   drop       ece             repeat
  esack  SecWnd + 10 * B2      A1 events  A2 events       B1 events

ce_state is 16 bits wide: the kernel saturates it at 65535 (rn, r), and
esack caps B2 at 6553.  The other three are 32-bit counters.  The modules
always set dctcp_enabled, so "dctcp:fallback_mode" (DCTCP's own Reno
fallback) never comes from them.

Command line: `satnet ss` (satnet/cli.py) rewrites the output of
`ss -tinH`.
"""

import re

MODULES = ("rn", "r", "esack")
# ss prints these option flags before the congestion control's name.
SS_FLAGS = frozenset(("ts", "sack", "ecn", "ecnseen", "fastopen", "bidir"))
DCTCP = re.compile(r"\bdctcp:\(ce_state:(\d+),alpha:(\d+),ab_ecn:(\d+),"
                   r"ab_tot:(\d+)\)")
PLAIN = re.compile(r"[a-z][a-z0-9_]*\Z")


def _rn(ce_state, alpha, ab_ecn, ab_tot):
    return {"false_frs": ce_state, "dupthresh": alpha,
            "kval_permille": ab_ecn, "kval": ab_ecn / 1000,
            "dn_acks": ab_tot}


def _r(ce_state, alpha, ab_ecn, ab_tot):
    return {"modified": ce_state, "drop": alpha, "ece": ab_ecn,
            "repeat": ab_tot}


def _esack(ce_state, alpha, ab_ecn, ab_tot):
    return {"secwnd": ce_state % 10, "b2": ce_state // 10, "a1": alpha,
            "a2": ab_ecn, "b1": ab_tot}


DECODERS = {"rn": _rn, "r": _r, "esack": _esack}


def decode_fields(cc, ce_state, alpha, ab_ecn, ab_tot):
    """The four DCTCP-slot numbers of module @cc, by their real names.

    rn: false_frs (false fast retransmits a D-SACK revealed), dupthresh
    (the rule in force, segments), kval_permille and kval (the same as a
    fraction), dn_acks (ACKs seen with the drop-negative bit).
    r: recoveries begun on each path of §2.2.1: modified (no cut), drop,
    ece, repeat (the last three halve).
    esack: secwnd (1: the next loss would be in an odd window) and the
    counts of loss events by final rule: a1, a2, b1, b2.
    """
    if cc not in DECODERS:
        raise ValueError("%r is not one of our modules %s" % (cc, MODULES))
    return DECODERS[cc](ce_state, alpha, ab_ecn, ab_tot)


def _shown(cc, fields):
    """(name, text) pairs in the order format_ss prints them."""
    if cc == "rn":
        k = fields["kval_permille"]
        return [("false_frs", fields["false_frs"]),
                ("dupthresh", fields["dupthresh"]),
                ("kval", "%d.%03d" % divmod(k, 1000)),
                ("dn_acks", fields["dn_acks"])]
    if cc == "esack":
        return [(n, fields[n]) for n in ("secwnd", "a1", "a2", "b1", "b2")]
    return list(fields.items())


def _address(tokens):
    """(state, local, peer, index after peer), found after Recv-Q Send-Q."""
    for i in range(len(tokens) - 3):
        if tokens[i].isdigit() and tokens[i + 1].isdigit():
            state = tokens[i - 1] if i else None
            return state, tokens[i + 2], tokens[i + 3], i + 4
    return None, None, None, 0


def _cc(tokens):
    """The congestion control's name: the first plain word after the
    option flags (ts sack ecn ...) and before cwnd."""
    for t in tokens:
        if t.startswith("cwnd:"):
            break
        if PLAIN.match(t) and t not in SS_FLAGS:
            return t
    return None


def _values(tokens):
    """key:value tokens, first occurrence wins."""
    kv = {}
    for t in tokens:
        k, sep, v = t.partition(":")
        if sep and k not in kv:
            kv[k] = v
    return kv


def _blocks(text):
    """One block per socket: its address line and the indented lines
    below it.  Joining the blocks gives @text back."""
    return [b for b in re.split(r"(?m)^(?=\S)", text) if b]


def _num(kv, key, conv=int):
    return conv(kv[key]) if key in kv else None


def _rtt(kv):
    if "rtt" not in kv:
        return None, None
    rtt, _, var = kv["rtt"].partition("/")
    return float(rtt), float(var) if var else None


def _entry(block):
    tokens = block.split()
    state, local, peer, after = _address(tokens)
    if local is None:
        return None
    cc, kv = _cc(tokens[after:]), _values(tokens[after:])
    m = DCTCP.search(block)
    dctcp = tuple(map(int, m.groups())) if m else None
    rtt, rttvar = _rtt(kv)
    return {"state": state, "local": local, "peer": peer, "cc": cc,
            "cwnd": _num(kv, "cwnd"), "ssthresh": _num(kv, "ssthresh"),
            "rtt_ms": rtt, "rttvar_ms": rttvar,
            "dctcp": dict(zip(("ce_state", "alpha", "ab_ecn", "ab_tot"),
                              dctcp)) if dctcp else None,
            "module": decode_fields(cc, *dctcp)
            if dctcp and cc in DECODERS else None}


def decode_ss(text):
    """One dict per connection of `ss -tinH` (or `ss -tin`, `-tinO`).

    Keys: state, local, peer (as ss prints them), cc, cwnd, ssthresh
    (None when ss leaves it out, i.e. still infinite), rtt_ms, rttvar_ms,
    dctcp (the raw four fields, or None), module (decode_fields() when cc
    is rn, r or esack and the fields are there, else None).
    """
    return [e for e in map(_entry, _blocks(text)) if e is not None]


def _rewrite(block):
    tokens = block.split()
    cc = _cc(tokens[_address(tokens)[3]:])
    if cc not in DECODERS:
        return block

    def name(m):
        fields = decode_fields(cc, *map(int, m.groups()))
        return "%s:(%s)" % (cc, ",".join("%s:%s" % p
                                         for p in _shown(cc, fields)))
    return DCTCP.sub(name, block)


def format_ss(text):
    """@text with each rn, r or esack socket's "dctcp:(...)" replaced by
    its real fields, e.g. "rn:(false_frs:1,dupthresh:60,kval:0.200,
    dn_acks:1234)".  Everything else, other congestion controls (DCTCP
    itself too) included, is left byte for byte."""
    return "".join(map(_rewrite, _blocks(text)))
