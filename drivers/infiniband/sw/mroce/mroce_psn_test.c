// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for the 24-bit PSN arithmetic in mroce_psn.h.
 *
 * Run with kunit/run-kunit.sh (UML), or load mroce.ko built with
 * CONFIG_RDMA_MROCE_KUNIT_TEST on a kernel with CONFIG_KUNIT.
 */
#include <kunit/test.h>
#include <linux/kernel.h>

#include "mroce_psn.h"

#define PSN_MAX		0xffffffU
#define PSN_HALF	0x800000U

/* Start points spread over the circle, including both sides of the wrap. */
static const u32 psn_starts[] = {
	0, 1, 2, 0x7ffffe, 0x7fffff, 0x800000, 0x800001,
	0x123456, 0xabcdef, 0xfffffd, 0xfffffe, 0xffffff,
};

/* Forward offsets around every boundary of the half-space rule. */
static const u32 psn_offsets[] = {
	0, 1, 2, 100, PSN_HALF - 2, PSN_HALF - 1, PSN_HALF, PSN_HALF + 1,
	PSN_HALF + 2, PSN_MAX - 100, PSN_MAX - 1, PSN_MAX,
};

static void mroce_psn_test_constants(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, MROCE_PSN_BITS, 24);
	KUNIT_EXPECT_EQ(test, (u32)MROCE_PSN_MASK, PSN_MAX);
	KUNIT_EXPECT_EQ(test, (u32)MROCE_PSN_HALF, PSN_HALF);
	KUNIT_EXPECT_EQ(test, (u32)MROCE_PSN_WINDOW_MAX, PSN_HALF - 1);
}

static void mroce_psn_test_mask(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, mroce_psn_mask(0), 0U);
	KUNIT_EXPECT_EQ(test, mroce_psn_mask(PSN_MAX), PSN_MAX);
	KUNIT_EXPECT_EQ(test, mroce_psn_mask(PSN_MAX + 1), 0U);
	KUNIT_EXPECT_EQ(test, mroce_psn_mask(0x1234567), 0x234567U);
	KUNIT_EXPECT_EQ(test, mroce_psn_mask(U32_MAX), PSN_MAX);
}

static void mroce_psn_test_add_sub_wrap(struct kunit *test)
{
	/* 0xffffff -> 0 and back */
	KUNIT_EXPECT_EQ(test, mroce_psn_add(PSN_MAX, 1), 0U);
	KUNIT_EXPECT_EQ(test, mroce_psn_add(0xfffffe, 3), 1U);
	KUNIT_EXPECT_EQ(test, mroce_psn_add(0, -(u32)1), PSN_MAX);
	KUNIT_EXPECT_EQ(test, mroce_psn_add(1, -(u32)3), 0xfffffeU);
	KUNIT_EXPECT_EQ(test, mroce_psn_add(0, PSN_MAX), PSN_MAX);
	KUNIT_EXPECT_EQ(test, mroce_psn_add(10, 20), 30U);
	KUNIT_EXPECT_EQ(test, mroce_psn_add(30, -(u32)20), 10U);

	/* (u32)-1 steps back, a full turn is the identity */
	KUNIT_EXPECT_EQ(test, mroce_psn_add(0, (u32)-1), PSN_MAX);
	KUNIT_EXPECT_EQ(test, mroce_psn_add(5, (u32)-6), PSN_MAX);
	KUNIT_EXPECT_EQ(test, mroce_psn_add(0x123456, BIT(24)), 0x123456U);
	KUNIT_EXPECT_EQ(test, mroce_psn_add(0x123456, -(u32)BIT(24)), 0x123456U);

	/* bits above 23 in either argument do not leak into the result */
	KUNIT_EXPECT_EQ(test, mroce_psn_add(0xff000005, 1), 6U);
	KUNIT_EXPECT_EQ(test, mroce_psn_add(0x1ffffff, 1), 0U);
	KUNIT_EXPECT_EQ(test, mroce_psn_add(1, 0xab000002), 3U);
	KUNIT_EXPECT_EQ(test, mroce_psn_add(0xff000000, -(u32)1), PSN_MAX);
}

static void mroce_psn_test_add_sub_inverse(struct kunit *test)
{
	unsigned int i, j;

	for (i = 0; i < ARRAY_SIZE(psn_starts); i++) {
		for (j = 0; j < ARRAY_SIZE(psn_offsets); j++) {
			u32 a = psn_starts[i], n = psn_offsets[j];
			u32 b = mroce_psn_add(a, n);

			KUNIT_EXPECT_LE(test, b, PSN_MAX);
			KUNIT_EXPECT_EQ(test, b, (u32)(((u64)a + n) % BIT(24)));
			KUNIT_EXPECT_EQ(test, mroce_psn_add(b, -(u32)n), a);
			KUNIT_EXPECT_EQ(test, mroce_psn_fwd(a, b), n);
		}
	}
}

static void mroce_psn_test_fwd(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, mroce_psn_fwd(7, 7), 0U);
	KUNIT_EXPECT_EQ(test, mroce_psn_fwd(PSN_MAX, 0), 1U);
	KUNIT_EXPECT_EQ(test, mroce_psn_fwd(0, PSN_MAX), PSN_MAX);
	KUNIT_EXPECT_EQ(test, mroce_psn_fwd(0xfffff0, 0x10), 0x20U);
	KUNIT_EXPECT_EQ(test, mroce_psn_fwd(0x10, 0xfffff0), PSN_MAX - 0x1f);
	KUNIT_EXPECT_EQ(test, mroce_psn_fwd(0x5000000, 0x7000003), 3U);
}

static void mroce_psn_test_before_after(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, mroce_psn_before(3, 5));
	KUNIT_EXPECT_FALSE(test, mroce_psn_before(5, 3));
	KUNIT_EXPECT_TRUE(test, mroce_psn_after(5, 3));
	KUNIT_EXPECT_FALSE(test, mroce_psn_after(3, 5));

	/* equal is neither, also when only the ignored high bits differ */
	KUNIT_EXPECT_FALSE(test, mroce_psn_before(7, 7));
	KUNIT_EXPECT_FALSE(test, mroce_psn_after(7, 7));
	KUNIT_EXPECT_FALSE(test, mroce_psn_before(7, 0x1000007));
	KUNIT_EXPECT_FALSE(test, mroce_psn_after(0x1000007, 7));

	/* wrap: 0xffffff is just before 0 */
	KUNIT_EXPECT_TRUE(test, mroce_psn_before(PSN_MAX, 0));
	KUNIT_EXPECT_TRUE(test, mroce_psn_after(0, PSN_MAX));
	KUNIT_EXPECT_FALSE(test, mroce_psn_before(0, PSN_MAX));
	KUNIT_EXPECT_FALSE(test, mroce_psn_after(PSN_MAX, 0));
	KUNIT_EXPECT_TRUE(test, mroce_psn_before(0xfffff0, 0x10));
	KUNIT_EXPECT_TRUE(test, mroce_psn_after(0x10, 0xfffff0));

	/* out-of-range inputs: 0x1000000 is PSN 0 */
	KUNIT_EXPECT_TRUE(test, mroce_psn_before(PSN_MAX, 0x1000000));
	KUNIT_EXPECT_TRUE(test, mroce_psn_after(0xff000001, PSN_MAX));
}

static void mroce_psn_test_half_space(struct kunit *test)
{
	const u32 a = 0x123456;

	/* 2^23 - 1 ahead: still after */
	KUNIT_EXPECT_TRUE(test, mroce_psn_before(a, a + PSN_HALF - 1));
	KUNIT_EXPECT_TRUE(test, mroce_psn_after(a + PSN_HALF - 1, a));

	/* exactly 2^23 apart: ambiguous, neither before nor after */
	KUNIT_EXPECT_FALSE(test, mroce_psn_before(a, a + PSN_HALF));
	KUNIT_EXPECT_FALSE(test, mroce_psn_after(a, a + PSN_HALF));
	KUNIT_EXPECT_FALSE(test, mroce_psn_before(a + PSN_HALF, a));
	KUNIT_EXPECT_FALSE(test, mroce_psn_after(a + PSN_HALF, a));
	KUNIT_EXPECT_FALSE(test, mroce_psn_before(0, PSN_HALF));
	KUNIT_EXPECT_FALSE(test, mroce_psn_before(PSN_HALF, 0));

	/* 2^23 + 1 ahead is really 2^23 - 1 behind */
	KUNIT_EXPECT_TRUE(test, mroce_psn_after(a, a + PSN_HALF + 1));
	KUNIT_EXPECT_TRUE(test, mroce_psn_before(a + PSN_HALF + 1, a));

	/* the same across the wrap: 0xffffff + 2^23 - 1 = 0x7ffffe */
	KUNIT_EXPECT_TRUE(test, mroce_psn_before(PSN_MAX, 0x7ffffe));
	KUNIT_EXPECT_FALSE(test, mroce_psn_before(PSN_MAX, 0x7fffff));
	KUNIT_EXPECT_FALSE(test, mroce_psn_after(PSN_MAX, 0x7fffff));
	KUNIT_EXPECT_TRUE(test, mroce_psn_after(PSN_MAX, 0x800000));
}

/*
 * Every start/offset pair against a model in plain 64-bit arithmetic:
 * b = a + d, so a is before b iff 0 < d < 2^23 and after b iff d > 2^23.
 */
static void mroce_psn_test_order_model(struct kunit *test)
{
	unsigned int i, j;

	for (i = 0; i < ARRAY_SIZE(psn_starts); i++) {
		for (j = 0; j < ARRAY_SIZE(psn_offsets); j++) {
			u32 a = psn_starts[i], d = psn_offsets[j];
			u32 b = (u32)(((u64)a + d) % BIT(24));

			KUNIT_EXPECT_EQ(test, mroce_psn_before(a, b),
					d > 0 && d < PSN_HALF);
			KUNIT_EXPECT_EQ(test, mroce_psn_after(a, b), d > PSN_HALF);
			/* antisymmetric, and a pair is never both */
			KUNIT_EXPECT_EQ(test, mroce_psn_before(a, b),
					mroce_psn_after(b, a));
			KUNIT_EXPECT_FALSE(test, mroce_psn_before(a, b) &&
					   mroce_psn_after(a, b));
		}
	}
}

static void mroce_psn_test_between(struct kunit *test)
{
	/* plain range, both ends inclusive */
	KUNIT_EXPECT_TRUE(test, mroce_psn_between(10, 10, 20));
	KUNIT_EXPECT_TRUE(test, mroce_psn_between(15, 10, 20));
	KUNIT_EXPECT_TRUE(test, mroce_psn_between(20, 10, 20));
	KUNIT_EXPECT_FALSE(test, mroce_psn_between(9, 10, 20));
	KUNIT_EXPECT_FALSE(test, mroce_psn_between(21, 10, 20));

	/* across the wrap: [0xfffffe, 2] */
	KUNIT_EXPECT_FALSE(test, mroce_psn_between(0xfffffd, 0xfffffe, 2));
	KUNIT_EXPECT_TRUE(test, mroce_psn_between(0xfffffe, 0xfffffe, 2));
	KUNIT_EXPECT_TRUE(test, mroce_psn_between(PSN_MAX, 0xfffffe, 2));
	KUNIT_EXPECT_TRUE(test, mroce_psn_between(0, 0xfffffe, 2));
	KUNIT_EXPECT_TRUE(test, mroce_psn_between(2, 0xfffffe, 2));
	KUNIT_EXPECT_FALSE(test, mroce_psn_between(3, 0xfffffe, 2));
	KUNIT_EXPECT_FALSE(test, mroce_psn_between(0x800000, 0xfffffe, 2));

	/* lo == hi is one PSN; hi == lo - 1 is the whole circle */
	KUNIT_EXPECT_TRUE(test, mroce_psn_between(5, 5, 5));
	KUNIT_EXPECT_FALSE(test, mroce_psn_between(6, 5, 5));
	KUNIT_EXPECT_FALSE(test, mroce_psn_between(4, 5, 5));
	KUNIT_EXPECT_TRUE(test, mroce_psn_between(4, 5, 4));
	KUNIT_EXPECT_TRUE(test, mroce_psn_between(0x800005, 5, 4));

	/* wider than the half space still works: it measures from lo */
	KUNIT_EXPECT_TRUE(test, mroce_psn_between(0xf00000, 0, 0xf00000));
	KUNIT_EXPECT_FALSE(test, mroce_psn_between(0xf00001, 0, 0xf00000));

	/* out-of-range inputs */
	KUNIT_EXPECT_TRUE(test, mroce_psn_between(0x1000000, 0xfffffe, 2));
	KUNIT_EXPECT_TRUE(test, mroce_psn_between(1, 0xfffffffe, 0x1000002));
	KUNIT_EXPECT_FALSE(test, mroce_psn_between(0x3000003, 0xfffffe, 2));
}

static void mroce_psn_test_in_window(struct kunit *test)
{
	/* [0xfffffe, 2): end excluded */
	KUNIT_EXPECT_FALSE(test, mroce_psn_in_window(0xfffffd, 0xfffffe, 2));
	KUNIT_EXPECT_TRUE(test, mroce_psn_in_window(0xfffffe, 0xfffffe, 2));
	KUNIT_EXPECT_TRUE(test, mroce_psn_in_window(PSN_MAX, 0xfffffe, 2));
	KUNIT_EXPECT_TRUE(test, mroce_psn_in_window(0, 0xfffffe, 2));
	KUNIT_EXPECT_TRUE(test, mroce_psn_in_window(1, 0xfffffe, 2));
	KUNIT_EXPECT_FALSE(test, mroce_psn_in_window(2, 0xfffffe, 2));

	/* empty window contains nothing, not even start */
	KUNIT_EXPECT_FALSE(test, mroce_psn_in_window(5, 5, 5));
	KUNIT_EXPECT_FALSE(test, mroce_psn_in_window(PSN_MAX, PSN_MAX, PSN_MAX));
	KUNIT_EXPECT_FALSE(test, mroce_psn_in_window(0, PSN_MAX, PSN_MAX));

	/* one-PSN window ending at the wrap */
	KUNIT_EXPECT_TRUE(test, mroce_psn_in_window(PSN_MAX, PSN_MAX, 0));
	KUNIT_EXPECT_FALSE(test, mroce_psn_in_window(0, PSN_MAX, 0));

	/* out-of-range inputs */
	KUNIT_EXPECT_TRUE(test, mroce_psn_in_window(0xff000000, 0xfffffe, 2));
	KUNIT_EXPECT_FALSE(test, mroce_psn_in_window(0x1000002, 0xfffffe, 2));
}

static struct kunit_case mroce_psn_test_cases[] = {
	KUNIT_CASE(mroce_psn_test_constants),
	KUNIT_CASE(mroce_psn_test_mask),
	KUNIT_CASE(mroce_psn_test_add_sub_wrap),
	KUNIT_CASE(mroce_psn_test_add_sub_inverse),
	KUNIT_CASE(mroce_psn_test_fwd),
	KUNIT_CASE(mroce_psn_test_before_after),
	KUNIT_CASE(mroce_psn_test_half_space),
	KUNIT_CASE(mroce_psn_test_order_model),
	KUNIT_CASE(mroce_psn_test_between),
	KUNIT_CASE(mroce_psn_test_in_window),
	{}
};

static struct kunit_suite mroce_psn_test_suite = {
	.name = "mroce_psn",
	.test_cases = mroce_psn_test_cases,
};

kunit_test_suite(mroce_psn_test_suite);
