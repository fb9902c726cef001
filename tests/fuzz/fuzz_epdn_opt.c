// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: the EPDN option walker and codec and the header parsers of
 * sch_epdn/epdn_core.c, then what the qdisc does with what they return.
 *
 *   u8 caplen, u32 avail, u8 flags, then caplen bytes: an IPv4 header as
 *	copied by the qdisc (at most 60); parsed with epdn_parse_ipv4().
 *	flags bit 0: GSO; bit 1: avail is tot_len + avail % 256.
 *   u8 tcp caplen, u32 l4_len, then the TCP header; parsed with
 *	epdn_parse_tcp().  flags bit 2: l4_len is what the IPv4 header says.
 *   u8 ttl, u8 stamp flags, u16 mtu: the stamp of a record (the segment's
 *	range) into this packet, as sch_epdn does, and the header re-parsed.
 *	The flags are what sch_epdn passes (HOST, V2), never EMPTY.
 *
 * The option walker runs on the header's option bytes against tcp_rn's
 * own walker (rn_ipopt_find(), the receiver's copy of the same code): the
 * two must agree.  Every parser reads an exact-size copy.
 */
#include "tests/fuzz/fuzz.h"
#include "sch_epdn/epdn_core.c"
#include "tcp_rn/rn_recv_core.c"
#include "tests/unit/epdn_check.h"

#define F_GSO		0x01
#define F_AVAIL_TOT	0x02
#define F_L4_FROM_IP	0x04

/* The two walkers of the one option list (RFC 791) agree. */
static void check_walkers(const u8 *opts, u32 len)
{
	u8 *buf = fuzz_dup(opts, len);
	int e = epdn_opt_find(buf, len), r = rn_ipopt_find(buf, len);
	struct epdn_opt eo;
	struct rn_epdn ro;

	FUZZ_CHECK(e == EPDN_ENOENT || e == EPDN_EBADMSG || e >= 0);
	FUZZ_CHECK(e == EPDN_ENOENT ? r == RN_ENOENT :
		   e == EPDN_EBADMSG ? r == RN_EBADMSG : r == e);
	if (e >= 0) {
		FUZZ_CHECK((u32)e + EPDN_OPT_LEN <= len);
		FUZZ_CHECK(buf[e] == EPDN_OPT_TYPE &&
			   buf[e + 1] == EPDN_OPT_LEN);
		/* The two decoders agree too. */
		FUZZ_CHECK(epdn_opt_decode(buf + e, len - e, &eo) ==
			   (rn_epdn_decode(buf + e, len - e, &ro) ?
			    EPDN_EBADMSG : EPDN_OK));
	}
	fuzz_free(buf, len);
}

/* decode(encode(o)) == o, and encode(decode(b)) == b. */
static void check_codec(const u8 *b, u32 len)
{
	struct epdn_opt o, d;
	u8 enc[EPDN_OPT_LEN];

	if (epdn_opt_decode(b, len, &o) != EPDN_OK)
		return;
	FUZZ_CHECK(!(o.flags & ~EPDN_FLAGS_MASK));
	epdn_opt_encode(enc, &o);
	FUZZ_CHECK(!memcmp(enc, b, EPDN_OPT_LEN));
	FUZZ_CHECK(epdn_opt_decode(enc, sizeof(enc), &d) == EPDN_OK);
	FUZZ_CHECK(d.ttl == o.ttl && d.flags == o.flags && d.min == o.min &&
		   d.max == o.max);
}

/*
 * What the parser accepted is what the header says; and a header that
 * meets every documented condition is accepted.
 */
static void check_ipv4(const u8 *h, u32 caplen, u32 avail, bool gso,
		       int ret, const struct epdn_ip *ip)
{
	u32 ihl = caplen ? (h[0] & 0x0f) * 4u : 0, tot;
	bool fits;

	if (caplen < EPDN_IPV4_HDR_MIN || h[0] >> 4 != 4) {
		FUZZ_CHECK(ret == EPDN_EBADMSG);
		return;
	}
	tot = gso ? avail : (u32)h[2] << 8 | h[3];
	fits = ihl >= EPDN_IPV4_HDR_MIN && ihl <= caplen && ihl <= avail &&
	       tot >= ihl && tot <= avail;
	if (!fits) {
		FUZZ_CHECK(ret == EPDN_EBADMSG);
		return;
	}
	FUZZ_CHECK(ret == EPDN_OK ||
		   epdn_opt_find(h + EPDN_IPV4_HDR_MIN,
				 ihl - EPDN_IPV4_HDR_MIN) == EPDN_EBADMSG);
	if (ret != EPDN_OK)
		return;
	FUZZ_CHECK(ip->hdr_len == ihl && ip->l3_len == tot);
	FUZZ_CHECK(ip->ttl == h[8] && ip->proto == h[9]);
	FUZZ_CHECK(ip->opt_off == EPDN_ENOENT ||
		   (ip->opt_off >= EPDN_IPV4_HDR_MIN &&
		    ip->opt_off + EPDN_OPT_LEN <= ip->hdr_len));
}

static void check_tcp(const u8 *th, u32 caplen, u32 l4_len, int ret,
		      const struct epdn_tcp *tcp)
{
	u32 doff = caplen >= 20 ? (th[12] >> 4) * 4u : 0;
	struct epdn_range r;

	if (caplen < 20 || l4_len < 20 || doff < 20 || doff > l4_len) {
		FUZZ_CHECK(ret == EPDN_EBADMSG);
		return;
	}
	FUZZ_CHECK(ret == EPDN_OK && tcp->hdr_len == doff);
	FUZZ_CHECK(tcp->end_seq - tcp->seq == l4_len - doff +
		   !!(th[13] & 0x02) + !!(th[13] & 0x01));
	if (epdn_tcp_range(tcp, &r))
		FUZZ_CHECK(r.min == tcp->seq && r.max + 1 == tcp->end_seq);
	else
		FUZZ_CHECK(tcp->end_seq == tcp->seq);
}

/* A stamped header still parses, and carries exactly the option @o. */
static void check_stamped(const u8 *h, u32 hdr_len, u32 l3_len, bool gso,
			  const struct epdn_opt *o)
{
	u8 *copy = fuzz_dup(h, hdr_len);
	struct epdn_opt d;
	struct epdn_ip ip;

	FUZZ_CHECK(epdn_parse_ipv4(copy, hdr_len, l3_len, gso, &ip) ==
		   EPDN_OK);
	FUZZ_CHECK(ip.opt_off >= 0);
	FUZZ_CHECK(epdn_opt_decode(copy + ip.opt_off, hdr_len - ip.opt_off,
				   &d) == EPDN_OK);
	FUZZ_CHECK(d.ttl == o->ttl && d.flags == o->flags &&
		   d.min == o->min && d.max == o->max);
	fuzz_free(copy, hdr_len);
}

/*
 * The record's range @r into the packet: a new option in a plain header,
 * or merged into the option it carries (epdn_stamp() of sch_epdn).
 */
static void stamp(struct fuzz_in *in, const u8 *h, const struct epdn_ip *ip,
		  bool gso, const struct epdn_range *r)
{
	u8 ttl = fuzz_u8(in), out[EPDN_IPV4_HDR_MAX];
	u8 flags = fuzz_u8(in) & (EPDN_F_HOST | EPDN_F_V2);	/* the qdisc's */
	u32 mtu = fuzz_u16(in), l3 = ip->l3_len;
	bool has_opt = ip->opt_off >= 0;
	struct epdn_opt o, before;
	enum epdn_action act;

	act = epdn_stamp_decide(ip->hdr_len, has_opt, gso, l3, mtu);
	FUZZ_CHECK(has_opt ? act == EPDN_ACT_MERGE :
		   gso ? act == EPDN_ACT_DEFER_GSO :
		   ip->hdr_len != EPDN_IPV4_HDR_MIN ? act == EPDN_ACT_DEFER_OPTS :
		   l3 + EPDN_OPT_LEN > mtu ? act == EPDN_ACT_DEFER_MTU :
		   act == EPDN_ACT_INSERT);
	memcpy(out, h, ip->hdr_len);
	if (act == EPDN_ACT_INSERT) {
		epdn_opt_new(&o, ttl, r, flags);
		FUZZ_CHECK(!(o.flags & ~EPDN_FLAGS_MASK) &&
			   !(o.flags & EPDN_F_EMPTY));
		FUZZ_CHECK(o.min == r->min && o.max == r->max);
		epdn_opt_encode(out + EPDN_IPV4_HDR_MIN, &o);
		out[0] += EPDN_OPT_WORDS;
		out[2] = (u8)((l3 + EPDN_OPT_LEN) >> 8);
		out[3] = (u8)(l3 + EPDN_OPT_LEN);
		check_stamped(out, EPDN_IPV4_HDR_MIN + EPDN_OPT_LEN,
			      l3 + EPDN_OPT_LEN, false, &o);
	} else if (act == EPDN_ACT_MERGE) {
		FUZZ_CHECK(epdn_opt_decode(h + ip->opt_off,
					   ip->hdr_len - ip->opt_off,
					   &o) == EPDN_OK);
		o.ttl = epdn_ttl_hop(o.ttl, ip->ttl);
		FUZZ_CHECK(epdn_ttl_hop(o.ttl, ip->ttl) == o.ttl);
		before = o;
		if (epdn_opt_add_range(&o, r, flags)) {
			struct epdn_range u = { o.min, o.max };
			struct epdn_range c = { before.min, before.max };

			FUZZ_CHECK(epdn_range_valid(&u) &&
				   epdn_range_covers(&u, r));
			FUZZ_CHECK((before.flags & EPDN_F_EMPTY) ||
				   epdn_range_covers(&u, &c));
		} else {
			FUZZ_CHECK(o.min == r->min && o.max == r->max);
		}
		FUZZ_CHECK(o.flags == ((before.flags & ~EPDN_F_EMPTY) |
				       (flags & EPDN_FLAGS_MASK)));
		FUZZ_CHECK(!(o.flags & EPDN_F_EMPTY));
		epdn_opt_encode(out + ip->opt_off, &o);
		check_stamped(out, ip->hdr_len, l3, gso, &o);
	}
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	struct fuzz_in in = fuzz_start(data, size);
	u32 caplen = fuzz_u8(&in) % (EPDN_IPV4_HDR_MAX + 1);
	u32 avail = fuzz_u32(&in), tcaplen, l4_len, hlen;
	u8 flags = fuzz_u8(&in), *h, *th;
	bool gso = flags & F_GSO, ip_ok;
	struct epdn_range r, carried;
	struct epdn_tcp tcp;
	struct epdn_ip ip;
	int ret;

	h = fuzz_bytes(&in, caplen, &hlen);
	if ((flags & F_AVAIL_TOT) && hlen >= 4)
		avail = ((u32)h[2] << 8 | h[3]) + avail % 256;
	ret = epdn_parse_ipv4(h, hlen, avail, gso, &ip);
	check_ipv4(h, hlen, avail, gso, ret, &ip);
	ip_ok = ret == EPDN_OK;
	if (hlen > EPDN_IPV4_HDR_MIN) {
		check_walkers(h + EPDN_IPV4_HDR_MIN, hlen - EPDN_IPV4_HDR_MIN);
		check_codec(h + EPDN_IPV4_HDR_MIN, hlen - EPDN_IPV4_HDR_MIN);
	}
	if (ip_ok && ip.opt_off >= 0)
		check_codec(h + ip.opt_off, ip.hdr_len - ip.opt_off);

	tcaplen = fuzz_u8(&in) % (EPDN_IPV4_HDR_MAX + 1);
	l4_len = fuzz_u32(&in);
	if ((flags & F_L4_FROM_IP) && ip_ok)
		l4_len = ip.l3_len - ip.hdr_len;
	th = fuzz_bytes(&in, tcaplen, &tcaplen);
	ret = epdn_parse_tcp(th, tcaplen, l4_len, &tcp);
	check_tcp(th, tcaplen, l4_len, ret, &tcp);

	/* The qdisc's drop path: the segment, merged with what it carries. */
	if (ip_ok && ret == EPDN_OK && epdn_tcp_range(&tcp, &r)) {
		struct epdn_key key;
		struct epdn_opt o;

		epdn_flow_key(&ip, &tcp, &key);
		FUZZ_CHECK(!memcmp(&key.saddr, h + 12, 4) &&
			   !memcmp(&key.daddr, h + 16, 4) &&
			   !memcmp(&key.sport, th, 2) &&
			   !memcmp(&key.dport, th + 2, 2));
		if (ip.opt_off >= 0 &&
		    epdn_opt_decode(h + ip.opt_off, ip.hdr_len - ip.opt_off,
				    &o) == EPDN_OK &&
		    epdn_opt_range(&o, &carried))
			FUZZ_CHECK(merge_consistent(&r, &carried));
		/* GSO packets are at most 64 KiB: the range is valid. */
		if (epdn_range_valid(&r))
			stamp(&in, h, &ip, gso, &r);
	}
	fuzz_free(h, hlen);
	fuzz_free(th, tcaplen);
	return 0;
}
