"""The RN-TCP receiver, seed 001 §IV case (f), P:n > Q:n, P:min < Q:n,
P:max > P:n (example P:n = 6, Q:n = 4, P:min = 1, P:max = 7): 5 and 7 are
dropped and nothing is reordered, so the gap Q:n + 1 .. P:n - 1, which the
drop list holds, is not marked: no ACK carries the drop-negative bit
(§IV-A)."""


from rnpeer import MODULES, SYSCTL, case  # noqa: F401


def run(t):
    case(t, q=4, p=6, lo=1, hi=7, holes=[5, 7], reorder=set())
