// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit suite for the send scoreboard and loss detector (mroce_sb.h):
 * SACK bookkeeping, the path-sequence and RACK rules, wrap-around,
 * duplicates, all-lost, reorder-only and adaptation to reordering.
 */

#include <kunit/test.h>

#include "mroce_psn.h"
#include "mroce_sb.h"

/* What the callbacks saw. */
struct sb_log {
	u32 delivered;
	u32 lost_seq;
	u32 lost_rack;
	u32 last_psn;
};

static void sb_log_fn(void *ctx, u32 psn, const struct mroce_sb_slot *s,
		      enum mroce_sb_event ev)
{
	struct sb_log *l = ctx;

	l->last_psn = psn;
	if (ev == MROCE_SB_DELIVERED)
		l->delivered++;
	else if (ev == MROCE_SB_LOST_PATH_SEQ)
		l->lost_seq++;
	else
		l->lost_rack++;
}

static struct mroce_sb *sb_new(struct kunit *test, u32 psn)
{
	struct mroce_sb *sb = kunit_kzalloc(test, sizeof(*sb), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, sb);
	mroce_sb_init(sb, psn);
	return sb;
}

/* Send @n new PSNs round-robin over @paths paths, 1 us apart from @t. */
static void sb_send(struct kunit *test, struct mroce_sb *sb, u32 n, u32 paths,
		    u32 *seq, u32 t)
{
	u32 i;

	for (i = 0; i < n; i++) {
		u32 path = sb->nxt % paths;

		KUNIT_ASSERT_TRUE(test, mroce_sb_sent(sb, sb->nxt, path,
						      seq[path]++, t + i));
	}
}

static void sack_set(u64 *sack, u32 i)
{
	sack[i / 64] |= BIT_ULL(i % 64);
}

static const struct mroce_sb_clock sb_clk = {
	.now_us = 1000, .srtt_us = 100, .min_rtt_us = 80, .spread_us = 0,
};

static void mroce_sb_test_window(struct kunit *test)
{
	struct mroce_sb *sb = sb_new(test, 0);
	u32 seq[1] = {};

	sb_send(test, sb, MROCE_WINDOW, 1, seq, 0);
	KUNIT_EXPECT_EQ(test, mroce_sb_outstanding(sb), (u32)MROCE_WINDOW);
	/* the 257th PSN does not fit the SACK span */
	KUNIT_EXPECT_FALSE(test, mroce_sb_sent(sb, sb->nxt, 0, 0, 0));
	/* neither does a PSN outside [una, nxt) nor a bad path */
	KUNIT_EXPECT_FALSE(test, mroce_sb_sent(sb, 5000, 0, 0, 0));
	KUNIT_EXPECT_FALSE(test, mroce_sb_sent(sb, 3, MROCE_SB_PATHS, 0, 0));
	KUNIT_EXPECT_EQ(test, mroce_sb_ack(sb, 10, NULL, NULL, NULL), 10);
	KUNIT_EXPECT_TRUE(test, mroce_sb_sent(sb, sb->nxt, 0, 0, 0));
}

static void mroce_sb_test_cumulative(struct kunit *test)
{
	struct mroce_sb *sb = sb_new(test, 100);
	struct sb_log l = {};
	u32 seq[2] = {};

	sb_send(test, sb, 20, 2, seq, 0);
	KUNIT_EXPECT_EQ(test, mroce_sb_ack(sb, 110, NULL, sb_log_fn, &l), 10);
	KUNIT_EXPECT_EQ(test, l.delivered, 10U);
	KUNIT_EXPECT_EQ(test, sb->una, 110U);
	KUNIT_EXPECT_EQ(test, mroce_sb_outstanding(sb), 10U);
	/* beyond what was sent: bogus, nothing applied */
	KUNIT_EXPECT_EQ(test, mroce_sb_ack(sb, 121, NULL, sb_log_fn, &l), -1);
	KUNIT_EXPECT_EQ(test, sb->una, 110U);
	/* the same ACK again: nothing new */
	KUNIT_EXPECT_EQ(test, mroce_sb_ack(sb, 110, NULL, sb_log_fn, &l), 0);
	KUNIT_EXPECT_EQ(test, mroce_sb_ack(sb, 120, NULL, sb_log_fn, &l), 10);
	KUNIT_EXPECT_EQ(test, mroce_sb_outstanding(sb), 0U);
}

/* One path, PSN 0 lost, 1..9 SACKed: rule 1 finds exactly PSN 0. */
static void mroce_sb_test_path_gap(struct kunit *test)
{
	struct mroce_sb *sb = sb_new(test, 0);
	u64 sack[MROCE_WIRE_SACK_WORDS] = {};
	struct mroce_sb_clock c = sb_clk;
	struct sb_log l = {};
	u32 seq[1] = {}, i, p, wait;

	sb_send(test, sb, 10, 1, seq, 0);
	for (i = 1; i < 10; i++)
		sack_set(sack, i);
	KUNIT_EXPECT_EQ(test, mroce_sb_ack(sb, 0, sack, sb_log_fn, &l), 9);
	/* out for less than reo_wnd (80 / 4): not yet */
	c.now_us = 10;
	KUNIT_EXPECT_EQ(test, mroce_sb_detect(sb, &c, sb_log_fn, &l, &wait), 0U);
	KUNIT_EXPECT_EQ(test, wait, 10U);
	KUNIT_EXPECT_EQ(test, mroce_sb_detect(sb, &sb_clk, sb_log_fn, &l, NULL),
			1U);
	KUNIT_EXPECT_EQ(test, l.lost_seq, 1U);
	KUNIT_EXPECT_EQ(test, l.last_psn, 0U);
	KUNIT_ASSERT_TRUE(test, mroce_sb_next_lost(sb, 0, &p));
	KUNIT_EXPECT_EQ(test, p, 0U);
	/* detected once: running again declares nothing new */
	KUNIT_EXPECT_EQ(test, mroce_sb_detect(sb, &sb_clk, NULL, NULL, NULL), 0U);
	/* resent: no longer pending, marked as a retransmission */
	KUNIT_EXPECT_TRUE(test, mroce_sb_sent(sb, 0, 0, seq[0]++, 500));
	KUNIT_EXPECT_FALSE(test, mroce_sb_next_lost(sb, 0, &p));
	KUNIT_EXPECT_TRUE(test, mroce_sb_slot(sb, 0)->flags & MROCE_SB_RETX);
	KUNIT_EXPECT_EQ(test, mroce_sb_ack(sb, 10, NULL, sb_log_fn, &l), 1);
}

/* Fewer than K later packets on the path: not yet loss. */
static void mroce_sb_test_small_gap(struct kunit *test)
{
	struct mroce_sb *sb = sb_new(test, 0);
	u64 sack[MROCE_WIRE_SACK_WORDS] = {};
	struct mroce_sb_clock c = sb_clk;
	u32 seq[1] = {};

	sb_send(test, sb, 3, 1, seq, 0);
	sack_set(sack, 1);
	sack_set(sack, 2);
	mroce_sb_ack(sb, 0, sack, NULL, NULL);
	/* no RTT sample yet: rule 2 waits too */
	c.srtt_us = 0;
	KUNIT_EXPECT_EQ(test, mroce_sb_detect(sb, &c, NULL, NULL, NULL), 0U);
}

/*
 * Two paths, path 1 slower: all of path 0 delivered, path 1 not yet.
 * That is reordering: rule 1 never fires, rule 2 waits SRTT + reo_wnd.
 */
static void mroce_sb_test_reorder_only(struct kunit *test)
{
	struct mroce_sb *sb = sb_new(test, 0);
	u64 sack[MROCE_WIRE_SACK_WORDS] = {};
	struct mroce_sb_clock c = sb_clk;
	struct sb_log l = {};
	u32 seq[2] = {}, i, wait;

	sb_send(test, sb, 64, 2, seq, 0);
	for (i = 1; i < 63; i += 2)	/* PSNs 2, 4, .. 62; 0 cumulative */
		sack_set(sack, i);
	mroce_sb_ack(sb, 1, sack, sb_log_fn, &l);
	KUNIT_EXPECT_EQ(test, l.delivered, 32U);
	c.now_us = 50;		/* < SRTT + reo_wnd since sending */
	KUNIT_EXPECT_EQ(test, mroce_sb_detect(sb, &c, sb_log_fn, &l, &wait), 0U);
	KUNIT_EXPECT_EQ(test, wait, 1U + 100U + 20U - 50U);	/* PSN 1 */
	/* path 1 arrives: nothing was lost, nothing is */
	memset(sack, 0, sizeof(sack));
	KUNIT_EXPECT_EQ(test, mroce_sb_ack(sb, 64, NULL, sb_log_fn, &l), 32);
	KUNIT_EXPECT_EQ(test, l.lost_seq + l.lost_rack, 0U);
}

/* The last packet of a path, overtaken in time: rule 2. */
static void mroce_sb_test_rack(struct kunit *test)
{
	struct mroce_sb *sb = sb_new(test, 0);
	u64 sack[MROCE_WIRE_SACK_WORDS] = {};
	struct mroce_sb_clock c = sb_clk;
	struct sb_log l = {};
	u32 wait;

	mroce_sb_sent(sb, 0, 1, 0, 0);		/* path 1, lost */
	mroce_sb_sent(sb, 1, 0, 0, 10);		/* path 0, delivered */
	sack_set(sack, 1);
	mroce_sb_ack(sb, 0, sack, NULL, NULL);
	c.now_us = 119;				/* 0 + 100 + 80 / 4 = 120 */
	KUNIT_EXPECT_EQ(test, mroce_sb_detect(sb, &c, sb_log_fn, &l, &wait), 0U);
	KUNIT_EXPECT_EQ(test, wait, 1U);
	c.now_us = 120;
	KUNIT_EXPECT_EQ(test, mroce_sb_detect(sb, &c, sb_log_fn, &l, &wait), 1U);
	KUNIT_EXPECT_EQ(test, l.lost_rack, 1U);
	KUNIT_EXPECT_EQ(test, wait, U32_MAX);
	/* the spread between path RTTs widens the window, SRTT caps it */
	c.spread_us = 60;
	KUNIT_EXPECT_EQ(test, mroce_sb_reo_wnd(sb, &c), 60U);
	c.spread_us = 500;
	KUNIT_EXPECT_EQ(test, mroce_sb_reo_wnd(sb, &c), 100U);
	/* a jittery RTT: RTTVAR sets the unit and raises the cap */
	c.spread_us = 0;
	c.rttvar_us = 200;
	KUNIT_EXPECT_EQ(test, mroce_sb_reo_wnd(sb, &c), 4U * 200U);
	sb->reo_mult = 9;
	KUNIT_EXPECT_EQ(test, mroce_sb_reo_wnd(sb, &c), 900U);
	sb->reo_mult = 16;
	KUNIT_EXPECT_EQ(test, mroce_sb_reo_wnd(sb, &c), 100U + 4 * 200U);
}

/* Everything lost: no rule can fire; the RTO and the tail probe act. */
static void mroce_sb_test_all_lost(struct kunit *test)
{
	struct mroce_sb *sb = sb_new(test, 7);
	struct mroce_sb_clock c = sb_clk;
	u32 seq[4] = {}, p;

	sb_send(test, sb, 40, 4, seq, 0);
	c.now_us = 1000000;
	KUNIT_EXPECT_EQ(test, mroce_sb_detect(sb, &c, NULL, NULL, NULL), 0U);
	KUNIT_EXPECT_FALSE(test, mroce_sb_next_lost(sb, sb->una, &p));
	KUNIT_EXPECT_EQ(test, mroce_sb_outstanding(sb), 40U);
	KUNIT_EXPECT_EQ(test, mroce_sb_ack(sb, 47, NULL, NULL, NULL), 40);
	KUNIT_EXPECT_EQ(test, mroce_sb_outstanding(sb), 0U);
}

/*
 * Rule 1 at its edges, alone (no RTT sample, so rule 2 waits): exactly
 * K later on the same path is a loss, K - 1 is not, another path is not,
 * an older delivery does not move the path's mark back.
 */
static void mroce_sb_test_path_seq_rule(struct kunit *test)
{
	struct mroce_sb *sb = sb_new(test, 0);
	u64 sack[MROCE_WIRE_SACK_WORDS] = {};
	struct mroce_sb_clock c = sb_clk;
	struct sb_log l = {};
	u32 p;

	c.srtt_us = 0;
	KUNIT_ASSERT_EQ(test, sb->k, (u32)MROCE_SB_K_INIT);
	KUNIT_ASSERT_TRUE(test, mroce_sb_sent(sb, 0, 0, 10, 0));
	KUNIT_ASSERT_TRUE(test, mroce_sb_sent(sb, 1, 0, 11, 0));
	KUNIT_ASSERT_TRUE(test, mroce_sb_sent(sb, 2, 1, 100, 0));
	KUNIT_ASSERT_TRUE(test, mroce_sb_sent(sb, 3, 0, 10 + MROCE_SB_K_INIT,
					      0));
	/* nothing delivered yet */
	KUNIT_EXPECT_EQ(test, mroce_sb_detect(sb, &c, sb_log_fn, &l, NULL), 0U);
	sack_set(sack, 3);
	KUNIT_EXPECT_EQ(test, mroce_sb_ack(sb, 0, sack, sb_log_fn, &l), 1);
	KUNIT_EXPECT_EQ(test, mroce_sb_detect(sb, &c, sb_log_fn, &l, NULL), 1U);
	KUNIT_EXPECT_EQ(test, l.lost_seq, 1U);
	KUNIT_ASSERT_TRUE(test, mroce_sb_next_lost(sb, 0, &p));
	KUNIT_EXPECT_EQ(test, p, 0U);
	/* PSN 1 is K - 1 behind, PSN 2 is on path 1 */
	KUNIT_EXPECT_FALSE(test, mroce_sb_next_lost(sb, 1, &p));
	/* an older delivery on path 0 leaves its mark at 10 + K */
	sack_set(sack, 1);
	KUNIT_EXPECT_EQ(test, mroce_sb_ack(sb, 0, sack, sb_log_fn, &l), 1);
	KUNIT_EXPECT_EQ(test, sb->dlv_seq[0], 10U + MROCE_SB_K_INIT);
	KUNIT_EXPECT_EQ(test, mroce_sb_detect(sb, &c, sb_log_fn, &l, NULL), 0U);
	KUNIT_EXPECT_EQ(test, l.lost_seq + l.lost_rack, 1U);
}

/*
 * Path sequence numbers compare modulo 2^32 by the half-space rule: a
 * delivery 2^31 - 1 ahead (across the wrap) shows a gap, one 2^31 ahead
 * reads as behind and shows none.
 */
static void mroce_sb_test_path_seq_half(struct kunit *test)
{
	const u32 s0 = U32_MAX - 2;
	struct mroce_sb_clock c = sb_clk;
	u32 ahead[] = { 0x7fffffff, 0x80000000 };
	unsigned int i;

	c.srtt_us = 0;
	for (i = 0; i < ARRAY_SIZE(ahead); i++) {
		struct mroce_sb *sb = sb_new(test, 0);
		u64 sack[MROCE_WIRE_SACK_WORDS] = {};

		KUNIT_ASSERT_TRUE(test, mroce_sb_sent(sb, 0, 0, s0, 0));
		KUNIT_ASSERT_TRUE(test, mroce_sb_sent(sb, 1, 0, s0 + ahead[i],
						      0));
		sack_set(sack, 1);
		KUNIT_EXPECT_EQ(test, mroce_sb_ack(sb, 0, sack, NULL, NULL), 1);
		KUNIT_EXPECT_EQ(test, mroce_sb_detect(sb, &c, NULL, NULL, NULL),
				i == 0 ? 1U : 0U);
	}
}

/* PSNs wrap at 2^24, path sequence numbers at 2^32. */
static void mroce_sb_test_wrap(struct kunit *test)
{
	struct mroce_sb *sb = sb_new(test, MROCE_PSN_MASK - 4);
	u64 sack[MROCE_WIRE_SACK_WORDS] = {};
	struct sb_log l = {};
	u32 seq[1] = { U32_MAX - 2 }, i, p;

	sb_send(test, sb, 12, 1, seq, 0);
	KUNIT_EXPECT_EQ(test, sb->nxt, 7U);
	/* MROCE_PSN_MASK - 3 lost; the rest, across both wraps, SACKed */
	for (i = 1; i <= 10; i++)
		sack_set(sack, i);
	mroce_sb_ack(sb, MROCE_PSN_MASK - 4 + 1, sack, sb_log_fn, &l);
	KUNIT_EXPECT_EQ(test, l.delivered, 11U);
	KUNIT_EXPECT_EQ(test, mroce_sb_detect(sb, &sb_clk, sb_log_fn, &l, NULL),
			1U);
	KUNIT_ASSERT_TRUE(test, mroce_sb_next_lost(sb, sb->una, &p));
	KUNIT_EXPECT_EQ(test, p, MROCE_PSN_MASK - 3);
	KUNIT_EXPECT_EQ(test, mroce_sb_ack(sb, 7, NULL, sb_log_fn, &l), 1);
	KUNIT_EXPECT_EQ(test, mroce_sb_outstanding(sb), 0U);
}

/* Duplicate and stale ACKs deliver nothing twice. */
static void mroce_sb_test_duplicates(struct kunit *test)
{
	struct mroce_sb *sb = sb_new(test, 0);
	u64 sack[MROCE_WIRE_SACK_WORDS] = {};
	struct sb_log l = {};
	u32 seq[1] = {};

	sb_send(test, sb, 20, 1, seq, 0);
	sack_set(sack, 5);
	sack_set(sack, 6);
	KUNIT_EXPECT_EQ(test, mroce_sb_ack(sb, 2, sack, sb_log_fn, &l), 4);
	KUNIT_EXPECT_EQ(test, mroce_sb_ack(sb, 2, sack, sb_log_fn, &l), 0);
	/* cumulative to 9: 2..6 are new, 7 and 8 were SACKed */
	KUNIT_EXPECT_EQ(test, mroce_sb_ack(sb, 9, NULL, sb_log_fn, &l), 5);
	/* a stale ACK, reordered behind it: its SACK bit 12 still counts */
	memset(sack, 0, sizeof(sack));
	sack_set(sack, 10);		/* 2 + 10 = PSN 12 */
	KUNIT_EXPECT_EQ(test, mroce_sb_ack(sb, 2, sack, sb_log_fn, &l), 1);
	KUNIT_EXPECT_EQ(test, sb->una, 9U);
	KUNIT_EXPECT_EQ(test, l.delivered, 10U);
}

/* A retransmission lost again is found again, after its new seq. */
static void mroce_sb_test_lost_twice(struct kunit *test)
{
	struct mroce_sb *sb = sb_new(test, 0);
	u64 sack[MROCE_WIRE_SACK_WORDS] = {};
	u32 seq[1] = {}, i;

	sb_send(test, sb, 5, 1, seq, 0);
	for (i = 1; i < 5; i++)
		sack_set(sack, i);
	mroce_sb_ack(sb, 0, sack, NULL, NULL);
	KUNIT_EXPECT_EQ(test, mroce_sb_detect(sb, &sb_clk, NULL, NULL, NULL), 1U);
	mroce_sb_sent(sb, 0, 0, seq[0]++, 200);		/* seq 5 */
	/* new packets, seq 6..8, delivered: only 3 after the resend */
	sb_send(test, sb, 3, 1, seq, 210);
	memset(sack, 0, sizeof(sack));
	for (i = 1; i < 8; i++)
		sack_set(sack, i);
	mroce_sb_ack(sb, 0, sack, NULL, NULL);
	KUNIT_EXPECT_EQ(test, mroce_sb_detect(sb, &sb_clk, NULL, NULL, NULL), 1U);
	KUNIT_EXPECT_EQ(test, mroce_sb_slot(sb, 0)->nretx, 1);
}

/* Spurious retransmissions make the detector more patient, then it decays. */
static void mroce_sb_test_adapt(struct kunit *test)
{
	struct mroce_sb *sb = sb_new(test, 0);
	u64 sack[MROCE_WIRE_SACK_WORDS] = {};
	struct mroce_sb_clock c = sb_clk;
	u32 seq[1] = {}, i;

	for (i = 0; i < 10; i++)
		mroce_sb_spurious(sb);
	KUNIT_EXPECT_EQ(test, sb->k, (u32)MROCE_SB_K_MAX);
	KUNIT_EXPECT_EQ(test, sb->reo_mult, 11U);
	/* with K = 64, 10 later packets on the path are reordering */
	sb_send(test, sb, 11, 1, seq, 0);
	for (i = 1; i < 11; i++)
		sack_set(sack, i);
	c.now_us = 50;		/* RACK is not due either */
	mroce_sb_ack(sb, 0, sack, NULL, NULL);
	KUNIT_EXPECT_EQ(test, mroce_sb_detect(sb, &c, NULL, NULL, NULL), 0U);
	mroce_sb_ack(sb, 11, NULL, NULL, NULL);
	/* MROCE_SB_DECAY_PKTS calm deliveries: one step back */
	for (i = 0; i < MROCE_SB_DECAY_PKTS; i += 64) {
		sb_send(test, sb, 64, 1, seq, 0);
		mroce_sb_ack(sb, sb->nxt, NULL, NULL, NULL);
	}
	KUNIT_EXPECT_EQ(test, sb->k, (u32)MROCE_SB_K_MAX / 2);
	KUNIT_EXPECT_EQ(test, sb->reo_mult, 10U);
}

/* A duplicate echo proves a resend spurious, once, and only a resend. */
static void mroce_sb_test_dup_echo(struct kunit *test)
{
	struct mroce_sb *sb = sb_new(test, 0);
	u64 sack[MROCE_WIRE_SACK_WORDS] = {};
	u32 seq[1] = {};

	sb_send(test, sb, 8, 1, seq, 0);
	mroce_sb_sent(sb, 2, 0, seq[0]++, 50);		/* resend PSN 2 */
	/* not known delivered yet: ambiguous, no verdict */
	KUNIT_EXPECT_FALSE(test, mroce_sb_dup_echo(sb, 2));
	sack_set(sack, 2);
	mroce_sb_ack(sb, 0, sack, NULL, NULL);
	KUNIT_EXPECT_TRUE(test, mroce_sb_dup_echo(sb, 2));
	KUNIT_EXPECT_EQ(test, sb->k, 2U * MROCE_SB_K_INIT);
	KUNIT_EXPECT_FALSE(test, mroce_sb_dup_echo(sb, 2));
	/* a network duplicate of a packet never resent says nothing */
	mroce_sb_ack(sb, 8, NULL, NULL, NULL);
	KUNIT_EXPECT_FALSE(test, mroce_sb_dup_echo(sb, 5));
	/* a resend cumulatively acknowledged still counts */
	sb_send(test, sb, 4, 1, seq, 100);
	mroce_sb_sent(sb, 9, 0, seq[0]++, 150);
	mroce_sb_ack(sb, 12, NULL, NULL, NULL);
	KUNIT_EXPECT_TRUE(test, mroce_sb_dup_echo(sb, 9));
	/* nor does a PSN never sent */
	KUNIT_EXPECT_FALSE(test, mroce_sb_dup_echo(sb, 12));
}

/*
 * A resent PSN's delivery is ambiguous: it must not credit the resend's
 * path seq (that would declare everything sent before it lost); an exact
 * echo does.
 */
static void mroce_sb_test_retx_ambiguous(struct kunit *test)
{
	struct mroce_sb *sb = sb_new(test, 0);
	u64 sack[MROCE_WIRE_SACK_WORDS] = {};
	struct mroce_sb_clock c = sb_clk;
	u32 seq[1] = {};

	c.now_us = 50;
	sb_send(test, sb, 8, 1, seq, 0);		/* seq 0..7 */
	mroce_sb_sent(sb, 0, 0, seq[0]++, 20);		/* spurious resend, seq 8 */
	sb_send(test, sb, 4, 1, seq, 30);		/* seq 9..12, in flight */
	/* the original PSN 0 arrives late, with PSN 2 (bit 1 above cum 1)... */
	sack_set(sack, 1);
	KUNIT_EXPECT_EQ(test, mroce_sb_ack(sb, 1, sack, NULL, NULL), 2);
	/* ...without claiming the resend's seq 8: nothing is lost */
	KUNIT_EXPECT_EQ(test, sb->dlv_seq[0], 2U);
	KUNIT_EXPECT_EQ(test, mroce_sb_detect(sb, &c, NULL, NULL, NULL), 0U);
	/* an exact echo of seq 12 is news: seqs 1, 3..7 and 9 are 3+ behind */
	mroce_sb_echo(sb, 0, 12, 33);
	KUNIT_EXPECT_EQ(test, sb->dlv_seq[0], 12U);
	KUNIT_EXPECT_EQ(test, mroce_sb_detect(sb, &c, NULL, NULL, NULL), 7U);
}

/*
 * mroce_sb_passed(): a loss with a later delivery on its own path (every
 * rule 1 loss) says nothing against the path; one without does.
 */
static void mroce_sb_test_passed(struct kunit *test)
{
	struct mroce_sb *sb = sb_new(test, 0);
	u64 sack[MROCE_WIRE_SACK_WORDS] = {};
	u32 seq[2] = {};

	/* PSNs 0..9 alternate over paths 0 and 1 */
	sb_send(test, sb, 10, 2, seq, 0);
	KUNIT_EXPECT_FALSE(test, mroce_sb_passed(sb, mroce_sb_slot(sb, 0)));
	/* path 0: PSN 6 (seq 3) arrives; path 1: nothing */
	sack_set(sack, 6);
	KUNIT_EXPECT_EQ(test, mroce_sb_ack(sb, 0, sack, NULL, NULL), 1);
	KUNIT_EXPECT_TRUE(test, mroce_sb_passed(sb, mroce_sb_slot(sb, 0)));
	KUNIT_EXPECT_TRUE(test, mroce_sb_passed(sb, mroce_sb_slot(sb, 4)));
	KUNIT_EXPECT_FALSE(test, mroce_sb_passed(sb, mroce_sb_slot(sb, 6)));
	KUNIT_EXPECT_FALSE(test, mroce_sb_passed(sb, mroce_sb_slot(sb, 8)));
	KUNIT_EXPECT_FALSE(test, mroce_sb_passed(sb, mroce_sb_slot(sb, 1)));
	KUNIT_EXPECT_FALSE(test, mroce_sb_passed(sb, mroce_sb_slot(sb, 9)));
}

static struct kunit_case mroce_sb_cases[] = {
	KUNIT_CASE(mroce_sb_test_retx_ambiguous),
	KUNIT_CASE(mroce_sb_test_dup_echo),
	KUNIT_CASE(mroce_sb_test_window),
	KUNIT_CASE(mroce_sb_test_cumulative),
	KUNIT_CASE(mroce_sb_test_path_gap),
	KUNIT_CASE(mroce_sb_test_small_gap),
	KUNIT_CASE(mroce_sb_test_reorder_only),
	KUNIT_CASE(mroce_sb_test_rack),
	KUNIT_CASE(mroce_sb_test_all_lost),
	KUNIT_CASE(mroce_sb_test_path_seq_rule),
	KUNIT_CASE(mroce_sb_test_path_seq_half),
	KUNIT_CASE(mroce_sb_test_wrap),
	KUNIT_CASE(mroce_sb_test_duplicates),
	KUNIT_CASE(mroce_sb_test_lost_twice),
	KUNIT_CASE(mroce_sb_test_adapt),
	KUNIT_CASE(mroce_sb_test_passed),
	{}
};

static struct kunit_suite mroce_sb_suite = {
	.name = "mroce_sb",
	.test_cases = mroce_sb_cases,
};

kunit_test_suite(mroce_sb_suite);
