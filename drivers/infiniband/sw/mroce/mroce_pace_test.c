// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit suite for the pacing token bucket (mroce_pace.h).
 */

#include <kunit/test.h>

#include "mroce_pace.h"

static void mroce_pace_test_unpaced(struct kunit *test)
{
	struct mroce_pacer p;
	int i;

	mroce_pacer_init(&p);
	for (i = 0; i < 100; i++) {
		KUNIT_EXPECT_EQ(test, mroce_pacer_next_us(&p, 0, 4096, 5), 0);
		mroce_pacer_sent(&p, 0, 4096, 4096, 5);
	}
	KUNIT_EXPECT_EQ(test, p.credit, S64_MAX);
}

/* Packets a sender gets out back to back at @now before it must wait. */
static int mroce_pace_burst_at(struct mroce_pacer *p, u64 rate, u32 len,
			       u64 now)
{
	int n = 0;

	while (n < 1000 && !mroce_pacer_next_us(p, rate, len, now)) {
		mroce_pacer_sent(p, rate, len, len, now);
		n++;
	}
	return n;
}

static void mroce_pace_test_burst(struct kunit *test)
{
	struct mroce_pacer p;

	mroce_pacer_init(&p);
	/* 10 Gbit/s, 1500 B = 1.2 us per packet: two, then wait */
	KUNIT_EXPECT_EQ(test, mroce_pace_burst_at(&p, 10000000000ULL, 1500,
						  1000), 2);
	/* empty bucket: 12000 bits at 10 bit/ns is 1.2 us, rounded up */
	KUNIT_EXPECT_EQ(test, mroce_pacer_next_us(&p, 10000000000ULL, 1500,
						  1000), 2);
	KUNIT_EXPECT_EQ(test, mroce_pace_burst_at(&p, 10000000000ULL, 1500,
						  1001), 0);
	KUNIT_EXPECT_EQ(test, mroce_pace_burst_at(&p, 10000000000ULL, 1500,
						  1002), 1);
	/* a second of idleness still buys two packets, not more */
	KUNIT_EXPECT_EQ(test, mroce_pace_burst_at(&p, 10000000000ULL, 1500,
						  1001002), 2);
	/* at 1 Gbit/s, 4 KiB: 32.768 us per packet */
	KUNIT_EXPECT_EQ(test, mroce_pace_burst_at(&p, 1000000000ULL, 4096,
						  5000000), 2);
	KUNIT_EXPECT_EQ(test, mroce_pacer_next_us(&p, 1000000000ULL, 4096,
						  5000000), 33);
	KUNIT_EXPECT_EQ(test, mroce_pacer_next_us(&p, 1000000000ULL, 4096,
						  5000010), 23);
}

/*
 * Drive a sender that sends whenever allowed, for @pkts packets: the
 * achieved rate must be within 1% of @rate and no microsecond may carry
 * more than the bucket allows.
 */
static void mroce_pace_check_rate(struct kunit *test, u64 rate, u32 len)
{
	u64 now = 123456, start = now, last = 0, achieved, wait;
	int sent = 0, first = 0, same = 0, max_same = 0, limit;
	struct mroce_pacer p;

	/* 2 packets, or 1 packet + what one microsecond carries */
	limit = max_t(u64, 2, 1 + DIV_ROUND_UP_ULL(rate, (u64)len * 8 *
						    1000000));
	mroce_pacer_init(&p);
	while (sent < 20000 || now - start < 2000) {
		wait = mroce_pacer_next_us(&p, rate, len, now);
		if (wait) {
			now += wait;
			continue;
		}
		mroce_pacer_sent(&p, rate, len, len, now);
		same = sent && now == last ? same + 1 : 1;
		max_same = max(max_same, same);
		if (now == start)
			first++;
		last = now;
		sent++;
	}
	/* the first burst was free: count what followed it */
	achieved = div64_u64((u64)(sent - first) * len * 8 * 1000000,
			     now - start);
	KUNIT_EXPECT_LE(test, achieved, rate + div_u64(rate, 100));
	KUNIT_EXPECT_GE(test, achieved, rate - div_u64(rate, 100));
	KUNIT_EXPECT_LE(test, max_same, limit);
	KUNIT_EXPECT_LE(test, first, limit);
}

static void mroce_pace_test_long_run(struct kunit *test)
{
	static const u64 rates[] = {
		10000000ULL, 1000000000ULL, 10000000000ULL, 25000000000ULL,
		40000000000ULL, 100000000000ULL, 400000000000ULL,
	};
	static const u32 lens[] = { 64, 1500, 4096, 9000 };
	int i, j;

	for (i = 0; i < ARRAY_SIZE(rates); i++)
		for (j = 0; j < ARRAY_SIZE(lens); j++)
			mroce_pace_check_rate(test, rates[i], lens[j]);
}

/*
 * Packets smaller than the connection's full ones (a message's short
 * last packet; a 4 KiB message on a connection of 8 KiB segments) pay
 * their own size: the bytes leave at the rate, not fewer.  The wait is
 * for a full packet's credit, and the burst is sized by it.
 */
static void mroce_pace_test_mixed_sizes(struct kunit *test)
{
	static const u32 lens[] = { 8224, 8224, 8224, 4160, 400, 8224, 176 };
	const u64 rate = 1000000000ULL;
	u64 now = 5000, start, bytes = 0, achieved, wait;
	struct mroce_pacer p;
	int i = 0, sent = 0;

	mroce_pacer_init(&p);
	/* full bucket: two full packets' worth, paid by what is sent */
	KUNIT_EXPECT_EQ(test, mroce_pacer_next_us(&p, rate, 8224, now), 0);
	mroce_pacer_sent(&p, rate, 8224, 4160, now);
	mroce_pacer_sent(&p, rate, 8224, 4160, now);
	mroce_pacer_sent(&p, rate, 8224, 4160, now);
	/* 3 x 4160 of 2 x 8224: 3968 bytes of credit left, less than 8224 */
	KUNIT_EXPECT_EQ(test, p.credit, (s64)(2 * 8224 - 3 * 4160) * 8 *
			(s64)MROCE_PACE_UNIT);
	/* (8224 - 3968) x 8 bits at 1000 bit/us: 34.048 us, rounded up */
	KUNIT_EXPECT_EQ(test, mroce_pacer_next_us(&p, rate, 8224, now), 35);

	start = now;
	while (sent < 20000) {
		wait = mroce_pacer_next_us(&p, rate, 8224, now);
		if (wait) {
			now += wait;
			continue;
		}
		mroce_pacer_sent(&p, rate, 8224, lens[i], now);
		bytes += lens[i];
		i = (i + 1) % ARRAY_SIZE(lens);
		sent++;
	}
	/* the credit left at the start bought at most two full packets */
	achieved = div64_u64((bytes - 2 * 8224) * 8 * 1000000, now - start);
	KUNIT_EXPECT_LE(test, achieved, rate + div_u64(rate, 100));
	KUNIT_EXPECT_GE(test, achieved, rate - div_u64(rate, 100));
}

static void mroce_pace_test_rate_change(struct kunit *test)
{
	struct mroce_pacer p;
	u64 now = 1000;

	mroce_pacer_init(&p);
	KUNIT_EXPECT_EQ(test, mroce_pace_burst_at(&p, 1000000000ULL, 1000,
						  now), 2);
	/* 8 us per packet at 1 Gbit/s, 0.8 us at 10 Gbit/s */
	KUNIT_EXPECT_EQ(test, mroce_pacer_next_us(&p, 1000000000ULL, 1000,
						  now), 8);
	KUNIT_EXPECT_EQ(test, mroce_pacer_next_us(&p, 10000000000ULL, 1000,
						  now), 1);
	/* unpaced in between leaves the bucket alone */
	KUNIT_EXPECT_EQ(test, mroce_pacer_next_us(&p, 0, 1000, now), 0);
	mroce_pacer_sent(&p, 0, 1000, 1000, now);
	KUNIT_EXPECT_EQ(test, mroce_pacer_next_us(&p, 1000000000ULL, 1000,
						  now + 4), 4);
}

static void mroce_pace_test_debt(struct kunit *test)
{
	struct mroce_pacer p;
	int i;

	mroce_pacer_init(&p);
	KUNIT_EXPECT_EQ(test, mroce_pace_burst_at(&p, 1000000000ULL, 1000,
						  0), 2);
	/* one forced send: the next packet waits two packet times */
	mroce_pacer_sent(&p, 1000000000ULL, 1000, 1000, 0);
	KUNIT_EXPECT_EQ(test, mroce_pacer_next_us(&p, 1000000000ULL, 1000,
						  0), 16);
	/* many forced sends: the debt stays within one burst */
	for (i = 0; i < 100; i++)
		mroce_pacer_sent(&p, 1000000000ULL, 1000, 1000, 0);
	KUNIT_EXPECT_EQ(test, p.credit,
			-mroce_pacer_burst(1000000000ULL, 1000));
	KUNIT_EXPECT_EQ(test, mroce_pacer_next_us(&p, 1000000000ULL, 1000,
						  0), 24);
	/* the clock running backwards does not create credit */
	KUNIT_EXPECT_EQ(test, mroce_pacer_next_us(&p, 1000000000ULL, 1000,
						  100), 0);
	KUNIT_EXPECT_EQ(test, mroce_pace_burst_at(&p, 1000000000ULL, 1000,
						  100), 2);
	KUNIT_EXPECT_EQ(test, mroce_pacer_next_us(&p, 1000000000ULL, 1000,
						  50), 8);
}

static struct kunit_case mroce_pace_cases[] = {
	KUNIT_CASE(mroce_pace_test_unpaced),
	KUNIT_CASE(mroce_pace_test_burst),
	KUNIT_CASE(mroce_pace_test_long_run),
	KUNIT_CASE(mroce_pace_test_mixed_sizes),
	KUNIT_CASE(mroce_pace_test_rate_change),
	KUNIT_CASE(mroce_pace_test_debt),
	{}
};

static struct kunit_suite mroce_pace_suite = {
	.name = "mroce_pace",
	.test_cases = mroce_pace_cases,
};

kunit_test_suite(mroce_pace_suite);
