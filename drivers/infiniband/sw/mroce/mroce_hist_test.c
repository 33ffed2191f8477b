// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit suite for the latency histogram (mroce_hist.h): bucket bounds,
 * and percentiles of known distributions against the true ones.
 */

#include <kunit/test.h>
#include <linux/slab.h>

#include "mroce_hist.h"

static struct mroce_hist *mroce_hist_test_new(struct kunit *test)
{
	struct mroce_hist *h = kunit_kzalloc(test, sizeof(*h), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, h);
	return h;
}

/*
 * Every value lies in the bucket mroce_hist_bucket() names: above the
 * previous bucket's maximum, at most its own; no bucket wider than 1/8
 * of its lower bound; indices never leave the array.
 */
static void mroce_hist_test_buckets(struct kunit *test)
{
	static const u32 v[] = {
		0, 1, 7, 8, 9, 15, 16, 17, 18, 31, 32, 100, 255, 256, 1000,
		4095, 4096, 65535, 65536, 1000000, (1U << 24) - 1,
	};
	u32 i, b, lo, hi;

	for (i = 0; i < ARRAY_SIZE(v); i++) {
		b = mroce_hist_bucket(v[i]);
		KUNIT_ASSERT_LT(test, b, (u32)MROCE_HIST_OVERFLOW);
		hi = mroce_hist_bucket_max(b);
		lo = b ? mroce_hist_bucket_max(b - 1) + 1 : 0;
		KUNIT_EXPECT_LE_MSG(test, lo, v[i], "value %u", v[i]);
		KUNIT_EXPECT_GE_MSG(test, hi, v[i], "value %u", v[i]);
		KUNIT_EXPECT_LE_MSG(test, (u64)(hi - lo + 1) * 8, max(lo, 8U),
				    "value %u", v[i]);
	}
	/* below 16: one value a bucket */
	for (i = 0; i < 16; i++)
		KUNIT_EXPECT_EQ(test, mroce_hist_bucket_max(mroce_hist_bucket(i)), i);
	/* 16 and 17 share one; 2^20 .. 2^20 + 2^17 - 1 too */
	KUNIT_EXPECT_EQ(test, mroce_hist_bucket(16), mroce_hist_bucket(17));
	KUNIT_EXPECT_NE(test, mroce_hist_bucket(17), mroce_hist_bucket(18));
	KUNIT_EXPECT_EQ(test, mroce_hist_bucket(1U << 20),
			mroce_hist_bucket((1U << 20) + (1U << 17) - 1));
	KUNIT_EXPECT_NE(test, mroce_hist_bucket(1U << 20),
			mroce_hist_bucket((1U << 20) + (1U << 17)));
	KUNIT_EXPECT_EQ(test, mroce_hist_bucket_max(mroce_hist_bucket(1000)),
			1023U);
	/* contiguous: each bucket starts where the previous ended */
	for (b = 1; b < MROCE_HIST_OVERFLOW; b++)
		KUNIT_EXPECT_EQ(test, mroce_hist_bucket(mroce_hist_bucket_max(b - 1) + 1), b);
	KUNIT_EXPECT_EQ(test, mroce_hist_bucket(1U << 24), (u32)MROCE_HIST_OVERFLOW);
	KUNIT_EXPECT_EQ(test, mroce_hist_bucket(U32_MAX), (u32)MROCE_HIST_OVERFLOW);
	KUNIT_EXPECT_LE(test, sizeof(struct mroce_hist), (size_t)1024);
}

static void mroce_hist_test_empty(struct kunit *test)
{
	struct mroce_hist *h = mroce_hist_test_new(test);

	KUNIT_EXPECT_EQ(test, mroce_hist_pct(h, MROCE_HIST_P50), 0U);
	KUNIT_EXPECT_EQ(test, mroce_hist_pct(h, MROCE_HIST_P999), 0U);
	KUNIT_EXPECT_EQ(test, h->total, 0ULL);
}

static void mroce_hist_test_single(struct kunit *test)
{
	struct mroce_hist *h = mroce_hist_test_new(test);
	int i;

	/* one value many times: every percentile is that value (the max) */
	for (i = 0; i < 1000; i++)
		mroce_hist_record(h, 37);
	KUNIT_EXPECT_EQ(test, mroce_hist_pct(h, 1), 37U);
	KUNIT_EXPECT_EQ(test, mroce_hist_pct(h, MROCE_HIST_P50), 37U);
	KUNIT_EXPECT_EQ(test, mroce_hist_pct(h, MROCE_HIST_P999), 37U);
	KUNIT_EXPECT_EQ(test, mroce_hist_pct(h, 1000000), 37U);
	KUNIT_EXPECT_EQ(test, h->total, 1000ULL);
	KUNIT_EXPECT_EQ(test, h->max, 37U);
	mroce_hist_reset(h);
	KUNIT_EXPECT_EQ(test, h->total, 0ULL);
	KUNIT_EXPECT_EQ(test, h->max, 0U);
	KUNIT_EXPECT_EQ(test, mroce_hist_pct(h, MROCE_HIST_P50), 0U);
	/* one sample of 0 */
	mroce_hist_record(h, 0);
	KUNIT_EXPECT_EQ(test, mroce_hist_pct(h, MROCE_HIST_P99), 0U);
	KUNIT_EXPECT_EQ(test, h->total, 1ULL);
}

/*
 * A percentile read from the histogram is the true one (the sample of
 * that rank) or above it by less than its bucket's width.
 */
static void mroce_hist_expect_pct(struct kunit *test,
				  const struct mroce_hist *h, u32 ppm,
				  u32 truth)
{
	u32 got = mroce_hist_pct(h, ppm);

	KUNIT_EXPECT_GE_MSG(test, got, truth, "ppm %u", ppm);
	KUNIT_EXPECT_LE_MSG(test, got, truth + truth / 8, "ppm %u", ppm);
	KUNIT_EXPECT_EQ_MSG(test, mroce_hist_bucket(got),
			    mroce_hist_bucket(truth), "ppm %u", ppm);
}

static void mroce_hist_test_uniform(struct kunit *test)
{
	struct mroce_hist *h = mroce_hist_test_new(test);
	u32 v;

	/* 1 .. 10000, in a scrambled order: the order must not matter */
	for (v = 0; v < 10000; v++)
		mroce_hist_record(h, (v * 7919) % 10000 + 1);
	KUNIT_EXPECT_EQ(test, h->total, 10000ULL);
	KUNIT_EXPECT_EQ(test, h->max, 10000U);
	mroce_hist_expect_pct(test, h, MROCE_HIST_P50, 5000);
	mroce_hist_expect_pct(test, h, MROCE_HIST_P99, 9900);
	mroce_hist_expect_pct(test, h, MROCE_HIST_P999, 9990);
	mroce_hist_expect_pct(test, h, 100000, 1000);
	/* the exact answers: the upper bounds of their buckets */
	KUNIT_EXPECT_EQ(test, mroce_hist_pct(h, MROCE_HIST_P50), 5119U);
	KUNIT_EXPECT_EQ(test, mroce_hist_pct(h, MROCE_HIST_P99), 10000U);
	/* below 16 the answer is exact */
	KUNIT_EXPECT_EQ(test, mroce_hist_pct(h, 1000), 10U);
	KUNIT_EXPECT_EQ(test, mroce_hist_pct(h, 1000000), 10000U);
}

static void mroce_hist_test_bimodal(struct kunit *test)
{
	struct mroce_hist *h = mroce_hist_test_new(test);
	int i;

	/* 98.5% at 20 us, 1.5% at 3000 us: p50 fast, p99 and p99.9 slow */
	for (i = 0; i < 985; i++)
		mroce_hist_record(h, 20);
	for (i = 0; i < 15; i++)
		mroce_hist_record(h, 3000);
	KUNIT_EXPECT_EQ(test, mroce_hist_pct(h, MROCE_HIST_P50), 21U);
	KUNIT_EXPECT_EQ(test, mroce_hist_pct(h, 985000), 21U);
	KUNIT_EXPECT_EQ(test, mroce_hist_pct(h, 985001), 3000U);
	KUNIT_EXPECT_EQ(test, mroce_hist_pct(h, MROCE_HIST_P99), 3000U);
	KUNIT_EXPECT_EQ(test, mroce_hist_pct(h, MROCE_HIST_P999), 3000U);
	/* 0.5% slow: p99 is fast, p99.9 slow */
	mroce_hist_reset(h);
	for (i = 0; i < 995; i++)
		mroce_hist_record(h, 20);
	for (i = 0; i < 5; i++)
		mroce_hist_record(h, 3000);
	KUNIT_EXPECT_EQ(test, mroce_hist_pct(h, MROCE_HIST_P99), 21U);
	KUNIT_EXPECT_EQ(test, mroce_hist_pct(h, MROCE_HIST_P999), 3000U);
}

static void mroce_hist_test_range(struct kunit *test)
{
	struct mroce_hist *h = mroce_hist_test_new(test);
	int i;

	/* beyond the range: the overflow bucket, answered by the max */
	for (i = 0; i < 90; i++)
		mroce_hist_record(h, 100);
	for (i = 0; i < 10; i++)
		mroce_hist_record(h, 30000000 + i);
	KUNIT_EXPECT_EQ(test, h->b[MROCE_HIST_OVERFLOW], 10U);
	KUNIT_EXPECT_EQ(test, mroce_hist_pct(h, MROCE_HIST_P50), 103U);
	KUNIT_EXPECT_EQ(test, mroce_hist_pct(h, MROCE_HIST_P99), 30000009U);
	KUNIT_EXPECT_EQ(test, h->max, 30000009U);
	mroce_hist_record(h, U32_MAX);
	KUNIT_EXPECT_EQ(test, mroce_hist_pct(h, 1000000), U32_MAX);
}

static void mroce_hist_test_saturate(struct kunit *test)
{
	struct mroce_hist *h = mroce_hist_test_new(test);

	/* a bucket about to wrap: everything is halved, the shape stays */
	h->b[mroce_hist_bucket(10)] = U32_MAX - 1;
	h->b[mroce_hist_bucket(1000)] = 1001;
	h->b[mroce_hist_bucket(5000)] = 1;
	h->n = (u64)U32_MAX - 1 + 1001 + 1;
	h->total = h->n;
	h->max = 5000;
	mroce_hist_record(h, 10);
	KUNIT_EXPECT_EQ(test, h->b[mroce_hist_bucket(10)], U32_MAX);
	mroce_hist_record(h, 10);
	KUNIT_EXPECT_EQ(test, h->b[mroce_hist_bucket(10)], (U32_MAX + 1ULL) / 2 + 1);
	KUNIT_EXPECT_EQ(test, h->b[mroce_hist_bucket(1000)], 501U);
	KUNIT_EXPECT_EQ(test, h->b[mroce_hist_bucket(5000)], 1U);
	KUNIT_EXPECT_EQ(test, h->n, (U32_MAX + 1ULL) / 2 + 1 + 501 + 1);
	KUNIT_EXPECT_EQ(test, h->total, (u64)U32_MAX + 1001 + 2);
	KUNIT_EXPECT_EQ(test, mroce_hist_pct(h, MROCE_HIST_P50), 10U);
	KUNIT_EXPECT_EQ(test, mroce_hist_pct(h, 1000000), 5000U);
}

static struct kunit_case mroce_hist_cases[] = {
	KUNIT_CASE(mroce_hist_test_buckets),
	KUNIT_CASE(mroce_hist_test_empty),
	KUNIT_CASE(mroce_hist_test_single),
	KUNIT_CASE(mroce_hist_test_uniform),
	KUNIT_CASE(mroce_hist_test_bimodal),
	KUNIT_CASE(mroce_hist_test_range),
	KUNIT_CASE(mroce_hist_test_saturate),
	{}
};

static struct kunit_suite mroce_hist_suite = {
	.name = "mroce_hist",
	.test_cases = mroce_hist_cases,
};

kunit_test_suite(mroce_hist_suite);
