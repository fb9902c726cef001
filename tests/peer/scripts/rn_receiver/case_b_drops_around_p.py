"""The RN-TCP receiver, seed 001 §IV case (b), P:n > Q:n, P:min > Q:n,
P:min < P:n < P:max (example P:n = 6, Q:n = 2, P:min = 4, P:max = 7):
packet 3 is reordered, 4, 5 and 7 dropped ("P:min to P:n - 1 and P:n + 1
to P:max").  Only the ACK naming 3 carries the drop-negative bit (§IV-A)."""


from rnpeer import MODULES, SYSCTL, case  # noqa: F401


def run(t):
    case(t, q=2, p=6, lo=4, hi=7, holes=[3, 4, 5, 7], reorder={3})
