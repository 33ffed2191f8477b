// SPDX-License-Identifier: GPL-2.0-only
/*
 * "dcqcn": a DCQCN-style rate algorithm (Zhu et al., "Congestion Control
 * for Large-Scale RDMA Deployments", SIGCOMM 2015), reaction point only,
 * for comparison with "metaroce".
 *
 * The notification point is the MetaRoCE receiver: an ACK with
 * ce_count > 0 (or ECHO_CE) stands for a CNP, and the sender reacts to at
 * most one per 50 us, as a DCQCN NIC generates at most one CNP per flow
 * per 50 us.  Current rate Rc is cc->rate_bps, target rate Rt is private.
 *
 *  - CNP:       Rt = Rc, Rc = Rc (1 - alpha / 2), alpha = (1 - g) alpha + g
 *               (g = 1/256); timer, byte counter and their event counts
 *               restart
 *  - every K = 55 us without CNP: alpha = (1 - g) alpha
 *  - rate increase events, from a 55 us timer and from a byte counter
 *    (every B = 10 MiB acknowledged); with T and BC their counts since the
 *    last CNP:
 *	fast recovery while T <= F and BC <= F (F = 5): Rc = (Rt + Rc) / 2
 *	hyper increase when T > F and BC > F:
 *		Rt += (min(T, BC) - F) R_HAI, Rc = (Rt + Rc) / 2
 *	additive increase otherwise: Rt += R_AI, Rc = (Rt + Rc) / 2
 *    with R_AI = line / 1024 (40 Mbit/s at the paper's 40 Gbit/s) and
 *    R_HAI = 10 R_AI.  There is no timer: the timer and alpha periods that
 *    elapsed are evaluated on each ACK from ack->now_us.
 *  - window: 256 packets (rate-based only).
 *
 * Beyond the paper, to conform to the MetaRoCE framework (a sender MUST
 * honour rate hints): an ACK with a hint caps Rc and Rt at H, and the hint
 * caps increases until it is older than 4 SRTT, as in "metaroce".  A loss
 * counts as a congestion notification, a timeout additionally halves Rc.
 * Rc stays within [min(10 Mbit/s, line), line].
 */

#include <linux/limits.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/string.h>

#include "mroce_cc_algos.h"

static u64 mroce_dcqcn_ai(const struct mroce_cc_state *cc)
{
	return div_u64(cc->line_rate_bps, MROCE_DCQCN_AI_DIV);
}

/* alpha (1 - g)^periods, by squaring */
static u32 mroce_dcqcn_decay(u32 alpha, u64 periods)
{
	u64 f = MROCE_CC_ONE - (MROCE_CC_ONE >> MROCE_DCQCN_G_SHIFT);
	u64 r = MROCE_CC_ONE;

	if (periods >= (1U << 16))	/* (255/256)^65536 = e^-256 */
		return 0;
	while (periods) {
		if (periods & 1)
			r = (r * f) >> MROCE_CC_SHIFT;
		f = (f * f) >> MROCE_CC_SHIFT;
		periods >>= 1;
	}
	return ((u64)alpha * r) >> MROCE_CC_SHIFT;
}

static void mroce_dcqcn_update(struct mroce_cc_state *cc, u64 rate)
{
	cc->rate_bps = clamp(rate, mroce_cc_min_rate(cc->line_rate_bps),
			     cc->line_rate_bps);
	cc->cwnd_pkts = MROCE_CC_MAX_CWND;
}

static void mroce_dcqcn_init_conn(struct mroce_cc_state *cc,
				  u64 line_rate_bps, u64 hint_bps)
{
	struct mroce_dcqcn_priv *d = mroce_dcqcn_priv(cc);
	u64 rate;

	memset(cc->priv, 0, sizeof(cc->priv));
	cc->line_rate_bps = line_rate_bps ?: MROCE_CC_DEFAULT_LINE_BPS;
	d->alpha = MROCE_CC_ONE;
	rate = cc->line_rate_bps;
	if (hint_bps)
		rate = min(rate, hint_bps);
	mroce_dcqcn_update(cc, rate);
	d->rt_bps = cc->rate_bps;
}

static void mroce_dcqcn_init(struct mroce_cc_state *cc)
{
	mroce_dcqcn_init_conn(cc, cc->line_rate_bps, 0);
}

/* Congestion notification: cut Rc, remember it as the target. */
static u64 mroce_dcqcn_cnp(struct mroce_dcqcn_priv *d, u64 rc, u64 now)
{
	d->rt_bps = rc;
	rc -= mul_u64_u32_shr(rc, d->alpha, MROCE_CC_SHIFT + 1);
	d->alpha = d->alpha - (d->alpha >> MROCE_DCQCN_G_SHIFT) +
		   (MROCE_CC_ONE >> MROCE_DCQCN_G_SHIFT);
	d->cnp_us = now;
	d->alpha_us = now;
	d->timer_us = now;
	d->flags |= MROCE_DCQCN_F_CNP | MROCE_DCQCN_F_STARTED;
	d->t_events = 0;
	d->bc_events = 0;
	d->bytes = 0;
	return rc;
}

/* One rate increase event (timer or byte counter); returns the new Rc. */
static u64 mroce_dcqcn_increase(const struct mroce_cc_state *cc,
				struct mroce_dcqcn_priv *d, u64 rc, u64 cap)
{
	u32 t = d->t_events, bc = d->bc_events;

	if (t > MROCE_DCQCN_F && bc > MROCE_DCQCN_F)
		d->rt_bps += (u64)(min(t, bc) - MROCE_DCQCN_F) *
			     MROCE_DCQCN_HAI_MULT * mroce_dcqcn_ai(cc);
	else if (t > MROCE_DCQCN_F || bc > MROCE_DCQCN_F)
		d->rt_bps += mroce_dcqcn_ai(cc);
	/* else fast recovery: Rt stays */
	d->rt_bps = min(d->rt_bps, cap);
	return (d->rt_bps + rc) / 2;
}

static void mroce_dcqcn_on_ack(struct mroce_cc_state *cc,
			       const struct mroce_cc_ack *ack)
{
	struct mroce_dcqcn_priv *d = mroce_dcqcn_priv(cc);
	u64 now = ack->now_us, rc = cc->rate_bps, cap = cc->line_rate_bps;
	u64 k, bytes;

	if (ack->srtt_us)
		d->srtt_us = ack->srtt_us;
	else if (!d->srtt_us && ack->rtt_us)
		d->srtt_us = ack->rtt_us;
	if (!(d->flags & MROCE_DCQCN_F_STARTED)) {
		d->alpha_us = now;
		d->timer_us = now;
		d->flags |= MROCE_DCQCN_F_STARTED;
	}

	if (ack->rate_hint_bps) {
		d->hint_bps = ack->rate_hint_bps;
		d->hint_us = now;
		d->flags |= MROCE_DCQCN_F_HINT;
		rc = min(rc, d->hint_bps);
		d->rt_bps = min(d->rt_bps, d->hint_bps);
	}
	if ((d->flags & MROCE_DCQCN_F_HINT) &&
	    mroce_cc_elapsed(now, d->hint_us) <=
		(u64)MROCE_MR_HINT_SRTTS *
		(d->srtt_us ?: MROCE_CC_DEFAULT_RTT_US))
		cap = min(cap, d->hint_bps);

	if ((ack->ce_count || ack->echo_ce) &&
	    (!(d->flags & MROCE_DCQCN_F_CNP) ||
	     mroce_cc_elapsed(now, d->cnp_us) >= MROCE_DCQCN_CNP_US)) {
		rc = mroce_dcqcn_cnp(d, rc, now);
		mroce_dcqcn_update(cc, rc);
		return;
	}

	k = div_u64(mroce_cc_elapsed(now, d->alpha_us), MROCE_DCQCN_ALPHA_US);
	if (k) {
		d->alpha = mroce_dcqcn_decay(d->alpha, k);
		d->alpha_us += k * MROCE_DCQCN_ALPHA_US;
	}

	k = div_u64(mroce_cc_elapsed(now, d->timer_us), MROCE_DCQCN_TIMER_US);
	d->timer_us += k * MROCE_DCQCN_TIMER_US;
	for (k = min_t(u64, k, MROCE_DCQCN_MAX_EVENTS); k; k--) {
		if (d->t_events < U16_MAX)
			d->t_events++;
		rc = mroce_dcqcn_increase(cc, d, rc, cap);
	}

	bytes = d->bytes + (u64)ack->acked_pkts *
			   (cc->pkt_bytes ?: MROCE_DCQCN_PKT_BYTES);
	k = div_u64_rem(bytes, MROCE_DCQCN_BYTES, &d->bytes);
	for (k = min_t(u64, k, MROCE_DCQCN_MAX_EVENTS); k; k--) {
		if (d->bc_events < U16_MAX)
			d->bc_events++;
		rc = mroce_dcqcn_increase(cc, d, rc, cap);
	}
	mroce_dcqcn_update(cc, rc);
}

static void mroce_dcqcn_on_loss(struct mroce_cc_state *cc, u32 lost_pkts,
				bool timeout, u64 now_us, u32 path)
{
	struct mroce_dcqcn_priv *d = mroce_dcqcn_priv(cc);
	u64 rc = cc->rate_bps;

	if (!lost_pkts && !timeout)
		return;
	if (!(d->flags & MROCE_DCQCN_F_CNP) ||
	    mroce_cc_elapsed(now_us, d->cnp_us) >= MROCE_DCQCN_CNP_US)
		rc = mroce_dcqcn_cnp(d, rc, now_us);
	if (timeout)
		rc /= 2;
	mroce_dcqcn_update(cc, rc);
}

struct mroce_cc_ops mroce_cc_dcqcn = {
	.name = "dcqcn",
	.owner = THIS_MODULE,
	.init = mroce_dcqcn_init,
	.init_conn = mroce_dcqcn_init_conn,
	.on_ack = mroce_dcqcn_on_ack,
	.on_loss = mroce_dcqcn_on_loss,
};
