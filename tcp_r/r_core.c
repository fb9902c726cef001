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
#include <satnet/seq.h>

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
 * recovery: the caller then keeps cwnd, and sets ssthresh to it, so that
 * the window goes on growing in congestion avoidance (slow start ends at
 * the first recovery, modified or not).
 */
bool r_recovery_begins(struct r_sender *s, const struct r_ack *a)
{
	s->paths[s->verdict]++;
	if (s->verdict != R_PATH_MODIFIED)
		return false;
	s->flags |= R_F_MOD | R_F_LAST;
	s->last_seq = a->snd_una;
	s->last_ms = a->now_ms;
	return true;
}

/*
 * A recovery ends.  After a modified one cut short by a timeout, returns
 * the ssthresh it asks for (0: none): the one retransmission the seed
 * allows did not repair the hole, so the "not congestion" verdict is
 * withdrawn and the timeout gets the standard response, half the window
 * @wnd before the loss, the cwnd before the recovery or what it grew to
 * (seed 000 §2.2.1 bypasses the reduction of fast recovery only).  It
 * counts as a recovery that turned standard, under drop.  A modified
 * recovery that ends normally asks nothing: its window stays as it is.
 */
u32 r_recovery_ends(struct r_sender *s, bool timeout, u32 wnd)
{
	if (!(s->flags & R_F_MOD))
		return 0;
	s->flags &= ~R_F_MOD;
	if (!timeout)
		return 0;
	s->paths[R_PATH_DROP]++;
	s->turned++;
	s->timeouts++;
	return r_halve(wnd);
}

/*
 * One halving per window of data (RFC 6582 §3.2, RFC 6675 §5): may a
 * congestion signal halve now?  Not before snd_una has passed the snd_nxt
 * of the last halving (r_cut()); a signal refused here is counted.
 */
bool r_may_cut(struct r_sender *s, u32 snd_una)
{
	if (!(s->flags & R_F_CUT) || !sat_before(snd_una, s->cut_seq)) {
		s->flags &= ~R_F_CUT;
		return true;
	}
	s->suppressed++;
	return false;
}

/* A halving happened with @snd_nxt sent. */
void r_cut(struct r_sender *s, u32 snd_nxt)
{
	s->flags |= R_F_CUT;
	s->cut_seq = snd_nxt;
}

/*
 * Proportional Rate Reduction (RFC 6937 §3.1, with Linux's slow-start
 * reduction bound), for one ACK of a reduction toward @ssthresh.
 * @recover_fs is the window the reduction began from (RecoverFS),
 * @prr_delivered what was delivered since it began, this ACK's @delivered
 * included, @prr_out what was sent since, @pipe what is in flight now.
 * @bonus: the ACK advanced snd_una and marked nothing lost (PRR-SSRB's
 * extra segment).  Returns sndcnt, what may be sent on this ACK: cwnd is
 * @pipe + sndcnt.
 *
 * While more than ssthresh is in flight, sends ssthresh/RecoverFS of what
 * was delivered; the ratio is never above 1 (RecoverFS at least
 * ssthresh), so a reduction never sends more than was delivered.  Then,
 * up to ssthresh, what was delivered and not yet sent, or this ACK's
 * delivery, plus the bonus.  The first ACK always sends one segment, the
 * fast retransmission.
 */
u32 r_prr_sndcnt(u32 ssthresh, u32 recover_fs, u32 prr_delivered,
		 u32 prr_out, u32 pipe, u32 delivered, bool bonus)
{
	s64 sndcnt;

	if (recover_fs < ssthresh)
		recover_fs = ssthresh;
	if (!recover_fs)
		recover_fs = 1;
	if (pipe > ssthresh) {
		sndcnt = (s64)div64_u64((u64)ssthresh * prr_delivered +
					recover_fs - 1, recover_fs) - prr_out;
	} else {
		sndcnt = (s64)prr_delivered - prr_out;
		if (sndcnt < delivered)
			sndcnt = delivered;
		if (bonus)
			sndcnt++;
		if (sndcnt > (s64)ssthresh - pipe)
			sndcnt = (s64)ssthresh - pipe;
	}
	if (!prr_out && sndcnt < 1)
		sndcnt = 1;
	return sndcnt > 0 ? (u32)sndcnt : 0;
}

/*
 * The pacing rate, bytes per second, as tcp_update_pacing_rate() sets it:
 * @ss_ratio percent (200 by default) of cwnd * mss / srtt in slow start,
 * while cwnd is below half of ssthresh, @ca_ratio percent (120) after, with
 * cwnd at least what is in flight; at most @max_rate.  @srtt_us is
 * tp->srtt_us, microseconds << 3 (0: no sample, the rate is then per
 * 1/8 us).
 */
u64 r_pacing_rate(u32 mss, u32 cwnd, u32 packets_out, u32 ssthresh,
		  u32 srtt_us, u32 ss_ratio, u32 ca_ratio, u64 max_rate)
{
	u64 rate = (u64)mss * ((1000000 / 100) << 3);

	rate *= cwnd < ssthresh / 2 ? ss_ratio : ca_ratio;
	rate *= cwnd > packets_out ? cwnd : packets_out;
	if (srtt_us)
		rate = div64_u64(rate, srtt_us);
	return rate < max_rate ? rate : max_rate;
}
