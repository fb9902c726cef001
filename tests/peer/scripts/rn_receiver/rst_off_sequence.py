"""A reset ends the receiver's flow only at exactly its in-order point
(RFC 5961 §3.2), as TCP itself does: one a byte past it (TCP answers with
a challenge ACK) or far outside the window (TCP ignores it) leaves the
flow and its lists alone, so the challenge ACK still names the reordered
hole with the drop-negative bit (§IV-A), and the hole's fill is ACKed as
before.  Only the reset at the in-order point frees the flow."""


from rnpeer import MODULES, SYSCTL, TRUSTED, open_conn, deliver, send, seq, acked, counters  # noqa: E402,E501,F401


def reset(c, at):
    c.send(c.segment(0, flags="R", raw_seq=c.p_abs(seq(1)) + at - 1))


def run(t):
    c = open_conn(t)
    deliver(c, 1, TRUSTED)              # a proven path, in order to 2
    send(c, 3, TRUSTED)                 # 2 is reordered
    acked(c, 2, True)
    reset(c, seq(2) + 1)                # in the window, not exact
    acked(c, 2, True)                   # TCP's challenge ACK, still marked
    reset(c, seq(2) + 0x40000000)       # outside the window: ignored
    reset(c, seq(2) - 1)                # below it: ignored
    send(c, 2)
    acked(c, 4, False)
    st = counters()
    t.check(st["flows_freed_rst"] == 0 and st["flows_created"] == 1 and
            st["flows_live"] == 1,
            "the flow outlived three resets off its in-order point (%s)" %
            {k: v for k, v in st.items() if k.startswith("flows")})
    t.check(st.get("rst_off_sequence") == 3,
            "three resets counted off sequence (%s)" %
            st.get("rst_off_sequence"))
    reset(c, seq(4))                    # exactly rcv_nxt: the end
    t.sleep(0.2)
    st = counters()
    t.check(st["flows_freed_rst"] == 1 and st["flows_live"] == 0,
            "the reset at rcv_nxt freed the flow (%d freed, %d live)" %
            (st["flows_freed_rst"], st["flows_live"]))
