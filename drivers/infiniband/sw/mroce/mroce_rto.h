/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mroce retransmission timeout: RFC 6298 smoothed RTT estimation.
 *
 * Samples come from the transmission timestamps MetaRoCE packets carry and
 * ACKs echo, so a retransmitted packet yields an unambiguous sample too
 * (no Karn rule needed).  The timeout is SRTT + 4 RTTVAR, doubled for each
 * consecutive expiry, and kept within [min, max]: the floor covers timer
 * granularity, the ceiling keeps recovery well inside the verbs retry
 * budget (timeout x retry_cnt).
 *
 * Pure code: no ib_core dependency (KUnit suite mroce_rto).
 */
#ifndef MROCE_RTO_H
#define MROCE_RTO_H

#include <linux/minmax.h>
#include <linux/types.h>

#define MROCE_RTO_MIN_US	5000	/* above host scheduling jitter */
#define MROCE_RTO_MAX_US	200000
#define MROCE_RTO_INIT_US	10000	/* before the first sample */
#define MROCE_RTO_MAX_BACKOFF	6
#define MROCE_TLP_MIN_US	1000	/* tail probe timeout floor */
/*
 * The tail probe timeout allows the receiver this long to ACK (the spec's
 * ack_delay_allowance, in mroce_tlp_at()'s PTO): the receiver's
 * ack_delay_max (MROCE_ACK_DELAY_MAX_US, 400) and a quarter more for a
 * timer that fires late.  With PTO_min at 1 ms the term never sets the
 * PTO: SRTT + 500 us exceeds 2 SRTT only while SRTT < 500 us, and is
 * then below 1 ms.  It does where a sender lowers PTO_min.
 */
#define MROCE_TLP_ACK_ALLOWANCE_US	500

struct mroce_rto {
	u32 srtt_us;		/* 0: no sample yet */
	u32 rttvar_us;
	u32 min_us;
	u32 max_us;
	u8 backoff;		/* consecutive expiries */
};

static inline void mroce_rto_init(struct mroce_rto *r)
{
	r->srtt_us = 0;
	r->rttvar_us = 0;
	r->min_us = MROCE_RTO_MIN_US;
	r->max_us = MROCE_RTO_MAX_US;
	r->backoff = 0;
}

/* A new round-trip sample (RFC 6298 2.2 and 2.3, alpha 1/8, beta 1/4). */
static inline void mroce_rto_sample(struct mroce_rto *r, u32 rtt_us)
{
	if (!r->srtt_us) {
		r->srtt_us = max(rtt_us, 1U);
		r->rttvar_us = rtt_us / 2;
	} else {
		u32 err = rtt_us > r->srtt_us ? rtt_us - r->srtt_us :
						r->srtt_us - rtt_us;

		r->rttvar_us = r->rttvar_us - r->rttvar_us / 4 + err / 4;
		r->srtt_us = r->srtt_us - r->srtt_us / 8 + rtt_us / 8;
		r->srtt_us = max(r->srtt_us, 1U);
	}
	r->backoff = 0;
}

/* The timeout to arm now, microseconds. */
static inline u32 mroce_rto_us(const struct mroce_rto *r)
{
	u64 rto = r->srtt_us ? r->srtt_us + 4ULL * r->rttvar_us :
			       MROCE_RTO_INIT_US;

	rto = clamp_t(u64, rto, r->min_us, r->max_us);
	return min_t(u64, rto << r->backoff, r->max_us);
}

/* The timer expired: back off (RFC 6298 5.5). */
static inline void mroce_rto_expired(struct mroce_rto *r)
{
	if (r->backoff < MROCE_RTO_MAX_BACKOFF)
		r->backoff++;
}

/* New data was acknowledged: stop backing off. */
static inline void mroce_rto_progress(struct mroce_rto *r)
{
	r->backoff = 0;
}

/*
 * When the tail probe is due (ns, same clock as @now_ns and @rto_at_ns; 0:
 * no probe without an RTT sample):
 *
 *   PTO = max(2 SRTT, SRTT + 4 RTTVAR, SRTT + ack delay allowance, PTO_min)
 *
 * from now, but never after the RTO (@rto_at_ns, 0 if unset).
 *
 * 2 SRTT is RFC 8985's probe timeout.  The variance term is QUIC's (RFC
 * 9002 6.2.1): where round trips vary, an ACK that is merely late is
 * common, and a probe then only costs both ends a packet; measured on
 * TCG guests (round trips 0.4 ms typical, 3 ms at the 99th percentile),
 * 4 to 5 % of an 8-byte ping-pong's packets were probes, all spurious.
 * On a steady fabric RTTVAR is small and 2 SRTT or the floor decides.
 *
 * If the RTO would expire first, the probe takes its place (RFC 8985
 * 7.2): a steady RTT leaves RTTVAR near 0 and RTO = SRTT < 2 SRTT, and
 * without the cap every tail loss would wait for an RTO, which kills a
 * path, halves the rate and backs off.
 */
static inline u64 mroce_tlp_at(const struct mroce_rto *r, u64 now_ns,
			       u64 rto_at_ns)
{
	u64 pto, at;

	if (!r->srtt_us)
		return 0;
	pto = max3(2ULL * r->srtt_us,
		   (u64)r->srtt_us + max(4ULL * r->rttvar_us,
					 (u64)MROCE_TLP_ACK_ALLOWANCE_US),
		   (u64)MROCE_TLP_MIN_US);
	at = now_ns + pto * 1000;
	if (rto_at_ns && rto_at_ns < at)
		at = max(rto_at_ns, now_ns);
	return at;
}

/*
 * The verbs retry budget: a QP without progress for T x (retry_cnt + 1),
 * T = 4.096 us x 2^timeout (the IB local ACK timeout), fails with
 * RETRY_EXC_ERR.  In ns; 0 for timeout 0 (wait forever).
 */
static inline u64 mroce_verbs_retry_ns(u8 timeout, u8 retry_cnt)
{
	if (!timeout)
		return 0;
	return (4096ULL << min_t(u8, timeout, 31)) * (retry_cnt + 1ULL);
}

/*
 * Has a QP spent its verbs retry budget?  Both: @elapsed_ns since the
 * last progress beyond timeout x (retry_cnt + 1), and at least
 * retry_cnt + 1 retransmission timeouts (@rtos) in that time: the
 * transmission and its retry_cnt retries all went unanswered.  The count
 * keeps a host that did not run (a descheduled virtual machine, whose
 * timer then fires once, late) from failing a connection whose peer never
 * had the chance to answer; on a dead link the RTO, at most budget / 8,
 * expires that often within the budget anyway.  Never for timeout 0.
 */
static inline bool mroce_verbs_retry_spent(u64 elapsed_ns, u32 rtos,
					   u8 timeout, u8 retry_cnt)
{
	u64 budget = mroce_verbs_retry_ns(timeout, retry_cnt);

	return budget && elapsed_ns > budget && rtos > retry_cnt;
}

/*
 * The RTO ceiling for a QP: at most an eighth of its verbs retry budget,
 * so a lossy path gets several resends before RETRY_EXC_ERR, within
 * [MROCE_RTO_MIN_US, MROCE_RTO_MAX_US].
 */
static inline u32 mroce_rto_max_for(u8 timeout, u8 retry_cnt)
{
	u64 budget_us = mroce_verbs_retry_ns(timeout, retry_cnt) / 1000;

	if (!budget_us)
		return MROCE_RTO_MAX_US;
	return clamp_t(u64, budget_us / 8, MROCE_RTO_MIN_US, MROCE_RTO_MAX_US);
}

#endif /* MROCE_RTO_H */
