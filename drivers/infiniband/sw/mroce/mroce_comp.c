// SPDX-License-Identifier: GPL-2.0-only
/*
 * mroce completer: what the peer says about this QP's requests.
 *
 * Runs from the receive path on ACK, NAK and READ/ATOMIC response
 * packets: feeds acknowledgments to the send scoreboard (mroce_sb.c) and
 * RTT samples to the RTO estimator, the path table and the congestion
 * control, places READ and ATOMIC results, and completes WQEs in posting
 * order.  What the scoreboard then declares lost goes to the loss
 * recovery (mroce_recovery.c).  Also the flush of a QP in ERR.
 *
 * Everything here runs under qp->sq.lock.
 */

#include <linux/jiffies.h>

#include "mroce_sq.h"
#include "mroce_trace.h"

static void mroce_sq_post_cqe(struct mroce_qp *qp, struct mroce_swqe *sw,
			      enum ib_wc_status status)
{
	struct mroce_cqe cqe = {
		.wr_id = sw->wqe.wr_id,
		.status = status,
		.opcode = mroce_wr_wc_opcode(sw->wqe.opcode),
		.byte_len = sw->length,
		.qp_num = qp->ibqp.qp_num,
	};

	if (!mroce_cq_post(to_mcq(qp->ibqp.send_cq), &cqe, false))
		mroce_qp_fail_async(qp);	/* CQ overflow */
}

/*
 * @sw failed with @status, unless it failed already: the first error a
 * WQE meets is the one it completes with.  Between the release of sq.lock
 * and mroce_qp_error() a NAK, an RNR NAK or the retry budget can find the
 * same WQE again.
 */
void mroce_swqe_fail(struct mroce_swqe *sw, enum ib_wc_status status)
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
bool mroce_sq_complete(struct mroce_qp *qp)
{
	u64 now_ns = 0;

	while (qp->sq.tail != qp->sq.cur) {
		struct mroce_swqe *sw = &qp->sq.wqe[qp->sq.tail &
						     qp->sq.ring.mask];

		if (sw->status != IB_WC_SUCCESS)
			return true;
		if (qp->ibqp.qp_type == IB_QPT_RC) {
			if (sw->op->mask & MROCE_WR_READ) {
				if (sw->read_got < sw->read_segs)
					break;
			} else if (sw->op->mask & MROCE_WR_ATOMIC) {
				if (!sw->done)
					break;
			} else if (sw->op->mask & MROCE_WR_LOCAL) {
				/* executed when fetched: nothing to wait for */
			} else if (!mroce_psn_before(mroce_psn_add(sw->first_psn,
								   sw->npkts - 1),
						     qp->sq.sb.una)) {
				break;
			}
		}
		if (sw->op->mask & MROCE_WR_RD_ATOMIC)
			qp->sq.rd_atomic--;
		mroce_sq_retire(qp, sw);
		mroce_sq_lat_record(qp, sw, &now_ns);
		if (qp->sq_sig_all || (sw->wqe.flags & MROCE_WQE_SIGNALED))
			mroce_sq_post_cqe(qp, sw, IB_WC_SUCCESS);
	}
	if (qp->sq.tail == qp->sq.head)
		mroce_timer_stop(qp);
	return false;
}

/* The peer made progress: the verbs retry clock restarts. */
static void mroce_sq_progress(struct mroce_qp *qp, u64 now)
{
	/*
	 * Proof that the peer gets our packets: the next one confirms the
	 * neighbour entry it leaves by (as TCP's forward progress does),
	 * which then stays reachable without ARP/ND probes.
	 */
	qp->sq.neigh_confirm = true;
	mroce_sq_retry_restart(qp);
	mroce_rto_progress(&qp->sq.rto);
	qp->sq.rnr_left = qp->rnr_retry;
	mroce_timer_rto_restart(qp, now);
}

/* Everything before @psn has arrived at the peer (a READ/ATOMIC answer). */
static void mroce_sq_ack_to(struct mroce_qp *qp, u32 psn)
{
	u64 now = ktime_get_ns();
	struct mroce_sb_ctx ctx = { qp, div_u64(now, NSEC_PER_USEC) };

	if (mroce_sb_ack(&qp->sq.sb, psn, NULL, mroce_sb_event, &ctx) > 0) {
		mroce_sq_progress(qp, now);
		mroce_timer_arm(qp);
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

/*
 * R1: an ACK or NAK may speak only of what was sent: its cumulative PSN
 * in [snd_una, snd_nxt], no SACK bit at or beyond snd_nxt, a NAK PSN in
 * [snd_una, snd_nxt).  A forged or stale one could otherwise complete
 * WQEs whose data never arrived, or feed its rate hint and RTT echo to
 * the congestion control.
 */
static bool mroce_comp_ack_in_range(const struct mroce_qp *qp,
				    const struct mroce_pkt_info *pi)
{
	const struct mroce_sb *sb = &qp->sq.sb;
	u32 span, w;

	if (!mroce_psn_between(pi->psn, sb->una, sb->nxt))
		return false;
	if (pi->opcode == MROCE_OP_NAK &&
	    !mroce_psn_in_window(pi->nak_psn, sb->una, sb->nxt))
		return false;
	/* bit i stands for PSN psn + i: bits span and up are unsent PSNs */
	span = mroce_psn_fwd(pi->psn, sb->nxt);
	for (w = 0; w < MROCE_WIRE_SACK_WORDS; w++) {
		u64 beyond;

		if (span >= (w + 1) * 64)
			continue;
		beyond = span <= w * 64 ? ~0ULL : ~(BIT_ULL(span - w * 64) - 1);
		if (pi->sack[w] & beyond)
			return false;
	}
	return true;
}

/*
 * What the ACK's echo says about the copy that arrived (@pi->rx_count:
 * the ACK carries one): an RTT sample into @ack, a dead path's probe
 * answered, and exactly that transmission delivered.
 */
static void mroce_comp_echo(struct mroce_qp *qp, const struct mroce_pkt_info *pi,
			    u32 now_us, struct mroce_cc_ack *ack)
{
	/* the echoed timestamp is this transmission's: always a valid RTT */
	u32 rtt = now_us - pi->echo_ts - pi->ack_delay_us;

	if (rtt < USEC_PER_SEC) {	/* else a stale or bogus echo */
		mroce_rto_sample(&qp->sq.rto, rtt);
		mroce_min_rtt_update(qp, rtt, now_us);
		mroce_sq_rtt_record(qp, pi->echo_path_id, rtt);
		ack->rtt_us = rtt;
	}
	if (mroce_paths_probe_acked(qp->sq.paths, pi->echo_path_id,
				    pi->echo_path_seq, now_us)) {
		mroce_qcount(qp, MROCE_CNT_PATH_REVIVED, 1);
		trace_mroce_path(qp, pi->echo_path_id, MROCE_PATH_EV_REVIVED);
		mroce_timer_probe_restart(qp);
	}
	if (pi->opcode == MROCE_OP_ACK)
		mroce_sb_echo(&qp->sq.sb, pi->echo_path_id, pi->echo_path_seq,
			      pi->echo_ts);
}

/* Hand the congestion controller what this ACK taught us. */
static void mroce_comp_cc_ack(struct mroce_qp *qp,
			      const struct mroce_pkt_info *pi, u32 now_us,
			      int delivered, struct mroce_cc_ack *ack)
{
	const struct mroce_cc_ops *cc = qp->sq.cc_ops;

	if (!cc->on_ack)
		return;
	ack->now_us = now_us;
	ack->path = pi->echo_path_id;
	ack->acked_pkts = max(delivered, 0);
	ack->inflight_pkts = mroce_sb_outstanding(&qp->sq.sb);
	ack->rx_count = pi->rx_count;
	ack->ce_count = pi->ce_count;
	ack->echo_ce = pi->echo_flags & MROCE_ECHO_CE;
	ack->srtt_us = qp->sq.rto.srtt_us;
	/*
	 * The delay signal, with a target fit for a software host (module
	 * parameter qdelay_target_us, 0: off)
	 */
	ack->qdelay_target_us = READ_ONCE(mroce_qdelay_target_us);
	ack->min_rtt_us = ack->qdelay_target_us ? qp->sq.min_rtt_us : 0;
	/*
	 * The window covers the RTT the delay signal tolerates: on a loaded
	 * software host the RTT is far above the idle minimum without any
	 * network queue.
	 */
	ack->base_rtt_us = qp->sq.min_rtt_us ?
			   qp->sq.min_rtt_us + ack->qdelay_target_us : 0;
	ack->rate_hint_bps = (u64)pi->rate_hint_mbps * 1000000;
	cc->on_ack(&qp->sq.cc, ack);
	trace_mroce_cc(qp, MROCE_CC_EV_ACK, ack->rate_hint_bps);
}

/*
 * An ACK that passed R1 (or the acknowledging part of a NAK): feed the
 * scoreboard, the paths, the loss timers and the congestion controller.
 */
static void mroce_comp_ack(struct mroce_qp *qp, const struct mroce_pkt_info *pi)
{
	struct mroce_sb *sb = &qp->sq.sb;
	struct mroce_cc_ack ack = {};
	u64 now = ktime_get_ns();
	struct mroce_sb_ctx ctx = { qp, div_u64(now, NSEC_PER_USEC) };
	bool echo = pi->rx_count;
	int delivered;

	/*
	 * The peer got a PSN we resent twice: both copies arrived, the
	 * resend was spurious (reordering, not loss); the detector becomes
	 * more patient.
	 */
	if ((pi->echo_flags & MROCE_ECHO_DUP) &&
	    mroce_sb_dup_echo(sb, pi->echo_psn))
		mroce_qcount(qp, MROCE_CNT_RETX_SPURIOUS, 1);
	/*
	 * The answer to our PB_ACK capability PROBE (mroce_req_pb_query()):
	 * the peer accepts piggybacked ACKs.  Its echo is of no path.
	 */
	if (pi->echo_flags & MROCE_ECHO_PB) {
		WRITE_ONCE(qp->sq.peer_pb, true);
		/*
		 * ... and large segments of up to seg_max units
		 * (mroce_req_seg()); the parser saw to it that ECHO_SEG
		 * comes with a non-zero seg_max
		 */
		if (pi->echo_flags & MROCE_ECHO_SEG)
			WRITE_ONCE(qp->sq.peer_seg,
				   (u32)pi->seg_max * MROCE_SEG_UNIT);
		echo = false;
	}
	if (echo)
		mroce_comp_echo(qp, pi, ctx.now_us, &ack);
	delivered = mroce_sb_ack(sb, pi->psn, pi->sack, mroce_sb_event, &ctx);
	if (echo)
		mroce_paths_echo(qp->sq.paths, pi->echo_path_id, ack.rtt_us,
				 pi->echo_flags & MROCE_ECHO_CE, ctx.now_us);
	if (delivered > 0)
		mroce_sq_progress(qp, now);
	qp->sq.tlp_out = false;
	if (mroce_psn_before(sb->una, sb->nxt)) {
		mroce_req_recover(qp, now);
		mroce_timer_tlp_restart(qp, now);
	} else if (qp->sq.rd_atomic) {
		/*
		 * Every request packet is acknowledged, but a READ or ATOMIC
		 * still waits for its answer: the tail probe re-requests it
		 * if the answer's tail is lost (spec, loss detection, READ
		 * responses: rule 3), rather than the RTO.
		 */
		qp->sq.due[MROCE_DL_REORDER] = 0;
		mroce_timer_tlp_restart(qp, now);
	} else {
		/*
		 * Nothing outstanding: the RTO stops (RFC 6298 5.2), and the
		 * next send starts it from that send.  Left running, it timed
		 * the next message from this ACK and could expire before that
		 * message's own ACK was due.
		 */
		qp->sq.due[MROCE_DL_REORDER] = 0;
		qp->sq.due[MROCE_DL_TLP] = 0;
		qp->sq.due[MROCE_DL_RTO] = 0;
	}
	mroce_timer_arm(qp);
	/* counted and shown whichever algorithm runs, "none" included */
	if (pi->rate_hint_mbps) {
		mroce_qcount(qp, MROCE_CNT_RX_RATE_HINTS, 1);
		qp->sq.hint_mbps = pi->rate_hint_mbps;
	}
	mroce_comp_cc_ack(qp, pi, ctx.now_us, delivered, &ack);
}

static bool mroce_comp_nak(struct mroce_qp *qp, const struct mroce_pkt_info *pi)
{
	struct mroce_swqe *sw;
	u32 k;

	mroce_comp_ack(qp, pi);
	mroce_qcount(qp, mroce_nak_counter(pi->nak_code, true), 1);
	switch (pi->nak_code) {
	case MROCE_NAK_RNR:
		/* the responder answers: RNR retries are counted separately */
		mroce_sq_retry_restart(qp);
		sw = mroce_sq_find(qp, pi->nak_psn, &k);
		if (!sw)
			return false;
		if (qp->rnr_retry != 7) {	/* 7: retry forever */
			if (!qp->sq.rnr_left) {
				mroce_qcount(qp, MROCE_CNT_RNR_RETRY_EXC, 1);
				mroce_swqe_fail(sw, IB_WC_RNR_RETRY_EXC_ERR);
				return mroce_sq_complete(qp);
			}
			qp->sq.rnr_left--;
		}
		qp->sq.rnr_wait = true;
		/*
		 * At least the peer's timer (MR-47): jiffies + n expires after
		 * n - 1 to n ticks, so one tick more.  The conformance suite
		 * saw resends 4.7 ms after an RNR NAK of 5.12 ms (HZ 250).
		 */
		mod_timer(&qp->sq.rnr_timer, jiffies + 1 +
			  usecs_to_jiffies(mroce_wire_rnr_timer_us(pi->rnr_timer)));
		return false;
	case MROCE_NAK_PSN_SEQ_ERR:
		/*
		 * No other action (spec): the window rule makes it impossible
		 * on a consistent connection, and resending on it would let
		 * one small packet draw a window of data.
		 */
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

/* Move @sw's read_base past the chunks that are all in. */
static void mroce_read_advance(struct mroce_qp *qp, struct mroce_swqe *sw)
{
	while (sw->read_base < sw->sent) {
		u32 psn = mroce_psn_add(sw->first_psn, sw->read_base);
		u32 segs = mroce_segs(qp, mroce_read_chunk_len(qp, sw,
							       sw->read_base));

		if (qp->sq.read_seen[psn % MROCE_WINDOW] !=
		    mroce_segs_mask(segs))
			break;
		sw->read_base++;
	}
}

static void mroce_comp_read_resp(struct mroce_qp *qp,
				 const struct mroce_pkt_info *pi,
				 struct sk_buff *skb)
{
	struct mroce_swqe *sw;
	u32 k, clen, seg;
	u64 *seen, now;

	sw = mroce_sq_find(qp, pi->psn, &k);
	if (!sw || !(sw->op->mask & MROCE_WR_READ) ||
	    ((sw->msn + k) & MROCE_WIRE_U24_MASK) != pi->msn)
		goto bad;
	clen = mroce_read_chunk_len(qp, sw, k);
	/*
	 * R2: the sink the request named (0, 0 for a READ without SGEs, as
	 * mroce_req_fill_read() sends it), a PMTU segment of the chunk
	 */
	if (pi->va != (sw->wqe.num_sge ? sw->sge[0].addr : 0) ||
	    pi->rkey != (sw->wqe.num_sge ? sw->sge[0].lkey : 0))
		goto bad;
	if (pi->msg_len != clen || pi->offset % qp->pmtu ||
	    (clen ? pi->offset >= clen : pi->offset) ||
	    pi->payload_len != min(qp->pmtu, clen - pi->offset))
		goto bad;
	seg = pi->offset / qp->pmtu;
	seen = &qp->sq.read_seen[pi->psn % MROCE_WINDOW];
	/* a chunk all in has given its slot to a later PSN */
	if (k < sw->read_base || (*seen & BIT_ULL(seg))) {
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
	mroce_read_advance(qp, sw);
	/*
	 * New READ data is progress too, and like an ACK it ends a silence:
	 * the tail probe re-requests the missing tail a PTO after the last
	 * response (rule 3), not a PTO after the request was sent, which
	 * for a long READ comes while its responses still stream in.
	 */
	now = ktime_get_ns();
	mroce_sq_progress(qp, now);
	qp->sq.tlp_out = false;
	mroce_timer_tlp_restart(qp, now);
	mroce_timer_arm(qp);
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
	if (!sw || !(sw->op->mask & MROCE_WR_ATOMIC) || sw->msn != pi->msn) {
		mroce_count(qp->mdev, MROCE_CNT_RX_DROP_RESP_UNEXPECTED, 1);
		return;
	}
	if (sw->done) {
		mroce_qcount(qp, MROCE_CNT_RX_DUP_PKTS, 1);
		return;
	}
	sw->atomic_orig = pi->orig;
	if (mroce_sgl_copy(sw->sge, sw->mr, sw->wqe.num_sge, 0,
			   &sw->atomic_orig, sizeof(u64), true))
		mroce_swqe_fail(sw, IB_WC_LOC_PROT_ERR);
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
	if (!pi->rx_from_peer) {	/* C5: forged or stale */
		mroce_count(qp->mdev, MROCE_CNT_RX_DROP_SRC_MISMATCH, 1);
		goto out;
	}
	if ((mroce_wire_opinfo(pi->opcode)->props & MROCE_OPP_ACKNOWLEDGE) &&
	    !mroce_comp_ack_in_range(qp, pi)) {
		mroce_qcount(qp, MROCE_CNT_RX_DROP_ACK_RANGE, 1);
		goto out;
	}
	switch (pi->opcode) {
	case MROCE_OP_ACK:
		mroce_qcount(qp, MROCE_CNT_RX_ACKS, 1);
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
 * The ACK a request of the peer carries (PB_ACK): what an ACK of
 * cumulative PSN @pi->ack_psn with the request's KH says.  One that fails
 * R1 (stale: an ACK that left after it arrived first) is dropped as such
 * an ACK is; the request itself goes on to the responder, which counts
 * its own drops (state, source).  Softirq, before the responder.
 */
void mroce_comp_pb_ack(struct mroce_qp *qp, const struct mroce_pkt_info *pi)
{
	struct mroce_pkt_info ack;
	bool failed = false;

	spin_lock(&qp->sq.lock);
	if (!mroce_qp_sends(qp) || !pi->rx_from_peer)
		goto out;
	ack = *pi;
	ack.opcode = MROCE_OP_ACK;
	ack.psn = pi->ack_psn;
	if (!mroce_comp_ack_in_range(qp, &ack)) {
		mroce_qcount(qp, MROCE_CNT_RX_DROP_ACK_RANGE, 1);
		goto out;
	}
	mroce_qcount(qp, MROCE_CNT_RX_ACKS_PB, 1);
	mroce_comp_ack(qp, &ack);
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
	mroce_timer_stop(qp);
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
		mroce_sq_retire(qp, sw);
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
		mroce_ring_free_to(&qp->sq.ring, qp->sq.tail);
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
