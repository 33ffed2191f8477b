// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for the MetaRoCE v1 wire format (mroce_wire.[ch]).
 *
 * The expectations here are written from Documentation/metaroce-spec.rst,
 * not from the implementation: the golden packets are assembled byte by
 * byte from the spec's diagrams, and the reserved-bit map and the flag
 * table are the spec's tables.  A disagreement between the two is a bug
 * in one of them.
 *
 * Run with kunit/run-kunit.sh (UML), or load mroce.ko built with
 * CONFIG_RDMA_MROCE_KUNIT_TEST on a kernel with CONFIG_KUNIT.
 */
#include <kunit/test.h>
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "mroce_psn.h"
#include "mroce_wire.h"

#define ERR(e)		(-MROCE_WIRE_ERR_##e)
#define U24		0xffffffU
#define FUZZ_ROUNDS	10000
#define BUF_MAX		(MROCE_HLEN_MAX + MROCE_WIRE_MAX_PAYLOAD + 64)

/* ---- spec tables, restated independently of mroce_wire.c ---- */

struct spec_op {
	u8 opcode;
	u8 hlen;
	u16 flags_ok;		/* without PB_ACK */
	bool payload;
	bool pb;		/* may carry PB_ACK: a request */
};

#define SF_AR	0x01
#define SF_SE	0x02
#define SF_FI	0x04
#define SF_LA	0x08
#define SF_RT	0x10
#define SF_PB	0x20
#define PB_LEN	64	/* PBH 8 + KH 56 */

static const struct spec_op spec_ops[] = {
	{ 0x01, 48, SF_AR | SF_SE | SF_FI | SF_LA | SF_RT, true, true },	/* SEND */
	{ 0x02, 48, SF_AR | SF_SE | SF_FI | SF_LA | SF_RT, true, true },	/* SEND_IMM */
	{ 0x03, 64, SF_AR | SF_FI | SF_LA | SF_RT, true, true },		/* WRITE */
	{ 0x04, 64, SF_AR | SF_SE | SF_FI | SF_LA | SF_RT, true, true },	/* WRITE_IMM */
	{ 0x05, 72, SF_RT, false, true },					/* READ_REQ */
	{ 0x06, 64, SF_AR | SF_FI | SF_LA | SF_RT, true },		/* READ_RESP */
	{ 0x07, 64, SF_RT, false, true },					/* CMP_SWP */
	{ 0x08, 64, SF_RT, false, true },					/* FETCH_ADD */
	{ 0x09, 40, SF_RT, false },					/* ATOMIC_RESP */
	{ 0x0a, 48, SF_AR | SF_SE | SF_FI | SF_LA | SF_RT, true, true },	/* SEND_INV */
	{ 0x10, 88, 0, false },						/* ACK */
	{ 0x11, 96, 0, false },						/* NAK */
	{ 0x12, 32, SF_PB, false },					/* PROBE */
	{ 0x20, 40, SF_SE, true },					/* UD_SEND */
	{ 0x21, 40, SF_SE, true },					/* UD_SEND_IMM */
};

static const struct spec_op *spec_op(u8 opcode)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(spec_ops); i++)
		if (spec_ops[i].opcode == opcode)
			return &spec_ops[i];
	return NULL;
}

static void set_bytes(u8 *m, unsigned int from, unsigned int n, u8 v)
{
	memset(m + from, v, n);
}

/* The reserved bits of each opcode's headers (spec "Reserved fields"). */
static void spec_reserved_map(u8 opcode, u8 *m)
{
	memset(m, 0, MROCE_HLEN_MAX);
	m[2] = 0xff;			/* flags bits 15..8 */
	m[3] = 0xc0;			/* flags bits 7..6 */
	m[12] = 0xff;			/* above PSN */
	m[20] = 0xff;			/* above MSN */
	set_bytes(m, 28, 4, 0xff);	/* BH reserved word */

	switch (opcode) {
	case MROCE_OP_SEND:
		set_bytes(m, 44, 4, 0xff);	/* DH imm */
		break;
	case MROCE_OP_WRITE:
	case MROCE_OP_READ_RESP:
		set_bytes(m, 44, 4, 0xff);	/* MH reserved */
		set_bytes(m, 56, 8, 0xff);	/* DH rq_seq, imm */
		break;
	case MROCE_OP_WRITE_IMM:
	case MROCE_OP_READ_REQ:
	case MROCE_OP_ATOMIC_CMP_SWP:
		set_bytes(m, 44, 4, 0xff);	/* MH reserved */
		break;
	case MROCE_OP_ATOMIC_FETCH_ADD:
		set_bytes(m, 44, 4, 0xff);	/* MH reserved */
		set_bytes(m, 56, 8, 0xff);	/* AH compare */
		break;
	case MROCE_OP_NAK:
		set_bytes(m, 90, 3, 0xff);	/* NKH reserved, above NAK PSN */
		fallthrough;
	case MROCE_OP_ACK:
		set_bytes(m, 16, 4, 0xff);	/* path_seq */
		set_bytes(m, 21, 3, 0xff);	/* MSN */
		m[54] = 0xf0;			/* echo_flags bits 7..4 */
		break;
	case MROCE_OP_PROBE:
		set_bytes(m, 13, 3, 0xff);	/* PSN */
		set_bytes(m, 21, 3, 0xff);	/* MSN */
		break;
	case MROCE_OP_UD_SEND:
		set_bytes(m, 36, 4, 0xff);	/* DGH imm */
		fallthrough;
	case MROCE_OP_UD_SEND_IMM:
		set_bytes(m, 16, 4, 0xff);	/* path_seq */
		set_bytes(m, 21, 3, 0xff);	/* MSN */
		break;
	}
}

/* ---- deterministic PRNG (xorshift64*) ---- */

struct rnd {
	u64 s;
};

static u64 rnd64(struct rnd *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545f4914f6cdd1dULL;
}

static u32 rnd32(struct rnd *r)
{
	return rnd64(r) >> 32;
}

/* 0 .. n - 1, n > 0 */
static u32 rndn(struct rnd *r, u32 n)
{
	return (u32)(((u64)rnd32(r) * n) >> 32);
}

static u32 rnd_qpn(struct rnd *r, bool ud)
{
	/* small ones often, so that one mutation can make them 0 or 1 */
	if (!rndn(r, 4))
		return 2 + rndn(r, 8);
	/* connected: 2 .. 0xffffff; datagram: 1 .. 0xffffff */
	return ud ? 1 + rndn(r, U24) : 2 + rndn(r, U24 - 1);
}

static u32 rnd_msg_len(struct rnd *r)
{
	switch (rndn(r, 4)) {
	case 0:
		return 0;
	case 1:
		return 1 + rndn(r, MROCE_WIRE_MAX_PAYLOAD);
	case 2:
		return 1 + rndn(r, 1 << 20);
	default:
		return 1 + rndn(r, MROCE_WIRE_MAX_MSG_LEN);
	}
}

/* A random KH the spec says is valid: an ACK's, or a piggybacked one. */
static void rnd_kh(struct rnd *r, struct mroce_pkt_info *pi)
{
	int i;

	pi->rx_count = rndn(r, 8) ? 1 + rndn(r, 0xffff) : 0;
	if (pi->rx_count) {
		pi->ce_count = rndn(r, pi->rx_count + 1U);
		pi->echo_ts = rnd32(r);
		pi->echo_path_seq = rnd32(r);
		pi->echo_psn = rnd32(r) & U24;
		pi->echo_path_id = rndn(r, MROCE_WIRE_MAX_PATHS);
		pi->echo_flags = rnd32(r) & MROCE_ECHO_DEFINED;
		if (pi->echo_flags & MROCE_ECHO_SEG)
			pi->seg_max = 1 + rndn(r, U8_MAX);
		pi->ack_delay_us = rnd32(r);
	}
	pi->rate_hint_mbps = rnd32(r);
	for (i = 0; i < MROCE_WIRE_SACK_WORDS; i++)
		pi->sack[i] = rnd64(r) & rnd64(r);
	pi->sack[0] &= ~1ULL;
}

/* A random packet description that the spec says is valid. */
static void rnd_valid(struct rnd *r, u8 opcode, struct mroce_pkt_info *pi)
{
	const struct spec_op *so = spec_op(opcode);
	bool ud = opcode == MROCE_OP_UD_SEND || opcode == MROCE_OP_UD_SEND_IMM;

	memset(pi, 0, sizeof(*pi));
	pi->opcode = opcode;
	pi->flags = rnd32(r) & so->flags_ok;
	pi->dest_qpn = rnd_qpn(r, ud);
	pi->src_qpn = rnd_qpn(r, ud);
	pi->path_id = rndn(r, MROCE_WIRE_MAX_PATHS);
	pi->psn = rnd32(r) & U24;
	pi->path_seq = rnd32(r);
	pi->msn = rnd32(r) & U24;
	pi->ts_us = rnd32(r);

	switch (opcode) {
	case MROCE_OP_SEND:
	case MROCE_OP_SEND_IMM:
	case MROCE_OP_SEND_INV:
	case MROCE_OP_WRITE:
	case MROCE_OP_WRITE_IMM:
	case MROCE_OP_READ_RESP:
		pi->msg_len = rnd_msg_len(r);
		if (pi->msg_len) {
			pi->payload_len = 1 + rndn(r, min_t(u32, pi->msg_len,
							   MROCE_WIRE_MAX_PAYLOAD));
			pi->offset = rndn(r, pi->msg_len - pi->payload_len + 1);
		}
		if (rndn(r, 4) == 0)
			pi->offset = 0;	/* first packets are common */
		if (pi->offset + pi->payload_len > pi->msg_len)
			pi->payload_len = pi->msg_len - pi->offset;
		if (pi->msg_len && !pi->payload_len)
			pi->offset = 0, pi->payload_len = 1;
		pi->flags &= ~(SF_FI | SF_LA);
		if (!pi->offset)
			pi->flags |= SF_FI;
		if (pi->offset + pi->payload_len == pi->msg_len)
			pi->flags |= SF_LA;
		if (opcode == MROCE_OP_SEND || opcode == MROCE_OP_SEND_IMM ||
		    opcode == MROCE_OP_SEND_INV || opcode == MROCE_OP_WRITE_IMM)
			pi->rq_seq = rnd32(r);
		/* SEND_INV: the rkey to invalidate travels in the imm field */
		if (opcode == MROCE_OP_SEND_IMM || opcode == MROCE_OP_WRITE_IMM ||
		    opcode == MROCE_OP_SEND_INV)
			pi->imm = rnd32(r);
		if (opcode != MROCE_OP_SEND && opcode != MROCE_OP_SEND_IMM &&
		    opcode != MROCE_OP_SEND_INV) {
			pi->va = rnd64(r) >> 1;
			pi->rkey = rnd32(r);
		}
		break;
	case MROCE_OP_READ_REQ:
		pi->msg_len = rnd_msg_len(r);
		if (pi->msg_len) {
			pi->offset = rndn(r, 2) ? 0 : rndn(r, pi->msg_len);
			pi->rd_length = pi->msg_len - pi->offset;
			if (rndn(r, 2))
				pi->rd_length = 1 + rndn(r, pi->rd_length);
		}
		pi->va = rnd64(r) >> 1;
		pi->rkey = rnd32(r);
		pi->sink_va = rnd64(r) >> 1;
		pi->sink_key = rnd32(r);
		break;
	case MROCE_OP_ATOMIC_CMP_SWP:
		pi->compare = rnd64(r);
		fallthrough;
	case MROCE_OP_ATOMIC_FETCH_ADD:
		pi->va = rnd64(r) & ~7ULL;
		pi->rkey = rnd32(r);
		pi->swap_add = rnd64(r);
		break;
	case MROCE_OP_ATOMIC_RESP:
		pi->orig = rnd64(r);
		break;
	case MROCE_OP_NAK:
		pi->nak_code = 1 + rndn(r, MROCE_NAK_MAX);
		switch (pi->nak_code) {
		case MROCE_NAK_PSN_SEQ_ERR:
			pi->nak_psn = pi->psn + 256 + rndn(r, (1 << 23) - 256);
			break;
		case MROCE_NAK_RNR:
			pi->nak_psn = pi->psn + rndn(r, 256);
			pi->rnr_timer = rndn(r, 32);
			break;
		default:
			pi->nak_psn = pi->psn;
		}
		pi->nak_psn &= U24;
		fallthrough;
	case MROCE_OP_ACK:
		pi->path_seq = 0;
		pi->msn = 0;
		rnd_kh(r, pi);
		break;
	case MROCE_OP_PROBE:
		pi->psn = 0;
		pi->msn = 0;
		break;
	case MROCE_OP_UD_SEND_IMM:
		pi->imm = rnd32(r);
		fallthrough;
	case MROCE_OP_UD_SEND:
		pi->path_seq = 0;
		pi->msn = 0;
		pi->qkey = rnd32(r);
		pi->payload_len = rndn(r, MROCE_WIRE_MAX_PMTU + 1);
		break;
	}
}

/* A random piggybacked ACK on the request @pi: PB_ACK, PBH and KH. */
static void rnd_pb(struct rnd *r, struct mroce_pkt_info *pi)
{
	pi->flags |= SF_PB;
	pi->ack_psn = rnd32(r) & U24;
	rnd_kh(r, pi);
}

/* What the parser reports besides the builder's input. */
static void expect_filled(struct mroce_pkt_info *pi)
{
	const struct spec_op *so = spec_op(pi->opcode);

	pi->version = MROCE_WIRE_VERSION;
	pi->hdr_len = so->hlen + (so->pb && (pi->flags & SF_PB) ? PB_LEN : 0);
}

static void expect_field(struct kunit *test, const char *name, u64 got,
			 u64 want, u8 opcode)
{
	KUNIT_EXPECT_EQ_MSG(test, got, want, "field %s opcode %#x", name,
			    opcode);
}

static void expect_same(struct kunit *test, const struct mroce_pkt_info *got,
			const struct mroce_pkt_info *want)
{
	u8 op = want->opcode;
	int i;

	expect_field(test, "version", got->version, want->version, op);
	expect_field(test, "opcode", got->opcode, want->opcode, op);
	expect_field(test, "flags", got->flags, want->flags, op);
	expect_field(test, "path_id", got->path_id, want->path_id, op);
	expect_field(test, "dest_qpn", got->dest_qpn, want->dest_qpn, op);
	expect_field(test, "src_qpn", got->src_qpn, want->src_qpn, op);
	expect_field(test, "psn", got->psn, want->psn, op);
	expect_field(test, "path_seq", got->path_seq, want->path_seq, op);
	expect_field(test, "msn", got->msn, want->msn, op);
	expect_field(test, "ts_us", got->ts_us, want->ts_us, op);
	expect_field(test, "hdr_len", got->hdr_len, want->hdr_len, op);
	expect_field(test, "payload_len", got->payload_len, want->payload_len, op);
	expect_field(test, "offset", got->offset, want->offset, op);
	expect_field(test, "msg_len", got->msg_len, want->msg_len, op);
	expect_field(test, "rq_seq", got->rq_seq, want->rq_seq, op);
	expect_field(test, "imm", got->imm, want->imm, op);
	expect_field(test, "rd_length", got->rd_length, want->rd_length, op);
	expect_field(test, "va", got->va, want->va, op);
	expect_field(test, "rkey", got->rkey, want->rkey, op);
	expect_field(test, "sink_va", got->sink_va, want->sink_va, op);
	expect_field(test, "sink_key", got->sink_key, want->sink_key, op);
	expect_field(test, "swap_add", got->swap_add, want->swap_add, op);
	expect_field(test, "compare", got->compare, want->compare, op);
	expect_field(test, "orig", got->orig, want->orig, op);
	expect_field(test, "ack_psn", got->ack_psn, want->ack_psn, op);
	expect_field(test, "echo_ts", got->echo_ts, want->echo_ts, op);
	expect_field(test, "echo_path_seq", got->echo_path_seq, want->echo_path_seq, op);
	expect_field(test, "echo_psn", got->echo_psn, want->echo_psn, op);
	expect_field(test, "echo_path_id", got->echo_path_id, want->echo_path_id, op);
	expect_field(test, "echo_flags", got->echo_flags, want->echo_flags, op);
	expect_field(test, "seg_max", got->seg_max, want->seg_max, op);
	expect_field(test, "rx_count", got->rx_count, want->rx_count, op);
	expect_field(test, "ce_count", got->ce_count, want->ce_count, op);
	expect_field(test, "ack_delay_us", got->ack_delay_us, want->ack_delay_us, op);
	expect_field(test, "rate_hint_mbps", got->rate_hint_mbps, want->rate_hint_mbps, op);
	for (i = 0; i < MROCE_WIRE_SACK_WORDS; i++)
		expect_field(test, "sack", got->sack[i], want->sack[i], op);
	expect_field(test, "nak_code", got->nak_code, want->nak_code, op);
	expect_field(test, "rnr_timer", got->rnr_timer, want->rnr_timer, op);
	expect_field(test, "nak_psn", got->nak_psn, want->nak_psn, op);
	expect_field(test, "qkey", got->qkey, want->qkey, op);
	/* and nothing else: padding included, both come from memset */
	KUNIT_EXPECT_EQ(test, memcmp(got, want, sizeof(*got)), 0);
}

/*
 * Parse @len bytes of @pkt from a heap copy of exactly @len bytes (so
 * KASAN, where present, sees any read beyond the end), and check that the
 * result does not depend on what follows the packet in memory.
 */
static int parse_exact(struct kunit *test, const u8 *pkt, unsigned int len,
		       struct mroce_pkt_info *pi)
{
	struct mroce_pkt_info other;
	u8 *copy, *tail;
	int ret, ret2;

	copy = kmalloc(len ? len : 1, GFP_KERNEL);
	tail = kmalloc(len + 128, GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, copy);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, tail);

	memcpy(copy, pkt, len);
	ret = mroce_wire_parse(copy, len, pi);

	memcpy(tail, pkt, len);
	memset(tail + len, 0xff, 128);
	ret2 = mroce_wire_parse(tail, len, &other);
	KUNIT_EXPECT_EQ(test, ret, ret2);
	if (!ret && !ret2)
		KUNIT_EXPECT_EQ(test, memcmp(pi, &other, sizeof(*pi)), 0);

	kfree(copy);
	kfree(tail);
	return ret;
}

/*
 * Everything the spec promises about an accepted packet, checked from the
 * parsed description, plus canonical encoding: rebuilding the headers from
 * the description gives back the very same bytes, so no bit of an accepted
 * header went unchecked.
 */
static void check_accepted(struct kunit *test, const u8 *pkt, unsigned int len,
			   const struct mroce_pkt_info *pi)
{
	const struct spec_op *so = spec_op(pi->opcode);
	bool ud = pi->opcode == MROCE_OP_UD_SEND ||
		  pi->opcode == MROCE_OP_UD_SEND_IMM;
	bool msg = so && so->payload && !ud;
	u8 rebuilt[MROCE_HLEN_MAX];
	struct mroce_pkt_info copy;
	unsigned int hlen;
	bool pb;
	int ret;

	KUNIT_ASSERT_NOT_NULL(test, so);
	pb = so->pb && (pi->flags & SF_PB);
	hlen = so->hlen + (pb ? PB_LEN : 0);
	KUNIT_EXPECT_EQ(test, pi->version, MROCE_WIRE_VERSION);
	KUNIT_EXPECT_EQ(test, pi->hdr_len, hlen);
	KUNIT_ASSERT_GE(test, len, hlen);
	KUNIT_EXPECT_EQ(test, pi->payload_len, len - hlen);
	KUNIT_EXPECT_EQ(test,
			pi->flags & ~(so->flags_ok | (so->pb ? SF_PB : 0)), 0);
	KUNIT_EXPECT_LE(test, pi->dest_qpn, U24);
	KUNIT_EXPECT_LE(test, pi->src_qpn, U24);
	KUNIT_EXPECT_LE(test, pi->psn, U24);
	KUNIT_EXPECT_LE(test, pi->msn, U24);
	KUNIT_EXPECT_LE(test, pi->echo_psn, U24);
	KUNIT_EXPECT_LE(test, pi->nak_psn, U24);
	KUNIT_EXPECT_LT(test, pi->path_id, MROCE_WIRE_MAX_PATHS);
	KUNIT_EXPECT_LT(test, pi->echo_path_id, MROCE_WIRE_MAX_PATHS);
	KUNIT_EXPECT_NE(test, pi->dest_qpn, 0);
	KUNIT_EXPECT_NE(test, pi->src_qpn, 0);
	if (!ud) {
		KUNIT_EXPECT_NE(test, pi->dest_qpn, 1);
		KUNIT_EXPECT_NE(test, pi->src_qpn, 1);
	}
	if (!so->payload)
		KUNIT_EXPECT_EQ(test, pi->payload_len, 0);
	KUNIT_EXPECT_LE(test, pi->payload_len, MROCE_WIRE_MAX_PAYLOAD);
	if (msg) {
		KUNIT_EXPECT_LE(test, pi->msg_len, MROCE_WIRE_MAX_MSG_LEN);
		KUNIT_EXPECT_LE(test, (u64)pi->offset + pi->payload_len,
				(u64)pi->msg_len);
		if (!pi->payload_len)
			KUNIT_EXPECT_EQ(test, pi->msg_len, 0);
		KUNIT_EXPECT_EQ(test, !!(pi->flags & SF_FI), pi->offset == 0);
		KUNIT_EXPECT_EQ(test, !!(pi->flags & SF_LA),
				pi->offset + pi->payload_len == pi->msg_len);
	}
	if (pi->opcode == MROCE_OP_READ_REQ)
		KUNIT_EXPECT_LE(test, (u64)pi->offset + pi->rd_length,
				(u64)pi->msg_len);
	if (pi->opcode == MROCE_OP_ACK || pi->opcode == MROCE_OP_NAK || pb) {
		KUNIT_EXPECT_LE(test, pi->ce_count, pi->rx_count);
		KUNIT_EXPECT_EQ(test, pi->sack[0] & 1, 0);
		KUNIT_EXPECT_EQ(test, pi->echo_flags & ~MROCE_ECHO_DEFINED, 0);
		KUNIT_EXPECT_EQ(test, !(pi->echo_flags & MROCE_ECHO_SEG),
				!pi->seg_max);
	}
	if (pi->opcode == MROCE_OP_NAK) {
		KUNIT_EXPECT_GE(test, pi->nak_code, 1);
		KUNIT_EXPECT_LE(test, pi->nak_code, MROCE_NAK_MAX);
		KUNIT_EXPECT_LE(test, pi->rnr_timer, MROCE_WIRE_MAX_RNR_TIMER);
	}

	if (!pb)
		KUNIT_EXPECT_EQ(test, pi->ack_psn, 0);
	KUNIT_EXPECT_LE(test, pi->ack_psn, U24);

	copy = *pi;
	ret = mroce_wire_build(rebuilt, sizeof(rebuilt), &copy);
	KUNIT_EXPECT_EQ(test, ret, (int)hlen);
	if (ret == hlen)
		KUNIT_EXPECT_EQ_MSG(test, memcmp(rebuilt, pkt, hlen), 0,
				    "accepted header not canonical, opcode %#x",
				    pi->opcode);
}

/* A zeroed packet buffer, too big for the stack. */
static u8 *test_buf(struct kunit *test)
{
	u8 *buf = kunit_kzalloc(test, BUF_MAX, GFP_KERNEL);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, buf);
	return buf;
}

/* Build @pi into @buf and append a payload pattern. */
static unsigned int build_pkt(struct kunit *test, u8 *buf,
			      const struct mroce_pkt_info *pi)
{
	int ret = mroce_wire_build(buf, BUF_MAX, pi);
	unsigned int i;

	KUNIT_ASSERT_GT_MSG(test, ret, 0, "build opcode %#x: %s", pi->opcode,
			    mroce_wire_err_name(ret));
	for (i = 0; i < pi->payload_len; i++)
		buf[ret + i] = (u8)(i * 7 + 3);
	return ret + pi->payload_len;
}

/* ---- test cases ---- */

static void mroce_wire_test_layout(struct kunit *test)
{
	unsigned int op, known = 0;

	KUNIT_EXPECT_EQ(test, sizeof(struct mroce_bh), 32);
	KUNIT_EXPECT_EQ(test, sizeof(struct mroce_kh), 56);
	KUNIT_EXPECT_EQ(test, MROCE_WIRE_UDP_PORT, 4792);
	KUNIT_EXPECT_EQ(test, MROCE_WIRE_SACK_BITS, 256);
	KUNIT_EXPECT_LE(test, MROCE_HLEN_MAX_DATA, 64);

	for (op = 0; op < 256; op++) {
		const struct mroce_wire_opinfo *oi = mroce_wire_opinfo(op);
		const struct spec_op *so = spec_op(op);
		unsigned int sum = sizeof(struct mroce_bh);

		KUNIT_EXPECT_EQ_MSG(test, !!oi, !!so, "opcode %#x", op);
		if (!oi || !so)
			continue;
		known++;
		KUNIT_EXPECT_EQ_MSG(test, oi->hdr_len, so->hlen, "opcode %#x", op);
		KUNIT_EXPECT_EQ(test, oi->hdr_len % 8, 0);
		KUNIT_EXPECT_EQ_MSG(test, oi->flags_ok,
				    so->flags_ok | (so->pb ? SF_PB : 0),
				    "opcode %#x", op);
		KUNIT_EXPECT_EQ_MSG(test, mroce_wire_hdr_len(oi, SF_PB),
				    so->hlen + (so->pb ? PB_LEN : 0),
				    "opcode %#x", op);
		KUNIT_EXPECT_EQ_MSG(test, !!(oi->props & MROCE_OPP_REQUEST),
				    so->pb, "opcode %#x", op);
		KUNIT_EXPECT_EQ(test, !!(oi->props & MROCE_OPP_PAYLOAD),
				so->payload);
		sum += oi->off_dh ? sizeof(struct mroce_dh) : 0;
		sum += oi->off_mh ? sizeof(struct mroce_mh) : 0;
		sum += oi->off_rh ? sizeof(struct mroce_rh) : 0;
		sum += oi->off_ath ? sizeof(struct mroce_ath) : 0;
		sum += oi->off_arh ? sizeof(struct mroce_arh) : 0;
		sum += oi->off_kh ? sizeof(struct mroce_kh) : 0;
		sum += oi->off_nkh ? sizeof(struct mroce_nkh) : 0;
		sum += oi->off_dgh ? sizeof(struct mroce_dgh) : 0;
		KUNIT_EXPECT_EQ_MSG(test, sum, oi->hdr_len, "opcode %#x", op);
		KUNIT_EXPECT_NOT_NULL(test, oi->name);
	}
	KUNIT_EXPECT_EQ(test, known, ARRAY_SIZE(spec_ops));
	KUNIT_EXPECT_NULL(test, mroce_wire_opinfo(0));
	KUNIT_EXPECT_NULL(test, mroce_wire_opinfo(256));
	KUNIT_EXPECT_NULL(test, mroce_wire_opinfo(~0U));

	/* opcode properties the transport relies on */
	KUNIT_EXPECT_TRUE(test, mroce_wire_opinfo(MROCE_OP_WRITE_IMM)->props &
			  MROCE_OPP_RWQE);
	KUNIT_EXPECT_FALSE(test, mroce_wire_opinfo(MROCE_OP_WRITE)->props &
			   MROCE_OPP_RWQE);
	KUNIT_EXPECT_TRUE(test, mroce_wire_opinfo(MROCE_OP_UD_SEND)->props &
			  MROCE_OPP_RWQE);
	KUNIT_EXPECT_FALSE(test, mroce_wire_opinfo(MROCE_OP_READ_RESP)->props &
			   MROCE_OPP_RWQE);
	KUNIT_EXPECT_TRUE(test, mroce_wire_opinfo(MROCE_OP_SEND_IMM)->props &
			  MROCE_OPP_IMM);
	/* SEND_WITH_INV: a SEND whose imm field is an rkey, no immediate */
	KUNIT_EXPECT_TRUE(test, mroce_wire_opinfo(MROCE_OP_SEND_INV)->props &
			  MROCE_OPP_INV);
	KUNIT_EXPECT_TRUE(test, mroce_wire_opinfo(MROCE_OP_SEND_INV)->props &
			  MROCE_OPP_RWQE);
	KUNIT_EXPECT_FALSE(test, mroce_wire_opinfo(MROCE_OP_SEND_INV)->props &
			   MROCE_OPP_IMM);
	KUNIT_EXPECT_TRUE(test, mroce_wire_opinfo(MROCE_OP_READ_RESP)->props &
			  MROCE_OPP_RESPONSE);
	KUNIT_EXPECT_TRUE(test, mroce_wire_opinfo(MROCE_OP_NAK)->props &
			  MROCE_OPP_ACKNOWLEDGE);
}

/* The spec's example WRITE_WITH_IMM, byte by byte. */
static const u8 golden_write_imm[] = {
	0x01, 0x04, 0x00, 0x0f,  0x08, 0x00, 0x01, 0x23,
	0x05, 0x00, 0x04, 0x56,  0x00, 0xab, 0xcd, 0xef,
	0x01, 0x02, 0x03, 0x04,  0x00, 0x00, 0x00, 0x07,
	0x11, 0x22, 0x33, 0x44,  0x00, 0x00, 0x00, 0x00,
	/* MH */
	0x00, 0x00, 0x7f, 0x00,  0x12, 0x34, 0x50, 0x00,
	0xde, 0xad, 0xbe, 0xef,  0x00, 0x00, 0x00, 0x00,
	/* DH */
	0x00, 0x00, 0x00, 0x00,  0x00, 0x00, 0x00, 0x10,
	0x00, 0x00, 0x00, 0x09,  0x00, 0x00, 0x10, 0x00,
	/* 16 bytes of payload */
	0xa0, 0xa1, 0xa2, 0xa3,  0xa4, 0xa5, 0xa6, 0xa7,
	0xa8, 0xa9, 0xaa, 0xab,  0xac, 0xad, 0xae, 0xaf,
};

static void mroce_wire_test_golden_write_imm(struct kunit *test)
{
	struct mroce_pkt_info pi, want = {
		.version = 1, .opcode = MROCE_OP_WRITE_IMM,
		.flags = MROCE_F_ACK_REQ | MROCE_F_SOLICITED |
			 MROCE_F_FIRST | MROCE_F_LAST,
		.dest_qpn = 0x123, .path_id = 5, .src_qpn = 0x456,
		.psn = 0xabcdef, .path_seq = 0x01020304, .msn = 7,
		.ts_us = 0x11223344, .hdr_len = 64, .payload_len = 16,
		.va = 0x00007f0012345000ULL, .rkey = 0xdeadbeef,
		.offset = 0, .msg_len = 16, .rq_seq = 9, .imm = 0x1000,
	};
	u8 *buf = test_buf(test);

	KUNIT_ASSERT_EQ(test, parse_exact(test, golden_write_imm,
					  sizeof(golden_write_imm), &pi), 0);
	expect_same(test, &pi, &want);

	KUNIT_ASSERT_EQ(test, mroce_wire_build(buf, BUF_MAX, &want), 64);
	KUNIT_EXPECT_EQ(test, memcmp(buf, golden_write_imm, 64), 0);
}

/* The spec's example ACK: cumulative PSN 0xfffffe, SACK bits 1, 3, 64, 255. */
static const u8 golden_ack[] = {
	0x01, 0x10, 0x00, 0x00,  0x0b, 0x00, 0x04, 0x56,
	0x03, 0x00, 0x01, 0x23,  0x00, 0xff, 0xff, 0xfe,
	0x00, 0x00, 0x00, 0x00,  0x00, 0x00, 0x00, 0x00,
	0x0a, 0x0b, 0x0c, 0x0d,  0x00, 0x00, 0x00, 0x00,
	/* KH */
	0x11, 0x22, 0x33, 0x44,  0x01, 0x02, 0x03, 0x04,
	0x05, 0x00, 0x00, 0x01,  0x00, 0x08, 0x00, 0x03,
	0x00, 0x01, 0x86, 0xa0,  0x00, 0x19, 0x01, 0x00,
	0x00, 0x00, 0x00, 0x00,  0x00, 0x00, 0x00, 0x0a,
	0x00, 0x00, 0x00, 0x00,  0x00, 0x00, 0x00, 0x01,
	0x00, 0x00, 0x00, 0x00,  0x00, 0x00, 0x00, 0x00,
	0x80, 0x00, 0x00, 0x00,  0x00, 0x00, 0x00, 0x00,
};

static void mroce_wire_test_golden_ack(struct kunit *test)
{
	struct mroce_pkt_info pi, want = {
		.version = 1, .opcode = MROCE_OP_ACK,
		.dest_qpn = 0x456, .path_id = 3, .src_qpn = 0x123,
		.psn = 0xfffffe, .ts_us = 0x0a0b0c0d, .hdr_len = 88,
		.echo_ts = 0x11223344, .echo_path_seq = 0x01020304,
		.echo_path_id = 5, .echo_psn = 0x000001,
		.rx_count = 8, .ce_count = 3, .rate_hint_mbps = 100000,
		.ack_delay_us = 25, .echo_flags = MROCE_ECHO_CE,
		.sack = { 0xa, 0x1, 0, 0x8000000000000000ULL },
	};
	u8 *buf = test_buf(test);
	u32 psn;

	KUNIT_ASSERT_EQ(test, parse_exact(test, golden_ack, sizeof(golden_ack),
					  &pi), 0);
	expect_same(test, &pi, &want);

	/* received: 0xffffff, 0x000001, 0x00003e, 0x0000fd */
	for (psn = 0; psn < 256; psn++) {
		bool rcvd = psn == 1 || psn == 3 || psn == 64 || psn == 255;

		KUNIT_EXPECT_EQ_MSG(test, mroce_wire_sack_test(pi.sack, psn),
				    rcvd, "bit %u", psn);
	}
	KUNIT_EXPECT_EQ(test, (pi.psn + 3) & U24, pi.echo_psn);

	KUNIT_ASSERT_EQ(test, mroce_wire_build(buf, BUF_MAX, &want), 88);
	KUNIT_EXPECT_EQ(test, memcmp(buf, golden_ack, 88), 0);
}

/* An RNR NAK for PSN 0x000002 at cumulative point 0xffffff, timer 14. */
static void mroce_wire_test_golden_nak(struct kunit *test)
{
	u8 pkt[MROCE_HLEN_NAK];
	struct mroce_pkt_info pi;

	memset(pkt, 0, sizeof(pkt));
	memcpy(pkt, "\x01\x11\x00\x00\x0c\x00\x04\x56"
		    "\x00\x00\x01\x23\x00\xff\xff\xff", 16);
	memcpy(pkt + 24, "\x00\x00\x00\x2a", 4);	/* ts */
	memcpy(pkt + 32, "\x00\x00\x00\x01\x00\x00\x00\x09"
			 "\x07\x00\x00\x02\x00\x01\x00\x00", 16);
	memcpy(pkt + 88, "\x02\x0e\x00\x00\x00\x00\x00\x02", 8);

	KUNIT_ASSERT_EQ(test, parse_exact(test, pkt, sizeof(pkt), &pi), 0);
	KUNIT_EXPECT_EQ(test, pi.opcode, MROCE_OP_NAK);
	KUNIT_EXPECT_EQ(test, pi.psn, 0xffffffU);
	KUNIT_EXPECT_EQ(test, pi.nak_code, MROCE_NAK_RNR);
	KUNIT_EXPECT_EQ(test, pi.rnr_timer, 14);
	KUNIT_EXPECT_EQ(test, mroce_wire_rnr_timer_us(pi.rnr_timer), 1280U);
	KUNIT_EXPECT_EQ(test, pi.nak_psn, 2U);
	KUNIT_EXPECT_EQ(test, pi.echo_path_id, 7);
	KUNIT_EXPECT_EQ(test, pi.echo_psn, 2U);
	KUNIT_EXPECT_EQ(test, pi.echo_path_seq, 9U);
	KUNIT_EXPECT_EQ(test, pi.rx_count, 1);
	KUNIT_EXPECT_EQ(test, pi.ts_us, 42U);
	check_accepted(test, pkt, sizeof(pkt), &pi);
}

static void opcode_desc(const struct spec_op *so, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s",
		 mroce_wire_opinfo(so->opcode)->name);
}

KUNIT_ARRAY_PARAM(mroce_wire_ops, spec_ops, opcode_desc);

/* Build then parse gives back every field, for many random packets. */
static void mroce_wire_test_roundtrip(struct kunit *test)
{
	const struct spec_op *so = test->param_value;
	struct mroce_pkt_info in, out;
	struct rnd r = { 0x9e3779b97f4a7c15ULL ^ so->opcode };
	unsigned int len, i;
	u8 *buf;

	buf = kunit_kmalloc(test, BUF_MAX, GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, buf);

	for (i = 0; i < 300; i++) {
		rnd_valid(&r, so->opcode, &in);
		len = build_pkt(test, buf, &in);
		KUNIT_ASSERT_EQ_MSG(test, parse_exact(test, buf, len, &out), 0,
				    "round %u", i);
		expect_filled(&in);
		expect_same(test, &out, &in);
		check_accepted(test, buf, len, &out);
	}
}

/* 24-bit fields: helpers, wrap values, overflowing inputs. */
static void mroce_wire_test_u24(struct kunit *test)
{
	static const u32 vals[] = { 0, 1, 0x7fffff, 0x800000, 0xfffffe, U24 };
	struct mroce_pkt_info in, out;
	struct rnd r = { 24 };
	__be32 w;
	u8 *buf = test_buf(test);
	unsigned int i, len;

	mroce_wire_put8_24(&w, 0xa5, 0x1234567);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(w), 0xa5234567U);
	KUNIT_EXPECT_EQ(test, mroce_wire_get24(&w), 0x234567U);
	KUNIT_EXPECT_EQ(test, mroce_wire_get8hi(&w), 0xa5);
	mroce_wire_put8_24(&w, 0, U24);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(w), 0x00ffffffU);

	for (i = 0; i < ARRAY_SIZE(vals); i++) {
		rnd_valid(&r, MROCE_OP_NAK, &in);
		in.dest_qpn = vals[i] < 2 ? 2 : vals[i];
		in.src_qpn = vals[i] < 2 ? 2 : vals[i];
		in.psn = vals[i];
		in.rx_count = 1;
		in.ce_count = 0;
		in.echo_psn = vals[i];
		in.nak_code = MROCE_NAK_INV_REQ;
		in.rnr_timer = 0;
		in.nak_psn = vals[i];
		len = build_pkt(test, buf, &in);
		KUNIT_ASSERT_EQ(test, parse_exact(test, buf, len, &out), 0);
		expect_filled(&in);
		expect_same(test, &out, &in);

		rnd_valid(&r, MROCE_OP_SEND, &in);
		in.msn = vals[i];
		in.psn = vals[i];
		len = build_pkt(test, buf, &in);
		KUNIT_ASSERT_EQ(test, parse_exact(test, buf, len, &out), 0);
		KUNIT_EXPECT_EQ(test, out.msn, vals[i]);
		KUNIT_EXPECT_EQ(test, out.psn, vals[i]);
	}

	/* the builder refuses values that do not fit instead of masking */
	rnd_valid(&r, MROCE_OP_ACK, &in);
	in.psn = BIT(24);
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), ERR(FIELD));
	rnd_valid(&r, MROCE_OP_ACK, &in);
	in.dest_qpn = 0x1000002;
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), ERR(FIELD));
	rnd_valid(&r, MROCE_OP_ACK, &in);
	in.src_qpn = ~0U;
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), ERR(FIELD));
	rnd_valid(&r, MROCE_OP_SEND, &in);
	in.msn = BIT(24);
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), ERR(FIELD));
	rnd_valid(&r, MROCE_OP_ACK, &in);
	in.rx_count = 1;
	in.echo_psn = BIT(31);
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), ERR(FIELD));
	rnd_valid(&r, MROCE_OP_NAK, &in);
	in.nak_psn = BIT(25);
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), ERR(FIELD));
}

/* Every truncation of every opcode's header is SHORT. */
static void mroce_wire_test_truncate(struct kunit *test)
{
	struct mroce_pkt_info in, out;
	struct rnd r = { 7 };
	unsigned int i, len, cut;
	u8 *buf = test_buf(test);

	for (i = 0; i < ARRAY_SIZE(spec_ops); i++) {
		rnd_valid(&r, spec_ops[i].opcode, &in);
		len = build_pkt(test, buf, &in);
		for (cut = 0; cut < spec_ops[i].hlen; cut++)
			KUNIT_EXPECT_EQ_MSG(test, parse_exact(test, buf, cut, &out),
					    ERR(SHORT), "opcode %#x len %u",
					    spec_ops[i].opcode, cut);
		KUNIT_EXPECT_EQ(test, parse_exact(test, buf, len, &out), 0);
	}
	KUNIT_EXPECT_EQ(test, mroce_wire_parse(NULL, 0, &out), ERR(SHORT));
}

static void mroce_wire_test_version(struct kunit *test)
{
	struct mroce_pkt_info in, out;
	struct rnd r = { 1 };
	unsigned int v, len;
	u8 *buf = test_buf(test);

	rnd_valid(&r, MROCE_OP_WRITE, &in);
	len = build_pkt(test, buf, &in);
	for (v = 0; v < 256; v++) {
		buf[0] = v;
		KUNIT_EXPECT_EQ_MSG(test, parse_exact(test, buf, len, &out),
				    v == 1 ? 0 : ERR(VERSION), "version %u", v);
	}
	/* version is checked before anything but the base length */
	memset(buf, 0, 32);
	KUNIT_EXPECT_EQ(test, parse_exact(test, buf, 32, &out), ERR(VERSION));
	KUNIT_EXPECT_EQ(test, parse_exact(test, buf, 31, &out), ERR(SHORT));
}

static void mroce_wire_test_opcode(struct kunit *test)
{
	struct mroce_pkt_info in, out;
	struct rnd r = { 2 };
	unsigned int op, len, words;
	u8 *buf = test_buf(test);

	rnd_valid(&r, MROCE_OP_ACK, &in);
	len = build_pkt(test, buf, &in);
	for (op = 0; op < 256; op++) {
		if (spec_op(op))
			continue;
		buf[1] = op;
		/* whatever hdr_words says, an unknown opcode is OPCODE */
		for (words = 0; words < 256; words += 17) {
			buf[4] = words;
			KUNIT_EXPECT_EQ_MSG(test, parse_exact(test, buf, len, &out),
					    ERR(OPCODE), "opcode %#x", op);
		}
	}
	/* all-zero after a valid version */
	memset(buf, 0, BUF_MAX);
	buf[0] = 1;
	KUNIT_EXPECT_EQ(test, parse_exact(test, buf, 64, &out), ERR(OPCODE));

	in.opcode = 0x13;
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in),
			ERR(OPCODE));
	in.opcode = MROCE_OP_EXPERIMENTAL_FIRST;
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in),
			ERR(OPCODE));
}

static void mroce_wire_test_hdr_len(struct kunit *test)
{
	struct mroce_pkt_info in, out;
	struct rnd r = { 3 };
	unsigned int i, words, len;
	u8 *buf = test_buf(test);

	for (i = 0; i < ARRAY_SIZE(spec_ops); i++) {
		rnd_valid(&r, spec_ops[i].opcode, &in);
		len = build_pkt(test, buf, &in);
		KUNIT_EXPECT_EQ(test, buf[4], spec_ops[i].hlen / 8);
		for (words = 0; words < 256; words++) {
			buf[4] = words;
			KUNIT_EXPECT_EQ_MSG(test, parse_exact(test, buf, len, &out),
					    words * 8 == spec_ops[i].hlen ?
					    0 : ERR(HDR_LEN),
					    "opcode %#x words %u",
					    spec_ops[i].opcode, words);
		}
	}
}

/*
 * Flip every header bit of every opcode: a reserved bit (spec map) gives
 * RESERVED; any other bit never does, and if the packet is still
 * accepted it is canonical.
 */
static void mroce_wire_test_reserved(struct kunit *test)
{
	struct mroce_pkt_info in, out;
	struct rnd r = { 4 };
	u8 map[MROCE_HLEN_MAX], *buf = test_buf(test);
	unsigned int i, byte, bit, len, nres;
	int ret;

	for (i = 0; i < ARRAY_SIZE(spec_ops); i++) {
		u8 opc = spec_ops[i].opcode;

		spec_reserved_map(opc, map);
		rnd_valid(&r, opc, &in);
		/* a zero-length message exercises the most rules */
		if (in.msg_len && opc != MROCE_OP_READ_REQ) {
			in.msg_len = in.payload_len;
			in.offset = 0;
			in.flags |= SF_FI | SF_LA;
		}
		len = build_pkt(test, buf, &in);
		nres = 0;
		for (byte = 0; byte < spec_ops[i].hlen; byte++) {
			for (bit = 0; bit < 8; bit++) {
				bool rsv = map[byte] & BIT(bit);

				buf[byte] ^= BIT(bit);
				ret = parse_exact(test, buf, len, &out);
				if (rsv) {
					nres++;
					KUNIT_EXPECT_EQ_MSG(test, ret, ERR(RESERVED),
							    "opcode %#x byte %u bit %u",
							    opc, byte, bit);
				} else if (byte != 1) {
					KUNIT_EXPECT_NE_MSG(test, ret, ERR(RESERVED),
							    "opcode %#x byte %u bit %u",
							    opc, byte, bit);
				}
				if (!ret)
					check_accepted(test, buf, len, &out);
				buf[byte] ^= BIT(bit);
			}
		}
		KUNIT_EXPECT_GT(test, nres, 0);
		KUNIT_EXPECT_EQ(test, parse_exact(test, buf, len, &out), 0);
	}
}

static void mroce_wire_test_flags(struct kunit *test)
{
	struct mroce_pkt_info in, out;
	struct rnd r = { 5 };
	unsigned int i, f, len;
	u8 *buf = test_buf(test);
	int ret;

	for (i = 0; i < ARRAY_SIZE(spec_ops); i++) {
		const struct spec_op *so = &spec_ops[i];

		for (f = 0; f < 6; f++) {
			u16 flag = BIT(f);
			int want = (so->flags_ok & flag) ? so->hlen : ERR(FLAGS);

			if (flag & (SF_FI | SF_LA))
				continue;	/* below */
			if (flag == SF_PB && so->pb)
				want = so->hlen + PB_LEN;
			rnd_valid(&r, so->opcode, &in);
			in.flags |= flag;
			ret = mroce_wire_build(buf, BUF_MAX, &in);
			KUNIT_EXPECT_EQ_MSG(test, ret, want, "opcode %#x flag %#x",
					    so->opcode, flag);
		}
		if (so->flags_ok & SF_FI)
			continue;
		/* FIRST/LAST on an opcode without messages */
		rnd_valid(&r, so->opcode, &in);
		len = build_pkt(test, buf, &in);
		buf[3] |= SF_FI;
		KUNIT_EXPECT_EQ(test, parse_exact(test, buf, len, &out), ERR(FLAGS));
		buf[3] ^= SF_FI | SF_LA;
		KUNIT_EXPECT_EQ(test, parse_exact(test, buf, len, &out), ERR(FLAGS));
	}

	/* FIRST and LAST must agree with offset and length */
	memset(&in, 0, sizeof(in));
	in.opcode = MROCE_OP_WRITE;
	in.dest_qpn = 2;
	in.src_qpn = 3;
	in.msg_len = 3 * 1024;
	in.payload_len = 1024;
	in.offset = 1024;		/* middle */
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), 64);
	in.flags = MROCE_F_FIRST;
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), ERR(FLAGS));
	in.flags = MROCE_F_LAST;
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), ERR(FLAGS));
	in.offset = 0;			/* first */
	in.flags = 0;
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), ERR(FLAGS));
	in.flags = MROCE_F_FIRST;
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), 64);
	in.offset = 2048;		/* last */
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), ERR(FLAGS));
	in.flags = MROCE_F_LAST;
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), 64);
	in.msg_len = 1024;		/* only */
	in.offset = 0;
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), ERR(FLAGS));
	in.flags = MROCE_F_FIRST | MROCE_F_LAST;
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), 64);
	in.msg_len = 0;			/* empty */
	in.payload_len = 0;
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), 64);
	in.flags = MROCE_F_FIRST;
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), ERR(FLAGS));
}

/*
 * PB_ACK (spec "Piggybacked acknowledgment"): a request carries PBH and
 * KH after its own headers, checked as an ACK's are; the flag and the
 * header length must agree; other opcodes drop the flag; a chunk's
 * template does not carry it.
 */
static void mroce_wire_test_pb_ack(struct kunit *test)
{
	static const struct { u8 off, mask; } pb_rsv[] = {
		{ 0, 0xff },		/* PBH bits above the ack PSN */
		{ 4, 0xff }, { 5, 0xff }, { 6, 0xff }, { 7, 0xff },
		{ 8 + 22, 0xf0 },	/* KH echo_flags bits 7..4 */
	};
	struct mroce_wire_seg seg = { .flags = MROCE_F_FIRST };
	struct mroce_pkt_info in, out, bad;
	unsigned int i, j, n, len, hl, bit;
	struct rnd r = { 23 };
	u8 *buf = test_buf(test), *t = test_buf(test);
	int tlen;

	for (i = 0; i < ARRAY_SIZE(spec_ops); i++) {
		const struct spec_op *so = &spec_ops[i];

		rnd_valid(&r, so->opcode, &in);
		if (so->flags_ok & SF_PB) {
			/* PROBE: a question, without PBH and KH */
			len = build_pkt(test, buf, &in);
			buf[3] |= SF_PB;
			KUNIT_EXPECT_EQ(test, parse_exact(test, buf, len, &out), 0);
			KUNIT_EXPECT_EQ(test, out.hdr_len, so->hlen);
			continue;
		}
		if (!so->pb) {
			/* not a request: the flag is one it may not carry */
			len = build_pkt(test, buf, &in);
			buf[3] |= SF_PB;
			KUNIT_EXPECT_EQ_MSG(test, parse_exact(test, buf, len, &out),
					    ERR(FLAGS), "opcode %#x", so->opcode);
			continue;
		}
		hl = so->hlen + PB_LEN;
		for (n = 0; n < 64; n++) {
			rnd_valid(&r, so->opcode, &in);
			rnd_pb(&r, &in);
			len = build_pkt(test, buf, &in);
			KUNIT_ASSERT_EQ(test, len, hl + in.payload_len);
			KUNIT_ASSERT_EQ(test, parse_exact(test, buf, len, &out), 0);
			expect_filled(&in);
			expect_same(test, &out, &in);
			check_accepted(test, buf, len, &out);
			if (in.payload_len)	/* the payload after PBH and KH */
				KUNIT_EXPECT_EQ(test, buf[hl], 3);
		}
		/* the flag and the header length disagree */
		buf[3] &= ~SF_PB;
		KUNIT_EXPECT_EQ(test, parse_exact(test, buf, len, &out), ERR(HDR_LEN));
		buf[3] |= SF_PB;
		buf[4] -= PB_LEN / 8;
		KUNIT_EXPECT_EQ(test, parse_exact(test, buf, len, &out), ERR(HDR_LEN));
		buf[4] += PB_LEN / 8;
		KUNIT_EXPECT_EQ(test, parse_exact(test, buf, hl - 1, &out), ERR(SHORT));
		/* every reserved bit of PBH and KH */
		for (j = 0; j < ARRAY_SIZE(pb_rsv); j++) {
			for (bit = 0; bit < 8; bit++) {
				if (!(pb_rsv[j].mask & BIT(bit)))
					continue;
				buf[so->hlen + pb_rsv[j].off] ^= BIT(bit);
				KUNIT_EXPECT_EQ_MSG(test, parse_exact(test, buf, len, &out),
						    ERR(RESERVED), "opcode %#x byte %u",
						    so->opcode, so->hlen + pb_rsv[j].off);
				buf[so->hlen + pb_rsv[j].off] ^= BIT(bit);
			}
		}
		KUNIT_EXPECT_EQ(test, parse_exact(test, buf, len, &out), 0);
		/* the KH's own rules */
		bad = in;
		bad.rx_count = 1;
		bad.ce_count = 2;
		KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &bad), ERR(FIELD));
		bad = in;
		bad.sack[0] |= 1;
		KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &bad), ERR(FIELD));
		bad = in;
		bad.rx_count = 0;
		bad.ce_count = 0;
		bad.echo_ts = 1;
		KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &bad), ERR(FIELD));
		bad = in;
		bad.echo_flags ^= MROCE_ECHO_SEG;
		KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &bad), ERR(FIELD));
		bad = in;
		bad.ack_psn = U24 + 1;
		KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &bad), ERR(FIELD));
	}

	/* segmentation: neither the template nor a segment carries it */
	memset(&in, 0, sizeof(in));
	in.opcode = MROCE_OP_WRITE;
	in.dest_qpn = 2;
	in.src_qpn = 3;
	in.msg_len = 2048;
	in.payload_len = 1024;
	in.flags = MROCE_F_FIRST;
	tlen = mroce_wire_build(t, BUF_MAX, &in);
	KUNIT_ASSERT_EQ(test, tlen, 64);
	KUNIT_EXPECT_EQ(test, mroce_wire_seg_build(buf, BUF_MAX, t, tlen, 1024,
						   2048, 0, &seg, NULL), 64);
	seg.flags |= MROCE_F_PB_ACK;
	KUNIT_EXPECT_EQ(test, mroce_wire_seg_build(buf, BUF_MAX, t, tlen, 1024,
						   2048, 0, &seg, NULL), ERR(OPCODE));
	seg.flags = MROCE_F_FIRST;
	in.flags |= MROCE_F_PB_ACK;
	tlen = mroce_wire_build(t, BUF_MAX, &in);
	KUNIT_ASSERT_EQ(test, tlen, 64 + PB_LEN);
	KUNIT_EXPECT_EQ(test, mroce_wire_seg_build(buf, BUF_MAX, t, tlen, 1024,
						   2048, 0, &seg, NULL), ERR(OPCODE));
}

static void mroce_wire_test_qpn(struct kunit *test)
{
	struct mroce_pkt_info in;
	struct rnd r = { 6 };
	unsigned int i;
	u8 *buf = test_buf(test);

	for (i = 0; i < ARRAY_SIZE(spec_ops); i++) {
		u8 opc = spec_ops[i].opcode;
		bool ud = opc == MROCE_OP_UD_SEND || opc == MROCE_OP_UD_SEND_IMM;
		int ok = spec_ops[i].hlen;

		rnd_valid(&r, opc, &in);
		in.dest_qpn = 0;
		KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), ERR(QPN));
		rnd_valid(&r, opc, &in);
		in.src_qpn = 0;
		KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), ERR(QPN));
		rnd_valid(&r, opc, &in);
		in.dest_qpn = 1;
		KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in),
				ud ? ok : ERR(QPN));
		rnd_valid(&r, opc, &in);
		in.src_qpn = 1;
		KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in),
				ud ? ok : ERR(QPN));
		rnd_valid(&r, opc, &in);
		in.dest_qpn = U24;
		in.src_qpn = 2;
		KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), ok);
	}
}

static void mroce_wire_test_path(struct kunit *test)
{
	struct mroce_pkt_info in;
	struct rnd r = { 8 };
	unsigned int i, p;
	u8 *buf = test_buf(test);

	for (i = 0; i < ARRAY_SIZE(spec_ops); i++) {
		for (p = 60; p < 256; p++) {
			rnd_valid(&r, spec_ops[i].opcode, &in);
			in.path_id = p;
			KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in),
					p < 64 ? (int)spec_ops[i].hlen : ERR(PATH));
		}
	}
	for (p = 62; p < 66; p++) {
		rnd_valid(&r, MROCE_OP_ACK, &in);
		in.rx_count = 1;
		in.ce_count = 0;
		in.echo_path_id = p;
		KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in),
				p < 64 ? MROCE_HLEN_ACK : ERR(PATH));
	}
}

/* Fields with a restricted set of values: ACK and NAK. */
static void mroce_wire_test_ack_fields(struct kunit *test)
{
	struct mroce_pkt_info in;
	struct rnd r = { 9 };
	unsigned int c;
	u8 *buf = test_buf(test);

	rnd_valid(&r, MROCE_OP_ACK, &in);
	in.rx_count = 4;
	in.ce_count = 4;
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), MROCE_HLEN_ACK);
	in.ce_count = 5;
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), ERR(FIELD));
	in.ce_count = 0;
	in.sack[0] |= 1;
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), ERR(FIELD));
	in.sack[0] &= ~1ULL;
	in.sack[3] = ~0ULL;
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), MROCE_HLEN_ACK);

	/* no triggering packet: the echo must be empty */
	memset(&in, 0, sizeof(in));
	in.opcode = MROCE_OP_ACK;
	in.dest_qpn = 2;
	in.src_qpn = 2;
	in.rate_hint_mbps = 400000;
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), MROCE_HLEN_ACK);
	in.echo_ts = 1;
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), ERR(FIELD));
	in.echo_ts = 0;
	in.echo_flags = MROCE_ECHO_CE;
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), ERR(FIELD));
	in.echo_flags = 0;
	in.ack_delay_us = 1;
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), ERR(FIELD));
	in.ack_delay_us = 0;
	in.echo_path_id = 1;
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), ERR(FIELD));
	in.echo_path_id = 0;
	in.seg_max = 1;
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), ERR(FIELD));

	/*
	 * seg_max (spec "Large segments"): the answer to a capability PROBE
	 * gives it with ECHO_SEG; neither comes without the other
	 */
	rnd_valid(&r, MROCE_OP_ACK, &in);
	in.rx_count = 1;
	in.ce_count = 0;
	in.echo_flags = MROCE_ECHO_PB | MROCE_ECHO_SEG;
	for (c = 0; c <= U8_MAX; c++) {
		u8 *kh = buf + MROCE_HLEN_ACK - sizeof(struct mroce_kh);
		struct mroce_pkt_info out;

		in.seg_max = c;
		KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in),
				c ? MROCE_HLEN_ACK : ERR(FIELD));
		if (!c)
			continue;
		/* byte 23 of the KH */
		KUNIT_EXPECT_EQ(test, kh[23], c);
		KUNIT_EXPECT_EQ(test, parse_exact(test, buf, MROCE_HLEN_ACK, &out), 0);
		KUNIT_EXPECT_EQ(test, out.seg_max, c);
	}
	in.echo_flags = MROCE_ECHO_PB;
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), ERR(FIELD));
	in.seg_max = 0;
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), MROCE_HLEN_ACK);

	/* NAK codes */
	for (c = 0; c < 256; c++) {
		rnd_valid(&r, MROCE_OP_NAK, &in);
		in.nak_code = c;
		in.rnr_timer = 0;
		in.nak_psn = c == MROCE_NAK_PSN_SEQ_ERR ? in.psn + 300 :
			     c == MROCE_NAK_RNR ? in.psn + 1 : in.psn;
		in.nak_psn &= U24;
		KUNIT_EXPECT_EQ_MSG(test, mroce_wire_build(buf, BUF_MAX, &in),
				    c >= 1 && c <= 5 ? MROCE_HLEN_NAK : ERR(FIELD),
				    "code %u", c);
	}
	/* RNR timer: 0 .. 31, only on RNR */
	rnd_valid(&r, MROCE_OP_NAK, &in);
	in.nak_code = MROCE_NAK_RNR;
	in.nak_psn = in.psn;
	for (c = 0; c < 256; c++) {
		in.rnr_timer = c;
		KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in),
				c <= 31 ? MROCE_HLEN_NAK : ERR(FIELD));
	}
	in.nak_code = MROCE_NAK_REM_ACCESS;
	in.rnr_timer = 1;
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), ERR(FIELD));
}

/* NAK PSN against the cumulative PSN, across the 24-bit wrap. */
static void mroce_wire_test_nak_psn(struct kunit *test)
{
	static const u32 bases[] = { 0, 100, 0xffff00, U24 };
	static const struct {
		u8 code;
		u32 d;
		bool ok;
	} nakv[] = {
		{ MROCE_NAK_PSN_SEQ_ERR, 0, false },
		{ MROCE_NAK_PSN_SEQ_ERR, 255, false },
		{ MROCE_NAK_PSN_SEQ_ERR, 256, true },
		{ MROCE_NAK_PSN_SEQ_ERR, (1 << 23) - 1, true },
		{ MROCE_NAK_PSN_SEQ_ERR, 1 << 23, false },
		{ MROCE_NAK_PSN_SEQ_ERR, U24, false },
		{ MROCE_NAK_RNR, 0, true },
		{ MROCE_NAK_RNR, 255, true },
		{ MROCE_NAK_RNR, 256, false },
		{ MROCE_NAK_RNR, U24, false },
		{ MROCE_NAK_REM_ACCESS, 0, true },
		{ MROCE_NAK_REM_ACCESS, 1, false },
		{ MROCE_NAK_REM_OP, 0, true },
		{ MROCE_NAK_REM_OP, U24, false },
		{ MROCE_NAK_INV_REQ, 0, true },
		{ MROCE_NAK_INV_REQ, 2, false },
	};
	struct mroce_pkt_info in;
	struct rnd r = { 10 };
	unsigned int b, i;
	u8 *buf = test_buf(test);
	int want;

	for (b = 0; b < ARRAY_SIZE(bases); b++) {
		for (i = 0; i < ARRAY_SIZE(nakv); i++) {
			rnd_valid(&r, MROCE_OP_NAK, &in);
			in.psn = bases[b];
			in.nak_code = nakv[i].code;
			in.rnr_timer = 0;
			in.nak_psn = (bases[b] + nakv[i].d) & U24;
			want = nakv[i].ok ? MROCE_HLEN_NAK : ERR(FIELD);
			KUNIT_EXPECT_EQ_MSG(test, mroce_wire_build(buf, BUF_MAX, &in),
					    want, "base %#x case %u", bases[b], i);
		}
	}
}

static void mroce_wire_test_lengths(struct kunit *test)
{
	static const u8 hdr_only[] = {
		MROCE_OP_READ_REQ, MROCE_OP_ATOMIC_CMP_SWP,
		MROCE_OP_ATOMIC_FETCH_ADD, MROCE_OP_ATOMIC_RESP, MROCE_OP_ACK,
		MROCE_OP_NAK, MROCE_OP_PROBE,
	};
	struct mroce_pkt_info in, out;
	struct rnd r = { 11 };
	unsigned int i, len;
	u8 *buf;

	buf = kunit_kzalloc(test, BUF_MAX, GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, buf);

	/* trailing bytes after header-only packets */
	for (i = 0; i < ARRAY_SIZE(hdr_only); i++) {
		rnd_valid(&r, hdr_only[i], &in);
		len = build_pkt(test, buf, &in);
		KUNIT_EXPECT_EQ(test, parse_exact(test, buf, len, &out), 0);
		KUNIT_EXPECT_EQ(test, parse_exact(test, buf, len + 1, &out),
				ERR(LENGTH));
		KUNIT_EXPECT_EQ(test, parse_exact(test, buf, len + 8, &out),
				ERR(LENGTH));
		in.payload_len = 1;
		KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in),
				ERR(LENGTH));
	}

	/* payload at most MROCE_WIRE_MAX_PAYLOAD (9216) bytes */
	memset(&in, 0, sizeof(in));
	in.opcode = MROCE_OP_SEND;
	in.dest_qpn = 2;
	in.src_qpn = 2;
	in.msg_len = 2 * MROCE_WIRE_MAX_PAYLOAD;
	in.payload_len = MROCE_WIRE_MAX_PAYLOAD;
	in.flags = MROCE_F_FIRST;
	len = build_pkt(test, buf, &in);
	KUNIT_EXPECT_EQ(test, parse_exact(test, buf, len, &out), 0);
	KUNIT_EXPECT_EQ(test, parse_exact(test, buf, len + 1, &out), ERR(LENGTH));
	in.payload_len = MROCE_WIRE_MAX_PAYLOAD + 1;
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), ERR(LENGTH));

	/* offset + payload beyond the message */
	in.payload_len = 100;
	in.msg_len = 150;
	in.offset = 51;
	in.flags = 0;
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), ERR(LENGTH));
	in.offset = 50;
	in.flags = MROCE_F_LAST;
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), MROCE_HLEN_SEND);
	in.offset = 0xffffffff;	/* u32 wrap must not help */
	in.flags = 0;
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), ERR(LENGTH));

	/* message length at most 2^31 */
	in.offset = MROCE_WIRE_MAX_MSG_LEN - 100;
	in.msg_len = MROCE_WIRE_MAX_MSG_LEN;
	in.flags = MROCE_F_LAST;
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), MROCE_HLEN_SEND);
	in.msg_len = MROCE_WIRE_MAX_MSG_LEN + 1;
	in.offset = MROCE_WIRE_MAX_MSG_LEN + 1 - 100;
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), ERR(LENGTH));

	/* a non-empty message has no empty packets */
	in.msg_len = 10;
	in.offset = 0;
	in.payload_len = 0;
	in.flags = MROCE_F_FIRST;
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), ERR(LENGTH));
	in.offset = 10;
	in.flags = MROCE_F_LAST;
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), ERR(LENGTH));

	/* the addressed range must not wrap the 64-bit space */
	memset(&in, 0, sizeof(in));
	in.opcode = MROCE_OP_WRITE;
	in.dest_qpn = 2;
	in.src_qpn = 2;
	in.msg_len = 16;
	in.payload_len = 16;
	in.flags = MROCE_F_FIRST | MROCE_F_LAST;
	in.va = 0ULL - 16;
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), MROCE_HLEN_WRITE);
	in.va = 0ULL - 15;
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), ERR(LENGTH));
	in.opcode = MROCE_OP_READ_RESP;
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), ERR(LENGTH));

	/* READ request ranges */
	memset(&in, 0, sizeof(in));
	in.opcode = MROCE_OP_READ_REQ;
	in.dest_qpn = 2;
	in.src_qpn = 2;
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in),
			MROCE_HLEN_READ_REQ);	/* zero-length READ */
	in.msg_len = 1 << 20;
	in.rd_length = 1 << 20;
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in),
			MROCE_HLEN_READ_REQ);
	in.offset = 4096;		/* re-request of the tail */
	in.rd_length = (1 << 20) - 4096;
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in),
			MROCE_HLEN_READ_REQ);
	in.rd_length++;
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), ERR(LENGTH));
	in.rd_length = 0;
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), ERR(LENGTH));
	in.offset = 0xfffff000;
	in.rd_length = 0x2000;
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), ERR(LENGTH));
	in.offset = 0;
	in.rd_length = 1;
	in.msg_len = MROCE_WIRE_MAX_MSG_LEN + 1;
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), ERR(LENGTH));
	in.msg_len = 16;
	in.sink_va = 0ULL - 8;
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), ERR(LENGTH));
	in.sink_va = 0;
	in.va = 0ULL - 8;
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), ERR(LENGTH));

	/* datagrams: one packet, 0 .. 4096 bytes (the largest path MTU) */
	memset(&in, 0, sizeof(in));
	in.opcode = MROCE_OP_UD_SEND;
	in.dest_qpn = 1;
	in.src_qpn = 1;
	in.qkey = 0x80010000;
	KUNIT_EXPECT_EQ(test, mroce_wire_build(buf, BUF_MAX, &in), MROCE_HLEN_UD);
	in.payload_len = MROCE_WIRE_MAX_PMTU;
	len = build_pkt(test, buf, &in);
	KUNIT_EXPECT_EQ(test, parse_exact(test, buf, len, &out), 0);
	KUNIT_EXPECT_EQ(test, parse_exact(test, buf, len + 1, &out), ERR(LENGTH));
}

/* NCCL's traffic: WRITE chains ending in WRITE_WITH_IMM, empty ones, 1-byte READ. */
static void mroce_wire_test_nccl(struct kunit *test)
{
	struct mroce_pkt_info in, out;
	unsigned int len, off;
	u8 *buf;

	buf = kunit_kzalloc(test, BUF_MAX, GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, buf);

	/* zero-length WRITE_WITH_IMM: no address, immediate = byte count */
	memset(&in, 0, sizeof(in));
	in.opcode = MROCE_OP_WRITE_IMM;
	in.flags = MROCE_F_FIRST | MROCE_F_LAST | MROCE_F_ACK_REQ;
	in.dest_qpn = 0x11;
	in.src_qpn = 0x22;
	in.psn = U24;
	in.rq_seq = 0xffffffff;
	in.imm = 524288;
	in.va = ~0ULL;		/* not checked for empty messages */
	in.rkey = 0x1234;
	len = build_pkt(test, buf, &in);
	KUNIT_ASSERT_EQ(test, len, MROCE_HLEN_WRITE);
	KUNIT_ASSERT_EQ(test, parse_exact(test, buf, len, &out), 0);
	KUNIT_EXPECT_EQ(test, out.msg_len, 0);
	KUNIT_EXPECT_EQ(test, out.imm, 524288U);
	KUNIT_EXPECT_EQ(test, out.rq_seq, 0xffffffffU);
	KUNIT_EXPECT_EQ(test, out.va, ~0ULL);

	/* a 10000-byte WRITE in 4096-byte packets, placed in any order */
	for (off = 0; off < 10000; off += 4096) {
		memset(&in, 0, sizeof(in));
		in.opcode = MROCE_OP_WRITE;
		in.dest_qpn = 0x11;
		in.src_qpn = 0x22;
		in.msg_len = 10000;
		in.offset = off;
		in.payload_len = min(10000U - off, 4096U);
		in.va = 0x7f0000000000ULL;
		in.rkey = 7;
		in.flags = (off ? 0 : MROCE_F_FIRST) |
			   (off + in.payload_len == 10000 ? MROCE_F_LAST : 0);
		len = build_pkt(test, buf, &in);
		KUNIT_ASSERT_EQ(test, parse_exact(test, buf, len, &out), 0);
		KUNIT_EXPECT_EQ(test, out.va + out.offset,
				0x7f0000000000ULL + off);
	}

	/* 1-byte READ (GPU flush) and its one response */
	memset(&in, 0, sizeof(in));
	in.opcode = MROCE_OP_READ_REQ;
	in.dest_qpn = 0x11;
	in.src_qpn = 0x11;	/* self-connected QP */
	in.msg_len = 1;
	in.rd_length = 1;
	in.va = 0x1000;
	in.sink_va = 0x2000;
	in.sink_key = 5;
	len = build_pkt(test, buf, &in);
	KUNIT_ASSERT_EQ(test, parse_exact(test, buf, len, &out), 0);
	in.opcode = MROCE_OP_READ_RESP;
	in.rd_length = 0;
	in.va = in.sink_va;
	in.rkey = in.sink_key;
	in.sink_va = 0;
	in.sink_key = 0;
	in.payload_len = 1;
	in.flags = MROCE_F_FIRST | MROCE_F_LAST | MROCE_F_ACK_REQ;
	len = build_pkt(test, buf, &in);
	KUNIT_ASSERT_EQ(test, parse_exact(test, buf, len, &out), 0);
	KUNIT_EXPECT_EQ(test, out.payload_len, 1);
}

/* When a packet has several defects, the first check in spec order wins. */
static void mroce_wire_test_check_order(struct kunit *test)
{
	struct mroce_pkt_info in, out;
	struct rnd r = { 12 };
	unsigned int len;
	u8 *buf = test_buf(test);

	rnd_valid(&r, MROCE_OP_SEND, &in);
	in.msg_len = 100;
	in.payload_len = 100;
	in.offset = 0;
	in.flags = MROCE_F_FIRST | MROCE_F_LAST;
	len = build_pkt(test, buf, &in);

	buf[0] = 2;			/* version */
	buf[1] = 0x7f;			/* and opcode */
	KUNIT_EXPECT_EQ(test, parse_exact(test, buf, len, &out), ERR(VERSION));
	KUNIT_EXPECT_EQ(test, parse_exact(test, buf, 20, &out), ERR(SHORT));
	buf[0] = 1;
	KUNIT_EXPECT_EQ(test, parse_exact(test, buf, len, &out), ERR(OPCODE));
	buf[1] = MROCE_OP_SEND;
	buf[4] = 7;			/* hdr_words, and short */
	KUNIT_EXPECT_EQ(test, parse_exact(test, buf, 40, &out), ERR(HDR_LEN));
	buf[4] = 6;
	KUNIT_EXPECT_EQ(test, parse_exact(test, buf, 40, &out), ERR(SHORT));
	buf[31] = 1;			/* reserved, flags, qpn, path */
	buf[2] = 0x80;
	buf[3] |= MROCE_F_RETRANSMIT;
	buf[8] = 99;
	memset(buf + 5, 0, 3);
	KUNIT_EXPECT_EQ(test, parse_exact(test, buf, len, &out), ERR(RESERVED));
	buf[31] = 0;
	buf[2] = 0;
	KUNIT_EXPECT_EQ(test, parse_exact(test, buf, len, &out), ERR(QPN));
	buf[7] = 9;
	KUNIT_EXPECT_EQ(test, parse_exact(test, buf, len, &out), ERR(PATH));
	buf[8] = 63;
	buf[3] &= ~MROCE_F_FIRST;	/* FIRST/LAST after lengths */
	KUNIT_EXPECT_EQ(test, parse_exact(test, buf, len, &out), ERR(FLAGS));
	KUNIT_EXPECT_EQ(test, parse_exact(test, buf, len + 1, &out), ERR(LENGTH));
	buf[3] |= MROCE_F_FIRST;
	KUNIT_EXPECT_EQ(test, parse_exact(test, buf, len, &out), 0);

	/* FIELD before LENGTH */
	rnd_valid(&r, MROCE_OP_ACK, &in);
	in.rx_count = 2;
	in.ce_count = 0;
	len = build_pkt(test, buf, &in);
	buf[47] = 3;			/* ce_count > rx_count */
	KUNIT_EXPECT_EQ(test, parse_exact(test, buf, len + 4, &out), ERR(FIELD));
}

static void mroce_wire_test_helpers(struct kunit *test)
{
	static const u32 rnr[32] = {
		655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640,
		960, 1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480,
		30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680,
		491520,
	};
	u64 sack[MROCE_WIRE_SACK_WORDS] = { };
	unsigned int i, p, g;
	u16 base, port;
	u8 *seen;

	/* SACK numbering */
	mroce_wire_sack_set(sack, 1);
	mroce_wire_sack_set(sack, 63);
	mroce_wire_sack_set(sack, 64);
	mroce_wire_sack_set(sack, 255);
	mroce_wire_sack_set(sack, 256);	/* ignored */
	KUNIT_EXPECT_EQ(test, sack[0], 0x8000000000000002ULL);
	KUNIT_EXPECT_EQ(test, sack[1], 1ULL);
	KUNIT_EXPECT_EQ(test, sack[2], 0ULL);
	KUNIT_EXPECT_EQ(test, sack[3], 0x8000000000000000ULL);
	KUNIT_EXPECT_TRUE(test, mroce_wire_sack_test(sack, 64));
	KUNIT_EXPECT_FALSE(test, mroce_wire_sack_test(sack, 65));
	KUNIT_EXPECT_FALSE(test, mroce_wire_sack_test(sack, 256));

	/* RNR timer encoding, the verbs min_rnr_timer table */
	for (i = 0; i < 32; i++)
		KUNIT_EXPECT_EQ(test, mroce_wire_rnr_timer_us(i), rnr[i]);
	KUNIT_EXPECT_EQ(test, mroce_wire_rnr_timer_us(32), 0U);

	/* source ports: dynamic range, distinct per path and generation */
	seen = kunit_kzalloc(test, 16384, GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, seen);
	KUNIT_EXPECT_EQ(test, mroce_wire_sport(0, 0, 0), 49152);
	KUNIT_EXPECT_EQ(test, mroce_wire_sport(0x3fff, 1, 0), 49152);
	KUNIT_EXPECT_EQ(test, mroce_wire_sport(100, 3, 2), 49152 + 100 + 3 + 128);
	for (base = 0; base < 0x4000; base += 0x3fd) {
		memset(seen, 0, 16384);
		for (g = 0; g < 256; g++) {
			for (p = 0; p < 64; p++) {
				port = mroce_wire_sport(base, p, g);
				KUNIT_EXPECT_GE(test, port, 49152);
				KUNIT_EXPECT_EQ(test, seen[port - 49152], 0);
				seen[port - 49152] = 1;
			}
		}
	}

	/* one counter name per reason */
	KUNIT_EXPECT_STREQ(test, mroce_wire_err_name(ERR(SHORT)), "rx_drop_short");
	KUNIT_EXPECT_STREQ(test, mroce_wire_err_name(MROCE_WIRE_ERR_LENGTH),
			   "rx_drop_length");
	KUNIT_EXPECT_STREQ(test, mroce_wire_err_name(-MROCE_WIRE_NUM_ERR),
			   "unknown");
	for (i = 1; i < MROCE_WIRE_NUM_ERR; i++)
		KUNIT_EXPECT_EQ(test, strncmp(mroce_wire_err_name(i), "rx_drop_", 8), 0);
}

/* Random bytes, biased towards valid base headers so checks get reached. */
/*
 * Segmentation (mroce_wire_seg_build()): cutting a chunk gives, byte for
 * byte, the packets a sender builds one by one -- the contract between
 * the requester and a NIC with MROCE_XPORT_CAP_SEG.  A WRITE_WITH_IMM of
 * 3.5 PMTUs whose PSNs wrap, cut from packet 1 (so offsets do not start
 * at 0), each segment on its own path with its own flags.
 */
static void mroce_wire_test_seg(struct kunit *test)
{
	const u32 mss = 1024, msg_len = 3 * 1024 + 512, k0 = 1;
	const u32 chunk_len = msg_len - k0 * mss;
	struct mroce_pkt_info tmpl = {
		.opcode = MROCE_OP_WRITE_IMM, .dest_qpn = 0x12, .src_qpn = 0x34,
		.msn = 7, .ts_us = 0xabcdef01, .msg_len = msg_len,
		.va = 0x1000, .rkey = 0x77, .imm = 0xfeedbeef,
	};
	u8 want[MROCE_HLEN_MAX], got[MROCE_HLEN_MAX], t[MROCE_HLEN_MAX];
	struct mroce_wire_seg seg[3];
	struct mroce_pkt_info pi;
	u32 i, plen, first_psn = 0xfffffe;	/* k0 + 1 wraps to 0 */
	int hlen, tlen;

	for (i = 0; i < 3; i++) {
		seg[i].path_id = 5 - i;
		seg[i].path_seq = 100 + 3 * i;
		seg[i].sport = 0xc000 + i;
		seg[i].flags = i == 2 ? MROCE_F_LAST | MROCE_F_ACK_REQ : 0;
	}
	seg[1].flags |= MROCE_F_RETRANSMIT;

	/* the template: packet k0, as the sender builds it */
	tmpl.psn = mroce_psn_add(first_psn, k0);
	tmpl.offset = k0 * mss;
	tmpl.flags = seg[0].flags;
	tmpl.path_id = seg[0].path_id;
	tmpl.path_seq = seg[0].path_seq;
	tmpl.payload_len = mss;
	tlen = mroce_wire_build(t, sizeof(t), &tmpl);
	KUNIT_ASSERT_EQ(test, tlen, MROCE_HLEN_WRITE);

	for (i = 0; i < 3; i++) {
		pi = tmpl;
		pi.psn = mroce_psn_add(first_psn, k0 + i);
		pi.offset = (k0 + i) * mss;
		pi.flags = seg[i].flags;
		pi.path_id = seg[i].path_id;
		pi.path_seq = seg[i].path_seq;
		pi.payload_len = min(mss, msg_len - pi.offset);
		hlen = mroce_wire_build(want, sizeof(want), &pi);
		KUNIT_ASSERT_EQ(test, hlen, tlen);

		memset(got, 0xa5, sizeof(got));
		plen = 0;
		hlen = mroce_wire_seg_build(got, sizeof(got), t, tlen, mss,
					    chunk_len, i, &seg[i], &plen);
		KUNIT_ASSERT_EQ(test, hlen, tlen);
		KUNIT_EXPECT_EQ(test, plen, pi.payload_len);
		KUNIT_EXPECT_EQ(test, memcmp(got, want, tlen), 0);
	}
	KUNIT_EXPECT_EQ(test, mroce_wire_get24(&((struct mroce_bh *)got)->psn),
			1U);

	/* past the chunk, a zero or oversize mss: refused */
	KUNIT_EXPECT_EQ(test, mroce_wire_seg_build(got, sizeof(got), t, tlen,
						   mss, chunk_len, 3, &seg[0],
						   &plen),
			-MROCE_WIRE_ERR_LENGTH);
	KUNIT_EXPECT_EQ(test, mroce_wire_seg_build(got, sizeof(got), t, tlen, 0,
						   chunk_len, 0, &seg[0], &plen),
			-MROCE_WIRE_ERR_LENGTH);
	KUNIT_EXPECT_EQ(test, mroce_wire_seg_build(got, sizeof(got), t, tlen,
						   MROCE_WIRE_MAX_PAYLOAD + 1,
						   chunk_len, 0, &seg[0], &plen),
			-MROCE_WIRE_ERR_LENGTH);
	/* a chunk running past the message's end */
	KUNIT_EXPECT_EQ(test, mroce_wire_seg_build(got, sizeof(got), t, tlen,
						   mss, chunk_len + 1, 0,
						   &seg[0], &plen),
			-MROCE_WIRE_ERR_LENGTH);
	/* a short buffer, and a template cut short */
	KUNIT_EXPECT_EQ(test, mroce_wire_seg_build(got, tlen - 1, t, tlen, mss,
						   chunk_len, 0, &seg[0], &plen),
			-MROCE_WIRE_ERR_SHORT);
	KUNIT_EXPECT_LT(test, mroce_wire_seg_build(got, sizeof(got), t,
						   tlen - 8, mss, chunk_len, 0,
						   &seg[0], &plen), 0);
	/* an undefined flag on a segment */
	seg[0].flags = MROCE_F_SOLICITED << 8;
	KUNIT_EXPECT_LT(test, mroce_wire_seg_build(got, sizeof(got), t, tlen,
						   mss, chunk_len, 0, &seg[0],
						   &plen), 0);

	/* only message opcodes are cut: an ACK template is refused */
	memset(&pi, 0, sizeof(pi));
	pi.opcode = MROCE_OP_ACK;
	pi.dest_qpn = 0x12;
	pi.src_qpn = 0x34;
	tlen = mroce_wire_build(t, sizeof(t), &pi);
	KUNIT_ASSERT_EQ(test, tlen, MROCE_HLEN_ACK);
	seg[0].flags = 0;
	KUNIT_EXPECT_LT(test, mroce_wire_seg_build(got, sizeof(got), t, tlen,
						   mss, mss, 0, &seg[0], &plen),
			0);
}

static void mroce_wire_test_fuzz_random(struct kunit *test)
{
	struct mroce_pkt_info out;
	struct rnd r = { 0x6d726f6365ULL };	/* "mroce" */
	unsigned int i, j, len, accepted = 0;
	int hist[MROCE_WIRE_NUM_ERR] = { };
	u8 *buf;
	int ret;

	buf = kunit_kmalloc(test, BUF_MAX, GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, buf);

	for (i = 0; i < FUZZ_ROUNDS; i++) {
		len = rndn(&r, 4) ? rndn(&r, 130) : rndn(&r, BUF_MAX);
		for (j = 0; j < len; j++)
			buf[j] = rndn(&r, 3) ? 0 : rnd32(&r);
		if (len >= 32 && rndn(&r, 4)) {
			const struct spec_op *so =
				&spec_ops[rndn(&r, ARRAY_SIZE(spec_ops))];

			buf[0] = 1;
			buf[1] = so->opcode;
			buf[4] = so->hlen / 8;
			if (rndn(&r, 2))
				buf[5] = 0, buf[6] = 0, buf[7] = 2 + rndn(&r, 9);
			if (rndn(&r, 2))
				buf[8] = rndn(&r, 64), buf[9] = 0, buf[10] = 0,
				buf[11] = 2 + rndn(&r, 9);
			if (rndn(&r, 2))
				memset(buf + 28, 0, 4), buf[2] = 0, buf[3] &= 0x1f,
				buf[12] = 0, buf[20] = 0;
		}
		ret = parse_exact(test, buf, len, &out);
		KUNIT_ASSERT_LE(test, ret, 0);
		KUNIT_ASSERT_GT(test, ret, -MROCE_WIRE_NUM_ERR);
		hist[-ret]++;
		if (!ret) {
			accepted++;
			check_accepted(test, buf, len, &out);
		}
	}
	kunit_info(test, "%u random buffers: %u accepted, short %d version %d opcode %d hdr_len %d reserved %d flags %d qpn %d path %d field %d length %d\n",
		   FUZZ_ROUNDS, accepted, hist[1], hist[2], hist[3], hist[4],
		   hist[5], hist[6], hist[7], hist[8], hist[9], hist[10]);
	KUNIT_EXPECT_GT(test, hist[MROCE_WIRE_ERR_RESERVED], 0);
}

/* Valid packets with 1 to 4 mutations: whatever is accepted is consistent. */
static void mroce_wire_test_fuzz_mutate(struct kunit *test)
{
	struct mroce_pkt_info in, out;
	struct rnd r = { 0x4d6574615243ULL };
	unsigned int i, m, n, len, pos, accepted = 0, changed = 0;
	int hist[MROCE_WIRE_NUM_ERR] = { };
	u8 *buf, *orig;
	int ret;

	buf = kunit_kmalloc(test, BUF_MAX, GFP_KERNEL);
	orig = kunit_kmalloc(test, BUF_MAX, GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, buf);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, orig);

	for (i = 0; i < FUZZ_ROUNDS; i++) {
		const struct spec_op *so =
			&spec_ops[rndn(&r, ARRAY_SIZE(spec_ops))];

		rnd_valid(&r, so->opcode, &in);
		len = build_pkt(test, buf, &in);
		memcpy(orig, buf, len);
		n = 1 + rndn(&r, 4);
		for (m = 0; m < n; m++) {
			pos = rndn(&r, so->hlen);
			switch (rndn(&r, 5)) {
			case 0:
			case 1:
				buf[pos] ^= BIT(rndn(&r, 8));
				break;
			case 2:
				buf[pos] = rnd32(&r);
				break;
			case 3:	/* interesting values */
				buf[pos] = rndn(&r, 2) ? 0 : 0xff;
				break;
			default:	/* change the length */
				len = rndn(&r, 2) ? len - min(len, rndn(&r, 16)) :
				      min(len + rndn(&r, 16), (unsigned int)BUF_MAX);
			}
		}
		ret = parse_exact(test, buf, len, &out);
		KUNIT_ASSERT_LE(test, ret, 0);
		KUNIT_ASSERT_GT(test, ret, -MROCE_WIRE_NUM_ERR);
		hist[-ret]++;
		if (!ret) {
			accepted++;
			if (memcmp(buf, orig, so->hlen))
				changed++;
			check_accepted(test, buf, len, &out);
		}
	}
	kunit_info(test, "%u mutated packets: %u accepted (%u with a changed header), short %d version %d opcode %d hdr_len %d reserved %d flags %d qpn %d path %d field %d length %d\n",
		   FUZZ_ROUNDS, accepted, changed, hist[1], hist[2], hist[3],
		   hist[4], hist[5], hist[6], hist[7], hist[8], hist[9], hist[10]);
	for (i = 1; i < MROCE_WIRE_NUM_ERR; i++)
		KUNIT_EXPECT_GT_MSG(test, hist[i], 0, "no %s",
				    mroce_wire_err_name(i));
	KUNIT_EXPECT_GT(test, changed, 0);
}

static struct kunit_case mroce_wire_test_cases[] = {
	KUNIT_CASE(mroce_wire_test_layout),
	KUNIT_CASE(mroce_wire_test_golden_write_imm),
	KUNIT_CASE(mroce_wire_test_golden_ack),
	KUNIT_CASE(mroce_wire_test_golden_nak),
	KUNIT_CASE_PARAM(mroce_wire_test_roundtrip, mroce_wire_ops_gen_params),
	KUNIT_CASE(mroce_wire_test_u24),
	KUNIT_CASE(mroce_wire_test_truncate),
	KUNIT_CASE(mroce_wire_test_version),
	KUNIT_CASE(mroce_wire_test_opcode),
	KUNIT_CASE(mroce_wire_test_hdr_len),
	KUNIT_CASE(mroce_wire_test_reserved),
	KUNIT_CASE(mroce_wire_test_flags),
	KUNIT_CASE(mroce_wire_test_pb_ack),
	KUNIT_CASE(mroce_wire_test_qpn),
	KUNIT_CASE(mroce_wire_test_path),
	KUNIT_CASE(mroce_wire_test_ack_fields),
	KUNIT_CASE(mroce_wire_test_nak_psn),
	KUNIT_CASE(mroce_wire_test_lengths),
	KUNIT_CASE(mroce_wire_test_nccl),
	KUNIT_CASE(mroce_wire_test_check_order),
	KUNIT_CASE(mroce_wire_test_helpers),
	KUNIT_CASE(mroce_wire_test_seg),
	KUNIT_CASE(mroce_wire_test_fuzz_random),
	KUNIT_CASE(mroce_wire_test_fuzz_mutate),
	{}
};

static struct kunit_suite mroce_wire_test_suite = {
	.name = "mroce_wire",
	.test_cases = mroce_wire_test_cases,
};

kunit_test_suite(mroce_wire_test_suite);
