// SPDX-License-Identifier: GPL-2.0-only
/*
 * mroce-pktfuzz - malformed and forged MetaRoCE packets against mroce
 * devices, while verified transfers run, and a judgement of what the
 * devices did with them.
 *
 * Written from Documentation/metaroce-spec.rst alone: the encoder, the
 * decoder and the model of the receiver's packet-level checks P1..P12
 * below share no code with the driver (mroce_wire.[ch]), so the driver's
 * parser and this model are two independent readings of one text, and the
 * model predicts, for every packet sent, the device counter that must
 * count it (spec MR-13, MR-14: the first failing check decides).
 *
 * Packets leave from the network namespace the program runs in (the
 * "attacker"), over raw IPv4/IPv6 sockets: with the attacker's own source
 * address, or with a spoofed one (a device's peer).  Live QPs and their
 * PSNs are read the way any local user can read them, through RDMA
 * netlink (what "rdma resource show qp -dd" prints: lqpn, rqpn, sq-psn,
 * rq-psn, state and the driver's outstanding_pkts, rate_mbps,
 * rate_hint_mbps, retx_pkts); device counters through RDMA netlink too
 * (what "rdma statistic show" prints).
 *
 * Optional helpers, both in another network namespace (the bridge that
 * joins the hosts):
 *   --hold NS:DEV,...   a "hold": a tc flower rule on the ingress of DEVs
 *                       that drops every MetaRoCE datagram the hosts send
 *                       each other, for a fraction of a second.  While it
 *                       is in place nothing can be delivered, so any
 *                       packet a requester counts as delivered, any
 *                       request a responder accepts and any answer a
 *                       device sends come from forged packets.  Holds
 *                       stay well inside the verbs retry budget.
 *   --sniff NS:DEV,...  AF_PACKET capture of what the hosts send, to
 *                       learn what a forged READ/ATOMIC response must
 *                       echo (PSN, MSN, sink) and a WRITE's target.
 *
 * Every case prints its packet and byte counts, the predicted counter
 * deltas and the observed ones, what it found, and a verdict line
 *	mroce-pktfuzz: verdict CASE: ok
 *	mroce-pktfuzz: verdict CASE: FAIL: reason; reason...
 * Exit status: 0 every case ok, 1 a case failed, 2 usage, 3 setup error.
 * "--list" prints the cases.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/netlink.h>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <linux/tc_act/tc_gact.h>
#include <net/if.h>
#include <netinet/in.h>
#include <rdma/rdma_netlink.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define ME "mroce-pktfuzz"

/* ------------------------------------------------------------ basics */

static void __attribute__((format(printf, 1, 2))) say(const char *fmt, ...)
{
	va_list ap;

	fputs(ME ": ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static void cleanup(void);

static void __attribute__((noreturn, format(printf, 2, 3)))
die(int rc, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs(ME ": error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	cleanup();
	exit(rc);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_s(double s)
{
	struct timespec ts;

	if (s <= 0)
		return;
	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* xoshiro256** seeded by splitmix64: same seed, same packets */
static uint64_t rs[4];

static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void rnd_seed(uint64_t s)
{
	int i;

	for (i = 0; i < 4; i++)
		rs[i] = splitmix(&s);
}

static uint64_t rol64(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static uint64_t rnd(void)
{
	uint64_t r = rol64(rs[1] * 5, 7) * 9, t = rs[1] << 17;

	rs[2] ^= rs[0];
	rs[3] ^= rs[1];
	rs[1] ^= rs[2];
	rs[0] ^= rs[3];
	rs[2] ^= t;
	rs[3] = rol64(rs[3], 45);
	return r;
}

static uint64_t rnd_below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

static bool chance(unsigned int pct)
{
	return rnd_below(100) < pct;
}

static void rnd_fill(uint8_t *p, size_t n)
{
	while (n--)
		*p++ = (uint8_t)rnd();
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static void put24(uint8_t *p, uint32_t v)
{
	p[0] = v >> 16;
	p[1] = v >> 8;
	p[2] = v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, v >> 32);
	put32(p + 4, v);
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

/* Big-endian store of the low @size bytes of @v at @p. */
static void put_be(uint8_t *p, unsigned int size, uint64_t v)
{
	while (size--) {
		p[size] = (uint8_t)v;
		v >>= 8;
	}
}

/* 24-bit PSN arithmetic (spec "Conventions") */
#define PSN_MASK	0xffffffu
#define PSN_HALF	0x800000u

static uint32_t psn_add(uint32_t a, int64_t d)
{
	return (uint32_t)((int64_t)a + d) & PSN_MASK;
}

static uint32_t fwd(uint32_t a, uint32_t b)
{
	return (b - a) & PSN_MASK;
}

/* ------------------------------------------------------------ the wire */
/*
 * Spec "Packet format".  Offsets of the extension headers in the packet,
 * 0 = absent; header lengths in bytes.
 */
#define BH_LEN		32
#define MAX_PAYLOAD	9216	/* P11; also the largest large segment */
#define MAX_PMTU	4096	/* the largest path MTU; a datagram's payload */
#define MAX_MSG		0x80000000u	/* 2^31 */
#define GSI_QKEY	0x80010000u
#define SACK_BITS	256

enum {
	OP_SEND = 0x01, OP_SEND_IMM = 0x02, OP_WRITE = 0x03,
	OP_WRITE_IMM = 0x04, OP_READ_REQ = 0x05, OP_READ_RESP = 0x06,
	OP_CMP_SWP = 0x07, OP_FETCH_ADD = 0x08, OP_ATOMIC_RESP = 0x09,
	OP_SEND_INV = 0x0a, OP_ACK = 0x10, OP_NAK = 0x11, OP_PROBE = 0x12,
	OP_UD_SEND = 0x20, OP_UD_SEND_IMM = 0x21,
};

/* BH.flags */
#define F_AR	0x01	/* ACK_REQ */
#define F_SE	0x02	/* SOLICITED */
#define F_FI	0x04	/* FIRST */
#define F_LA	0x08	/* LAST */
#define F_RT	0x10	/* RETRANSMIT */
#define F_PB	0x20	/* PB_ACK: a request carries PBH and KH; a PROBE asks */
#define PB_LEN	64	/* PBH 8 + KH 56 */

/* KH.echo_flags (bits 4..7 reserved); KH.seg_max, byte 23 */
#define ECHO_CE		0x01
#define ECHO_DUP	0x02
#define ECHO_PB		0x04	/* answers a PROBE with PB_ACK */
#define ECHO_SEG	0x08	/* ... and large segments: seg_max != 0 */
#define ECHO_DEFINED	0x0f
#define SEG_UNIT	32	/* seg_max: the largest segment, x 32 bytes */

/* BH fields an opcode leaves unused (must be zero) */
#define U_PSN	0x01
#define U_PSEQ	0x02
#define U_MSN	0x04

/* opcode properties */
#define O_PAY	0x01	/* carries payload */
#define O_RQ	0x02	/* DH rq_seq in use */
#define O_IMM	0x04	/* immediate in use (DH or DGH) */
#define O_DG	0x08	/* datagram opcode (UD) */
#define O_REQ	0x10	/* request: owns a PSN */
#define O_RSP	0x20	/* READ/ATOMIC response */

struct opd {
	uint8_t op;
	const char *name;
	uint8_t hlen, dh, mh, rh, ah, arh, kh, nkh, dgh;
	uint8_t flags_ok, unused, props;
};

static const struct opd optab[] = {
	{ OP_SEND, "SEND", 48, .dh = 32, .flags_ok = F_AR | F_SE | F_FI | F_LA | F_RT,
	  .props = O_PAY | O_RQ | O_REQ },
	{ OP_SEND_IMM, "SEND_WITH_IMM", 48, .dh = 32,
	  .flags_ok = F_AR | F_SE | F_FI | F_LA | F_RT,
	  .props = O_PAY | O_RQ | O_IMM | O_REQ },
	{ OP_WRITE, "RDMA_WRITE", 64, .mh = 32, .dh = 48,
	  .flags_ok = F_AR | F_FI | F_LA | F_RT, .props = O_PAY | O_REQ },
	{ OP_WRITE_IMM, "RDMA_WRITE_WITH_IMM", 64, .mh = 32, .dh = 48,
	  .flags_ok = F_AR | F_SE | F_FI | F_LA | F_RT,
	  .props = O_PAY | O_RQ | O_IMM | O_REQ },
	{ OP_READ_REQ, "RDMA_READ_REQ", 72, .mh = 32, .rh = 48,
	  .flags_ok = F_RT, .props = O_REQ },
	{ OP_READ_RESP, "RDMA_READ_RESP", 64, .mh = 32, .dh = 48,
	  .flags_ok = F_AR | F_FI | F_LA | F_RT, .props = O_PAY | O_RSP },
	{ OP_CMP_SWP, "ATOMIC_CMP_SWP", 64, .mh = 32, .ah = 48,
	  .flags_ok = F_RT, .props = O_REQ },
	{ OP_FETCH_ADD, "ATOMIC_FETCH_ADD", 64, .mh = 32, .ah = 48,
	  .flags_ok = F_RT, .props = O_REQ },
	{ OP_ATOMIC_RESP, "ATOMIC_RESP", 40, .arh = 32, .flags_ok = F_RT,
	  .props = O_RSP },
	/* the DH imm field carries the rkey to invalidate: "in use" */
	{ OP_SEND_INV, "SEND_WITH_INV", 48, .dh = 32,
	  .flags_ok = F_AR | F_SE | F_FI | F_LA | F_RT,
	  .props = O_PAY | O_RQ | O_IMM | O_REQ },
	{ OP_ACK, "ACK", 88, .kh = 32, .unused = U_PSEQ | U_MSN },
	{ OP_NAK, "NAK", 96, .kh = 32, .nkh = 88, .unused = U_PSEQ | U_MSN },
	{ OP_PROBE, "PROBE", 32, .unused = U_PSN | U_MSN },
	{ OP_UD_SEND, "UD_SEND", 40, .dgh = 32, .flags_ok = F_SE,
	  .unused = U_PSEQ | U_MSN, .props = O_PAY | O_DG },
	{ OP_UD_SEND_IMM, "UD_SEND_WITH_IMM", 40, .dgh = 32, .flags_ok = F_SE,
	  .unused = U_PSEQ | U_MSN, .props = O_PAY | O_IMM | O_DG },
};

#define NOPS	(sizeof(optab) / sizeof(optab[0]))

static const struct opd *opd_of(unsigned int op)
{
	size_t i;

	for (i = 0; i < NOPS; i++)
		if (optab[i].op == op)
			return &optab[i];
	return NULL;
}

/*
 * Outcome of the spec's packet-level validation (P1..P12, in that order)
 * and the device counter each drop is counted in.
 */
enum reason {
	V_OK, V_SHORT, V_VERSION, V_OPCODE, V_HDR_LEN, V_RESERVED, V_FLAGS,
	V_QPN, V_PATH, V_FIELD, V_LENGTH, V_NREASON
};

static const char *const reason_counter[V_NREASON] = {
	"(valid)", "rx_drop_short", "rx_drop_version", "rx_drop_opcode",
	"rx_drop_hdr_len", "rx_drop_reserved", "rx_drop_flags",
	"rx_drop_qpn", "rx_drop_path", "rx_drop_field", "rx_drop_length",
};

/* @va + @len > 2^64 (the last byte of the range beyond the address space) */
static bool va_overflows(uint64_t va, uint64_t len)
{
	return len && va > (uint64_t)0 - len;
}

/*
 * Flags an opcode may carry: the table's, and PB_ACK on requests (which
 * then carry PBH and KH) and PROBE (the capability question).  The
 * generator leaves PB_ACK out of the table: it builds no PBH.
 */
static uint16_t flags_allowed(const struct opd *o)
{
	return o->flags_ok |
	       ((o->props & O_REQ) || o->op == OP_PROBE ? F_PB : 0);
}

/* Header length of a packet of @o with BH.flags @flags. */
static size_t hdr_len(const struct opd *o, uint16_t flags)
{
	return o->hlen + ((o->props & O_REQ) && (flags & F_PB) ? PB_LEN : 0);
}

/* A KH's reserved bits (echo flags 4..7; byte 23 is seg_max) */
static bool kh_reserved(const uint8_t *kh)
{
	return kh[22] & ~ECHO_DEFINED;
}

/* A KH's field rules (P10) */
static bool kh_field_bad(const uint8_t *kh)
{
	uint16_t rx = get16(kh + 12), ce = get16(kh + 14);

	if (ce > rx || (kh[31] & 1))
		return true;
	/* seg_max comes with ECHO_SEG, and only with it */
	if (!(kh[22] & ECHO_SEG) != !kh[23])
		return true;
	/* no triggering packet: no echo fields, ack_delay, echo_flags, seg_max */
	return !rx && (get32(kh) || get32(kh + 4) || get32(kh + 8) ||
		       get16(kh + 20) || kh[22] || kh[23]);
}

/*
 * The receiver's packet-level checks of the spec ("Packet-level
 * validation"), in order, for the UDP payload @p of @len bytes.
 */
static enum reason spec_check(const uint8_t *p, size_t len)
{
	const struct opd *o;
	const uint8_t *kh, *nk, *pb;
	uint16_t flags;
	uint32_t dq, sq;
	size_t pay, hl;

	if (len < BH_LEN)
		return V_SHORT;				/* P1 */
	if (p[0] != 1)
		return V_VERSION;			/* P2 */
	o = opd_of(p[1]);
	if (!o)
		return V_OPCODE;			/* P3 */
	flags = get16(p + 2);
	hl = hdr_len(o, flags);
	if (p[4] * 8u != hl)
		return V_HDR_LEN;			/* P4 */
	if (len < hl)
		return V_SHORT;				/* P5 */
	pay = len - hl;
	kh = o->kh ? p + o->kh : NULL;
	nk = o->nkh ? p + o->nkh : NULL;
	pb = hl != o->hlen ? p + o->hlen : NULL;	/* PBH, then its KH */

	/* P6: reserved bits, unused BH fields, unused extension fields */
	if (p[12] || p[20] || get32(p + 28) || (flags & ~0x3f))
		return V_RESERVED;
	if (((o->unused & U_PSN) && get24(p + 13)) ||
	    ((o->unused & U_PSEQ) && get32(p + 16)) ||
	    ((o->unused & U_MSN) && get24(p + 21)))
		return V_RESERVED;
	if (o->mh && get32(p + o->mh + 12))
		return V_RESERVED;
	if (o->dh && ((!(o->props & O_RQ) && get32(p + o->dh + 8)) ||
		      (!(o->props & O_IMM) && get32(p + o->dh + 12))))
		return V_RESERVED;
	if (o->op == OP_FETCH_ADD && get64(p + o->ah + 8))
		return V_RESERVED;
	if (kh && kh_reserved(kh))
		return V_RESERVED;
	if (pb && (pb[0] || get32(pb + 4) || kh_reserved(pb + 8)))
		return V_RESERVED;
	if (nk && (nk[2] || nk[3] || nk[4]))
		return V_RESERVED;
	if (o->dgh && !(o->props & O_IMM) && get32(p + o->dgh + 4))
		return V_RESERVED;

	if (flags & ~flags_allowed(o))
		return V_FLAGS;				/* P7 */

	dq = get24(p + 5);				/* P8 */
	sq = get24(p + 9);
	if (!dq || !sq || (!(o->props & O_DG) && (dq == 1 || sq == 1)))
		return V_QPN;

	if (p[8] > 63 || (kh && kh[8] > 63) || (pb && pb[8 + 8] > 63))
		return V_PATH;				/* P9 */

	if ((kh && kh_field_bad(kh)) || (pb && kh_field_bad(pb + 8)))
		return V_FIELD;				/* P10 */
	if (nk) {
		uint32_t d = fwd(get24(p + 13), get24(nk + 5));
		uint8_t code = nk[0], rnr = nk[1];

		if (code < 1 || code > 5 || rnr > 31 || (rnr && code != 2))
			return V_FIELD;
		if ((code == 1 && (d < SACK_BITS || d >= PSN_HALF)) ||
		    (code == 2 && d >= SACK_BITS) || (code > 2 && d))
			return V_FIELD;
	}

	/* P11: a datagram is one packet of at most the largest PMTU */
	if ((!(o->props & O_PAY) && pay) || pay > MAX_PAYLOAD ||
	    ((o->props & O_DG) && pay > MAX_PMTU))
		return V_LENGTH;
	if (o->dh) {
		uint32_t off = get32(p + o->dh), ml = get32(p + o->dh + 4);

		if (ml > MAX_MSG || (uint64_t)off + pay > ml || (!pay && ml))
			return V_LENGTH;
		if (o->mh && va_overflows(get64(p + o->mh), ml))
			return V_LENGTH;
	}
	if (o->rh) {
		const uint8_t *rh = p + o->rh;
		uint32_t ml = get32(rh + 12), off = get32(rh + 16);
		uint32_t ln = get32(rh + 20);

		if (ml > MAX_MSG || (uint64_t)off + ln > ml || (!ln && ml))
			return V_LENGTH;
		if (va_overflows(get64(p + o->mh), ml) ||
		    va_overflows(get64(rh), ml))
			return V_LENGTH;
	}

	if (o->dh) {					/* P12 */
		uint32_t off = get32(p + o->dh), ml = get32(p + o->dh + 4);

		if (!!(flags & F_FI) != (off == 0) ||
		    !!(flags & F_LA) != ((uint64_t)off + pay == ml))
			return V_FLAGS;
	}
	return V_OK;
}

/* A packet in host form; fields of headers the opcode lacks are ignored. */
struct pkt {
	uint8_t op, path, echo_path, echo_flags, seg_max, code, rnr;
	int words;				/* hdr_words; -1: the opcode's */
	uint16_t flags, rx_count, ce_count, ack_delay;
	uint32_t dqpn, sqpn, psn, pseq, msn, ts;
	uint32_t offset, msg_len, rq_seq, imm, rkey, sink_key;
	uint32_t rd_len, rd_off, rd_length;
	uint32_t echo_ts, echo_pseq, echo_psn, hint, nak_psn, qkey;
	uint64_t va, sink_va, swap_add, compare, orig, sack[4];
	uint32_t pay;				/* payload bytes */
};

#define PKT_MAX		(65535 - 8)

/* Encode @k into @b (room for at least PKT_MAX bytes); returns the length. */
static size_t encode(uint8_t *b, const struct pkt *k)
{
	const struct opd *o = opd_of(k->op);
	size_t hl = o ? o->hlen : BH_LEN;
	uint8_t *h;
	size_t i;

	memset(b, 0, hl);
	b[0] = 1;
	b[1] = k->op;
	put16(b + 2, k->flags);
	b[4] = (uint8_t)(k->words < 0 ? hl / 8 : (unsigned int)k->words);
	put24(b + 5, k->dqpn);
	b[8] = k->path;
	put24(b + 9, k->sqpn);
	put24(b + 13, k->psn);
	put32(b + 16, k->pseq);
	put24(b + 21, k->msn);
	put32(b + 24, k->ts);
	if (o && o->dh) {
		h = b + o->dh;
		put32(h, k->offset);
		put32(h + 4, k->msg_len);
		put32(h + 8, k->rq_seq);
		put32(h + 12, k->imm);
	}
	if (o && o->mh) {
		put64(b + o->mh, k->va);
		put32(b + o->mh + 8, k->rkey);
	}
	if (o && o->rh) {
		h = b + o->rh;
		put64(h, k->sink_va);
		put32(h + 8, k->sink_key);
		put32(h + 12, k->rd_len);
		put32(h + 16, k->rd_off);
		put32(h + 20, k->rd_length);
	}
	if (o && o->ah) {
		put64(b + o->ah, k->swap_add);
		put64(b + o->ah + 8, k->compare);
	}
	if (o && o->arh)
		put64(b + o->arh, k->orig);
	if (o && o->kh) {
		h = b + o->kh;
		put32(h, k->echo_ts);
		put32(h + 4, k->echo_pseq);
		h[8] = k->echo_path;
		put24(h + 9, k->echo_psn);
		put16(h + 12, k->rx_count);
		put16(h + 14, k->ce_count);
		put32(h + 16, k->hint);
		put16(h + 20, k->ack_delay);
		h[22] = k->echo_flags;
		h[23] = k->seg_max;
		for (i = 0; i < 4; i++)
			put64(h + 24 + 8 * i, k->sack[i]);
	}
	if (o && o->nkh) {
		h = b + o->nkh;
		h[0] = k->code;
		h[1] = k->rnr;
		put24(h + 5, k->nak_psn);
	}
	if (o && o->dgh) {
		put32(b + o->dgh, k->qkey);
		put32(b + o->dgh + 4, k->imm);
	}
	for (i = 0; i < k->pay && hl + i < PKT_MAX; i++)
		b[hl + i] = (uint8_t)(0xa5 ^ (i * 37) ^ k->psn);
	return hl + i;
}

/* Decode a packet that passed spec_check() (the sniffer's view). */
static void decode(const uint8_t *b, size_t len, struct pkt *k)
{
	const struct opd *o = opd_of(b[1]);
	const uint8_t *h;

	memset(k, 0, sizeof(*k));
	k->op = b[1];
	k->flags = get16(b + 2);
	k->words = b[4];
	k->dqpn = get24(b + 5);
	k->path = b[8];
	k->sqpn = get24(b + 9);
	k->psn = get24(b + 13);
	k->pseq = get32(b + 16);
	k->msn = get24(b + 21);
	k->ts = get32(b + 24);
	if (!o)
		return;
	k->pay = (uint32_t)(len - hdr_len(o, k->flags));
	if (o->dh) {
		h = b + o->dh;
		k->offset = get32(h);
		k->msg_len = get32(h + 4);
		k->rq_seq = get32(h + 8);
		k->imm = get32(h + 12);
	}
	if (o->mh) {
		k->va = get64(b + o->mh);
		k->rkey = get32(b + o->mh + 8);
	}
	if (o->rh) {
		h = b + o->rh;
		k->sink_va = get64(h);
		k->sink_key = get32(h + 8);
		k->rd_len = get32(h + 12);
		k->rd_off = get32(h + 16);
		k->rd_length = get32(h + 20);
	}
	if (o->ah) {
		k->swap_add = get64(b + o->ah);
		k->compare = get64(b + o->ah + 8);
	}
}

static uint32_t rnd24(void)
{
	return (uint32_t)rnd() & PSN_MASK;
}

/* Random SACK bitmap with bit 0 (ePSN itself) clear. */
static void sack_random(uint64_t *s)
{
	int i;

	for (i = 0; i < 4; i++)
		s[i] = chance(50) ? rnd() : 0;
	s[0] &= ~1ULL;
}

/* Set SACK bits @from .. @to - 1 (0 < from). */
static void sack_range(uint64_t *s, unsigned int from, unsigned int to)
{
	unsigned int i;

	memset(s, 0, 4 * sizeof(*s));
	for (i = from; i < to && i < SACK_BITS; i++)
		s[i / 64] |= 1ULL << (i % 64);
}

/*
 * A random packet of opcode @op that passes every packet-level check,
 * addressed to @dq from @sq, with payload at most @pmtu bytes per packet.
 */
static void pkt_valid(struct pkt *k, uint8_t op, uint32_t dq, uint32_t sq,
		      uint32_t pmtu)
{
	const struct opd *o = opd_of(op);

	memset(k, 0, sizeof(*k));
	k->op = op;
	k->words = -1;
	k->dqpn = dq;
	k->sqpn = sq;
	k->path = (uint8_t)rnd_below(64);
	k->psn = rnd24();
	k->pseq = (uint32_t)rnd();
	k->msn = rnd24();
	k->ts = (uint32_t)rnd();
	if (!o)
		return;
	if (o->unused & U_PSN)
		k->psn = 0;
	if (o->unused & U_PSEQ)
		k->pseq = 0;
	if (o->unused & U_MSN)
		k->msn = 0;
	k->flags = (uint16_t)(rnd() & o->flags_ok & ~(F_FI | F_LA));
	if (o->dh) {
		uint32_t npk;

		switch (rnd_below(4)) {
		case 0:		/* zero-length message */
			k->msg_len = 0;
			k->pay = 0;
			break;
		case 1:		/* single packet */
			k->msg_len = 1 + (uint32_t)rnd_below(pmtu);
			k->pay = k->msg_len;
			break;
		default:	/* a packet of a multi-packet message */
			npk = 2 + (uint32_t)rnd_below(64);
			k->msg_len = pmtu * (npk - 1) + 1 +
				     (uint32_t)rnd_below(pmtu);
			k->offset = pmtu * (uint32_t)rnd_below(npk);
			k->pay = k->msg_len - k->offset < pmtu ?
				 k->msg_len - k->offset : pmtu;
			break;
		}
		if (k->offset == 0)
			k->flags |= F_FI;
		if (k->offset + k->pay == k->msg_len)
			k->flags |= F_LA;
		if (o->props & O_RQ)
			k->rq_seq = (uint32_t)rnd();
		if (o->props & O_IMM)
			k->imm = (uint32_t)rnd();
	}
	if (o->mh) {
		k->va = rnd() >> (chance(50) ? 16 : 0);
		if (va_overflows(k->va, k->msg_len))
			k->va = 0x10000;
		k->rkey = (uint32_t)rnd();
	}
	if (o->rh) {
		k->rd_len = (uint32_t)rnd_below(chance(50) ? 65536 : MAX_MSG);
		k->rd_off = k->rd_len ? (uint32_t)rnd_below(k->rd_len) : 0;
		k->rd_length = k->rd_len ? 1 + (uint32_t)rnd_below(k->rd_len -
								k->rd_off) : 0;
		k->sink_va = rnd() >> 16;
		k->sink_key = (uint32_t)rnd();
		k->va = rnd() >> 16;
	}
	if (o->ah) {
		k->va &= ~7ULL;
		k->swap_add = rnd();
		k->compare = op == OP_CMP_SWP ? rnd() : 0;
	}
	if (o->arh)
		k->orig = rnd();
	if (o->kh) {
		k->rx_count = chance(30) ? 0 : (uint16_t)rnd_below(65536);
		if (k->rx_count) {
			k->ce_count = (uint16_t)rnd_below(k->rx_count + 1u);
			k->echo_ts = (uint32_t)rnd();
			k->echo_pseq = (uint32_t)rnd();
			k->echo_path = (uint8_t)rnd_below(64);
			k->echo_psn = rnd24();
			k->ack_delay = (uint16_t)rnd();
			k->echo_flags = (uint8_t)rnd_below(4);
			/*
			 * sometimes the answer to a capability PROBE: ECHO_PB,
			 * or ECHO_PB, ECHO_SEG and a non-zero seg_max (43 and
			 * 184: what a 1500- and a 6000-byte link take; 255:
			 * 9000 bytes and more).  Valid only: a seg_max without ECHO_SEG
			 * or ECHO_SEG without one come from the boundary values
			 * of kh_seg_max and kh_echo_flags and from mutations.
			 */
			if (chance(10))
				k->echo_flags |= ECHO_PB;
			if (chance(10)) {
				static const uint8_t sm[] = {
					1, 16, 43, 64, 184, 255,
				};

				k->echo_flags |= ECHO_PB | ECHO_SEG;
				k->seg_max = sm[rnd_below(sizeof(sm))];
			}
		}
		k->hint = chance(50) ? 0 : (uint32_t)rnd();
		sack_random(k->sack);
	}
	if (o->nkh) {
		k->code = 1 + (uint8_t)rnd_below(5);
		if (k->code == 2)
			k->rnr = (uint8_t)rnd_below(32);
		k->nak_psn = k->code == 1 ?
			     psn_add(k->psn, SACK_BITS +
				     (int64_t)rnd_below(PSN_HALF - SACK_BITS)) :
			     k->code == 2 ?
			     psn_add(k->psn, (int64_t)rnd_below(SACK_BITS)) :
			     k->psn;
	}
	if (o->dgh) {
		k->qkey = (uint32_t)rnd();
		if (k->qkey == GSI_QKEY)
			k->qkey ^= 1;
		if (o->props & O_IMM)
			k->imm = (uint32_t)rnd();
		k->pay = (uint32_t)rnd_below(pmtu + 1);
	}
}

/* ------------------------------------------------------------ options */

#define MAXDEV		4
#define MAXIF		4

struct addr {
	int af;				/* AF_INET, AF_INET6 */
	struct in_addr a4;
	struct in6_addr a6;
};

struct dev {
	char name[64];
	uint32_t index;			/* RDMA device index */
	bool found;
	struct addr ip4, ip6;		/* its netdev's addresses */
	bool has6;
	char netns[128];		/* namespace of its netdev, or "" */
	struct addr own4, own6;		/* our source address towards it */
};

static struct {
	struct dev dev[MAXDEV];
	int ndev;
	uint64_t seed;
	bool seed_set;
	double seconds;
	uint64_t count;
	double rate;			/* packets/s of paced cases */
	unsigned int port;
	unsigned int pmtu;
	bool pmtu_set;
	double wait_live;
	double probe_rate_max;
	unsigned int retx_slack;
	unsigned int hold_ms, probe_hold_ms, gap_ms;
	int verbose;
	unsigned int dump;
	char hold_ns[128], sniff_ns[128];
	char hold_if[MAXIF][IFNAMSIZ], sniff_if[MAXIF][IFNAMSIZ];
	int nhold_if, nsniff_if;
	const char *cases;
} opt = {
	.seconds = 2, .count = 1000000, .rate = 5000, .port = 4792,
	.pmtu = 1024, .wait_live = 20, .probe_rate_max = 1000,
	.retx_slack = 16, .hold_ms = 60, .probe_hold_ms = 300, .gap_ms = 250,
};

/* ------------------------------------------------------------ namespaces */

static int ns_home = -1;	/* the namespace we started in */

static int ns_open(const char *ns)
{
	char path[256];
	int fd;

	if (strchr(ns, '/'))
		snprintf(path, sizeof(path), "%s", ns);
	else
		snprintf(path, sizeof(path), "/run/netns/%s", ns);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die(3, "network namespace %s: %s", path, strerror(errno));
	return fd;
}

/* Enter @ns (a name in /run/netns or a path); ns_leave() comes back. */
static void ns_enter(const char *ns)
{
	int fd = ns_open(ns);

	if (ns_home < 0) {
		ns_home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
		if (ns_home < 0)
			die(3, "/proc/self/ns/net: %s", strerror(errno));
	}
	if (setns(fd, CLONE_NEWNET))
		die(3, "setns %s: %s", ns, strerror(errno));
	close(fd);
}

static void ns_leave(void)
{
	if (setns(ns_home, CLONE_NEWNET))
		die(3, "setns back: %s", strerror(errno));
}

/* ------------------------------------------------------------ sending */

static struct {
	int raw4, raw6, udp4, udp6;
} sk = { -1, -1, -1, -1 };

static const char *addr_str(const struct addr *a)
{
	static char buf[4][INET6_ADDRSTRLEN];
	static int i;
	char *s = buf[i++ % 4];

	inet_ntop(a->af, a->af == AF_INET ? (const void *)&a->a4 :
		  (const void *)&a->a6, s, INET6_ADDRSTRLEN);
	return s;
}

static bool addr_parse(const char *s, struct addr *a)
{
	memset(a, 0, sizeof(*a));
	if (inet_pton(AF_INET, s, &a->a4) == 1) {
		a->af = AF_INET;
		return true;
	}
	if (inet_pton(AF_INET6, s, &a->a6) == 1) {
		a->af = AF_INET6;
		return true;
	}
	return false;
}

static bool addr_eq(const struct addr *a, const struct addr *b)
{
	if (a->af != b->af)
		return false;
	return a->af == AF_INET ? a->a4.s_addr == b->a4.s_addr :
	       !memcmp(&a->a6, &b->a6, sizeof(a->a6));
}

static socklen_t sa_of(const struct addr *a, uint16_t port,
		       struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (a->af == AF_INET) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		s4->sin_addr = a->a4;
		return sizeof(*s4);
	}
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

	s6->sin6_family = AF_INET6;
	s6->sin6_port = htons(port);
	s6->sin6_addr = a->a6;
	return sizeof(*s6);
}

/* Our own source address towards @dst (what a plain UDP socket uses). */
static void own_addr(const struct addr *dst, struct addr *own)
{
	struct sockaddr_storage ss;
	socklen_t sl = sa_of(dst, (uint16_t)opt.port, &ss);
	int fd = socket(dst->af, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || connect(fd, (struct sockaddr *)&ss, sl))
		die(3, "no route to %s: %s", addr_str(dst), strerror(errno));
	sl = sizeof(ss);
	getsockname(fd, (struct sockaddr *)&ss, &sl);
	close(fd);
	memset(own, 0, sizeof(*own));
	own->af = dst->af;
	if (dst->af == AF_INET)
		own->a4 = ((struct sockaddr_in *)&ss)->sin_addr;
	else
		own->a6 = ((struct sockaddr_in6 *)&ss)->sin6_addr;
}

static void tx_open(void)
{
	int one = 1, pmtud = IP_PMTUDISC_DONT, pmtud6 = IPV6_PMTUDISC_DONT;

	sk.raw4 = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW);
	sk.raw6 = socket(AF_INET6, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW);
	if (sk.raw4 < 0)
		die(3, "raw IPv4 socket: %s (root needed)", strerror(errno));
	sk.udp4 = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	sk.udp6 = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (sk.udp4 < 0)
		die(3, "UDP socket: %s", strerror(errno));
	/* oversized datagrams go out fragmented */
	setsockopt(sk.udp4, IPPROTO_IP, IP_MTU_DISCOVER, &pmtud, sizeof(pmtud));
	if (sk.udp6 >= 0)
		setsockopt(sk.udp6, IPPROTO_IPV6, IPV6_MTU_DISCOVER, &pmtud6,
			   sizeof(pmtud6));
	if (sk.raw6 >= 0)
		setsockopt(sk.raw6, IPPROTO_IPV6, IPV6_HDRINCL, &one,
			   sizeof(one));
}

static uint32_t csum_add(uint32_t sum, const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		sum += get16(p + i);
	if (n & 1)
		sum += (uint32_t)p[n - 1] << 8;
	return sum;
}

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* UDP checksum modes */
enum { CS_OK, CS_ZERO, CS_BAD };

/* largest UDP payload a raw datagram can carry without fragmenting */
#define RAW_MAX4	(1500 - 20 - 8)
#define RAW_MAX6	(1500 - 40 - 8)

static uint64_t tx_errors;

/*
 * Send the MetaRoCE datagram @p (@len bytes) from @src to @dst.  Up to
 * the link MTU it goes out raw (any source address, any checksum);
 * bigger datagrams go through a UDP socket, fragmented, from our own
 * address.  Returns false if it could not be sent.
 */
static bool tx(const struct addr *src, const struct addr *dst,
	       const uint8_t *p, size_t len, int cs)
{
	static uint8_t frame[1500];
	struct sockaddr_storage ss;
	socklen_t sl = sa_of(dst, 0, &ss);
	uint16_t sport = 49152 + (uint16_t)rnd_below(16384);
	size_t iph = dst->af == AF_INET ? 20 : 40, ulen = 8 + len;
	uint8_t *ip = frame, *u = frame + iph;
	uint32_t sum;
	ssize_t r;

	if (len > (dst->af == AF_INET ? RAW_MAX4 : RAW_MAX6)) {
		int fd = dst->af == AF_INET ? sk.udp4 : sk.udp6;

		sl = sa_of(dst, (uint16_t)opt.port, &ss);
		r = sendto(fd, p, len, 0, (struct sockaddr *)&ss, sl);
		if (r < 0)
			tx_errors++;
		return r == (ssize_t)len;
	}
	memset(frame, 0, iph + 8);
	if (dst->af == AF_INET) {
		ip[0] = 0x45;
		ip[1] = 0x02;			/* ECT(0) */
		put16(ip + 2, (uint16_t)(iph + ulen));
		put16(ip + 6, 0x4000);		/* DF */
		ip[8] = 64;
		ip[9] = IPPROTO_UDP;
		memcpy(ip + 12, &src->a4, 4);
		memcpy(ip + 16, &dst->a4, 4);
		sum = csum_add(0, ip + 12, 8) + IPPROTO_UDP + (uint32_t)ulen;
	} else {
		put32(ip, 6u << 28 | 0x02u << 20 | sport);
		put16(ip + 4, (uint16_t)ulen);
		ip[6] = IPPROTO_UDP;
		ip[7] = 64;
		memcpy(ip + 8, &src->a6, 16);
		memcpy(ip + 24, &dst->a6, 16);
		sum = csum_add(0, ip + 8, 32) + IPPROTO_UDP + (uint32_t)ulen;
	}
	put16(u, sport);
	put16(u + 2, (uint16_t)opt.port);
	put16(u + 4, (uint16_t)ulen);
	memcpy(u + 8, p, len);
	sum = csum_add(sum, u, ulen);
	if (cs != CS_ZERO) {
		uint16_t c = csum_fold(sum);

		if (!c)
			c = 0xffff;
		if (cs == CS_BAD)
			c = (c ^ 0x5a5a) ? c ^ 0x5a5a : c ^ 0xa5a5;
		put16(u + 6, c);
	}
	r = sendto(dst->af == AF_INET ? sk.raw4 : sk.raw6, frame, iph + ulen,
		   0, (struct sockaddr *)&ss, sl);
	if (r < 0)
		tx_errors++;
	return r == (ssize_t)(iph + ulen);
}

/* ------------------------------------------------------------ netlink */

struct nlreq {
	struct nlmsghdr h;
	uint8_t body[2048];
};

static uint32_t nl_seq;

static struct nlattr *nla_put(struct nlreq *r, uint16_t type,
			      const void *data, size_t len)
{
	struct nlattr *a = (struct nlattr *)((uint8_t *)r +
					     NLMSG_ALIGN(r->h.nlmsg_len));

	a->nla_type = type;
	a->nla_len = (uint16_t)(NLA_HDRLEN + len);
	if (len)
		memcpy((uint8_t *)a + NLA_HDRLEN, data, len);
	r->h.nlmsg_len = NLMSG_ALIGN(r->h.nlmsg_len) + NLA_ALIGN(a->nla_len);
	return a;
}

static void nla_put_u32(struct nlreq *r, uint16_t type, uint32_t v)
{
	nla_put(r, type, &v, sizeof(v));
}

static struct nlattr *nla_nest(struct nlreq *r, uint16_t type)
{
	return nla_put(r, type | NLA_F_NESTED, NULL, 0);
}

static void nla_nest_end(struct nlreq *r, struct nlattr *a)
{
	a->nla_len = (uint16_t)((uint8_t *)r + r->h.nlmsg_len - (uint8_t *)a);
}

static bool nla_ok(const struct nlattr *a, int rem)
{
	return rem >= (int)sizeof(*a) && a->nla_len >= sizeof(*a) &&
	       a->nla_len <= rem;
}

static const struct nlattr *nla_next(const struct nlattr *a, int *rem)
{
	*rem -= NLA_ALIGN(a->nla_len);
	return (const struct nlattr *)((const uint8_t *)a +
				       NLA_ALIGN(a->nla_len));
}

static const void *nla_data(const struct nlattr *a)
{
	return (const uint8_t *)a + NLA_HDRLEN;
}

static int nla_len(const struct nlattr *a)
{
	return a->nla_len - NLA_HDRLEN;
}

static uint64_t nla_uint(const struct nlattr *a)
{
	uint64_t v64;
	uint32_t v32;

	switch (nla_len(a)) {
	case 1:
		return *(const uint8_t *)nla_data(a);
	case 4:
		memcpy(&v32, nla_data(a), 4);
		return v32;
	case 8:
		memcpy(&v64, nla_data(a), 8);
		return v64;
	}
	return 0;
}

#define nla_for_each(a, start, len, rem)				\
	for ((rem) = (len), (a) = (start); nla_ok((a), (rem));		\
	     (a) = nla_next((a), &(rem)))

typedef void (*nl_cb)(const struct nlmsghdr *h, void *arg);

/*
 * Send @r on @fd and feed every answer to @cb until the dump ends or the
 * request is acknowledged.  Returns 0 or a negative errno.
 */
static int nl_talk(int fd, struct nlreq *r, nl_cb cb, void *arg)
{
	static uint8_t buf[1 << 18];
	bool multi = r->h.nlmsg_flags & NLM_F_DUMP;

	r->h.nlmsg_seq = ++nl_seq;
	if (send(fd, r, r->h.nlmsg_len, 0) < 0)
		return -errno;
	for (;;) {
		const struct nlmsghdr *h;
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		int len;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		len = (int)n;
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, len);
		     h = NLMSG_NEXT(h, len)) {
			if (h->nlmsg_seq != r->h.nlmsg_seq)
				continue;
			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (h->nlmsg_type == NLMSG_ERROR)
				return ((const struct nlmsgerr *)
					NLMSG_DATA(h))->error;
			if (cb)
				cb(h, arg);
			if (!multi && !(r->h.nlmsg_flags & NLM_F_ACK))
				return 0;
		}
	}
}

static int nl_open(int proto)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, proto);
	int big = 1 << 20;

	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)))
		die(3, "netlink socket (protocol %d): %s", proto,
		    strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	return fd;
}

static void nl_init(struct nlreq *r, uint16_t type, uint16_t flags,
		    size_t fixed)
{
	memset(r, 0, sizeof(r->h) + fixed);
	r->h.nlmsg_len = (uint32_t)NLMSG_LENGTH(fixed);
	r->h.nlmsg_type = type;
	r->h.nlmsg_flags = NLM_F_REQUEST | flags;
}

/* ------------------------------------------------------------ RDMA state */

static int rdma_fd = -1;

#define NLDEV(cmd)	RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, cmd)

/* IB QP types and states as RDMA netlink reports them */
#define QPT_RC		2
#define QPS_RTS		3
static const char *const qp_state_name[] = {
	"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR",
};

static const char *state_str(int s)
{
	return s >= 0 && s < 7 ? qp_state_name[s] : "?";
}

struct qp {
	int dev;
	uint32_t lqpn, rqpn, rq_psn, sq_psn;
	int type, state;
	bool has_rqpn, has_drv, has_rq_next;
	uint64_t out, rate, hint, retx;	/* driver attributes */
	uint32_t rq_next;		/* rq_seq_next: the next receive */
};

#define MAXQP		64
#define MAXCNT		96

struct counters {
	int n;
	bool ok;
	char name[MAXCNT][40];
	uint64_t v[MAXCNT];
};

struct snap {
	double t;
	int nqp;
	struct qp qp[MAXQP];
	struct counters c[MAXDEV];
};

static void dev_cb(const struct nlmsghdr *h, void *arg)
{
	const struct nlattr *a;
	uint32_t idx = 0;
	const char *name = NULL;
	int rem, i;

	(void)arg;
	nla_for_each(a, (const struct nlattr *)NLMSG_DATA(h),
		     (int)(h->nlmsg_len - NLMSG_HDRLEN), rem) {
		if (a->nla_type == RDMA_NLDEV_ATTR_DEV_INDEX)
			idx = (uint32_t)nla_uint(a);
		else if (a->nla_type == RDMA_NLDEV_ATTR_DEV_NAME)
			name = nla_data(a);
	}
	for (i = 0; name && i < opt.ndev; i++)
		if (!strcmp(opt.dev[i].name, name)) {
			opt.dev[i].index = idx;
			opt.dev[i].found = true;
		}
}

static void rdma_devices(void)
{
	struct nlreq r;
	int i, err;

	if (rdma_fd < 0)
		rdma_fd = nl_open(NETLINK_RDMA);
	nl_init(&r, NLDEV(RDMA_NLDEV_CMD_GET), NLM_F_DUMP, 0);
	err = nl_talk(rdma_fd, &r, dev_cb, NULL);
	if (err)
		die(3, "RDMA netlink device dump: %s", strerror(-err));
	for (i = 0; i < opt.ndev; i++)
		if (!opt.dev[i].found)
			die(3, "no RDMA device %s", opt.dev[i].name);
}

struct qp_cb_arg {
	struct snap *s;
	int dev;
};

static void qp_driver(struct qp *q, const struct nlattr *nest)
{
	const struct nlattr *a;
	const char *name = NULL;
	int rem;

	nla_for_each(a, (const struct nlattr *)nla_data(nest), nla_len(nest),
		     rem) {
		switch (a->nla_type & NLA_TYPE_MASK) {
		case RDMA_NLDEV_ATTR_DRIVER_STRING:
			name = name ? NULL : nla_data(a);
			break;
		case RDMA_NLDEV_ATTR_DRIVER_U32:
		case RDMA_NLDEV_ATTR_DRIVER_U64:
		case RDMA_NLDEV_ATTR_DRIVER_S32:
		case RDMA_NLDEV_ATTR_DRIVER_S64:
			if (!name)
				break;
			q->has_drv = true;
			if (!strcmp(name, "outstanding_pkts"))
				q->out = nla_uint(a);
			else if (!strcmp(name, "rate_mbps"))
				q->rate = nla_uint(a);
			else if (!strcmp(name, "rate_hint_mbps"))
				q->hint = nla_uint(a);
			else if (!strcmp(name, "retx_pkts"))
				q->retx = nla_uint(a);
			else if (!strcmp(name, "rq_seq_next")) {
				q->rq_next = (uint32_t)nla_uint(a);
				q->has_rq_next = true;
			}
			name = NULL;
			break;
		}
	}
}

static void qp_entry(struct qp_cb_arg *x, const struct nlattr *e)
{
	const struct nlattr *a;
	struct qp q = { .dev = x->dev, .type = -1, .state = -1 };
	bool lqpn = false;
	int rem;

	nla_for_each(a, (const struct nlattr *)nla_data(e), nla_len(e), rem) {
		switch (a->nla_type & NLA_TYPE_MASK) {
		case RDMA_NLDEV_ATTR_RES_LQPN:
			q.lqpn = (uint32_t)nla_uint(a);
			lqpn = true;
			break;
		case RDMA_NLDEV_ATTR_RES_RQPN:
			q.rqpn = (uint32_t)nla_uint(a);
			q.has_rqpn = true;
			break;
		case RDMA_NLDEV_ATTR_RES_RQ_PSN:
			q.rq_psn = (uint32_t)nla_uint(a);
			break;
		case RDMA_NLDEV_ATTR_RES_SQ_PSN:
			q.sq_psn = (uint32_t)nla_uint(a);
			break;
		case RDMA_NLDEV_ATTR_RES_TYPE:
			q.type = (int)nla_uint(a);
			break;
		case RDMA_NLDEV_ATTR_RES_STATE:
			q.state = (int)nla_uint(a);
			break;
		case RDMA_NLDEV_ATTR_DRIVER:
			qp_driver(&q, a);
			break;
		}
	}
	if (lqpn && x->s->nqp < MAXQP)
		x->s->qp[x->s->nqp++] = q;
}

static void qp_cb(const struct nlmsghdr *h, void *arg)
{
	const struct nlattr *a, *e;
	int rem, rem2;

	nla_for_each(a, (const struct nlattr *)NLMSG_DATA(h),
		     (int)(h->nlmsg_len - NLMSG_HDRLEN), rem) {
		if ((a->nla_type & NLA_TYPE_MASK) != RDMA_NLDEV_ATTR_RES_QP)
			continue;
		nla_for_each(e, (const struct nlattr *)nla_data(a), nla_len(a),
			     rem2)
			if ((e->nla_type & NLA_TYPE_MASK) ==
			    RDMA_NLDEV_ATTR_RES_QP_ENTRY)
				qp_entry(arg, e);
	}
}

struct cnt_cb_arg {
	struct counters *c;
};

static void cnt_cb(const struct nlmsghdr *h, void *arg)
{
	struct counters *c = ((struct cnt_cb_arg *)arg)->c;
	const struct nlattr *a, *e, *f;
	int rem, rem2, rem3;

	nla_for_each(a, (const struct nlattr *)NLMSG_DATA(h),
		     (int)(h->nlmsg_len - NLMSG_HDRLEN), rem) {
		if ((a->nla_type & NLA_TYPE_MASK) !=
		    RDMA_NLDEV_ATTR_STAT_HWCOUNTERS)
			continue;
		nla_for_each(e, (const struct nlattr *)nla_data(a), nla_len(a),
			     rem2) {
			const char *name = NULL;
			uint64_t v = 0;

			nla_for_each(f, (const struct nlattr *)nla_data(e),
				     nla_len(e), rem3) {
				int t = f->nla_type & NLA_TYPE_MASK;

				if (t == RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME)
					name = nla_data(f);
				else if (t ==
					 RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE)
					v = nla_uint(f);
			}
			if (name && c->n < MAXCNT) {
				snprintf(c->name[c->n], sizeof(c->name[0]),
					 "%s", name);
				c->v[c->n++] = v;
				c->ok = true;
			}
		}
	}
}

/* The QPs of every device, and (@counters) the devices' port counters. */
static void snapshot(struct snap *s, bool counters)
{
	struct nlreq r;
	int i, err;

	memset(s, 0, sizeof(*s));
	s->t = now_s();
	for (i = 0; i < opt.ndev; i++) {
		struct qp_cb_arg qa = { s, i };

		nl_init(&r, NLDEV(RDMA_NLDEV_CMD_RES_QP_GET), NLM_F_DUMP, 0);
		nla_put_u32(&r, RDMA_NLDEV_ATTR_DEV_INDEX, opt.dev[i].index);
		err = nl_talk(rdma_fd, &r, qp_cb, &qa);
		if (err && err != -ENODEV)
			die(3, "RDMA netlink QP dump of %s: %s",
			    opt.dev[i].name, strerror(-err));
		if (!counters)
			continue;
		struct cnt_cb_arg ca = { &s->c[i] };

		nl_init(&r, NLDEV(RDMA_NLDEV_CMD_STAT_GET), NLM_F_ACK, 0);
		nla_put_u32(&r, RDMA_NLDEV_ATTR_DEV_INDEX, opt.dev[i].index);
		nla_put_u32(&r, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
		err = nl_talk(rdma_fd, &r, cnt_cb, &ca);
		if (err)
			die(3, "RDMA netlink counters of %s: %s",
			    opt.dev[i].name, strerror(-err));
	}
}

/* Counter @name of device @d, or -1 if the device has no such counter. */
static int64_t cnt_get(const struct snap *s, int d, const char *name)
{
	const struct counters *c = &s->c[d];
	int i;

	for (i = 0; i < c->n; i++)
		if (!strcmp(c->name[i], name))
			return (int64_t)c->v[i];
	/*
	 * The device's counters were read but this one is not among them:
	 * an oracle that reads a counter nobody exports judges nothing.
	 */
	if (c->ok && c->n)
		die(2, "%s exports no counter %s (the oracle is out of date with the spec's list)",
		    opt.dev[d].name, name);
	return -1;
}

static int64_t cnt_delta(const struct snap *a, const struct snap *b, int d,
			 const char *name)
{
	int64_t x = cnt_get(a, d, name), y = cnt_get(b, d, name);

	return x < 0 || y < 0 ? -1 : y - x;
}

/* NAKs @d sent between @a and @b, all codes (the spec's per-code counters). */
static int64_t naks_sent(const struct snap *a, const struct snap *b, int d)
{
	static const char *const codes[] = {
		"tx_naks_psn_seq_err", "tx_naks_rnr", "tx_naks_rem_access",
		"tx_naks_rem_op", "tx_naks_inv_req",
	};
	int64_t n = 0, dn;
	size_t i;

	for (i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		dn = cnt_delta(a, b, d, codes[i]);
		if (dn > 0)
			n += dn;
	}
	return n;
}

static const struct qp *qp_find(const struct snap *s, int dev, uint32_t qpn)
{
	int i;

	for (i = 0; i < s->nqp; i++)
		if (s->qp[i].dev == dev && s->qp[i].lqpn == qpn)
			return &s->qp[i];
	return NULL;
}

static bool qp_live(const struct qp *q)
{
	return q && q->type == QPT_RC && q->state == QPS_RTS;
}

/* A connection seen from one direction: requester a, responder b. */
struct pair {
	const struct qp *a, *b;
};

/* Connected RC pairs of @s in RTS, each direction once. */
static int pairs(const struct snap *s, struct pair *p, int max)
{
	int i, n = 0;

	for (i = 0; i < s->nqp && n < max; i++) {
		const struct qp *a = &s->qp[i], *b;
		int j;

		if (!qp_live(a) || !a->has_rqpn)
			continue;
		for (j = 0; j < s->nqp; j++) {
			b = &s->qp[j];
			if (b->dev != a->dev && b->lqpn == a->rqpn &&
			    b->has_rqpn && b->rqpn == a->lqpn && qp_live(b)) {
				p[n].a = a;
				p[n].b = b;
				n++;
				break;
			}
		}
	}
	return n;
}

/* A QPN that no device has: 2..15 (below mroce's first) or >= 2^23. */
static uint32_t qpn_unknown(void)
{
	return chance(20) ? 2 + (uint32_t)rnd_below(14) :
	       PSN_HALF + (uint32_t)rnd_below(PSN_HALF);
}

static bool is_unknown_qpn(uint32_t q)
{
	return (q >= 2 && q < 16) || q >= PSN_HALF;
}

/* ------------------------------------------------------------ holds */
/*
 * A hold: tc flower rules on the ingress of the bridge ports the hosts
 * hang off, dropping every MetaRoCE datagram (UDP to opt.port, IPv4 and
 * IPv6) the hosts send.  The attacker's port is not among them.
 */
#define HOLD_PRIO	0x4792

static struct {
	int fd;
	int ifindex[MAXIF];
	bool made_qdisc[MAXIF];
	bool on;
} hold = { .fd = -1 };

static int tc_qdisc(int ifindex, bool add)
{
	struct nlreq r;
	struct tcmsg *t;

	nl_init(&r, add ? RTM_NEWQDISC : RTM_DELQDISC,
		NLM_F_ACK | (add ? NLM_F_CREATE | NLM_F_EXCL : 0), sizeof(*t));
	t = NLMSG_DATA(&r.h);
	t->tcm_family = AF_UNSPEC;
	t->tcm_ifindex = ifindex;
	t->tcm_handle = TC_H_MAKE(TC_H_INGRESS, 0);
	t->tcm_parent = TC_H_INGRESS;
	nla_put(&r, TCA_KIND, "ingress", 8);
	return nl_talk(hold.fd, &r, NULL, NULL);
}

static int tc_filter(int ifindex, bool add, bool v6)
{
	uint16_t proto = htons(v6 ? ETH_P_IPV6 : ETH_P_IP);
	uint16_t port = htons((uint16_t)opt.port);
	struct tc_gact gact = { .action = TC_ACT_SHOT };
	struct nlattr *o, *acts, *act, *ao;
	uint8_t udp = IPPROTO_UDP;
	struct nlreq r;
	struct tcmsg *t;

	nl_init(&r, add ? RTM_NEWTFILTER : RTM_DELTFILTER,
		NLM_F_ACK | (add ? NLM_F_CREATE | NLM_F_EXCL : 0), sizeof(*t));
	t = NLMSG_DATA(&r.h);
	t->tcm_family = AF_UNSPEC;
	t->tcm_ifindex = ifindex;
	t->tcm_parent = TC_H_MAKE(TC_H_INGRESS, 0);
	t->tcm_info = TC_H_MAKE((uint32_t)(HOLD_PRIO + v6) << 16, proto);
	if (add) {
		t->tcm_handle = 1;
		nla_put(&r, TCA_KIND, "flower", 7);
		o = nla_nest(&r, TCA_OPTIONS);
		nla_put(&r, TCA_FLOWER_KEY_ETH_TYPE, &proto, 2);
		nla_put(&r, TCA_FLOWER_KEY_IP_PROTO, &udp, 1);
		nla_put(&r, TCA_FLOWER_KEY_UDP_DST, &port, 2);
		acts = nla_nest(&r, TCA_FLOWER_ACT);
		act = nla_nest(&r, 1);
		nla_put(&r, TCA_ACT_KIND, "gact", 5);
		ao = nla_nest(&r, TCA_ACT_OPTIONS);
		nla_put(&r, TCA_GACT_PARMS, &gact, sizeof(gact));
		nla_nest_end(&r, ao);
		nla_nest_end(&r, act);
		nla_nest_end(&r, acts);
		nla_nest_end(&r, o);
	}
	return nl_talk(hold.fd, &r, NULL, NULL);
}

static void hold_setup(void)
{
	int i, err;

	if (!opt.nhold_if)
		return;
	ns_enter(opt.hold_ns);
	hold.fd = nl_open(NETLINK_ROUTE);
	for (i = 0; i < opt.nhold_if; i++) {
		hold.ifindex[i] = (int)if_nametoindex(opt.hold_if[i]);
		if (!hold.ifindex[i])
			die(3, "--hold: no interface %s in %s", opt.hold_if[i],
			    opt.hold_ns);
	}
	ns_leave();
	for (i = 0; i < opt.nhold_if; i++) {
		err = tc_qdisc(hold.ifindex[i], true);
		if (err && err != -EEXIST)
			die(3, "--hold: ingress qdisc on %s: %s (sch_ingress?)",
			    opt.hold_if[i], strerror(-err));
		hold.made_qdisc[i] = !err;
		/* a rule left over by a killed run */
		tc_filter(hold.ifindex[i], false, false);
		tc_filter(hold.ifindex[i], false, true);
	}
}

static void hold_off(void)
{
	int i;

	if (!hold.on)
		return;
	for (i = 0; i < opt.nhold_if; i++) {
		tc_filter(hold.ifindex[i], false, false);
		tc_filter(hold.ifindex[i], false, true);
	}
	hold.on = false;
}

static bool hold_on(void)
{
	int i, err;

	for (i = 0; i < opt.nhold_if; i++) {
		err = tc_filter(hold.ifindex[i], true, false);
		if (!err)
			err = tc_filter(hold.ifindex[i], true, true);
		if (err) {
			hold.on = true;
			hold_off();
			die(3, "--hold: flower rule on %s: %s (cls_flower, act_gact?)",
			    opt.hold_if[i], strerror(-err));
		}
	}
	hold.on = true;
	return true;
}

static void hold_cleanup(void)
{
	int i;

	if (hold.fd < 0)
		return;
	hold_off();
	for (i = 0; i < opt.nhold_if; i++)
		if (hold.made_qdisc[i])
			tc_qdisc(hold.ifindex[i], false);
	close(hold.fd);
	hold.fd = -1;
}

/* ------------------------------------------------------------ sniffing */
/*
 * What the hosts send, seen on the bridge ports (before a hold drops
 * it): READ and ATOMIC requests (for forged responses), WRITEs (a live
 * target address and rkey) and the PMTU (the largest non-last payload).
 */
struct seen {
	struct addr src, dst;
	struct pkt k;
	double t;
	bool used;
};

#define NSEEN		64
#define NSEND		16

static unsigned int pmtu(void);

static struct {
	int fd[MAXIF];
	int n;
	struct seen req[NSEEN];		/* READ/ATOMIC since the hold began */
	int nreq;
	struct seen write;		/* the last WRITE, any time */
	bool have_write;
	struct seen big_write;		/* the last of more than a PMTU */
	bool have_big_write;
	struct seen read;		/* the last large READ request, outside holds */
	bool have_read;
	/*
	 * Per pair (source address, destination QPN): the last packet of a
	 * SEND or WRITE_WITH_IMM (each takes a receive WQE) with the highest
	 * rq_seq seen outside holds.  A retransmission
	 * counts: a SEND first sent during a hold was never delivered, and
	 * its resend after the hold is the one that took the receive WQE.
	 */
	struct seen send[NSEND];
	int nsend;
	unsigned int pmtu;		/* learnt */
	uint64_t pkts;
} sn;

/*
 * The PMTU behind a SEND/WRITE packet of @pay bytes that is not the last
 * of its message.  Its payload is its message's segment size: the PMTU,
 * or with large segments (spec "Large segments") more, up to MAX_PAYLOAD;
 * mroce cuts them where the netdev MTU is full, on connections whose PMTU
 * is the port's active MTU, the largest power of two (at most MAX_PMTU)
 * that room holds.  READ responses are cut at the PMTU itself.
 */
static unsigned int pmtu_of_seg(uint32_t pay)
{
	unsigned int m = MAX_PMTU;

	while (m > 256 && m > pay)
		m /= 2;
	return m;
}

static void sniff_setup(void)
{
	/* IPv4, UDP, not a fragment, to our port: the first 256 bytes */
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_H | BPF_ABS, SKF_AD_OFF + SKF_AD_PROTOCOL),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ETH_P_IP, 0, 8),
		BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 9),		/* protocol */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_UDP, 0, 6),
		BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 6),		/* fragment */
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x1fff, 4, 0),
		BPF_STMT(BPF_LDX | BPF_B | BPF_MSH, 0),
		BPF_STMT(BPF_LD | BPF_H | BPF_IND, 2),		/* dport */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, 256),
		BPF_STMT(BPF_RET | BPF_K, 0),
	};
	struct sock_fprog prog = { sizeof(code) / sizeof(code[0]), code };
	int i, one = 1, big = 4 << 20;

	code[8].k = opt.port;
	if (!opt.nsniff_if)
		return;
	ns_enter(opt.sniff_ns);
	for (i = 0; i < opt.nsniff_if; i++) {
		/*
		 * ETH_P_ALL: on a bridge port only the taps for every
		 * protocol see a frame (before tc ingress and the bridge)
		 */
		struct sockaddr_ll ll = {
			.sll_family = AF_PACKET,
			.sll_protocol = htons(ETH_P_ALL),
			.sll_ifindex = (int)if_nametoindex(opt.sniff_if[i]),
		};
		int fd = socket(AF_PACKET, SOCK_DGRAM | SOCK_NONBLOCK |
				SOCK_CLOEXEC, htons(ETH_P_ALL));

		if (!ll.sll_ifindex)
			die(3, "--sniff: no interface %s in %s",
			    opt.sniff_if[i], opt.sniff_ns);
		if (fd < 0 ||
		    setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog,
			       sizeof(prog)) ||
		    bind(fd, (struct sockaddr *)&ll, sizeof(ll)))
			die(3, "--sniff: packet socket on %s: %s",
			    opt.sniff_if[i], strerror(errno));
		setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one,
			   sizeof(one));
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
		sn.fd[sn.n++] = fd;
	}
	ns_leave();
}

/*
 * Remember the last packet of a message that took a receive WQE (a SEND,
 * a WRITE_WITH_IMM) and reached its responder.  A first
 * transmission is the newest of its pair; a retransmission only when it
 * is ahead of what was seen (its first transmission was held), never an
 * old message sent again.  The oldest pair makes room for a new one.
 */
static void send_seen(const struct seen *s)
{
	struct seen *e = NULL;
	int i;

	for (i = 0; i < sn.nsend; i++) {
		if (addr_eq(&sn.send[i].src, &s->src) &&
		    sn.send[i].k.dqpn == s->k.dqpn) {
			e = &sn.send[i];
			break;
		}
	}
	if (e && (s->k.flags & F_RT) &&
	    (int32_t)(s->k.rq_seq - e->k.rq_seq) <= 0)
		return;
	if (!e && sn.nsend < NSEND)
		e = &sn.send[sn.nsend++];
	if (!e) {
		e = &sn.send[0];
		for (i = 1; i < sn.nsend; i++)
			if (sn.send[i].t < e->t)
				e = &sn.send[i];
	}
	*e = *s;
}

/*
 * Read what was captured.  @keep: remember READ/ATOMIC requests (they
 * left while a hold was in place, so they were never delivered).
 */
static void sniff_drain(bool keep)
{
	uint8_t buf[256];
	int i;

	for (i = 0; i < sn.n; i++) {
		for (;;) {
			ssize_t n = recv(sn.fd[i], buf, sizeof(buf), MSG_TRUNC);
			size_t ihl, len, caplen;
			const uint8_t *m;
			struct seen s;

			if (n < 0)
				break;
			sn.pkts++;
			caplen = (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf);
			if (caplen < 28 || (buf[0] >> 4) != 4)
				continue;
			ihl = (buf[0] & 15) * 4u;
			if (caplen < ihl + 8 + BH_LEN)
				continue;
			len = get16(buf + ihl + 4) - 8u;	/* UDP payload */
			m = buf + ihl + 8;
			memset(&s, 0, sizeof(s));
			s.src.af = s.dst.af = AF_INET;
			memcpy(&s.src.a4, buf + 12, 4);
			memcpy(&s.dst.a4, buf + 16, 4);
			s.t = now_s();
			if (!opd_of(m[1]) || caplen < ihl + 8 + opd_of(m[1])->hlen)
				continue;
			decode(m, len, &s.k);
			if ((s.k.op == OP_SEND || s.k.op == OP_WRITE ||
			     s.k.op == OP_WRITE_IMM) && !(s.k.flags & F_LA) &&
			    s.k.pay >= 256 && s.k.pay <= MAX_PAYLOAD &&
			    pmtu_of_seg(s.k.pay) > sn.pmtu)
				sn.pmtu = pmtu_of_seg(s.k.pay);
			/* every message that takes a receive WQE */
			if ((s.k.op == OP_SEND || s.k.op == OP_SEND_IMM ||
			     s.k.op == OP_WRITE_IMM) &&
			    (s.k.flags & F_LA) && !keep)
				send_seen(&s);
			if (s.k.op == OP_WRITE || s.k.op == OP_WRITE_IMM) {
				if (s.k.msg_len) {
					sn.write = s;
					sn.have_write = true;
				}
				if (s.k.msg_len > pmtu()) {
					sn.big_write = s;
					sn.have_big_write = true;
				}
				continue;
			}
			/* a large READ that reached its responder: not held */
			if (s.k.op == OP_READ_REQ && !(s.k.flags & F_RT) &&
			    !keep && s.k.rd_length >= 16 * pmtu()) {
				sn.read = s;
				sn.have_read = true;
			}
			if (!keep || sn.nreq >= NSEEN)
				continue;
			if (s.k.op == OP_READ_REQ || s.k.op == OP_CMP_SWP ||
			    s.k.op == OP_FETCH_ADD)
				sn.req[sn.nreq++] = s;
		}
	}
}

/* ------------------------------------------------------------ /proc */

/* Sum of the "dropped" column of /proc/net/softnet_stat (backlog drops). */
static uint64_t softnet_drops(void)
{
	FILE *f = fopen("/proc/net/softnet_stat", "r");
	unsigned int a, b;
	uint64_t sum = 0;
	char line[512];

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%x %x", &a, &b) == 2)
			sum += b;
	fclose(f);
	return sum;
}

/*
 * A UDP MIB counter of device @d's namespace: "Udp:InCsumErrors" from
 * /proc/net/snmp or "Udp6InCsumErrors" from /proc/net/snmp6.  -1 if the
 * device has no namespace given or the counter does not exist.
 */
static int64_t snmp_get(int d, const char *name)
{
	const char *colon = strchr(name, ':');
	char line[2048], vals[2048], *save, *save2, *n, *v;
	int64_t res = -1;
	FILE *f;

	if (!opt.dev[d].netns[0])
		return -1;
	ns_enter(opt.dev[d].netns);
	f = fopen(colon ? "/proc/self/net/snmp" : "/proc/self/net/snmp6", "r");
	ns_leave();
	if (!f)
		return -1;
	while (res < 0 && fgets(line, sizeof(line), f)) {
		if (!colon) {
			char key[128];
			long long x;

			if (sscanf(line, "%127s %lld", key, &x) == 2 &&
			    !strcmp(key, name))
				res = x;
			continue;
		}
		if (strncmp(line, name, (size_t)(colon - name + 1)) ||
		    !fgets(vals, sizeof(vals), f))
			continue;
		n = strtok_r(line, " \n", &save);
		v = strtok_r(vals, " \n", &save2);
		while (n && v) {
			if (!strcmp(n, colon + 1))
				res = strtoll(v, NULL, 10);
			n = strtok_r(NULL, " \n", &save);
			v = strtok_r(NULL, " \n", &save2);
		}
	}
	fclose(f);
	return res;
}

static const char *const snmp_names[] = {
	"Udp:InErrors", "Udp:InCsumErrors", "Udp:RcvbufErrors",
	"Udp6InErrors", "Udp6InCsumErrors", "Udp6RcvbufErrors",
};

#define NSNMP	(sizeof(snmp_names) / sizeof(snmp_names[0]))

/* ------------------------------------------------------------ a case */

enum { EXACT, ATLEAST };

struct expect {
	int dev;
	bool snmp;			/* a UDP MIB counter, not the device's */
	char name[40];
	uint64_t sure, unsure;		/* packets certain / possibly counted */
	int mode;
};

struct harm {
	char tag[32];
	char msg[400];
	unsigned int n;
};

struct pend {
	int dev;
	uint32_t qpn;
	const char *counter;
	int mode;
	bool need_rts;
	uint64_t n;
};

struct fcase;

#define GRACE_MIN_S	5	/* more(): at least this much extra time */

struct ctx {
	const struct fcase *c;
	double t0, t_end;	/* t_end 0: the case stopped itself */
	double t_grace;		/* until then while nothing was eligible */
	uint64_t pkts, bytes, tx_fail, dumped;
	bool paced, flood;
	unsigned int episodes, skipped, eligible, detected;
	double held;
	uint64_t reasons[V_NREASON];
	struct expect ex[96];
	int nex;
	struct harm harm[16];
	int nharm;
	char notes[12][400];
	int nnotes;
	struct pend pend[64];
	int npend;
	int64_t snmp0[MAXDEV][NSNMP];
	uint64_t net_drops0;
};

/* needs of a case */
#define N_LIVE		0x01	/* live connections */
#define N_HOLD		0x02	/* --hold */
#define N_SNIFF		0x04	/* --sniff */
#define N_V6		0x08	/* IPv6 addresses of the devices */

struct fcase {
	const char *name;
	unsigned int needs;
	void (*run)(struct ctx *x, int arg);
	int arg;
	const char *what;
};

/*
 * Go on?  A case that found nothing to aim at yet (an ATOMIC in flight
 * during a hold, say: the transfers' setup leaves gaps) keeps trying past
 * its time, up to the grace, rather than end without a verdict.
 */
static bool more(struct ctx *x)
{
	double t = now_s();

	if (x->pkts >= opt.count || !x->t_end)
		return false;
	return t < x->t_end || (!x->eligible && t < x->t_grace);
}

static void __attribute__((format(printf, 2, 3)))
note(struct ctx *x, const char *fmt, ...)
{
	va_list ap;

	if (x->nnotes >= 12)
		return;
	va_start(ap, fmt);
	vsnprintf(x->notes[x->nnotes++], sizeof(x->notes[0]), fmt, ap);
	va_end(ap);
}

/* A finding; the first message of each @tag is kept, the rest counted. */
static void __attribute__((format(printf, 3, 4)))
harm(struct ctx *x, const char *tag, const char *fmt, ...)
{
	va_list ap;
	int i;

	for (i = 0; i < x->nharm; i++)
		if (!strcmp(x->harm[i].tag, tag)) {
			x->harm[i].n++;
			return;
		}
	if (x->nharm >= 16)
		return;
	snprintf(x->harm[i].tag, sizeof(x->harm[i].tag), "%s", tag);
	va_start(ap, fmt);
	vsnprintf(x->harm[i].msg, sizeof(x->harm[i].msg), fmt, ap);
	va_end(ap);
	x->harm[i].n = 1;
	x->nharm++;
	if (opt.verbose)
		say("%s: %s", x->c->name, x->harm[i].msg);
}

static void expect_add(struct ctx *x, int dev, bool snmp, const char *name,
		       uint64_t sure, uint64_t unsure, int mode)
{
	int i;

	for (i = 0; i < x->nex; i++) {
		struct expect *e = &x->ex[i];

		if (e->dev == dev && e->snmp == snmp && !strcmp(e->name, name)) {
			e->sure += sure;
			e->unsure += unsure;
			if (mode == ATLEAST)
				e->mode = ATLEAST;
			return;
		}
	}
	if (x->nex >= 96)
		die(3, "internal: too many expectations");
	x->ex[i].dev = dev;
	x->ex[i].snmp = snmp;
	snprintf(x->ex[i].name, sizeof(x->ex[i].name), "%s", name);
	x->ex[i].sure = sure;
	x->ex[i].unsure = unsure;
	x->ex[i].mode = mode;
	x->nex++;
}

static void expect(struct ctx *x, int dev, const char *name, uint64_t n,
		   int mode)
{
	expect_add(x, dev, false, name, n, 0, mode);
}

/*
 * A forged packet to QP @qpn of @dev must raise @counter if that QP was
 * still in RTS (@need_rts; else: still there) in the snapshots taken
 * before and after it was sent (pend_resolve()).
 */
static void pend_add(struct ctx *x, int dev, uint32_t qpn,
		     const char *counter, int mode, bool need_rts)
{
	int i;

	for (i = 0; i < x->npend; i++) {
		struct pend *p = &x->pend[i];

		if (p->dev == dev && p->qpn == qpn && p->counter == counter &&
		    p->need_rts == need_rts) {
			p->n++;
			return;
		}
	}
	if (i >= 64) {
		expect_add(x, dev, false, counter, 0, 1, mode);
		return;
	}
	x->pend[i] = (struct pend){ dev, qpn, counter, mode, need_rts, 1 };
	x->npend++;
}

/*
 * A packet is processed microseconds after it was sent, so the state
 * that decides its fate is the one seen just before (@s0).  While
 * @held nothing can end a connection but our own packets; otherwise the
 * QP must still exist afterwards (a transfer that ended meanwhile may
 * have destroyed it before the packet arrived).
 */
static void pend_resolve(struct ctx *x, const struct snap *s0,
			 const struct snap *s1, bool held)
{
	int i;

	for (i = 0; i < x->npend; i++) {
		const struct pend *p = &x->pend[i];
		const struct qp *a = qp_find(s0, p->dev, p->qpn);
		const struct qp *b = qp_find(s1, p->dev, p->qpn);
		bool sure = a && (held || b) && (!p->need_rts || qp_live(a));

		expect_add(x, p->dev, false, p->counter, sure ? p->n : 0,
			   sure ? 0 : p->n, p->mode);
	}
	x->npend = 0;
}

static void hexdump(const uint8_t *p, size_t len)
{
	size_t i;

	for (i = 0; i < len && i < 128; i++)
		printf("%s%02x", i % 16 ? " " : i ? "\n    " : "    ", p[i]);
	printf("%s\n", len > 128 ? " ..." : "");
}

/* Send one packet, count it, pace it. */
static bool send_pkt(struct ctx *x, const struct addr *src,
		     const struct addr *dst, const uint8_t *p, size_t len,
		     int cs)
{
	if (x->dumped < opt.dump) {
		enum reason r = spec_check(p, len);

		x->dumped++;
		say("%s: packet %" PRIu64 ": %s -> %s, %zu bytes, %s", x->c->name,
		    x->pkts, addr_str(src), addr_str(dst), len,
		    r ? reason_counter[r] : "valid");
		hexdump(p, len);
	}
	if (!tx(src, dst, p, len, cs)) {
		x->tx_fail++;
		return false;
	}
	x->pkts++;
	x->bytes += len;
	if (x->paced && !(x->pkts % 8)) {
		double due = x->t0 + x->pkts / opt.rate, t = now_s();

		if (due > t)
			sleep_s(due - t);
	}
	return true;
}

/*
 * Where a packet that passes the packet-level checks ends up when sent to
 * a QPN no device has (or to the GSI QP, for datagrams).
 */
static const char *unknown_counter(const uint8_t *p, int *mode)
{
	const struct opd *o = opd_of(p[1]);

	*mode = EXACT;
	if (get24(p + 5) == 1) {
		/* only datagrams get here: the GSI QP checks the Q_Key */
		return o && o->dgh && get32(p + o->dgh) != GSI_QKEY ?
		       "rx_drop_qkey" : NULL;
	}
	/* late packets of destroyed QPs count here too */
	*mode = ATLEAST;
	return "rx_drop_unknown_qp";
}

/*
 * Send @p (to a QPN no device has, or that the model rejects anyway) from
 * our own address to device @d; expect the counter the model predicts.
 */
static void send_model(struct ctx *x, int d, const uint8_t *p, size_t len)
{
	const struct dev *v = &opt.dev[d];
	enum reason r = spec_check(p, len);
	const char *c;
	int mode;

	if (!send_pkt(x, &v->own4, &v->ip4, p, len, CS_OK))
		return;
	x->reasons[r]++;
	if (r != V_OK) {
		expect(x, d, reason_counter[r], 1, EXACT);
		return;
	}
	c = unknown_counter(p, &mode);
	if (c)
		expect(x, d, c, 1, mode);
}

/* Make a packet that the model accepts address a QPN nobody has. */
static void aim_unknown(uint8_t *p, size_t len)
{
	if (len >= BH_LEN && spec_check(p, len) == V_OK &&
	    !is_unknown_qpn(get24(p + 5)) &&
	    !(get24(p + 5) == 1 && opd_of(p[1]) &&
	      (opd_of(p[1])->props & O_DG)))
		put24(p + 5, qpn_unknown());
}

static int dev_of_addr(const struct addr *a)
{
	int i;

	for (i = 0; i < opt.ndev; i++)
		if (addr_eq(a, &opt.dev[i].ip4) ||
		    (opt.dev[i].has6 && addr_eq(a, &opt.dev[i].ip6)))
			return i;
	return -1;
}

static unsigned int pmtu(void)
{
	return opt.pmtu_set || !sn.pmtu ? opt.pmtu : sn.pmtu;
}

/* ------------------------------------------------------------ episodes */

/* what an episode may legitimately show */
struct allow {
	unsigned int naks;		/* NAKs per device */
	bool resp_err;			/* the responder may go to ERR */
	bool req_err;			/* and with it its requester (fatal NAK) */
	bool control;			/* forged ACKs that must work */
};

static double hold_start;

/*
 * Begin a hold: from here on nothing the hosts send each other arrives.
 * Requests the hosts send meanwhile are kept by the sniffer; @s0 is the
 * state once what was in flight has settled.
 */
static void ep_begin(struct snap *s0)
{
	sniff_drain(false);
	hold_on();
	hold_start = now_s();
	sn.nreq = 0;
	sniff_drain(false);	/* captured before the rule was in place */
	sleep_s(opt.hold_ms / 1000.0);
	sniff_drain(true);
	snapshot(s0, true);
}

static void ep_end(struct ctx *x, struct snap *s1)
{
	sleep_s(0.03);		/* let the forged packets be processed */
	snapshot(s1, true);
	hold_off();
	x->held += now_s() - hold_start;
	x->episodes++;
}

static void gap(void)
{
	sleep_s(opt.gap_ms / 1000.0);
}

static const char *dname(int d)
{
	return opt.dev[d].name;
}

/* The oldest PSN a requester still waits for (snd_una). */
static uint32_t una_of(const struct qp *a)
{
	return psn_add(a->sq_psn, -(int64_t)a->out);
}

/*
 * Did a valid forged ACK (the control) make requester @a0 (before) / @a1
 * (after) count packets as delivered?  Its snd_una moved into what was
 * outstanding.  Fewer outstanding packets alone would miss it: the ACK
 * opens the window, and the requester may send as many new packets
 * straight away.  Only for the control: sq_psn and the outstanding count
 * are read apart while a requester sends, so snd_una computed from them
 * can seem to move, and the harm checks of the other cases must not take
 * that for a forged delivery.
 */
static bool acked_during(const struct qp *a0, const struct qp *a1)
{
	uint32_t moved = fwd(una_of(a0), una_of(a1));

	return a1->out < a0->out || (moved && moved <= a0->out);
}

/*
 * Judge a hold: nothing was delivered between @s0 and @s1, so a
 * requester's outstanding packets cannot have become fewer, a responder's
 * ePSN cannot have moved, no QP can have failed and no device can have
 * sent an ACK or a NAK, unless forged packets did it.
 */
static void ep_judge(struct ctx *x, const struct snap *s0,
		     const struct snap *s1, const struct allow *al)
{
	struct pair pr[16];
	int i, n = pairs(s0, pr, 16);

	for (i = 0; i < n; i++) {
		const struct qp *a0 = pr[i].a, *b0 = pr[i].b;
		const struct qp *a1 = qp_find(s1, a0->dev, a0->lqpn);
		const struct qp *b1 = qp_find(s1, b0->dev, b0->lqpn);

		if ((!a1 || !b1) && a0->has_drv && a0->out && !al->control &&
		    !al->resp_err)
			harm(x, "ended",
			     "%s QP %#x with %" PRIu64 " packets outstanding was destroyed during a hold: its work requests completed (with success or an error) although nothing could be delivered",
			     dname(a0->dev), a0->lqpn, a0->out);
		/*
		 * The control's ACK can complete a requester's last work
		 * requests, and its program then destroys the QP before the
		 * hold ends: gone with packets outstanding is the same
		 * evidence as the "ended" harm above.
		 */
		if (!a1 && a0->has_drv && a0->out && al->control)
			x->detected++;
		if (!a1 || !b1)
			continue;
		if (a0->has_drv && a1->has_drv && al->control &&
		    acked_during(a0, a1))
			x->detected++;
		else if (a0->has_drv && a1->has_drv && !al->control &&
			 a1->out < a0->out)
			harm(x, "delivered",
			     "forged packets made %s QP %#x count %" PRIu64
			     " of its %" PRIu64 " outstanding packets as delivered while its peer (%s QP %#x, ePSN %#x before and after) received nothing",
			     dname(a0->dev), a0->lqpn, a0->out - a1->out,
			     a0->out, dname(b0->dev), b0->lqpn, b1->rq_psn);
		if (b1->rq_psn != b0->rq_psn && b1->state == b0->state)
			harm(x, "accepted",
			     "%s QP %#x accepted a forged request: its ePSN moved %#x -> %#x while its peer could send nothing",
			     dname(b0->dev), b0->lqpn, b0->rq_psn, b1->rq_psn);
		else if (b1->rq_psn != b0->rq_psn && !al->resp_err)
			harm(x, "accepted",
			     "%s QP %#x: ePSN moved %#x -> %#x (state %s) while its peer could send nothing",
			     dname(b0->dev), b0->lqpn, b0->rq_psn, b1->rq_psn,
			     state_str(b1->state));
		if (a1->state != QPS_RTS && !al->control && !al->req_err)
			harm(x, "state-a",
			     "%s QP %#x went %s -> %s (forged packets failed a live connection)",
			     dname(a0->dev), a0->lqpn, state_str(a0->state),
			     state_str(a1->state));
		if (b1->state != QPS_RTS && !al->resp_err && !al->control)
			harm(x, "state-b", "%s QP %#x went %s -> %s",
			     dname(b0->dev), b0->lqpn, state_str(b0->state),
			     state_str(b1->state));
	}
	for (i = 0; i < opt.ndev; i++) {
		int64_t acks = cnt_delta(s0, s1, i, "tx_acks");
		int64_t naks = naks_sent(s0, s1, i);

		if (acks > 0)
			harm(x, "acks",
			     "%s sent %" PRId64 " ACKs during a hold (answers to forged packets; spec MR-19, MR-20: no reply)",
			     dname(i), acks);
		if (naks > (int64_t)al->naks)
			harm(x, "naks",
			     "%s sent %" PRId64 " NAKs during one hold, %u allowed (answers to forged packets)",
			     dname(i), naks, al->naks);
	}
}

/* Pairs whose requester has packets outstanding (@need_out) in @s. */
static int victims(const struct snap *s, struct pair *v, int max,
		   bool need_out)
{
	struct pair pr[16];
	int i, n = pairs(s, pr, 16), k = 0;

	for (i = 0; i < n && k < max; i++)
		if (!need_out || (pr[i].a->has_drv && pr[i].a->out > 0))
			v[k++] = pr[i];
	return k;
}

/* Wait until a live connection exists; false after opt.wait_live s. */
static bool wait_live(void)
{
	double end = now_s() + opt.wait_live;
	struct snap s;
	struct pair p[1];

	do {
		snapshot(&s, false);
		if (pairs(&s, p, 1))
			return true;
		sleep_s(0.1);
	} while (now_s() < end);
	return false;
}

/* How a forged packet's source is spoiled. */
enum srck {
	S_OK,		/* the connected peer's address and QPN */
	S_ADDR,		/* our own address, the peer's QPN */
	S_QPN,		/* the peer's address, another QPN */
	S_DST6,		/* IPv6 addresses of both hosts: not the QP's GIDs */
};

static uint32_t other_qpn(uint32_t q)
{
	uint32_t o = (q + 0x10000 * (1 + (uint32_t)rnd_below(64))) & PSN_MASK;

	return o < 2 ? o + 2 : o;
}

/*
 * Send @k to QP @t as if from its peer @peer, with the source spoiled as
 * @how says.  @counter (if any) must count it (pend_add()).
 */
static bool forge(struct ctx *x, const struct qp *t, const struct qp *peer,
		  struct pkt *k, enum srck how, const char *counter, int mode)
{
	static uint8_t b[PKT_MAX];
	const struct dev *dt = &opt.dev[t->dev], *dp = &opt.dev[peer->dev];
	const struct addr *src = &dp->ip4, *dst = &dt->ip4;
	size_t len;

	k->dqpn = t->lqpn;
	k->sqpn = how == S_QPN ? other_qpn(peer->lqpn) : peer->lqpn;
	if (how == S_ADDR)
		src = &dt->own4;
	if (how == S_DST6) {
		src = &dp->ip6;
		dst = &dt->ip6;
	}
	len = encode(b, k);
	if (spec_check(b, len) != V_OK)
		die(3, "internal: forged %s fails %s", opd_of(k->op)->name,
		    reason_counter[spec_check(b, len)]);
	if (len > (dst->af == AF_INET ? RAW_MAX4 : RAW_MAX6))
		die(3, "internal: forged %s too long to spoof (%zu bytes)",
		    opd_of(k->op)->name, len);
	if (!send_pkt(x, src, dst, b, len, CS_OK))
		return false;
	if (counter)
		pend_add(x, t->dev, t->lqpn, counter, mode, true);
	return true;
}

static void ack_base(struct pkt *k, uint32_t psn)
{
	memset(k, 0, sizeof(*k));
	k->op = OP_ACK;
	k->words = -1;
	k->path = (uint8_t)rnd_below(16);
	k->psn = psn;
	k->ts = (uint32_t)rnd();
}

/* ------------------------------------------------------------ parser cases */

/* Random bytes of random length; sometimes a valid version byte. */
static size_t gen_random(uint8_t *b)
{
	size_t len;

	switch (rnd_below(4)) {
	case 0:
		len = rnd_below(BH_LEN + 8);
		break;
	case 1:
		len = BH_LEN + rnd_below(128);
		break;
	default:
		len = rnd_below(RAW_MAX4 + 1);
		break;
	}
	rnd_fill(b, len);
	if (len && chance(25))
		b[0] = 1;
	if (len > 1 && chance(15))
		b[1] = optab[rnd_below(NOPS)].op;
	return len;
}

static const uint32_t bound32[] = {
	0, 1, 0x7fffffff, 0x80000000, 0x80000001, 0xfffffffe, 0xffffffff,
};

/* Apply 1..3 random mutations to @b (@len bytes); returns the new length. */
static size_t mutate(uint8_t *b, size_t len)
{
	int n = 1 + (int)rnd_below(3);
	size_t i;

	while (n--) {
		switch (rnd_below(7)) {
		case 0:		/* flip a header bit */
		case 1:
			if (len) {
				i = rnd_below(len < 96 ? len : 96);
				b[i] ^= (uint8_t)(1u << rnd_below(8));
			}
			break;
		case 2:		/* a header byte */
			if (len) {
				i = rnd_below(len < 96 ? len : 96);
				b[i] = chance(50) ? (uint8_t)rnd() :
				       (uint8_t)bound32[rnd_below(7)];
			}
			break;
		case 3:		/* a 32-bit word of the headers */
			if (len >= 4) {
				i = 4 * rnd_below((len < 96 ? len : 96) / 4);
				put32(b + i, bound32[rnd_below(7)]);
			}
			break;
		case 4:		/* truncate */
			len = rnd_below(len + 1);
			break;
		case 5:		/* extend */
			i = rnd_below(64);
			if (len + i <= RAW_MAX4) {
				rnd_fill(b + len, i);
				len += i;
			}
			break;
		default:	/* the flags */
			if (len >= 4)
				put16(b + 2, (uint16_t)(1u << rnd_below(16)));
			break;
		}
	}
	return len;
}

/* A valid packet of a random opcode to an unknown QPN. */
static size_t gen_valid_unknown(uint8_t *b)
{
	struct pkt k;

	pkt_valid(&k, optab[rnd_below(NOPS)].op, qpn_unknown(),
		  2 + (uint32_t)rnd_below(PSN_MASK - 1), pmtu());
	if ((opd_of(k.op)->props & O_DG) && chance(10))
		k.dqpn = 1;		/* the GSI QP, with a wrong Q_Key */
	return encode(b, &k);
}

static void case_random(struct ctx *x, int arg)
{
	static uint8_t b[PKT_MAX];
	size_t len;

	while (more(x)) {
		if (arg) {
			len = mutate(b, gen_valid_unknown(b));
		} else {
			len = gen_random(b);
		}
		aim_unknown(b, len);
		send_model(x, (int)rnd_below(opt.ndev), b, len);
	}
}

/* Fields of the headers, for boundary values. */
enum { K_PLAIN, K_FLAGS, K_QPN, K_LEN, K_VA, K_NAKPSN, K_SACK };

struct fld {
	const char *name;
	uint8_t hdr;			/* 0: BH, else an opd offset field */
	uint8_t off, size, kind;
};

enum { H_BH, H_DH, H_MH, H_RH, H_AH, H_ARH, H_KH, H_NKH, H_DGH };

static const struct fld fields[] = {
	{ "version", H_BH, 0, 1, K_PLAIN }, { "flags", H_BH, 2, 2, K_FLAGS },
	{ "hdr_words", H_BH, 4, 1, K_PLAIN }, { "dest_qpn", H_BH, 5, 3, K_QPN },
	{ "path_id", H_BH, 8, 1, K_PLAIN }, { "src_qpn", H_BH, 9, 3, K_QPN },
	{ "bh_rsvd12", H_BH, 12, 1, K_PLAIN }, { "psn", H_BH, 13, 3, K_PLAIN },
	{ "path_seq", H_BH, 16, 4, K_PLAIN }, { "bh_rsvd20", H_BH, 20, 1, K_PLAIN },
	{ "msn", H_BH, 21, 3, K_PLAIN }, { "timestamp", H_BH, 24, 4, K_PLAIN },
	{ "bh_rsvd28", H_BH, 28, 4, K_PLAIN },
	{ "dh_offset", H_DH, 0, 4, K_LEN }, { "dh_msg_len", H_DH, 4, 4, K_LEN },
	{ "dh_rq_seq", H_DH, 8, 4, K_PLAIN }, { "dh_imm", H_DH, 12, 4, K_PLAIN },
	{ "mh_va", H_MH, 0, 8, K_VA }, { "mh_rkey", H_MH, 8, 4, K_PLAIN },
	{ "mh_rsvd", H_MH, 12, 4, K_PLAIN },
	{ "rh_sink_va", H_RH, 0, 8, K_VA }, { "rh_sink_key", H_RH, 8, 4, K_PLAIN },
	{ "rh_msg_len", H_RH, 12, 4, K_LEN }, { "rh_offset", H_RH, 16, 4, K_LEN },
	{ "rh_length", H_RH, 20, 4, K_LEN },
	{ "ah_swap_add", H_AH, 0, 8, K_PLAIN }, { "ah_compare", H_AH, 8, 8, K_PLAIN },
	{ "arh_orig", H_ARH, 0, 8, K_PLAIN },
	{ "kh_echo_ts", H_KH, 0, 4, K_PLAIN }, { "kh_echo_pseq", H_KH, 4, 4, K_PLAIN },
	{ "kh_echo_path", H_KH, 8, 1, K_PLAIN }, { "kh_echo_psn", H_KH, 9, 3, K_PLAIN },
	{ "kh_rx_count", H_KH, 12, 2, K_PLAIN }, { "kh_ce_count", H_KH, 14, 2, K_PLAIN },
	{ "kh_rate_hint", H_KH, 16, 4, K_PLAIN }, { "kh_ack_delay", H_KH, 20, 2, K_PLAIN },
	{ "kh_echo_flags", H_KH, 22, 1, K_FLAGS }, { "kh_seg_max", H_KH, 23, 1, K_PLAIN },
	{ "kh_sack_w0", H_KH, 24, 8, K_SACK }, { "kh_sack_w1", H_KH, 32, 8, K_SACK },
	{ "kh_sack_w2", H_KH, 40, 8, K_SACK }, { "kh_sack_w3", H_KH, 48, 8, K_SACK },
	{ "nkh_code", H_NKH, 0, 1, K_PLAIN }, { "nkh_rnr_timer", H_NKH, 1, 1, K_PLAIN },
	{ "nkh_rsvd2", H_NKH, 2, 2, K_PLAIN }, { "nkh_rsvd4", H_NKH, 4, 1, K_PLAIN },
	{ "nkh_nak_psn", H_NKH, 5, 3, K_NAKPSN },
	{ "dgh_qkey", H_DGH, 0, 4, K_PLAIN }, { "dgh_imm", H_DGH, 4, 4, K_PLAIN },
};

#define NFIELDS	(sizeof(fields) / sizeof(fields[0]))

static int hdr_off(const struct opd *o, int h)
{
	switch (h) {
	case H_BH:
		return 0;
	case H_DH:
		return o->dh ? o->dh : -1;
	case H_MH:
		return o->mh ? o->mh : -1;
	case H_RH:
		return o->rh ? o->rh : -1;
	case H_AH:
		return o->ah ? o->ah : -1;
	case H_ARH:
		return o->arh ? o->arh : -1;
	case H_KH:
		return o->kh ? o->kh : -1;
	case H_NKH:
		return o->nkh ? o->nkh : -1;
	default:
		return o->dgh ? o->dgh : -1;
	}
}

/* The boundary values of field @f of the packet @b; returns how many. */
static int bvalues(const struct fld *f, const uint8_t *b, const struct opd *o,
		   uint64_t *v)
{
	static const uint64_t b1[] = { 0, 1, 2, 5, 6, 31, 32, 63, 64, 0x7f,
				       0x80, 0xfe, 0xff };
	static const uint64_t b2[] = { 0, 1, 0x7fff, 0x8000, 0xfffe, 0xffff };
	static const uint64_t b3[] = { 0, 1, 2, 0xff, 0x7fffff, 0x800000,
				       0xfffffe, 0xffffff };
	static const uint64_t b8[] = { 0, 1, 0x7fffffffffffffffULL,
				       0x8000000000000000ULL,
				       0xfffffffffffffffeULL, ~0ULL };
	uint32_t psn = get24(b + 13), ml = 0, pm = pmtu();
	int n = 0, i;

	if (o->dh)
		ml = get32(b + o->dh + 4);
	else if (o->rh)
		ml = get32(b + o->rh + 12);
	switch (f->kind) {
	case K_FLAGS:
		v[n++] = 0;
		for (i = 0; i < f->size * 8; i++)
			v[n++] = 1ULL << i;
		v[n++] = f->size == 2 ? 0xffff : 0xff;
		return n;
	case K_QPN: {
		static const uint64_t q[] = { 0, 1, 2, 15, 0x800000, 0xffffff };

		memcpy(v, q, sizeof(q));
		return 6;
	}
	case K_LEN: {
		const uint64_t l[] = { 0, 1, pm - 1, pm, pm + 1, MAX_PAYLOAD,
				       MAX_PAYLOAD + 1, ml - 1, ml, ml + 1,
				       0x7fffffff, 0x80000000, 0x80000001,
				       0xffffffff };

		memcpy(v, l, sizeof(l));
		for (i = 0; i < 14; i++)
			v[i] &= 0xffffffff;
		return 14;
	}
	case K_VA:
		memcpy(v, b8, sizeof(b8));
		v[6] = (uint64_t)0 - ml;		/* ends at 2^64 */
		v[7] = (uint64_t)0 - ml + 1;		/* beyond */
		return 8;
	case K_NAKPSN: {
		static const int64_t d[] = { 0, 1, 255, 256, 257, PSN_HALF - 1,
					     PSN_HALF, PSN_MASK };

		for (i = 0; i < 8; i++)
			v[i] = psn_add(psn, d[i]);
		return 8;
	}
	case K_SACK:
		v[0] = 0;
		v[1] = 1;
		v[2] = 2;
		v[3] = 1ULL << 63;
		v[4] = ~0ULL;
		v[5] = ~1ULL;
		return 6;
	}
	switch (f->size) {
	case 1:
		memcpy(v, b1, sizeof(b1));
		return 13;
	case 2:
		memcpy(v, b2, sizeof(b2));
		return 6;
	case 3:
		memcpy(v, b3, sizeof(b3));
		return 8;
	case 4:
		for (i = 0; i < 7; i++)
			v[i] = bound32[i];
		return 7;
	}
	memcpy(v, b8, sizeof(b8));
	return 6;
}

/*
 * One pass over every opcode (0..255) and, for the defined ones, every
 * field with its boundary values and the payload lengths around the PMTU
 * and the 9216-byte limit.  @emit sends each variant.
 */
static void boundary_pass(struct ctx *x, bool live,
			  void (*emit)(struct ctx *, uint8_t *, size_t))
{
	static uint8_t b[PKT_MAX], base[PKT_MAX];
	const uint32_t pays[] = { 0, 1, pmtu() - 1, pmtu(), pmtu() + 1, 1400,
				  MAX_PAYLOAD, MAX_PAYLOAD + 1 };
	unsigned int op;
	size_t i, len;

	for (op = 0; op < 256 && more(x); op++) {
		const struct opd *o = opd_of(op);
		struct pkt k;
		uint64_t v[24];
		int n, j;

		pkt_valid(&k, (uint8_t)op, qpn_unknown(),
			  2 + (uint32_t)rnd_below(PSN_MASK - 1), pmtu());
		len = encode(base, &k);
		if (!o) {
			emit(x, base, len);
			continue;
		}
		for (i = 0; i < NFIELDS && more(x); i++) {
			const struct fld *f = &fields[i];
			int ho = hdr_off(o, f->hdr);

			if (ho < 0 || (live && f->kind == K_QPN && f->off == 5))
				continue;
			n = bvalues(f, base, o, v);
			for (j = 0; j < n; j++) {
				memcpy(b, base, len);
				put_be(b + ho + f->off, f->size, v[j]);
				emit(x, b, len);
			}
		}
		if (!(o->props & O_PAY)) {
			/* trailing bytes where no payload may be */
			memcpy(b, base, len);
			memset(b + len, 0x5a, 8);
			emit(x, b, len + 1);
			emit(x, b, len + 8);
			continue;
		}
		for (i = 0; i < sizeof(pays) / sizeof(pays[0]); i++) {
			struct pkt q = k;

			q.pay = pays[i];
			if (o->dh) {	/* a consistent single-packet message */
				q.offset = 0;
				q.msg_len = q.pay;
				q.flags |= F_FI | F_LA;
				if (va_overflows(q.va, q.msg_len))
					q.va = 0;
			}
			len = encode(b, &q);
			if (len <= RAW_MAX4)
				emit(x, b, len);
		}
	}
}

static void emit_unknown(struct ctx *x, uint8_t *b, size_t len)
{
	aim_unknown(b, len);
	send_model(x, (int)rnd_below(opt.ndev), b, len);
}

static void case_boundary(struct ctx *x, int arg)
{
	(void)arg;
	do
		boundary_pass(x, false, emit_unknown);
	while (more(x));
}

/* Every valid packet cut short at every length below its own. */
static void case_truncated(struct ctx *x, int arg)
{
	static uint8_t b[PKT_MAX];
	size_t i, l, len;

	(void)arg;
	do {
		for (i = 0; i < NOPS && more(x); i++) {
			struct pkt k;

			pkt_valid(&k, optab[i].op, qpn_unknown(),
				  2 + (uint32_t)rnd_below(PSN_MASK - 1), pmtu());
			if (k.pay > 200)
				k.pay = 200;
			len = encode(b, &k);
			for (l = 0; l < len && more(x); l++)
				send_model(x, (int)rnd_below(opt.ndev), b, l);
		}
	} while (more(x));
}

/* Datagrams beyond the link MTU (fragmented) and beyond 9216 bytes. */
static void case_oversized(struct ctx *x, int arg)
{
	static uint8_t b[PKT_MAX];
	const uint32_t big[] = { 2048, 4096, 4097, 8192, 9000, MAX_PAYLOAD,
				 MAX_PAYLOAD + 1, 16384, 65000 };
	size_t i, j, len;

	(void)arg;
	do {
		for (i = 0; i < NOPS && more(x); i++) {
			const struct opd *o = &optab[i];

			for (j = 0; j < sizeof(big) / sizeof(big[0]); j++) {
				struct pkt k;

				pkt_valid(&k, o->op, qpn_unknown(),
					  2 + (uint32_t)rnd_below(PSN_MASK - 1),
					  pmtu());
				k.pay = big[j];
				if (o->dh) {
					k.offset = 0;
					k.msg_len = k.pay;
					k.flags |= F_FI | F_LA;
					k.va = 0x100000;
				}
				len = encode(b, &k);
				send_model(x, (int)rnd_below(opt.ndev), b, len);
			}
		}
	} while (more(x));
}

/* Zero and wrong UDP checksums, IPv4 and IPv6. */
static void case_checksum(struct ctx *x, int arg)
{
	static uint8_t b[PKT_MAX];
	int d, cs, n = 0;

	(void)arg;
	do {
		for (d = 0; d < opt.ndev && more(x); d++) {
			const struct dev *v = &opt.dev[d];

			for (cs = CS_ZERO; cs <= CS_BAD; cs++) {
				size_t len = gen_valid_unknown(b);
				bool six = v->has6 && (n++ & 1);

				if (len > RAW_MAX6)
					continue;
				if (!send_pkt(x, six ? &v->own6 : &v->own4,
					      six ? &v->ip6 : &v->ip4, b, len, cs))
					continue;
				if (!six && cs == CS_ZERO)
					expect(x, d, "rx_drop_no_csum", 1, EXACT);
				else
					expect_add(x, d, true, six ?
						   "Udp6InCsumErrors" :
						   "Udp:InCsumErrors", 1, 0,
						   EXACT);
			}
		}
	} while (more(x));
}

/* ------------------------------------------------------------ live cases */

/*
 * Boundary values and mutations aimed at live QPs, from our own address:
 * whatever passes the packet-level checks must be dropped as
 * rx_drop_src_mismatch (C5), datagram opcodes as rx_drop_qp_type (C2).
 */
static struct snap live_s0;
static struct pair live_pr[16];
static int live_npr;

static void emit_live(struct ctx *x, uint8_t *b, size_t len)
{
	const struct pair *p;
	const struct qp *t, *peer;
	const struct dev *v;
	enum reason r;

	if (!live_npr)
		return;
	x->eligible++;
	p = &live_pr[rnd_below((uint64_t)live_npr)];
	t = chance(50) ? p->a : p->b;
	peer = t == p->a ? p->b : p->a;
	v = &opt.dev[t->dev];
	if (len >= BH_LEN) {
		put24(b + 5, t->lqpn);
		put24(b + 9, peer->lqpn);
	}
	r = spec_check(b, len);
	if (!send_pkt(x, &v->own4, &v->ip4, b, len, CS_OK))
		return;
	x->reasons[r]++;
	if (r != V_OK)
		expect(x, t->dev, reason_counter[r], 1, EXACT);
	else if (opd_of(b[1])->props & O_DG)
		pend_add(x, t->dev, t->lqpn, "rx_drop_qp_type", EXACT, false);
	else
		pend_add(x, t->dev, t->lqpn, "rx_drop_src_mismatch", EXACT, true);
}

/* Refresh the live targets every 32 packets; resolve what was sent. */
static void live_batch(struct ctx *x, struct snap *s1)
{
	snapshot(s1, false);
	pend_resolve(x, &live_s0, s1, false);
	live_s0 = *s1;
	live_npr = pairs(&live_s0, live_pr, 16);
}

static void emit_live_batched(struct ctx *x, uint8_t *b, size_t len)
{
	static struct snap s1;

	if (!live_npr || x->pkts % 32 == 0) {
		live_batch(x, &s1);
		while (!live_npr && more(x)) {
			x->skipped++;
			sleep_s(0.05);
			live_batch(x, &s1);
		}
	}
	emit_live(x, b, len);
}

static void case_live_fuzz(struct ctx *x, int arg)
{
	static uint8_t b[PKT_MAX];
	static struct snap s1;

	snapshot(&live_s0, false);
	live_npr = pairs(&live_s0, live_pr, 16);
	do {
		if (arg) {
			size_t len = mutate(b, gen_valid_unknown(b));

			emit_live_batched(x, b, len);
		} else {
			boundary_pass(x, true, emit_live_batched);
		}
	} while (more(x));
	live_batch(x, &s1);
}

/*
 * Forged ACKs and NAKs at requesters with packets outstanding, during
 * holds (nothing the peer sent can arrive).
 */
enum {
	A_WRONG_ADDR, A_WRONG_QPN, A_WRONG_DST, A_STALE, A_BEYOND,
	A_SACK_BEYOND, A_CONTROL, A_NAK_ADDR, A_NAK_QPN,
};

static void case_ack(struct ctx *x, int kind)
{
	const struct allow al = { .control = kind == A_CONTROL };
	struct snap s0, s1;
	struct pair v[8];
	int i, j, n;

	while (more(x)) {
		ep_begin(&s0);
		n = victims(&s0, v, 8, true);
		for (i = 0; i < n; i++) {
			const struct qp *a = v[i].a, *b = v[i].b;
			uint32_t nxt = a->sq_psn, epsn = b->rq_psn;
			uint32_t una = psn_add(nxt, -(int64_t)a->out);

			x->eligible++;
			for (j = 0; j < (kind == A_CONTROL ? 1 : 4); j++) {
				struct pkt k;
				const char *c = "rx_drop_src_mismatch";
				enum srck how = S_OK;
				int mode = EXACT;

				ack_base(&k, nxt);
				if (j & 1) {	/* some with an echo */
					k.rx_count = 1;
					k.echo_psn = psn_add(nxt, -1);
					k.echo_path = k.path;
					k.echo_ts = (uint32_t)rnd();
				}
				switch (kind) {
				case A_WRONG_ADDR:
					how = S_ADDR;
					break;
				case A_WRONG_QPN:
					how = S_QPN;
					break;
				case A_WRONG_DST:
					how = S_DST6;
					break;
				case A_STALE:
					/* before snd_una, SACKing up to snd_nxt */
					k.psn = psn_add(nxt, -257 - (int64_t)rnd_below(16));
					sack_range(k.sack, 1, 256);
					c = "rx_drop_ack_range";
					mode = ATLEAST;
					break;
				case A_BEYOND:
					k.psn = psn_add(nxt, 1 + (int64_t)rnd_below(1000));
					c = "rx_drop_ack_range";
					mode = ATLEAST;
					break;
				case A_SACK_BEYOND:
					/*
					 * SACK bits from the peer's ePSN up
					 * to the bitmap's end; with a full
					 * window (nxt is a bitmap's span
					 * from ePSN) no bit lies beyond
					 * nxt, so start halfway instead
					 */
					k.psn = fwd(epsn, nxt) < SACK_BITS ? epsn :
						psn_add(nxt, -SACK_BITS / 2);
					sack_range(k.sack, 1, SACK_BITS);
					c = "rx_drop_ack_range";
					mode = ATLEAST;
					break;
				case A_CONTROL:
					c = NULL;
					break;
				case A_NAK_ADDR:
				case A_NAK_QPN:
					k.op = OP_NAK;
					k.code = 3 + (uint8_t)((x->pkts + j) % 3);
					k.psn = fwd(una, epsn) < a->out ? epsn : una;
					k.nak_psn = k.psn;
					how = kind == A_NAK_ADDR ? S_ADDR : S_QPN;
					break;
				}
				forge(x, a, b, &k, how, c, mode);
			}
		}
		ep_end(x, &s1);
		pend_resolve(x, &s0, &s1, true);
		if (!n)
			x->skipped++;
		ep_judge(x, &s0, &s1, &al);
		gap();
	}
	if (kind == A_CONTROL && x->eligible && x->detected < x->eligible)
		harm(x, "control",
		     "control: only %u of %u valid forged ACKs were seen to take effect: the hold oracle is blind",
		     x->detected, x->eligible);
	if (kind == A_CONTROL)
		note(x, "control: a forged ACK that passes every check of the spec took effect in %u of %u holds (it must: no check can tell it from the peer's)",
		     x->detected, x->eligible);
}

/*
 * A stale ACK (before snd_una) from the right source with a rate hint of
 * 1 Mbit/s, sent at live requesters while they run (no hold).
 */
static void case_rate_hint(struct ctx *x, int arg)
{
	struct snap s0, s1;
	struct pair v[8];
	uint64_t rate0 = 0, rmin = ~0ULL;
	int i, n;

	(void)arg;
	while (more(x)) {
		snapshot(&s0, false);
		n = victims(&s0, v, 8, false);
		x->eligible += n > 0;
		for (i = 0; i < n; i++) {
			const struct qp *a = v[i].a;
			struct pkt k;

			if (!rate0)
				rate0 = a->rate;
			ack_base(&k, psn_add(a->sq_psn,
					     -257 - (int64_t)rnd_below(64)));
			k.hint = 1;
			forge(x, a, v[i].b, &k, S_OK, "rx_drop_ack_range",
			      ATLEAST);
		}
		if (!n)
			x->skipped++;
		sleep_s(0.02);
		snapshot(&s1, false);
		pend_resolve(x, &s0, &s1, false);
		for (i = 0; i < s1.nqp; i++) {
			const struct qp *q = &s1.qp[i];

			if (!qp_live(q) || !q->has_drv)
				continue;
			if (q->rate < rmin)
				rmin = q->rate;
			if (q->hint == 1)
				harm(x, "hint",
				     "%s QP %#x took the rate hint of a forged stale ACK: rate_hint_mbps 1, rate %" PRIu64 " Mbit/s",
				     dname(q->dev), q->lqpn, q->rate);
		}
		sleep_s(0.03);
	}
	if (rmin != ~0ULL)
		note(x, "requester rates: %" PRIu64 " Mbit/s at the start, lowest seen %" PRIu64 " Mbit/s (floor 10)",
		     rate0, rmin);
}

/*
 * PSN_SEQ_ERR NAKs from the right source.  A valid one (NAK PSN at least
 * 256 after BH.psn) can never lie in [snd_una, snd_nxt) with BH.psn in
 * [snd_una, snd_nxt]: rx_drop_ack_range (R1), and in any case the spec
 * gives PSN_SEQ_ERR no action but a count.  Resends they cause are
 * amplification.
 */
static void case_nak_seq(struct ctx *x, int arg)
{
	const unsigned int per = 10, nak_bytes = 96 + 8 + 20;
	struct snap s0, s1;
	struct pair v[1];
	double worst = 0;
	unsigned int i;

	(void)arg;
	while (more(x)) {
		const struct qp *a, *a1;
		uint32_t una;

		snapshot(&s0, false);
		if (!victims(&s0, v, 1, true)) {
			x->skipped++;
			sleep_s(0.005);
			continue;
		}
		a = v[0].a;
		x->eligible++;
		una = psn_add(a->sq_psn, -(int64_t)a->out);
		for (i = 0; i < per; i++) {
			struct pkt k;

			ack_base(&k, psn_add(una, -(int64_t)SACK_BITS));
			k.op = OP_NAK;
			k.code = 1;
			k.nak_psn = una;
			forge(x, a, v[0].b, &k, S_OK, "rx_drop_ack_range",
			      ATLEAST);
		}
		x->episodes++;
		sleep_s(0.25);
		snapshot(&s1, false);
		pend_resolve(x, &s0, &s1, false);
		a1 = qp_find(&s1, a->dev, a->lqpn);
		if (a1 && a1->has_drv) {
			uint64_t extra = a1->retx - a->retx;
			double amp = (double)extra * pmtu() / (per * nak_bytes);

			if (amp > worst)
				worst = amp;
			if (extra > per + opt.retx_slack)
				harm(x, "amplification",
				     "%u forged PSN_SEQ_ERR NAKs (%u bytes) made %s QP %#x resend %" PRIu64 " packets (%.0f KB) within 250 ms: %.0fx amplification",
				     per, per * nak_bytes, dname(a->dev), a->lqpn,
				     extra, extra * pmtu() / 1024.0, amp);
		}
		gap();
	}
	note(x, "worst resend amplification: %.1fx (bytes resent / bytes of forged NAKs; bound: %u + %u packets per %u NAKs)",
	     worst, per, opt.retx_slack, per);
}

/*
 * Forged READ and ATOMIC responses for requests that left while a hold
 * was in place (so the real answer cannot come).
 */
enum { RR_WRONG_SRC, RR_BAD_SINK, AR_WRONG_SRC };

/* Did the sniffer keep a request a @kind case can answer? */
static bool want_req(int kind)
{
	int i;

	for (i = 0; i < sn.nreq; i++)
		if ((sn.req[i].k.op == OP_READ_REQ) == (kind != AR_WRONG_SRC))
			return true;
	return false;
}

static void case_resp(struct ctx *x, int kind)
{
	const struct allow al = { 0 };
	struct snap s0, s1;
	int i;

	while (more(x)) {
		unsigned int forged = 0;
		double until;

		ep_begin(&s0);
		/* a request still unanswered retransmits at the RTO */
		for (until = now_s() + 0.2; !want_req(kind) && now_s() < until;) {
			sleep_s(0.01);
			sniff_drain(true);
		}
		if (want_req(kind))
			snapshot(&s0, true);
		for (i = 0; i < sn.nreq && forged < 4; i++) {
			const struct seen *r = &sn.req[i];
			int da = dev_of_addr(&r->src), db = dev_of_addr(&r->dst);
			const struct qp *a, *b;
			bool read = r->k.op == OP_READ_REQ;
			uint32_t off, end, pm = pmtu();

			if (da < 0 || db < 0 || read != (kind != AR_WRONG_SRC))
				continue;
			a = qp_find(&s0, da, r->k.sqpn);
			b = qp_find(&s0, db, r->k.dqpn);
			if (!qp_live(a) || !b)
				continue;
			forged++;
			x->eligible++;
			if (!read) {
				struct pkt k;

				memset(&k, 0, sizeof(k));
				k.op = OP_ATOMIC_RESP;
				k.words = -1;
				k.psn = r->k.psn;
				k.msn = r->k.msn;
				k.orig = rnd();
				k.path = (uint8_t)rnd_below(16);
				forge(x, a, b, &k, chance(50) ? S_ADDR : S_QPN,
				      "rx_drop_src_mismatch", EXACT);
				continue;
			}
			off = r->k.rd_off;
			end = r->k.rd_off + r->k.rd_length;
			if (end - off > 64 * pm)
				end = off + 64 * pm;
			do {
				struct pkt k;
				enum srck how = S_OK;

				memset(&k, 0, sizeof(k));
				k.op = OP_READ_RESP;
				k.words = -1;
				k.psn = r->k.psn;
				k.msn = r->k.msn;
				k.path = (uint8_t)rnd_below(16);
				k.va = r->k.sink_va;
				k.rkey = r->k.sink_key;
				k.msg_len = r->k.rd_len;
				k.offset = off;
				k.pay = end - off < pm ? end - off : pm;
				k.flags = (off ? 0 : F_FI) |
					  (off + k.pay == k.msg_len ? F_LA : 0) |
					  (off + k.pay == end ? F_AR : 0);
				if (kind == RR_WRONG_SRC) {
					how = chance(50) ? S_ADDR : S_QPN;
				} else if (chance(50)) {
					k.rkey ^= 0x00a5a500;
				} else {
					k.va += chance(50) ? pm : 8;
					if (va_overflows(k.va, k.msg_len))
						k.va = 0;
				}
				forge(x, a, b, &k, how, kind == RR_WRONG_SRC ?
				      "rx_drop_src_mismatch" :
				      "rx_drop_resp_unexpected",
				      kind == RR_WRONG_SRC ? EXACT : ATLEAST);
				off += k.pay;
			} while (off < end && more(x));
		}
		ep_end(x, &s1);
		pend_resolve(x, &s0, &s1, true);
		if (!forged)
			x->skipped++;
		ep_judge(x, &s0, &s1, &al);
		gap();
	}
	note(x, "%u %s requests were in flight during holds and got forged answers (%" PRIu64 " packets sniffed)",
	     x->eligible, kind == AR_WRONG_SRC ? "ATOMIC" : "READ", sn.pkts);
}

/*
 * Forged requests at live responders, during holds: from a wrong source
 * (in the window), from the right source far ahead of the window, and
 * WRITEs from the right source that break the segment rules (C10: a
 * single packet above the PMTU is no longer one, it is a message in a
 * large segment, spec "Large segments"), or whose
 * two packets disagree (C10 across a message: the second has another
 * MSN; both pass every check of their own, into a live MR the sniffer
 * saw a WRITE aimed at), or a SEND that names a receive WQE past the
 * next one to complete (its data would land in one WQE and the
 * completion report another).
 */
enum { Q_WRONG_SRC, Q_FAR, Q_BAD_OFFSET, Q_SHORT_FIRST, Q_MSG_MISMATCH,
	Q_WRONG_RWQE };

static void req_base(struct pkt *k, uint8_t op, const struct qp *a,
		     const struct qp *b, uint32_t psn)
{
	pkt_valid(k, op, b->lqpn, a->lqpn, pmtu());
	k->psn = psn;
	k->flags &= (uint16_t)~F_RT;
	if (opd_of(op)->dh && k->pay > 256) {	/* short single packets */
		k->offset = 0;
		k->msg_len = k->pay = 64;
		k->flags |= F_FI | F_LA;
	}
	/* a live target if the sniffer saw one */
	if (opd_of(op)->mh && sn.have_write &&
	    dev_of_addr(&sn.write.src) == a->dev &&
	    sn.write.k.dqpn == b->lqpn && sn.write.k.msg_len >= k->msg_len) {
		k->va = sn.write.k.va;
		k->rkey = sn.write.k.rkey;
		if (op == OP_CMP_SWP || op == OP_FETCH_ADD)
			k->va = (k->va + 7) & ~7ULL;
	}
}

/*
 * Two WRITE packets of one forged message at @epsn and @epsn + 1 of
 * responder @b, from @a's address, into the live range of the last WRITE
 * of more than a PMTU the sniffer saw (false if it has none for this
 * pair): each is a valid segment, but the second carries another MSN.
 */
static bool write_pair(struct ctx *x, const struct qp *a, const struct qp *b,
		       uint32_t epsn, uint32_t pm)
{
	struct pkt k;
	int i;

	const struct seen *w = &sn.big_write;
	uint32_t len;

	if (!sn.have_big_write || dev_of_addr(&w->src) != a->dev ||
	    w->k.dqpn != b->lqpn || w->k.msg_len <= pm ||
	    64 + pm > RAW_MAX4 || pm > MAX_PAYLOAD)
		return false;
	/* a full PMTU, then the rest (at most a PMTU) of the live range */
	len = w->k.msg_len < 2 * pm ? w->k.msg_len : 2 * pm;
	for (i = 0; i < 2; i++) {
		req_base(&k, OP_WRITE, a, b, psn_add(epsn, i));
		k.va = w->k.va;
		k.rkey = w->k.rkey;
		k.msn = w->k.msn + i;
		k.msg_len = len;
		k.offset = (uint32_t)i * pm;
		k.pay = i ? len - pm : pm;
		k.flags = i ? F_LA | F_AR : F_FI;
		forge(x, b, a, &k, S_OK, NULL, EXACT);
	}
	return true;
}

/* The SEND of requester device @dev to QP @dqpn the sniffer last saw. */
static const struct seen *send_of(int dev, uint32_t dqpn)
{
	int i;

	for (i = 0; i < sn.nsend; i++)
		if (dev_of_addr(&sn.send[i].src) == dev &&
		    sn.send[i].k.dqpn == dqpn)
			return &sn.send[i];
	return NULL;
}

/*
 * A one-packet SEND at @epsn of responder @b, from @a's address, into
 * the receive WQE after next: rq_seq_next + 1 from the responder's own
 * state (rdma resource, read during the hold), where the driver reports
 * it; else rq_seq + 2 where rq_seq is that of the last message taking a
 * receive WQE (SEND, WRITE_WITH_IMM) the sniffer saw complete.  False if
 * no such message of this pair was seen (its MSN is the sniffed one's
 * next).  The sniffer alone can be wrong: a capture that lost the last
 * packet of a message leaves it one behind, and its "after next" is then
 * the responder's next, a valid request.
 */
static bool send_skip(struct ctx *x, const struct qp *a, const struct qp *b,
		      uint32_t epsn)
{
	const struct seen *sd = send_of(a->dev, b->lqpn);
	struct pkt k;

	if (!sd)
		return false;
	req_base(&k, OP_SEND, a, b, epsn);
	k.msn = sd->k.msn + 1;
	k.rq_seq = b->has_rq_next ? b->rq_next + 1 : sd->k.rq_seq + 2;
	k.offset = 0;
	k.msg_len = k.pay = 16;
	k.flags = F_FI | F_LA | F_AR;
	forge(x, b, a, &k, S_OK, NULL, EXACT);
	return true;
}

static void case_req(struct ctx *x, int kind)
{
	static const uint8_t ops[] = { OP_WRITE, OP_SEND, OP_WRITE_IMM,
				       OP_READ_REQ, OP_CMP_SWP, OP_FETCH_ADD,
				       OP_SEND_IMM };
	const bool c10 = kind >= Q_BAD_OFFSET;
	const bool sniffed = kind == Q_MSG_MISMATCH || kind == Q_WRONG_RWQE;
	/*
	 * C10: the responder fails the connection with a fatal NAK, and the
	 * requester, if it has requests out, takes it and fails too.  One
	 * NAK per forged packet: a QP in ERR answers a request of its peer
	 * with the fatal NAK again, in case the first was lost.
	 */
	const struct allow al = {
		.naks = kind == Q_WRONG_SRC ? 0 : kind == Q_MSG_MISMATCH ? 2 : 1,
		.resp_err = c10, .req_err = c10,
	};
	struct snap s0, s1;
	struct pair v[8];
	int i, j, n;

	while (more(x)) {
		ep_begin(&s0);
		n = victims(&s0, v, c10 && !sniffed ? 1 : 8, false);
		if (sniffed) {
			/*
			 * The one pair (either direction) whose last SEND or
			 * large WRITE the sniffer saw: any other has no live
			 * target, so it is no victim.
			 */
			for (i = 0; i < n; i++) {
				uint32_t epsn = v[i].b->rq_psn;

				if (kind == Q_WRONG_RWQE ?
				    send_skip(x, v[i].a, v[i].b, epsn) :
				    write_pair(x, v[i].a, v[i].b, epsn, pmtu()))
					break;
			}
			if (i < n) {
				v[0] = v[i];
				x->eligible++;
			}
			n = i < n;
		}
		for (i = 0; i < n && !sniffed; i++) {
			const struct qp *a = v[i].a, *b = v[i].b;
			uint32_t epsn = b->rq_psn, pm = pmtu();
			struct pkt k;

			x->eligible++;
			if (c10) {
				req_base(&k, OP_WRITE, a, b, epsn);
				k.flags = F_AR;
				if (kind == Q_BAD_OFFSET) {
					k.offset = pm / 2;
					k.pay = 100;
					k.msg_len = k.offset + k.pay;
					k.flags |= F_LA;
				} else {
					k.offset = 0;
					k.pay = 100;
					k.msg_len = 3 * pm;
					k.flags |= F_FI;
				}
				if (64 + k.pay > RAW_MAX4 || k.pay > MAX_PAYLOAD) {
					note(x, "PMTU %u: no such WRITE fits a spoofed datagram",
					     pm);
					x->t_end = 0;
					break;
				}
				forge(x, b, a, &k, S_OK, NULL, EXACT);
				continue;
			}
			for (j = 0; j < (kind == Q_FAR ? 16 : 8); j++) {
				static const int64_t far[] = {
					0, 1, 100, 1000, PSN_HALF - 257,
				};
				uint32_t psn;

				if (kind == Q_FAR)
					psn = psn_add(epsn, 256 + (j < 5 ? far[j] :
						      (int64_t)rnd_below(PSN_HALF - 256)));
				else
					psn = psn_add(epsn, j ? (int64_t)rnd_below(SACK_BITS) : 0);
				req_base(&k, ops[j % sizeof(ops)], a, b, psn);
				forge(x, b, a, &k, kind == Q_FAR ? S_OK :
				      j & 1 ? S_QPN : S_ADDR,
				      kind == Q_FAR ? "rx_drop_psn_window" :
				      "rx_drop_src_mismatch", EXACT);
			}
		}
		ep_end(x, &s1);
		pend_resolve(x, &s0, &s1, true);
		if (!n)
			x->skipped++;
		ep_judge(x, &s0, &s1, &al);
		for (i = 0; c10 && i < n; i++) {
			const struct qp *b0 = v[i].b;
			const struct qp *b1 = qp_find(&s1, b0->dev, b0->lqpn);
			int64_t naks = naks_sent(&s0, &s1, b0->dev);

			/*
			 * A WQE that is not posted is RNR (C13), not fatal:
			 * then nothing was placed, which the transfers show.
			 */
			if (kind != Q_WRONG_RWQE)
				expect(x, b0->dev, "tx_naks_inv_req", 1, ATLEAST);
			if (!b1)
				continue;
			if (b1->rq_psn == b0->rq_psn && naks <= 0)
				harm(x, "ignored",
				     "%s QP %#x neither placed nor NAKed the forged request (no NAK sent)",
				     dname(b0->dev), b0->lqpn);
			if (kind == Q_WRONG_RWQE &&
			    cnt_delta(&s0, &s1, b0->dev, "tx_naks_rnr") > 0)
				continue;
			if (b1->state == QPS_RTS)
				harm(x, "not-fatal",
				     "%s QP %#x stayed in RTS: the forged request was not answered with a fatal NAK INVALID_REQUEST (spec C10, MR-33)",
				     dname(b0->dev), b0->lqpn);
		}
		if (c10 && n) {
			/* the connection is gone: wait for the next one */
			gap();
			if (more(x) && !wait_live())
				break;
		}
		gap();
	}
}

/*
 * A flood of duplicate READs (R3) during a hold: the last READ request
 * the sniffer saw, which its responder has executed, forged again and
 * again from the right source, in one burst.  A PSN is answered again at
 * most once per RTT, and the responses leave paced and budgeted from the
 * send engine with a short queue of re-executions: most of the burst is
 * counted rx_dup_read_dropped instead of multiplying the responder's
 * output.
 */
static void case_read_dups(struct ctx *x, int arg)
{
	const struct allow al = { 0 };
	const unsigned int burst = 128;
	struct snap s0, s1;

	(void)arg;
	while (more(x)) {
		const struct qp *a = NULL, *b = NULL;
		bool forged = false;
		double t_burst = 0;
		int da, db;

		ep_begin(&s0);
		if (sn.have_read) {
			da = dev_of_addr(&sn.read.src);
			db = dev_of_addr(&sn.read.dst);
			if (da >= 0 && db >= 0) {
				a = qp_find(&s0, da, sn.read.k.sqpn);
				b = qp_find(&s0, db, sn.read.k.dqpn);
			}
		}
		/*
		 * Executed (behind the responder's ePSN, within the window),
		 * and long enough that answering it takes a while.
		 */
		if (qp_live(a) && b && qp_live(b) &&
		    sn.read.k.rd_length >= 16 * pmtu() &&
		    fwd(sn.read.k.psn, b->rq_psn) >= 1 &&
		    fwd(sn.read.k.psn, b->rq_psn) <= SACK_BITS) {
			struct pkt k = sn.read.k;
			unsigned int i;

			x->eligible++;
			forged = true;
			k.flags |= F_RT;
			/* a burst, as fast as the raw socket takes them */
			x->paced = false;
			t_burst = now_s();
			for (i = 0; i < burst; i++)
				forge(x, b, a, &k, S_OK, NULL, EXACT);
			t_burst = now_s() - t_burst;
			x->paced = true;
			expect(x, b->dev, "rx_dup_read_dropped", 1, ATLEAST);
		} else {
			x->skipped++;
		}
		ep_end(x, &s1);
		if (forged) {
			int64_t re = cnt_delta(&s0, &s1, b->dev, "rx_dup_read_reexec");
			/*
			 * Once per max(SRTT, 1 ms) while the burst lasted (a
			 * slow guest spreads it), and the 4 queued.
			 */
			int64_t most = (int64_t)(t_burst * 1000) + 1 + 4;

			note(x, "%s: %" PRId64 " of %u duplicate READs answered again in %.1f ms (at most %" PRId64 ")",
			     dname(b->dev), re, burst, t_burst * 1000, most);
			if (re > most)
				harm(x, "amplified",
				     "%s answered %" PRId64 " of %u duplicate READs of one PSN again in %.1f ms (at most %" PRId64 ")",
				     dname(b->dev), re, burst, t_burst * 1000, most);
		}
		ep_judge(x, &s0, &s1, &al);
		gap();
	}
}

/* A silent peer: how many PROBEs does a requester send while it waits? */
static void case_probes(struct ctx *x, int arg)
{
	const struct allow al = { 0 };
	struct snap s0, sm, s1;
	double worst = 0;
	int i;

	(void)arg;
	while (more(x)) {
		struct pair v[1];

		ep_begin(&s0);
		x->eligible += pairs(&s0, v, 1);
		sleep_s(opt.probe_hold_ms / 2000.0);
		snapshot(&sm, true);
		sleep_s(opt.probe_hold_ms / 2000.0);
		ep_end(x, &s1);
		ep_judge(x, &s0, &s1, &al);
		for (i = 0; i < opt.ndev; i++) {
			int64_t p = cnt_delta(&s0, &s1, i, "tx_probes");
			int64_t p1 = cnt_delta(&s0, &sm, i, "tx_probes");
			double rate = p / (s1.t - s0.t);

			if (p < 0)
				continue;
			if (p > 0)
				note(x, "%s: %" PRId64 " PROBEs in %.0f ms of silence, %.0f/s in the first half, %.0f/s in the second",
				     dname(i), p, (s1.t - s0.t) * 1000,
				     p1 / (sm.t - s0.t), (p - p1) / (s1.t - sm.t));
			if (rate > worst)
				worst = rate;
			if (rate > opt.probe_rate_max)
				harm(x, "probes",
				     "%s sent %" PRId64 " PROBEs in %.0f ms towards a silent peer: %.0f per second (bound %.0f/s)",
				     dname(i), p, (s1.t - s0.t) * 1000, rate,
				     opt.probe_rate_max);
		}
		gap();
		gap();
	}
	note(x, "most PROBEs per second towards a silent peer: %.0f (bound %.0f/s, --probe-rate-max)",
	     worst, opt.probe_rate_max);
}

/* Legitimate traffic: holds with nothing forged, PROBEs to unknown QPs. */
static void case_sanity(struct ctx *x, int arg)
{
	const struct allow al = { 0 };
	static uint8_t b[PKT_MAX];
	struct snap s0, s1;
	struct pair v[1];
	struct pkt k;
	int d, i;

	(void)arg;
	while (more(x)) {
		for (d = 0; d < opt.ndev; d++)
			for (i = 0; i < 4; i++) {
				pkt_valid(&k, i & 1 ? OP_ACK : OP_PROBE,
					  qpn_unknown(), 16 + (uint32_t)rnd_below(64),
					  pmtu());
				send_model(x, d, b, encode(b, &k));
			}
		ep_begin(&s0);
		if (pairs(&s0, v, 1))
			x->eligible++;
		ep_end(x, &s1);
		ep_judge(x, &s0, &s1, &al);
		gap();
	}
}

/* Everything at once, as fast as it goes. */
static void case_flood(struct ctx *x, int arg)
{
	static uint8_t b[PKT_MAX];
	static struct snap s1;
	double next = 0;
	size_t len;

	(void)arg;
	x->paced = false;
	x->flood = true;
	snapshot(&live_s0, false);
	live_npr = pairs(&live_s0, live_pr, 16);
	while (more(x)) {
		if (now_s() >= next) {
			live_batch(x, &s1);
			next = now_s() + 0.1;
		}
		switch (rnd_below(10)) {
		case 0: case 1: case 2:
			len = gen_random(b);
			aim_unknown(b, len);
			send_model(x, (int)rnd_below(opt.ndev), b, len);
			break;
		case 3: case 4:
			len = mutate(b, gen_valid_unknown(b));
			aim_unknown(b, len);
			send_model(x, (int)rnd_below(opt.ndev), b, len);
			break;
		case 5: case 6:
			len = gen_valid_unknown(b);
			send_model(x, (int)rnd_below(opt.ndev), b, len);
			break;
		case 7:
			len = gen_valid_unknown(b);
			send_model(x, (int)rnd_below(opt.ndev), b,
				   rnd_below(len));
			break;
		default:
			len = chance(50) ? gen_valid_unknown(b) :
			      mutate(b, gen_valid_unknown(b));
			emit_live(x, b, len);
			break;
		}
	}
	live_batch(x, &s1);
}

/* ------------------------------------------------------------ the cases */

/* Is a verdict empty unless the case found something to aim at? */
static bool needs_target(const struct fcase *c)
{
	return (c->needs & N_SNIFF) ||
	       ((c->needs & N_LIVE) && c->run != case_flood);
}

static const struct fcase cases[] = {
	{ "sanity", N_LIVE | N_HOLD, case_sanity, 0,
	  "legitimate traffic: holds with nothing forged and PROBEs/ACKs to unknown QPs; every check must stay silent" },
	{ "random", 0, case_random, 0,
	  "random bytes of random length to both devices (P1..P12: the model's counter)" },
	{ "mutate", 0, case_random, 1,
	  "valid packets of every opcode with 1-3 random mutations (the model's counter)" },
	{ "boundary", 0, case_boundary, 0,
	  "every opcode 0..255; every field of every header at its boundary values; payloads around the PMTU and 9216" },
	{ "truncated", 0, case_truncated, 0,
	  "valid packets of every opcode cut at every length (rx_drop_short, or P11/P12 inside the payload)" },
	{ "oversized", 0, case_oversized, 0,
	  "datagrams of 2 KB .. 64 KB (IP fragments): payload > 9216 (a datagram's > 4096) or on an opcode without payload is rx_drop_length" },
	{ "checksum", 0, case_checksum, 0,
	  "zero UDP checksum: rx_drop_no_csum (IPv4), Udp6InCsumErrors (IPv6); wrong checksum: UDP InCsumErrors" },
	{ "boundary-live", N_LIVE, case_live_fuzz, 0,
	  "the boundary pass aimed at live QPs from a wrong address: rx_drop_src_mismatch (C5) or the P counter" },
	{ "mutate-live", N_LIVE, case_live_fuzz, 1,
	  "mutated valid packets aimed at live QPs from a wrong address: rx_drop_src_mismatch, rx_drop_qp_type or the P counter" },
	{ "ack-wrong-src-addr", N_LIVE | N_HOLD, case_ack, A_WRONG_ADDR,
	  "ACKs of everything up to snd_nxt from a wrong source address: rx_drop_src_mismatch, nothing delivered" },
	{ "ack-wrong-src-qpn", N_LIVE | N_HOLD, case_ack, A_WRONG_QPN,
	  "ACKs of everything up to snd_nxt from the peer's address, wrong source QPN: rx_drop_src_mismatch" },
	{ "ack-wrong-dst-addr", N_LIVE | N_HOLD | N_V6, case_ack, A_WRONG_DST,
	  "ACKs between the hosts' IPv6 addresses to a QP connected over IPv4 (not its GIDs): rx_drop_src_mismatch" },
	{ "ack-stale", N_LIVE | N_HOLD, case_ack, A_STALE,
	  "ACKs from the right source with a PSN before snd_una, SACKing up to snd_nxt: rx_drop_ack_range (R1)" },
	{ "ack-beyond-nxt", N_LIVE | N_HOLD, case_ack, A_BEYOND,
	  "ACKs from the right source with a PSN beyond snd_nxt: rx_drop_ack_range (R1)" },
	{ "ack-sack-beyond-nxt", N_LIVE | N_HOLD, case_ack, A_SACK_BEYOND,
	  "ACKs at the peer's ePSN with SACK bits beyond snd_nxt: rx_drop_ack_range (R1)" },
	{ "ack-rate-hint", N_LIVE, case_rate_hint, 0,
	  "stale ACKs from the right source with a rate hint of 1 Mbit/s: rx_drop_ack_range, the hint not applied" },
	{ "nak-fatal-wrong-src-addr", N_LIVE | N_HOLD, case_ack, A_NAK_ADDR,
	  "fatal NAKs (REMOTE_ACCESS, REMOTE_OP, INVALID_REQUEST) from a wrong address: rx_drop_src_mismatch, QP stays RTS" },
	{ "nak-fatal-wrong-src-qpn", N_LIVE | N_HOLD, case_ack, A_NAK_QPN,
	  "fatal NAKs from the peer's address, wrong source QPN: rx_drop_src_mismatch, QP stays RTS" },
	{ "nak-psn-seq-err", N_LIVE, case_nak_seq, 0,
	  "10 PSN_SEQ_ERR NAKs from the right source: rx_drop_ack_range (R1); resends <= 1 packet per NAK" },
	{ "read-resp-wrong-src", N_LIVE | N_HOLD | N_SNIFF, case_resp, RR_WRONG_SRC,
	  "READ responses for READs in flight, from a wrong address or QPN: rx_drop_src_mismatch, READ not completed" },
	{ "read-resp-bad-sink", N_LIVE | N_HOLD | N_SNIFF, case_resp, RR_BAD_SINK,
	  "READ responses from the right source with a wrong sink address or key: rx_drop_resp_unexpected (R2)" },
	{ "atomic-resp-wrong-src", N_LIVE | N_HOLD | N_SNIFF, case_resp, AR_WRONG_SRC,
	  "ATOMIC responses for atomics in flight from a wrong address or QPN: rx_drop_src_mismatch" },
	{ "req-wrong-src", N_LIVE | N_HOLD, case_req, Q_WRONG_SRC,
	  "requests of every opcode at in-window PSNs from a wrong address or QPN: rx_drop_src_mismatch, no answer" },
	{ "req-far-future", N_LIVE | N_HOLD, case_req, Q_FAR,
	  "requests from the right source 256 .. 2^23 PSNs ahead: rx_drop_psn_window, at most one PSN_SEQ_ERR NAK per ePSN (C7)" },
	{ "write-bad-offset", N_LIVE | N_HOLD, case_req, Q_BAD_OFFSET,
	  "a WRITE at the ePSN whose offset is not a multiple of the PMTU: NAK INVALID_REQUEST, nothing placed (C10)" },
	{ "write-short-first", N_LIVE | N_HOLD, case_req, Q_SHORT_FIRST,
	  "the first packet of a 3-PMTU WRITE with 100 bytes: NAK INVALID_REQUEST, nothing placed (C10)" },
	{ "send-wrong-rwqe", N_LIVE | N_HOLD | N_SNIFF, case_req, Q_WRONG_RWQE,
	  "a SEND at the ePSN into the receive WQE after next (rq_seq + 2 of the last SEND seen): NAK INVALID_REQUEST, or RNR if that WQE is not posted; no receive completes with its data (issue 12 #6)" },
	{ "write-msg-mismatch", N_LIVE | N_HOLD | N_SNIFF, case_req, Q_MSG_MISMATCH,
	  "a 2-packet WRITE into a live MR whose second packet has another MSN: NAK INVALID_REQUEST when ePSN reaches it (C10 across a message)" },
	{ "read-dup-flood", N_LIVE | N_HOLD | N_SNIFF, case_read_dups, 0,
	  "128 copies of an executed READ request of 16 PMTUs or more, from its requester, in one burst: answered again once per max(SRTT, 1 ms) at most, the rest counted rx_dup_read_dropped (R3)" },
	{ "silent-peer-probes", N_LIVE | N_HOLD, case_probes, 0,
	  "a peer silent for a hold: PROBEs per second of the waiting requester (bound --probe-rate-max)" },
	{ "flood", N_LIVE, case_flood, 0,
	  "everything at once, unpaced: random, mutated, truncated, valid to unknown QPs, wrong-source to live QPs" },
	{ "control-valid-ack", N_LIVE | N_HOLD, case_ack, A_CONTROL,
	  "control: an ACK from the right source up to snd_nxt passes every check, so it MUST take effect (proves the oracle sees)" },
};

#define NCASES	(sizeof(cases) / sizeof(cases[0]))

/* counters that nothing but our packets can raise: exactly 0 unless predicted */
static const char *const quiet_counters[] = {
	"rx_drop_no_csum", "rx_drop_gso", "rx_drop_short", "rx_drop_version",
	"rx_drop_opcode",
	"rx_drop_hdr_len", "rx_drop_reserved", "rx_drop_flags", "rx_drop_qpn",
	"rx_drop_path", "rx_drop_field", "rx_drop_length",
	"rx_drop_src_mismatch", "rx_drop_psn_window", "rx_drop_qkey",
};

static void snmp_all(int64_t v[MAXDEV][NSNMP])
{
	int d;
	size_t i;

	for (d = 0; d < opt.ndev; d++)
		for (i = 0; i < NSNMP; i++)
			v[d][i] = snmp_get(d, snmp_names[i]);
}

static int64_t snmp_delta(const int64_t a[MAXDEV][NSNMP],
			  const int64_t b[MAXDEV][NSNMP], int d,
			  const char *name)
{
	size_t i;

	for (i = 0; i < NSNMP; i++)
		if (!strcmp(snmp_names[i], name))
			return a[d][i] < 0 || b[d][i] < 0 ? -1 :
			       b[d][i] - a[d][i];
	return -1;
}

static char reasons_buf[8192];

static void add_reason(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void add_reason(const char *fmt, ...)
{
	size_t l = strlen(reasons_buf);
	va_list ap;

	if (l + 8 >= sizeof(reasons_buf))
		return;
	if (l)
		strcat(reasons_buf, "; ");
	l = strlen(reasons_buf);
	va_start(ap, fmt);
	vsnprintf(reasons_buf + l, sizeof(reasons_buf) - l, fmt, ap);
	va_end(ap);
}

/* Run one case; returns true if its verdict is ok. */
static bool run_case(const struct fcase *c, uint64_t seed)
{
	const bool control = c->run == case_ack && c->arg == A_CONTROL;
	static struct ctx x;
	static struct snap b, e;
	int64_t snmp1[MAXDEV][NSNMP];
	uint64_t lost;
	int d, i;
	size_t q;

	memset(&x, 0, sizeof(x));
	x.c = c;
	x.paced = true;
	reasons_buf[0] = 0;
	rnd_seed(seed);
	say("case %s: %s", c->name, c->what);
	if ((c->needs & N_HOLD) && !opt.nhold_if) {
		say("verdict %s: FAIL: needs --hold", c->name);
		return false;
	}
	if ((c->needs & N_SNIFF) && !opt.nsniff_if) {
		say("verdict %s: FAIL: needs --sniff", c->name);
		return false;
	}
	if (c->needs & N_V6)
		for (d = 0; d < opt.ndev; d++)
			if (!opt.dev[d].has6) {
				say("verdict %s: FAIL: needs IPv6 addresses (--dev NAME=IPV4,IPV6)",
				    c->name);
				return false;
			}
	if ((c->needs & N_LIVE) && !wait_live()) {
		say("verdict %s: FAIL: no live RC connection between the devices within %.0f s",
		    c->name, opt.wait_live);
		return false;
	}
	sniff_drain(false);
	snapshot(&b, true);
	snmp_all(x.snmp0);
	x.net_drops0 = softnet_drops();
	x.t0 = now_s();
	x.t_end = x.t0 + opt.seconds;
	x.t_grace = x.t_end;
	if (needs_target(c))
		x.t_grace += 3 * opt.seconds > GRACE_MIN_S ? 3 * opt.seconds : GRACE_MIN_S;
	c->run(&x, c->arg);
	hold_off();
	x.t_end = now_s();
	sleep_s(0.3);			/* let every packet be counted */
	snapshot(&e, true);
	snmp_all(snmp1);

	/* packets lost before any counter could see them */
	lost = softnet_drops() - x.net_drops0;
	for (d = 0; d < opt.ndev; d++) {
		int64_t u = snmp_delta(x.snmp0, snmp1, d, "Udp:RcvbufErrors");

		if (u > 0)
			lost += (uint64_t)u;
	}

	say("counts %s: packets=%" PRIu64 " bytes=%" PRIu64 " seconds=%.1f pps=%.0f episodes=%u holds_ms=%.0f skipped=%u send_errors=%" PRIu64 " network_drops=%" PRIu64,
	    c->name, x.pkts, x.bytes, x.t_end - x.t0,
	    x.pkts / (x.t_end - x.t0 > 0 ? x.t_end - x.t0 : 1), x.episodes,
	    x.held * 1000, x.skipped, x.tx_fail, lost);
	{
		char line[1024] = "";
		int r;

		for (r = 0; r < V_NREASON; r++)
			if (x.reasons[r])
				snprintf(line + strlen(line),
					 sizeof(line) - strlen(line), " %s=%" PRIu64,
					 r ? reason_counter[r] + 8 : "valid",
					 x.reasons[r]);
		if (line[0])
			say("model %s:%s", c->name, line);
	}

	/*
	 * Quiet counters are expected to stay put unless predicted; not in
	 * the control, which breaks its connection on purpose.
	 */
	for (d = 0; !control && d < opt.ndev; d++)
		for (q = 0; q < sizeof(quiet_counters) / sizeof(quiet_counters[0]); q++)
			expect_add(&x, d, false, quiet_counters[q], 0, 0, EXACT);

	for (i = 0; i < x.nex; i++) {
		const struct expect *ex = &x.ex[i];
		int64_t dv = ex->snmp ? snmp_delta(x.snmp0, snmp1, ex->dev, ex->name) :
			     cnt_delta(&b, &e, ex->dev, ex->name);
		uint64_t lo = ex->sure, hi = ex->sure + ex->unsure;
		char want[128];
		bool ok;

		if (dv < 0) {
			if (!ex->sure && !ex->unsure)
				continue;	/* absent and not needed */
			say("counter %s: %s %s: missing (expected %s%" PRIu64 "): FAIL",
			    c->name, dname(ex->dev), ex->name,
			    ex->mode == ATLEAST ? ">= +" : "+", lo);
			add_reason("%s has no counter %s (the spec's name; expected %s%" PRIu64 ")",
				   dname(ex->dev), ex->name,
				   ex->mode == ATLEAST ? ">= +" : "+", lo);
			continue;
		}
		/*
		 * Only the flood may lose packets to a full backlog; even
		 * then at least half of them must be counted.
		 */
		if (x.flood && lost)
			lo = lo > lost && lo - lost > lo / 2 ? lo - lost : lo / 2;
		ok = (uint64_t)dv >= lo && (ex->mode == ATLEAST || (uint64_t)dv <= hi);
		if (ex->mode == ATLEAST)
			snprintf(want, sizeof(want), ">= +%" PRIu64, lo);
		else if (hi != lo)
			snprintf(want, sizeof(want), "+%" PRIu64 " .. +%" PRIu64
				 ", %" PRIu64 " sent while the QP changed state",
				 lo, hi, ex->unsure);
		else
			snprintf(want, sizeof(want), "+%" PRIu64, lo);
		if (!ok || dv || lo || hi)
			say("counter %s: %s %s +%" PRId64 " (expected %s): %s",
			    c->name, dname(ex->dev), ex->name, dv, want,
			    ok ? "ok" : "FAIL");
		if (!ok)
			add_reason("%s %s +%" PRId64 ", expected %s%s",
				   dname(ex->dev), ex->name, dv, want,
				   !strcmp(ex->name, "rx_drop_psn_window") && !lo ?
				   " (requests beyond the responder's window: their requester took forged packets for the peer's)" :
				   "");
	}
	for (d = 0; d < opt.ndev; d++)
		for (i = 0; i < e.c[d].n; i++) {
			const char *n = e.c[d].name[i];
			int64_t dv = cnt_delta(&b, &e, d, n);
			int k;

			if (dv <= 0 || (strncmp(n, "rx_drop_", 8) &&
					strncmp(n, "rx_dup_", 7) &&
					strncmp(n, "tx_naks", 7)))
				continue;
			for (k = 0; k < x.nex; k++)
				if (x.ex[k].dev == d && !x.ex[k].snmp &&
				    !strcmp(x.ex[k].name, n))
					break;
			if (k == x.nex)
				say("moved %s: %s %s +%" PRId64 " (not predicted)",
				    c->name, dname(d), n, dv);
		}
	for (i = 0; i < x.nharm; i++) {
		say("found %s: %s%s", c->name, x.harm[i].msg,
		    x.harm[i].n > 1 ? " (and more like it)" : "");
		add_reason("%s (%ux)", x.harm[i].msg, x.harm[i].n);
	}
	for (i = 0; i < x.nnotes; i++)
		say("note %s: %s", c->name, x.notes[i]);
	if (needs_target(c) && !x.eligible && (c->needs & N_SNIFF))
		add_reason("no request was in flight during a hold: nothing to answer");
	else if (needs_target(c) && !x.eligible)
		add_reason("no live connection (with packets outstanding, where needed) to aim at");
	if (!x.pkts && c->run != case_probes && c->run != case_sanity)
		add_reason("nothing was sent");
	if (reasons_buf[0]) {
		say("verdict %s: FAIL: %s", c->name, reasons_buf);
		return false;
	}
	say("verdict %s: ok", c->name);
	return true;
}

/* ------------------------------------------------------------ main */

static void cleanup(void)
{
	hold_cleanup();
}

static void on_signal(int sig)
{
	(void)sig;
	/* the hold must not outlive us: the hosts would stay cut off */
	hold_cleanup();
	_exit(1);
}

static void usage(FILE *f)
{
	size_t i;

	fprintf(f,
"Usage: " ME " --dev NAME=IPV4[,IPV6][@NETNS] [--dev ...] [OPTIONS]\n"
"\n"
"Sends malformed and forged MetaRoCE packets (spec: Documentation/\n"
"metaroce-spec.rst) from this network namespace at the mroce devices\n"
"named, while whatever runs on them runs, and judges the outcome: the\n"
"device counter every packet must raise (P1..P12 predicted by a model\n"
"of the spec, C/R checks by what was forged), and, for forged packets\n"
"at live connections, that no requester counts undelivered packets as\n"
"delivered, no responder accepts them, no QP fails, nothing answers.\n"
"\n"
"  -d, --dev NAME=ADDR    an mroce device and its netdev's IPv4 address\n"
"                         (the GID of its connections); \",IPV6\" adds its\n"
"                         IPv6 address, \"@NETNS\" the namespace of its\n"
"                         netdev (for the UDP MIB counters)\n"
"  -c, --case LIST        comma list of cases, or \"all\" (default)\n"
"      --list             list the cases and exit\n"
"  -s, --seed N           PRNG seed (default: time); same seed and case,\n"
"                         same packets\n"
"  -t, --seconds S        time per case (default %.0f)\n"
"  -n, --count N          packets per case at most (default %" PRIu64 ")\n"
"      --rate PPS         rate of the paced cases (default %.0f; flood: max)\n"
"      --hold NS:DEV,...  drop the hosts' MetaRoCE traffic on the ingress of\n"
"                         DEVs in namespace NS during holds (tc flower;\n"
"                         needs sch_ingress, cls_flower, act_gact)\n"
"      --hold-ms MS       drain time at the start of a hold (default %u)\n"
"      --gap-ms MS        pause after a hold (default %u)\n"
"      --sniff NS:DEV,... capture what the hosts send on DEVs in NS\n"
"      --port N           MetaRoCE UDP port (default %u)\n"
"      --pmtu N           path MTU of the connections (default: learnt\n"
"                         from sniffed traffic, else %u)\n"
"      --wait-live S      wait for a live connection (default %.0f)\n"
"      --probe-rate-max N PROBEs per second a device may send towards a\n"
"                         silent peer (default %.0f)\n"
"      --retx-slack N     resends beyond one per forged PSN_SEQ_ERR NAK\n"
"                         tolerated (default %u)\n"
"      --dump N           hex dump the first N packets of each case\n"
"  -v, --verbose\n"
"  -h, --help\n"
"\n"
"Output per case: \"case\", \"counts\" (packets, bytes, pps, holds),\n"
"\"model\" (predicted drop reasons), \"counter\" lines, \"found\" (harm),\n"
"\"note\", and \"" ME ": verdict CASE: ok\" or \"...: FAIL: reasons\".\n"
"Exit status: 0 all cases ok, 1 a case failed, 2 usage, 3 setup error.\n"
"\n"
"Cases:\n",
		opt.seconds, opt.count, opt.rate, opt.hold_ms, opt.gap_ms,
		opt.port, opt.pmtu, opt.wait_live, opt.probe_rate_max,
		opt.retx_slack);
	for (i = 0; i < NCASES; i++)
		fprintf(f, "  %-24s %s\n", cases[i].name, cases[i].what);
}

static void parse_dev(const char *arg)
{
	char buf[256], *eq, *at, *comma;
	struct dev *d;

	if (opt.ndev >= MAXDEV)
		die(2, "at most %d --dev", MAXDEV);
	d = &opt.dev[opt.ndev++];
	snprintf(buf, sizeof(buf), "%s", arg);
	eq = strchr(buf, '=');
	if (!eq)
		die(2, "--dev %s: expected NAME=IPV4[,IPV6][@NETNS]", arg);
	*eq++ = 0;
	at = strchr(eq, '@');
	if (at) {
		*at++ = 0;
		snprintf(d->netns, sizeof(d->netns), "%s", at);
	}
	comma = strchr(eq, ',');
	if (comma)
		*comma++ = 0;
	snprintf(d->name, sizeof(d->name), "%.*s", (int)sizeof(d->name) - 1, buf);
	if (!addr_parse(eq, &d->ip4) || d->ip4.af != AF_INET)
		die(2, "--dev %s: bad IPv4 address %s", arg, eq);
	if (comma) {
		if (!addr_parse(comma, &d->ip6) || d->ip6.af != AF_INET6)
			die(2, "--dev %s: bad IPv6 address %s", arg, comma);
		d->has6 = true;
	}
}

static int parse_ifs(const char *arg, char *ns, size_t nslen,
		     char ifs[MAXIF][IFNAMSIZ])
{
	char buf[256], *colon, *save, *w;
	int n = 0;

	snprintf(buf, sizeof(buf), "%s", arg);
	colon = strchr(buf, ':');
	if (!colon)
		die(2, "expected NETNS:DEV[,DEV...], not %s", arg);
	*colon = 0;
	snprintf(ns, nslen, "%.*s", (int)nslen - 1, buf);
	for (w = strtok_r(colon + 1, ",", &save); w && n < MAXIF;
	     w = strtok_r(NULL, ",", &save))
		snprintf(ifs[n++], IFNAMSIZ, "%s", w);
	if (!n)
		die(2, "no interface in %s", arg);
	return n;
}

static double parse_num(const char *s, const char *what)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || v < 0)
		die(2, "bad %s: %s", what, s);
	return v;
}

static uint64_t case_seed(uint64_t seed, const char *name)
{
	uint64_t h = seed;

	while (*name)
		h = (h ^ (uint8_t)*name++) * 0x100000001b3ULL;
	return splitmix(&h);
}

int main(int argc, char **argv)
{
	enum { O_LIST = 256, O_RATE, O_HOLD, O_SNIFF, O_PORT, O_PMTU,
	       O_WAIT, O_PROBE, O_SLACK, O_DUMP, O_HOLDMS, O_GAPMS };
	static const struct option lo[] = {
		{ "dev", required_argument, NULL, 'd' },
		{ "case", required_argument, NULL, 'c' },
		{ "list", no_argument, NULL, O_LIST },
		{ "seed", required_argument, NULL, 's' },
		{ "seconds", required_argument, NULL, 't' },
		{ "count", required_argument, NULL, 'n' },
		{ "rate", required_argument, NULL, O_RATE },
		{ "hold", required_argument, NULL, O_HOLD },
		{ "hold-ms", required_argument, NULL, O_HOLDMS },
		{ "gap-ms", required_argument, NULL, O_GAPMS },
		{ "sniff", required_argument, NULL, O_SNIFF },
		{ "port", required_argument, NULL, O_PORT },
		{ "pmtu", required_argument, NULL, O_PMTU },
		{ "wait-live", required_argument, NULL, O_WAIT },
		{ "probe-rate-max", required_argument, NULL, O_PROBE },
		{ "retx-slack", required_argument, NULL, O_SLACK },
		{ "dump", required_argument, NULL, O_DUMP },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	bool sel[NCASES] = { false }, any = false, ok = true;
	int c, d;
	size_t i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	opt.cases = "all";
	while ((c = getopt_long(argc, argv, "d:c:s:t:n:vh", lo, NULL)) != -1) {
		switch (c) {
		case 'd':
			parse_dev(optarg);
			break;
		case 'c':
			opt.cases = optarg;
			break;
		case O_LIST:
			for (i = 0; i < NCASES; i++)
				printf("%-24s %s\n", cases[i].name, cases[i].what);
			return 0;
		case 's':
			opt.seed = strtoull(optarg, NULL, 0);
			opt.seed_set = true;
			break;
		case 't':
			opt.seconds = parse_num(optarg, "--seconds");
			break;
		case 'n':
			opt.count = (uint64_t)parse_num(optarg, "--count");
			break;
		case O_RATE:
			opt.rate = parse_num(optarg, "--rate");
			break;
		case O_HOLD:
			opt.nhold_if = parse_ifs(optarg, opt.hold_ns,
						 sizeof(opt.hold_ns), opt.hold_if);
			break;
		case O_HOLDMS:
			opt.hold_ms = (unsigned int)parse_num(optarg, "--hold-ms");
			break;
		case O_GAPMS:
			opt.gap_ms = (unsigned int)parse_num(optarg, "--gap-ms");
			break;
		case O_SNIFF:
			opt.nsniff_if = parse_ifs(optarg, opt.sniff_ns,
						  sizeof(opt.sniff_ns),
						  opt.sniff_if);
			break;
		case O_PORT:
			opt.port = (unsigned int)parse_num(optarg, "--port");
			break;
		case O_PMTU:
			opt.pmtu = (unsigned int)parse_num(optarg, "--pmtu");
			opt.pmtu_set = true;
			break;
		case O_WAIT:
			opt.wait_live = parse_num(optarg, "--wait-live");
			break;
		case O_PROBE:
			opt.probe_rate_max = parse_num(optarg, "--probe-rate-max");
			break;
		case O_SLACK:
			opt.retx_slack = (unsigned int)parse_num(optarg, "--retx-slack");
			break;
		case O_DUMP:
			opt.dump = (unsigned int)parse_num(optarg, "--dump");
			break;
		case 'v':
			opt.verbose++;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc || !opt.ndev) {
		fprintf(stderr, ME ": need at least one --dev NAME=IPV4\n");
		usage(stderr);
		return 2;
	}
	if (opt.rate < 1 || opt.pmtu < 256 || opt.pmtu > MAX_PMTU)
		die(2, "--rate must be >= 1, --pmtu 256..4096");
	{
		char buf[1024], *save, *w;

		snprintf(buf, sizeof(buf), "%s", opt.cases);
		for (w = strtok_r(buf, ",", &save); w;
		     w = strtok_r(NULL, ",", &save)) {
			bool hit = false;

			for (i = 0; i < NCASES; i++)
				if (!strcmp(w, "all") || !strcmp(w, cases[i].name)) {
					sel[i] = true;
					hit = true;
				}
			if (!hit)
				die(2, "unknown case %s (--list)", w);
			any = true;
		}
	}
	if (!any)
		die(2, "no case selected");
	if (!opt.seed_set)
		opt.seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20);

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	signal(SIGPIPE, SIG_IGN);
	tx_open();
	rdma_devices();
	for (d = 0; d < opt.ndev; d++) {
		own_addr(&opt.dev[d].ip4, &opt.dev[d].own4);
		if (opt.dev[d].has6)
			own_addr(&opt.dev[d].ip6, &opt.dev[d].own6);
		say("device %s (index %u): %s%s%s, netns %s; our address towards it %s",
		    opt.dev[d].name, opt.dev[d].index, addr_str(&opt.dev[d].ip4),
		    opt.dev[d].has6 ? " " : "",
		    opt.dev[d].has6 ? addr_str(&opt.dev[d].ip6) : "",
		    opt.dev[d].netns[0] ? opt.dev[d].netns : "(not given)",
		    addr_str(&opt.dev[d].own4));
	}
	hold_setup();
	sniff_setup();
	say("seed %" PRIu64 ", %.1f s and at most %" PRIu64 " packets per case, rate %.0f/s, UDP port %u",
	    opt.seed, opt.seconds, opt.count, opt.rate, opt.port);
	for (i = 0; i < NCASES; i++)
		if (sel[i] && !run_case(&cases[i], case_seed(opt.seed, cases[i].name)))
			ok = false;
	cleanup();
	return ok ? 0 : 1;
}
