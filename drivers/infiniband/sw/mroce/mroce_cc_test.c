// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit suite for the congestion-control algorithms "metaroce", "dcqcn"
 * and "none" (mroce_cc*.c): exact rate and window steps, then senders
 * sharing a bottleneck in a small discrete-time simulation (1 us steps)
 * with ECN marking, paced by mroce_pace.h and, where asked, capped by
 * rate hints from the receiver model of mroce_ratehint.c.
 */

#include <kunit/test.h>
#include <linux/math64.h>

#include "mroce_cc_algos.h"
#include "mroce_pace.h"
#include "mroce_ratehint.h"

#define GBPS		1000000000ULL
#define MBPS		1000000ULL

static struct mroce_cc_ack cc_ack(u64 now, u32 rx, u32 ce, u32 srtt)
{
	struct mroce_cc_ack a = {
		.now_us = now,
		.acked_pkts = rx,
		.rx_count = rx,
		.ce_count = ce,
		.echo_ce = ce > 0,
		.rtt_us = srtt,
		.srtt_us = srtt,
		.min_rtt_us = srtt,
	};

	return a;
}

static void cc_ack_at(const struct mroce_cc_ops *ops, struct mroce_cc_state *cc,
		      u64 now, u32 rx, u32 ce, u32 srtt)
{
	struct mroce_cc_ack a = cc_ack(now, rx, ce, srtt);

	ops->on_ack(cc, &a);
}

/* ---- none ------------------------------------------------------------ */

static void mroce_cc_test_none(struct kunit *test)
{
	const struct mroce_cc_ops *ops = &mroce_cc_none;
	struct mroce_cc_state cc = {};

	mroce_cc_init_conn(ops, &cc, 25 * GBPS, 5 * GBPS);
	KUNIT_EXPECT_EQ(test, cc.cwnd_pkts, MROCE_CC_MAX_CWND);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, 0);
	KUNIT_EXPECT_EQ(test, cc.line_rate_bps, 25 * GBPS);
	KUNIT_EXPECT_TRUE(test, !ops->on_ack && !ops->on_loss);
}

/* ---- metaroce: exact steps --------------------------------------------- */

static void mroce_cc_test_mr_init(struct kunit *test)
{
	const struct mroce_cc_ops *ops = &mroce_cc_metaroce;
	struct mroce_cc_state cc;

	memset(&cc, 0xa5, sizeof(cc));	/* a previous connection's leftovers */
	cc.line_rate_bps = 0;
	ops->init(&cc);
	KUNIT_EXPECT_EQ(test, cc.line_rate_bps, MROCE_CC_DEFAULT_LINE_BPS);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, MROCE_CC_DEFAULT_LINE_BPS);
	KUNIT_EXPECT_EQ(test, cc.cwnd_pkts, MROCE_CC_MAX_CWND);
	KUNIT_EXPECT_EQ(test, mroce_mr_priv(&cc)->alpha, MROCE_CC_ONE);
	KUNIT_EXPECT_EQ(test, mroce_mr_priv(&cc)->flags, 0);

	/* start at the last hint from this peer */
	mroce_cc_init_conn(ops, &cc, 25 * GBPS, 3 * GBPS);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, 3 * GBPS);
	mroce_cc_init_conn(ops, &cc, 25 * GBPS, 30 * GBPS);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, 25 * GBPS);
	/* a hint below the floor: the floor */
	mroce_cc_init_conn(ops, &cc, 25 * GBPS, 1 * MBPS);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, MROCE_CC_MIN_RATE_BPS);
}

static void mroce_cc_test_mr_ce_step(struct kunit *test)
{
	const struct mroce_cc_ops *ops = &mroce_cc_metaroce;
	struct mroce_cc_state cc = {};
	u64 line = 64 * GBPS;

	mroce_cc_init_conn(ops, &cc, line, 0);
	/* alpha starts at 1: the first mark halves the rate */
	cc_ack_at(ops, &cc, 1000, 8, 8, 50);
	KUNIT_EXPECT_EQ(test, mroce_mr_priv(&cc)->alpha, MROCE_CC_ONE);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, 32 * GBPS);
	/* more marks within the same RTT: no second cut */
	cc_ack_at(ops, &cc, 1010, 8, 0, 50);
	cc_ack_at(ops, &cc, 1049, 8, 8, 50);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, 32 * GBPS);
	KUNIT_EXPECT_EQ(test, mroce_mr_priv(&cc)->alpha, MROCE_CC_ONE);
	/*
	 * One RTT later: cut with the alpha of the rounds before (1), then
	 * the round ends: 20 of 32 packets marked,
	 * alpha = 15/16 + 1/16 x 20/32 = 125/128
	 */
	cc_ack_at(ops, &cc, 1050, 8, 4, 50);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, 16 * GBPS);
	KUNIT_EXPECT_EQ(test, mroce_mr_priv(&cc)->alpha,
			125 * (MROCE_CC_ONE / 128));
	/*
	 * Next round, 2 of 16 marked: R = 16G x (1 - 125/256),
	 * alpha = 125/128 x 15/16 + 1/16 x 1/8 = 1891/2048
	 */
	cc_ack_at(ops, &cc, 1060, 8, 0, 50);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, 16 * GBPS);
	cc_ack_at(ops, &cc, 1100, 8, 2, 50);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, 16 * GBPS / 256 * 131);
	KUNIT_EXPECT_EQ(test, mroce_mr_priv(&cc)->alpha,
			1891 * (MROCE_CC_ONE / 2048));
}

static void mroce_cc_test_mr_increase(struct kunit *test)
{
	const struct mroce_cc_ops *ops = &mroce_cc_metaroce;
	struct mroce_cc_state cc = {};
	u64 line = 64 * GBPS, t;

	mroce_cc_init_conn(ops, &cc, line, 0);
	cc_ack_at(ops, &cc, 0, 8, 8, 50);	/* round 1 starts marked */
	KUNIT_EXPECT_EQ(test, cc.rate_bps, 32 * GBPS);
	/* ACKs every 10 us, SRTT 50 us, no marks: +line/64 per round */
	for (t = 10; t <= 50; t += 10)
		cc_ack_at(ops, &cc, t, 8, 0, 50);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, 32 * GBPS);	/* marked round */
	for (t = 60; t <= 550; t += 10)
		cc_ack_at(ops, &cc, t, 8, 0, 50);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, 32 * GBPS + 10 * GBPS);
	/* up to the line rate, not beyond */
	for (t = 560; t <= 5000; t += 10)
		cc_ack_at(ops, &cc, t, 8, 0, 50);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, line);
}

static void mroce_cc_test_mr_once_per_rtt(struct kunit *test)
{
	const struct mroce_cc_ops *ops = &mroce_cc_metaroce;
	struct mroce_cc_state cc = {};
	int cuts = 0;
	u64 prev, t;

	mroce_cc_init_conn(ops, &cc, 100 * GBPS, 0);
	prev = cc.rate_bps;
	/* every ACK marked, one per 5 us, SRTT 50 us, for 500 us */
	for (t = 0; t < 500; t += 5) {
		cc_ack_at(ops, &cc, t, 4, 4, 50);
		KUNIT_EXPECT_LE(test, cc.rate_bps, prev);
		if (cc.rate_bps < prev)
			cuts++;
		prev = cc.rate_bps;
	}
	KUNIT_EXPECT_EQ(test, cuts, 10);
	/* ... and ending at the floor, not below */
	for (; t < 100000; t += 5)
		cc_ack_at(ops, &cc, t, 4, 4, 50);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, MROCE_CC_MIN_RATE_BPS);
}

static void mroce_cc_test_mr_delay(struct kunit *test)
{
	const struct mroce_cc_ops *ops = &mroce_cc_metaroce;
	struct mroce_cc_state cc = {};
	struct mroce_cc_ack a = cc_ack(100, 8, 0, 100);

	mroce_cc_init_conn(ops, &cc, 100 * GBPS, 0);
	/* a round (SRTT 100) whose smallest sample is at target: nothing */
	a.min_rtt_us = 75;
	ops->on_ack(&cc, &a);		/* the round starts at 100 */
	a.now_us = 200;
	a.rtt_us = 400;
	ops->on_ack(&cc, &a);		/* ends it: min sample 100 */
	KUNIT_EXPECT_EQ(test, cc.rate_bps, 100 * GBPS);

	/* one slow sample in a round is jitter, not a queue */
	a.min_rtt_us = 50;
	a.now_us = 250;
	a.rtt_us = 60;
	ops->on_ack(&cc, &a);
	a.now_us = 300;
	a.rtt_us = 2000;
	ops->on_ack(&cc, &a);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, 100 * GBPS);

	/* a standing queue: every sample >= 100, qdelay 50 us, target 25 */
	a.now_us = 350;
	a.rtt_us = 120;
	ops->on_ack(&cc, &a);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, 100 * GBPS);	/* not before the round ends */
	a.now_us = 400;
	a.rtt_us = 100;
	ops->on_ack(&cc, &a);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, 75 * GBPS);	/* R x (1 - 25 / 100) */

	/* no min_rtt (the transport turned the signal off): a clean round */
	a.min_rtt_us = 0;
	a.rtt_us = 500;
	a.now_us = 450;
	ops->on_ack(&cc, &a);
	a.now_us = 600;
	ops->on_ack(&cc, &a);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, 75 * GBPS + 100 * GBPS / 64);

	/* the transport's target: 300 us of standing delay under 400 */
	a.min_rtt_us = 100;
	a.qdelay_target_us = 400;
	a.rtt_us = 400;
	a.now_us = 650;
	ops->on_ack(&cc, &a);
	a.now_us = 800;
	ops->on_ack(&cc, &a);
	KUNIT_EXPECT_GE(test, cc.rate_bps, 75 * GBPS);
	/* and 900 us over it: R x (1 - 500 / 1800) */
	a.rtt_us = 1000;
	a.now_us = 850;
	ops->on_ack(&cc, &a);
	a.now_us = 1000;
	ops->on_ack(&cc, &a);
	KUNIT_EXPECT_EQ(test, mroce_mr_priv(&cc)->flags & MROCE_MR_F_DEC,
			MROCE_MR_F_DEC);
	KUNIT_EXPECT_LT(test, cc.rate_bps, 75 * GBPS);
}

static void mroce_cc_test_mr_loss(struct kunit *test)
{
	const struct mroce_cc_ops *ops = &mroce_cc_metaroce;
	struct mroce_cc_state cc = {};
	u64 r;

	mroce_cc_init_conn(ops, &cc, 100 * GBPS, 0);
	cc_ack_at(ops, &cc, 0, 8, 0, 50);
	/* no CE, no delay: a random loss, no cut */
	ops->on_loss(&cc, 3, false, 10, 2);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, 100 * GBPS);
	/* a timeout always cuts: x 4/5 x 1/2 */
	ops->on_loss(&cc, 1, true, 50, 5);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, 40 * GBPS);
	/* same RTT, another timeout: only the halving */
	ops->on_loss(&cc, 1, true, 60, 5);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, 20 * GBPS);
	/* nothing lost, no timeout: no-op */
	ops->on_loss(&cc, 0, false, 1000, 0);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, 20 * GBPS);
	/* a random loss does not mark the round: it still increases */
	cc_ack_at(ops, &cc, 1010, 8, 0, 50);
	ops->on_loss(&cc, 1, false, 1020, 0);
	cc_ack_at(ops, &cc, 1070, 8, 0, 50);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, 20 * GBPS + 100 * GBPS / 64);

	/* CE: the loss that follows within 2 SRTT is congestion, x 4/5 */
	cc_ack_at(ops, &cc, 1100, 8, 8, 50);
	r = cc.rate_bps;
	KUNIT_EXPECT_LT(test, r, 20 * GBPS);
	ops->on_loss(&cc, 1, false, 1150, 0);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, r * 4 / 5);
	/* same SRTT: no further loss cut */
	ops->on_loss(&cc, 1, false, 1160, 0);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, r * 4 / 5);
	/* more than 2 SRTT after the CE: random again */
	ops->on_loss(&cc, 1, false, 1201, 0);
	ops->on_loss(&cc, 1, false, 1300, 0);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, r * 4 / 5);

	/* timeouts bottom out at the floor */
	ops->on_loss(&cc, 1, true, 1400, 0);
	ops->on_loss(&cc, 1, true, 1500, 0);
	ops->on_loss(&cc, 1, true, 1600, 0);
	ops->on_loss(&cc, 1, true, 1700, 0);
	ops->on_loss(&cc, 1, true, 1800, 0);
	ops->on_loss(&cc, 1, true, 1900, 0);
	ops->on_loss(&cc, 1, true, 2000, 0);
	ops->on_loss(&cc, 1, true, 2100, 0);
	ops->on_loss(&cc, 1, true, 2200, 0);
	ops->on_loss(&cc, 1, true, 2300, 0);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, MROCE_CC_MIN_RATE_BPS);
}

static void mroce_cc_test_mr_hint(struct kunit *test)
{
	const struct mroce_cc_ops *ops = &mroce_cc_metaroce;
	struct mroce_cc_state cc = {};
	struct mroce_cc_ack a;
	u64 t;

	mroce_cc_init_conn(ops, &cc, 64 * GBPS, 0);
	/* a hint caps at once */
	a = cc_ack(0, 8, 0, 50);
	a.rate_hint_bps = 10 * GBPS;
	ops->on_ack(&cc, &a);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, 10 * GBPS);
	/* a hint above the rate does not raise it */
	a.now_us = 10;
	a.rate_hint_bps = 40 * GBPS;
	ops->on_ack(&cc, &a);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, 10 * GBPS);
	/* ... but lets it grow, up to the hint, while fresh */
	for (t = 20; t <= 2000; t += 10) {
		a.now_us = t;
		a.rate_hint_bps = (u32)t % 100 ? 0 : 12 * GBPS;
		ops->on_ack(&cc, &a);
		KUNIT_EXPECT_LE(test, cc.rate_bps, 12 * GBPS);
	}
	KUNIT_EXPECT_EQ(test, cc.rate_bps, 12 * GBPS);
	/* no hint for 4 SRTT = 200 us: it grows past it */
	for (t = 2010; t <= 2200; t += 10)
		cc_ack_at(ops, &cc, t, 8, 0, 50);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, 12 * GBPS);
	for (t = 2210; t <= 2290; t += 10)
		cc_ack_at(ops, &cc, t, 8, 0, 50);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, 13 * GBPS);
	/* a hint below the floor: the floor */
	a.now_us = 3000;
	a.rate_hint_bps = 1 * MBPS;
	ops->on_ack(&cc, &a);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, MROCE_CC_MIN_RATE_BPS);
}

static void mroce_cc_test_mr_window(struct kunit *test)
{
	const struct mroce_cc_ops *ops = &mroce_cc_metaroce;
	struct mroce_cc_state cc = {};
	struct mroce_cc_ack a;

	mroce_cc_init_conn(ops, &cc, 10 * GBPS, 0);
	cc.pkt_bytes = 4096;
	/* no SRTT yet: the full window */
	a = cc_ack(0, 8, 0, 0);
	ops->on_ack(&cc, &a);
	KUNIT_EXPECT_EQ(test, cc.cwnd_pkts, MROCE_CC_MAX_CWND);
	/* 10 Gbit/s x 50 us = 15.3 packets of 4 KiB, twice that rounded up */
	cc_ack_at(ops, &cc, 10, 8, 0, 50);
	KUNIT_EXPECT_EQ(test, cc.cwnd_pkts, 31);
	/* halved rate, half the window */
	cc_ack_at(ops, &cc, 20, 8, 8, 50);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, 5 * GBPS);
	KUNIT_EXPECT_EQ(test, cc.cwnd_pkts, 16);
	/* never below 8, never above 256 */
	ops->on_loss(&cc, 1, true, 100, 0);
	ops->on_loss(&cc, 1, true, 200, 0);
	ops->on_loss(&cc, 1, true, 300, 0);
	KUNIT_EXPECT_EQ(test, cc.cwnd_pkts, MROCE_CC_MIN_CWND);
	cc_ack_at(ops, &cc, 400, 8, 0, 100000);
	KUNIT_EXPECT_EQ(test, cc.cwnd_pkts, MROCE_CC_MAX_CWND);
}

static void mroce_cc_test_mr_saturated(struct kunit *test)
{
	const struct mroce_cc_ops *ops = &mroce_cc_metaroce;
	struct mroce_cc_state cc = {};
	int i;

	mroce_cc_init_conn(ops, &cc, 100 * GBPS, 0);
	/* 64 clean rounds: alpha (15/16)^64 */
	for (i = 0; i <= 64; i++)
		cc_ack_at(ops, &cc, i * 10, 8, 0, 10);
	KUNIT_EXPECT_LT(test, mroce_mr_priv(&cc)->alpha, MROCE_CC_ONE / 32);
	/* ce_count 65535: saturated, fully marked whatever rx_count says */
	cc_ack_at(ops, &cc, 650, 10, 65535, 10);
	KUNIT_EXPECT_GE(test, mroce_mr_priv(&cc)->alpha, MROCE_CC_ONE / 16);
	KUNIT_EXPECT_LT(test, mroce_mr_priv(&cc)->alpha,
			MROCE_CC_ONE / 16 + MROCE_CC_ONE / 32);
	/* a round of only unsolicited ACKs (rx_count 0) leaves alpha alone */
	i = mroce_mr_priv(&cc)->alpha;
	cc_ack_at(ops, &cc, 660, 0, 0, 10);
	cc_ack_at(ops, &cc, 670, 0, 0, 10);
	KUNIT_EXPECT_EQ(test, mroce_mr_priv(&cc)->alpha, i);
}

/* ---- dcqcn: exact steps ------------------------------------------------ */

static void mroce_cc_test_dcqcn_cnp(struct kunit *test)
{
	const struct mroce_cc_ops *ops = &mroce_cc_dcqcn;
	struct mroce_cc_state cc = {};
	struct mroce_dcqcn_priv *d = mroce_dcqcn_priv(&cc);
	u64 line = 64 * GBPS;

	mroce_cc_init_conn(ops, &cc, line, 0);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, line);
	KUNIT_EXPECT_EQ(test, cc.cwnd_pkts, MROCE_CC_MAX_CWND);
	/* CNP: Rt = Rc, Rc x (1 - alpha/2) with alpha 1, alpha stays 1 */
	cc_ack_at(ops, &cc, 1000, 4, 1, 30);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, line / 2);
	KUNIT_EXPECT_EQ(test, d->rt_bps, line);
	KUNIT_EXPECT_EQ(test, d->alpha, MROCE_CC_ONE);
	/* another within 50 us: ignored */
	cc_ack_at(ops, &cc, 1049, 4, 1, 30);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, line / 2);
	/* at 50 us: Rt = 32G, Rc = 16G */
	cc_ack_at(ops, &cc, 1050, 4, 4, 30);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, line / 4);
	KUNIT_EXPECT_EQ(test, d->rt_bps, line / 2);
	/* ECHO_CE alone is a notification too */
	{
		struct mroce_cc_ack a = cc_ack(1100, 4, 0, 30);

		a.echo_ce = true;
		ops->on_ack(&cc, &a);
		KUNIT_EXPECT_EQ(test, cc.rate_bps, line / 8);
	}
}

static void mroce_cc_test_dcqcn_recovery(struct kunit *test)
{
	const struct mroce_cc_ops *ops = &mroce_cc_dcqcn;
	struct mroce_cc_state cc = {};
	struct mroce_dcqcn_priv *d = mroce_dcqcn_priv(&cc);
	u64 line = 64 * GBPS, ai = line / MROCE_DCQCN_AI_DIV, rc, rt;
	int i;

	mroce_cc_init_conn(ops, &cc, line, 0);
	cc_ack_at(ops, &cc, 0, 4, 4, 30);
	cc_ack_at(ops, &cc, 50, 4, 4, 30);	/* Rt 32G, Rc 16G */
	rc = line / 4;
	rt = line / 2;
	/* F = 5 timer events of fast recovery: Rc halfway to Rt each */
	for (i = 1; i <= MROCE_DCQCN_F; i++) {
		cc_ack_at(ops, &cc, 50 + i * 55, 1, 0, 30);
		rc = (rt + rc) / 2;
		KUNIT_EXPECT_EQ(test, cc.rate_bps, rc);
		KUNIT_EXPECT_EQ(test, d->rt_bps, rt);
		KUNIT_EXPECT_EQ(test, d->t_events, i);
	}
	/* then additive increase: Rt += R_AI */
	for (i = 1; i <= 3; i++) {
		cc_ack_at(ops, &cc, 50 + (MROCE_DCQCN_F + i) * 55, 1, 0, 30);
		rt += ai;
		rc = (rt + rc) / 2;
		KUNIT_EXPECT_EQ(test, d->rt_bps, rt);
		KUNIT_EXPECT_EQ(test, cc.rate_bps, rc);
	}
	/* several periods between two ACKs: one event each */
	cc_ack_at(ops, &cc, 50 + (MROCE_DCQCN_F + 3) * 55 + 3 * 55 + 20, 1, 0,
		  30);
	for (i = 0; i < 3; i++) {
		rt += ai;
		rc = (rt + rc) / 2;
	}
	KUNIT_EXPECT_EQ(test, d->rt_bps, rt);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, rc);
}

static void mroce_cc_test_dcqcn_hyper(struct kunit *test)
{
	const struct mroce_cc_ops *ops = &mroce_cc_dcqcn;
	struct mroce_cc_state cc = {};
	struct mroce_dcqcn_priv *d = mroce_dcqcn_priv(&cc);
	u64 line = 64 * GBPS, ai = line / MROCE_DCQCN_AI_DIV, rt;
	u32 per_event = MROCE_DCQCN_BYTES / 4096;
	u64 t = 0;
	int i;

	mroce_cc_init_conn(ops, &cc, line, 0);
	cc.pkt_bytes = 4096;
	cc_ack_at(ops, &cc, 0, 4, 4, 30);
	cc_ack_at(ops, &cc, 50, 4, 4, 30);
	cc_ack_at(ops, &cc, 100, 4, 4, 30);	/* Rt 16G, Rc 8G */
	rt = line / 4;
	/* 6 timer events (T = 6 > F) without bytes: additive */
	for (i = 1; i <= 6; i++) {
		t = 100 + i * 55;
		cc_ack_at(ops, &cc, t, 0, 0, 30);
	}
	rt += ai;
	KUNIT_EXPECT_EQ(test, d->t_events, 6);
	KUNIT_EXPECT_EQ(test, d->rt_bps, rt);
	/* 5 byte-counter events: T > F, BC <= F: additive */
	for (i = 1; i <= 5; i++) {
		struct mroce_cc_ack a = cc_ack(++t, per_event, 0, 30);

		ops->on_ack(&cc, &a);
		rt += ai;
	}
	KUNIT_EXPECT_EQ(test, d->bc_events, 5);
	KUNIT_EXPECT_EQ(test, d->rt_bps, rt);
	/* BC = 6, T = 6: hyper, Rt += (min(T, BC) - F) R_HAI */
	for (i = 1; i <= 2; i++) {
		struct mroce_cc_ack a = cc_ack(++t, per_event, 0, 30);

		ops->on_ack(&cc, &a);
		rt += MROCE_DCQCN_HAI_MULT * ai;
		KUNIT_EXPECT_EQ(test, d->rt_bps, rt);
	}
	/* T = 8 too: 3 R_HAI per event */
	t = 100 + 8 * 55;
	cc_ack_at(ops, &cc, t, 0, 0, 30);
	rt += 2 * 2 * MROCE_DCQCN_HAI_MULT * ai;
	KUNIT_EXPECT_EQ(test, d->t_events, 8);
	KUNIT_EXPECT_EQ(test, d->rt_bps, rt);
	{
		struct mroce_cc_ack a = cc_ack(++t, per_event, 0, 30);

		ops->on_ack(&cc, &a);
		rt += 3 * MROCE_DCQCN_HAI_MULT * ai;
		KUNIT_EXPECT_EQ(test, d->bc_events, 8);
		KUNIT_EXPECT_EQ(test, d->rt_bps, rt);
	}
	/* capped at the line rate */
	for (i = 0; i < 100; i++) {
		struct mroce_cc_ack a = cc_ack(++t, per_event, 0, 30);

		ops->on_ack(&cc, &a);
	}
	KUNIT_EXPECT_EQ(test, d->rt_bps, line);
	KUNIT_EXPECT_LE(test, cc.rate_bps, line);
	KUNIT_EXPECT_GE(test, cc.rate_bps, line - line / 64);
}

static void mroce_cc_test_dcqcn_alpha(struct kunit *test)
{
	const struct mroce_cc_ops *ops = &mroce_cc_dcqcn;
	struct mroce_cc_state cc = {};
	struct mroce_dcqcn_priv *d = mroce_dcqcn_priv(&cc);
	u32 a, expect;
	int i;

	mroce_cc_init_conn(ops, &cc, 40 * GBPS, 0);
	cc_ack_at(ops, &cc, 0, 4, 4, 30);
	/* one K period: alpha (1 - 1/256) */
	cc_ack_at(ops, &cc, 55, 4, 0, 30);
	KUNIT_EXPECT_EQ(test, d->alpha, MROCE_CC_ONE - MROCE_CC_ONE / 256);
	/* 255 more periods, from elapsed time in one ACK: (255/256)^256 */
	cc_ack_at(ops, &cc, 256 * 55 + 10, 4, 0, 30);
	expect = MROCE_CC_ONE;
	for (i = 0; i < 256; i++)
		expect -= expect / 256;
	a = d->alpha;
	KUNIT_EXPECT_LE(test, a, expect + expect / 1000);
	KUNIT_EXPECT_GE(test, a, expect - expect / 1000);
	/* CNP: alpha = (1 - g) alpha + g */
	cc_ack_at(ops, &cc, 256 * 55 + 20, 4, 4, 30);
	KUNIT_EXPECT_EQ(test, d->alpha,
			a - a / 256 + MROCE_CC_ONE / 256);
	/* idle for a minute: alpha fades away */
	cc_ack_at(ops, &cc, 60000000, 4, 0, 30);
	KUNIT_EXPECT_EQ(test, d->alpha, 0);
}

static void mroce_cc_test_dcqcn_hint_loss(struct kunit *test)
{
	const struct mroce_cc_ops *ops = &mroce_cc_dcqcn;
	struct mroce_cc_state cc = {};
	struct mroce_dcqcn_priv *d = mroce_dcqcn_priv(&cc);
	struct mroce_cc_ack a = cc_ack(0, 4, 0, 30);
	u64 t, rc;
	u32 al;

	mroce_cc_init_conn(ops, &cc, 40 * GBPS, 0);
	a.rate_hint_bps = 8 * GBPS;
	ops->on_ack(&cc, &a);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, 8 * GBPS);
	KUNIT_EXPECT_EQ(test, d->rt_bps, 8 * GBPS);
	/* increases stay under a fresh hint */
	for (t = 10; t < 2000; t += 10) {
		a.now_us = t;
		a.rate_hint_bps = (u32)t % 100 ? 0 : 8 * GBPS;
		ops->on_ack(&cc, &a);
		KUNIT_EXPECT_LE(test, cc.rate_bps, 8 * GBPS);
	}
	/* a loss is a notification (alpha has decayed meanwhile) */
	al = d->alpha;
	KUNIT_EXPECT_LT(test, al, MROCE_CC_ONE);
	ops->on_loss(&cc, 1, false, 2000, 0);
	rc = 8 * GBPS - mul_u64_u32_shr(8 * GBPS, al, MROCE_CC_SHIFT + 1);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, rc);
	KUNIT_EXPECT_EQ(test, d->rt_bps, 8 * GBPS);
	/* a timeout within 50 us of it: only halves */
	ops->on_loss(&cc, 1, true, 2010, 0);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, rc / 2);
	for (t = 2100; t < 2400; t += 100)
		ops->on_loss(&cc, 1, true, t, 0);
	for (t = 2400; t < 3000; t += 100)
		ops->on_loss(&cc, 1, true, t, 0);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, MROCE_CC_MIN_RATE_BPS);
	/* the hint expired: back to the line rate eventually */
	for (t = 3000; t < 200000; t += 10)
		cc_ack_at(ops, &cc, t, 4, 0, 30);
	KUNIT_EXPECT_GE(test, cc.rate_bps, 39 * GBPS);
}

/* ---- a bottleneck simulation --------------------------------------------- */

#define SIM_PKT		4096	/* bytes on the wire */
#define SIM_ACK_EVERY	4
#define SIM_ACK_DELAY	8	/* us: delayed-ACK timer */
#define SIM_QCAP	4096	/* packets: never full (8 x 256 window) */
#define SIM_ACKQ	512
#define SIM_FLOWS	8

struct sim_pkt {
	u64 sent_us;
	u8 flow;
	bool ce;
};

struct sim_ack {
	u64 due_us;
	u64 sent_us;
	u32 rx;
	u32 ce;
	u32 hint_mbps;
	bool echo_ce;
};

struct sim_flow {
	struct mroce_cc_state cc;
	struct mroce_pacer pacer;
	struct mroce_hint_conn rc;
	struct sim_ack ackq[SIM_ACKQ];
	u32 ack_head, ack_tail;
	u64 start_us;
	bool on;
	u32 inflight;
	/* receiver side */
	u32 rx_pend, ce_pend, hint_mbps;
	u64 pend_us, pend_sent_us;
	bool pend_ce;
	/* sender's RTT estimates */
	u32 srtt_us, min_rtt_us;
	u64 delivered;		/* bytes through the bottleneck */
	u64 rate_sum;		/* cc.rate_bps in Mbit/s, summed per us */
};

struct sim {
	const struct mroce_cc_ops *ops;
	int n;
	u64 line_bps;		/* senders' links */
	u64 cap_bps;		/* the bottleneck */
	u32 base_rtt_us;
	u32 kmin, kmax;		/* marking ramp, bytes queued */
	u32 pmax;		/* marking probability at kmax, of 65536 */
	bool hints;
	struct mroce_hint rh;
	struct sim_pkt q[SIM_QCAP];
	u32 q_head, q_len;
	u64 q_bytes;
	s64 drain;		/* bottleneck credit, bit x 10^6 */
	u32 rng;
	u32 drops;
	u64 now;
	struct sim_flow f[SIM_FLOWS];
};

static u32 sim_rand16(struct sim *s)
{
	s->rng = s->rng * 1103515245 + 12345;
	return s->rng >> 16;
}

static struct sim *sim_new(struct kunit *test, const struct mroce_cc_ops *ops,
			   int n, u64 line, u64 cap, u32 rtt)
{
	struct sim *s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	int i;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, s);
	s->ops = ops;
	s->n = n;
	s->line_bps = line;
	s->cap_bps = cap;
	s->base_rtt_us = rtt;
	/* DCTCP-style step marking at K = 32 KiB */
	s->kmin = 32768;
	s->kmax = 32768;
	s->pmax = 65536;
	s->rng = 1;
	mroce_hint_init(&s->rh, div_u64(cap, MBPS), MROCE_HINT_EPOCH_US);
	for (i = 0; i < n; i++)
		mroce_hint_conn_init(&s->f[i].rc);
	return s;
}

static void sim_ack_out(struct sim *s, struct sim_flow *fl)
{
	struct sim_ack *a = &fl->ackq[fl->ack_tail++ % SIM_ACKQ];

	a->due_us = s->now + s->base_rtt_us;
	a->sent_us = fl->pend_sent_us;
	a->rx = fl->rx_pend;
	a->ce = fl->ce_pend;
	a->echo_ce = fl->pend_ce;
	a->hint_mbps = fl->hint_mbps;
	fl->rx_pend = 0;
	fl->ce_pend = 0;
}

/* A packet left the bottleneck and reached the receiver. */
static void sim_deliver(struct sim *s, const struct sim_pkt *p)
{
	struct sim_flow *fl = &s->f[p->flow];

	fl->delivered += SIM_PKT;
	if (!fl->rx_pend)
		fl->pend_us = s->now;
	fl->rx_pend++;
	fl->ce_pend += p->ce;
	fl->pend_sent_us = p->sent_us;
	fl->pend_ce = p->ce;
	if (s->hints)
		fl->hint_mbps = mroce_hint_rx(&s->rh, &fl->rc, SIM_PKT, p->ce,
					      s->now);
	if (fl->rx_pend >= SIM_ACK_EVERY || p->ce)
		sim_ack_out(s, fl);
}

static void sim_sender_ack(struct sim *s, struct sim_flow *fl,
			   const struct sim_ack *sa)
{
	u32 rtt = s->now - sa->sent_us;
	struct mroce_cc_ack a = {};

	fl->srtt_us = fl->srtt_us ? fl->srtt_us - fl->srtt_us / 8 + rtt / 8 :
				    rtt;
	fl->min_rtt_us = fl->min_rtt_us ? min(fl->min_rtt_us, rtt) : rtt;
	fl->inflight -= min(fl->inflight, sa->rx);
	a.now_us = s->now;
	a.acked_pkts = sa->rx;
	a.inflight_pkts = fl->inflight;
	a.rx_count = sa->rx;
	a.ce_count = sa->ce;
	a.echo_ce = sa->echo_ce;
	a.rtt_us = rtt;
	a.srtt_us = fl->srtt_us;
	a.min_rtt_us = fl->min_rtt_us;
	a.rate_hint_bps = (u64)sa->hint_mbps * MBPS;
	if (s->ops->on_ack)
		s->ops->on_ack(&fl->cc, &a);
}

static void sim_send(struct sim *s, struct sim_flow *fl, int idx)
{
	while (fl->inflight < fl->cc.cwnd_pkts &&
	       !mroce_pacer_next_us(&fl->pacer, fl->cc.rate_bps, SIM_PKT,
				    s->now)) {
		struct sim_pkt *p;
		bool ce = false;

		if (s->q_len == SIM_QCAP) {
			s->drops++;
			return;
		}
		if (s->q_bytes >= s->kmax)
			ce = true;
		else if (s->q_bytes > s->kmin)
			ce = sim_rand16(s) < div_u64((u64)s->pmax *
						     (s->q_bytes - s->kmin),
						     s->kmax - s->kmin);
		p = &s->q[(s->q_head + s->q_len++) % SIM_QCAP];
		p->sent_us = s->now;
		p->flow = idx;
		p->ce = ce;
		s->q_bytes += SIM_PKT;
		mroce_pacer_sent(&fl->pacer, fl->cc.rate_bps, SIM_PKT, s->now);
		fl->inflight++;
	}
}

static void sim_step(struct sim *s)
{
	const s64 cost = (s64)SIM_PKT * 8 * 1000000;
	int i, k;

	for (k = 0; k < s->n; k++) {
		struct sim_flow *fl;

		i = (k + (u32)s->now) % s->n;	/* no flow always first */
		fl = &s->f[i];
		if (s->now < fl->start_us)
			continue;
		if (!fl->on) {
			fl->on = true;
			mroce_cc_init_conn(s->ops, &fl->cc, s->line_bps, 0);
			fl->cc.pkt_bytes = SIM_PKT;
			mroce_pacer_init(&fl->pacer);
		}
		while (fl->ack_head != fl->ack_tail &&
		       fl->ackq[fl->ack_head % SIM_ACKQ].due_us <= s->now)
			sim_sender_ack(s, fl,
				       &fl->ackq[fl->ack_head++ % SIM_ACKQ]);
		sim_send(s, fl, i);
		fl->rate_sum += div_u64(fl->cc.rate_bps, MBPS);
	}

	s->drain += s->cap_bps;		/* one microsecond's worth */
	while (s->q_len && s->drain >= cost) {
		struct sim_pkt p = s->q[s->q_head];

		s->q_head = (s->q_head + 1) % SIM_QCAP;
		s->q_len--;
		s->q_bytes -= SIM_PKT;
		s->drain -= cost;
		sim_deliver(s, &p);
	}
	if (!s->q_len)
		s->drain = min(s->drain, cost);

	for (i = 0; i < s->n; i++) {
		struct sim_flow *fl = &s->f[i];

		if (fl->rx_pend && s->now - fl->pend_us >= SIM_ACK_DELAY)
			sim_ack_out(s, fl);
	}
	s->now++;
}

static void sim_run(struct sim *s, u64 until_us)
{
	while (s->now < until_us)
		sim_step(s);
}

/*
 * Throughput (Mbit/s) of each flow over [from, to) and their sum; and,
 * if @rate, each flow's sending rate (Mbit/s) averaged over that time.
 */
static u64 sim_measure(struct sim *s, u64 from, u64 to, u64 *mbps, u64 *rate)
{
	u64 before[SIM_FLOWS], rsum[SIM_FLOWS], sum = 0;
	int i;

	sim_run(s, from);
	for (i = 0; i < s->n; i++) {
		before[i] = s->f[i].delivered;
		rsum[i] = s->f[i].rate_sum;
	}
	sim_run(s, to);
	for (i = 0; i < s->n; i++) {
		mbps[i] = div64_u64((s->f[i].delivered - before[i]) * 8,
				    to - from);
		if (rate)
			rate[i] = div64_u64(s->f[i].rate_sum - rsum[i],
					    to - from);
		sum += mbps[i];
	}
	return sum;
}

/* Jain's fairness index x 1000 */
static u64 sim_jain(const u64 *x, int n)
{
	u64 sum = 0, sq = 0;
	int i;

	for (i = 0; i < n; i++) {
		sum += x[i];
		sq += x[i] * x[i];
	}
	return sq ? div64_u64(sum * sum * 1000, n * sq) : 0;
}

/*
 * Three senders join a bottleneck of capacity C one after another, each
 * starting at the line rate, and send as much as they may.  @settle_us
 * after the last one joined, over @span_us:
 *
 * - without rate hints (ECN and delay only): each one's average sending
 *   rate within 10% of the average of the three (they converged to equal
 *   shares), their throughput fair (Jain > 0.95) and together at least
 *   85% of C.  AIMD leaves the queue empty for part of each sawtooth:
 *   about 90% of C is what it achieves in this model;
 * - with the receiver's rate hints (C is the receiver's link): each
 *   within 10% of C/3 (the hints make it 95% of C/3 exactly), Jain > 0.99.
 */
static void sim_converge(struct kunit *test, const struct mroce_cc_ops *ops,
			 u32 rtt, bool hints, u64 settle_us, u64 span_us)
{
	u64 cap = 25 * GBPS, share = div_u64(cap, 3 * MBPS), mbps[3], rate[3];
	struct sim *s = sim_new(test, ops, 3, 25 * GBPS, cap, rtt);
	const u64 gap = 2000;
	u64 sum, mean;
	int i;

	if (ops == &mroce_cc_dcqcn) {
		/* DCQCN's RED-ECN: 5 KB..200 KB, 1% at Kmax, 100% beyond */
		s->kmin = 5000;
		s->kmax = 200000;
		s->pmax = 655;
	}
	s->hints = hints;
	for (i = 0; i < 3; i++)
		s->f[i].start_us = i * gap;
	sum = sim_measure(s, 2 * gap + settle_us, 2 * gap + settle_us + span_us,
			  mbps, rate);
	kunit_info(test, "%s rtt %u hints %d: rates %llu %llu %llu, throughput %llu %llu %llu Mbit/s, jain %llu/1000\n",
		   ops->name, rtt, hints, rate[0], rate[1], rate[2], mbps[0],
		   mbps[1], mbps[2], sim_jain(mbps, 3));
	mean = div_u64(rate[0] + rate[1] + rate[2], 3);
	for (i = 0; i < 3; i++) {
		if (hints) {
			KUNIT_EXPECT_GE(test, rate[i], share - div_u64(share, 10));
			KUNIT_EXPECT_LE(test, rate[i], share + div_u64(share, 10));
		} else {
			KUNIT_EXPECT_GE(test, rate[i], mean - div_u64(mean, 10));
			KUNIT_EXPECT_LE(test, rate[i], mean + div_u64(mean, 10));
		}
	}
	KUNIT_EXPECT_GT(test, sim_jain(mbps, 3), hints ? 990 : 950);
	KUNIT_EXPECT_GE(test, sum, div_u64(cap * 85, 100 * MBPS));
	KUNIT_EXPECT_EQ(test, s->drops, 0);
}

static void mroce_cc_test_mr_converge(struct kunit *test)
{
	sim_converge(test, &mroce_cc_metaroce, 20, false, 14000, 8000);
	sim_converge(test, &mroce_cc_metaroce, 40, false, 14000, 8000);
	sim_converge(test, &mroce_cc_metaroce, 100, false, 14000, 8000);
	sim_converge(test, &mroce_cc_metaroce, 40, true, 2000, 4000);
}

static void mroce_cc_test_dcqcn_converge(struct kunit *test)
{
	sim_converge(test, &mroce_cc_dcqcn, 20, false, 50000, 80000);
	sim_converge(test, &mroce_cc_dcqcn, 40, false, 50000, 80000);
	sim_converge(test, &mroce_cc_dcqcn, 100, false, 50000, 80000);
	sim_converge(test, &mroce_cc_dcqcn, 40, true, 2000, 4000);
}

static u64 sim_sum_rate(struct sim *s)
{
	u64 sum = 0;
	int i;

	for (i = 0; i < s->n; i++)
		sum += s->f[i].cc.rate_bps;
	return sum;
}

/*
 * Incast: 8 senders start at once at the line rate towards one receiver
 * link.  With the receiver's rate hint the aggregate sending rate is at
 * or below the link's capacity after one RTT plus the time to collect
 * the hints (the first epoch), i.e. within 2-3 RTTs; without it, ECN
 * alone takes several more.
 */
static void mroce_cc_test_incast_hint(struct kunit *test)
{
	const u32 rtt = 40;
	u64 cap = 25 * GBPS, settled[2] = { 0, 0 }, mbps[8], sum;
	int h, i;

	for (h = 1; h >= 0; h--) {
		struct sim *s = sim_new(test, &mroce_cc_metaroce, 8, cap, cap,
					rtt);

		s->hints = h;
		while (s->now < 100 * rtt) {
			sim_step(s);
			if (!settled[h] && sim_sum_rate(s) <= cap)
				settled[h] = s->now;
		}
		kunit_info(test, "hints %d: aggregate <= C after %llu us\n",
			   h, settled[h]);
		if (h) {
			KUNIT_EXPECT_GT(test, settled[h], 0);
			KUNIT_EXPECT_LE(test, settled[h], 3 * rtt);
			/* and stays there, at a fair share of 95% of C */
			for (i = 0; i < 8; i++)
				KUNIT_EXPECT_LE(test, s->f[i].cc.rate_bps,
						div_u64(cap * 95, 800) + MBPS);
		}
		/* then all of them share the link fairly */
		sum = sim_measure(s, 4000, 8000, mbps, NULL);
		KUNIT_EXPECT_GT(test, sim_jain(mbps, 8), 950);
		KUNIT_EXPECT_GE(test, sum, div_u64(cap * (h ? 93 : 85),
						   100 * MBPS));
		KUNIT_EXPECT_EQ(test, s->drops, 0);
	}
	KUNIT_EXPECT_GT(test, settled[0], settled[1]);
}

/* "none": window-limited, unpaced; fills the link, keeps a queue */
static void mroce_cc_test_none_sim(struct kunit *test)
{
	u64 cap = 25 * GBPS, mbps[2], sum;
	struct sim *s = sim_new(test, &mroce_cc_none, 2, cap, cap, 40);

	sum = sim_measure(s, 1000, 3000, mbps, NULL);
	KUNIT_EXPECT_GE(test, sum, div_u64(cap * 95, 100 * MBPS));
	KUNIT_EXPECT_GT(test, s->q_bytes, 256 * SIM_PKT);
}

static struct kunit_case mroce_cc_cases[] = {
	KUNIT_CASE(mroce_cc_test_none),
	KUNIT_CASE(mroce_cc_test_mr_init),
	KUNIT_CASE(mroce_cc_test_mr_ce_step),
	KUNIT_CASE(mroce_cc_test_mr_increase),
	KUNIT_CASE(mroce_cc_test_mr_once_per_rtt),
	KUNIT_CASE(mroce_cc_test_mr_delay),
	KUNIT_CASE(mroce_cc_test_mr_loss),
	KUNIT_CASE(mroce_cc_test_mr_hint),
	KUNIT_CASE(mroce_cc_test_mr_window),
	KUNIT_CASE(mroce_cc_test_mr_saturated),
	KUNIT_CASE(mroce_cc_test_dcqcn_cnp),
	KUNIT_CASE(mroce_cc_test_dcqcn_recovery),
	KUNIT_CASE(mroce_cc_test_dcqcn_hyper),
	KUNIT_CASE(mroce_cc_test_dcqcn_alpha),
	KUNIT_CASE(mroce_cc_test_dcqcn_hint_loss),
	KUNIT_CASE(mroce_cc_test_mr_converge),
	KUNIT_CASE(mroce_cc_test_dcqcn_converge),
	KUNIT_CASE(mroce_cc_test_incast_hint),
	KUNIT_CASE(mroce_cc_test_none_sim),
	{}
};

static struct kunit_suite mroce_cc_suite = {
	.name = "mroce_cc",
	.test_cases = mroce_cc_cases,
};

kunit_test_suite(mroce_cc_suite);
