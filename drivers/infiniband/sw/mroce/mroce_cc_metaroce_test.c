// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit suite mroce_cc_metaroce: the exact rate, window and alpha steps of
 * "metaroce".
 *
 * Built as part of mroce_cc_metaroce.c, which includes this file at its end
 * when CONFIG_RDMA_MROCE_KUNIT_TEST is on, so that the cases reach the
 * algorithm's private state and tunables.  The bottleneck simulations of
 * all algorithms are in mroce_cc_test.c.
 */

#include <kunit/test.h>
#include <linux/math64.h>
#include <linux/string.h>

#include "mroce_cc_test.h"

static void mroce_metaroce_test_init(struct kunit *test)
{
	const struct mroce_cc_ops *ops = &mroce_cc_metaroce;
	struct mroce_cc_state cc;

	memset(&cc, 0xa5, sizeof(cc));	/* a previous connection's leftovers */
	cc.line_rate_bps = 0;
	ops->init(&cc);
	KUNIT_EXPECT_EQ(test, cc.line_rate_bps, MROCE_CC_DEFAULT_LINE_BPS);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, MROCE_CC_DEFAULT_LINE_BPS);
	KUNIT_EXPECT_EQ(test, cc.cwnd_pkts, MROCE_CC_MAX_CWND);
	KUNIT_EXPECT_EQ(test, mroce_metaroce_priv(&cc)->alpha, MROCE_CC_ONE);
	KUNIT_EXPECT_EQ(test, mroce_metaroce_priv(&cc)->flags, 0);

	/* start at the last hint received on the connection */
	mroce_cc_init_conn(ops, &cc, 25 * GBPS, 3 * GBPS);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, 3 * GBPS);
	mroce_cc_init_conn(ops, &cc, 25 * GBPS, 30 * GBPS);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, 25 * GBPS);
	/* a hint below the floor: the floor */
	mroce_cc_init_conn(ops, &cc, 25 * GBPS, 1 * MBPS);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, MROCE_CC_MIN_RATE_BPS);
}

static void mroce_metaroce_test_ce_step(struct kunit *test)
{
	const struct mroce_cc_ops *ops = &mroce_cc_metaroce;
	struct mroce_cc_state cc = {};
	u64 line = 64 * GBPS;

	mroce_cc_init_conn(ops, &cc, line, 0);
	/* alpha starts at 1: the first mark halves the rate */
	cc_ack_at(ops, &cc, 1000, 8, 8, 50);
	KUNIT_EXPECT_EQ(test, mroce_metaroce_priv(&cc)->alpha, MROCE_CC_ONE);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, 32 * GBPS);
	/* more marks within the same RTT: no second cut */
	cc_ack_at(ops, &cc, 1010, 8, 0, 50);
	cc_ack_at(ops, &cc, 1049, 8, 8, 50);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, 32 * GBPS);
	KUNIT_EXPECT_EQ(test, mroce_metaroce_priv(&cc)->alpha, MROCE_CC_ONE);
	/*
	 * One RTT later: cut with the alpha of the rounds before (1), then
	 * the round ends: 20 of 32 packets marked,
	 * alpha = 15/16 + 1/16 x 20/32 = 125/128
	 */
	cc_ack_at(ops, &cc, 1050, 8, 4, 50);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, 16 * GBPS);
	KUNIT_EXPECT_EQ(test, mroce_metaroce_priv(&cc)->alpha,
			125 * (MROCE_CC_ONE / 128));
	/*
	 * Next round, 2 of 16 marked: R = 16G x (1 - 125/256),
	 * alpha = 125/128 x 15/16 + 1/16 x 1/8 = 1891/2048
	 */
	cc_ack_at(ops, &cc, 1060, 8, 0, 50);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, 16 * GBPS);
	cc_ack_at(ops, &cc, 1100, 8, 2, 50);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, 16 * GBPS / 256 * 131);
	KUNIT_EXPECT_EQ(test, mroce_metaroce_priv(&cc)->alpha,
			1891 * (MROCE_CC_ONE / 2048));
}

static void mroce_metaroce_test_increase(struct kunit *test)
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

static void mroce_metaroce_test_once_per_rtt(struct kunit *test)
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

static void mroce_metaroce_test_delay(struct kunit *test)
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
	KUNIT_EXPECT_EQ(test, mroce_metaroce_priv(&cc)->flags & MROCE_METAROCE_F_DEC,
			MROCE_METAROCE_F_DEC);
	KUNIT_EXPECT_LT(test, cc.rate_bps, 75 * GBPS);
}

static void mroce_metaroce_test_loss(struct kunit *test)
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

static void mroce_metaroce_test_hint(struct kunit *test)
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

static void mroce_metaroce_test_window(struct kunit *test)
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
	KUNIT_EXPECT_EQ(test, cc.cwnd_pkts, mroce_metaroce_min_cwnd);
	cc_ack_at(ops, &cc, 400, 8, 0, 100000);
	KUNIT_EXPECT_EQ(test, cc.cwnd_pkts, MROCE_CC_MAX_CWND);
}

static void mroce_metaroce_test_saturated(struct kunit *test)
{
	const struct mroce_cc_ops *ops = &mroce_cc_metaroce;
	struct mroce_cc_state cc = {};
	int i;

	mroce_cc_init_conn(ops, &cc, 100 * GBPS, 0);
	/* 64 clean rounds: alpha (15/16)^64 */
	for (i = 0; i <= 64; i++)
		cc_ack_at(ops, &cc, i * 10, 8, 0, 10);
	KUNIT_EXPECT_LT(test, mroce_metaroce_priv(&cc)->alpha, MROCE_CC_ONE / 32);
	/* ce_count 65535: saturated, fully marked whatever rx_count says */
	cc_ack_at(ops, &cc, 650, 10, 65535, 10);
	KUNIT_EXPECT_GE(test, mroce_metaroce_priv(&cc)->alpha, MROCE_CC_ONE / 16);
	KUNIT_EXPECT_LT(test, mroce_metaroce_priv(&cc)->alpha,
			MROCE_CC_ONE / 16 + MROCE_CC_ONE / 32);
	/* a round of only unsolicited ACKs (rx_count 0) leaves alpha alone */
	i = mroce_metaroce_priv(&cc)->alpha;
	cc_ack_at(ops, &cc, 660, 0, 0, 10);
	cc_ack_at(ops, &cc, 670, 0, 0, 10);
	KUNIT_EXPECT_EQ(test, mroce_metaroce_priv(&cc)->alpha, i);
}

static struct kunit_case mroce_metaroce_cases[] = {
	KUNIT_CASE(mroce_metaroce_test_init),
	KUNIT_CASE(mroce_metaroce_test_ce_step),
	KUNIT_CASE(mroce_metaroce_test_increase),
	KUNIT_CASE(mroce_metaroce_test_once_per_rtt),
	KUNIT_CASE(mroce_metaroce_test_delay),
	KUNIT_CASE(mroce_metaroce_test_loss),
	KUNIT_CASE(mroce_metaroce_test_hint),
	KUNIT_CASE(mroce_metaroce_test_window),
	KUNIT_CASE(mroce_metaroce_test_saturated),
	{}
};

static struct kunit_suite mroce_metaroce_suite = {
	.name = "mroce_cc_metaroce",
	.test_cases = mroce_metaroce_cases,
};

kunit_test_suite(mroce_metaroce_suite);
