// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: the IPv4 option walker and the header parsers the cores
 * share (include/satnet/hdr.h), the EPDN option codec sch_epdn and tcp_rn
 * share (include/satnet/epdn_opt.h), then what the qdisc does with what
 * they return.
 *
 *   u8 caplen, u32 avail, u8 flags, then caplen bytes: an IPv4 header as
 *	copied by the qdisc (at most 60); parsed with sat_parse_ipv4(), its
 *	EPDN option found with epdn_ip_opt().
 *	flags bit 0: GSO; bit 1: avail is tot_len + avail % 256.
 *   u8 tcp caplen, u32 l4_len, then the TCP header; parsed with
 *	sat_parse_tcp().  flags bit 2: l4_len is what the IPv4 header says.
 *   u8 ttl, u8 stamp flags, u16 mtu: the stamp of a record (the segment's
 *	range) into this packet, as sch_epdn does, and the header re-parsed.
 *	The flags are what sch_epdn passes (HOST, V2), never EMPTY.
 *   then 10 bytes: an option (ttl, flags, min, max) any struct may hold,
 *	encoded and decoded.
 *
 * The option walker runs on the header's option bytes against a reference
 * walker written here from RFC 791, and its answer is checked for what it
 * promises.  The decoder accepts exactly the options of epdn_wire.h,
 * returns what their bytes say and reads no byte past the option; it and
 * the encoder invert each other.  Every parser reads an exact-size copy.
 */
#include "tests/fuzz/fuzz.h"
#include "sch_epdn/epdn_core.c"
#include "tests/unit/epdn_check.h"

#define F_GSO		0x01
#define F_AVAIL_TOT	0x02
#define F_L4_FROM_IP	0x04

/*
 * RFC 791's option list as a reference: options follow each other up to
 * EOL or the end; NOP is one byte, any other option gives its length, at
 * least 2 and within the list.  Positions in 64 bits: nothing can wrap.
 */
static int ref_ipopt_find(const u8 *o, u32 len)
{
	u64 at = 0, size;

	while (at < len && o[at] != SAT_OPT_EOL) {
		if (o[at] == SAT_OPT_NOP) {
			at++;
			continue;
		}
		size = at + 1 < len ? o[at + 1] : 0;
		if (size < 2 || at + size > len)
			return SAT_EBADMSG;
		if (o[at] == EPDN_OPT_TYPE)
			return size == EPDN_OPT_LEN ? (int)at : SAT_EBADMSG;
		at += size;
	}
	return SAT_ENOENT;
}

static bool opt_eq(const struct epdn_opt *a, const struct epdn_opt *b)
{
	return a->ttl == b->ttl && a->flags == b->flags && a->min == b->min &&
	       a->max == b->max;
}

/*
 * The decoder on @len bytes at @b, read from an exact-size copy: it
 * accepts exactly an option of EPDN's type, length and version wholly in
 * @len, returns the fields its bytes hold, writes nothing when it refuses,
 * and reads nothing past the option (a copy cut to EPDN_OPT_LEN decodes
 * the same).
 */
static void check_decode(const u8 *b, u32 len)
{
	const struct epdn_opt poison = { 0xa5, 0xa5, 0xa5a5a5a5, 0xa5a5a5a5 };
	bool ok = len >= EPDN_OPT_LEN && b[0] == 0x9e && b[1] == 12 &&
		  b[3] >> 4 == 1;
	u32 cut = len < EPDN_OPT_LEN ? len : EPDN_OPT_LEN;
	struct epdn_opt o = poison, c = poison;
	u8 *buf = fuzz_dup(b, len), *head = fuzz_dup(b, cut);
	int ret = epdn_opt_decode(buf, len, &o);

	FUZZ_CHECK(ret == (ok ? SAT_OK : SAT_EBADMSG));
	FUZZ_CHECK(epdn_opt_decode(head, cut, &c) == ret && opt_eq(&c, &o));
	if (!ok) {
		FUZZ_CHECK(opt_eq(&o, &poison));
	} else {
		FUZZ_CHECK(o.ttl == b[2] && o.flags == (b[3] & 0x0f));
		FUZZ_CHECK(o.min == ((u32)b[4] << 24 | (u32)b[5] << 16 |
				     (u32)b[6] << 8 | b[7]));
		FUZZ_CHECK(o.max == ((u32)b[8] << 24 | (u32)b[9] << 16 |
				     (u32)b[10] << 8 | b[11]));
	}
	fuzz_free(head, cut);
	fuzz_free(buf, len);
}

/*
 * The walker agrees with the reference; an option it finds is an EPDN
 * option of the right length wholly inside the list, and bytes after it
 * do not change the answer.
 */
static void check_walker(const u8 *opts, u32 len)
{
	u8 *buf = fuzz_dup(opts, len);
	int e = sat_ipopt_find(buf, len);

	FUZZ_CHECK(e == SAT_ENOENT || e == SAT_EBADMSG || e >= 0);
	FUZZ_CHECK(e == ref_ipopt_find(buf, len));
	if (e >= 0) {
		FUZZ_CHECK((u32)e + EPDN_OPT_LEN <= len);
		FUZZ_CHECK(buf[e] == EPDN_OPT_TYPE &&
			   buf[e + 1] == EPDN_OPT_LEN);
		FUZZ_CHECK(sat_ipopt_find(buf, e + EPDN_OPT_LEN) == e);
		check_decode(buf + e, len - e);
	}
	fuzz_free(buf, len);
}

/* decode(encode(o)) == o, and encode(decode(b)) == b. */
static void check_codec(const u8 *b, u32 len)
{
	struct epdn_opt o, d;
	u8 enc[EPDN_OPT_LEN];

	check_decode(b, len);
	if (epdn_opt_decode(b, len, &o) != SAT_OK)
		return;
	FUZZ_CHECK(!(o.flags & ~EPDN_FLAGS_MASK));
	epdn_opt_encode(enc, &o);
	FUZZ_CHECK(!memcmp(enc, b, EPDN_OPT_LEN));
	FUZZ_CHECK(epdn_opt_decode(enc, sizeof(enc), &d) == SAT_OK);
	FUZZ_CHECK(opt_eq(&d, &o));
}

/*
 * Any struct encodes to an option the decoder takes back, flags outside
 * EPDN_FLAGS_MASK dropped; the encoder writes exactly EPDN_OPT_LEN bytes.
 */
static void check_encode(struct fuzz_in *in)
{
	struct epdn_opt o = {
		.ttl = fuzz_u8(in),
		.flags = fuzz_u8(in),
		.min = fuzz_u32(in),
		.max = fuzz_u32(in),
	}, d;
	u8 enc[EPDN_OPT_LEN];

	epdn_opt_encode(enc, &o);
	check_decode(enc, sizeof(enc));
	FUZZ_CHECK(epdn_opt_decode(enc, sizeof(enc), &d) == SAT_OK);
	o.flags &= EPDN_FLAGS_MASK;
	FUZZ_CHECK(opt_eq(&d, &o));
}

/*
 * A header is accepted exactly when it meets every documented condition,
 * and what the parser returns is what the header says.
 */
static void check_ipv4(const u8 *h, u32 caplen, u32 avail, bool gso,
		       int ret, const struct sat_ip *ip)
{
	u32 ihl = caplen ? (h[0] & 0x0f) * 4u : 0, tot;
	bool fits;

	if (caplen < EPDN_IPV4_HDR_MIN || h[0] >> 4 != 4) {
		FUZZ_CHECK(ret == SAT_EBADMSG);
		return;
	}
	tot = gso ? avail : (u32)h[2] << 8 | h[3];
	fits = ihl >= EPDN_IPV4_HDR_MIN && ihl <= caplen && ihl <= avail &&
	       tot >= ihl && tot <= avail;
	FUZZ_CHECK(ret == (fits ? SAT_OK : SAT_EBADMSG));
	if (ret != SAT_OK)
		return;
	FUZZ_CHECK(ip->hdr_len == ihl && ip->tot_len == tot);
	FUZZ_CHECK(ip->ttl == h[8] && ip->proto == h[9]);
	FUZZ_CHECK(ip->frag == !!(((h[6] & 0x3f) << 8) | h[7]));
	FUZZ_CHECK(!memcmp(&ip->saddr, h + 12, 4) &&
		   !memcmp(&ip->daddr, h + 16, 4));
}

/*
 * The gateway's option: the walker's answer, but an EPDN option of
 * another version is foreign (not found), not malformed.
 */
static void check_ip_opt(const u8 *h, const struct sat_ip *ip, int off)
{
	int w = ref_ipopt_find(h + EPDN_IPV4_HDR_MIN,
			       ip->hdr_len - EPDN_IPV4_HDR_MIN);
	struct epdn_opt o;

	if (w < 0) {
		FUZZ_CHECK(off == w);
		return;
	}
	w += EPDN_IPV4_HDR_MIN;
	FUZZ_CHECK(off == (epdn_opt_decode(h + w, ip->hdr_len - w, &o) ?
			   SAT_ENOENT : w));
}

static void check_tcp(const u8 *th, u32 caplen, u32 l4_len, int ret,
		      const struct sat_tcp *tcp)
{
	u32 doff = caplen >= 20 ? (th[12] >> 4) * 4u : 0;
	struct epdn_range r;

	if (caplen < 20 || l4_len < 20 || doff < 20 || doff > l4_len ||
	    doff > caplen) {
		FUZZ_CHECK(ret == SAT_EBADMSG);
		return;
	}
	FUZZ_CHECK(ret == SAT_OK && tcp->hdr_len == doff);
	FUZZ_CHECK(tcp->payload == l4_len - doff);
	FUZZ_CHECK(tcp->end_seq - tcp->seq == l4_len - doff +
		   !!(th[13] & 0x02) + !!(th[13] & 0x01));
	FUZZ_CHECK(tcp->seq == ((u32)th[4] << 24 | (u32)th[5] << 16 |
				(u32)th[6] << 8 | th[7]));
	FUZZ_CHECK(tcp->ack == ((u32)th[8] << 24 | (u32)th[9] << 16 |
				(u32)th[10] << 8 | th[11]));
	FUZZ_CHECK(tcp->win == ((u32)th[14] << 8 | th[15]) &&
		   tcp->flags == th[13]);
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
	struct sat_ip ip;
	int off;

	FUZZ_CHECK(sat_parse_ipv4(copy, hdr_len, l3_len, gso, &ip) == SAT_OK);
	off = epdn_ip_opt(copy, &ip);
	FUZZ_CHECK(off >= 0);
	FUZZ_CHECK(epdn_opt_decode(copy + off, hdr_len - off, &d) == SAT_OK);
	FUZZ_CHECK(d.ttl == o->ttl && d.flags == o->flags &&
		   d.min == o->min && d.max == o->max);
	fuzz_free(copy, hdr_len);
}

/*
 * The record's range @r into the packet: a new option in a plain header,
 * or merged into the option it carries (epdn_stamp() of sch_epdn).
 */
static void stamp(struct fuzz_in *in, const u8 *h, const struct sat_ip *ip,
		  int opt_off, bool gso, const struct epdn_range *r)
{
	u8 ttl = fuzz_u8(in), out[EPDN_IPV4_HDR_MAX];
	u8 flags = fuzz_u8(in) & (EPDN_F_HOST | EPDN_F_V2);	/* the qdisc's */
	u32 mtu = fuzz_u16(in), l3 = ip->tot_len;
	bool has_opt = opt_off >= 0;
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
		FUZZ_CHECK(epdn_opt_decode(h + opt_off, ip->hdr_len - opt_off,
					   &o) == SAT_OK);
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
		epdn_opt_encode(out + opt_off, &o);
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
	int ret, opt_off = SAT_ENOENT;
	struct sat_tcp tcp;
	struct sat_ip ip;

	h = fuzz_bytes(&in, caplen, &hlen);
	if ((flags & F_AVAIL_TOT) && hlen >= 4)
		avail = ((u32)h[2] << 8 | h[3]) + avail % 256;
	ret = sat_parse_ipv4(h, hlen, avail, gso, &ip);
	check_ipv4(h, hlen, avail, gso, ret, &ip);
	if (ret == SAT_OK) {
		opt_off = epdn_ip_opt(h, &ip);
		check_ip_opt(h, &ip, opt_off);
	}
	ip_ok = ret == SAT_OK && opt_off != SAT_EBADMSG;	/* the qdisc's */
	if (hlen > EPDN_IPV4_HDR_MIN) {
		check_walker(h + EPDN_IPV4_HDR_MIN, hlen - EPDN_IPV4_HDR_MIN);
		check_codec(h + EPDN_IPV4_HDR_MIN, hlen - EPDN_IPV4_HDR_MIN);
	}
	if (ip_ok && opt_off >= 0)
		check_codec(h + opt_off, ip.hdr_len - opt_off);

	tcaplen = fuzz_u8(&in) % (SAT_TCP_HDR_MAX + 1);
	l4_len = fuzz_u32(&in);
	if ((flags & F_L4_FROM_IP) && ip_ok)
		l4_len = ip.tot_len - ip.hdr_len;
	th = fuzz_bytes(&in, tcaplen, &tcaplen);
	ret = sat_parse_tcp(th, tcaplen, l4_len, &tcp);
	check_tcp(th, tcaplen, l4_len, ret, &tcp);

	/* The qdisc's drop path: the segment, merged with what it carries. */
	if (ip_ok && ret == SAT_OK && epdn_tcp_range(&tcp, &r)) {
		struct epdn_key key;
		struct epdn_opt o;

		epdn_flow_key(&ip, &tcp, &key);
		FUZZ_CHECK(!memcmp(&key.saddr, h + 12, 4) &&
			   !memcmp(&key.daddr, h + 16, 4) &&
			   !memcmp(&key.sport, th, 2) &&
			   !memcmp(&key.dport, th + 2, 2));
		if (opt_off >= 0 &&
		    epdn_opt_decode(h + opt_off, ip.hdr_len - opt_off,
				    &o) == SAT_OK &&
		    epdn_opt_range(&o, &carried))
			FUZZ_CHECK(merge_consistent(&r, &carried));
		/* GSO packets are at most 64 KiB: the range is valid. */
		if (epdn_range_valid(&r))
			stamp(&in, h, &ip, opt_off, gso, &r);
	}
	check_encode(&in);
	fuzz_free(h, hlen);
	fuzz_free(th, tcaplen);
	return 0;
}
