"""The RN-TCP receiver, seed 001 §IV case (d), P:n > Q:n, P:min < Q:n <
P:max < P:n (example P:n = 6, Q:n = 2, P:min = 1, P:max = 4): 3 and 4 are
dropped (Q:n itself arrived), the gap P:max + 1 .. P:n - 1 (packet 5) is
reordered.  Only the ACK naming 5 carries the drop-negative bit (§IV-A)."""


from rnpeer import MODULES, SYSCTL, case  # noqa: F401


def run(t):
    case(t, q=2, p=6, lo=1, hi=4, holes=[3, 4, 5], reorder={5})
