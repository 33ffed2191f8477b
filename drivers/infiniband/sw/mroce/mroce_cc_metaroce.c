// SPDX-License-Identifier: GPL-2.0-only
/*
 * "metaroce": the reference sender algorithm of the MetaRoCE spec
 * (Documentation/metaroce-spec.rst, "Reference sender algorithm"), for
 * the connection.  The per-path windows and weights of the same section
 * belong to the path scheduler, not to this file.
 *
 * State: rate R (cc->rate_bps), window W (cc->cwnd_pkts), alpha (the
 * DCTCP-style EWMA of the CE fraction, gain 1/16, starting at 1), the
 * latest rate hint H.  Time runs in rounds of one SRTT: a round begins at
 * an ACK and ends at the first ACK at least SRTT later.
 *
 *  - end of a round: alpha = (1 - 1/16) alpha + 1/16 F, F = sum of
 *    ce_count / sum of rx_count over the round's ACKs.  Per round, not per
 *    ACK: receivers acknowledge each CE-marked packet at once, so marked
 *    packets would weigh several times in a per-ACK average
 *  - CE (ce_count > 0 or ECHO_CE), at most once per SRTT, with the alpha
 *    of the rounds before: R = R (1 - alpha / 2)
 *  - delay, at the end of a round: the standing queueing delay qdelay is
 *    the round's smallest RTT sample minus min_rtt (a queue that persists
 *    for a whole round, not one delayed ACK or a descheduled host); above
 *    the target (25 us, or what the transport passes), and at most once
 *    per SRTT together with CE: R = R (1 - (qdelay - target) / (2 qdelay))
 *  - each round without congestion or loss: R += line / 64, up to the
 *    line rate, and up to H while the hint is younger than 4 SRTT
 *  - ACK carrying a hint: R = min(R, H) at once
 *  - loss: R = 4/5 R once per SRTT, if CE or the delay signal came
 *    within the last 2 SRTT; a loss without them is taken as random (a
 *    lossy link, not a queue): no cut, and the round may still increase.
 *    The path that lost it is penalised all the same (path table).
 *    Timeout: R = 4/5 R once per SRTT and R = R / 2, always
 *  - R stays within [min(10 Mbit/s, line), line], a hint below the floor
 *    included
 *  - W = min(256, max(8, 2 R SRTT / packet size)) once an SRTT and the
 *    packet size are known, else 256: a cap on what sits in queues when
 *    the rate overshoots, loose enough never to limit a paced sender
 *
 * Rounds and "once per RTT" are measured on the clock the transport
 * passes in (ack->now_us) against the connection's SRTT, so this needs
 * neither PSNs nor a timer.  Integer arithmetic only.
 */

#include <linux/math64.h>
#include <linux/module.h>
#include <linux/string.h>
#include <linux/time64.h>

#include "mroce_cc_algos.h"

static u64 mroce_mr_rtt(const struct mroce_mr_priv *mr)
{
	return mr->srtt_us ?: MROCE_CC_DEFAULT_RTT_US;
}

static bool mroce_mr_hint_fresh(const struct mroce_mr_priv *mr, u64 now)
{
	return (mr->flags & MROCE_MR_F_HINT) &&
	       mroce_cc_elapsed(now, mr->hint_us) <=
			MROCE_MR_HINT_SRTTS * mroce_mr_rtt(mr);
}

static void mroce_mr_congested(struct mroce_mr_priv *mr, u64 now)
{
	mr->cong_us = now;
	mr->flags |= MROCE_MR_F_CONG;
}

/* CE and delay decreases: at most one per SRTT between them. */
static bool mroce_mr_may_cut(const struct mroce_mr_priv *mr, u64 now, u64 rtt)
{
	return !(mr->flags & MROCE_MR_F_DEC) ||
	       mroce_cc_elapsed(now, mr->dec_us) >= rtt;
}

/* Clamp the rate to [floor, line] and derive the window from it. */
static void mroce_mr_update(struct mroce_cc_state *cc, u64 rate)
{
	struct mroce_mr_priv *mr = mroce_mr_priv(cc);
	u64 pps, w;

	cc->rate_bps = clamp(rate, mroce_cc_min_rate(cc->line_rate_bps),
			     cc->line_rate_bps);
	if (!cc->pkt_bytes || !mr->srtt_us) {
		cc->cwnd_pkts = MROCE_CC_MAX_CWND;
		return;
	}
	pps = div_u64(cc->rate_bps, cc->pkt_bytes * 8);
	/* the queue-free RTT when known: SRTT would grow W with the queue */
	w = DIV_ROUND_UP_ULL(pps * min_t(u32, mr->base_rtt_us ?: mr->srtt_us,
					 USEC_PER_SEC) *
			     MROCE_MR_BDP_MULT, USEC_PER_SEC);
	cc->cwnd_pkts = clamp_t(u64, w, MROCE_CC_MIN_CWND, MROCE_CC_MAX_CWND);
}

static void mroce_mr_init_conn(struct mroce_cc_state *cc, u64 line_rate_bps,
			       u64 hint_bps)
{
	struct mroce_mr_priv *mr = mroce_mr_priv(cc);
	u64 rate;

	memset(cc->priv, 0, sizeof(cc->priv));
	cc->line_rate_bps = line_rate_bps ?: MROCE_CC_DEFAULT_LINE_BPS;
	mr->alpha = MROCE_CC_ONE;	/* react fully to the first mark */
	rate = cc->line_rate_bps;
	if (hint_bps)
		rate = min(rate, hint_bps);
	mroce_mr_update(cc, rate);
}

static void mroce_mr_init(struct mroce_cc_state *cc)
{
	mroce_mr_init_conn(cc, cc->line_rate_bps, 0);
}

/* Count an ACK's packets and marks towards this round's CE fraction. */
static void mroce_mr_count(struct mroce_mr_priv *mr,
			   const struct mroce_cc_ack *ack)
{
	u32 ce = ack->ce_count >= MROCE_CC_CE_SATURATED ? ack->rx_count :
			min(ack->ce_count, ack->rx_count);

	mr->rx_round += ack->rx_count;
	mr->ce_round += ce;
	/* keep the ratio when the sums would overflow */
	if (mr->rx_round >= 1U << 30) {
		mr->rx_round >>= 1;
		mr->ce_round >>= 1;
	}
}

/* End of a round: alpha = (1 - g) alpha + g F, F the round's CE fraction */
static void mroce_mr_alpha(struct mroce_mr_priv *mr)
{
	u32 frac;

	if (!mr->rx_round)
		return;
	frac = div_u64((u64)mr->ce_round << MROCE_CC_SHIFT, mr->rx_round);
	mr->alpha = mr->alpha - (mr->alpha >> MROCE_MR_G_SHIFT) +
		    (frac >> MROCE_MR_G_SHIFT);
	mr->rx_round = 0;
	mr->ce_round = 0;
}

static void mroce_mr_on_ack(struct mroce_cc_state *cc,
			    const struct mroce_cc_ack *ack)
{
	struct mroce_mr_priv *mr = mroce_mr_priv(cc);
	u64 now = ack->now_us, rate = cc->rate_bps, rtt;
	bool ce;

	if (ack->base_rtt_us)
		mr->base_rtt_us = ack->base_rtt_us;
	if (ack->srtt_us)
		mr->srtt_us = ack->srtt_us;
	else if (!mr->srtt_us && ack->rtt_us)
		mr->srtt_us = ack->rtt_us;
	rtt = mroce_mr_rtt(mr);
	if (!(mr->flags & MROCE_MR_F_ROUND)) {
		mr->round_us = now;
		mr->flags |= MROCE_MR_F_ROUND;
	}

	mroce_mr_count(mr, ack);
	ce = ack->ce_count || ack->echo_ce;
	if (ack->rtt_us && (!mr->rtt_round_min ||
			    ack->rtt_us < mr->rtt_round_min))
		mr->rtt_round_min = ack->rtt_us;

	if (ack->rate_hint_bps) {
		mr->hint_bps = ack->rate_hint_bps;
		mr->hint_us = now;
		mr->flags |= MROCE_MR_F_HINT;
		rate = min(rate, mr->hint_bps);
	}

	if (ce) {
		mroce_mr_congested(mr, now);
		mr->flags |= MROCE_MR_F_MARKED;
		if (mroce_mr_may_cut(mr, now, rtt)) {
			rate -= mul_u64_u32_shr(rate, mr->alpha,
						MROCE_CC_SHIFT + 1);
			mr->dec_us = now;
			mr->flags |= MROCE_MR_F_DEC;
		}
	}

	if (mroce_cc_elapsed(now, mr->round_us) >= rtt) {
		u32 target = ack->qdelay_target_us ?: MROCE_MR_TARGET_QDELAY_US;
		u32 standing = mr->rtt_round_min;

		mr->rtt_round_min = 0;
		cc->qdelay_us = standing && ack->min_rtt_us &&
				standing > ack->min_rtt_us ?
				standing - ack->min_rtt_us : 0;
		if (standing && ack->min_rtt_us &&
		    standing > ack->min_rtt_us + target) {
			u32 qdelay = min_t(u32, standing - ack->min_rtt_us,
					   USEC_PER_SEC);

			mroce_mr_congested(mr, now);
			mr->flags |= MROCE_MR_F_MARKED;
			if (mroce_mr_may_cut(mr, now, rtt)) {
				rate -= mul_u64_u32_div(rate, qdelay - target,
							2 * qdelay);
				mr->dec_us = now;
				mr->flags |= MROCE_MR_F_DEC;
			}
		}
		mroce_mr_alpha(mr);
		if (!(mr->flags & MROCE_MR_F_MARKED)) {
			u64 cap = cc->line_rate_bps;

			if (mroce_mr_hint_fresh(mr, now))
				cap = min(cap, mr->hint_bps);
			if (rate < cap)
				rate = min(rate + div_u64(cc->line_rate_bps,
							  MROCE_MR_AI_DIV),
					   cap);
		}
		mr->round_us = now;
		mr->flags &= ~MROCE_MR_F_MARKED;
	}
	mroce_mr_update(cc, rate);
}

static void mroce_mr_on_loss(struct mroce_cc_state *cc, u32 lost_pkts,
			     bool timeout, u64 now_us, u32 path)
{
	struct mroce_mr_priv *mr = mroce_mr_priv(cc);
	u64 rate = cc->rate_bps;

	if (!lost_pkts && !timeout)
		return;
	/* random loss: the link, not a queue; retransmission is enough */
	if (!timeout && (!(mr->flags & MROCE_MR_F_CONG) ||
			 mroce_cc_elapsed(now_us, mr->cong_us) >
				MROCE_MR_CONG_SRTTS * mroce_mr_rtt(mr)))
		return;
	if (!(mr->flags & MROCE_MR_F_LOSS) ||
	    mroce_cc_elapsed(now_us, mr->loss_us) >= mroce_mr_rtt(mr)) {
		rate = mul_u64_u32_div(rate, MROCE_MR_LOSS_NUM,
				       MROCE_MR_LOSS_DEN);
		mr->loss_us = now_us;
		mr->flags |= MROCE_MR_F_LOSS;
	}
	if (timeout)
		rate /= 2;
	if (!(mr->flags & MROCE_MR_F_ROUND)) {
		mr->round_us = now_us;
		mr->flags |= MROCE_MR_F_ROUND;
	}
	mr->flags |= MROCE_MR_F_MARKED;
	mroce_mr_update(cc, rate);
}

struct mroce_cc_ops mroce_cc_metaroce = {
	.name = "metaroce",
	.owner = THIS_MODULE,
	.init = mroce_mr_init,
	.init_conn = mroce_mr_init_conn,
	.on_ack = mroce_mr_on_ack,
	.on_loss = mroce_mr_on_loss,
	.path_windows = true,
};
