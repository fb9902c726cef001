"""The RN-TCP receiver, seed 001 §IV case (e), P:n > Q:n, P:max < Q:n
(example P:n = 6, Q:n = 4, P:min = 1, P:max = 3): the dropped packets all
arrived already, and the gap Q:n + 1 .. P:n - 1 (packet 5) is reordered:
the ACK naming 5 carries the drop-negative bit (§IV-A)."""


from rnpeer import MODULES, SYSCTL, case  # noqa: F401


def run(t):
    case(t, q=4, p=6, lo=1, hi=3, holes=[5], reorder={5})
