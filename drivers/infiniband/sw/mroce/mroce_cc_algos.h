/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Parameters and private state of the built-in congestion-control
 * algorithms ("metaroce", "dcqcn"), shared by their files and the KUnit
 * suite mroce_cc.  Users of the framework only need mroce_cc.h.
 *
 * All arithmetic is integer: rates in bit/s (u64), times in microseconds,
 * fractions in fixed point with MROCE_CC_ONE = 1.0.
 */
#ifndef MROCE_CC_ALGOS_H
#define MROCE_CC_ALGOS_H

#include <linux/bits.h>
#include <linux/build_bug.h>
#include <linux/minmax.h>
#include <linux/types.h>

#include "mroce_cc.h"

#define MROCE_CC_SHIFT		20
#define MROCE_CC_ONE		BIT(MROCE_CC_SHIFT)

/* Rate floor: a connection always gets some packets through. */
#define MROCE_CC_MIN_RATE_BPS	10000000ULL	/* 10 Mbit/s */
/* The smallest connection window a rate may be turned into. */
#define MROCE_CC_MIN_CWND	8
/* Round length before the first RTT sample. */
#define MROCE_CC_DEFAULT_RTT_US	100
/* ce_count saturates here on the wire: "fully marked". */
#define MROCE_CC_CE_SATURATED	65535

/* --- "metaroce": Documentation/metaroce-spec.rst, reference algorithm -- */

#define MROCE_MR_G_SHIFT	4	/* DCTCP gain g = 1/16 */
#define MROCE_MR_TARGET_QDELAY_US 25	/* delay signal threshold */
#define MROCE_MR_AI_DIV		64	/* additive increase: line / 64 per RTT */
#define MROCE_MR_LOSS_NUM	4	/* loss: R x 4/5, once per RTT */
#define MROCE_MR_LOSS_DEN	5
#define MROCE_MR_HINT_SRTTS	4	/* a hint caps increases this long */
#define MROCE_MR_BDP_MULT	2	/* window: this many rate x SRTT */

#define MROCE_MR_F_ROUND	BIT(0)	/* round_us is valid */
#define MROCE_MR_F_MARKED	BIT(1)	/* congestion seen in this round */
#define MROCE_MR_F_DEC		BIT(2)	/* dec_us is valid */
#define MROCE_MR_F_LOSS		BIT(3)	/* loss_us is valid */
#define MROCE_MR_F_HINT		BIT(4)	/* hint_bps/hint_us are valid */
#define MROCE_MR_F_CONG		BIT(5)	/* cong_us is valid */
#define MROCE_MR_CONG_SRTTS	2	/* a loss this close to CE/delay is congestion */

struct mroce_mr_priv {
	u64 hint_bps;		/* latest rate hint H */
	u64 hint_us;		/* when it arrived */
	u64 round_us;		/* start of the current increase round */
	u64 dec_us;		/* last decrease on CE or delay */
	u64 loss_us;		/* last decrease on loss */
	u64 cong_us;		/* last CE or delay signal */
	u32 alpha;		/* EWMA of the CE fraction, MROCE_CC_ONE = 1 */
	u32 rx_round;		/* packets reported in this round */
	u32 ce_round;		/* of which CE-marked */
	u32 srtt_us;		/* latest connection SRTT, 0 = none yet */
	u32 base_rtt_us;	/* latest base RTT, 0 = none: SRTT sizes W */
	u32 rtt_round_min;	/* smallest RTT sample of the round, 0 = none */
	u32 flags;		/* MROCE_MR_F_* */
};

/* --- "dcqcn": Zhu et al., SIGCOMM 2015, reaction point --------------- */

#define MROCE_DCQCN_G_SHIFT	8	/* g = 1/256 */
#define MROCE_DCQCN_CNP_US	50	/* at most one reaction per 50 us */
#define MROCE_DCQCN_ALPHA_US	55	/* alpha decay period K */
#define MROCE_DCQCN_TIMER_US	55	/* rate increase timer period T */
#define MROCE_DCQCN_BYTES	(10U << 20)	/* byte counter B = 10 MiB */
#define MROCE_DCQCN_F		5	/* fast-recovery rounds */
#define MROCE_DCQCN_AI_DIV	1024	/* R_AI = line / 1024 (40 Mbit/s @ 40G) */
#define MROCE_DCQCN_HAI_MULT	10	/* R_HAI = 10 R_AI */
#define MROCE_DCQCN_MAX_EVENTS	64	/* timer events evaluated per ACK */
#define MROCE_DCQCN_PKT_BYTES	4096	/* byte counter unit if pkt_bytes 0 */

#define MROCE_DCQCN_F_STARTED	BIT(0)	/* alpha_us/timer_us are valid */
#define MROCE_DCQCN_F_CNP	BIT(1)	/* cnp_us is valid */
#define MROCE_DCQCN_F_HINT	BIT(2)	/* hint_bps/hint_us are valid */

struct mroce_dcqcn_priv {
	u64 rt_bps;		/* target rate Rt; Rc is cc->rate_bps */
	u64 cnp_us;		/* last reaction to a congestion notification */
	u64 alpha_us;		/* alpha decay clock */
	u64 timer_us;		/* rate increase timer clock */
	u64 hint_bps;
	u64 hint_us;
	u32 bytes;		/* byte counter, bytes since its last event */
	u32 alpha;		/* MROCE_CC_ONE = 1 */
	u32 srtt_us;
	u16 t_events;		/* timer events since the last CNP */
	u16 bc_events;		/* byte counter events since the last CNP */
	u32 flags;		/* MROCE_DCQCN_F_* */
};

static inline struct mroce_mr_priv *mroce_mr_priv(struct mroce_cc_state *cc)
{
	BUILD_BUG_ON(sizeof(struct mroce_mr_priv) > sizeof(cc->priv));
	return (struct mroce_mr_priv *)cc->priv;
}

static inline struct mroce_dcqcn_priv *mroce_dcqcn_priv(struct mroce_cc_state *cc)
{
	BUILD_BUG_ON(sizeof(struct mroce_dcqcn_priv) > sizeof(cc->priv));
	return (struct mroce_dcqcn_priv *)cc->priv;
}

/* Microseconds from @then to @now; 0 if the clock seems to run backwards. */
static inline u64 mroce_cc_elapsed(u64 now, u64 then)
{
	return now > then ? now - then : 0;
}

/* The rate floor of a connection on a link of @line_bps. */
static inline u64 mroce_cc_min_rate(u64 line_bps)
{
	return min(MROCE_CC_MIN_RATE_BPS, line_bps);
}

#endif /* MROCE_CC_ALGOS_H */
