"""The RN-TCP receiver, seed 001 §IV case (a), P:n > Q:n, P:min > Q:n,
P:max < P:n, with the example of seed 001 §II (P:n = 7, Q:n = 2, P:min = 4,
P:max = 5): the gaps Q:n + 1 .. P:min - 1 (packet 3) and P:max + 1 ..
P:n - 1 (packet 6) are reordered, 4 and 5 dropped.  Every ACK that names
3 or 6 carries the drop-negative bit (§IV-A), those that name 4, 5 or the
packet after Q do not."""


from rnpeer import MODULES, SYSCTL, case  # noqa: F401


def run(t):
    case(t, q=2, p=7, lo=4, hi=5, holes=[3, 4, 5, 6], reorder={3, 6})
