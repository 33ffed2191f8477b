// SPDX-License-Identifier: GPL-2.0-only
/*
 * mroce requester and completer: the send side of an RC connection.
 *
 * The requester (a tasklet, so it runs in softirq context and a pacer can
 * later schedule it from an hrtimer) copies WQEs out of the SQ ring,
 * validates them, segments them into packets within the PSN window and
 * sends them.  The completer runs from the receive path on ACK, NAK and
 * response packets: it feeds acknowledgments to the send scoreboard
 * (mroce_sb.c), resends exactly what the loss detector declares lost,
 * places READ and ATOMIC results, and completes WQEs in posting order.
 * One hrtimer covers the reorder wait, the tail probe and the RTO; each
 * resends single packets, never the whole window (no go-back-N).
 *
 * Everything here runs under qp->sq.lock.
 */

#include <linux/jhash.h>
#include <linux/jiffies.h>

#include "mroce.h"
#include "mroce_psn.h"

static bool mroce_op_is_rd_atomic(u8 op)
{
	return op == IB_UVERBS_WR_RDMA_READ ||
	       op == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP ||
	       op == IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD;
}

static bool mroce_op_is_atomic(u8 op)
{
	return op == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP ||
	       op == IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD;
}

static u8 mroce_wire_opcode(u8 op)
{
	switch (op) {
	case IB_UVERBS_WR_SEND:
		return MROCE_OP_SEND;
	case IB_UVERBS_WR_SEND_WITH_IMM:
		return MROCE_OP_SEND_IMM;
	case IB_UVERBS_WR_RDMA_WRITE:
		return MROCE_OP_WRITE;
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		return MROCE_OP_WRITE_IMM;
	case IB_UVERBS_WR_RDMA_READ:
		return MROCE_OP_READ_REQ;
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
		return MROCE_OP_ATOMIC_CMP_SWP;
	case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
		return MROCE_OP_ATOMIC_FETCH_ADD;
	default:
		return 0;
	}
}

static u8 mroce_wc_opcode(u8 op)
{
	switch (op) {
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_UVERBS_WR_RDMA_READ:
		return IB_WC_RDMA_READ;
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
		return IB_WC_COMP_SWAP;
	case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
		return IB_WC_FETCH_ADD;
	default:
		return IB_WC_SEND;
	}
}

/* Bytes one READ request (one PSN) asks for at most. */
static u32 mroce_read_chunk(const struct mroce_qp *qp)
{
	return MROCE_READ_CHUNK_SEGS * qp->pmtu;
}

/* Length of READ chunk @k of @sw. */
static u32 mroce_read_chunk_len(const struct mroce_qp *qp,
				const struct mroce_swqe *sw, u32 k)
{
	u32 c = mroce_read_chunk(qp);

	return min(c, sw->length - k * c);
}

static u32 mroce_segs(const struct mroce_qp *qp, u32 len)
{
	return max(1U, DIV_ROUND_UP(len, qp->pmtu));
}

static u64 mroce_segs_mask(u32 segs)
{
	return segs >= 64 ? ~0ULL : BIT_ULL(segs) - 1;
}

/* The oldest PSN a completion may still need: the window starts here. */
static u32 mroce_sq_win_base(const struct mroce_qp *qp)
{
	if (qp->sq.tail != qp->sq.head)
		return qp->sq.wqe[qp->sq.tail & qp->sq.ring.mask].first_psn;
	return qp->sq.sb.una;
}

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
 * May a new request packet go out?  At most cwnd (<= 256, the SACK span)
 * packets after the cumulative point; and while a READ or ATOMIC waits
 * for its answer, its PSNs must keep their slot_wqe entries, so nothing
 * 256 or more PSNs after it.  SEND/WRITE messages of any length stream
 * through the window.
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

		if (sw->sent && mroce_op_is_rd_atomic(sw->wqe.opcode))
			return mroce_psn_fwd(sw->first_psn, qp->sq.psn) <
			       MROCE_WINDOW;
	}
	return true;
}

/*
 * Copy WQE @idx out of the ring and check it.  The ring is shared with
 * the process, so only the copy is looked at from here on.
 */
static enum ib_wc_status mroce_sq_fetch(struct mroce_qp *qp, u32 idx)
{
	struct mroce_swqe *sw = &qp->sq.wqe[idx & qp->sq.ring.mask];
	const u8 *slot = mroce_ring_slot(&qp->sq.ring, idx);
	struct mroce_send_wqe *w = &sw->wqe;
	int access = 0;

	memcpy(w, slot, sizeof(*w));
	memset(sw->mr, 0, sizeof(sw->mr));
	sw->inline_data = NULL;
	sw->length = 0;
	sw->sent = 0;
	sw->read_segs = 0;
	sw->read_got = 0;
	sw->done = false;
	sw->status = IB_WC_SUCCESS;

	if (!mroce_wire_opcode(w->opcode))
		return IB_WC_LOC_QP_OP_ERR;
	if (w->flags & MROCE_WQE_INLINE) {
		if (mroce_op_is_rd_atomic(w->opcode))
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
	if (w->num_sge > qp->sq.max_sge)
		return IB_WC_LOC_LEN_ERR;
	memcpy(sw->sge, slot + sizeof(*w), w->num_sge * sizeof(sw->sge[0]));
	if (w->opcode == IB_UVERBS_WR_RDMA_READ || mroce_op_is_atomic(w->opcode))
		access = IB_ACCESS_LOCAL_WRITE;
	if (mroce_sgl_resolve(qp->mdev, qp->ibqp.pd, sw->sge, sw->mr,
			      w->num_sge, access, &sw->length))
		return IB_WC_LOC_PROT_ERR;
	if (mroce_op_is_atomic(w->opcode) && sw->length != sizeof(u64))
		return IB_WC_LOC_LEN_ERR;
	return IB_WC_SUCCESS;
}

static void mroce_swqe_release(struct mroce_swqe *sw)
{
	mroce_sgl_release(sw->mr, sw->wqe.num_sge);
}

static void mroce_swqe_gather(const struct mroce_swqe *sw, u32 off, void *dst,
			      u32 len)
{
	if (sw->inline_data)
		memcpy(dst, sw->inline_data + off, len);
	else
		mroce_sgl_copy(sw->sge, sw->mr, sw->wqe.num_sge, off, dst, len,
			       false);
}

static u64 mroce_now_us64(void)
{
	return div_u64(ktime_get_ns(), NSEC_PER_USEC);
}

/* The UDP source port of path @id in its current generation. */
static u16 mroce_path_sport(struct mroce_qp *qp, int id)
{
	return mroce_wire_sport(qp->sq.path_hash, id,
				qp->sq.paths->path[id].gen);
}

/*
 * Send (or resend) packet @k of the WQE in ring slot @idx.  A new packet
 * goes on @path (the caller picked it, with window); a resend on the path
 * that lost it unless that one is dead (@path ignored).
 */
static void mroce_req_xmit(struct mroce_qp *qp, u32 idx, u32 k, bool retx,
			   int path)
{
	struct mroce_swqe *sw = &qp->sq.wqe[idx & qp->sq.ring.mask];
	const struct mroce_send_wqe *w = &sw->wqe;
	struct mroce_pkt_info pi = {};
	struct sk_buff *skb;
	u32 off = 0, len = 0;
	u64 now_us;

	pi.opcode = mroce_wire_opcode(w->opcode);
	pi.psn = mroce_psn_add(sw->first_psn, k);
	/* each READ request of a split READ is a message of its own */
	pi.msn = (sw->msn + (w->opcode == IB_UVERBS_WR_RDMA_READ ? k : 0)) &
		 MROCE_WIRE_U24_MASK;
	if (retx)
		pi.flags |= MROCE_F_RETRANSMIT;

	switch (pi.opcode) {
	case MROCE_OP_READ_REQ: {
		u32 clen = mroce_read_chunk_len(qp, sw, k);
		u32 segs = mroce_segs(qp, clen);
		u64 missing = ~qp->sq.read_seen[pi.psn % MROCE_WINDOW] &
			      mroce_segs_mask(segs);

		pi.va = w->wr.rdma.remote_addr + (u64)k * mroce_read_chunk(qp);
		pi.rkey = w->wr.rdma.rkey;
		pi.msg_len = clen;
		if (w->num_sge) {
			pi.sink_va = sw->sge[0].addr;
			pi.sink_key = sw->sge[0].lkey;
		}
		/*
		 * A re-request asks for the first run of missing segments
		 * only: the response ending it (ACK_REQ) shows what else is
		 * missing, and nothing that arrived is sent twice.
		 */
		if (retx && missing) {
			u32 first = __ffs64(missing), last;
			u64 rest = ~(missing >> first);

			last = rest ? first + __ffs64(rest) : 64;

			pi.offset = first * qp->pmtu;
			pi.rd_length = min(clen, last * qp->pmtu) - pi.offset;
		} else {
			pi.rd_length = clen;
		}
		break;
	}
	case MROCE_OP_ATOMIC_CMP_SWP:
		pi.swap_add = w->wr.atomic.swap;
		pi.compare = w->wr.atomic.compare_add;
		pi.va = w->wr.atomic.remote_addr;
		pi.rkey = w->wr.atomic.rkey;
		break;
	case MROCE_OP_ATOMIC_FETCH_ADD:
		pi.swap_add = w->wr.atomic.compare_add;
		pi.va = w->wr.atomic.remote_addr;
		pi.rkey = w->wr.atomic.rkey;
		break;
	default:	/* SEND*, WRITE* */
		off = k * qp->pmtu;
		len = min(qp->pmtu, sw->length - off);
		pi.offset = off;
		pi.msg_len = sw->length;
		if (k == 0)
			pi.flags |= MROCE_F_FIRST;
		if (k == sw->npkts - 1) {
			pi.flags |= MROCE_F_LAST | MROCE_F_ACK_REQ;
			if ((w->flags & MROCE_WQE_SOLICITED) &&
			    pi.opcode != MROCE_OP_WRITE)
				pi.flags |= MROCE_F_SOLICITED;
		}
		if (pi.opcode == MROCE_OP_SEND ||
		    pi.opcode == MROCE_OP_SEND_IMM ||
		    pi.opcode == MROCE_OP_WRITE_IMM)
			pi.rq_seq = sw->rq_seq;
		if (pi.opcode == MROCE_OP_SEND_IMM ||
		    pi.opcode == MROCE_OP_WRITE_IMM)
			pi.imm = be32_to_cpu((__force __be32)w->imm_data);
		if (pi.opcode == MROCE_OP_WRITE ||
		    pi.opcode == MROCE_OP_WRITE_IMM) {
			pi.va = w->wr.rdma.remote_addr;
			pi.rkey = w->wr.rdma.rkey;
		}
		break;
	}

	/*
	 * A resend asks for an ACK at once: it settles what is still
	 * missing (READ and ATOMIC requests are answered by responses).  Now
	 * and then a new packet asks too, on a path the ACK cadence never
	 * echoes.
	 */
	now_us = mroce_now_us64();
	if ((mroce_wire_opinfo(pi.opcode)->flags_ok & MROCE_F_ACK_REQ) &&
	    !(pi.flags & MROCE_F_ACK_REQ) &&
	    (retx || mroce_paths_want_echo(qp->sq.paths, path, now_us,
					   qp->sq.rto.srtt_us)))
		pi.flags |= MROCE_F_ACK_REQ;
	if (retx)
		path = mroce_paths_pick_retx(qp->sq.paths,
					     mroce_sb_slot(&qp->sq.sb, pi.psn)->path);
	pi.path_id = path;
	pi.path_seq = mroce_paths_sent(qp->sq.paths, path, retx);
	pi.ts_us = (u32)now_us;	/* mroce_now_us(), one clock read */
	/*
	 * A READ or ATOMIC request the peer acknowledged whose response is
	 * incomplete is asked again; the scoreboard is done with its PSN,
	 * nothing to record.
	 */
	if (!mroce_sb_sent(&qp->sq.sb, pi.psn, pi.path_id, pi.path_seq,
			   pi.ts_us) &&
	    !(retx && mroce_op_is_rd_atomic(w->opcode))) {
		WARN_ONCE(1, "mroce: PSN %u outside the send window\n", pi.psn);
		return;
	}
	qp->sq.slot_wqe[pi.psn % MROCE_WINDOW] = idx;
	skb = mroce_pkt_alloc(qp, len);
	if (!skb) {
		mroce_count(qp->mdev, MROCE_CNT_TX_DROP, 1);
		return;		/* the loss timers resend it */
	}
	if (len)
		mroce_swqe_gather(sw, off, skb_put(skb, len), len);
	if (retx)
		mroce_qcount(qp, MROCE_CNT_RETX_PKTS, 1);
	mroce_pkt_send_path(qp, skb, &pi, mroce_path_sport(qp, path));
}

/* PROBE path @id (dead, new entropy) with path sequence number @seq. */
static void mroce_req_probe(struct mroce_qp *qp, int id, u32 seq)
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
 * Loss timer.  One soft hrtimer (softirq context, like the requester)
 * serves three deadlines, kept in ns of ktime_get_ns(), 0 when unset:
 * reo_at (RACK reorder wait), tlp_at (tail probe) and rto_at.  It is
 * programmed for the earliest; the handler sorts out which are due.
 */
static void mroce_loss_timer_arm(struct mroce_qp *qp)
{
	u64 at = U64_MAX;

	if (qp->sq.reo_at)
		at = min(at, qp->sq.reo_at);
	if (qp->sq.tlp_at)
		at = min(at, qp->sq.tlp_at);
	if (qp->sq.rto_at)
		at = min(at, qp->sq.rto_at);
	if (qp->sq.probe_at)
		at = min(at, qp->sq.probe_at);
	if (at == U64_MAX) {
		qp->sq.timer_at = 0;
		hrtimer_try_to_cancel(&qp->sq.loss_timer);
		return;
	}
	/* due later than programmed: the early expiry re-arms it */
	if (qp->sq.timer_at && qp->sq.timer_at <= at &&
	    hrtimer_is_queued(&qp->sq.loss_timer))
		return;
	qp->sq.timer_at = at;
	hrtimer_start(&qp->sq.loss_timer, ns_to_ktime(at), HRTIMER_MODE_ABS_SOFT);
}

static void mroce_rto_restart(struct mroce_qp *qp, u64 now)
{
	qp->sq.rto_at = now + (u64)mroce_rto_us(&qp->sq.rto) * NSEC_PER_USEC;
}

/* Probe timeout: max(2 SRTT, SRTT + ACK delay), with a floor. */
static void mroce_tlp_restart(struct mroce_qp *qp, u64 now)
{
	u32 srtt = qp->sq.rto.srtt_us, pto;

	if (!srtt || qp->sq.tlp_out) {
		qp->sq.tlp_at = 0;
		return;
	}
	pto = max3(2 * srtt, srtt + MROCE_ACK_DELAY_MAX_US, MROCE_TLP_MIN_US);
	qp->sq.tlp_at = now + (u64)pto * NSEC_PER_USEC;
	if (qp->sq.rto_at && qp->sq.tlp_at >= qp->sq.rto_at)
		qp->sq.tlp_at = 0;	/* the RTO comes first anyway */
}

/* New data went out: make sure something will notice if it is lost. */
static void mroce_loss_timers_sent(struct mroce_qp *qp)
{
	u64 now = ktime_get_ns();

	if (!qp->sq.rto_at)
		mroce_rto_restart(qp, now);
	mroce_tlp_restart(qp, now);
	mroce_loss_timer_arm(qp);
}

/* Dead paths wait for probes: when is the next one due (ns)? */
static void mroce_probe_restart(struct mroce_qp *qp)
{
	u64 at = mroce_paths_next_probe_us(qp->sq.paths);

	qp->sq.probe_at = at == U64_MAX ? 0 : at * NSEC_PER_USEC;
}

static void mroce_loss_timers_stop(struct mroce_qp *qp)
{
	qp->sq.reo_at = 0;
	qp->sq.tlp_at = 0;
	qp->sq.rto_at = 0;
	qp->sq.tlp_out = false;
	mroce_loss_timer_arm(qp);
}

/* Give the WQE just fetched its PSNs, MSN and rq_seq. */
static void mroce_req_assign(struct mroce_qp *qp, struct mroce_swqe *sw)
{
	u8 op = sw->wqe.opcode;

	sw->first_psn = qp->sq.psn;
	sw->msn = qp->sq.msn;
	if (op == IB_UVERBS_WR_RDMA_READ) {
		u32 c = mroce_read_chunk(qp), k;

		sw->npkts = max(1U, DIV_ROUND_UP(sw->length, c));
		for (k = 0; k < sw->npkts; k++) {
			u32 psn = mroce_psn_add(sw->first_psn, k);

			qp->sq.read_seen[psn % MROCE_WINDOW] = 0;
			sw->read_segs += mroce_segs(qp,
					mroce_read_chunk_len(qp, sw, k));
		}
		qp->sq.msn += sw->npkts;	/* one message per READ request */
	} else if (mroce_op_is_atomic(op)) {
		sw->npkts = 1;
		qp->sq.msn++;
	} else {
		sw->npkts = mroce_segs(qp, sw->length);
		qp->sq.msn++;
	}
	qp->sq.msn &= MROCE_WIRE_U24_MASK;
	if (op == IB_UVERBS_WR_SEND || op == IB_UVERBS_WR_SEND_WITH_IMM ||
	    op == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM)
		sw->rq_seq = qp->sq.rq_seq++;
	if (mroce_op_is_rd_atomic(op))
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
	if (mroce_op_is_rd_atomic(op) &&
	    qp->sq.rd_atomic >= max_t(u32, qp->max_rd_atomic, 1))
		return false;
	return true;
}

static void mroce_sq_post_cqe(struct mroce_qp *qp, struct mroce_swqe *sw,
			      enum ib_wc_status status)
{
	struct mroce_cqe cqe = {
		.wr_id = sw->wqe.wr_id,
		.status = status,
		.opcode = mroce_wc_opcode(sw->wqe.opcode),
		.byte_len = sw->length,
		.qp_num = qp->ibqp.qp_num,
	};

	mroce_cq_post(to_mcq(qp->ibqp.send_cq), &cqe, false);
}

/*
 * @sw failed with @status, unless it failed already: the first error a
 * WQE meets is the one it completes with.  Between the release of sq.lock
 * and mroce_qp_error() a NAK, an RNR NAK or the retry budget can find the
 * same WQE again.
 */
static void mroce_swqe_fail(struct mroce_swqe *sw, enum ib_wc_status status)
{
	if (sw->status == IB_WC_SUCCESS)
		sw->status = status;
}

/*
 * Complete, in posting order, every WQE that is done.  Returns true when
 * it reaches a WQE that failed: that one stays at the tail, the caller
 * moves the QP to ERR (outside the lock: state_lock nests outside sq.lock)
 * and mroce_sq_flush() completes it with its status, ahead of the flushed
 * ones.  So the consumer never sees the error completion while the QP
 * still reads RTS.
 */
static bool mroce_sq_complete(struct mroce_qp *qp)
{
	while (qp->sq.tail != qp->sq.cur) {
		struct mroce_swqe *sw = &qp->sq.wqe[qp->sq.tail &
						     qp->sq.ring.mask];
		u8 op = sw->wqe.opcode;

		if (sw->status != IB_WC_SUCCESS)
			return true;
		if (qp->ibqp.qp_type == IB_QPT_RC) {
			if (op == IB_UVERBS_WR_RDMA_READ) {
				if (sw->read_got < sw->read_segs)
					break;
			} else if (mroce_op_is_atomic(op)) {
				if (!sw->done)
					break;
			} else if (!mroce_psn_before(mroce_psn_add(sw->first_psn,
								   sw->npkts - 1),
						     qp->sq.sb.una)) {
				break;
			}
		}
		if (mroce_op_is_rd_atomic(op))
			qp->sq.rd_atomic--;
		mroce_swqe_release(sw);
		qp->sq.tail++;
		/*
		 * Free the slot before the CQE can be seen: a consumer that
		 * posts as soon as it polls must find room (sw is our copy).
		 */
		smp_store_release(&qp->sq.ring.hdr->cons, qp->sq.tail);
		if (qp->sq_sig_all || (sw->wqe.flags & MROCE_WQE_SIGNALED))
			mroce_sq_post_cqe(qp, sw, IB_WC_SUCCESS);
	}
	if (qp->sq.tail == qp->sq.head)
		mroce_loss_timers_stop(qp);
	return false;
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

	if (w->opcode != IB_UVERBS_WR_SEND &&
	    w->opcode != IB_UVERBS_WR_SEND_WITH_IMM)
		return IB_WC_LOC_QP_OP_ERR;
	if (sw->length > qp->pmtu)
		return IB_WC_LOC_LEN_ERR;
	if (mroce_ah_av(qp->mdev, w->wr.ud.ah_num, qp->ibqp.pd, &av) ||
	    !w->wr.ud.remote_qpn || w->wr.ud.remote_qpn > MROCE_WIRE_U24_MASK)
		return IB_WC_LOC_QP_OP_ERR;

	pi.opcode = w->opcode == IB_UVERBS_WR_SEND ? MROCE_OP_UD_SEND :
						     MROCE_OP_UD_SEND_IMM;
	pi.psn = qp->sq.psn;
	qp->sq.psn = mroce_psn_add(qp->sq.psn, 1);
	/* verbs: a Q_Key with the top bit set means "use the QP's" */
	pi.qkey = w->wr.ud.remote_qkey & 0x80000000 ? qp->qkey :
						       w->wr.ud.remote_qkey;
	if (pi.opcode == MROCE_OP_UD_SEND_IMM)
		pi.imm = be32_to_cpu((__force __be32)w->imm_data);
	skb = mroce_pkt_alloc(qp, sw->length);
	if (!skb)
		return IB_WC_LOC_QP_OP_ERR;
	if (sw->length)
		mroce_swqe_gather(sw, 0, skb_put(skb, sw->length), sw->length);
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

static bool mroce_req_run_ud(struct mroce_qp *qp)
{
	int budget = MROCE_TX_BUDGET;
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

/* Bytes on the wire of a full packet, IP header to payload (approx.). */
#define MROCE_PACE_PKT_BYTES(qp)	((qp)->pmtu + MROCE_HLEN_MAX + 48)

/*
 * Is the next packet early for the connection rate?  Then the pacer's
 * hrtimer runs the requester again when it is due.
 */
static bool mroce_req_pace_wait(struct mroce_qp *qp)
{
	u64 wait = mroce_pacer_next_us(&qp->sq.pacer, qp->sq.cc.rate_bps,
				       MROCE_PACE_PKT_BYTES(qp),
				       mroce_now_us64());

	if (!wait)
		return false;
	if (!hrtimer_is_queued(&qp->sq.pace_timer))
		hrtimer_start(&qp->sq.pace_timer, ns_to_ktime(wait * NSEC_PER_USEC),
			      HRTIMER_MODE_REL_SOFT);
	return true;
}

/* The requester proper.  Under sq.lock, softirq. */
static bool mroce_req_run(struct mroce_qp *qp)
{
	bool failed = false, empty, sent = false;
	int budget = MROCE_TX_BUDGET, path;
	u32 prod;

	mroce_sq_busy(qp);
	while (!qp->sq.rnr_wait) {
		struct mroce_swqe *sw;

		if (qp->sq.cur == qp->sq.head) {
			prod = mroce_sq_poll(qp, &empty);
			if (empty)
				break;
			if (prod - qp->sq.tail > qp->sq.ring.num_slots) {
				/* the process overran its ring */
				sw = &qp->sq.wqe[qp->sq.head & qp->sq.ring.mask];
				sw->status = IB_WC_LOC_QP_OP_ERR;
				failed = true;
				break;
			}
			if (!mroce_req_may_start(qp, qp->sq.head))
				break;
			sw = &qp->sq.wqe[qp->sq.head & qp->sq.ring.mask];
			sw->status = mroce_sq_fetch(qp, qp->sq.head);
			/* the verbs retry budget runs only while work is out */
			if (qp->sq.tail == qp->sq.head)
				mroce_sq_retry_restart(qp);
			qp->sq.head++;
			if (sw->status != IB_WC_SUCCESS) {
				/* completes in order, then the QP fails */
				sw->npkts = 0;
				qp->sq.cur++;
				failed = mroce_sq_complete(qp);
				break;
			}
			mroce_req_assign(qp, sw);
		}

		sw = &qp->sq.wqe[qp->sq.cur & qp->sq.ring.mask];
		if (!mroce_req_window_open(qp))
			break;
		/* paced: wait for the hrtimer when the next packet is not due */
		if (qp->sq.cc.rate_bps && mroce_req_pace_wait(qp))
			break;
		/* an active path with room in its window, by weight */
		path = mroce_paths_pick(qp->sq.paths);
		if (path < 0 && qp->sq.paths->windowed) {
			mroce_req_paths_resync(qp);
			path = mroce_paths_pick(qp->sq.paths);
		}
		if (path < 0)
			break;
		/* the first new packet of a run may end an idle period */
		if (!sent)
			mroce_cc_tx(qp->sq.cc_ops, &qp->sq.cc,
				    qp->sq.sb.una != qp->sq.sb.nxt,
				    mroce_now_us64(), mroce_rto_us(&qp->sq.rto),
				    (u64)qp->sq.hint_mbps * 1000000);
		mroce_req_xmit(qp, qp->sq.cur, sw->sent, false, path);
		if (qp->sq.cc.rate_bps)
			mroce_pacer_sent(&qp->sq.pacer, qp->sq.cc.rate_bps,
					 MROCE_PACE_PKT_BYTES(qp),
					 mroce_now_us64());
		qp->sq.psn = mroce_psn_add(qp->sq.psn, 1);
		if (++sw->sent == sw->npkts)
			qp->sq.cur++;
		sent = true;
		if (--budget == 0) {
			tasklet_schedule(&qp->sq.task);
			break;
		}
	}
	if (sent)
		mroce_loss_timers_sent(qp);
	return failed;
}

static void mroce_req_do(struct mroce_qp *qp)
{
	bool failed = false;

	spin_lock(&qp->sq.lock);
	if (mroce_qp_sends(qp))
		failed = qp->ibqp.qp_type == IB_QPT_RC ? mroce_req_run(qp) :
							 mroce_req_run_ud(qp);
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

/* Which WQE sent request PSN @psn?  NULL if none outstanding did. */
static struct mroce_swqe *mroce_sq_find(struct mroce_qp *qp, u32 psn, u32 *k)
{
	u32 idx = qp->sq.slot_wqe[psn % MROCE_WINDOW];
	struct mroce_swqe *sw;

	if (idx - qp->sq.tail >= qp->sq.head - qp->sq.tail)
		return NULL;
	sw = &qp->sq.wqe[idx & qp->sq.ring.mask];
	*k = mroce_psn_fwd(sw->first_psn, psn);
	if (*k >= sw->sent)
		return NULL;
	return sw;
}

/* Does request PSN @k of @sw still need to reach the peer? */
static bool mroce_req_missing(struct mroce_qp *qp, struct mroce_swqe *sw,
			      u32 k)
{
	u32 psn = mroce_psn_add(sw->first_psn, k);
	u8 op = sw->wqe.opcode;

	if (op == IB_UVERBS_WR_RDMA_READ) {
		u32 segs = mroce_segs(qp, mroce_read_chunk_len(qp, sw, k));

		return qp->sq.read_seen[psn % MROCE_WINDOW] !=
		       mroce_segs_mask(segs);
	}
	if (mroce_op_is_atomic(op))
		return !sw->done;
	return !mroce_psn_before(psn, qp->sq.sb.una) &&
	       !(mroce_sb_slot(&qp->sq.sb, psn)->flags & MROCE_SB_SACKED);
}

/*
 * Resend, oldest first and at most @max of them, the request packets from
 * @from_psn on that the peer has neither acknowledged nor selectively
 * acknowledged (READs: whose responses are incomplete).  Never the window.
 */
static void mroce_req_retransmit(struct mroce_qp *qp, u32 from_psn, u32 max)
{
	u32 idx, k;

	for (idx = qp->sq.tail; idx != qp->sq.head; idx++) {
		struct mroce_swqe *sw = &qp->sq.wqe[idx & qp->sq.ring.mask];

		for (k = 0; k < sw->sent; k++) {
			if (mroce_psn_before(mroce_psn_add(sw->first_psn, k),
					     from_psn) ||
			    !mroce_req_missing(qp, sw, k))
				continue;
			if (!max)
				return;
			mroce_req_xmit(qp, idx, k, true, -1);
			max--;
		}
	}
}

/* What the scoreboard's callback needs: one clock read per ACK. */
struct mroce_sb_ctx {
	struct mroce_qp *qp;
	u64 now_us;
};

/* The scoreboard reports a PSN delivered or declared lost. */
static void mroce_sb_event(void *ctx, u32 psn, const struct mroce_sb_slot *s,
			   enum mroce_sb_event ev)
{
	struct mroce_sb_ctx *c = ctx;
	struct mroce_qp *qp = c->qp;
	u64 now = c->now_us;

	switch (ev) {
	case MROCE_SB_DELIVERED:
		/* a lost packet not resent yet is no longer in flight */
		mroce_paths_delivered(qp->sq.paths, s->path, s->path_seq,
				      !(s->flags & MROCE_SB_LOST), now);
		return;
	case MROCE_SB_LOST_PATH_SEQ:
		mroce_qcount(qp, MROCE_CNT_LOSS_PATH_SEQ, 1);
		break;
	case MROCE_SB_LOST_RACK:
		mroce_qcount(qp, MROCE_CNT_LOSS_RACK, 1);
		break;
	}
	/* the loss is charged to its path; enough of them and it dies */
	if (mroce_paths_lost(qp->sq.paths, s->path, now)) {
		mroce_qcount(qp, MROCE_CNT_PATH_DEAD, 1);
		mroce_probe_restart(qp);
	}
}

/*
 * Run the loss detector and resend, once each, the packets it declares
 * lost; never the window.  Arms the reorder wait for packets that may
 * yet turn out lost.
 */
static void mroce_req_recover(struct mroce_qp *qp, u64 now)
{
	const struct mroce_cc_ops *cc = qp->sq.cc_ops;
	struct mroce_sb *sb = &qp->sq.sb;
	struct mroce_sb_ctx ctx = { qp, div_u64(now, NSEC_PER_USEC) };
	struct mroce_sb_clock c = {
		.now_us = (u32)ctx.now_us,
		.srtt_us = qp->sq.rto.srtt_us,
		.rttvar_us = qp->sq.rto.rttvar_us,
		.min_rtt_us = qp->sq.min_rtt_us,
		.spread_us = mroce_paths_srtt_spread_us(qp->sq.paths),
	};
	u32 lost, wait, psn, k;

	lost = mroce_sb_detect(sb, &c, mroce_sb_event, &ctx, &wait);
	qp->sq.reo_at = wait == U32_MAX ? 0 : now + (u64)wait * NSEC_PER_USEC;
	if (!lost)
		return;
	if (cc->on_loss)
		cc->on_loss(&qp->sq.cc, lost, false, div_u64(now, NSEC_PER_USEC),
			    0);
	psn = sb->una;
	while (mroce_sb_next_lost(sb, psn, &psn)) {
		struct mroce_swqe *sw = mroce_sq_find(qp, psn, &k);

		if (!sw || !mroce_req_missing(qp, sw, k)) {
			/* a READ/ATOMIC whose response settled it meanwhile */
			mroce_sb_slot(sb, psn)->flags &= ~MROCE_SB_LOST;
			continue;
		}
		mroce_qcount(qp, MROCE_CNT_RETX_SACK, 1);
		mroce_req_xmit(qp, qp->sq.slot_wqe[psn % MROCE_WINDOW], k, true, -1);
	}
}

/*
 * Tail probe: nothing was heard for a PTO although packets are out, so
 * the last ones (or their ACKs) may be lost with nothing behind them to
 * reveal it.  Resend the newest undelivered packet with ACK_REQ; its ACK
 * carries the bitmap that lets the detector find the rest.
 */
static void mroce_req_tlp(struct mroce_qp *qp)
{
	u32 idx = qp->sq.head, k;

	/* the newest request packet still missing, READ/ATOMIC answers too */
	while (idx != qp->sq.tail) {
		struct mroce_swqe *sw = &qp->sq.wqe[--idx & qp->sq.ring.mask];

		for (k = sw->sent; k-- > 0;) {
			if (!mroce_req_missing(qp, sw, k))
				continue;
			mroce_qcount(qp, MROCE_CNT_TLP_PROBES, 1);
			qp->sq.tlp_out = true;
			mroce_req_xmit(qp, idx, k, true, -1);
			return;
		}
	}
}

/* The oldest request PSN still missing, READ/ATOMIC answers included. */
static bool mroce_req_oldest_missing(struct mroce_qp *qp, u32 *psn)
{
	u32 idx, k;

	for (idx = qp->sq.tail; idx != qp->sq.head; idx++) {
		struct mroce_swqe *sw = &qp->sq.wqe[idx & qp->sq.ring.mask];

		for (k = 0; k < sw->sent; k++) {
			if (mroce_req_missing(qp, sw, k)) {
				*psn = mroce_psn_add(sw->first_psn, k);
				return true;
			}
		}
	}
	return false;
}

/*
 * The packet an RTO resends: the oldest request PSN still missing (READ
 * and ATOMIC answers included).  If every packet after the cumulative
 * point is SACKed, the ACK that would advance it was lost and nothing is
 * left to trigger another: then the one at the cumulative point (SACKs
 * are advisory; its duplicate makes the peer ACK at once).
 */
static bool mroce_req_rto_target(struct mroce_qp *qp, u32 *psn)
{
	if (mroce_req_oldest_missing(qp, psn))
		return true;
	*psn = qp->sq.sb.una;
	return mroce_psn_before(qp->sq.sb.una, qp->sq.sb.nxt);
}

/* Where a connection that gives up stood: the operator's loss point. */
static void mroce_req_report_stall(struct mroce_qp *qp)
{
	const struct mroce_swqe *sw = &qp->sq.wqe[qp->sq.tail & qp->sq.ring.mask];
	u32 psn = 0;
	bool missing = mroce_req_oldest_missing(qp, &psn);
	const struct mroce_sb_slot *s = mroce_sb_slot(&qp->sq.sb, psn);

	dev_info_ratelimited(&qp->mdev->ib_dev.dev,
			     "qp %u: retry budget spent: una %u nxt %u; oldest WQE op %u psn %u+%u sent %u; %s psn %u (path %u, %s, flags %x, resent %u); paths active %u/%u; rto %u us; rnr_wait %d\n",
			     qp->ibqp.qp_num, qp->sq.sb.una, qp->sq.sb.nxt,
			     sw->wqe.opcode, sw->first_psn, sw->npkts, sw->sent,
			     missing ? "oldest missing" : "nothing missing,",
			     psn, s->path,
			     mroce_path_state_name(&qp->sq.paths->path[s->path %
							qp->sq.paths->n]),
			     s->flags, s->nretx,
			     mroce_paths_nr_active(qp->sq.paths),
			     qp->sq.paths->n, mroce_rto_us(&qp->sq.rto),
			     qp->sq.rnr_wait);
}

/*
 * RTO: no progress for a whole RTO.  Resend only the oldest missing
 * request (READs: re-request); everything else waits for the ACK that
 * answers it.  Returns true if the verbs retry budget is spent and the QP
 * must fail.
 */
static bool mroce_req_rto(struct mroce_qp *qp, u64 now)
{
	const struct mroce_cc_ops *cc = qp->sq.cc_ops;
	u32 psn, k;

	/*
	 * verbs: give up after timeout x (retry_cnt + 1) and retry_cnt + 1
	 * RTOs without progress
	 */
	qp->sq.rtos_since_progress++;
	if (qp->timeout) {
		u64 elapsed = jiffies64_to_nsecs(get_jiffies_64() -
						 qp->sq.last_progress);

		if (mroce_verbs_retry_spent(elapsed, qp->sq.rtos_since_progress,
					    qp->timeout, qp->retry_cnt)) {
			mroce_req_report_stall(qp);
			mroce_swqe_fail(&qp->sq.wqe[qp->sq.tail &
						    qp->sq.ring.mask],
					IB_WC_RETRY_EXC_ERR);
			if (qp->sq.cur == qp->sq.tail)
				qp->sq.cur++;
			return mroce_sq_complete(qp);
		}
	}
	mroce_qcount(qp, MROCE_CNT_RTO_EVENTS, 1);
	if (cc->on_loss)
		cc->on_loss(&qp->sq.cc, 1, true, div_u64(now, NSEC_PER_USEC), 0);
	/*
	 * The path that lost it (or its answer: a READ/ATOMIC response comes
	 * back with the request's entropy) is dead: new entropy, probed
	 * before reuse; the resend avoids it.  Its ACK tells the detector
	 * about everything else.
	 */
	if (mroce_req_rto_target(qp, &psn)) {
		struct mroce_swqe *sw = mroce_sq_find(qp, psn, &k);

		if (mroce_paths_kill(qp->sq.paths,
				     mroce_sb_slot(&qp->sq.sb, psn)->path,
				     div_u64(now, NSEC_PER_USEC))) {
			mroce_qcount(qp, MROCE_CNT_PATH_DEAD, 1);
			mroce_probe_restart(qp);
		}
		if (sw)
			mroce_req_xmit(qp, qp->sq.slot_wqe[psn % MROCE_WINDOW],
				       k, true, -1);
	}
	mroce_rto_expired(&qp->sq.rto);
	mroce_rto_restart(qp, now);
	return false;
}

enum hrtimer_restart mroce_req_loss_timer(struct hrtimer *t)
{
	struct mroce_qp *qp = container_of(t, struct mroce_qp, sq.loss_timer);
	bool failed = false;
	u64 now;

	spin_lock(&qp->sq.lock);
	qp->sq.timer_at = 0;
	if (!mroce_qp_sends(qp))
		goto out;
	now = ktime_get_ns();
	/* probes run while the SQ is idle too: a path revives meanwhile */
	if (qp->sq.probe_at && now >= qp->sq.probe_at) {
		u32 seq;
		int id;

		while ((id = mroce_paths_probe_due(qp->sq.paths,
						   div_u64(now, NSEC_PER_USEC),
						   qp->sq.rto.srtt_us, &seq)) >= 0)
			mroce_req_probe(qp, id, seq);
		mroce_probe_restart(qp);
	}
	if (qp->sq.tail == qp->sq.head) {
		mroce_loss_timers_stop(qp);
		goto out;
	}
	if (qp->sq.reo_at && now >= qp->sq.reo_at) {
		qp->sq.reo_at = 0;
		mroce_req_recover(qp, now);
	}
	if (qp->sq.rnr_wait) {
		/* the RNR timer owns the connection; the RTO waits */
		if (qp->sq.rto_at && now >= qp->sq.rto_at)
			mroce_rto_restart(qp, now);
		qp->sq.tlp_at = 0;
	} else if (qp->sq.rto_at && now >= qp->sq.rto_at) {
		qp->sq.tlp_at = 0;
		failed = mroce_req_rto(qp, now);
	} else if (qp->sq.tlp_at && now >= qp->sq.tlp_at) {
		qp->sq.tlp_at = 0;
		mroce_req_tlp(qp);
	}
	if (!failed)
		mroce_loss_timer_arm(qp);
out:
	spin_unlock(&qp->sq.lock);
	if (failed)
		mroce_qp_error(qp);
	return HRTIMER_NORESTART;
}

void mroce_req_rnr(struct timer_list *t)
{
	struct mroce_qp *qp = from_timer(qp, t, sq.rnr_timer);

	spin_lock_bh(&qp->sq.lock);
	if (qp->sq.rnr_wait && mroce_qp_state(qp) == IB_QPS_RTS) {
		qp->sq.rnr_wait = false;
		mroce_req_retransmit(qp, mroce_sq_win_base(qp), U32_MAX);
		mroce_loss_timers_sent(qp);
	}
	spin_unlock_bh(&qp->sq.lock);
	mroce_req_kick(qp);
}

/* The peer made progress: the verbs retry clock restarts. */
static void mroce_sq_progress(struct mroce_qp *qp, u64 now)
{
	mroce_sq_retry_restart(qp);
	mroce_rto_progress(&qp->sq.rto);
	qp->sq.rnr_left = qp->rnr_retry;
	mroce_rto_restart(qp, now);
}

/* Everything before @psn has arrived at the peer (a READ/ATOMIC answer). */
static void mroce_sq_ack_to(struct mroce_qp *qp, u32 psn)
{
	u64 now = ktime_get_ns();
	struct mroce_sb_ctx ctx = { qp, div_u64(now, NSEC_PER_USEC) };

	if (mroce_sb_ack(&qp->sq.sb, psn, NULL, mroce_sb_event, &ctx) > 0) {
		mroce_sq_progress(qp, now);
		mroce_loss_timer_arm(qp);
	}
}

/*
 * The connection's minimum RTT, over the last MROCE_MIN_RTT_WIN_US: a
 * lifetime minimum would hold a route's RTT after the route changed.
 * Expired, it restarts from the current sample, as BBR's does.
 */
static void mroce_min_rtt_update(struct mroce_qp *qp, u32 rtt, u64 now_us)
{
	if (!qp->sq.min_rtt_us || rtt <= qp->sq.min_rtt_us ||
	    now_us - qp->sq.min_rtt_at > MROCE_MIN_RTT_WIN_US) {
		qp->sq.min_rtt_us = max(rtt, 1U);
		qp->sq.min_rtt_at = now_us;
	}
}

static void mroce_comp_ack(struct mroce_qp *qp, const struct mroce_pkt_info *pi)
{
	const struct mroce_cc_ops *cc = qp->sq.cc_ops;
	struct mroce_sb *sb = &qp->sq.sb;
	struct mroce_cc_ack ack = {};
	u64 now = ktime_get_ns();
	struct mroce_sb_ctx ctx = { qp, div_u64(now, NSEC_PER_USEC) };
	int delivered;

	if (mroce_psn_after(pi->psn, qp->sq.psn)) {
		mroce_count(qp->mdev, MROCE_CNT_RX_DROP_RESP_UNEXPECTED, 1);
		return;
	}
	/*
	 * The peer got a PSN we resent twice: both copies arrived, the
	 * resend was spurious (reordering, not loss); the detector becomes
	 * more patient.
	 */
	if ((pi->echo_flags & MROCE_ECHO_DUP) &&
	    mroce_sb_dup_echo(sb, pi->echo_psn))
		mroce_qcount(qp, MROCE_CNT_RETX_SPURIOUS, 1);
	/* the echoed timestamp is this transmission's: always a valid RTT */
	if (pi->rx_count) {
		u32 rtt = (u32)ctx.now_us - pi->echo_ts - pi->ack_delay_us;

		if (rtt < USEC_PER_SEC) {	/* else a stale or bogus echo */
			mroce_rto_sample(&qp->sq.rto, rtt);
			mroce_min_rtt_update(qp, rtt, ctx.now_us);
			ack.rtt_us = rtt;
		}
	}
	if (pi->rx_count &&
	    mroce_paths_probe_acked(qp->sq.paths, pi->echo_path_id,
				    pi->echo_path_seq, ctx.now_us)) {
		mroce_qcount(qp, MROCE_CNT_PATH_REVIVED, 1);
		mroce_probe_restart(qp);
	}
	/* the echo names exactly the copy that arrived */
	if (pi->rx_count && pi->opcode == MROCE_OP_ACK)
		mroce_sb_echo(sb, pi->echo_path_id, pi->echo_path_seq,
			      pi->echo_ts);
	delivered = mroce_sb_ack(sb, pi->psn, pi->sack, mroce_sb_event, &ctx);
	if (pi->rx_count)
		mroce_paths_echo(qp->sq.paths, pi->echo_path_id, ack.rtt_us,
				 pi->echo_flags & MROCE_ECHO_CE, ctx.now_us);
	if (delivered > 0)
		mroce_sq_progress(qp, now);
	qp->sq.tlp_out = false;
	if (mroce_psn_before(sb->una, sb->nxt)) {
		mroce_req_recover(qp, now);
		mroce_tlp_restart(qp, now);
	} else {
		qp->sq.reo_at = 0;
		qp->sq.tlp_at = 0;
	}
	mroce_loss_timer_arm(qp);
	/* counted and shown whichever algorithm runs, "none" included */
	if (pi->rate_hint_mbps) {
		mroce_qcount(qp, MROCE_CNT_RATE_HINTS_RCVD, 1);
		qp->sq.hint_mbps = pi->rate_hint_mbps;
	}
	if (cc->on_ack) {
		ack.now_us = ctx.now_us;
		ack.path = pi->echo_path_id;
		ack.acked_pkts = max(delivered, 0);
		ack.inflight_pkts = mroce_sb_outstanding(sb);
		ack.rx_count = pi->rx_count;
		ack.ce_count = pi->ce_count;
		ack.echo_ce = pi->echo_flags & MROCE_ECHO_CE;
		ack.srtt_us = qp->sq.rto.srtt_us;
		/*
		 * The delay signal, with a target fit for a software host
		 * (module parameter qdelay_target_us, 0: off)
		 */
		ack.qdelay_target_us = READ_ONCE(mroce_qdelay_target_us);
		ack.min_rtt_us = ack.qdelay_target_us ? qp->sq.min_rtt_us : 0;
		/*
		 * The window covers the RTT the delay signal tolerates: on
		 * a loaded software host the RTT is far above the idle
		 * minimum without any network queue.
		 */
		ack.base_rtt_us = qp->sq.min_rtt_us ?
				  qp->sq.min_rtt_us + ack.qdelay_target_us : 0;
		ack.rate_hint_bps = (u64)pi->rate_hint_mbps * 1000000;
		cc->on_ack(&qp->sq.cc, &ack);
	}
}

static bool mroce_comp_nak(struct mroce_qp *qp, const struct mroce_pkt_info *pi)
{
	struct mroce_swqe *sw;
	u32 k;

	mroce_comp_ack(qp, pi);
	switch (pi->nak_code) {
	case MROCE_NAK_RNR:
		mroce_qcount(qp, MROCE_CNT_RNR_NAKS_RCVD, 1);
		/* the responder answers: RNR retries are counted separately */
		mroce_sq_retry_restart(qp);
		sw = mroce_sq_find(qp, pi->nak_psn, &k);
		if (!sw)
			return false;
		if (qp->rnr_retry != 7) {	/* 7: retry forever */
			if (!qp->sq.rnr_left) {
				mroce_swqe_fail(sw, IB_WC_RNR_RETRY_EXC_ERR);
				return mroce_sq_complete(qp);
			}
			qp->sq.rnr_left--;
		}
		qp->sq.rnr_wait = true;
		mod_timer(&qp->sq.rnr_timer, jiffies +
			  usecs_to_jiffies(mroce_wire_rnr_timer_us(pi->rnr_timer)));
		return false;
	case MROCE_NAK_PSN_SEQ_ERR:
		mroce_req_retransmit(qp, pi->nak_psn, U32_MAX);
		return false;
	default:
		sw = mroce_sq_find(qp, pi->nak_psn, &k);
		if (!sw)
			return false;
		mroce_swqe_fail(sw, pi->nak_code == MROCE_NAK_REM_ACCESS ?
				    IB_WC_REM_ACCESS_ERR :
				pi->nak_code == MROCE_NAK_INV_REQ ?
				    IB_WC_REM_INV_REQ_ERR : IB_WC_REM_OP_ERR);
		return mroce_sq_complete(qp);
	}
}

static void mroce_comp_read_resp(struct mroce_qp *qp,
				 const struct mroce_pkt_info *pi,
				 struct sk_buff *skb)
{
	struct mroce_swqe *sw;
	u32 k, clen, seg;
	u64 *seen;

	sw = mroce_sq_find(qp, pi->psn, &k);
	if (!sw || sw->wqe.opcode != IB_UVERBS_WR_RDMA_READ ||
	    ((sw->msn + k) & MROCE_WIRE_U24_MASK) != pi->msn)
		goto bad;
	clen = mroce_read_chunk_len(qp, sw, k);
	if (pi->msg_len != clen || pi->offset % qp->pmtu ||
	    pi->payload_len != min(qp->pmtu, clen - pi->offset))
		goto bad;
	seg = pi->offset / qp->pmtu;
	seen = &qp->sq.read_seen[pi->psn % MROCE_WINDOW];
	if (*seen & BIT_ULL(seg)) {
		mroce_qcount(qp, MROCE_CNT_RX_DUP_PKTS, 1);
		return;
	}
	if (pi->payload_len &&
	    mroce_sgl_copy_skb(sw->sge, sw->mr, sw->wqe.num_sge,
			       k * mroce_read_chunk(qp) + pi->offset, skb,
			       pi->hdr_len, pi->payload_len))
		goto bad;
	*seen |= BIT_ULL(seg);
	sw->read_got++;
	/* new READ data is progress too */
	mroce_sq_progress(qp, ktime_get_ns());
	mroce_loss_timer_arm(qp);
	/*
	 * The response that ends a requested range arrived (responses of a
	 * range travel one path, in order) but the READ request still has
	 * holes: those responses were lost; ask for them again now rather
	 * than at the RTO.
	 */
	if ((pi->flags & MROCE_F_ACK_REQ) &&
	    *seen != mroce_segs_mask(mroce_segs(qp, clen)))
		mroce_req_xmit(qp, qp->sq.slot_wqe[pi->psn % MROCE_WINDOW], k,
			       true, -1);
	/* a response means the request, and all before it, arrived */
	mroce_sq_ack_to(qp, mroce_psn_add(pi->psn, 1));
	return;
bad:
	mroce_count(qp->mdev, MROCE_CNT_RX_DROP_RESP_UNEXPECTED, 1);
}

static void mroce_comp_atomic_resp(struct mroce_qp *qp,
				   const struct mroce_pkt_info *pi)
{
	struct mroce_swqe *sw;
	u32 k;

	sw = mroce_sq_find(qp, pi->psn, &k);
	if (!sw || !mroce_op_is_atomic(sw->wqe.opcode) || sw->msn != pi->msn) {
		mroce_count(qp->mdev, MROCE_CNT_RX_DROP_RESP_UNEXPECTED, 1);
		return;
	}
	if (sw->done) {
		mroce_qcount(qp, MROCE_CNT_RX_DUP_PKTS, 1);
		return;
	}
	sw->atomic_orig = pi->orig;
	mroce_sgl_copy(sw->sge, sw->mr, sw->wqe.num_sge, 0, &sw->atomic_orig,
		       sizeof(u64), true);
	sw->done = true;
	mroce_sq_progress(qp, ktime_get_ns());
	mroce_sq_ack_to(qp, mroce_psn_add(pi->psn, 1));
}

/* ACK, NAK, READ and ATOMIC responses for this QP's requests.  Softirq. */
void mroce_comp_rcv(struct mroce_qp *qp, const struct mroce_pkt_info *pi,
		    struct sk_buff *skb)
{
	bool failed = false;

	spin_lock(&qp->sq.lock);
	if (!mroce_qp_sends(qp)) {
		mroce_count(qp->mdev, MROCE_CNT_RX_DROP_QP_STATE, 1);
		goto out;
	}
	switch (pi->opcode) {
	case MROCE_OP_ACK:
		mroce_comp_ack(qp, pi);
		break;
	case MROCE_OP_NAK:
		failed = mroce_comp_nak(qp, pi);
		break;
	case MROCE_OP_READ_RESP:
		mroce_comp_read_resp(qp, pi, skb);
		break;
	case MROCE_OP_ATOMIC_RESP:
		mroce_comp_atomic_resp(qp, pi);
		break;
	default:
		break;
	}
	if (!failed)
		failed = mroce_sq_complete(qp);
	if (!failed && qp->sq.cur != READ_ONCE(qp->sq.ring.hdr->prod))
		tasklet_schedule(&qp->sq.task);
out:
	spin_unlock(&qp->sq.lock);
	if (failed)
		mroce_qp_error(qp);
}

/*
 * The QP is in ERR: complete every WQE still in the SQ, in order.  The
 * first one keeps its status if it failed (mroce_sq_complete() left it at
 * the tail); the rest are flushed, whatever happened to them: verbs report
 * one error, the one that failed the QP.  A later WQE can have failed too
 * (a local error found when it was fetched, a NAK for it before the QP
 * read ERR), and the first one can be a WQE that did not fail when the
 * consumer moved the QP to ERR.
 */
void mroce_sq_flush(struct mroce_qp *qp)
{
	struct mroce_ring_hdr *hdr = qp->sq.ring.hdr;
	unsigned long flags;
	bool first = true;
	u32 prod;

	spin_lock_irqsave(&qp->sq.lock, flags);
	/*
	 * Ask for the doorbell before reading prod, as mroce_sq_poll() does:
	 * a WQE published from now on is either seen below or announced by
	 * a doorbell, which flushes it (mroce_req_do()).  The flag stays
	 * set: the requester does not run in ERR.
	 */
	WRITE_ONCE(hdr->flags, hdr->flags | MROCE_RING_F_NEED_KICK);
	/* flag store before the prod load; the producer orders them the
	 * other way round
	 */
	smp_mb();
	mroce_loss_timers_stop(qp);
	qp->sq.rnr_wait = false;
	/*
	 * Each slot is freed before its CQE can be seen, as in
	 * mroce_sq_complete(): a consumer that posts as soon as it polls a
	 * flush completion must find room, not wait for the end of a flush
	 * of thousands.  What the CQE needs is in our copy (sw).  A WQE
	 * posted into a freed slot lies beyond the prod read below; its
	 * doorbell (NEED_KICK is set) flushes it after this flush.
	 */
	/* fetched WQEs */
	while (qp->sq.tail != qp->sq.head) {
		struct mroce_swqe *sw = &qp->sq.wqe[qp->sq.tail &
						     qp->sq.ring.mask];
		enum ib_wc_status st = IB_WC_WR_FLUSH_ERR;

		if (first && sw->status != IB_WC_SUCCESS)
			st = sw->status;
		first = false;
		sw->status = IB_WC_WR_FLUSH_ERR;
		mroce_swqe_release(sw);
		qp->sq.tail++;
		/* free the slot before its CQE can be seen */
		smp_store_release(&hdr->cons, qp->sq.tail);
		mroce_sq_post_cqe(qp, sw, st);
	}
	qp->sq.rd_atomic = 0;
	/* posted, never fetched: only wr_id and opcode are read */
	/* pairs with the producer's release of prod */
	prod = smp_load_acquire(&hdr->prod);
	if (prod - qp->sq.tail > qp->sq.ring.num_slots)
		prod = qp->sq.tail + qp->sq.ring.num_slots;
	while (qp->sq.tail != prod) {
		struct mroce_swqe *sw = &qp->sq.wqe[qp->sq.tail &
						     qp->sq.ring.mask];
		const struct mroce_send_wqe *w =
			mroce_ring_slot(&qp->sq.ring, qp->sq.tail);

		sw->wqe.wr_id = READ_ONCE(w->wr_id);
		sw->wqe.opcode = READ_ONCE(w->opcode);
		sw->length = 0;
		qp->sq.tail++;
		/* the slot's loads above before the producer may reuse it */
		smp_store_release(&hdr->cons, qp->sq.tail);
		mroce_sq_post_cqe(qp, sw, IB_WC_WR_FLUSH_ERR);
	}
	qp->sq.head = qp->sq.tail;
	qp->sq.cur = qp->sq.tail;
	spin_unlock_irqrestore(&qp->sq.lock, flags);
}

/* Destroy or reset: drop the references fetched WQEs hold, no CQEs. */
void mroce_sq_release(struct mroce_qp *qp)
{
	u32 idx;

	if (!qp->sq.wqe)
		return;
	for (idx = qp->sq.tail; idx != qp->sq.head; idx++)
		mroce_swqe_release(&qp->sq.wqe[idx & qp->sq.ring.mask]);
	qp->sq.tail = qp->sq.head;
	qp->sq.cur = qp->sq.head;
}
