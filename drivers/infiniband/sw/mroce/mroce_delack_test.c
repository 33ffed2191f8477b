// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit suite for the delayed ACK's deadline and the ACK's counts
 * (mroce_delack.h).
 */

#include <kunit/test.h>

#include "mroce_delack.h"

/* @n arrivals @gap_us apart from @t0; returns the last arrival's time */
static u32 mroce_delack_test_stream(struct mroce_delack *d, u32 t0,
				    u32 gap_us, int n)
{
	int i;

	for (i = 0; i < n; i++)
		mroce_delack_arrival(d, t0 + i * gap_us);
	return t0 + (n - 1) * gap_us;
}

static void mroce_delack_test_initial(struct kunit *test)
{
	struct mroce_delack d;

	mroce_delack_init(&d, 8);
	/* before a gap is measured: the floor */
	KUNIT_EXPECT_EQ(test, mroce_delack_us(&d), MROCE_ACK_DELAY_MIN_US);
	mroce_delack_arrival(&d, 1000);
	KUNIT_EXPECT_EQ(test, mroce_delack_us(&d), MROCE_ACK_DELAY_MIN_US);
}

static void mroce_delack_test_fast_stream(struct kunit *test)
{
	struct mroce_delack d;

	/* 2 us a packet (hardware, a fast host): 8 packets in 16 us */
	mroce_delack_init(&d, 8);
	mroce_delack_test_stream(&d, 5000, 2, 200);
	KUNIT_EXPECT_EQ(test, mroce_delack_us(&d), MROCE_ACK_DELAY_MIN_US);
}

static void mroce_delack_test_slow_stream(struct kunit *test)
{
	struct mroce_delack d;
	u32 us;

	/*
	 * 30 us a packet (a guest under TCG): 8 packets take 240 us, past
	 * the floor; the deadline is half as much again, so the cadence
	 * answers a steady stream before the timer does.
	 */
	mroce_delack_init(&d, 8);
	mroce_delack_test_stream(&d, 5000, 30, 200);
	us = mroce_delack_us(&d);
	KUNIT_EXPECT_GE(test, us, 350U);
	KUNIT_EXPECT_LE(test, us, 370U);
	KUNIT_EXPECT_GT(test, us, 8U * 30);
}

static void mroce_delack_test_ceiling(struct kunit *test)
{
	struct mroce_delack d;

	/* one packet every 10 ms: never beyond ack_delay_max */
	mroce_delack_init(&d, 8);
	mroce_delack_test_stream(&d, 5000, 10000, 50);
	KUNIT_EXPECT_EQ(test, mroce_delack_us(&d), MROCE_ACK_DELAY_MAX_US);
	/* nor with an ACK per packet */
	mroce_delack_init(&d, 1);
	mroce_delack_test_stream(&d, 5000, 10000, 50);
	KUNIT_EXPECT_EQ(test, mroce_delack_us(&d), MROCE_ACK_DELAY_MAX_US);
	/* the allowance the sender's tail probe gives covers it */
	KUNIT_EXPECT_LT(test, MROCE_ACK_DELAY_MAX_US, 500);
}

static void mroce_delack_test_idle_gap(struct kunit *test)
{
	struct mroce_delack d;
	u32 t;

	/* a fast stream that pauses for a second and resumes */
	mroce_delack_init(&d, 8);
	t = mroce_delack_test_stream(&d, 5000, 2, 200);
	mroce_delack_arrival(&d, t + 1000000);
	/* the pause counts as ack_delay_max: the deadline rises, capped */
	KUNIT_EXPECT_GT(test, mroce_delack_us(&d), MROCE_ACK_DELAY_MIN_US);
	KUNIT_EXPECT_LE(test, mroce_delack_us(&d), MROCE_ACK_DELAY_MAX_US);
	/* and a few dozen fast packets bring it back to the floor */
	mroce_delack_test_stream(&d, t + 1000002, 2, 24);
	KUNIT_EXPECT_EQ(test, mroce_delack_us(&d), MROCE_ACK_DELAY_MIN_US);
}

static void mroce_delack_test_adapts_down(struct kunit *test)
{
	struct mroce_delack d;
	u32 t;

	/* a slow stream turns fast: the deadline follows to the floor */
	mroce_delack_init(&d, 8);
	t = mroce_delack_test_stream(&d, 5000, 40, 100);
	KUNIT_EXPECT_EQ(test, mroce_delack_us(&d), MROCE_ACK_DELAY_MAX_US);
	mroce_delack_test_stream(&d, t + 2, 2, 100);
	KUNIT_EXPECT_EQ(test, mroce_delack_us(&d), MROCE_ACK_DELAY_MIN_US);
}

static void mroce_delack_test_clock_wrap(struct kunit *test)
{
	struct mroce_delack d;

	/* the 32-bit microsecond clock wraps every 71 minutes */
	mroce_delack_init(&d, 8);
	mroce_delack_test_stream(&d, U32_MAX - 3000, 30, 200);
	KUNIT_EXPECT_GE(test, mroce_delack_us(&d), 350U);
	KUNIT_EXPECT_LE(test, mroce_delack_us(&d), 370U);
}

static void mroce_delack_test_batch(struct kunit *test)
{
	struct mroce_delack d;
	u32 t = 5000;
	int i, k;

	/*
	 * GRO hands over 8 packets at once every 240 us: seven gaps of 0
	 * and one of 240, 30 us a packet.  The EWMA weighs the newest gaps
	 * most: at a batch's end it holds about 18 us (a deadline of about
	 * 215 us), far above a fast stream's and not the floor.
	 */
	mroce_delack_init(&d, 8);
	for (i = 0; i < 40; i++, t += 240)
		for (k = 0; k < 8; k++)
			mroce_delack_arrival(&d, t);
	KUNIT_EXPECT_GE(test, mroce_delack_us(&d), 200U);
	KUNIT_EXPECT_LE(test, mroce_delack_us(&d), 230U);
}

/*
 * rx_count and ce_count: an ACK without a triggering packet (a resend in
 * a ping-pong carrying the receive state) reports 0 and leaves the count
 * to the next ACK, which reports every arrival and CE mark since the last
 * report; before the count survived, those were lost to the sender.
 */
static void mroce_delack_test_ack_count(struct kunit *test)
{
	struct mroce_ack_count c;
	u16 rx, ce;
	int i;

	mroce_ack_count_init(&c);
	for (i = 0; i < 5; i++)
		mroce_ack_count_arrival(&c, i < 2);
	mroce_ack_count_report(&c, false, &rx, &ce);
	KUNIT_EXPECT_EQ(test, rx, 0);
	KUNIT_EXPECT_EQ(test, ce, 0);
	mroce_ack_count_arrival(&c, true);
	mroce_ack_count_report(&c, true, &rx, &ce);
	KUNIT_EXPECT_EQ(test, rx, 6);
	KUNIT_EXPECT_EQ(test, ce, 3);
	/* reported: the count starts again */
	mroce_ack_count_report(&c, true, &rx, &ce);
	KUNIT_EXPECT_EQ(test, rx, 1);	/* the triggering packet, at least */
	KUNIT_EXPECT_EQ(test, ce, 0);
	/* saturation: 65535, and ce_count never above rx_count */
	for (i = 0; i < 70000; i++)
		mroce_ack_count_arrival(&c, true);
	mroce_ack_count_report(&c, true, &rx, &ce);
	KUNIT_EXPECT_EQ(test, rx, U16_MAX);
	KUNIT_EXPECT_EQ(test, ce, U16_MAX);
	for (i = 0; i < 70000; i++)
		mroce_ack_count_arrival(&c, i < 10);
	mroce_ack_count_report(&c, true, &rx, &ce);
	KUNIT_EXPECT_EQ(test, rx, U16_MAX);
	KUNIT_EXPECT_EQ(test, ce, 10);
}

static struct kunit_case mroce_delack_cases[] = {
	KUNIT_CASE(mroce_delack_test_initial),
	KUNIT_CASE(mroce_delack_test_fast_stream),
	KUNIT_CASE(mroce_delack_test_slow_stream),
	KUNIT_CASE(mroce_delack_test_ceiling),
	KUNIT_CASE(mroce_delack_test_idle_gap),
	KUNIT_CASE(mroce_delack_test_adapts_down),
	KUNIT_CASE(mroce_delack_test_clock_wrap),
	KUNIT_CASE(mroce_delack_test_batch),
	KUNIT_CASE(mroce_delack_test_ack_count),
	{}
};

static struct kunit_suite mroce_delack_suite = {
	.name = "mroce_delack",
	.test_cases = mroce_delack_cases,
};

kunit_test_suite(mroce_delack_suite);
