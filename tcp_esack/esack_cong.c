// SPDX-License-Identifier: GPL-2.0
/*
 * TCP ESACK: Enhanced Selective Acknowledgements.
 *
 * A.M. Abdelrahman, M.S. Abdalla, B.M. Ali, V. Prakash, R.K.Z. Sabudin,
 * "Improving the Performance of TCP in LEO Satellite Environment"
 * (seed 002).  ESACK assumes that losses in one window are corruption
 * and that losses in two consecutive windows are congestion (section
 * "Description of Enhanced Selective Acknowledgements"):
 *
 *   odd window   A1 cwnd < ssthresh: keep cwnd, then +1 segment per RTT
 *                A2 cwnd >= ssthresh: cwnd = 60 % of cwnd (first_factor)
 *                A3 RTO: the standard timeout
 *   even window  B1 cwnd < ssthresh: cwnd = 50 % of cwnd
 *                B2 cwnd >= ssthresh: cwnd = 50 % of the original ssthresh
 *                B3 RTO: the standard timeout
 *
 * Loss recovery itself is Linux's SACK recovery; the rules live in the
 * plain-C core (esack_core.c), esack_hooks.h maps them onto the hooks
 * (shared with the BPF version, esack.bpf.c), this file adds the module
 * parameters, get_info and the registration.
 *
 * The seed's SSThresh, which A1/A2 and B1/B2 compare cwnd against and B2
 * halves, is kept apart from tp->snd_ssthresh (which after each event
 * holds the post-recovery cwnd): it starts at the connection's initial
 * ssthresh (e.g. a route's "ssthresh 70") and changes only on timeouts.
 * docs/esack.md has the details and the deviations from the seed.
 */

#include <linux/module.h>
#include <linux/inet_diag.h>
#include <net/tcp.h>
#include <satnet/esack_core.h>
#include <satnet/cc_info.h>

static int first_factor = ESACK_FIRST_DEFAULT;
static int window_span = ESACK_SPAN_DEFAULT;

static int esack_param_set(const char *val, const struct kernel_param *kp,
			   bool (*valid)(long))
{
	int v, err;

	err = kstrtoint(val, 0, &v);
	if (err)
		return err;
	if (!valid(v))
		return -EINVAL;
	WRITE_ONCE(*(int *)kp->arg, v);
	return 0;
}

static int esack_set_first(const char *val, const struct kernel_param *kp)
{
	return esack_param_set(val, kp, esack_first_valid);
}

static int esack_set_span(const char *val, const struct kernel_param *kp)
{
	return esack_param_set(val, kp, esack_span_valid);
}

static const struct kernel_param_ops esack_first_ops = {
	.set = esack_set_first,
	.get = param_get_int,
};

static const struct kernel_param_ops esack_span_ops = {
	.set = esack_set_span,
	.get = param_get_int,
};

module_param_cb(first_factor, &esack_first_ops, &first_factor, 0644);
MODULE_PARM_DESC(first_factor,
		 "rule A2: cwnd kept after an odd-window loss with cwnd >= ssthresh, percent (50-100, default 60)");
module_param_cb(window_span, &esack_span_ops, &window_span, 0644);
MODULE_PARM_DESC(window_span,
		 "next window: windows of data after a loss event's recovery point in which a loss is even (0 = no limit, the seed's alternation, default; 1-64)");

static void esack_params(struct esack_params *p)
{
	p->first_pct = READ_ONCE(first_factor);
	p->span = READ_ONCE(window_span);
}

/* The module works on the socket's state itself (esack_hooks.h). */
static struct esack_core *esack_edit(struct esack_core *core,
				     struct esack_core *buf)
{
	return core;
}

static void esack_commit(struct sock *sk, struct esack_core *core,
			 const struct esack_core *c)
{
}

/* get_info reads the counters where they are. */
static void esack_report(struct sock *sk, const struct esack_core *c)
{
}

#include "esack_hooks.h"

/*
 * ss -ti shows it as "dctcp:(ce_state:S,alpha:A1,ab_ecn:A2,ab_tot:B1)"
 * with S = SecWnd + 10 * B2 (docs/esack.md).
 */
static size_t esack_get_info(struct sock *sk, u32 ext, int *attr,
			     union tcp_cc_info *info)
{
	const struct esack_core *c = &((struct esack *)inet_csk_ca(sk))->core;

	return satnet_cc_info(ext, attr, info, esack_diag_state(c),
			      c->count[ESACK_A1], c->count[ESACK_A2],
			      c->count[ESACK_B1]);
}

static struct tcp_congestion_ops tcp_esack __read_mostly = {
	.init		= esack_init,
	.ssthresh	= esack_ssthresh,
	.cong_avoid	= tcp_reno_cong_avoid,
	.undo_cwnd	= esack_undo_cwnd,
	.set_state	= esack_set_state,
	.cwnd_event	= esack_cwnd_event,
	.in_ack_event	= esack_in_ack_event,
	.get_info	= esack_get_info,

	.owner		= THIS_MODULE,
	.name		= "esack",
};

static int __init esack_register(void)
{
	BUILD_BUG_ON(sizeof(struct esack) > ICSK_CA_PRIV_SIZE);
	return tcp_register_congestion_control(&tcp_esack);
}

static void __exit esack_unregister(void)
{
	tcp_unregister_congestion_control(&tcp_esack);
}

module_init(esack_register);
module_exit(esack_unregister);

MODULE_AUTHOR("satnet project");
MODULE_LICENSE("GPL");
MODULE_VERSION(SATNET_VERSION);
MODULE_DESCRIPTION("TCP ESACK: two-consecutive-window loss response (LEO satellites)");
