"""The RN-TCP receiver, seed 001 §IV case (h), P:n < Q:n, P:min < P:n,
P:max > Q:n (example P:n = 5, Q:n = 9, P:min = 4, P:max = 10): 4..10 leave
the reorder list (4..8 were reordered when 9 arrived with a trusted
option) and 4, 6, 7, 8 and 10 are dropped: from then on no ACK carries the
drop-negative bit (§IV-A)."""


from rnpeer import MODULES, SYSCTL, case  # noqa: F401


def run(t):
    case(t, q=9, p=5, lo=4, hi=10, holes=[4, 6, 7, 8, 10], reorder=set(),
         proven_q=True)
