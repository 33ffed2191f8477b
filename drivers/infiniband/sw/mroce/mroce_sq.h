/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mroce send queue internals, shared by the engines of the send side:
 *
 *   mroce_req.c       requester: fetch, segment, build and send
 *   mroce_comp.c      completer: ACK, NAK and responses; completions
 *   mroce_recovery.c  loss recovery: what to resend, and why
 *   mroce_timer.c     the per-QP loss timer and its deadlines; RNR wait
 *
 * Everything declared here runs under qp->sq.lock.
 */
#ifndef MROCE_SQ_H
#define MROCE_SQ_H

#include "mroce.h"
#include "mroce_psn.h"

/* Bytes one READ request (one PSN) asks for at most. */
static inline u32 mroce_read_chunk(const struct mroce_qp *qp)
{
	return MROCE_READ_CHUNK_SEGS * qp->pmtu;
}

/* Length of READ chunk @k of @sw. */
static inline u32 mroce_read_chunk_len(const struct mroce_qp *qp,
				       const struct mroce_swqe *sw, u32 k)
{
	u32 c = mroce_read_chunk(qp);

	return min(c, sw->length - k * c);
}

/* Packets (PMTU segments) of @len bytes; a zero-length message takes one. */
static inline u32 mroce_segs(const struct mroce_qp *qp, u32 len)
{
	return max(1U, DIV_ROUND_UP(len, qp->pmtu));
}

static inline u64 mroce_segs_mask(u32 segs)
{
	return segs >= 64 ? ~0ULL : BIT_ULL(segs) - 1;
}

/* The oldest PSN a completion may still need: the window starts here. */
static inline u32 mroce_sq_win_base(const struct mroce_qp *qp)
{
	if (qp->sq.tail != qp->sq.head)
		return qp->sq.wqe[qp->sq.tail & qp->sq.ring.mask].first_psn;
	return qp->sq.sb.una;
}

static inline void mroce_swqe_release(struct mroce_swqe *sw)
{
	mroce_sgl_release(sw->mr, sw->wqe.num_sge);
}

/* The WQE at the tail is done with: drop its references, free its slot. */
static inline void mroce_sq_retire(struct mroce_qp *qp, struct mroce_swqe *sw)
{
	mroce_swqe_release(sw);
	qp->sq.tail++;
	mroce_ring_free_to(&qp->sq.ring, qp->sq.tail);
}

/* Which WQE sent request PSN @psn?  NULL if none outstanding did. */
static inline struct mroce_swqe *mroce_sq_find(struct mroce_qp *qp, u32 psn,
					       u32 *k)
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

/*
 * @sw completed successfully now: its latency since it was fetched into
 * the QP's histogram.  *@now_ns is read once per run of completions.
 */
static inline void mroce_sq_lat_record(struct mroce_qp *qp,
				       const struct mroce_swqe *sw, u64 *now_ns)
{
	if (!*now_ns)
		*now_ns = ktime_get_ns();
	mroce_hist_record(&qp->sq.lat,
			  min_t(u64, div_u64(*now_ns - sw->fetch_ns,
					     NSEC_PER_USEC), U32_MAX));
}

/* An RTT sample of path @id (the peer's echo: any value) into its histogram. */
static inline void mroce_sq_rtt_record(struct mroce_qp *qp, u32 id, u32 rtt_us)
{
	if (qp->sq.path_rtt && id < qp->sq.paths->n)
		mroce_hist_record(&qp->sq.path_rtt[id], rtt_us);
}

/* What the scoreboard's callback needs: one clock read per ACK. */
struct mroce_sb_ctx {
	struct mroce_qp *qp;
	u64 now_us;
};

/* mroce_req.c */
void mroce_req_xmit(struct mroce_qp *qp, u32 idx, u32 k, bool retx, int path);
void mroce_req_probe(struct mroce_qp *qp, int id, u32 seq);

/* mroce_comp.c */
void mroce_swqe_fail(struct mroce_swqe *sw, enum ib_wc_status status);
bool mroce_sq_complete(struct mroce_qp *qp);

/* mroce_recovery.c */
bool mroce_req_missing(struct mroce_qp *qp, struct mroce_swqe *sw, u32 k);
void mroce_req_retransmit(struct mroce_qp *qp, u32 from_psn, u32 max);
void mroce_sb_event(void *ctx, u32 psn, const struct mroce_sb_slot *s,
		    enum mroce_sb_event ev);
void mroce_req_recover(struct mroce_qp *qp, u64 now);
bool mroce_req_tlp(struct mroce_qp *qp);
bool mroce_req_rto(struct mroce_qp *qp, u64 now);

/* mroce_timer.c */
void mroce_timer_arm(struct mroce_qp *qp);
void mroce_timer_rto_restart(struct mroce_qp *qp, u64 now);
void mroce_timer_tlp_restart(struct mroce_qp *qp, u64 now);
void mroce_timer_probe_restart(struct mroce_qp *qp);
void mroce_timer_sent(struct mroce_qp *qp);
void mroce_timer_stop(struct mroce_qp *qp);

#endif /* MROCE_SQ_H */
