// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
/*
 * MetaRoCE v1 packet parser and header builder.
 *
 * mroce_wire_parse() is the first thing every received packet meets and
 * trusts nothing: it performs every packet-level check of the spec
 * (Documentation/metaroce-spec.rst, "Packet-level validation") in the
 * order the spec gives, so that a packet with several defects is always
 * counted under the same drop counter by every implementation.  Checks that need
 * connection state (QP lookup, PSN window, rkey, path MTU) come later, in
 * the transport.
 *
 * Pure protocol code: no ib_core headers (see mroce_wire.h).
 */

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/string.h>

#include "mroce_psn.h"
#include "mroce_wire.h"

#define F_AR	MROCE_F_ACK_REQ
#define F_SE	MROCE_F_SOLICITED
#define F_FL	(MROCE_F_FIRST | MROCE_F_LAST)
#define F_RT	MROCE_F_RETRANSMIT
#define F_PB	MROCE_F_PB_ACK

#define BH_LEN	((u8)sizeof(struct mroce_bh))
#define MH_END	(BH_LEN + (u8)sizeof(struct mroce_mh))
#define KH_END	(BH_LEN + (u8)sizeof(struct mroce_kh))

static const struct mroce_wire_opinfo mroce_wire_ops[] = {
	[MROCE_OP_SEND] = {
		.name = "SEND", .hdr_len = MROCE_HLEN_SEND,
		.off_dh = BH_LEN,
		.flags_ok = F_AR | F_SE | F_FL | F_RT | F_PB,
		.props = MROCE_OPP_PAYLOAD | MROCE_OPP_RWQE |
			 MROCE_OPP_REQUEST | MROCE_OPP_MSG,
	},
	[MROCE_OP_SEND_IMM] = {
		.name = "SEND_WITH_IMM", .hdr_len = MROCE_HLEN_SEND,
		.off_dh = BH_LEN,
		.flags_ok = F_AR | F_SE | F_FL | F_RT | F_PB,
		.props = MROCE_OPP_PAYLOAD | MROCE_OPP_RWQE | MROCE_OPP_IMM |
			 MROCE_OPP_REQUEST | MROCE_OPP_MSG,
	},
	[MROCE_OP_WRITE] = {
		.name = "RDMA_WRITE", .hdr_len = MROCE_HLEN_WRITE,
		.off_mh = BH_LEN, .off_dh = MH_END,
		.flags_ok = F_AR | F_FL | F_RT | F_PB,
		.props = MROCE_OPP_PAYLOAD | MROCE_OPP_REQUEST | MROCE_OPP_MSG |
			 MROCE_OPP_WRITE,
	},
	[MROCE_OP_WRITE_IMM] = {
		.name = "RDMA_WRITE_WITH_IMM", .hdr_len = MROCE_HLEN_WRITE,
		.off_mh = BH_LEN, .off_dh = MH_END,
		.flags_ok = F_AR | F_SE | F_FL | F_RT | F_PB,
		.props = MROCE_OPP_PAYLOAD | MROCE_OPP_RWQE | MROCE_OPP_IMM |
			 MROCE_OPP_REQUEST | MROCE_OPP_MSG | MROCE_OPP_WRITE,
	},
	[MROCE_OP_READ_REQ] = {
		.name = "RDMA_READ_REQ", .hdr_len = MROCE_HLEN_READ_REQ,
		.off_mh = BH_LEN, .off_rh = MH_END,
		.flags_ok = F_RT | F_PB,
		.props = MROCE_OPP_REQUEST | MROCE_OPP_READ,
	},
	[MROCE_OP_READ_RESP] = {
		.name = "RDMA_READ_RESP", .hdr_len = MROCE_HLEN_WRITE,
		.off_mh = BH_LEN, .off_dh = MH_END,
		.flags_ok = F_AR | F_FL | F_RT,
		.props = MROCE_OPP_PAYLOAD | MROCE_OPP_RESPONSE | MROCE_OPP_MSG,
	},
	[MROCE_OP_ATOMIC_CMP_SWP] = {
		.name = "ATOMIC_CMP_SWP", .hdr_len = MROCE_HLEN_ATOMIC,
		.off_mh = BH_LEN, .off_ath = MH_END,
		.flags_ok = F_RT | F_PB,
		.props = MROCE_OPP_REQUEST | MROCE_OPP_ATOMIC,
	},
	[MROCE_OP_ATOMIC_FETCH_ADD] = {
		.name = "ATOMIC_FETCH_ADD", .hdr_len = MROCE_HLEN_ATOMIC,
		.off_mh = BH_LEN, .off_ath = MH_END,
		.flags_ok = F_RT | F_PB,
		.props = MROCE_OPP_REQUEST | MROCE_OPP_ATOMIC,
	},
	[MROCE_OP_ATOMIC_RESP] = {
		.name = "ATOMIC_RESP", .hdr_len = MROCE_HLEN_ATOMIC_RESP,
		.off_arh = BH_LEN,
		.flags_ok = F_RT,
		.props = MROCE_OPP_RESPONSE,
	},
	[MROCE_OP_SEND_INV] = {
		.name = "SEND_WITH_INV", .hdr_len = MROCE_HLEN_SEND,
		.off_dh = BH_LEN,
		.flags_ok = F_AR | F_SE | F_FL | F_RT | F_PB,
		.props = MROCE_OPP_PAYLOAD | MROCE_OPP_RWQE | MROCE_OPP_INV |
			 MROCE_OPP_REQUEST | MROCE_OPP_MSG,
	},
	[MROCE_OP_ACK] = {
		.name = "ACK", .hdr_len = MROCE_HLEN_ACK,
		.off_kh = BH_LEN,
		.bh_zero = MROCE_BHZ_PATH_SEQ | MROCE_BHZ_MSN,
		.props = MROCE_OPP_ACKNOWLEDGE,
	},
	[MROCE_OP_NAK] = {
		.name = "NAK", .hdr_len = MROCE_HLEN_NAK,
		.off_kh = BH_LEN, .off_nkh = KH_END,
		.bh_zero = MROCE_BHZ_PATH_SEQ | MROCE_BHZ_MSN,
		.props = MROCE_OPP_ACKNOWLEDGE,
	},
	[MROCE_OP_PROBE] = {
		.name = "PROBE", .hdr_len = MROCE_HLEN_PROBE,
		.bh_zero = MROCE_BHZ_PSN | MROCE_BHZ_MSN,
		.flags_ok = F_PB,	/* the PB_ACK capability query */
	},
	[MROCE_OP_UD_SEND] = {
		.name = "UD_SEND", .hdr_len = MROCE_HLEN_UD,
		.off_dgh = BH_LEN,
		.bh_zero = MROCE_BHZ_PATH_SEQ | MROCE_BHZ_MSN,
		.flags_ok = F_SE,
		.props = MROCE_OPP_PAYLOAD | MROCE_OPP_RWQE | MROCE_OPP_DATAGRAM,
	},
	[MROCE_OP_UD_SEND_IMM] = {
		.name = "UD_SEND_WITH_IMM", .hdr_len = MROCE_HLEN_UD,
		.off_dgh = BH_LEN,
		.bh_zero = MROCE_BHZ_PATH_SEQ | MROCE_BHZ_MSN,
		.flags_ok = F_SE,
		.props = MROCE_OPP_PAYLOAD | MROCE_OPP_RWQE | MROCE_OPP_IMM |
			 MROCE_OPP_DATAGRAM,
	},
};

const struct mroce_wire_opinfo *mroce_wire_opinfo(unsigned int opcode)
{
	if (opcode >= ARRAY_SIZE(mroce_wire_ops) || !mroce_wire_ops[opcode].name)
		return NULL;
	return &mroce_wire_ops[opcode];
}

static const char * const mroce_wire_err_names[MROCE_WIRE_NUM_ERR] = {
	[MROCE_WIRE_OK]			= "ok",
	[MROCE_WIRE_ERR_SHORT]		= "rx_drop_short",
	[MROCE_WIRE_ERR_VERSION]	= "rx_drop_version",
	[MROCE_WIRE_ERR_OPCODE]		= "rx_drop_opcode",
	[MROCE_WIRE_ERR_HDR_LEN]	= "rx_drop_hdr_len",
	[MROCE_WIRE_ERR_RESERVED]	= "rx_drop_reserved",
	[MROCE_WIRE_ERR_FLAGS]		= "rx_drop_flags",
	[MROCE_WIRE_ERR_QPN]		= "rx_drop_qpn",
	[MROCE_WIRE_ERR_PATH]		= "rx_drop_path",
	[MROCE_WIRE_ERR_FIELD]		= "rx_drop_field",
	[MROCE_WIRE_ERR_LENGTH]		= "rx_drop_length",
};

const char *mroce_wire_err_name(int err)
{
	if (err < 0)
		err = -err;
	if (err >= MROCE_WIRE_NUM_ERR)
		return "unknown";
	return mroce_wire_err_names[err];
}

/* Microseconds of each 5-bit RNR timer code (the verbs min_rnr_timer). */
static const u32 mroce_rnr_us[MROCE_WIRE_MAX_RNR_TIMER + 1] = {
	655360,     10,     20,     30,     40,     60,     80,    120,
	   160,    240,    320,    480,    640,    960,   1280,   1920,
	  2560,   3840,   5120,   7680,  10240,  15360,  20480,  30720,
	 40960,  61440,  81920, 122880, 163840, 245760, 327680, 491520,
};

u32 mroce_wire_rnr_timer_us(unsigned int code)
{
	return code <= MROCE_WIRE_MAX_RNR_TIMER ? mroce_rnr_us[code] : 0;
}

/* True if [@va, @va + @len) does not wrap past the end of the 64-bit space. */
static bool mroce_wire_range_ok(u64 va, u32 len)
{
	return !len || va <= U64_MAX - len + 1;
}

/* Decode the KH at @p into @info; returns its reserved bits. */
static u64 mroce_wire_decode_kh(const u8 *p, struct mroce_pkt_info *info)
{
	const struct mroce_kh *kh = (const void *)p;
	int i;

	info->echo_ts = get_unaligned_be32(&kh->echo_ts);
	info->echo_path_seq = get_unaligned_be32(&kh->echo_path_seq);
	info->echo_path_id = mroce_wire_get8hi(&kh->echo_path_psn);
	info->echo_psn = mroce_wire_get24(&kh->echo_path_psn);
	info->rx_count = get_unaligned_be16(&kh->rx_count);
	info->ce_count = get_unaligned_be16(&kh->ce_count);
	info->rate_hint_mbps = get_unaligned_be32(&kh->rate_hint);
	info->ack_delay_us = get_unaligned_be16(&kh->ack_delay);
	info->echo_flags = kh->echo_flags;
	info->seg_max = kh->seg_max;
	for (i = 0; i < MROCE_WIRE_SACK_WORDS; i++)
		info->sack[i] = get_unaligned_be64(&kh->sack[i]);
	return kh->echo_flags & ~MROCE_ECHO_DEFINED;
}

/*
 * Decode PBH and KH, at @p, of a request with PB_ACK; returns their
 * reserved bits.
 */
static u64 mroce_wire_decode_pb(const u8 *p, struct mroce_pkt_info *info)
{
	const struct mroce_pbh *pbh = (const void *)p;

	info->ack_psn = mroce_wire_get24(&pbh->ack_psn);
	return mroce_wire_get8hi(&pbh->ack_psn) |
	       get_unaligned_be32(&pbh->reserved) |
	       mroce_wire_decode_kh(p + sizeof(*pbh), info);
}

/* Decode the extension headers of @op at @p into @info; returns the OR of
 * every reserved field, which must come out zero.
 */
static u64 mroce_wire_decode_ext(const u8 *p,
				 const struct mroce_wire_opinfo *op,
				 struct mroce_pkt_info *info)
{
	u64 rsv = 0;

	if (op->off_dh) {
		const struct mroce_dh *dh = (const void *)(p + op->off_dh);

		info->offset = get_unaligned_be32(&dh->offset);
		info->msg_len = get_unaligned_be32(&dh->msg_len);
		info->rq_seq = get_unaligned_be32(&dh->rq_seq);
		info->imm = get_unaligned_be32(&dh->imm);
		if (!(op->props & MROCE_OPP_RWQE))
			rsv |= info->rq_seq;
		if (!(op->props & (MROCE_OPP_IMM | MROCE_OPP_INV)))
			rsv |= info->imm;
	}
	if (op->off_mh) {
		const struct mroce_mh *mh = (const void *)(p + op->off_mh);

		info->va = get_unaligned_be64(&mh->va);
		info->rkey = get_unaligned_be32(&mh->rkey);
		rsv |= get_unaligned_be32(&mh->reserved);
	}
	if (op->off_rh) {
		const struct mroce_rh *rh = (const void *)(p + op->off_rh);

		info->sink_va = get_unaligned_be64(&rh->sink_va);
		info->sink_key = get_unaligned_be32(&rh->sink_key);
		info->msg_len = get_unaligned_be32(&rh->msg_len);
		info->offset = get_unaligned_be32(&rh->offset);
		info->rd_length = get_unaligned_be32(&rh->length);
	}
	if (op->off_ath) {
		const struct mroce_ath *ah = (const void *)(p + op->off_ath);

		info->swap_add = get_unaligned_be64(&ah->swap_add);
		info->compare = get_unaligned_be64(&ah->compare);
		if (info->opcode != MROCE_OP_ATOMIC_CMP_SWP)
			rsv |= info->compare;
	}
	if (op->off_arh) {
		const struct mroce_arh *arh = (const void *)(p + op->off_arh);

		info->orig = get_unaligned_be64(&arh->orig);
	}
	if (op->off_kh)
		rsv |= mroce_wire_decode_kh(p + op->off_kh, info);
	if (op->off_nkh) {
		const struct mroce_nkh *nkh = (const void *)(p + op->off_nkh);

		info->nak_code = nkh->code;
		info->rnr_timer = nkh->rnr_timer;
		info->nak_psn = mroce_wire_get24(&nkh->psn);
		rsv |= get_unaligned_be16(&nkh->reserved) |
		       mroce_wire_get8hi(&nkh->psn);
	}
	if (op->off_dgh) {
		const struct mroce_dgh *dgh = (const void *)(p + op->off_dgh);

		info->qkey = get_unaligned_be32(&dgh->qkey);
		info->imm = get_unaligned_be32(&dgh->imm);
		if (!(op->props & MROCE_OPP_IMM))
			rsv |= info->imm;
	}
	return rsv;
}

/* ACK/NAK field values the spec forbids. */
static bool mroce_wire_ack_fields_ok(const struct mroce_pkt_info *info)
{
	u32 d;

	if (info->ce_count > info->rx_count)
		return false;
	/* bit 0 is the cumulative PSN itself, which was not received */
	if (info->sack[0] & 1)
		return false;
	/* no triggering packet: nothing to echo */
	if (!info->rx_count &&
	    (info->echo_ts || info->echo_path_seq || info->echo_psn ||
	     info->echo_path_id || info->echo_flags || info->ack_delay_us ||
	     info->seg_max))
		return false;
	/* seg_max comes with ECHO_SEG, and only with it */
	if (!(info->echo_flags & MROCE_ECHO_SEG) != !info->seg_max)
		return false;
	if (info->opcode != MROCE_OP_NAK)
		return true;

	if (info->rnr_timer > MROCE_WIRE_MAX_RNR_TIMER ||
	    (info->rnr_timer && info->nak_code != MROCE_NAK_RNR))
		return false;
	d = mroce_psn_fwd(info->psn, info->nak_psn);
	switch (info->nak_code) {
	case MROCE_NAK_PSN_SEQ_ERR:
		/* ahead of the window [psn, psn + 256), not behind it */
		return d >= MROCE_WINDOW && d < MROCE_PSN_HALF;
	case MROCE_NAK_RNR:
		return d < MROCE_WINDOW;
	case MROCE_NAK_REM_ACCESS:
	case MROCE_NAK_REM_OP:
	case MROCE_NAK_INV_REQ:
		/* fatal NAKs are sent in PSN order, at the cumulative point */
		return d == 0;
	default:
		return false;
	}
}

/* Lengths: payload vs. opcode, message bounds, address wrap. */
static bool mroce_wire_lengths_ok(const struct mroce_wire_opinfo *op,
				  const struct mroce_pkt_info *info)
{
	u32 pay = info->payload_len;

	/* trailing bytes after a header-only packet */
	if (!(op->props & MROCE_OPP_PAYLOAD) && pay)
		return false;
	if (pay > MROCE_WIRE_MAX_PAYLOAD)
		return false;
	/* a datagram is one packet of at most the largest path MTU */
	if ((op->props & MROCE_OPP_DATAGRAM) && pay > MROCE_WIRE_MAX_PMTU)
		return false;
	if (op->props & MROCE_OPP_MSG) {
		if (info->msg_len > MROCE_WIRE_MAX_MSG_LEN)
			return false;
		if ((u64)info->offset + pay > info->msg_len)
			return false;
		/* every packet of a non-empty message carries payload */
		if (!pay && info->msg_len)
			return false;
		if (op->off_mh && !mroce_wire_range_ok(info->va, info->msg_len))
			return false;
	}
	if (info->opcode == MROCE_OP_READ_REQ) {
		if (info->msg_len > MROCE_WIRE_MAX_MSG_LEN)
			return false;
		if ((u64)info->offset + info->rd_length > info->msg_len)
			return false;
		if (!info->rd_length && info->msg_len)
			return false;
		if (!mroce_wire_range_ok(info->va, info->msg_len) ||
		    !mroce_wire_range_ok(info->sink_va, info->msg_len))
			return false;
	}
	return true;
}

/* FIRST and LAST say what offset and length already say; they must agree. */
static bool mroce_wire_first_last_ok(const struct mroce_wire_opinfo *op,
				     const struct mroce_pkt_info *info)
{
	bool first, last;

	if (!(op->props & MROCE_OPP_MSG))
		return true;
	first = info->offset == 0;
	last = info->offset + info->payload_len == info->msg_len;
	return first == !!(info->flags & MROCE_F_FIRST) &&
	       last == !!(info->flags & MROCE_F_LAST);
}

/*
 * The parser proper.  @avail bytes at @p may be read; @len is the packet
 * length the checks use.  mroce_wire_parse() passes the same value twice;
 * mroce_wire_build() passes the header it wrote and the length the packet
 * will have once the payload is appended.
 */
static int mroce_wire_decode(const u8 *p, unsigned int avail, unsigned int len,
			     struct mroce_pkt_info *info)
{
	const struct mroce_bh *bh = (const void *)p;
	const struct mroce_wire_opinfo *op;
	u32 psn_hi, msn_hi, hlen;
	u64 rsv;

	memset(info, 0, sizeof(*info));

	if (len < BH_LEN || avail < BH_LEN)
		return -MROCE_WIRE_ERR_SHORT;

	info->version = bh->version;
	if (info->version != MROCE_WIRE_VERSION)
		return -MROCE_WIRE_ERR_VERSION;

	info->opcode = bh->opcode;
	op = mroce_wire_opinfo(info->opcode);
	if (!op)
		return -MROCE_WIRE_ERR_OPCODE;

	/* PB_ACK, where the opcode may carry it, adds PBH and KH */
	info->flags = get_unaligned_be16(&bh->flags);
	hlen = mroce_wire_hdr_len(op, info->flags);
	if (mroce_wire_get8hi(&bh->words_dqpn) * 8U != hlen)
		return -MROCE_WIRE_ERR_HDR_LEN;
	if (len < hlen || avail < hlen)
		return -MROCE_WIRE_ERR_SHORT;
	info->hdr_len = hlen;
	info->payload_len = len - hlen;

	info->dest_qpn = mroce_wire_get24(&bh->words_dqpn);
	info->path_id = mroce_wire_get8hi(&bh->path_sqpn);
	info->src_qpn = mroce_wire_get24(&bh->path_sqpn);
	psn_hi = mroce_wire_get8hi(&bh->psn);
	info->psn = mroce_wire_get24(&bh->psn);
	info->path_seq = get_unaligned_be32(&bh->path_seq);
	msn_hi = mroce_wire_get8hi(&bh->msn);
	info->msn = mroce_wire_get24(&bh->msn);
	info->ts_us = get_unaligned_be32(&bh->ts_us);

	rsv = psn_hi | msn_hi | get_unaligned_be32(&bh->reserved) |
	      (info->flags & ~MROCE_F_DEFINED);
	if (op->bh_zero & MROCE_BHZ_PSN)
		rsv |= info->psn;
	if (op->bh_zero & MROCE_BHZ_PATH_SEQ)
		rsv |= info->path_seq;
	if (op->bh_zero & MROCE_BHZ_MSN)
		rsv |= info->msn;
	rsv |= mroce_wire_decode_ext(p, op, info);
	if (hlen != op->hdr_len)
		rsv |= mroce_wire_decode_pb(p + op->hdr_len, info);
	if (rsv)
		return -MROCE_WIRE_ERR_RESERVED;

	if (info->flags & ~op->flags_ok)
		return -MROCE_WIRE_ERR_FLAGS;

	if (!info->dest_qpn || !info->src_qpn)
		return -MROCE_WIRE_ERR_QPN;
	if (!(op->props & MROCE_OPP_DATAGRAM) &&
	    (info->dest_qpn == MROCE_WIRE_QPN_GSI ||
	     info->src_qpn == MROCE_WIRE_QPN_GSI))
		return -MROCE_WIRE_ERR_QPN;

	if (info->path_id >= MROCE_WIRE_MAX_PATHS ||
	    info->echo_path_id >= MROCE_WIRE_MAX_PATHS)
		return -MROCE_WIRE_ERR_PATH;

	if ((op->props & MROCE_OPP_ACKNOWLEDGE || hlen != op->hdr_len) &&
	    !mroce_wire_ack_fields_ok(info))
		return -MROCE_WIRE_ERR_FIELD;

	if (!mroce_wire_lengths_ok(op, info))
		return -MROCE_WIRE_ERR_LENGTH;

	if (!mroce_wire_first_last_ok(op, info))
		return -MROCE_WIRE_ERR_FLAGS;

	return 0;
}

int mroce_wire_parse(const void *buf, unsigned int len,
		     struct mroce_pkt_info *info)
{
	return mroce_wire_decode(buf, len, len, info);
}

static void mroce_wire_encode_kh(u8 *p, const struct mroce_pkt_info *info)
{
	struct mroce_kh *kh = (void *)p;
	int i;

	put_unaligned_be32(info->echo_ts, &kh->echo_ts);
	put_unaligned_be32(info->echo_path_seq, &kh->echo_path_seq);
	mroce_wire_put8_24(&kh->echo_path_psn, info->echo_path_id,
			   info->echo_psn);
	put_unaligned_be16(info->rx_count, &kh->rx_count);
	put_unaligned_be16(info->ce_count, &kh->ce_count);
	put_unaligned_be32(info->rate_hint_mbps, &kh->rate_hint);
	put_unaligned_be16(info->ack_delay_us, &kh->ack_delay);
	kh->echo_flags = info->echo_flags;
	kh->seg_max = info->seg_max;
	for (i = 0; i < MROCE_WIRE_SACK_WORDS; i++)
		put_unaligned_be64(info->sack[i], &kh->sack[i]);
}

static void mroce_wire_encode_ext(u8 *p, const struct mroce_wire_opinfo *op,
				  const struct mroce_pkt_info *info)
{
	if (op->off_dh) {
		struct mroce_dh *dh = (void *)(p + op->off_dh);

		put_unaligned_be32(info->offset, &dh->offset);
		put_unaligned_be32(info->msg_len, &dh->msg_len);
		put_unaligned_be32(info->rq_seq, &dh->rq_seq);
		put_unaligned_be32(info->imm, &dh->imm);
	}
	if (op->off_mh) {
		struct mroce_mh *mh = (void *)(p + op->off_mh);

		put_unaligned_be64(info->va, &mh->va);
		put_unaligned_be32(info->rkey, &mh->rkey);
	}
	if (op->off_rh) {
		struct mroce_rh *rh = (void *)(p + op->off_rh);

		put_unaligned_be64(info->sink_va, &rh->sink_va);
		put_unaligned_be32(info->sink_key, &rh->sink_key);
		put_unaligned_be32(info->msg_len, &rh->msg_len);
		put_unaligned_be32(info->offset, &rh->offset);
		put_unaligned_be32(info->rd_length, &rh->length);
	}
	if (op->off_ath) {
		struct mroce_ath *ah = (void *)(p + op->off_ath);

		put_unaligned_be64(info->swap_add, &ah->swap_add);
		put_unaligned_be64(info->compare, &ah->compare);
	}
	if (op->off_arh) {
		struct mroce_arh *arh = (void *)(p + op->off_arh);

		put_unaligned_be64(info->orig, &arh->orig);
	}
	if (op->off_kh)
		mroce_wire_encode_kh(p + op->off_kh, info);
	if (op->off_nkh) {
		struct mroce_nkh *nkh = (void *)(p + op->off_nkh);

		nkh->code = info->nak_code;
		nkh->rnr_timer = info->rnr_timer;
		mroce_wire_put8_24(&nkh->psn, 0, info->nak_psn);
	}
	if (op->off_dgh) {
		struct mroce_dgh *dgh = (void *)(p + op->off_dgh);

		put_unaligned_be32(info->qkey, &dgh->qkey);
		put_unaligned_be32(info->imm, &dgh->imm);
	}
}

int mroce_wire_build(void *buf, unsigned int size,
		     const struct mroce_pkt_info *info)
{
	const struct mroce_wire_opinfo *op = mroce_wire_opinfo(info->opcode);
	struct mroce_bh *bh = buf;
	struct mroce_pkt_info check;
	unsigned int hlen;
	int err;

	if (!op)
		return -MROCE_WIRE_ERR_OPCODE;
	hlen = mroce_wire_hdr_len(op, info->flags);
	if (size < hlen)
		return -MROCE_WIRE_ERR_SHORT;
	/* values that would be truncated by their 24-bit fields */
	if ((info->dest_qpn | info->src_qpn | info->psn | info->msn |
	     info->echo_psn | info->nak_psn | info->ack_psn) & ~MROCE_WIRE_U24_MASK)
		return -MROCE_WIRE_ERR_FIELD;
	/* keeps hdr_len + payload_len far from overflowing */
	if (info->payload_len > MROCE_WIRE_MAX_PAYLOAD)
		return -MROCE_WIRE_ERR_LENGTH;

	memset(buf, 0, hlen);
	bh->version = MROCE_WIRE_VERSION;
	bh->opcode = info->opcode;
	put_unaligned_be16(info->flags, &bh->flags);
	mroce_wire_put8_24(&bh->words_dqpn, hlen / 8, info->dest_qpn);
	mroce_wire_put8_24(&bh->path_sqpn, info->path_id, info->src_qpn);
	mroce_wire_put8_24(&bh->psn, 0, info->psn);
	put_unaligned_be32(info->path_seq, &bh->path_seq);
	mroce_wire_put8_24(&bh->msn, 0, info->msn);
	put_unaligned_be32(info->ts_us, &bh->ts_us);
	mroce_wire_encode_ext(buf, op, info);
	if (hlen != op->hdr_len) {
		struct mroce_pbh *pbh = buf + op->hdr_len;

		mroce_wire_put8_24(&pbh->ack_psn, 0, info->ack_psn);
		mroce_wire_encode_kh((u8 *)(pbh + 1), info);
	}

	err = mroce_wire_decode(buf, hlen, hlen + info->payload_len, &check);
	return err ? err : hlen;
}

void mroce_wire_seg_info(struct mroce_pkt_info *pi, u32 mss, u32 chunk_len,
			 u32 i, const struct mroce_wire_seg *seg)
{
	pi->psn = mroce_psn_add(pi->psn, i);
	pi->offset += i * mss;
	pi->flags = seg->flags;
	pi->path_id = seg->path_id;
	pi->path_seq = seg->path_seq;
	pi->payload_len = min(mss, chunk_len - i * mss);
}
EXPORT_SYMBOL_GPL(mroce_wire_seg_info);

/*
 * Segment @i of a chunk (mroce_wire.h).  The template is checked as a
 * receiver would check a packet with the chunk's first segment's length,
 * and the segment is written by mroce_wire_build(), so a provider that
 * segments with this function never sends what a receiver drops.
 */
int mroce_wire_seg_build(void *buf, unsigned int size, const void *tmpl,
			 unsigned int tmpl_len, u32 mss, u32 chunk_len, u32 i,
			 const struct mroce_wire_seg *seg, u32 *payload_len)
{
	const struct mroce_wire_opinfo *op;
	struct mroce_pkt_info pi;
	u32 nsegs, first;
	int err;

	if (!mss || mss > MROCE_WIRE_MAX_PAYLOAD || !chunk_len)
		return -MROCE_WIRE_ERR_LENGTH;
	nsegs = DIV_ROUND_UP(chunk_len, mss);
	if (i >= nsegs)
		return -MROCE_WIRE_ERR_LENGTH;
	first = min(mss, chunk_len);
	err = mroce_wire_decode(tmpl, tmpl_len, tmpl_len + first, &pi);
	if (err)
		return err;
	op = mroce_wire_opinfo(pi.opcode);
	/* a piggybacked ACK goes in one packet, never in every segment */
	if (!(op->props & MROCE_OPP_MSG) || pi.hdr_len != tmpl_len ||
	    ((pi.flags | seg->flags) & MROCE_F_PB_ACK))
		return -MROCE_WIRE_ERR_OPCODE;
	/* the chunk must end inside the message */
	if ((u64)pi.offset + chunk_len > pi.msg_len)
		return -MROCE_WIRE_ERR_LENGTH;

	mroce_wire_seg_info(&pi, mss, chunk_len, i, seg);
	err = mroce_wire_build(buf, size, &pi);
	if (err >= 0 && payload_len)
		*payload_len = pi.payload_len;
	return err;
}
EXPORT_SYMBOL_GPL(mroce_wire_seg_build);
