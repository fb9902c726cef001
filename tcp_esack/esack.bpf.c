// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_esack: TCP ESACK as a BPF congestion control (struct_ops
 * tcp_congestion_ops), for kernels that refuse unsigned modules but load
 * BPF, as the kernel's own bpf_cubic (tools/testing/selftests/bpf).
 *
 * The rules are the module's: the plain-C core (esack_core.c) and the
 * hooks (esack_hooks.h) are compiled in as they are; this file adds the
 * kernel helpers BPF lacks and the struct_ops table.  What differs:
 *
 *   - the core's state is copied to the stack for the hooks that count
 *     an event (esack_edit): count[rule] is a variable index, which the
 *     verifier allows on the stack but not through a pointer into the
 *     socket;
 *   - 6.1 refuses get_info for BPF, so the counters that the module's
 *     get_info reports (the DCTCP slot of TCP_CC_INFO) go to the socket
 *     storage map satnet_cc_info, 16 bytes of struct tcp_dctcp_info per
 *     socket, which userspace reads with the socket's fd as key;
 *   - no module parameters: first_factor and window_span are the
 *     module's defaults (60, 0), fixed at build time.
 *
 * The only field of the socket written is tp->snd_ssthresh, besides the
 * state in icsk_ca_priv (bpf_tcp_ca_btf_struct_access allows both).
 * Build: make bpf; use: docs/esack.md.
 */

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char _license[] SEC("license") = "GPL";

/*
 * The core's functions have external linkage; made static here, the
 * verifier checks them with their caller (clang inlines them all), not as
 * global functions, whose pointer arguments it would take for memory that
 * may be NULL, and no unused copy stays in the object.
 */
#pragma clang attribute push(__attribute__((internal_linkage)), apply_to = function)
#include "esack_core.c"
#pragma clang attribute pop

/* Reno's helpers, kfuncs for BPF congestion controls. */
extern u32 tcp_reno_ssthresh(struct sock *sk) __ksym;
extern void tcp_reno_cong_avoid(struct sock *sk, u32 ack, u32 acked) __ksym;
extern u32 tcp_reno_undo_cwnd(struct sock *sk) __ksym;

/* What the module gets from net/tcp.h and net/inet_connection_sock.h. */
static __always_inline struct inet_connection_sock *inet_csk(const struct sock *sk)
{
	return (struct inet_connection_sock *)sk;
}

static __always_inline void *inet_csk_ca(const struct sock *sk)
{
	return (void *)inet_csk(sk)->icsk_ca_priv;
}

static __always_inline struct tcp_sock *tcp_sk(const struct sock *sk)
{
	return (struct tcp_sock *)sk;
}

static __always_inline u32 tcp_snd_cwnd(const struct tcp_sock *tp)
{
	return tp->snd_cwnd;
}

static __always_inline u32 tcp_packets_in_flight(const struct tcp_sock *tp)
{
	return tp->packets_out - (tp->sacked_out + tp->lost_out) +
	       tp->retrans_out;
}

/* TCP_CC_INFO's DCTCP slot, as the module's get_info fills it. */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct tcp_dctcp_info);
} satnet_cc_info SEC(".maps");

static void esack_params(struct esack_params *p)
{
	p->first_pct = ESACK_FIRST_DEFAULT;
	p->span = ESACK_SPAN_DEFAULT;
}

static __always_inline struct esack_core *esack_edit(struct esack_core *core,
						     struct esack_core *buf)
{
	__builtin_memcpy(buf, core, sizeof(*buf));
	return buf;
}

static void esack_report(struct sock *sk, const struct esack_core *c)
{
	struct tcp_dctcp_info *info;

	info = bpf_sk_storage_get(&satnet_cc_info, sk, NULL,
				  BPF_SK_STORAGE_GET_F_CREATE);
	if (!info)
		return;
	info->dctcp_enabled = 1;
	info->dctcp_ce_state = esack_diag_state(c);
	info->dctcp_alpha = c->count[ESACK_A1];
	info->dctcp_ab_ecn = c->count[ESACK_A2];
	info->dctcp_ab_tot = c->count[ESACK_B1];
}

static __always_inline void esack_commit(struct sock *sk,
					 struct esack_core *core,
					 const struct esack_core *c)
{
	__builtin_memcpy(core, c, sizeof(*core));
	esack_report(sk, core);
}

#include "esack_hooks.h"

#define BUILD_BUG_ON(cond) ((void)sizeof(char[1 - 2 * !!(cond)]))

SEC("struct_ops/bpf_esack_init")
void BPF_PROG(bpf_esack_init, struct sock *sk)
{
	BUILD_BUG_ON(sizeof(struct esack) > sizeof(inet_csk(sk)->icsk_ca_priv));
	esack_init(sk);
}

SEC("struct_ops/bpf_esack_ssthresh")
u32 BPF_PROG(bpf_esack_ssthresh, struct sock *sk)
{
	return esack_ssthresh(sk);
}

SEC("struct_ops/bpf_esack_cong_avoid")
void BPF_PROG(bpf_esack_cong_avoid, struct sock *sk, u32 ack, u32 acked)
{
	tcp_reno_cong_avoid(sk, ack, acked);
}

SEC("struct_ops/bpf_esack_undo_cwnd")
u32 BPF_PROG(bpf_esack_undo_cwnd, struct sock *sk)
{
	return esack_undo_cwnd(sk);
}

SEC("struct_ops/bpf_esack_set_state")
void BPF_PROG(bpf_esack_set_state, struct sock *sk, u8 new_state)
{
	esack_set_state(sk, new_state);
}

SEC("struct_ops/bpf_esack_cwnd_event")
void BPF_PROG(bpf_esack_cwnd_event, struct sock *sk, enum tcp_ca_event event)
{
	esack_cwnd_event(sk, event);
}

SEC("struct_ops/bpf_esack_in_ack_event")
void BPF_PROG(bpf_esack_in_ack_event, struct sock *sk, u32 flags)
{
	esack_in_ack_event(sk, flags);
}

/* The map's name is the congestion control's (bpftool struct_ops ...). */
SEC(".struct_ops")
struct tcp_congestion_ops bpf_esack = {
	.init		= (void *)bpf_esack_init,
	.ssthresh	= (void *)bpf_esack_ssthresh,
	.cong_avoid	= (void *)bpf_esack_cong_avoid,
	.undo_cwnd	= (void *)bpf_esack_undo_cwnd,
	.set_state	= (void *)bpf_esack_set_state,
	.cwnd_event	= (void *)bpf_esack_cwnd_event,
	.in_ack_event	= (void *)bpf_esack_in_ack_event,
	.name		= "bpf_esack",
};
