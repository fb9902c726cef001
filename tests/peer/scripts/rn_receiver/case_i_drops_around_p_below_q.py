"""The RN-TCP receiver, seed 001 §IV case (i), P:n < Q:n, P:min < P:n <
P:max < Q:n (example P:n = 5, Q:n = 9, P:min = 4, P:max = 8): 4, 6, 7 and 8
leave the reorder list (they were reordered when 9 arrived with a trusted
option) and are dropped: no ACK that names them carries the drop-negative
bit (§IV-A)."""


from rnpeer import MODULES, SYSCTL, case  # noqa: F401


def run(t):
    case(t, q=9, p=5, lo=4, hi=8, holes=[4, 6, 7, 8], reorder=set(),
         proven_q=True)
