// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit suite for the retransmission timeout estimator (mroce_rto.h).
 */

#include <kunit/test.h>

#include "mroce_rto.h"

static void mroce_rto_test_initial(struct kunit *test)
{
	struct mroce_rto r;

	mroce_rto_init(&r);
	KUNIT_EXPECT_EQ(test, mroce_rto_us(&r), MROCE_RTO_INIT_US);
}

static void mroce_rto_test_first_sample(struct kunit *test)
{
	struct mroce_rto r;

	mroce_rto_init(&r);
	mroce_rto_sample(&r, 20000);
	/* RFC 6298 2.2: SRTT = R, RTTVAR = R/2, RTO = SRTT + 4 RTTVAR */
	KUNIT_EXPECT_EQ(test, r.srtt_us, 20000U);
	KUNIT_EXPECT_EQ(test, r.rttvar_us, 10000U);
	KUNIT_EXPECT_EQ(test, mroce_rto_us(&r), 60000U);
}

static void mroce_rto_test_converges(struct kunit *test)
{
	struct mroce_rto r;
	int i;

	mroce_rto_init(&r);
	mroce_rto_sample(&r, 100000);
	for (i = 0; i < 200; i++)
		mroce_rto_sample(&r, 8000);
	/* steady samples: SRTT -> 8 ms, RTTVAR -> 0, RTO -> SRTT */
	KUNIT_EXPECT_LE(test, r.srtt_us, 8100U);
	KUNIT_EXPECT_GE(test, r.srtt_us, 8000U);
	KUNIT_EXPECT_LE(test, r.rttvar_us, 100U);
	KUNIT_EXPECT_LE(test, mroce_rto_us(&r), 8500U);
	KUNIT_EXPECT_GE(test, mroce_rto_us(&r), 8000U);
}

static void mroce_rto_test_floor(struct kunit *test)
{
	struct mroce_rto r;
	int i;

	mroce_rto_init(&r);
	for (i = 0; i < 100; i++)
		mroce_rto_sample(&r, 30);	/* 30 us fabric */
	KUNIT_EXPECT_EQ(test, mroce_rto_us(&r), MROCE_RTO_MIN_US);
	mroce_rto_sample(&r, 0);		/* nonsense sample */
	KUNIT_EXPECT_GE(test, r.srtt_us, 1U);
}

static void mroce_rto_test_backoff(struct kunit *test)
{
	struct mroce_rto r;
	u32 base;
	int i;

	mroce_rto_init(&r);
	mroce_rto_sample(&r, 10000);
	base = mroce_rto_us(&r);
	mroce_rto_expired(&r);
	KUNIT_EXPECT_EQ(test, mroce_rto_us(&r), 2 * base);
	mroce_rto_expired(&r);
	KUNIT_EXPECT_EQ(test, mroce_rto_us(&r), 4 * base);
	for (i = 0; i < 50; i++)
		mroce_rto_expired(&r);
	/* the ceiling holds however often it expires */
	KUNIT_EXPECT_EQ(test, mroce_rto_us(&r), MROCE_RTO_MAX_US);
	KUNIT_EXPECT_EQ(test, r.backoff, MROCE_RTO_MAX_BACKOFF);
	mroce_rto_progress(&r);
	KUNIT_EXPECT_EQ(test, mroce_rto_us(&r), base);
}

static void mroce_rto_test_sample_resets_backoff(struct kunit *test)
{
	struct mroce_rto r;

	mroce_rto_init(&r);
	mroce_rto_sample(&r, 10000);
	mroce_rto_expired(&r);
	mroce_rto_expired(&r);
	mroce_rto_sample(&r, 10000);
	KUNIT_EXPECT_EQ(test, r.backoff, 0);
}

static void mroce_rto_test_variance(struct kunit *test)
{
	struct mroce_rto r;
	int i;

	mroce_rto_init(&r);
	/* alternating 5 ms / 15 ms: RTO must cover the spread */
	for (i = 0; i < 200; i++)
		mroce_rto_sample(&r, i & 1 ? 15000 : 5000);
	KUNIT_EXPECT_GE(test, mroce_rto_us(&r), 15000U);
	KUNIT_EXPECT_LE(test, mroce_rto_us(&r), 40000U);
}

/* The verbs retry limit: T x (retry_cnt + 1), T = 4.096 us x 2^timeout. */
static void mroce_rto_test_verbs_retry(struct kunit *test)
{
	/* NCCL's timeout 20, retry_cnt 7: 8 x 4.29 s */
	KUNIT_EXPECT_EQ(test, mroce_verbs_retry_ns(20, 7), 8ULL * 4294967296ULL);
	KUNIT_EXPECT_EQ(test, mroce_verbs_retry_ns(14, 0), 67108864ULL);
	KUNIT_EXPECT_EQ(test, mroce_verbs_retry_ns(17, 3), 4ULL * 536870912ULL);
	/* 0: wait forever */
	KUNIT_EXPECT_EQ(test, mroce_verbs_retry_ns(0, 7), 0ULL);
	/* the 5-bit maximum does not overflow */
	KUNIT_EXPECT_EQ(test, mroce_verbs_retry_ns(31, 7), 8ULL * (4096ULL << 31));
	KUNIT_EXPECT_EQ(test, mroce_verbs_retry_ns(255, 7),
			mroce_verbs_retry_ns(31, 7));
}

/*
 * The budget is spent when both the time and retry_cnt + 1 RTOs have
 * gone by: a host stalled past the budget has seen one late RTO only.
 */
static void mroce_rto_test_retry_spent(struct kunit *test)
{
	u64 budget = mroce_verbs_retry_ns(14, 7);	/* 537 ms */

	/* not yet: too early, whatever the count */
	KUNIT_EXPECT_FALSE(test, mroce_verbs_retry_spent(budget, 8, 14, 7));
	/* a 600 ms stall, one RTO fired late: not spent */
	KUNIT_EXPECT_FALSE(test, mroce_verbs_retry_spent(600000000ULL, 1, 14, 7));
	KUNIT_EXPECT_FALSE(test, mroce_verbs_retry_spent(budget + 1, 7, 14, 7));
	/* the transmission and its 7 retries timed out */
	KUNIT_EXPECT_TRUE(test, mroce_verbs_retry_spent(budget + 1, 8, 14, 7));
	/* retry_cnt 0: one RTO after the budget */
	KUNIT_EXPECT_FALSE(test, mroce_verbs_retry_spent(67108865ULL, 0, 14, 0));
	KUNIT_EXPECT_TRUE(test, mroce_verbs_retry_spent(67108865ULL, 1, 14, 0));
	/* timeout 0: never */
	KUNIT_EXPECT_FALSE(test, mroce_verbs_retry_spent(U64_MAX, U32_MAX, 0, 7));
}

/* The ceiling leaves several resends inside the verbs budget. */
static void mroce_rto_test_max_for(struct kunit *test)
{
	/* timeout 14, retry_cnt 7: 537 ms budget, 67 ms ceiling */
	KUNIT_EXPECT_EQ(test, mroce_rto_max_for(14, 7), 67108U);
	/* small budgets keep the floor, large ones the ceiling */
	KUNIT_EXPECT_EQ(test, mroce_rto_max_for(8, 0), (u32)MROCE_RTO_MIN_US);
	KUNIT_EXPECT_EQ(test, mroce_rto_max_for(20, 7), (u32)MROCE_RTO_MAX_US);
	KUNIT_EXPECT_EQ(test, mroce_rto_max_for(0, 7), (u32)MROCE_RTO_MAX_US);
}

/* An estimator that has settled on @srtt_us and @rttvar_us. */
static struct mroce_rto mroce_rto_test_est(u32 srtt_us, u32 rttvar_us)
{
	struct mroce_rto r;

	mroce_rto_init(&r);
	r.srtt_us = srtt_us;
	r.rttvar_us = rttvar_us;
	return r;
}

/*
 * PTO = max(2 SRTT, SRTT + 4 RTTVAR, SRTT + allowance, floor), from now;
 * with RTTVAR 0 as before the variance term: 2 SRTT or the floor.
 */
static void mroce_rto_test_tlp_pto(struct kunit *test)
{
	const u64 now = 1000000000ULL;
	struct mroce_rto r = mroce_rto_test_est(0, 0);

	KUNIT_EXPECT_EQ(test, mroce_tlp_at(&r, now, 0), 0ULL);	/* no sample */
	r = mroce_rto_test_est(100, 0);
	KUNIT_EXPECT_EQ(test, mroce_tlp_at(&r, now, 0),
			now + MROCE_TLP_MIN_US * 1000ULL);
	r = mroce_rto_test_est(900, 0);
	KUNIT_EXPECT_EQ(test, mroce_tlp_at(&r, now, 0), now + 1800000ULL);
	r = mroce_rto_test_est(3000, 0);
	KUNIT_EXPECT_EQ(test, mroce_tlp_at(&r, now, now + 20000000ULL),
			now + 6000000ULL);
}

/*
 * Where round trips vary, an ACK that is only late must not draw a
 * probe: the variance term takes over from 2 SRTT once 4 RTTVAR > SRTT.
 * Measured on TCG guests: typical round trips 0.4 ms, 3 ms at the 99th
 * percentile.
 */
static void mroce_rto_test_tlp_rttvar(struct kunit *test)
{
	const u64 now = 1000000000ULL;
	struct mroce_rto r = mroce_rto_test_est(400, 400);
	int i;

	/* 400 + 4 x 400 us, not max(800 us, 1 ms) */
	KUNIT_EXPECT_EQ(test, mroce_tlp_at(&r, now, 0), now + 2000000ULL);
	/* 4 RTTVAR == SRTT: 2 SRTT either way */
	r = mroce_rto_test_est(2000, 500);
	KUNIT_EXPECT_EQ(test, mroce_tlp_at(&r, now, 0), now + 4000000ULL);
	/* a small RTTVAR does not lower the allowance's term */
	r = mroce_rto_test_est(400, 50);
	KUNIT_EXPECT_EQ(test, mroce_tlp_at(&r, now, 0),
			now + MROCE_TLP_MIN_US * 1000ULL);
	/* never after the RTO, whatever RTTVAR says */
	r = mroce_rto_test_est(400, 4000);
	KUNIT_EXPECT_EQ(test, mroce_tlp_at(&r, now, now + 5000000ULL),
			now + 5000000ULL);

	/*
	 * From samples: one in ten round trips takes 3 ms, the rest 0.4 ms.
	 * Right after a slow one and nine typical ones later, the probe
	 * comes later than 2 SRTT and the 1 ms floor would put it, and no
	 * later than the RTO.
	 */
	mroce_rto_init(&r);
	for (i = 0; i < 400; i++) {
		mroce_rto_sample(&r, i % 10 == 9 ? 3000 : 400);
		if (i < 390)
			continue;
		KUNIT_EXPECT_GT(test, mroce_tlp_at(&r, now, 0),
				now + 1000ULL * max(2U * r.srtt_us,
						    MROCE_TLP_MIN_US));
		KUNIT_EXPECT_LE(test, mroce_tlp_at(&r, now, 0),
				now + 1000ULL * mroce_rto_us(&r));
	}
}

/*
 * A steady RTT leaves RTTVAR near 0, so the RTO (about SRTT) comes before
 * the PTO (2 SRTT): the probe must take the RTO's place, not vanish
 * (before, every tail loss of such a connection ended in an RTO).
 */
static void mroce_rto_test_tlp_before_rto(struct kunit *test)
{
	const u64 now = 1000000000ULL;
	struct mroce_rto r;
	u64 rto_at, tlp_at;
	int i;

	mroce_rto_init(&r);
	for (i = 0; i < 200; i++)
		mroce_rto_sample(&r, 8000);
	rto_at = now + mroce_rto_us(&r) * 1000ULL;
	tlp_at = mroce_tlp_at(&r, now, rto_at);
	KUNIT_EXPECT_NE(test, tlp_at, 0ULL);
	KUNIT_EXPECT_LE(test, tlp_at, rto_at);
	KUNIT_EXPECT_EQ(test, tlp_at, rto_at);
	/* an RTO already overdue: the probe goes now, never in the past */
	KUNIT_EXPECT_EQ(test, mroce_tlp_at(&r, now, now - 5), now);
	/* an RTO far away leaves the PTO alone */
	KUNIT_EXPECT_EQ(test, mroce_tlp_at(&r, now, now + 100000000ULL),
			now + 2ULL * r.srtt_us * 1000);
}

static struct kunit_case mroce_rto_cases[] = {
	KUNIT_CASE(mroce_rto_test_tlp_pto),
	KUNIT_CASE(mroce_rto_test_tlp_rttvar),
	KUNIT_CASE(mroce_rto_test_tlp_before_rto),
	KUNIT_CASE(mroce_rto_test_max_for),
	KUNIT_CASE(mroce_rto_test_verbs_retry),
	KUNIT_CASE(mroce_rto_test_retry_spent),
	KUNIT_CASE(mroce_rto_test_initial),
	KUNIT_CASE(mroce_rto_test_first_sample),
	KUNIT_CASE(mroce_rto_test_converges),
	KUNIT_CASE(mroce_rto_test_floor),
	KUNIT_CASE(mroce_rto_test_backoff),
	KUNIT_CASE(mroce_rto_test_sample_resets_backoff),
	KUNIT_CASE(mroce_rto_test_variance),
	{}
};

static struct kunit_suite mroce_rto_suite = {
	.name = "mroce_rto",
	.test_cases = mroce_rto_cases,
};

kunit_test_suite(mroce_rto_suite);
