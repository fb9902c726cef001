// SPDX-License-Identifier: GPL-2.0
/*
 * TCP-R core, plain C (see include/satnet/r_core.h).
 *
 * Seed 000 §2.2.1: "If none of the three duplicate ACKs received have
 * their drop-negative bit set, then the sender assumes that the packet
 * has been dropped ... and enters fast recovery.  If all the three
 * duplicate ACKs received have their drop-negative bit set and the ECE bit
 * is set to zero (i.e. no ECN information has been received off lately),
 * then the sender assumes that the packet has been reordered or corrupted
 * ... The procedure of reducing the ssthresh and the cwnd in the fast
 * recovery procedure are bypassed.  In order to avoid multiple
 * retransmits, we ensure that a packet assumed to be reordered or
 * corrupted would be retransmitted only once in a RTT."
 */
#ifdef __KERNEL__
#include <linux/string.h>
#else
#include <string.h>
#endif
#include <satnet/r_core.h>
#include <satnet/grow.h>

void r_sender_init(struct r_sender *s)
{
	memset(s, 0, sizeof(*s));
	s->verdict = R_PATH_DROP;
}

/* Reno's halving, as tcp_reno_ssthresh() computes it. */
u32 r_halve(u32 cwnd)
{
	return cwnd / 2 > 2 ? cwnd / 2 : 2;
}

/* "No ECN information has been received off lately": within ece_rtts. */
bool r_ece_recent(const struct r_sender *s, const struct r_params *p,
		  const struct r_ack *a)
{
	u32 srtt = a->srtt_ms ? a->srtt_ms : 1;

	if (a->ece)
		return true;
	if (!(s->flags & R_F_ECE))
		return false;
	return a->now_ms - s->last_ece_ms < p->ece_rtts * srtt;
}

/* The path a recovery for the hole at snd_una would take now. */
enum r_path r_classify(const struct r_sender *s, const struct r_params *p,
		       const struct r_ack *a)
{
	u32 srtt = a->srtt_ms ? a->srtt_ms : 1;

	if (r_ece_recent(s, p, a))
		return R_PATH_ECE;
	if (!a->dn_known || a->dn_distrust || !a->dn_set || a->dn_clear)
		return R_PATH_DROP;
	if ((s->flags & R_F_LAST) && s->last_seq == a->snd_una &&
	    a->now_ms - s->last_ms < srtt)
		return R_PATH_REPEAT;
	return R_PATH_MODIFIED;
}

/*
 * Every ACK, before loss detection.  Remembers ECE, keeps the verdict for
 * a recovery that may begin on this ACK, and turns a running modified
 * recovery standard on an ECE, on a dupACK without the bit, or when its
 * hole went out a second time: the one retransmission the seed allows a
 * reordered or corrupted segment did not repair it.
 */
enum r_action r_on_ack(struct r_sender *s, const struct r_params *p,
		       const struct r_ack *a)
{
	enum r_path why = R_PATH_MAX;

	if (a->ece) {
		s->last_ece_ms = a->now_ms;
		s->flags |= R_F_ECE;
	}
	s->verdict = r_classify(s, p, a);
	if (!(s->flags & R_F_MOD))
		return R_ACT_NONE;
	if (a->ece)
		why = R_PATH_ECE;
	else if (a->dn_known && (a->dn_clear || a->dn_distrust))
		why = R_PATH_DROP;
	else if (a->resent)
		why = R_PATH_REPEAT;
	if (why == R_PATH_MAX)
		return R_ACT_NONE;
	s->flags &= ~R_F_MOD;
	s->paths[why]++;
	s->turned++;
	return R_ACT_HALVE;
}

/*
 * A recovery begins on this ACK.  Returns true for the modified fast
 * recovery: the caller then keeps ssthresh and cwnd at their values
 * before the loss, and hands ssthresh_before back at the end.
 */
bool r_recovery_begins(struct r_sender *s, const struct r_ack *a,
		       u32 ssthresh_before)
{
	s->paths[s->verdict]++;
	if (s->verdict != R_PATH_MODIFIED)
		return false;
	s->flags |= R_F_MOD | R_F_LAST;
	s->last_seq = a->snd_una;
	s->last_ms = a->now_ms;
	s->saved_ssthresh = ssthresh_before;
	s->grow_cnt = 0;
	return true;
}

/*
 * The window @wnd of a running modified recovery after @acked more
 * segments were delivered, grown as cwnd grows outside a recovery (Reno's
 * rule, or with @rho8 Hybla's: include/satnet/grow.h) from the ssthresh
 * before the loss.  The seed bypasses the reduction of fast recovery;
 * Linux's recovery would also stop the growth, for one RTT at least, and
 * a path with a corrupted segment every few RTTs spends most of its time
 * there.
 */
u32 r_grow(struct r_sender *s, u32 wnd, u32 acked, u32 rho8)
{
	return sat_grow(&s->grow_cnt, wnd, s->saved_ssthresh, acked, rho8);
}

/*
 * A recovery ends.  After a modified one, returns the ssthresh it asks for
 * (0: none).  At a normal end that is ssthresh_before, to be given back
 * once the stack has set cwnd (see r_giveback()).  A timeout during it
 * means the one retransmission the seed allows did not repair the hole:
 * the "not congestion" verdict is withdrawn and the timeout gets the
 * standard response, half the window @wnd: the cwnd before the
 * recovery, or what the recovery has grown it to (seed 000 §2.2.1
 * bypasses the reduction of fast recovery only).  It counts as a
 * recovery that turned standard, under drop.
 */
u32 r_recovery_ends(struct r_sender *s, bool timeout, u32 wnd)
{
	if (!(s->flags & R_F_MOD))
		return 0;
	s->flags &= ~R_F_MOD;
	if (!timeout)
		return s->saved_ssthresh;
	s->paths[R_PATH_DROP]++;
	s->turned++;
	return r_halve(wnd);
}

/*
 * The ssthresh after a modified recovery, once cwnd has been set to the
 * cwnd before the loss: the ssthresh before it, unless the stack undid
 * the recovery and restored a larger one.
 */
u32 r_giveback(u32 saved, u32 ssthresh, bool undone)
{
	if (undone && ssthresh > saved)
		return ssthresh;
	return saved;
}
