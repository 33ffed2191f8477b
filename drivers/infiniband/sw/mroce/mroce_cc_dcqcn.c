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
 * Rc stays within [min(10 Mbit/s, line), line] (mroce_cc_clamp_rate()).
 *
 * The steps, each a function below: start (mroce_dcqcn_init_conn), CNP
 * (mroce_dcqcn_cnp), alpha decay (mroce_dcqcn_decay), the increase events
 * of the timer and the byte counter (mroce_dcqcn_timer,
 * mroce_dcqcn_byte_counter, each event one mroce_dcqcn_increase).
 */

#include <linux/build_bug.h>
#include <linux/limits.h>
#include <linux/math64.h>
#include <linux/module.h>

#include "mroce_cc.h"

/* EWMA gain g = 1/256 of alpha. */
static const u32 mroce_dcqcn_g_shift = 8;
/* At most one reaction to a congestion notification per 50 us. */
static const u32 mroce_dcqcn_cnp_us = 50;
/* Alpha decay period K. */
static const u32 mroce_dcqcn_alpha_us = 55;
/* Rate increase timer period T. */
static const u32 mroce_dcqcn_timer_us = 55;
/* Byte counter B: one increase event per 10 MiB acknowledged. */
static const u32 mroce_dcqcn_bytes = 10U << 20;
/* F: fast-recovery rounds of either counter. */
static const u32 mroce_dcqcn_f = 5;
/* R_AI = line / 1024 (40 Mbit/s at the paper's 40 Gbit/s) ... */
static const u32 mroce_dcqcn_ai_div = 1024;
/* ... and R_HAI = 10 R_AI. */
static const u32 mroce_dcqcn_hai_mult = 10;
/* Increase events of either counter evaluated per ACK, at most. */
static const u32 mroce_dcqcn_max_events = 64;
/* Bytes of an acknowledged packet when the transport gives no pkt_bytes. */
static const u32 mroce_dcqcn_pkt_bytes = 4096;

/* struct mroce_dcqcn.flags: which of the times are valid */
#define MROCE_DCQCN_F_STARTED	BIT(0)	/* alpha_us, timer_us */
#define MROCE_DCQCN_F_CNP	BIT(1)	/* cnp_us */

/* Private state, in cc->priv. */
struct mroce_dcqcn {
	struct mroce_cc_track t;	/* SRTT, latest hint H */
	u64 rt_bps;		/* target rate Rt; Rc is cc->rate_bps */
	u64 cnp_us;		/* last reaction to a congestion notification */
	u64 alpha_us;		/* alpha decay clock */
	u64 timer_us;		/* rate increase timer clock */
	u32 bytes;		/* byte counter, bytes since its last event */
	u32 alpha;		/* MROCE_CC_ONE = 1 */
	u16 t_events;		/* timer events since the last CNP */
	u16 bc_events;		/* byte counter events since the last CNP */
	u32 flags;		/* MROCE_DCQCN_F_* */
};

static struct mroce_dcqcn *mroce_dcqcn_priv(struct mroce_cc_state *cc)
{
	BUILD_BUG_ON(sizeof(struct mroce_dcqcn) > sizeof(cc->priv));
	return (struct mroce_dcqcn *)cc->priv;
}

static u64 mroce_dcqcn_ai(const struct mroce_cc_state *cc)
{
	return div_u64(cc->line_rate_bps, mroce_dcqcn_ai_div);
}

/* alpha (1 - g)^periods, by squaring */
static u32 mroce_dcqcn_decay(u32 alpha, u64 periods)
{
	u64 f = MROCE_CC_ONE - (MROCE_CC_ONE >> mroce_dcqcn_g_shift);
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

/* Rc within its bounds; the window is not DCQCN's business. */
static void mroce_dcqcn_set_rate(struct mroce_cc_state *cc, u64 rate)
{
	cc->rate_bps = mroce_cc_clamp_rate(cc, rate);
	cc->cwnd_pkts = MROCE_CC_MAX_CWND;
}

static void mroce_dcqcn_init_conn(struct mroce_cc_state *cc,
				  u64 line_rate_bps, u64 hint_bps)
{
	struct mroce_dcqcn *ca = mroce_dcqcn_priv(cc);

	mroce_dcqcn_set_rate(cc, mroce_cc_start(cc, line_rate_bps, hint_bps));
	ca->alpha = MROCE_CC_ONE;
	ca->rt_bps = cc->rate_bps;
}

static void mroce_dcqcn_init(struct mroce_cc_state *cc)
{
	mroce_dcqcn_init_conn(cc, cc->line_rate_bps, 0);
}

/* Congestion notification: cut Rc, remember it as the target. */
static u64 mroce_dcqcn_cnp(struct mroce_dcqcn *ca, u64 rc, u64 now)
{
	ca->rt_bps = rc;
	rc -= mul_u64_u32_shr(rc, ca->alpha, MROCE_CC_SHIFT + 1);
	ca->alpha = ca->alpha - (ca->alpha >> mroce_dcqcn_g_shift) +
		    (MROCE_CC_ONE >> mroce_dcqcn_g_shift);
	ca->cnp_us = now;
	ca->alpha_us = now;
	ca->timer_us = now;
	ca->flags |= MROCE_DCQCN_F_CNP | MROCE_DCQCN_F_STARTED;
	ca->t_events = 0;
	ca->bc_events = 0;
	ca->bytes = 0;
	return rc;
}

/* At most one reaction per mroce_dcqcn_cnp_us. */
static bool mroce_dcqcn_cnp_due(const struct mroce_dcqcn *ca, u64 now)
{
	return !(ca->flags & MROCE_DCQCN_F_CNP) ||
	       mroce_cc_elapsed(now, ca->cnp_us) >= mroce_dcqcn_cnp_us;
}

/* One rate increase event (timer or byte counter); returns the new Rc. */
static u64 mroce_dcqcn_increase(const struct mroce_cc_state *cc,
				struct mroce_dcqcn *ca, u64 rc, u64 cap)
{
	u32 t = ca->t_events, bc = ca->bc_events;

	if (t > mroce_dcqcn_f && bc > mroce_dcqcn_f)
		ca->rt_bps += (u64)(min(t, bc) - mroce_dcqcn_f) *
			      mroce_dcqcn_hai_mult * mroce_dcqcn_ai(cc);
	else if (t > mroce_dcqcn_f || bc > mroce_dcqcn_f)
		ca->rt_bps += mroce_dcqcn_ai(cc);
	/* else fast recovery: Rt stays */
	ca->rt_bps = min(ca->rt_bps, cap);
	return (ca->rt_bps + rc) / 2;
}

/* The timer periods that elapsed by @now: one increase event each. */
static u64 mroce_dcqcn_timer(const struct mroce_cc_state *cc,
			     struct mroce_dcqcn *ca, u64 rc, u64 cap, u64 now)
{
	u64 k = div_u64(mroce_cc_elapsed(now, ca->timer_us),
			mroce_dcqcn_timer_us);

	ca->timer_us += k * mroce_dcqcn_timer_us;
	for (k = min_t(u64, k, mroce_dcqcn_max_events); k; k--) {
		if (ca->t_events < U16_MAX)
			ca->t_events++;
		rc = mroce_dcqcn_increase(cc, ca, rc, cap);
	}
	return rc;
}

/* @acked packets more for the byte counter: one event per B bytes. */
static u64 mroce_dcqcn_byte_counter(const struct mroce_cc_state *cc,
				    struct mroce_dcqcn *ca, u64 rc, u64 cap,
				    u32 acked)
{
	u64 bytes = ca->bytes + (u64)acked *
				(cc->pkt_bytes ?: mroce_dcqcn_pkt_bytes);
	u64 k = div_u64_rem(bytes, mroce_dcqcn_bytes, &ca->bytes);

	for (k = min_t(u64, k, mroce_dcqcn_max_events); k; k--) {
		if (ca->bc_events < U16_MAX)
			ca->bc_events++;
		rc = mroce_dcqcn_increase(cc, ca, rc, cap);
	}
	return rc;
}

static void mroce_dcqcn_on_ack(struct mroce_cc_state *cc,
			       const struct mroce_cc_ack *ack)
{
	struct mroce_dcqcn *ca = mroce_dcqcn_priv(cc);
	u64 now = ack->now_us, rc = cc->rate_bps, cap, k;

	mroce_cc_track_ack(&ca->t, ack);
	if (!(ca->flags & MROCE_DCQCN_F_STARTED)) {
		ca->alpha_us = now;
		ca->timer_us = now;
		ca->flags |= MROCE_DCQCN_F_STARTED;
	}
	if (ack->rate_hint_bps) {
		rc = min(rc, ack->rate_hint_bps);
		ca->rt_bps = min(ca->rt_bps, ack->rate_hint_bps);
	}
	cap = mroce_cc_rate_cap(cc, &ca->t, now);

	if ((ack->ce_count || ack->echo_ce) && mroce_dcqcn_cnp_due(ca, now)) {
		mroce_dcqcn_set_rate(cc, mroce_dcqcn_cnp(ca, rc, now));
		return;
	}

	k = div_u64(mroce_cc_elapsed(now, ca->alpha_us), mroce_dcqcn_alpha_us);
	if (k) {
		ca->alpha = mroce_dcqcn_decay(ca->alpha, k);
		ca->alpha_us += k * mroce_dcqcn_alpha_us;
	}
	rc = mroce_dcqcn_timer(cc, ca, rc, cap, now);
	rc = mroce_dcqcn_byte_counter(cc, ca, rc, cap, ack->acked_pkts);
	mroce_dcqcn_set_rate(cc, rc);
}

static void mroce_dcqcn_on_loss(struct mroce_cc_state *cc, u32 lost_pkts,
				bool timeout, u64 now_us, u32 path)
{
	struct mroce_dcqcn *ca = mroce_dcqcn_priv(cc);
	u64 rc = cc->rate_bps;

	if (!lost_pkts && !timeout)
		return;
	if (mroce_dcqcn_cnp_due(ca, now_us))
		rc = mroce_dcqcn_cnp(ca, rc, now_us);
	if (timeout)
		rc /= 2;
	mroce_dcqcn_set_rate(cc, rc);
}

struct mroce_cc_ops mroce_cc_dcqcn = {
	.name = "dcqcn",
	.owner = THIS_MODULE,
	.init = mroce_dcqcn_init,
	.init_conn = mroce_dcqcn_init_conn,
	.on_ack = mroce_dcqcn_on_ack,
	.on_loss = mroce_dcqcn_on_loss,
};

#if IS_ENABLED(CONFIG_RDMA_MROCE_KUNIT_TEST)
#include "mroce_cc_dcqcn_test.c"	/* reaches the private state */
#endif
