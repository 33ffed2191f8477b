// SPDX-License-Identifier: GPL-2.0-only
/*
 * "metaroce": the reference sender algorithm of the MetaRoCE spec
 * (Documentation/metaroce-spec.rst, "Reference sender algorithm"), for
 * the connection.  The per-path windows and weights of the same section
 * belong to the path scheduler, not to this file.
 *
 * The model.  The connection sends at a rate R (cc->rate_bps), paced; the
 * window W (cc->cwnd_pkts) only caps what an overshooting rate can leave
 * in queues.  Three signals bring R down, each when it means congestion:
 * ECN marks (the early signal: switches mark before they drop), a
 * standing queueing delay (where ECN is not configured), and the
 * receiver's rate hint H (which sets the operating point of an incast
 * directly).  Loss alone is not one of them: on a lossy link selective
 * retransmission repairs it and the path penalty moves traffic off the
 * lossy path.  Without congestion R grows by a fixed step per round
 * (AIMD), which converges to fair shares.
 *
 * Time runs in rounds of one SRTT (mroce_cc_round_us()): a round begins at
 * an ACK and ends at the first ACK at least SRTT later.  Rounds and "once
 * per RTT" are measured on the clock the transport passes in
 * (ack->now_us) against the connection's SRTT, so this needs neither PSNs
 * nor a timer.  Integer arithmetic only.
 *
 * The steps, each a function below:
 *
 *  - start (mroce_metaroce_init_conn): R = min(line, H_last), W = 256,
 *    alpha = 1: react fully to the first mark
 *  - count (mroce_metaroce_count): the round's packets and CE marks, and
 *    its smallest RTT sample
 *  - hint (in on_ack): an ACK carrying H: R = min(R, H) at once
 *  - CE (mroce_metaroce_ce): ce_count > 0 or ECHO_CE, at most once per
 *    SRTT together with the delay cut, with the alpha of the rounds
 *    before: R = R (1 - alpha / 2)
 *  - end of a round (mroce_metaroce_round_end):
 *      delay: the standing queueing delay qdelay is the round's smallest
 *	RTT sample minus min_rtt (a queue that persists for a whole round,
 *	not one delayed ACK or a descheduled host); above the target (25
 *	us, or what the transport passes), at most once per SRTT together
 *	with CE: R = R (1 - (qdelay - target) / (2 qdelay)), above R / 2
 *      alpha: alpha = (1 - 1/16) alpha + 1/16 F, F = sum of ce_count / sum
 *	of rx_count over the round's ACKs.  Per round, not per ACK:
 *	receivers acknowledge each CE-marked packet at once, so marked
 *	packets would weigh several times in a per-ACK average
 *      increase: a round without congestion or loss: R += line / 64, up to
 *	the line rate, and up to H while the hint is younger than 4 SRTT
 *	(mroce_cc_rate_cap())
 *  - loss (mroce_metaroce_on_loss): R = 4/5 R once per SRTT, if CE or the
 *    delay signal came within the last 2 SRTT; a loss without them is
 *    taken as random (a lossy link, not a queue): no cut, and the round
 *    may still increase.  Timeout: R = 4/5 R once per SRTT and R = R / 2,
 *    always
 *  - bounds and window (mroce_metaroce_set_rate): R within
 *    [min(10 Mbit/s, line), line], a hint below the floor included;
 *    W = min(256, max(8, 2 R RTT_base / packet size)) once an SRTT and the
 *    packet size are known, else 256: loose enough never to limit a paced
 *    sender
 */

#include <linux/build_bug.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/time64.h>

#include "mroce_cc.h"

/* DCTCP gain g = 1/16 of the CE-fraction EWMA alpha, per round. */
static const u32 mroce_metaroce_g_shift = 4;
/* Additive increase per round without congestion: line rate / 64. */
static const u32 mroce_metaroce_ai_div = 64;
/* Loss that is congestion: R x 4/5, at most once per round. */
static const u32 mroce_metaroce_loss_num = 4;
static const u32 mroce_metaroce_loss_den = 5;
/* A loss within this many rounds of CE or the delay signal is congestion. */
static const u32 mroce_metaroce_cong_rounds = 2;
/* W covers this many times rate x RTT_base ... */
static const u32 mroce_metaroce_bdp_mult = 2;
/* ... and is never below this many packets. */
static const u32 mroce_metaroce_min_cwnd = 8;

/* struct mroce_metaroce.flags: which of the times are valid */
#define MROCE_METAROCE_F_ROUND	BIT(0)	/* round_us */
#define MROCE_METAROCE_F_MARKED	BIT(1)	/* congestion seen in this round */
#define MROCE_METAROCE_F_DEC	BIT(2)	/* dec_us */
#define MROCE_METAROCE_F_LOSS	BIT(3)	/* loss_us */
#define MROCE_METAROCE_F_CONG	BIT(4)	/* cong_us */

/* Private state, in cc->priv. */
struct mroce_metaroce {
	struct mroce_cc_track t;	/* SRTT, latest hint H */
	u64 round_us;		/* start of the current round */
	u64 dec_us;		/* last decrease on CE or delay */
	u64 loss_us;		/* last decrease on loss */
	u64 cong_us;		/* last CE or delay signal */
	u32 alpha;		/* EWMA of the CE fraction, MROCE_CC_ONE = 1 */
	u32 rx_round;		/* packets reported in this round */
	u32 ce_round;		/* of which CE-marked */
	u32 base_rtt_us;	/* latest base RTT, 0 = none: SRTT sizes W */
	u32 rtt_round_min;	/* smallest RTT sample of the round, 0 = none */
	u32 flags;		/* MROCE_METAROCE_F_* */
};

static struct mroce_metaroce *mroce_metaroce_priv(struct mroce_cc_state *cc)
{
	BUILD_BUG_ON(sizeof(struct mroce_metaroce) > sizeof(cc->priv));
	return (struct mroce_metaroce *)cc->priv;
}

/* R within its bounds, and the window W that goes with it. */
static void mroce_metaroce_set_rate(struct mroce_cc_state *cc, u64 rate)
{
	struct mroce_metaroce *ca = mroce_metaroce_priv(cc);
	u32 rtt = ca->base_rtt_us ?: ca->t.srtt_us;
	u64 pps, w;

	cc->rate_bps = mroce_cc_clamp_rate(cc, rate);
	if (!cc->pkt_bytes || !ca->t.srtt_us) {
		cc->cwnd_pkts = MROCE_CC_MAX_CWND;
		return;
	}
	pps = div_u64(cc->rate_bps, cc->pkt_bytes * 8);
	/* the queue-free RTT when known: SRTT would grow W with the queue */
	w = DIV_ROUND_UP_ULL(pps * min_t(u32, rtt, USEC_PER_SEC) *
			     mroce_metaroce_bdp_mult, USEC_PER_SEC);
	cc->cwnd_pkts = clamp_t(u64, w, mroce_metaroce_min_cwnd,
				MROCE_CC_MAX_CWND);
}

static void mroce_metaroce_init_conn(struct mroce_cc_state *cc,
				     u64 line_rate_bps, u64 hint_bps)
{
	u64 rate = mroce_cc_start(cc, line_rate_bps, hint_bps);

	mroce_metaroce_priv(cc)->alpha = MROCE_CC_ONE;
	mroce_metaroce_set_rate(cc, rate);
}

static void mroce_metaroce_init(struct mroce_cc_state *cc)
{
	mroce_metaroce_init_conn(cc, cc->line_rate_bps, 0);
}

/* CE or the delay signal: remembered, for the loss rule. */
static void mroce_metaroce_congested(struct mroce_metaroce *ca, u64 now)
{
	ca->cong_us = now;
	ca->flags |= MROCE_METAROCE_F_CONG | MROCE_METAROCE_F_MARKED;
}

/*
 * CE and delay decreases: at most one per round between them.  True if
 * this one may cut now; it is then recorded as the round's cut.
 */
static bool mroce_metaroce_try_cut(struct mroce_metaroce *ca, u64 now)
{
	if ((ca->flags & MROCE_METAROCE_F_DEC) &&
	    mroce_cc_elapsed(now, ca->dec_us) < mroce_cc_round_us(&ca->t))
		return false;
	ca->dec_us = now;
	ca->flags |= MROCE_METAROCE_F_DEC;
	return true;
}

/* Count an ACK's packets, marks and RTT sample towards its round. */
static void mroce_metaroce_count(struct mroce_metaroce *ca,
				 const struct mroce_cc_ack *ack)
{
	u32 ce = ack->ce_count >= MROCE_CC_CE_SATURATED ? ack->rx_count :
			min(ack->ce_count, ack->rx_count);

	ca->rx_round += ack->rx_count;
	ca->ce_round += ce;
	/* keep the ratio when the sums would overflow */
	if (ca->rx_round >= 1U << 30) {
		ca->rx_round >>= 1;
		ca->ce_round >>= 1;
	}
	if (ack->rtt_us && (!ca->rtt_round_min ||
			    ack->rtt_us < ca->rtt_round_min))
		ca->rtt_round_min = ack->rtt_us;
}

/* CE: R (1 - alpha / 2), with the alpha of the rounds before. */
static u64 mroce_metaroce_ce(struct mroce_metaroce *ca, u64 rate, u64 now)
{
	mroce_metaroce_congested(ca, now);
	if (mroce_metaroce_try_cut(ca, now))
		rate -= mul_u64_u32_shr(rate, ca->alpha, MROCE_CC_SHIFT + 1);
	return rate;
}

/*
 * The delay signal at the end of a round: the round's standing queueing
 * delay over the target cuts R (1 - (qdelay - target) / (2 qdelay)).
 */
static u64 mroce_metaroce_delay(struct mroce_cc_state *cc,
				struct mroce_metaroce *ca,
				const struct mroce_cc_ack *ack, u64 rate)
{
	u32 target = ack->qdelay_target_us ?: MROCE_CC_QDELAY_TARGET_US;
	u32 standing = ca->rtt_round_min, qdelay;

	ca->rtt_round_min = 0;
	if (!standing || !ack->min_rtt_us || standing <= ack->min_rtt_us) {
		cc->qdelay_us = 0;
		return rate;
	}
	cc->qdelay_us = standing - ack->min_rtt_us;
	if (cc->qdelay_us <= target)
		return rate;
	qdelay = min_t(u32, cc->qdelay_us, USEC_PER_SEC);
	mroce_metaroce_congested(ca, ack->now_us);
	if (mroce_metaroce_try_cut(ca, ack->now_us))
		rate -= mul_u64_u32_div(rate, qdelay - target, 2 * qdelay);
	return rate;
}

/* alpha = (1 - g) alpha + g F, F the round's CE fraction. */
static void mroce_metaroce_alpha(struct mroce_metaroce *ca)
{
	u32 frac;

	if (!ca->rx_round)
		return;
	frac = div_u64((u64)ca->ce_round << MROCE_CC_SHIFT, ca->rx_round);
	ca->alpha = ca->alpha - (ca->alpha >> mroce_metaroce_g_shift) +
		    (frac >> mroce_metaroce_g_shift);
	ca->rx_round = 0;
	ca->ce_round = 0;
}

/* A round ends: delay signal, alpha, and the increase of a clean round. */
static u64 mroce_metaroce_round_end(struct mroce_cc_state *cc,
				    struct mroce_metaroce *ca,
				    const struct mroce_cc_ack *ack, u64 rate)
{
	rate = mroce_metaroce_delay(cc, ca, ack, rate);
	mroce_metaroce_alpha(ca);
	if (!(ca->flags & MROCE_METAROCE_F_MARKED)) {
		u64 cap = mroce_cc_rate_cap(cc, &ca->t, ack->now_us);

		if (rate < cap)
			rate = min(rate + div_u64(cc->line_rate_bps,
						  mroce_metaroce_ai_div),
				   cap);
	}
	ca->round_us = ack->now_us;
	ca->flags &= ~MROCE_METAROCE_F_MARKED;
	return rate;
}

static void mroce_metaroce_on_ack(struct mroce_cc_state *cc,
				  const struct mroce_cc_ack *ack)
{
	struct mroce_metaroce *ca = mroce_metaroce_priv(cc);
	u64 now = ack->now_us, rate = cc->rate_bps;

	mroce_cc_track_ack(&ca->t, ack);
	if (ack->base_rtt_us)
		ca->base_rtt_us = ack->base_rtt_us;
	if (!(ca->flags & MROCE_METAROCE_F_ROUND)) {
		ca->round_us = now;
		ca->flags |= MROCE_METAROCE_F_ROUND;
	}
	mroce_metaroce_count(ca, ack);
	if (ack->rate_hint_bps)
		rate = min(rate, ack->rate_hint_bps);
	if (ack->ce_count || ack->echo_ce)
		rate = mroce_metaroce_ce(ca, rate, now);
	if (mroce_cc_elapsed(now, ca->round_us) >= mroce_cc_round_us(&ca->t))
		rate = mroce_metaroce_round_end(cc, ca, ack, rate);
	mroce_metaroce_set_rate(cc, rate);
}

static void mroce_metaroce_on_loss(struct mroce_cc_state *cc, u32 lost_pkts,
				   bool timeout, u64 now_us, u32 path)
{
	struct mroce_metaroce *ca = mroce_metaroce_priv(cc);
	u64 rate = cc->rate_bps, round = mroce_cc_round_us(&ca->t);

	if (!lost_pkts && !timeout)
		return;
	/* random loss: the link, not a queue; retransmission is enough */
	if (!timeout && (!(ca->flags & MROCE_METAROCE_F_CONG) ||
			 mroce_cc_elapsed(now_us, ca->cong_us) >
				mroce_metaroce_cong_rounds * round))
		return;
	if (!(ca->flags & MROCE_METAROCE_F_LOSS) ||
	    mroce_cc_elapsed(now_us, ca->loss_us) >= round) {
		rate = mul_u64_u32_div(rate, mroce_metaroce_loss_num,
				       mroce_metaroce_loss_den);
		ca->loss_us = now_us;
		ca->flags |= MROCE_METAROCE_F_LOSS;
	}
	if (timeout)
		rate /= 2;
	if (!(ca->flags & MROCE_METAROCE_F_ROUND)) {
		ca->round_us = now_us;
		ca->flags |= MROCE_METAROCE_F_ROUND;
	}
	ca->flags |= MROCE_METAROCE_F_MARKED;
	mroce_metaroce_set_rate(cc, rate);
}

struct mroce_cc_ops mroce_cc_metaroce = {
	.name = "metaroce",
	.owner = THIS_MODULE,
	.init = mroce_metaroce_init,
	.init_conn = mroce_metaroce_init_conn,
	.on_ack = mroce_metaroce_on_ack,
	.on_loss = mroce_metaroce_on_loss,
	.path_windows = true,
};

#if IS_ENABLED(CONFIG_RDMA_MROCE_KUNIT_TEST)
#include "mroce_cc_metaroce_test.c"	/* reaches the private state */
#endif
