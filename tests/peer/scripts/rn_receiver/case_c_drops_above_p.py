"""The RN-TCP receiver, seed 001 §IV case (c), P:n > Q:n, P:min > P:n
(example P:n = 6, Q:n = 2, P:min = 7, P:max = 9): packets 3, 4 and 5
(Q:n + 1 .. P:n - 1) are reordered, 7, 8 and 9 dropped.  Packet 10 then
comes without an option: the gap 7..9 below it is in the drop list, so
it stays dropped (§IV, P:min and P:max NULL).  The ACKs naming 3, 4 and 5
carry the drop-negative bit, those naming 7, 8 and 9 do not (§IV-A)."""


from rnpeer import MODULES, SYSCTL, case  # noqa: F401


def run(t):
    case(t, q=2, p=6, lo=7, hi=9, holes=[3, 4, 5, 7, 8, 9],
         reorder={3, 4, 5}, beyond=10)
