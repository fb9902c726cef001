"""The RN-TCP receiver, seed 001 §IV case (j), P:n < P:min, P:max < Q:n
(example P:n = 5, Q:n = 9, P:min = 6, P:max = 8): 6, 7 and 8 are dropped.
The seed only adds them to the drop list; here a drop report always wins
and they also leave the reorder list (docs/rn-tcp.md, deviations), so no
ACK that names them carries the drop-negative bit (§IV-A)."""


from rnpeer import MODULES, SYSCTL, case  # noqa: F401


def run(t):
    case(t, q=9, p=5, lo=6, hi=8, holes=[6, 7, 8], reorder=set(),
         proven_q=True)
