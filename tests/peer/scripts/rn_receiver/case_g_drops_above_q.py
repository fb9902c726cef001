"""The RN-TCP receiver, seed 001 §IV case (g), P:n < Q:n, P:min > Q:n
(example P:n = 5, Q:n = 9, P:min = 11, P:max = 12): the gap Q:n + 1 ..
P:min - 1 (packet 10) is reordered, 11 and 12 dropped.  The holes below Q
(6, 7, 8) opened on an unproven path and stay unclassified.  Once they
are filled, packet 13 comes without an option: of the gap 10..12 below
it, 11 and 12 are in the drop list and stay dropped (§IV, P:min and P:max
NULL).  Only the ACKs naming 10 carry the drop-negative bit (§IV-A)."""


from rnpeer import MODULES, SYSCTL, case  # noqa: F401


def run(t):
    case(t, q=9, p=5, lo=11, hi=12, holes=[6, 7, 8, 10, 11, 12],
         reorder={10}, beyond=13, beyond_at=3)
