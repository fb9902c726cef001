"""Where in_ack_event may run before tcp_clean_rtx_queue (plain v6.1 up to
6.1.140), tcp_rn must not steer RACK (hold it back until dupthresh), as
the queue cleaning that follows would undo its edits: with the module's
ack_order_ok at 0, a marked train (seed 001 §IV-B2) is still classified
reordered, but RACK is left alone: it retransmits on its own timer, before
any dupthresh the rule can give (at least 4)."""

import rnsnd

MODULES = rnsnd.MODULES
PARAMS = {"tcp_rn": {"ack_order_ok": 0}}


def run(t):
    t.check(rnsnd.param("ack_order_ok") == "N", "steering refused")
    c = rnsnd.start(t, initcwnd=10)
    rnsnd.next_hole(t, c)
    k, _ = rnsnd.dupacks(t, c, 1, 3, gap=0.3)
    t.check(k is not None and k < 4, "RACK retransmitted before dupthresh")
    n = rnsnd.counters()
    t.check(n["trains_reorder"] == 1, "the train was classified reordered")
    t.check(n["rack_held_acks"] == 0 and n["rack_triggered"] == 0,
            "RACK neither held nor triggered")
