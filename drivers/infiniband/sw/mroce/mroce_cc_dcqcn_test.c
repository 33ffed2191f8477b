// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit suite mroce_cc_dcqcn: the exact rate, target-rate and alpha steps
 * of "dcqcn".
 *
 * Built as part of mroce_cc_dcqcn.c, which includes this file at its end
 * when CONFIG_RDMA_MROCE_KUNIT_TEST is on, so that the cases reach the
 * algorithm's private state and tunables.  The bottleneck simulations of
 * all algorithms are in mroce_cc_test.c.
 */

#include <kunit/test.h>
#include <linux/math64.h>
#include <linux/string.h>

#include "mroce_cc_test.h"

static void mroce_dcqcn_test_cnp(struct kunit *test)
{
	const struct mroce_cc_ops *ops = &mroce_cc_dcqcn;
	struct mroce_cc_state cc = {};
	struct mroce_dcqcn *d = mroce_dcqcn_priv(&cc);
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

static void mroce_dcqcn_test_recovery(struct kunit *test)
{
	const struct mroce_cc_ops *ops = &mroce_cc_dcqcn;
	struct mroce_cc_state cc = {};
	struct mroce_dcqcn *d = mroce_dcqcn_priv(&cc);
	u64 line = 64 * GBPS, ai = line / mroce_dcqcn_ai_div, rc, rt;
	int i;

	mroce_cc_init_conn(ops, &cc, line, 0);
	cc_ack_at(ops, &cc, 0, 4, 4, 30);
	cc_ack_at(ops, &cc, 50, 4, 4, 30);	/* Rt 32G, Rc 16G */
	rc = line / 4;
	rt = line / 2;
	/* F = 5 timer events of fast recovery: Rc halfway to Rt each */
	for (i = 1; i <= mroce_dcqcn_f; i++) {
		cc_ack_at(ops, &cc, 50 + i * 55, 1, 0, 30);
		rc = (rt + rc) / 2;
		KUNIT_EXPECT_EQ(test, cc.rate_bps, rc);
		KUNIT_EXPECT_EQ(test, d->rt_bps, rt);
		KUNIT_EXPECT_EQ(test, d->t_events, i);
	}
	/* then additive increase: Rt += R_AI */
	for (i = 1; i <= 3; i++) {
		cc_ack_at(ops, &cc, 50 + (mroce_dcqcn_f + i) * 55, 1, 0, 30);
		rt += ai;
		rc = (rt + rc) / 2;
		KUNIT_EXPECT_EQ(test, d->rt_bps, rt);
		KUNIT_EXPECT_EQ(test, cc.rate_bps, rc);
	}
	/* several periods between two ACKs: one event each */
	cc_ack_at(ops, &cc, 50 + (mroce_dcqcn_f + 3) * 55 + 3 * 55 + 20, 1, 0,
		  30);
	for (i = 0; i < 3; i++) {
		rt += ai;
		rc = (rt + rc) / 2;
	}
	KUNIT_EXPECT_EQ(test, d->rt_bps, rt);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, rc);
}

static void mroce_dcqcn_test_hyper(struct kunit *test)
{
	const struct mroce_cc_ops *ops = &mroce_cc_dcqcn;
	struct mroce_cc_state cc = {};
	struct mroce_dcqcn *d = mroce_dcqcn_priv(&cc);
	u64 line = 64 * GBPS, ai = line / mroce_dcqcn_ai_div, rt;
	u32 per_event = mroce_dcqcn_bytes / 4096;
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
		rt += mroce_dcqcn_hai_mult * ai;
		KUNIT_EXPECT_EQ(test, d->rt_bps, rt);
	}
	/* T = 8 too: 3 R_HAI per event */
	t = 100 + 8 * 55;
	cc_ack_at(ops, &cc, t, 0, 0, 30);
	rt += 2 * 2 * mroce_dcqcn_hai_mult * ai;
	KUNIT_EXPECT_EQ(test, d->t_events, 8);
	KUNIT_EXPECT_EQ(test, d->rt_bps, rt);
	{
		struct mroce_cc_ack a = cc_ack(++t, per_event, 0, 30);

		ops->on_ack(&cc, &a);
		rt += 3 * mroce_dcqcn_hai_mult * ai;
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

static void mroce_dcqcn_test_alpha(struct kunit *test)
{
	const struct mroce_cc_ops *ops = &mroce_cc_dcqcn;
	struct mroce_cc_state cc = {};
	struct mroce_dcqcn *d = mroce_dcqcn_priv(&cc);
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

static void mroce_dcqcn_test_hint_loss(struct kunit *test)
{
	const struct mroce_cc_ops *ops = &mroce_cc_dcqcn;
	struct mroce_cc_state cc = {};
	struct mroce_dcqcn *d = mroce_dcqcn_priv(&cc);
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

static struct kunit_case mroce_dcqcn_cases[] = {
	KUNIT_CASE(mroce_dcqcn_test_cnp),
	KUNIT_CASE(mroce_dcqcn_test_recovery),
	KUNIT_CASE(mroce_dcqcn_test_hyper),
	KUNIT_CASE(mroce_dcqcn_test_alpha),
	KUNIT_CASE(mroce_dcqcn_test_hint_loss),
	{}
};

static struct kunit_suite mroce_dcqcn_suite = {
	.name = "mroce_cc_dcqcn",
	.test_cases = mroce_dcqcn_cases,
};

kunit_test_suite(mroce_dcqcn_suite);
