// SPDX-License-Identifier: GPL-2.0-only
/*
 * mroce requester: the send side of a QP builds and sends packets.
 *
 * The requester (a tasklet, so it runs in softirq context, and the
 * pacer's hrtimer runs it when the next packet is due) copies WQEs out of
 * the SQ ring, validates the copy, gives each its PSNs and segments it
 * into packets within the PSN window, on the path the path table picks.
 * What the peer answers is the completer's (mroce_comp.c); what to send
 * again, the loss recovery's (mroce_recovery.c).
 *
 * Everything here runs under qp->sq.lock.
 */

#include <linux/jhash.h>

#include "mroce_sq.h"

/*
 * Recount each path's packets in flight from the scoreboard: resends the
 * detector did not declare (tail probe, RTO) leave their first copy
 * counted on its path.  Only needed when path windows apply and block.
 */
static void mroce_req_paths_resync(struct mroce_qp *qp)
{
	struct mroce_paths *ps = qp->sq.paths;
	struct mroce_sb *sb = &qp->sq.sb;
	u32 p, id;

	for (id = 0; id < ps->n; id++)
		ps->path[id].inflight = 0;
	for (p = sb->una; p != sb->nxt; p = mroce_psn_add(p, 1)) {
		const struct mroce_sb_slot *s = mroce_sb_slot(sb, p);

		if (!(s->flags & (MROCE_SB_SACKED | MROCE_SB_LOST)) &&
		    s->path < ps->n)
			ps->path[s->path].inflight++;
	}
}

/*
 * The oldest request PSN whose answer is still incomplete: the first READ
 * chunk of @sw not all in, or its ATOMIC; false if none that was sent.
 */
static bool mroce_swqe_waits_at(const struct mroce_swqe *sw, u32 *psn)
{
	if (!(sw->op->mask & MROCE_WR_RD_ATOMIC))
		return false;
	if (sw->op->mask & MROCE_WR_ATOMIC) {
		*psn = sw->first_psn;
		return sw->sent && !sw->done;
	}
	*psn = mroce_psn_add(sw->first_psn, sw->read_base);
	return sw->read_base < sw->sent;
}

/*
 * May a new request packet go out?  At most cwnd (<= 256, the SACK span)
 * packets after the cumulative point; and while a READ chunk or ATOMIC
 * waits for its answer, its PSN must keep its slot_wqe and read_seen
 * entries, so nothing 256 or more PSNs after it.  SEND/WRITE messages
 * of any length stream through the window, and so do READs of any
 * length: a chunk's slot is free again once its answer is complete.
 */
static bool mroce_req_window_open(struct mroce_qp *qp)
{
	u32 idx, win = min_t(u32, MROCE_WINDOW, qp->sq.cc.cwnd_pkts);

	if (qp->sq.paths->windowed)
		win = min(win, mroce_paths_window(qp->sq.paths));
	if (mroce_psn_fwd(qp->sq.sb.una, qp->sq.psn) >= max(win, 1U))
		return false;
	if (!qp->sq.rd_atomic)
		return true;
	for (idx = qp->sq.tail; idx != qp->sq.head; idx++) {
		const struct mroce_swqe *sw = &qp->sq.wqe[idx & qp->sq.ring.mask];
		u32 psn;

		if (sw->sent && mroce_swqe_waits_at(sw, &psn))
			return mroce_psn_fwd(psn, qp->sq.psn) < MROCE_WINDOW;
	}
	return true;
}

/*
 * Does the remote range of an RDMA WQE (a READ's, a WRITE's) fit below
 * 2^64?  The spec forbids a wrapping range on the wire.
 */
static bool mroce_sq_remote_ok(const struct mroce_swqe *sw)
{
	u64 va, len;

	if (sw->op->mask & MROCE_WR_ATOMIC) {
		va = sw->wqe.wr.atomic.remote_addr;
		len = sizeof(u64);
	} else if (sw->op->mask & MROCE_WR_RDMA) {
		va = sw->wqe.wr.rdma.remote_addr;
		len = sw->length;
	} else {
		return true;
	}
	/* va + len <= 2^64 */
	return !len || len - 1 <= U64_MAX - va;
}

/*
 * Copy WQE @idx out of the ring and check it.  The ring is shared with
 * the process: every field of the slot is hostile, only the copy is
 * looked at from here on, and the copy is made safe (num_sge within the
 * kernel's arrays) before anything can fail, since the flush and the
 * release of a failed WQE walk it too.
 */
static enum ib_wc_status mroce_sq_fetch(struct mroce_qp *qp, u32 idx)
{
	struct mroce_swqe *sw = &qp->sq.wqe[idx & qp->sq.ring.mask];
	const u8 *slot = mroce_ring_slot(&qp->sq.ring, idx);
	struct mroce_send_wqe *w = &sw->wqe;
	u16 qp_type_mask = qp->ibqp.qp_type == IB_QPT_RC ? MROCE_WR_RC :
							    MROCE_WR_UD;
	int access = 0;
	u32 num_sge;

	memcpy(w, slot, sizeof(*w));
	sw->fetch_ns = ktime_get_ns();
	num_sge = w->num_sge;
	w->num_sge = 0;		/* no SGE resolved yet */
	memset(sw->mr, 0, sizeof(sw->mr));
	sw->inline_data = NULL;
	sw->length = 0;
	sw->sent = 0;
	sw->read_segs = 0;
	sw->read_got = 0;
	sw->read_base = 0;
	sw->done = false;
	sw->status = IB_WC_SUCCESS;

	sw->op = mroce_wr_opinfo(w->opcode);
	if (!sw->op || !(sw->op->mask & qp_type_mask) ||
	    ((sw->op->mask & MROCE_WR_KERNEL) && qp->is_user) ||
	    ((sw->op->mask & MROCE_WR_USER) && !qp->is_user))
		return IB_WC_LOC_QP_OP_ERR;
	if (sw->op->mask & MROCE_WR_LOCAL)
		return IB_WC_SUCCESS;	/* no SGEs; mroce_req_local() */
	if (w->flags & MROCE_WQE_INLINE) {
		if (!(sw->op->mask & MROCE_WR_INLINE))
			return IB_WC_LOC_QP_OP_ERR;
		if (w->inline_len > qp->sq.max_inline)
			return IB_WC_LOC_LEN_ERR;
		w->num_sge = 0;
		sw->inline_data = qp->sq.inline_buf +
				  (idx & qp->sq.ring.mask) * qp->sq.max_inline;
		memcpy(sw->inline_data, slot + sizeof(*w), w->inline_len);
		sw->length = w->inline_len;
		return IB_WC_SUCCESS;
	}
	if (num_sge > qp->sq.max_sge)
		return IB_WC_LOC_LEN_ERR;
	w->num_sge = num_sge;
	memcpy(sw->sge, slot + sizeof(*w), num_sge * sizeof(sw->sge[0]));
	/* READ and ATOMIC results are written into the local SGEs */
	if (sw->op->mask & MROCE_WR_RD_ATOMIC)
		access = IB_ACCESS_LOCAL_WRITE;
	if (mroce_sgl_resolve(qp->mdev, qp->ibqp.pd, sw->sge, sw->mr,
			      w->num_sge, access, &sw->length))
		return IB_WC_LOC_PROT_ERR;
	if ((sw->op->mask & MROCE_WR_ATOMIC) && sw->length != sizeof(u64))
		return IB_WC_LOC_LEN_ERR;
	if (!mroce_sq_remote_ok(sw))
		return IB_WC_LOC_QP_OP_ERR;
	return IB_WC_SUCCESS;
}

/* Payload bytes [@off, @off + @len) of @sw; -EACCES if an MR went away. */
static int mroce_swqe_gather(const struct mroce_swqe *sw, u32 off, void *dst,
			     u32 len)
{
	if (sw->inline_data) {
		memcpy(dst, sw->inline_data + off, len);
		return 0;
	}
	return mroce_sgl_copy(sw->sge, sw->mr, sw->wqe.num_sge, off, dst, len,
			      false);
}

/*
 * Payload bytes [@off, @off + @len) of @sw without a copy, as fragments
 * of the MR's pages?  The WQE completes only when the peer acknowledges
 * the data, and a resend builds a new packet, so the pages need to be
 * good only as long as the packet lives, which their references see to.
 */
static bool mroce_swqe_zcopy(const struct mroce_swqe *sw, u32 off, u32 len)
{
	return !sw->inline_data &&
	       mroce_sgl_zcopy_ok(sw->sge, sw->mr, sw->wqe.num_sge, off, len);
}

/* The UDP source port of path @id in its current generation. */
static u16 mroce_path_sport(struct mroce_qp *qp, int id)
{
	return mroce_wire_sport(qp->sq.path_hash, id,
				qp->sq.paths->path[id].gen);
}

/*
 * READ request @k of @sw: one PSN asks for one chunk.  A re-request asks
 * for the first run of missing segments only: the response ending it
 * (ACK_REQ) shows what else is missing, and nothing that arrived is sent
 * twice.
 */
static void mroce_req_fill_read(struct mroce_qp *qp,
				const struct mroce_swqe *sw, u32 k, bool retx,
				struct mroce_pkt_info *pi)
{
	u32 clen = mroce_read_chunk_len(qp, sw, k);
	u64 missing = ~qp->sq.read_seen[pi->psn % MROCE_WINDOW] &
		      mroce_segs_mask(mroce_segs(qp, clen));

	/* each READ request of a split READ is a message of its own */
	pi->msn = (sw->msn + k) & MROCE_WIRE_U24_MASK;
	pi->va = sw->wqe.wr.rdma.remote_addr + (u64)k * mroce_read_chunk(qp);
	pi->rkey = sw->wqe.wr.rdma.rkey;
	pi->msg_len = clen;
	if (sw->wqe.num_sge) {
		pi->sink_va = sw->sge[0].addr;
		pi->sink_key = sw->sge[0].lkey;
	}
	if (retx && missing) {
		u32 first = __ffs64(missing), last;
		u64 rest = ~(missing >> first);

		last = rest ? first + __ffs64(rest) : 64;
		pi->offset = first * qp->pmtu;
		pi->rd_length = min(clen, last * qp->pmtu) - pi->offset;
	} else {
		pi->rd_length = clen;
	}
}

/* The payload of packet @k of SEND or WRITE @sw: SEG, or the rest. */
static u32 mroce_req_seg_len(const struct mroce_swqe *sw, u32 k)
{
	return min(sw->seg, sw->length - k * sw->seg);
}

/*
 * The headers of packet @k of @sw, from the WQE alone (what the packet
 * says, not how it travels).  Returns the payload bytes, from @*off of
 * the message.
 */
static u32 mroce_req_fill(struct mroce_qp *qp, const struct mroce_swqe *sw,
			  u32 k, bool retx, struct mroce_pkt_info *pi, u32 *off)
{
	const struct mroce_send_wqe *w = &sw->wqe;
	const struct mroce_wire_opinfo *op;
	u32 len;

	pi->opcode = sw->op->wire_op;
	pi->psn = mroce_psn_add(sw->first_psn, k);
	pi->msn = sw->msn;
	if (retx)
		pi->flags |= MROCE_F_RETRANSMIT;
	*off = 0;
	if (sw->op->mask & MROCE_WR_READ) {
		mroce_req_fill_read(qp, sw, k, retx, pi);
		return 0;
	}
	if (sw->op->mask & MROCE_WR_ATOMIC) {
		/* FETCH_ADD's addend travels in the swap field */
		if (pi->opcode == MROCE_OP_ATOMIC_CMP_SWP) {
			pi->swap_add = w->wr.atomic.swap;
			pi->compare = w->wr.atomic.compare_add;
		} else {
			pi->swap_add = w->wr.atomic.compare_add;
		}
		pi->va = w->wr.atomic.remote_addr;
		pi->rkey = w->wr.atomic.rkey;
		return 0;
	}

	/* SEND and WRITE: one segment of the message */
	op = mroce_wire_opinfo(pi->opcode);
	*off = k * sw->seg;
	len = mroce_req_seg_len(sw, k);
	pi->offset = *off;
	pi->msg_len = sw->length;
	if (k == 0)
		pi->flags |= MROCE_F_FIRST;
	if (k == sw->npkts - 1) {
		pi->flags |= MROCE_F_LAST;
		if ((w->flags & MROCE_WQE_SOLICITED) &&
		    (op->flags_ok & MROCE_F_SOLICITED))
			pi->flags |= MROCE_F_SOLICITED;
	}
	if (op->props & MROCE_OPP_RWQE)
		pi->rq_seq = sw->rq_seq;
	if (op->props & MROCE_OPP_IMM)
		pi->imm = be32_to_cpu((__force __be32)w->imm_data);
	if (op->props & MROCE_OPP_INV)
		pi->imm = w->imm_data;		/* an rkey, host order */
	if (sw->op->mask & MROCE_WR_RDMA) {
		pi->va = w->wr.rdma.remote_addr;
		pi->rkey = w->wr.rdma.rkey;
	}
	return len;
}

/*
 * Does the last packet of WQE @idx ask for an ACK?  Only when the
 * process is likely to be waiting for it: the WQE is signaled (an
 * unsignaled one has no completion to wait for), nothing older is
 * outstanding and nothing is queued behind it (fetched, or posted to
 * the ring), as in a ping-pong.  In a stream the responder's cadence
 * (every MROCE_ACK_EVERY packets) and its delayed ACK (mroce_delack.h)
 * answer it: one ACK for several small messages.  A hint: a WQE posted
 * just after this look costs one ACK more or a delay of at most
 * ack_delay_max, never a lost ACK.
 */
static bool mroce_req_last_asks(const struct mroce_qp *qp,
				const struct mroce_swqe *sw, u32 idx)
{
	return (qp->sq_sig_all || (sw->wqe.flags & MROCE_WQE_SIGNALED)) &&
	       idx == qp->sq.tail && idx + 1 == qp->sq.head &&
	       READ_ONCE(qp->sq.ring.hdr->prod) == qp->sq.head;
}

/*
 * Everything about packet @k of the WQE in ring slot @idx but its bytes:
 * its headers in @pi, its payload range in @off and @len, its path (a
 * new packet goes on @path, the caller picked it with window; a resend
 * on the path that lost it unless that one is dead), and the scoreboard's
 * record of it, sent at @now_us.  False if its PSN is outside the send
 * window (nothing to send).
 */
static bool mroce_req_prep(struct mroce_qp *qp, u32 idx, u32 k, bool retx,
			   int path, u64 now_us, struct mroce_pkt_info *pi,
			   u32 *off, u32 *len)
{
	struct mroce_swqe *sw = &qp->sq.wqe[idx & qp->sq.ring.mask];

	/* a READ chunk's slot of the window starts empty on its first send */
	if (!retx && (sw->op->mask & MROCE_WR_READ))
		qp->sq.read_seen[mroce_psn_add(sw->first_psn, k) %
				 MROCE_WINDOW] = 0;
	*len = mroce_req_fill(qp, sw, k, retx, pi, off);

	/*
	 * How it travels.  A resend asks for an ACK at once: it settles
	 * what is still missing (READ and ATOMIC requests are answered by
	 * responses).  So does a message's last packet when its ACK is all
	 * the process waits for (mroce_req_last_asks()).  Now and then a
	 * new packet asks too, on a path the ACK cadence never echoes.
	 */
	if ((mroce_wire_opinfo(pi->opcode)->flags_ok & MROCE_F_ACK_REQ) &&
	    (retx ||
	     ((pi->flags & MROCE_F_LAST) && mroce_req_last_asks(qp, sw, idx)) ||
	     mroce_paths_want_echo(qp->sq.paths, path, now_us,
				   qp->sq.rto.srtt_us)))
		pi->flags |= MROCE_F_ACK_REQ;
	if (retx)
		path = mroce_paths_pick_retx(qp->sq.paths,
					     mroce_sb_slot(&qp->sq.sb, pi->psn)->path);
	pi->path_id = path;
	pi->path_seq = mroce_paths_sent(qp->sq.paths, path, retx);
	pi->ts_us = (u32)now_us;	/* mroce_now_us(), one clock read */
	/*
	 * A READ or ATOMIC request the peer acknowledged whose response is
	 * incomplete is asked again; the scoreboard is done with its PSN,
	 * nothing to record.
	 */
	if (!mroce_sb_sent(&qp->sq.sb, pi->psn, pi->path_id, pi->path_seq,
			   pi->ts_us) &&
	    !(retx && (sw->op->mask & MROCE_WR_RD_ATOMIC))) {
		dev_err_ratelimited(&qp->mdev->ib_dev.dev,
				    "qp %u: PSN %u outside the send window\n",
				    qp->ibqp.qp_num, pi->psn);
		mroce_count(qp->mdev, MROCE_CNT_TX_DROP, 1);
		return false;
	}
	qp->sq.slot_wqe[pi->psn % MROCE_WINDOW] = idx;
	return true;
}

/*
 * An skb holding payload bytes [@off, @off + @len) of @sw, as page
 * fragments when zero-copy applies and the way out takes them (@frags,
 * mroce_pkt_frags_pay()), else copied; NULL if there is no
 * memory (the loss timers resend what it was for), or if an MR went away
 * under the WQE (then the WQE has failed, in order).
 */
static struct sk_buff *mroce_req_payload(struct mroce_qp *qp,
					 struct mroce_swqe *sw, u32 off,
					 u32 len, u32 npkts, bool frags)
{
	bool zcopy = frags && mroce_swqe_zcopy(sw, off, len);
	struct sk_buff *skb;
	int err = 0;

	skb = mroce_pkt_alloc(qp, zcopy ? 0 : len);
	if (!skb) {
		mroce_count(qp->mdev, MROCE_CNT_TX_DROP, npkts);
		return NULL;
	}
	if (zcopy)
		err = mroce_sgl_attach_skb(sw->sge, sw->mr, sw->wqe.num_sge,
					   off, skb, len);
	else if (len)
		err = mroce_swqe_gather(sw, off, skb_put(skb, len), len);
	if (err) {
		/* deregistered under the WQE: it fails, in order */
		kfree_skb(skb);
		mroce_swqe_fail(sw, IB_WC_LOC_PROT_ERR);
		return NULL;
	}
	if (zcopy)
		mroce_count(qp->mdev, MROCE_CNT_TX_ZCOPY_PKTS, npkts);
	return skb;
}

/* May this QP's requests carry ACKs (PB_ACK) to its peer? */
bool mroce_qp_pb_ok(const struct mroce_qp *qp)
{
	switch (READ_ONCE(mroce_pb_ack)) {
	case MROCE_PB_ALWAYS:
		return true;
	case MROCE_PB_AUTO:
		return READ_ONCE(qp->sq.peer_pb);
	default:
		return false;
	}
}

/*
 * pb_ack = 1 or seg = 1: ask the peer whether it accepts PB_ACK (and
 * large segments), with a PROBE that carries the flag (spec "Piggybacked
 * acknowledgment", agreement): one with the connection's first request
 * packet, and again one RTO later, MROCE_PB_QUERIES in all, until it
 * answers with ECHO_PB (and ECHO_SEG if it takes large segments).  A peer
 * without the revision drops the PROBE (rx_drop_flags) and is never
 * asked more.
 */
static void mroce_req_pb_query(struct mroce_qp *qp, u32 now_us)
{
	struct mroce_pkt_info pi = {
		.opcode = MROCE_OP_PROBE,
		.flags = MROCE_F_PB_ACK,
		.ts_us = now_us,
	};
	struct sk_buff *skb;

	if ((READ_ONCE(mroce_pb_ack) != MROCE_PB_AUTO &&
	     READ_ONCE(mroce_seg) != MROCE_PB_AUTO) || qp->sq.peer_pb ||
	    qp->sq.pb_queries >= MROCE_PB_QUERIES ||
	    (qp->sq.pb_queries &&
	     now_us - qp->sq.pb_query_us < mroce_rto_us(&qp->sq.rto)))
		return;
	skb = mroce_pkt_alloc(qp, 0);
	if (!skb)
		return;
	qp->sq.pb_queries++;
	qp->sq.pb_query_us = now_us;
	mroce_qcount(qp, MROCE_CNT_TX_PROBES, 1);
	mroce_pkt_send_path(qp, skb, &pi, mroce_path_sport(qp, 0));
}

/*
 * Send (or resend) packet @k of the WQE in ring slot @idx.  A new packet
 * goes on @path (the caller picked it, with window); a resend on the path
 * that lost it unless that one is dead (@path ignored).
 */
void mroce_req_xmit(struct mroce_qp *qp, u32 idx, u32 k, bool retx, int path)
{
	struct mroce_swqe *sw = &qp->sq.wqe[idx & qp->sq.ring.mask];
	struct mroce_pkt_info pi = {};
	u64 now_us = mroce_now_us64();
	struct sk_buff *skb;
	u32 off, len;

	if (!mroce_req_prep(qp, idx, k, retx, path, now_us, &pi, &off, &len))
		return;
	if (qp->ibqp.qp_type == IB_QPT_RC)
		mroce_req_pb_query(qp, (u32)now_us);
	skb = mroce_req_payload(qp, sw, off, len, 1, mroce_pkt_frags_pay(qp));
	if (!skb)
		return;
	/*
	 * The ACK the responder owes rides along where the MTU has room;
	 * else one held for a piggyback goes now, as an ACK packet.
	 */
	if (qp->ibqp.qp_type == IB_QPT_RC && mroce_qp_pb_ok(qp)) {
		if (mroce_wire_opinfo(pi.opcode)->hdr_len + MROCE_HLEN_PB_ACK +
		    len <= MROCE_HLEN_MAX_DATA + sw->seg)
			mroce_resp_pb_ack(qp, &pi, (u32)now_us, retx);
		else
			mroce_resp_pb_flush(qp);
	}
	if (retx)
		mroce_qcount(qp, sw->op->mask & MROCE_WR_READ ?
			     MROCE_CNT_TX_READ_REREQ : MROCE_CNT_TX_RETX_PKTS, 1);
	mroce_pkt_send_path(qp, skb, &pi, mroce_path_sport(qp, pi.path_id));
}

/*
 * Segmentation offload (MROCE_XPORT_CAP_SEG).  The requester gathers
 * consecutive new packets of one SEND or WRITE message into a chunk, each
 * prepared as mroce_req_xmit() prepares a packet (so the scoreboard, the
 * paths and the pacer see every packet as usual), and hands the provider
 * one sk_buff: packet k's headers and the payload of them all.  The
 * provider cuts it as mroce_wire_seg_build() says.
 */
struct mroce_req_chunk {
	u32 idx;			/* ring slot of the WQE */
	int path;			/* of its first packet */
	u32 off;			/* message offset of the payload */
	u64 now_us;			/* when its first packet was prepared */
	bool failed;			/* a chunk's WQE failed: complete it */
	struct mroce_pkt_info tmpl;	/* the first packet's headers */
	struct mroce_xport_chunk c;
};

/* May packet sw->sent of @sw go in a chunk? */
static bool mroce_req_chunkable(const struct mroce_swqe *sw)
{
	return !(sw->op->mask & (MROCE_WR_RD_ATOMIC | MROCE_WR_LOCAL)) &&
	       sw->npkts > 1 && sw->status == IB_WC_SUCCESS &&
	       (mroce_wire_opinfo(sw->op->wire_op)->props & MROCE_OPP_MSG);
}

/* Hand the chunk gathered so far to the provider. */
static void mroce_req_chunk_flush(struct mroce_qp *qp,
				  const struct mroce_xport_ops *xport,
				  struct mroce_req_chunk *ch)
{
	struct mroce_swqe *sw = &qp->sq.wqe[ch->idx & qp->sq.ring.mask];
	struct mroce_xport_chunk *c = &ch->c;
	struct sk_buff *skb;

	if (!c->nsegs)
		return;
	/* a chunk never carries an ACK: one held for a piggyback goes now */
	if (mroce_qp_pb_ok(qp))
		mroce_resp_pb_flush(qp);
	/* the provider takes the chunk apart itself, fragments or not */
	skb = mroce_req_payload(qp, sw, ch->off, c->len, c->nsegs, true);
	if (skb)
		mroce_pkt_send_chunk(qp, xport, &ch->tmpl, c, skb);
	else
		ch->failed |= sw->status != IB_WC_SUCCESS;
	c->nsegs = 0;
	c->len = 0;
}

/*
 * Prepare packet @k of WQE @idx, new, on @path, and add it to the chunk
 * (flushing first if it does not continue it).  The chunk goes out when
 * full or at the message's last packet; the caller flushes what is left.
 */
static void mroce_req_chunk_add(struct mroce_qp *qp,
				const struct mroce_xport_ops *xport,
				struct mroce_req_chunk *ch, u32 idx, u32 k,
				int path)
{
	struct mroce_xport_chunk *c = &ch->c;
	struct mroce_pkt_info pi = {};
	struct mroce_wire_seg *seg;
	u64 now_us;
	u32 off, len;

	if (c->nsegs && (ch->idx != idx || c->nsegs == MROCE_XPORT_SEG_MAX ||
			 (ch->path != path &&
			  (xport->caps & MROCE_XPORT_CAP_SEG_PATH))))
		mroce_req_chunk_flush(qp, xport, ch);
	/* one timestamp per chunk: the provider stamps the template's */
	now_us = c->nsegs ? ch->now_us : mroce_now_us64();
	if (!mroce_req_prep(qp, idx, k, false, path, now_us, &pi, &off, &len)) {
		/* nothing for PSN k: the chunk must not run across it */
		mroce_req_chunk_flush(qp, xport, ch);
		return;
	}
	if (!c->nsegs) {
		/* the capability PROBE goes ahead of the chunk, once */
		if (qp->ibqp.qp_type == IB_QPT_RC)
			mroce_req_pb_query(qp, (u32)now_us);
		ch->now_us = now_us;
		ch->idx = idx;
		ch->path = path;
		ch->off = off;
		ch->tmpl = pi;
		c->mss = qp->sq.wqe[idx & qp->sq.ring.mask].seg;
	}
	seg = &c->seg[c->nsegs++];
	seg->flags = pi.flags;
	seg->path_id = pi.path_id;
	seg->path_seq = pi.path_seq;
	seg->sport = mroce_path_sport(qp, pi.path_id);
	c->len += len;
	if (pi.flags & MROCE_F_LAST)
		mroce_req_chunk_flush(qp, xport, ch);
}

/* PROBE path @id (dead, new entropy) with path sequence number @seq. */
void mroce_req_probe(struct mroce_qp *qp, int id, u32 seq)
{
	struct mroce_pkt_info pi = {
		.opcode = MROCE_OP_PROBE,
		.path_id = id,
		.path_seq = seq,
		.ts_us = mroce_now_us(),
	};
	struct sk_buff *skb = mroce_pkt_alloc(qp, 0);

	if (!skb) {
		mroce_count(qp->mdev, MROCE_CNT_TX_DROP, 1);
		return;
	}
	mroce_qcount(qp, MROCE_CNT_TX_PROBES, 1);
	mroce_pkt_send_path(qp, skb, &pi, mroce_path_sport(qp, id));
}

/*
 * The segment size of a SEND or WRITE fetched now: the PMTU, or large
 * segments (spec "Large segments": as many bytes as the netdev MTU holds
 * with the largest data headers, and no more than the peer said it takes
 * in its seg_max) where the peer accepts them (module parameter seg) and
 * the consumer asked for the port's own MTU.  A smaller path MTU is the
 * consumer's choice, kept.  Fixed for the message once taken: its resends
 * cut it the same way.
 */
u32 mroce_req_seg(const struct mroce_qp *qp)
{
	u32 seg = U32_MAX;

	switch (READ_ONCE(mroce_seg)) {
	case MROCE_PB_ALWAYS:
		break;
	case MROCE_PB_AUTO:
		seg = READ_ONCE(qp->sq.peer_seg);
		if (seg)
			break;
		fallthrough;
	default:
		return qp->pmtu;
	}
	if (qp->pmtu != ib_mtu_enum_to_int(mroce_port_mtu(qp->mdev)))
		return qp->pmtu;
	seg = min(seg, mroce_port_seg(qp->mdev));
	return max(seg, qp->pmtu);
}

/* Give the WQE just fetched its PSNs, MSN, rq_seq and segment size. */
static void mroce_req_assign(struct mroce_qp *qp, struct mroce_swqe *sw)
{
	u16 mask = sw->op->mask;

	sw->seg = qp->pmtu;
	sw->first_psn = qp->sq.psn;
	sw->msn = qp->sq.msn;
	if (mask & MROCE_WR_READ) {
		u32 c = mroce_read_chunk(qp), last;

		/* full chunks, then the last */
		sw->npkts = max(1U, DIV_ROUND_UP(sw->length, c));
		last = mroce_read_chunk_len(qp, sw, sw->npkts - 1);
		sw->read_segs = (sw->npkts - 1) * MROCE_READ_CHUNK_SEGS +
				mroce_segs(qp, last);
		qp->sq.msn += sw->npkts;	/* one message per READ request */
	} else if (mask & MROCE_WR_ATOMIC) {
		sw->npkts = 1;
		qp->sq.msn++;
	} else {
		sw->seg = mroce_req_seg(qp);
		sw->npkts = max(1U, DIV_ROUND_UP(sw->length, sw->seg));
		/*
		 * the pacer and the rate's packet count (the window) see
		 * packets as big as this message's largest, or the PMTU's:
		 * a 4 KiB message in 8 KiB segments is one 4 KiB packet
		 */
		qp->sq.cc.pkt_bytes =
			mroce_wire_pkt_bytes(max(min(sw->seg, sw->length),
						 qp->pmtu));
		qp->sq.msn++;
	}
	qp->sq.msn &= MROCE_WIRE_U24_MASK;
	if (mask & MROCE_WR_RWQE)
		sw->rq_seq = qp->sq.rq_seq++;
	if (mask & MROCE_WR_RD_ATOMIC)
		qp->sq.rd_atomic++;
}

/* Can the next WQE (not yet fetched) start?  READ/ATOMIC credits, fence. */
static bool mroce_req_may_start(struct mroce_qp *qp, u32 idx)
{
	const struct mroce_send_wqe *w = mroce_ring_slot(&qp->sq.ring, idx);
	u8 op = READ_ONCE(w->opcode);
	u16 flags = READ_ONCE(w->flags);

	if ((flags & MROCE_WQE_FENCE) && qp->sq.rd_atomic)
		return false;
	if (mroce_wr_is(op, MROCE_WR_RD_ATOMIC) &&
	    qp->sq.rd_atomic >= max_t(u32, qp->max_rd_atomic, 1))
		return false;
	return true;
}

/*
 * UD: one packet per WQE, to the AH the WQE names; no acknowledgment, so
 * the WQE is done once the packet is handed to the network.
 */
static enum ib_wc_status mroce_req_ud(struct mroce_qp *qp,
				      struct mroce_swqe *sw)
{
	const struct mroce_send_wqe *w = &sw->wqe;
	struct mroce_pkt_info pi = {};
	struct sk_buff *skb;
	struct mroce_av av;
	u16 sport;

	if (sw->length > qp->pmtu)
		return IB_WC_LOC_LEN_ERR;
	if (mroce_ah_av(qp->mdev, w->wr.ud.ah_num, qp->ibqp.pd, &av) ||
	    !w->wr.ud.remote_qpn || w->wr.ud.remote_qpn > MROCE_WIRE_U24_MASK)
		return IB_WC_LOC_QP_OP_ERR;

	pi.opcode = sw->op->ud_op;
	pi.psn = qp->sq.psn;
	qp->sq.psn = mroce_psn_add(qp->sq.psn, 1);
	/* verbs: a Q_Key with the top bit set means "use the QP's" */
	pi.qkey = w->wr.ud.remote_qkey & 0x80000000 ? qp->qkey :
						       w->wr.ud.remote_qkey;
	if (sw->op->mask & MROCE_WR_IMM)
		pi.imm = be32_to_cpu((__force __be32)w->imm_data);
	skb = mroce_pkt_alloc(qp, sw->length);
	if (!skb)
		return IB_WC_LOC_QP_OP_ERR;
	if (sw->length &&
	    mroce_swqe_gather(sw, 0, skb_put(skb, sw->length), sw->length)) {
		kfree_skb(skb);
		return IB_WC_LOC_PROT_ERR;
	}
	/* spread datagrams of different peers over paths */
	sport = mroce_wire_sport(jhash_2words(qp->ibqp.qp_num,
					      w->wr.ud.remote_qpn, 0), 0, 0);
	mroce_pkt_send_to(qp, &av, w->wr.ud.remote_qpn, sport, skb, &pi);
	return IB_WC_SUCCESS;
}

/*
 * The producer index if the SQ holds a WQE not fetched yet, else 0 with
 * *@empty set.  On an empty ring the requester asks for a doorbell
 * (NEED_KICK) and looks once more: a WQE published meanwhile is either
 * seen now or announced by the doorbell.
 */
static u32 mroce_sq_poll(struct mroce_qp *qp, bool *empty)
{
	struct mroce_ring_hdr *hdr = qp->sq.ring.hdr;
	u32 prod;

	/* pairs with the producer's release of prod */
	prod = smp_load_acquire(&hdr->prod);
	*empty = false;
	if (prod != qp->sq.head)
		return prod;
	WRITE_ONCE(hdr->flags, hdr->flags | MROCE_RING_F_NEED_KICK);
	/* flag store before the prod load; the producer orders them the
	 * other way round
	 */
	smp_mb();
	prod = smp_load_acquire(&hdr->prod);	/* as above */
	if (prod == qp->sq.head) {
		*empty = true;
		return 0;
	}
	WRITE_ONCE(hdr->flags, hdr->flags & ~MROCE_RING_F_NEED_KICK);
	return prod;
}

/* The requester starts: no doorbell needed until it stops again. */
static void mroce_sq_busy(struct mroce_qp *qp)
{
	struct mroce_ring_hdr *hdr = qp->sq.ring.hdr;

	WRITE_ONCE(hdr->flags, hdr->flags & ~MROCE_RING_F_NEED_KICK);
	smp_mb();	/* clear the flag before looking at prod */
}

static bool mroce_req_run_ud(struct mroce_qp *qp, int budget)
{
	bool failed = false, empty;
	u32 prod;

	mroce_sq_busy(qp);
	while (budget--) {
		struct mroce_swqe *sw;

		prod = mroce_sq_poll(qp, &empty);
		if (empty)
			return failed;
		if (prod - qp->sq.tail > qp->sq.ring.num_slots)
			return true;
		sw = &qp->sq.wqe[qp->sq.head & qp->sq.ring.mask];
		sw->status = mroce_sq_fetch(qp, qp->sq.head);
		if (sw->status == IB_WC_SUCCESS)
			sw->status = mroce_req_ud(qp, sw);
		sw->npkts = 0;
		qp->sq.head++;
		qp->sq.cur = qp->sq.head;
		failed = mroce_sq_complete(qp);
		if (failed)
			return true;
	}
	tasklet_schedule(&qp->sq.task);
	return failed;
}

/*
 * What packet @k of @sw pays the pacer: its payload and the largest
 * headers (a READ request or an atomic carries none).
 */
static u32 mroce_req_pkt_bytes(const struct mroce_swqe *sw, u32 k)
{
	if (sw->op->mask & (MROCE_WR_READ | MROCE_WR_ATOMIC))
		return mroce_wire_pkt_bytes(0);
	return mroce_wire_pkt_bytes(mroce_req_seg_len(sw, k));
}

/*
 * Is the next packet early for the connection rate?  Then the pacer's
 * hrtimer runs the requester again when it is due.
 */
static bool mroce_req_pace_wait(struct mroce_qp *qp)
{
	u64 wait = mroce_pacer_next_us(&qp->sq.pacer, qp->sq.cc.rate_bps,
				       qp->sq.cc.pkt_bytes,
				       mroce_now_us64());

	if (!wait)
		return false;
	if (!hrtimer_is_queued(&qp->sq.pace_timer))
		hrtimer_start(&qp->sq.pace_timer, ns_to_ktime(wait * NSEC_PER_USEC),
			      HRTIMER_MODE_REL_SOFT);
	return true;
}

/*
 * Execute a local operation (REG_MR, LOCAL_INV, BIND_MW) in send queue order:
 * every WQE before it has been sent, none after it has started.  It
 * completes, in order, with the status returned.
 */
static enum ib_wc_status mroce_req_local(struct mroce_qp *qp,
					 const struct mroce_swqe *sw)
{
	const struct mroce_send_wqe *w = &sw->wqe;
	enum ib_wc_status st;

	if (w->opcode == IB_WR_REG_MR) {
		st = mroce_mr_fast_reg(qp->ibqp.pd, w->wr.reg.mr_lkey,
				       w->wr.reg.key, w->wr.reg.access);
		if (st == IB_WC_SUCCESS)
			mroce_qcount(qp, MROCE_CNT_FAST_REG, 1);
		return st;
	}
	if (w->opcode == IB_WR_BIND_MW)
		return mroce_mw_bind(qp, w);
	/* a type 2 window's rkey, else a fast MR's key */
	switch (mroce_mw_local_inv(qp, w->imm_data)) {
	case 0:
		st = IB_WC_SUCCESS;
		break;
	case -ENOENT:
		st = mroce_mr_local_inv(qp->mdev, qp->ibqp.pd, w->imm_data);
		break;
	default:
		st = IB_WC_LOC_PROT_ERR;
	}
	if (st == IB_WC_SUCCESS)
		mroce_qcount(qp, MROCE_CNT_LOCAL_INV, 1);
	return st;
}

/*
 * Take the next WQE the process posted into the kernel's copy of the
 * send queue.  Returns 1 if it is ready to send, 0 if nothing may start
 * now, -EIO if the QP fails (a bad WQE completes in order first).
 */
static int mroce_req_fetch_next(struct mroce_qp *qp)
{
	struct mroce_swqe *sw;
	bool empty;
	u32 prod;

again:
	/*
	 * A WQE that failed (when fetched, executed or sent) waits for the
	 * ones before it to complete, then fails the QP; nothing after it
	 * may start meanwhile, or a WQE the IBA says is flushed would reach
	 * the peer.  A WQE found bad when fetched or executed is the newest
	 * one; so is one that failed while being sent the first time.
	 */
	if (qp->sq.head != qp->sq.tail &&
	    qp->sq.wqe[(qp->sq.head - 1) & qp->sq.ring.mask].status !=
	    IB_WC_SUCCESS)
		return 0;
	prod = mroce_sq_poll(qp, &empty);
	if (empty)
		return 0;
	sw = &qp->sq.wqe[qp->sq.head & qp->sq.ring.mask];
	if (prod - qp->sq.tail > qp->sq.ring.num_slots) {
		/* the process overran its ring */
		sw->status = IB_WC_LOC_QP_OP_ERR;
		return -EIO;
	}
	if (!mroce_req_may_start(qp, qp->sq.head))
		return 0;
	sw->status = mroce_sq_fetch(qp, qp->sq.head);
	/* the verbs retry budget runs only while work is out */
	if (qp->sq.tail == qp->sq.head)
		mroce_sq_retry_restart(qp);
	qp->sq.head++;
	if (sw->status == IB_WC_SUCCESS && (sw->op->mask & MROCE_WR_LOCAL)) {
		/* no packet: done now, completed when all before it are */
		sw->status = mroce_req_local(qp, sw);
		sw->first_psn = qp->sq.psn;
		sw->npkts = 0;
		qp->sq.cur++;
		if (mroce_sq_complete(qp))
			return -EIO;
		if (sw->status != IB_WC_SUCCESS)
			return 0;	/* fails the QP once it completes */
		goto again;
	}
	if (sw->status != IB_WC_SUCCESS) {
		/* completes in order, then the QP fails */
		sw->npkts = 0;
		qp->sq.cur++;
		return mroce_sq_complete(qp) ? -EIO : 0;
	}
	mroce_req_assign(qp, sw);
	return 1;
}

/* An active path with room in its window, by weight; -1 if none. */
static int mroce_req_pick_path(struct mroce_qp *qp)
{
	int path = mroce_paths_pick(qp->sq.paths);

	if (path < 0 && qp->sq.paths->windowed) {
		mroce_req_paths_resync(qp);
		path = mroce_paths_pick(qp->sq.paths);
	}
	return path;
}

/* The requester proper.  Under sq.lock, softirq. */
static bool mroce_req_run(struct mroce_qp *qp, int budget)
{
	const struct mroce_xport_ops *xport = READ_ONCE(qp->mdev->xport);
	bool failed = false, sent = false;
	struct mroce_req_chunk ch;
	int path, ret;

	/* segmentation offload: whole runs of a message in one skb */
	if (xport && !(xport->caps & MROCE_XPORT_CAP_SEG))
		xport = NULL;
	ch.c.nsegs = 0;
	ch.c.len = 0;
	ch.failed = false;
	mroce_sq_busy(qp);
	while (!qp->sq.rnr_wait) {
		struct mroce_swqe *sw;

		if (qp->sq.cur == qp->sq.head) {
			ret = mroce_req_fetch_next(qp);
			if (ret <= 0) {
				failed = ret < 0;
				break;
			}
		}

		sw = &qp->sq.wqe[qp->sq.cur & qp->sq.ring.mask];
		if (!mroce_req_window_open(qp))
			break;
		/* paced: wait for the hrtimer when the next packet is not due */
		if (qp->sq.cc.rate_bps && mroce_req_pace_wait(qp))
			break;
		path = -1;
		/* a provider that sends a chunk on one path: burst on it */
		if (xport && (xport->caps & MROCE_XPORT_CAP_SEG_PATH) &&
		    ch.c.nsegs && ch.c.nsegs < MROCE_XPORT_SEG_MAX &&
		    ch.idx == qp->sq.cur)
			path = mroce_paths_pick_again(qp->sq.paths, ch.path);
		if (path < 0)
			path = mroce_req_pick_path(qp);
		if (path < 0)
			break;
		/* the first new packet of a run may end an idle period */
		if (!sent)
			mroce_cc_tx(qp->sq.cc_ops, &qp->sq.cc,
				    qp->sq.sb.una != qp->sq.sb.nxt,
				    mroce_now_us64(), mroce_rto_us(&qp->sq.rto),
				    (u64)qp->sq.hint_mbps * 1000000);
		if (xport && mroce_req_chunkable(sw)) {
			mroce_req_chunk_add(qp, xport, &ch, qp->sq.cur,
					    sw->sent, path);
		} else {
			if (xport)	/* in order: what was gathered first */
				mroce_req_chunk_flush(qp, xport, &ch);
			mroce_req_xmit(qp, qp->sq.cur, sw->sent, false, path);
		}
		if (qp->sq.cc.rate_bps)
			mroce_pacer_sent(&qp->sq.pacer, qp->sq.cc.rate_bps,
					 qp->sq.cc.pkt_bytes,
					 mroce_req_pkt_bytes(sw, sw->sent),
					 mroce_now_us64());
		qp->sq.psn = mroce_psn_add(qp->sq.psn, 1);
		if (++sw->sent == sw->npkts || sw->status != IB_WC_SUCCESS)
			qp->sq.cur++;	/* done sending (or failed: no more) */
		sent = true;
		if (sw->status != IB_WC_SUCCESS && mroce_sq_complete(qp)) {
			failed = true;
			break;
		}
		if (--budget == 0) {
			tasklet_schedule(&qp->sq.task);
			break;
		}
	}
	if (xport) {
		mroce_req_chunk_flush(qp, xport, &ch);
		/* a WQE behind the one that stopped the loop may have failed */
		if (ch.failed && !failed)
			failed = mroce_sq_complete(qp);
	}
	if (sent)
		mroce_timer_sent(qp);
	return failed;
}

/*
 * The responder's READ responses, from the same budget and pacer as the
 * requests (mroce_resp_read_next()).  Returns the budget left, or -1 if
 * the pacer holds everything until its timer.
 */
static int mroce_req_read_resps(struct mroce_qp *qp, int budget)
{
	struct mroce_rd_src src = {};

	while (budget > 0) {
		if (qp->sq.cc.rate_bps && mroce_req_pace_wait(qp)) {
			budget = -1;
			break;
		}
		if (!mroce_resp_read_next(qp, &src))
			break;
		/* READ responses are cut at the PMTU */
		if (qp->sq.cc.rate_bps)
			mroce_pacer_sent(&qp->sq.pacer, qp->sq.cc.rate_bps,
					 qp->sq.cc.pkt_bytes,
					 mroce_wire_pkt_bytes(qp->pmtu),
					 mroce_now_us64());
		budget--;
	}
	mroce_resp_read_end(&src);
	return budget;
}

static void mroce_req_do(struct mroce_qp *qp)
{
	int budget = MROCE_TX_BUDGET, left = MROCE_TX_BUDGET / 2;
	bool failed = false;

	spin_lock(&qp->sq.lock);
	/*
	 * READ responses first (the peer's requests wait on them), but with
	 * half the budget: a long queue of them must not starve our own
	 * requests, nor these them.  The rest goes to the requester.
	 */
	if (qp->ibqp.qp_type == IB_QPT_RC && mroce_qp_receives(qp))
		left = mroce_req_read_resps(qp, left);
	if (left == 0)		/* more may be waiting: another run */
		tasklet_schedule(&qp->sq.task);
	if (left >= 0 && mroce_qp_sends(qp)) {
		budget = MROCE_TX_BUDGET / 2 + left;
		failed = qp->ibqp.qp_type == IB_QPT_RC ?
			 mroce_req_run(qp, budget) :
			 mroce_req_run_ud(qp, budget);
	}
	spin_unlock(&qp->sq.lock);
	if (failed)
		mroce_qp_error(qp);
	else if (mroce_qp_state(qp) == IB_QPS_ERR)
		mroce_sq_flush(qp);
}

/* Pacer: the next packet is due.  Softirq (HRTIMER_MODE_REL_SOFT). */
enum hrtimer_restart mroce_req_pace_timer(struct hrtimer *t)
{
	struct mroce_qp *qp = container_of(t, struct mroce_qp, sq.pace_timer);

	mroce_req_do(qp);
	return HRTIMER_NORESTART;
}

void mroce_req_task(struct tasklet_struct *t)
{
	struct mroce_qp *qp = from_tasklet(qp, t, sq.task);

	mroce_req_do(qp);
}

/*
 * New WQEs.  From a system call (the doorbell, a kernel ULP's post_send)
 * the requester runs right here with bottom halves off, so the packets
 * leave now rather than at the next timer tick; from softirq it is a
 * tasklet.
 */
void mroce_req_kick(struct mroce_qp *qp)
{
	if (in_interrupt() || irqs_disabled()) {
		tasklet_schedule(&qp->sq.task);
		return;
	}
	local_bh_disable();
	mroce_req_do(qp);
	local_bh_enable();
}
