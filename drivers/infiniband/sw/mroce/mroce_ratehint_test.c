// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit suite for the receiver rate hint (mroce_ratehint.[ch]).
 *
 * Most cases run the receiver in a loop of epochs in which each
 * connection delivers what it is allowed to (its hint, or what a
 * bottleneck lets through) in packets spread over the epoch.
 */

#include <kunit/test.h>
#include <linux/math64.h>

#include "mroce_ratehint.h"

#define LINE	10000ULL	/* Mbit/s */
#define T_LINE	9500ULL		/* 95% of it */
#define E	100		/* us */
#define PKT	4096

/*
 * One epoch starting at @t0: connection i delivers @mbps[i] (0: nothing)
 * in PKT-sized packets, round robin; @ce marks them all.  Returns the hint
 * each connection saw at its last packet in @hint[] (-1 if it sent none).
 */
static void rh_epoch(struct mroce_hint *rh, struct mroce_hint_conn *c, int n,
		     const u64 *mbps, bool ce, u64 t0, s64 *hint)
{
	u64 left[16], total = 0, sent = 0;
	int i;

	for (i = 0; i < n; i++) {
		left[i] = mbps[i] * E / 8;	/* bytes */
		total += left[i];
		hint[i] = -1;
	}
	while (total) {
		for (i = 0; i < n; i++) {
			u32 b = min_t(u64, left[i], PKT);
			u64 t;

			if (!b)
				continue;
			/* arrival spread evenly over the epoch */
			t = t0 + div64_u64(sent * (E - 1), max(total + sent, 1ULL));
			hint[i] = mroce_hint_rx(rh, &c[i], b, ce, t);
			left[i] -= b;
			sent += b;
			total -= b;
		}
	}
}

static void mroce_hint_test_single(struct kunit *test)
{
	struct mroce_hint rh;
	struct mroce_hint_conn c;
	u64 mbps = LINE;
	s64 hint;
	int k;

	mroce_hint_init(&rh, LINE, E);
	mroce_hint_conn_init(&c);
	for (k = 0; k < 20; k++) {
		rh_epoch(&rh, &c, 1, &mbps, k & 1, k * E, &hint);
		KUNIT_EXPECT_EQ(test, hint, 0);
	}
	KUNIT_EXPECT_EQ(test, mroce_hint_current(&rh, 20 * E), 0);
}

static void mroce_hint_test_two(struct kunit *test)
{
	struct mroce_hint_conn c[2];
	struct mroce_hint rh;
	int k;

	mroce_hint_init(&rh, LINE, E);
	mroce_hint_conn_init(&c[0]);
	mroce_hint_conn_init(&c[1]);
	KUNIT_EXPECT_EQ(test, mroce_hint_rx(&rh, &c[0], PKT, false, 1000), 0);
	/* the second one counts at its first packet: 0.95 C / 2 */
	KUNIT_EXPECT_EQ(test, mroce_hint_rx(&rh, &c[1], PKT, false, 1001),
			T_LINE / 2);
	KUNIT_EXPECT_EQ(test, mroce_hint_rx(&rh, &c[0], PKT, false, 1002),
			T_LINE / 2);
	/*
	 * Next epoch: both were active, and light: 3 packets, 983 Mbit/s.
	 * max-min leaves the rest to whichever wants it.
	 */
	KUNIT_EXPECT_EQ(test, mroce_hint_rx(&rh, &c[0], PKT, false, 1100),
			T_LINE - 3 * PKT * 8 / E);
	KUNIT_EXPECT_EQ(test, mroce_hint_current(&rh, 1150), T_LINE - 983);
	/* heavy both: an equal split */
	for (k = 0; k < 40; k++)
		mroce_hint_rx(&rh, &c[k & 1], PKT, false, 1150);
	KUNIT_EXPECT_EQ(test, mroce_hint_current(&rh, 1200), T_LINE / 2);
}

static void mroce_hint_test_join_leave(struct kunit *test)
{
	u64 mbps[4] = { 3000, 3000, 3000, 0 };
	struct mroce_hint_conn c[4];
	struct mroce_hint rh;
	s64 hint[4];
	int i, k;
	u64 t;

	mroce_hint_init(&rh, LINE, E);
	for (i = 0; i < 4; i++)
		mroce_hint_conn_init(&c[i]);
	for (k = 0; k < 5; k++)
		rh_epoch(&rh, c, 3, mbps, false, k * E, hint);
	KUNIT_EXPECT_EQ(test, hint[0], T_LINE / 3);
	KUNIT_EXPECT_EQ(test, hint[2], T_LINE / 3);

	/* a fourth joins: at once, for everybody */
	t = 5 * E;
	KUNIT_EXPECT_EQ(test, mroce_hint_rx(&rh, &c[3], PKT, false, t),
			T_LINE / 4);
	KUNIT_EXPECT_EQ(test, mroce_hint_rx(&rh, &c[0], PKT, false, t + 1),
			T_LINE / 4);
	for (i = 0; i < 4; i++)
		mbps[i] = 2300;
	rh_epoch(&rh, c, 4, mbps, false, t, hint);
	for (k = 6; k < 10; k++) {
		rh_epoch(&rh, c, 4, mbps, false, k * E, hint);
		KUNIT_EXPECT_EQ(test, hint[0], T_LINE / 4);
		KUNIT_EXPECT_EQ(test, hint[3], T_LINE / 4);
	}

	/* the fourth stops: 1-2 epochs later the others get a third each */
	mbps[3] = 0;
	rh_epoch(&rh, c, 4, mbps, false, 10 * E, hint);
	rh_epoch(&rh, c, 4, mbps, false, 11 * E, hint);
	KUNIT_EXPECT_EQ(test, hint[0], T_LINE / 3);
	KUNIT_EXPECT_EQ(test, hint[3], -1);

	/* two stop: the last one gets no hint any more */
	mbps[1] = 0;
	mbps[2] = 0;
	rh_epoch(&rh, c, 4, mbps, false, 12 * E, hint);
	rh_epoch(&rh, c, 4, mbps, false, 13 * E, hint);
	KUNIT_EXPECT_EQ(test, hint[0], 0);
}

/*
 * Senders that use only 80% of their hint (pacing and ECN losses) must
 * not drive the hint down: it stays the equal share of 95% of the line.
 * A hint of measured / n would be 0.8^k of it after k epochs.
 */
static void mroce_hint_test_no_spiral(struct kunit *test)
{
	struct mroce_hint_conn c[4];
	struct mroce_hint rh;
	u64 mbps[4];
	s64 hint[4];
	int i, k;

	mroce_hint_init(&rh, LINE, E);
	for (i = 0; i < 4; i++) {
		mroce_hint_conn_init(&c[i]);
		mbps[i] = LINE;		/* before the first hint */
	}
	for (k = 0; k < 100; k++) {
		rh_epoch(&rh, c, 4, mbps, false, k * E, hint);
		for (i = 0; i < 4; i++) {
			if (k > 0)
				KUNIT_EXPECT_EQ(test, hint[i], T_LINE / 4);
			mbps[i] = div_s64(hint[i] * 8, 10);
		}
	}
}

/*
 * A receiver behind a hop that carries only 40% of its line rate and
 * marks CE when it is full: the hints must settle at a share of what it
 * can take, with headroom, and not spiral down while senders keep using
 * them.
 */
static void mroce_hint_test_slow_hop(struct kunit *test)
{
	const u64 cap = LINE * 4 / 10;
	struct mroce_hint_conn c[4];
	struct mroce_hint rh;
	u64 mbps[4], sum;
	s64 hint[4];
	int i, k;

	mroce_hint_init(&rh, LINE, E);
	for (i = 0; i < 4; i++) {
		mroce_hint_conn_init(&c[i]);
		mbps[i] = LINE;
	}
	for (k = 0; k < 200; k++) {
		u64 dlv[4];

		sum = 0;
		for (i = 0; i < 4; i++)
			sum += mbps[i];
		for (i = 0; i < 4; i++)
			dlv[i] = sum > cap ? div64_u64(mbps[i] * cap, sum) :
					   mbps[i];
		rh_epoch(&rh, c, 4, dlv, sum > cap, k * E, hint);
		for (i = 0; i < 4; i++) {
			if (k >= 2) {
				/* >= a quarter of capacity, <= 5/4 of it */
				KUNIT_EXPECT_GE(test, hint[i], cap / 4);
				KUNIT_EXPECT_LE(test, hint[i], cap * 5 / 4 / 4 + 1);
			}
			mbps[i] = hint[i] > 0 ? hint[i] : LINE;
		}
	}
	/* steady: the receiver is full, hints carry the 5/4 headroom */
	KUNIT_EXPECT_EQ(test, rh.target_mbps, cap * 5 / 4);
}

/*
 * Marks that do not come from this receiver's bottleneck (or an estimate
 * taken while the queue drained) can make T too low; senders that use
 * their hint make it grow by 5/4 per epoch back to 95% of the line.
 */
static void mroce_hint_test_recovers(struct kunit *test)
{
	struct mroce_hint_conn c[2];
	u64 mbps[2] = { 500, 500 };
	struct mroce_hint rh;
	s64 hint[2];
	int i, k;

	mroce_hint_init(&rh, LINE, E);
	mroce_hint_conn_init(&c[0]);
	mroce_hint_conn_init(&c[1]);
	/* both marked elsewhere at 500 Mbit/s each */
	for (k = 0; k < 3; k++)
		rh_epoch(&rh, c, 2, mbps, true, k * E, hint);
	KUNIT_EXPECT_EQ(test, rh.target_mbps, 1000 * 5 / 4);
	KUNIT_EXPECT_EQ(test, hint[0], 1000 * 5 / 4 / 2);
	/* still marked, but now they use what they are given */
	for (k = 3; k < 40; k++) {
		for (i = 0; i < 2; i++)
			mbps[i] = hint[i];
		rh_epoch(&rh, c, 2, mbps, true, k * E, hint);
	}
	KUNIT_EXPECT_EQ(test, hint[0], T_LINE / 2);
}

/* max-min: what a light connection leaves is the heavy one's */
static void mroce_hint_test_light_heavy(struct kunit *test)
{
	u64 mbps[3] = { 200, 300, LINE };
	struct mroce_hint_conn c[3];
	struct mroce_hint rh;
	s64 hint[3];
	int i, k;

	mroce_hint_init(&rh, LINE, E);
	for (i = 0; i < 3; i++)
		mroce_hint_conn_init(&c[i]);
	for (k = 0; k < 10; k++) {
		rh_epoch(&rh, c, 3, mbps, false, k * E, hint);
		mbps[2] = hint[2];
	}
	KUNIT_EXPECT_GE(test, hint[2], T_LINE - 500 - 2);
	KUNIT_EXPECT_LE(test, hint[2], T_LINE - 500);
	/* the light ones grow: the heavy one's share shrinks to match */
	for (k = 10; k < 40; k++) {
		for (i = 0; i < 3; i++)
			mbps[i] = i < 2 ? min_t(u64, mbps[i] * 2, hint[i]) :
					  hint[i];
		rh_epoch(&rh, c, 3, mbps, false, k * E, hint);
	}
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, hint[i], T_LINE / 3);
}

static void mroce_hint_test_incast(struct kunit *test)
{
	struct mroce_hint_conn c[16];
	struct mroce_hint rh;
	u32 h = 0;
	int i;

	mroce_hint_init(&rh, LINE, E);
	/* an idle receiver, then 16 senders within a few microseconds */
	for (i = 0; i < 16; i++) {
		mroce_hint_conn_init(&c[i]);
		h = mroce_hint_rx(&rh, &c[i], PKT, false, 5000 + i / 4);
		KUNIT_EXPECT_EQ(test, h, i ? T_LINE / (i + 1) : 0);
	}
	for (i = 0; i < 16; i++)
		KUNIT_EXPECT_EQ(test, mroce_hint_rx(&rh, &c[i], PKT, false, 5010),
				T_LINE / 16);
}

static void mroce_hint_test_idle(struct kunit *test)
{
	u64 mbps[2] = { 500, 500 };
	struct mroce_hint_conn c[2];
	struct mroce_hint rh;
	s64 hint[2];
	int k;

	mroce_hint_init(&rh, LINE, E);
	mroce_hint_conn_init(&c[0]);
	mroce_hint_conn_init(&c[1]);
	for (k = 0; k < 3; k++)
		rh_epoch(&rh, c, 2, mbps, true, k * E, hint);
	KUNIT_EXPECT_LT(test, rh.target_mbps, T_LINE);
	/* a long pause forgets congestion and connections alike */
	KUNIT_EXPECT_EQ(test, mroce_hint_rx(&rh, &c[0], PKT, false, 1000000), 0);
	KUNIT_EXPECT_EQ(test, rh.target_mbps, T_LINE);
	KUNIT_EXPECT_EQ(test, mroce_hint_rx(&rh, &c[1], PKT, false, 1000001),
			T_LINE / 2);
	/* defaults */
	mroce_hint_init(&rh, 0, 0);
	KUNIT_EXPECT_EQ(test, rh.epoch_us, MROCE_HINT_EPOCH_US);
	KUNIT_EXPECT_EQ(test, rh.target_mbps, 95000);
}

static struct kunit_case mroce_hint_cases[] = {
	KUNIT_CASE(mroce_hint_test_single),
	KUNIT_CASE(mroce_hint_test_two),
	KUNIT_CASE(mroce_hint_test_join_leave),
	KUNIT_CASE(mroce_hint_test_no_spiral),
	KUNIT_CASE(mroce_hint_test_slow_hop),
	KUNIT_CASE(mroce_hint_test_recovers),
	KUNIT_CASE(mroce_hint_test_light_heavy),
	KUNIT_CASE(mroce_hint_test_incast),
	KUNIT_CASE(mroce_hint_test_idle),
	{}
};

static struct kunit_suite mroce_hint_suite = {
	.name = "mroce_ratehint",
	.test_cases = mroce_hint_cases,
};

kunit_test_suite(mroce_hint_suite);
