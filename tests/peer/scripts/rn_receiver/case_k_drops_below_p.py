"""The RN-TCP receiver, seed 001 §IV case (k), P:n < Q:n, P:max < P:n
(example P:n = 5, Q:n = 9, P:min = 2, P:max = 3): 2 and 3 are dropped and
the gap P:max + 1 .. P:n - 1 (packet 4) is reordered; the holes above P
(6, 7, 8) opened on an unproven path and stay unclassified.  Only the ACK
naming 4 carries the drop-negative bit (§IV-A)."""


from rnpeer import MODULES, SYSCTL, case  # noqa: F401


def run(t):
    case(t, q=9, p=5, lo=2, hi=3, holes=[2, 3, 4, 6, 7, 8], reorder={4})
