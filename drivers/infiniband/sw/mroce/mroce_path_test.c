// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit suite for the path table (mroce_path.[ch]): spraying, path
 * penalty, dead paths, probing, entropy replacement, path sequence
 * numbers.
 */

#include <kunit/test.h>
#include <linux/kernel.h>
#include <linux/limits.h>
#include <linux/slab.h>
#include <linux/time64.h>

#include "mroce_path.h"
#include "mroce_sb.h"

static struct mroce_paths *paths_new(struct kunit *test, u32 n, u32 win,
				     bool windowed)
{
	struct mroce_paths *ps;

	ps = kunit_kzalloc(test, mroce_paths_size(MROCE_PATHS_MAX), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ps);
	KUNIT_ASSERT_EQ(test, mroce_paths_init(ps, n, win, windowed, 0), 0);
	return ps;
}

/* Pick a path for a new packet and send it there. */
static int paths_send(struct mroce_paths *ps)
{
	int id = mroce_paths_pick(ps);

	if (id >= 0)
		mroce_paths_sent(ps, id, false);
	return id;
}

/*
 * The receiver ACKs every 8th packet; 16 equally weighted paths are
 * sprayed round-robin, so its echoes only ever name 2 paths.  With
 * mroce_paths_want_echo() every path gets echoes, and the extra ACK
 * requests stay at most one per MROCE_PATH_ECHO_REQ_PKTS packets.
 */
static void mroce_path_test_echo_aliasing(struct kunit *test)
{
	struct mroce_paths *ps = paths_new(test, MROCE_PATHS_DEF, 256, false);
	u32 i, pkts = 16 * MROCE_PATH_ECHO_REQ_PKTS * 4, reqs = 0;
	u64 now = 1000;
	int id, pass;

	for (pass = 0; pass < 2; pass++) {
		bool ask = pass == 1;

		ps = paths_new(test, MROCE_PATHS_DEF, 256, false);
		reqs = 0;
		for (i = 1; i <= pkts; i++, now += 10) {
			bool req;

			id = paths_send(ps);
			KUNIT_ASSERT_GE(test, id, 0);
			req = ask && mroce_paths_want_echo(ps, id, now, 100);
			reqs += req;
			/* echoed at once, 50 us RTT */
			if (req || i % 8 == 0)
				mroce_paths_echo(ps, id, 50, false, now);
			mroce_paths_delivered(ps, id, true, now);
		}
		for (id = 0; id < (int)ps->n; id++) {
			bool aliased = id % 8 == 7;

			if (ask || aliased)
				KUNIT_EXPECT_GT(test, ps->path[id].stats.rtt_samples, 0ULL);
			else
				KUNIT_EXPECT_EQ(test, ps->path[id].stats.rtt_samples, 0ULL);
			if (ask)
				KUNIT_EXPECT_EQ(test, mroce_path_srtt_us(&ps->path[id]), 50U);
		}
		KUNIT_EXPECT_LE(test, reqs, pkts / MROCE_PATH_ECHO_REQ_PKTS);
		if (ask)
			KUNIT_EXPECT_GT(test, reqs, 0U);
	}

	/* fresh echoes: no request, however many packets */
	ps = paths_new(test, 1, 256, false);
	for (i = 0; i < 4 * MROCE_PATH_ECHO_REQ_PKTS; i++, now += 10) {
		mroce_paths_echo(ps, 0, 50, false, now);
		KUNIT_EXPECT_FALSE(test, mroce_paths_want_echo(ps, 0, now, 100));
	}
}

static void mroce_path_test_init(struct kunit *test)
{
	struct mroce_paths *ps = paths_new(test, MROCE_PATHS_DEF, 256, true);
	int id;

	KUNIT_EXPECT_EQ(test, ps->n, 16U);
	KUNIT_EXPECT_EQ(test, ps->active, 0xffffULL);
	KUNIT_EXPECT_EQ(test, mroce_paths_nr_active(ps), 16U);
	KUNIT_EXPECT_EQ(test, mroce_paths_window(ps), 256U);
	KUNIT_EXPECT_EQ(test, ps->min_rtt_us, 0U);
	for (id = 0; id < (int)ps->n; id++) {
		const struct mroce_path *p = &ps->path[id];

		KUNIT_EXPECT_EQ(test, p->state, MROCE_PATH_ACTIVE);
		KUNIT_EXPECT_STREQ(test, mroce_path_state_name(p), "active");
		KUNIT_EXPECT_EQ(test, p->gen, 0);
		KUNIT_EXPECT_EQ(test, p->w, MROCE_PATH_W_ONE);
		KUNIT_EXPECT_EQ(test, p->cwnd, 16U);
		KUNIT_EXPECT_EQ(test, p->inflight, 0U);
		KUNIT_EXPECT_EQ(test, p->tx_seq, 0U);
		KUNIT_EXPECT_TRUE(test, mroce_paths_has_window(ps, id));
	}
	KUNIT_EXPECT_EQ(test, mroce_paths_next_probe_us(ps), U64_MAX);

	/* cwnd_p = ceil(W / N), at least 1 */
	KUNIT_ASSERT_EQ(test, mroce_paths_init(ps, 3, 256, true, 0), 0);
	KUNIT_EXPECT_EQ(test, ps->path[2].cwnd, 86U);
	KUNIT_EXPECT_EQ(test, mroce_paths_window(ps), 256U);
	KUNIT_ASSERT_EQ(test, mroce_paths_init(ps, 4, 0, true, 0), 0);
	KUNIT_EXPECT_EQ(test, ps->path[3].cwnd, 1U);

	KUNIT_EXPECT_EQ(test, mroce_paths_init(ps, 0, 256, true, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, mroce_paths_init(ps, MROCE_PATHS_MAX + 1, 256,
					       true, 0), -EINVAL);
}

static void mroce_path_test_wrr_proportional(struct kunit *test)
{
	static const u8 w[] = { 16, 8, 4 };
	struct mroce_paths *ps = paths_new(test, 3, 256, false);
	u32 count[3] = {}, k, sum_w = 16 + 8 + 4;
	int id;

	for (id = 0; id < 3; id++)
		ps->path[id].w = w[id];
	for (k = 1; k <= 100 * sum_w; k++) {
		id = paths_send(ps);
		KUNIT_ASSERT_GE(test, id, 0);
		KUNIT_ASSERT_LT(test, id, 3);
		count[id]++;
		/* at every point within one packet of k x w_p / sum(w) */
		for (id = 0; id < 3; id++) {
			s64 dev = (s64)count[id] * sum_w - (s64)k * w[id];

			KUNIT_ASSERT_LE(test, abs(dev), (s64)sum_w);
		}
	}
	KUNIT_EXPECT_EQ(test, count[0], 1600U);
	KUNIT_EXPECT_EQ(test, count[1], 800U);
	KUNIT_EXPECT_EQ(test, count[2], 400U);
}

static void mroce_path_test_wrr_equal(struct kunit *test)
{
	struct mroce_paths *ps = paths_new(test, MROCE_PATHS_DEF, 256, true);
	u64 seen;
	int i, r;

	/* equal weights: every N consecutive picks cover all N paths */
	for (r = 0; r < 10; r++) {
		seen = 0;
		for (i = 0; i < MROCE_PATHS_DEF; i++) {
			int id = mroce_paths_pick(ps);

			KUNIT_ASSERT_GE(test, id, 0);
			seen |= BIT_ULL(id);
		}
		KUNIT_EXPECT_EQ(test, seen, 0xffffULL);
	}
}

/*
 * Bursts (mroce_paths_pick_again(), a provider that sends a chunk on one
 * path): runs of up to 16 packets on one path, and still the weights'
 * shares, within one burst per path at every point.  A path without
 * window (full, dead) is not picked again.
 */
static void mroce_path_test_pick_again(struct kunit *test)
{
	static const u8 w[] = { 16, 8, 4, 4 };
	struct mroce_paths *ps = paths_new(test, 4, 256, false);
	u32 count[4] = {}, k = 0, sum_w = 16 + 8 + 4 + 4, b, runs = 0;
	int id, again;

	for (id = 0; id < 4; id++)
		ps->path[id].w = w[id];
	while (runs < 12 * sum_w) {
		id = paths_send(ps);
		KUNIT_ASSERT_GE(test, id, 0);
		count[id]++;
		k++;
		runs++;
		for (b = 1; b < 16; b++) {
			again = mroce_paths_pick_again(ps, id);
			KUNIT_ASSERT_EQ(test, again, id);
			mroce_paths_sent(ps, id, false);
			count[id]++;
			k++;
		}
		for (id = 0; id < 4; id++) {
			s64 dev = (s64)count[id] * sum_w - (s64)k * w[id];

			KUNIT_ASSERT_LE(test, abs(dev), (s64)(16 + 1) * sum_w);
		}
	}
	/* 12 rounds of 32 bursts of 16: exactly the shares 16:8:4:4 */
	KUNIT_EXPECT_EQ(test, k, 12 * sum_w * 16);
	KUNIT_EXPECT_EQ(test, count[0], 3072U);
	KUNIT_EXPECT_EQ(test, count[1], 1536U);
	KUNIT_EXPECT_EQ(test, count[2], 768U);
	KUNIT_EXPECT_EQ(test, count[3], 768U);

	/* cwnd_p = 2: a burst ends at the path window, or at its death */
	ps = paths_new(test, 4, 8, true);
	id = paths_send(ps);
	KUNIT_ASSERT_GE(test, id, 0);
	KUNIT_EXPECT_EQ(test, mroce_paths_pick_again(ps, id), id);
	mroce_paths_sent(ps, id, false);
	KUNIT_EXPECT_EQ(test, mroce_paths_pick_again(ps, id), -1);
	id = paths_send(ps);
	KUNIT_ASSERT_GE(test, id, 0);
	mroce_paths_kill(ps, id, 0);
	KUNIT_EXPECT_EQ(test, mroce_paths_pick_again(ps, id), -1);
}

static void mroce_path_test_pick_skips(struct kunit *test)
{
	struct mroce_paths *ps = paths_new(test, 4, 8, true);
	int i, id;

	/* cwnd_p = 2: eight packets, two per path, then nothing */
	for (i = 0; i < 8; i++)
		KUNIT_ASSERT_GE(test, paths_send(ps), 0);
	for (id = 0; id < (int)ps->n; id++) {
		KUNIT_EXPECT_EQ(test, ps->path[id].inflight, 2U);
		KUNIT_EXPECT_FALSE(test, mroce_paths_has_window(ps, id));
	}
	KUNIT_EXPECT_EQ(test, mroce_paths_pick(ps), -1);
	KUNIT_EXPECT_EQ(test, mroce_paths_pick(ps), -1);

	/* a delivery on path 2 opens exactly path 2 */
	mroce_paths_delivered(ps, 2, true, 10);
	KUNIT_EXPECT_EQ(test, paths_send(ps), 2);
	KUNIT_EXPECT_EQ(test, mroce_paths_pick(ps), -1);

	/* a dead path is skipped even with window */
	mroce_paths_delivered(ps, 1, true, 20);
	mroce_paths_delivered(ps, 3, true, 20);
	KUNIT_EXPECT_TRUE(test, mroce_paths_kill(ps, 1, 30));
	KUNIT_EXPECT_FALSE(test, mroce_paths_has_window(ps, 1));
	KUNIT_EXPECT_EQ(test, paths_send(ps), 3);
	KUNIT_EXPECT_EQ(test, mroce_paths_pick(ps), -1);

	/* without path windows only death stops a path */
	ps = paths_new(test, 2, 2, false);
	for (i = 0; i < 100; i++)
		KUNIT_ASSERT_GE(test, paths_send(ps), 0);
	KUNIT_EXPECT_EQ(test, ps->path[0].inflight, 50U);
	KUNIT_EXPECT_EQ(test, ps->path[1].inflight, 50U);
	KUNIT_EXPECT_TRUE(test, mroce_paths_has_window(ps, 0));
	KUNIT_EXPECT_EQ(test, mroce_paths_window(ps), 2U);
	mroce_paths_kill(ps, 0, 0);
	for (i = 0; i < 10; i++)
		KUNIT_EXPECT_EQ(test, paths_send(ps), 1);
	mroce_paths_kill(ps, 1, 0);
	KUNIT_EXPECT_EQ(test, mroce_paths_pick(ps), -1);
}

static void mroce_path_test_path_seq(struct kunit *test)
{
	struct mroce_paths *ps = paths_new(test, 3, 256, true);
	int i;

	/* per path, from 0, retransmissions included */
	for (i = 0; i < 5; i++)
		KUNIT_EXPECT_EQ(test, mroce_paths_sent(ps, 1, i & 1), (u32)i);
	KUNIT_EXPECT_EQ(test, mroce_paths_sent(ps, 0, false), 0U);
	KUNIT_EXPECT_EQ(test, mroce_paths_sent(ps, 2, true), 0U);
	KUNIT_EXPECT_EQ(test, mroce_paths_sent(ps, 1, false), 5U);
	KUNIT_EXPECT_EQ(test, ps->path[1].stats.tx_pkts, 6ULL);
	KUNIT_EXPECT_EQ(test, ps->path[1].stats.retx_pkts, 2ULL);
	KUNIT_EXPECT_EQ(test, ps->path[1].inflight, 6U);

	/* 32 bits, wrapping */
	ps->path[0].tx_seq = 0xfffffffe;
	KUNIT_EXPECT_EQ(test, mroce_paths_sent(ps, 0, false), 0xfffffffeU);
	KUNIT_EXPECT_EQ(test, mroce_paths_sent(ps, 0, false), 0xffffffffU);
	KUNIT_EXPECT_EQ(test, mroce_paths_sent(ps, 0, false), 0U);
	KUNIT_EXPECT_EQ(test, mroce_paths_sent(ps, 0, false), 1U);

	/* invalid ids change nothing */
	KUNIT_EXPECT_EQ(test, mroce_paths_sent(ps, 3, false), 0U);
	KUNIT_EXPECT_EQ(test, mroce_paths_sent(ps, -1, false), 0U);
	KUNIT_EXPECT_EQ(test, ps->path[2].tx_seq, 1U);
}

/* A loss without a mark (a lossy link): the weight halves, not the window. */
static void mroce_path_test_loss_once_per_rtt(struct kunit *test)
{
	struct mroce_paths *ps = paths_new(test, 2, 256, true);
	struct mroce_path *p = &ps->path[0];
	u64 t;

	mroce_paths_echo(ps, 0, 100, false, 0);		/* SRTT_p 100 us */
	KUNIT_EXPECT_EQ(test, mroce_path_srtt_us(p), 100U);
	KUNIT_EXPECT_EQ(test, p->cwnd, 128U);

	KUNIT_EXPECT_FALSE(test, mroce_paths_lost(ps, 0, false, 1000, 1000));
	KUNIT_EXPECT_EQ(test, p->w, 8);
	KUNIT_EXPECT_EQ(test, p->cwnd, 128U);
	/* the same window's losses: one decrease */
	KUNIT_EXPECT_FALSE(test, mroce_paths_lost(ps, 0, false, 1050, 1050));
	KUNIT_EXPECT_FALSE(test, mroce_paths_lost(ps, 0, false, 1099, 1099));
	KUNIT_EXPECT_EQ(test, p->w, 8);
	KUNIT_EXPECT_EQ(test, p->cwnd, 128U);
	KUNIT_EXPECT_EQ(test, p->stats.lost, 3ULL);
	/* one RTT later: the next */
	mroce_paths_delivered(ps, 0, false, 1099);
	KUNIT_EXPECT_FALSE(test, mroce_paths_lost(ps, 0, false, 1100, 1100));
	KUNIT_EXPECT_EQ(test, p->w, 4);
	KUNIT_EXPECT_EQ(test, p->cwnd, 128U);
	/* the other path is not touched */
	KUNIT_EXPECT_EQ(test, ps->path[1].w, MROCE_PATH_W_ONE);
	KUNIT_EXPECT_EQ(test, ps->path[1].cwnd, 128U);

	/* the weight's floor, 1/16; the window stays */
	for (t = 1200; t < 3000; t += 100) {
		mroce_paths_delivered(ps, 0, false, t);
		mroce_paths_lost(ps, 0, false, t, t);
	}
	KUNIT_EXPECT_EQ(test, p->w, MROCE_PATH_W_MIN);
	KUNIT_EXPECT_EQ(test, p->cwnd, 128U);
	KUNIT_EXPECT_EQ(test, p->state, MROCE_PATH_ACTIVE);
}

/*
 * A loss within 2 SRTT_p of a mark is congestion: the window halves too,
 * once per SRTT_p; later losses are random again.
 */
static void mroce_path_test_loss_congestion(struct kunit *test)
{
	struct mroce_paths *ps = paths_new(test, 2, 256, true);
	struct mroce_path *p = &ps->path[0];
	u64 t;

	/* SRTT_p 100 us, marked: alpha_p 1/16, w 15, cwnd 124 */
	mroce_paths_echo(ps, 0, 100, true, 0);
	KUNIT_EXPECT_EQ(test, p->w, 15);
	KUNIT_EXPECT_EQ(test, p->cwnd, 124U);
	KUNIT_EXPECT_FALSE(test, mroce_paths_lost(ps, 0, false, 100, 100));
	KUNIT_EXPECT_EQ(test, p->w, 7);
	KUNIT_EXPECT_EQ(test, p->cwnd, 62U);
	/* the same window's losses: one decrease */
	KUNIT_EXPECT_FALSE(test, mroce_paths_lost(ps, 0, false, 150, 150));
	KUNIT_EXPECT_EQ(test, p->cwnd, 62U);
	/* 2 SRTT_p after the mark: a random loss, the window stays */
	mroce_paths_delivered(ps, 0, false, 200);
	KUNIT_EXPECT_FALSE(test, mroce_paths_lost(ps, 0, false, 200, 200));
	KUNIT_EXPECT_EQ(test, p->w, 3);
	KUNIT_EXPECT_EQ(test, p->cwnd, 62U);
	/*
	 * The round with the congestion loss ends without increase (300),
	 * the next one, with only the random loss in the one before, gives
	 * back 1/16 and one packet (400).  A round with a random loss ends
	 * with the window's increase but not the weight's.
	 */
	mroce_paths_echo(ps, 0, 100, false, 300);
	KUNIT_EXPECT_EQ(test, p->w, 3);
	KUNIT_EXPECT_EQ(test, p->cwnd, 62U);
	mroce_paths_echo(ps, 0, 100, false, 400);
	KUNIT_EXPECT_EQ(test, p->w, 4);
	KUNIT_EXPECT_EQ(test, p->cwnd, 63U);
	mroce_paths_delivered(ps, 0, false, 450);
	KUNIT_EXPECT_FALSE(test, mroce_paths_lost(ps, 0, false, 450, 450));
	KUNIT_EXPECT_EQ(test, p->w, 2);
	mroce_paths_echo(ps, 0, 100, false, 500);
	KUNIT_EXPECT_EQ(test, p->w, 2);
	KUNIT_EXPECT_EQ(test, p->cwnd, 64U);
	/* the other path is not touched */
	KUNIT_EXPECT_EQ(test, ps->path[1].cwnd, 128U);

	/* marks and losses every round trip: the floors, 1/16 and 1 */
	for (t = 600; t < 3000; t += 100) {
		mroce_paths_echo(ps, 0, 100, true, t);
		mroce_paths_delivered(ps, 0, false, t);
		mroce_paths_lost(ps, 0, false, t, t);
	}
	KUNIT_EXPECT_EQ(test, p->w, MROCE_PATH_W_MIN);
	KUNIT_EXPECT_EQ(test, p->cwnd, 1U);
	KUNIT_EXPECT_EQ(test, p->state, MROCE_PATH_ACTIVE);
}

static void mroce_path_test_weight_recovery(struct kunit *test)
{
	struct mroce_paths *ps = paths_new(test, 2, 20, true);
	struct mroce_path *p = &ps->path[0];
	int k;

	mroce_paths_echo(ps, 0, 100, false, 0);
	p->cong_until_us = 200;		/* as if marked: a congestion loss */
	mroce_paths_lost(ps, 0, false, 10, 10);
	KUNIT_EXPECT_EQ(test, p->w, 8);
	KUNIT_EXPECT_EQ(test, p->cwnd, 5U);
	/* the round with the loss ends without increase */
	mroce_paths_echo(ps, 0, 100, false, 100);
	KUNIT_EXPECT_EQ(test, p->w, 8);
	KUNIT_EXPECT_EQ(test, p->cwnd, 5U);
	/* then +1/16 and +1 packet per clean round, not per echo */
	for (k = 1; k <= 8; k++) {
		mroce_paths_echo(ps, 0, 100, false, 100 + 100 * k - 50);
		KUNIT_EXPECT_EQ(test, p->w, 8 + k - 1);
		mroce_paths_echo(ps, 0, 100, false, 100 + 100 * k);
		KUNIT_EXPECT_EQ(test, p->w, 8 + k);
		KUNIT_EXPECT_EQ(test, p->cwnd, 5U + k);
	}
	/* capped at 1 and at the connection window */
	for (k = 9; k <= 20; k++)
		mroce_paths_echo(ps, 0, 100, false, 100 + 100 * k);
	KUNIT_EXPECT_EQ(test, p->w, MROCE_PATH_W_ONE);
	KUNIT_EXPECT_EQ(test, p->cwnd, 20U);
	KUNIT_EXPECT_EQ(test, mroce_paths_window(ps), 20U);
}

static void mroce_path_test_ce_penalty(struct kunit *test)
{
	struct mroce_paths *ps = paths_new(test, 2, 256, true);
	struct mroce_path *p = &ps->path[0];
	int i;

	/* alpha_p 1/16: x (1 - 1/32), rounded down */
	mroce_paths_echo(ps, 0, 100, true, 0);
	KUNIT_EXPECT_EQ(test, p->alpha, MROCE_PATH_ALPHA_ONE / 16);
	KUNIT_EXPECT_EQ(test, p->w, 15);
	KUNIT_EXPECT_EQ(test, p->cwnd, 124U);
	/* alpha_p grows, w_p holds for one SRTT_p */
	mroce_paths_echo(ps, 0, 100, true, 50);
	KUNIT_EXPECT_EQ(test, p->alpha, 7936U);
	KUNIT_EXPECT_EQ(test, p->w, 15);
	KUNIT_EXPECT_EQ(test, p->cwnd, 124U);
	mroce_paths_echo(ps, 0, 100, true, 100);
	/* 15 x (1 - 11536 / 131072) = 13.68, 124 x ... = 113.09 */
	KUNIT_EXPECT_EQ(test, p->alpha, 11536U);
	KUNIT_EXPECT_EQ(test, p->w, 13);
	KUNIT_EXPECT_EQ(test, p->cwnd, 113U);
	KUNIT_EXPECT_EQ(test, p->stats.ce_echoes, 3ULL);
	KUNIT_EXPECT_EQ(test, ps->path[1].w, MROCE_PATH_W_ONE);

	/* persistent marks: alpha_p -> 1, w_p -> 1/16, cwnd_p -> 1 */
	for (i = 3; i < 300; i++)
		mroce_paths_echo(ps, 0, 100, true, 50 * i);
	KUNIT_EXPECT_EQ(test, p->w, MROCE_PATH_W_MIN);
	KUNIT_EXPECT_EQ(test, p->cwnd, 1U);
	KUNIT_EXPECT_GE(test, p->alpha, MROCE_PATH_ALPHA_ONE * 15 / 16);
	KUNIT_EXPECT_LE(test, p->alpha, MROCE_PATH_ALPHA_ONE);
	KUNIT_EXPECT_EQ(test, p->state, MROCE_PATH_ACTIVE);

	/* the marks stop: alpha_p decays to 0, weight comes back */
	for (i = 300; i < 800; i++)
		mroce_paths_echo(ps, 0, 100, false, 50 * i);
	KUNIT_EXPECT_EQ(test, p->alpha, 0U);
	KUNIT_EXPECT_EQ(test, p->w, MROCE_PATH_W_ONE);

	/* a marked path gets a smaller share of the packets (MR-54) */
	mroce_paths_init(ps, 2, 256, false, 0);
	for (i = 0; i < 40; i++)
		mroce_paths_echo(ps, 1, 100, true, 100 * i);
	KUNIT_EXPECT_EQ(test, ps->path[1].w, MROCE_PATH_W_MIN);
	for (i = 0; i < 170; i++)
		paths_send(ps);
	KUNIT_EXPECT_EQ(test, ps->path[0].stats.tx_pkts, 160ULL);
	KUNIT_EXPECT_EQ(test, ps->path[1].stats.tx_pkts, 10ULL);
}

static void mroce_path_test_qdelay_penalty(struct kunit *test)
{
	struct mroce_paths *ps = paths_new(test, 3, 256, true);

	mroce_paths_echo(ps, 0, 10, false, 0);		/* min_rtt 10 */
	KUNIT_EXPECT_EQ(test, ps->min_rtt_us, 10U);
	KUNIT_EXPECT_EQ(test, ps->path[0].w, MROCE_PATH_W_ONE);

	/* SRTT_p - min_rtt = 25: not above target */
	mroce_paths_echo(ps, 1, 35, false, 0);
	KUNIT_EXPECT_EQ(test, ps->path[1].w, MROCE_PATH_W_ONE);
	KUNIT_EXPECT_EQ(test, ps->path[1].stats.qdelay_marks, 0ULL);
	KUNIT_EXPECT_EQ(test, ps->path[1].alpha, 0U);

	/* 26 us of queue: one mark, as ECHO_CE */
	mroce_paths_echo(ps, 2, 36, false, 0);
	KUNIT_EXPECT_EQ(test, ps->path[2].w, 15);
	KUNIT_EXPECT_EQ(test, ps->path[2].cwnd, 83U);
	KUNIT_EXPECT_EQ(test, ps->path[2].stats.qdelay_marks, 1ULL);
	KUNIT_EXPECT_EQ(test, ps->path[2].stats.ce_echoes, 0ULL);
	KUNIT_EXPECT_EQ(test, ps->path[2].alpha, MROCE_PATH_ALPHA_ONE / 16);

	/* the queue drains: SRTT_p 33, no mark; it converges to 12 */
	mroce_paths_echo(ps, 2, 12, false, 10);
	KUNIT_EXPECT_EQ(test, mroce_path_srtt_us(&ps->path[2]), 33U);
	KUNIT_EXPECT_EQ(test, ps->path[2].stats.qdelay_marks, 1ULL);
	KUNIT_EXPECT_EQ(test, ps->path[2].w, 15);	/* round not over */
	while (mroce_path_srtt_us(&ps->path[2]) > 12)
		mroce_paths_echo(ps, 2, 12, false, 20);
	KUNIT_EXPECT_EQ(test, mroce_path_srtt_us(&ps->path[2]), 12U);
	KUNIT_EXPECT_EQ(test, ps->path[2].min_rtt_us, 12U);
	KUNIT_EXPECT_EQ(test, ps->min_rtt_us, 10U);

	/* the target is per connection; 0 turns the delay signal off */
	KUNIT_EXPECT_EQ(test, ps->qdelay_target_us, 25U);
	mroce_paths_init(ps, 2, 256, true, 0);
	ps->qdelay_target_us = 100;
	mroce_paths_echo(ps, 0, 10, false, 0);
	mroce_paths_echo(ps, 1, 110, false, 0);
	KUNIT_EXPECT_EQ(test, ps->path[1].w, MROCE_PATH_W_ONE);
	mroce_paths_echo(ps, 1, 200, false, 200);	/* SRTT_p 121 */
	KUNIT_EXPECT_EQ(test, ps->path[1].w, 15);
	mroce_paths_init(ps, 2, 256, true, 0);
	ps->qdelay_target_us = 0;
	mroce_paths_echo(ps, 0, 10, false, 0);
	mroce_paths_echo(ps, 1, 5000, false, 0);
	KUNIT_EXPECT_EQ(test, ps->path[1].w, MROCE_PATH_W_ONE);
	KUNIT_EXPECT_EQ(test, ps->path[1].stats.qdelay_marks, 0ULL);
}

static void mroce_path_test_consecutive_losses(struct kunit *test)
{
	struct mroce_paths *ps = paths_new(test, 4, 256, true);
	struct mroce_path *p = &ps->path[1];
	int i;

	for (i = 0; i < 8; i++)
		mroce_paths_sent(ps, 1, false);
	/* three losses, a delivery, three losses: alive */
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_FALSE(test, mroce_paths_lost(ps, 1, false, 100, 100));
	mroce_paths_delivered(ps, 1, true, 100);
	KUNIT_EXPECT_EQ(test, p->consec_lost, 0);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_FALSE(test, mroce_paths_lost(ps, 1, false, 200, 200));
	KUNIT_EXPECT_EQ(test, p->state, MROCE_PATH_ACTIVE);
	/* the 4th in a row, sent 100 us (default SRTT_p) later, kills it */
	KUNIT_EXPECT_TRUE(test, mroce_paths_lost(ps, 1, false, 300, 300));
	KUNIT_EXPECT_EQ(test, p->state, MROCE_PATH_DEAD);
	KUNIT_EXPECT_STREQ(test, mroce_path_state_name(p), "dead");
	KUNIT_EXPECT_EQ(test, p->gen, 1);
	KUNIT_EXPECT_EQ(test, p->stats.deaths, 1U);
	KUNIT_EXPECT_EQ(test, ps->active, 0xdULL);
	KUNIT_EXPECT_EQ(test, mroce_paths_nr_active(ps), 3U);
	KUNIT_EXPECT_EQ(test, mroce_paths_next_probe_us(ps), 300ULL);
	KUNIT_EXPECT_EQ(test, p->inflight, 0U);
	/* its last packet is lost too: no second death */
	mroce_paths_sent(ps, 1, true);
	KUNIT_EXPECT_FALSE(test, mroce_paths_lost(ps, 1, false, 400, 400));
	KUNIT_EXPECT_EQ(test, p->gen, 1);
	KUNIT_EXPECT_EQ(test, p->stats.lost, 8ULL);
	KUNIT_EXPECT_EQ(test, p->inflight, 0U);
	for (i = 0; i < 30; i++)
		KUNIT_EXPECT_NE(test, paths_send(ps), 1);
}

/*
 * Losses that a later delivery on the path passed (declared by one ACK,
 * after the deliveries it reported) are not in a row: they clear the
 * count as a delivery does, and never kill the path.
 */
static void mroce_path_test_passed_losses(struct kunit *test)
{
	struct mroce_paths *ps = paths_new(test, 1, 256, true);
	struct mroce_path *p = &ps->path[0];
	int i;

	for (i = 0; i < 12; i++)
		mroce_paths_sent(ps, 0, false);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_FALSE(test, mroce_paths_lost(ps, 0, false, 100, 100));
	KUNIT_EXPECT_EQ(test, p->consec_lost, 3);
	for (i = 0; i < 6; i++)
		KUNIT_EXPECT_FALSE(test, mroce_paths_lost(ps, 0, true, 100, 100));
	KUNIT_EXPECT_EQ(test, p->consec_lost, 0);
	KUNIT_EXPECT_EQ(test, p->state, MROCE_PATH_ACTIVE);
	KUNIT_EXPECT_EQ(test, p->stats.lost, 9ULL);
	KUNIT_EXPECT_EQ(test, p->inflight, 3U);
	/* the weight still pays, once per SRTT_p */
	KUNIT_EXPECT_EQ(test, p->w, 8);
	/* then 4 not passed, sent over an SRTT_p (100 us): dead */
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_FALSE(test, mroce_paths_lost(ps, 0, false,
							  200 + 10 * i, 400));
	KUNIT_EXPECT_TRUE(test, mroce_paths_lost(ps, 0, false, 300, 400));
	KUNIT_EXPECT_EQ(test, p->state, MROCE_PATH_DEAD);
}

/*
 * A burst sent at once and lost at once (a queue's overflow, a GSO
 * buffer a qdisc dropped whole) does not kill its path however long it
 * is: the consecutive losses must have been sent over at least SRTT_p.
 * The span counts from the run's first loss either way (a resend is sent
 * after the packets it is declared lost with), and the count saturates.
 */
static void mroce_path_test_burst_losses(struct kunit *test)
{
	struct mroce_paths *ps = paths_new(test, 4, 256, true);
	struct mroce_path *p = &ps->path[1];
	int i;

	mroce_paths_echo(ps, 1, 100, false, 0);		/* SRTT_p 100 us */
	for (i = 0; i < 300; i++)
		mroce_paths_sent(ps, 1, false);
	/* 16 packets sent within 16 us: one burst */
	for (i = 0; i < 16; i++)
		KUNIT_EXPECT_FALSE(test, mroce_paths_lost(ps, 1, false,
							  1000 + i, 2000));
	KUNIT_EXPECT_EQ(test, p->state, MROCE_PATH_ACTIVE);
	KUNIT_EXPECT_EQ(test, p->consec_lost, 16);
	/* sent 99 us after the first: still the same burst */
	KUNIT_EXPECT_FALSE(test, mroce_paths_lost(ps, 1, false, 1099, 2000));
	/* a round trip after the first, no delivery between: dead */
	KUNIT_EXPECT_TRUE(test, mroce_paths_lost(ps, 1, false, 1100, 2100));
	KUNIT_EXPECT_EQ(test, p->state, MROCE_PATH_DEAD);
	KUNIT_EXPECT_EQ(test, p->stats.deaths, 1U);

	/* on another path: a resend lost first, then what it was sent after */
	p = &ps->path[2];
	mroce_paths_echo(ps, 2, 100, false, 0);
	for (i = 0; i < 8; i++)
		mroce_paths_sent(ps, 2, false);
	KUNIT_EXPECT_FALSE(test, mroce_paths_lost(ps, 2, false, 5000, 6000));
	KUNIT_EXPECT_FALSE(test, mroce_paths_lost(ps, 2, false, 4950, 6000));
	KUNIT_EXPECT_FALSE(test, mroce_paths_lost(ps, 2, false, 4940, 6000));
	KUNIT_EXPECT_TRUE(test, mroce_paths_lost(ps, 2, false, 4900, 6000));
	KUNIT_EXPECT_EQ(test, p->state, MROCE_PATH_DEAD);

	/* a burst of 300: the count stops at 255, the path lives */
	p = &ps->path[3];
	mroce_paths_echo(ps, 3, 100, false, 0);
	for (i = 0; i < 300; i++)
		mroce_paths_sent(ps, 3, false);
	for (i = 0; i < 300; i++)
		KUNIT_EXPECT_FALSE(test, mroce_paths_lost(ps, 3, false,
							  7000 + i / 8, 8000));
	KUNIT_EXPECT_EQ(test, p->consec_lost, 255);
	KUNIT_EXPECT_EQ(test, p->state, MROCE_PATH_ACTIVE);
	mroce_paths_delivered(ps, 3, true, 8000);
	KUNIT_EXPECT_EQ(test, p->consec_lost, 0);
}

static void mroce_path_test_kill(struct kunit *test)
{
	struct mroce_paths *ps = paths_new(test, 4, 256, true);
	struct mroce_path *p = &ps->path[2];
	int i;

	mroce_paths_echo(ps, 2, 80, true, 0);
	KUNIT_EXPECT_TRUE(test, mroce_paths_kill(ps, 2, 5000));
	KUNIT_EXPECT_EQ(test, p->state, MROCE_PATH_DEAD);
	KUNIT_EXPECT_EQ(test, p->gen, 1);
	KUNIT_EXPECT_EQ(test, p->stats.deaths, 1U);
	KUNIT_EXPECT_EQ(test, ps->active, 0xbULL);
	KUNIT_EXPECT_EQ(test, mroce_paths_next_probe_us(ps), 5000ULL);
	/* the old route's RTT and marks are forgotten */
	KUNIT_EXPECT_EQ(test, mroce_path_srtt_us(p), 0U);
	KUNIT_EXPECT_EQ(test, p->alpha, 0U);
	/* dead already: nothing more */
	KUNIT_EXPECT_FALSE(test, mroce_paths_kill(ps, 2, 6000));
	KUNIT_EXPECT_EQ(test, p->gen, 1);
	KUNIT_EXPECT_EQ(test, p->stats.deaths, 1U);
	KUNIT_EXPECT_FALSE(test, mroce_paths_kill(ps, 4, 0));
	KUNIT_EXPECT_FALSE(test, mroce_paths_kill(ps, -1, 0));
	/* echoes of the dead path change nothing */
	mroce_paths_echo(ps, 2, 80, true, 7000);
	KUNIT_EXPECT_EQ(test, mroce_path_srtt_us(p), 0U);
	KUNIT_EXPECT_EQ(test, p->stats.ce_echoes, 1ULL);
	for (i = 0; i < 30; i++)
		KUNIT_EXPECT_NE(test, paths_send(ps), 2);

	/* the generation is 8 bits */
	p = &ps->path[0];
	p->gen = 255;
	KUNIT_EXPECT_TRUE(test, mroce_paths_kill(ps, 0, 0));
	KUNIT_EXPECT_EQ(test, p->gen, 0);
}

static void mroce_path_test_probe_cadence(struct kunit *test)
{
	struct mroce_paths *ps = paths_new(test, 2, 256, true);
	struct mroce_path *p = &ps->path[1];
	u32 seq = 0;

	KUNIT_EXPECT_EQ(test, mroce_paths_probe_due(ps, 0, 50, &seq), -1);
	mroce_paths_sent(ps, 1, false);
	mroce_paths_sent(ps, 1, false);
	mroce_paths_kill(ps, 1, 1000);
	KUNIT_EXPECT_EQ(test, mroce_paths_next_probe_us(ps), 1000ULL);
	KUNIT_EXPECT_EQ(test, mroce_paths_probe_due(ps, 999, 50, &seq), -1);
	/* at once, then every max(SRTT, 100 us) */
	KUNIT_EXPECT_EQ(test, mroce_paths_probe_due(ps, 1000, 50, &seq), 1);
	KUNIT_EXPECT_EQ(test, seq, 2U);
	KUNIT_EXPECT_EQ(test, p->tx_seq, 3U);
	KUNIT_EXPECT_EQ(test, p->inflight, 2U);	/* probes are not data */
	KUNIT_EXPECT_EQ(test, mroce_paths_probe_due(ps, 1000, 50, &seq), -1);
	KUNIT_EXPECT_EQ(test, mroce_paths_next_probe_us(ps), 1100ULL);
	KUNIT_EXPECT_EQ(test, mroce_paths_probe_due(ps, 1099, 50, &seq), -1);
	KUNIT_EXPECT_EQ(test, mroce_paths_probe_due(ps, 1100, 300, &seq), 1);
	KUNIT_EXPECT_EQ(test, seq, 3U);
	KUNIT_EXPECT_EQ(test, mroce_paths_next_probe_us(ps), 1400ULL);
	KUNIT_EXPECT_EQ(test, mroce_paths_probe_due(ps, 1400, 300, &seq), 1);
	KUNIT_EXPECT_EQ(test, seq, 4U);
	KUNIT_EXPECT_EQ(test, p->gen, 1);
	/* 3 unanswered: the 4th probe goes out on a new source port */
	KUNIT_EXPECT_EQ(test, mroce_paths_probe_due(ps, 1700, 300, &seq), 1);
	KUNIT_EXPECT_EQ(test, seq, 5U);
	KUNIT_EXPECT_EQ(test, p->gen, 2);
	KUNIT_EXPECT_EQ(test, p->stats.probes, 4ULL);
	KUNIT_EXPECT_EQ(test, p->stats.deaths, 1U);
	KUNIT_EXPECT_EQ(test, mroce_paths_probe_due(ps, 2000, 300, &seq), 1);
	KUNIT_EXPECT_EQ(test, mroce_paths_probe_due(ps, 2300, 300, &seq), 1);
	KUNIT_EXPECT_EQ(test, p->gen, 2);
	KUNIT_EXPECT_EQ(test, mroce_paths_probe_due(ps, 2600, 300, &seq), 1);
	KUNIT_EXPECT_EQ(test, p->gen, 3);
	KUNIT_EXPECT_EQ(test, seq, 8U);
	KUNIT_EXPECT_EQ(test, p->state, MROCE_PATH_DEAD);
	/* path 0 is never probed */
	KUNIT_EXPECT_EQ(test, ps->path[0].stats.probes, 0ULL);
	KUNIT_EXPECT_EQ(test, ps->path[0].tx_seq, 0U);

	/* two dead paths: one call each, the earlier first */
	mroce_paths_kill(ps, 0, 2700);
	KUNIT_EXPECT_EQ(test, mroce_paths_next_probe_us(ps), 2700ULL);
	KUNIT_EXPECT_EQ(test, mroce_paths_probe_due(ps, 2900, 0, &seq), 0);
	KUNIT_EXPECT_EQ(test, mroce_paths_probe_due(ps, 2900, 0, &seq), 1);
	KUNIT_EXPECT_EQ(test, mroce_paths_probe_due(ps, 2900, 0, &seq), -1);
	KUNIT_EXPECT_EQ(test, mroce_paths_next_probe_us(ps), 3000ULL);
}

static void mroce_path_test_probe_revives(struct kunit *test)
{
	struct mroce_paths *ps = paths_new(test, 2, 256, true);
	struct mroce_path *p = &ps->path[1];
	u32 seq, first;
	int i;

	for (i = 0; i < 3; i++)
		mroce_paths_sent(ps, 1, false);		/* seqs 0 .. 2 */
	mroce_paths_kill(ps, 1, 100);
	/* the caller declares the dead path's packets lost */
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_FALSE(test, mroce_paths_lost(ps, 1, false, 100, 100));
	KUNIT_EXPECT_EQ(test, p->inflight, 0U);
	/* nothing sent in this generation yet */
	KUNIT_EXPECT_FALSE(test, mroce_paths_probe_acked(ps, 1, 3, 100));
	KUNIT_EXPECT_EQ(test, mroce_paths_probe_due(ps, 100, 0, &first), 1);
	KUNIT_EXPECT_EQ(test, mroce_paths_probe_due(ps, 200, 0, &seq), 1);
	KUNIT_EXPECT_EQ(test, seq, first + 1);
	/* echoes of data sent before the death prove nothing */
	KUNIT_EXPECT_FALSE(test, mroce_paths_probe_acked(ps, 1, 2, 250));
	KUNIT_EXPECT_FALSE(test, mroce_paths_probe_acked(ps, 1, seq + 1, 250));
	KUNIT_EXPECT_FALSE(test, mroce_paths_probe_acked(ps, 0, 0, 250));
	KUNIT_EXPECT_EQ(test, p->state, MROCE_PATH_DEAD);
	/* a late answer to the first probe of the generation counts */
	KUNIT_EXPECT_TRUE(test, mroce_paths_probe_acked(ps, 1, first, 260));
	KUNIT_EXPECT_EQ(test, p->state, MROCE_PATH_ACTIVE);
	KUNIT_EXPECT_EQ(test, p->w, MROCE_PATH_W_REVIVE);
	KUNIT_EXPECT_EQ(test, p->cwnd, 1U);
	KUNIT_EXPECT_EQ(test, p->gen, 1);
	KUNIT_EXPECT_EQ(test, p->stats.revivals, 1U);
	KUNIT_EXPECT_EQ(test, ps->active, 0x3ULL);
	KUNIT_EXPECT_EQ(test, mroce_paths_next_probe_us(ps), U64_MAX);
	KUNIT_EXPECT_EQ(test, mroce_paths_probe_due(ps, 1000, 0, &seq), -1);
	/* the answer to the second probe: already active */
	KUNIT_EXPECT_FALSE(test, mroce_paths_probe_acked(ps, 1, first + 1, 270));
	KUNIT_EXPECT_EQ(test, p->stats.revivals, 1U);

	/* back in the rotation, one packet of window, weight 1/4 */
	mroce_paths_echo(ps, 1, 50, false, 280);
	KUNIT_EXPECT_EQ(test, mroce_path_srtt_us(p), 50U);
	KUNIT_EXPECT_TRUE(test, mroce_paths_has_window(ps, 1));
	for (i = 0; i < 20; i++)
		paths_send(ps);
	KUNIT_EXPECT_EQ(test, p->inflight, 1U);
	KUNIT_EXPECT_EQ(test, ps->path[0].inflight, 19U);
}

static void mroce_path_test_stale_probe_ack(struct kunit *test)
{
	struct mroce_paths *ps = paths_new(test, 1, 256, true);
	struct mroce_path *p = &ps->path[0];
	u32 seq[4];
	int i;

	mroce_paths_kill(ps, 0, 0);
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, mroce_paths_probe_due(ps, 100 * i, 0,
							    &seq[i]), 0);
	KUNIT_EXPECT_EQ(test, p->gen, 2);
	/* the probes of generation 1 went to a port given up since */
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_FALSE(test,
				   mroce_paths_probe_acked(ps, 0, seq[i], 400));
	KUNIT_EXPECT_EQ(test, p->state, MROCE_PATH_DEAD);
	KUNIT_EXPECT_TRUE(test, mroce_paths_probe_acked(ps, 0, seq[3], 400));
	KUNIT_EXPECT_EQ(test, p->state, MROCE_PATH_ACTIVE);
	KUNIT_EXPECT_EQ(test, p->gen, 2);
}

static void mroce_path_test_all_dead(struct kunit *test)
{
	struct mroce_paths *ps = paths_new(test, 3, 256, true);
	u32 seq, rseq;
	int id;

	/* no delivery at all: path 0 */
	KUNIT_EXPECT_EQ(test, mroce_paths_fallback(ps), 0);

	mroce_paths_delivered(ps, 0, false, 10);
	mroce_paths_delivered(ps, 2, false, 30);
	mroce_paths_delivered(ps, 1, false, 20);
	for (id = 0; id < (int)ps->n; id++)
		KUNIT_EXPECT_TRUE(test, mroce_paths_kill(ps, id, 100));
	KUNIT_EXPECT_EQ(test, ps->active, 0ULL);
	KUNIT_EXPECT_EQ(test, mroce_paths_nr_active(ps), 0U);
	KUNIT_EXPECT_EQ(test, mroce_paths_pick(ps), -1);
	KUNIT_EXPECT_EQ(test, mroce_paths_window(ps), 0U);
	/* retransmit on the path with the most recent delivery */
	KUNIT_EXPECT_EQ(test, mroce_paths_fallback(ps), 2);
	KUNIT_EXPECT_EQ(test, mroce_paths_pick_retx(ps, 0), 2);
	KUNIT_EXPECT_EQ(test, mroce_paths_pick_retx(ps, -1), 2);
	rseq = mroce_paths_sent(ps, 2, true);
	/* probing goes on */
	KUNIT_EXPECT_EQ(test, mroce_paths_probe_due(ps, 100, 0, &seq), 0);
	/* the retransmission's ACK revives its path, and delivers it */
	KUNIT_EXPECT_TRUE(test, mroce_paths_probe_acked(ps, 2, rseq, 200));
	mroce_paths_delivered(ps, 2, true, 200);
	KUNIT_EXPECT_EQ(test, ps->active, 0x4ULL);
	KUNIT_EXPECT_EQ(test, mroce_paths_pick(ps), 2);
	KUNIT_EXPECT_EQ(test, mroce_paths_pick_retx(ps, 0), 2);
}

static void mroce_path_test_pick_retx(struct kunit *test)
{
	struct mroce_paths *ps = paths_new(test, 3, 6, true);

	/* cwnd_p = 2; path 0 full, path 1 half, path 2 empty */
	mroce_paths_sent(ps, 0, false);
	mroce_paths_sent(ps, 0, false);
	mroce_paths_sent(ps, 1, false);
	/* same path, full or not */
	KUNIT_EXPECT_EQ(test, mroce_paths_pick_retx(ps, 0), 0);
	KUNIT_EXPECT_EQ(test, mroce_paths_pick_retx(ps, 1), 1);
	/* dead or unknown: the most free window */
	mroce_paths_kill(ps, 0, 0);
	KUNIT_EXPECT_EQ(test, mroce_paths_pick_retx(ps, 0), 2);
	KUNIT_EXPECT_EQ(test, mroce_paths_pick_retx(ps, 7), 2);
	KUNIT_EXPECT_EQ(test, mroce_paths_pick_retx(ps, -1), 2);
	/* ties to the lowest id, and a full window does not stop it */
	mroce_paths_sent(ps, 2, false);
	KUNIT_EXPECT_EQ(test, mroce_paths_pick_retx(ps, 0), 1);
	mroce_paths_sent(ps, 1, true);
	mroce_paths_sent(ps, 2, true);
	mroce_paths_sent(ps, 2, true);
	KUNIT_EXPECT_EQ(test, mroce_paths_pick(ps), -1);
	KUNIT_EXPECT_EQ(test, mroce_paths_pick_retx(ps, 0), 1);
}

static void mroce_path_test_one_path(struct kunit *test)
{
	struct mroce_paths *ps = paths_new(test, 1, 256, true);
	u32 seq;
	int i;

	KUNIT_EXPECT_EQ(test, ps->active, 1ULL);
	KUNIT_EXPECT_EQ(test, ps->path[0].cwnd, 256U);
	for (i = 0; i < 256; i++)
		KUNIT_EXPECT_EQ(test, paths_send(ps), 0);
	KUNIT_EXPECT_EQ(test, mroce_paths_pick(ps), -1);
	KUNIT_EXPECT_EQ(test, mroce_paths_srtt_spread_us(ps), 0U);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_FALSE(test, mroce_paths_lost(ps, 0, false, 100 * i,
							  100 * i));
	KUNIT_EXPECT_TRUE(test, mroce_paths_lost(ps, 0, false, 300, 300));
	KUNIT_EXPECT_EQ(test, mroce_paths_pick(ps), -1);
	KUNIT_EXPECT_EQ(test, mroce_paths_pick_retx(ps, 0), 0);
	KUNIT_EXPECT_EQ(test, mroce_paths_probe_due(ps, 300, 0, &seq), 0);
	KUNIT_EXPECT_EQ(test, seq, 256U);
	KUNIT_EXPECT_TRUE(test, mroce_paths_probe_acked(ps, 0, seq, 350));
	/* 252 packets of the old route still in flight, cwnd_p 1 */
	KUNIT_EXPECT_EQ(test, ps->path[0].inflight, 252U);
	KUNIT_EXPECT_EQ(test, mroce_paths_pick(ps), -1);
	for (i = 0; i < 252; i++)
		mroce_paths_delivered(ps, 0, true, 400);
	KUNIT_EXPECT_EQ(test, paths_send(ps), 0);
	KUNIT_EXPECT_EQ(test, mroce_paths_pick(ps), -1);
}

static void mroce_path_test_64_paths(struct kunit *test)
{
	struct mroce_paths *ps = paths_new(test, MROCE_PATHS_MAX, 256, true);
	u64 seen = 0;
	u32 seq;
	int i;

	KUNIT_EXPECT_EQ(test, ps->active, U64_MAX);
	KUNIT_EXPECT_EQ(test, mroce_paths_nr_active(ps), 64U);
	KUNIT_EXPECT_EQ(test, ps->path[63].cwnd, 4U);
	for (i = 0; i < 64; i++)
		seen |= BIT_ULL(paths_send(ps));
	KUNIT_EXPECT_EQ(test, seen, U64_MAX);

	KUNIT_EXPECT_TRUE(test, mroce_paths_kill(ps, 63, 0));
	KUNIT_EXPECT_EQ(test, ps->active, U64_MAX >> 1);
	KUNIT_EXPECT_FALSE(test, mroce_paths_has_window(ps, 63));
	for (i = 0; i < 63 * 3; i++)
		KUNIT_EXPECT_NE(test, paths_send(ps), 63);
	KUNIT_EXPECT_EQ(test, mroce_paths_pick(ps), -1);
	KUNIT_EXPECT_EQ(test, mroce_paths_probe_due(ps, 0, 0, &seq), 63);
	KUNIT_EXPECT_TRUE(test, mroce_paths_probe_acked(ps, 63, seq, 10));
	KUNIT_EXPECT_EQ(test, ps->active, U64_MAX);
	/* 63 x 4 + the revived path's 1 */
	KUNIT_EXPECT_EQ(test, mroce_paths_window(ps), 253U);
	KUNIT_EXPECT_FALSE(test, mroce_paths_lost(ps, 64, false, 0, 0));
	mroce_paths_echo(ps, 64, 10, true, 0);
	KUNIT_EXPECT_EQ(test, ps->min_rtt_us, 0U);
}

static void mroce_path_test_inflight_underflow(struct kunit *test)
{
	struct mroce_paths *ps = paths_new(test, 2, 256, true);
	struct mroce_path *p = &ps->path[0];

	mroce_paths_sent(ps, 0, false);
	mroce_paths_delivered(ps, 0, true, 10);
	KUNIT_EXPECT_EQ(test, p->inflight, 0U);
	/* a caller bug reporting it again: no wrap to U32_MAX */
	mroce_paths_delivered(ps, 0, true, 20);
	KUNIT_EXPECT_EQ(test, p->inflight, 0U);
	KUNIT_EXPECT_TRUE(test, mroce_paths_has_window(ps, 0));

	/* lost, then delivered after all: in_flight = false */
	mroce_paths_sent(ps, 0, false);
	mroce_paths_sent(ps, 0, false);
	mroce_paths_lost(ps, 0, false, 30, 30);
	KUNIT_EXPECT_EQ(test, p->inflight, 1U);
	mroce_paths_delivered(ps, 0, false, 40);
	KUNIT_EXPECT_EQ(test, p->inflight, 1U);
	KUNIT_EXPECT_EQ(test, p->consec_lost, 0);
	mroce_paths_lost(ps, 0, false, 50, 50);
	mroce_paths_lost(ps, 0, false, 50, 50);
	KUNIT_EXPECT_EQ(test, p->inflight, 0U);
	KUNIT_EXPECT_EQ(test, p->stats.delivered, 3ULL);
	KUNIT_EXPECT_EQ(test, p->stats.lost, 3ULL);
}

static void mroce_path_test_srtt_spread(struct kunit *test)
{
	struct mroce_paths *ps = paths_new(test, 4, 256, true);

	KUNIT_EXPECT_EQ(test, mroce_paths_srtt_spread_us(ps), 0U);
	mroce_paths_echo(ps, 0, 30, false, 0);
	KUNIT_EXPECT_EQ(test, mroce_paths_srtt_spread_us(ps), 0U);
	mroce_paths_echo(ps, 1, 10, false, 0);
	mroce_paths_echo(ps, 2, 50, false, 0);
	/* path 3 has no sample: not counted */
	KUNIT_EXPECT_EQ(test, mroce_paths_srtt_spread_us(ps), 40U);
	/* dead paths are not counted */
	mroce_paths_kill(ps, 2, 0);
	KUNIT_EXPECT_EQ(test, mroce_paths_srtt_spread_us(ps), 20U);
	mroce_paths_kill(ps, 1, 0);
	KUNIT_EXPECT_EQ(test, mroce_paths_srtt_spread_us(ps), 0U);
}

static void mroce_path_test_window(struct kunit *test)
{
	struct mroce_paths *ps = paths_new(test, MROCE_PATHS_DEF, 256, true);

	KUNIT_EXPECT_EQ(test, mroce_paths_window(ps), 256U);
	/* a random loss keeps the window, a congestion loss halves it */
	mroce_paths_lost(ps, 3, false, 0, 0);
	KUNIT_EXPECT_EQ(test, mroce_paths_window(ps), 256U);
	ps->path[0].cong_until_us = 1;	/* as if marked */
	mroce_paths_lost(ps, 0, false, 0, 0);
	KUNIT_EXPECT_EQ(test, ps->path[0].cwnd, 8U);
	KUNIT_EXPECT_EQ(test, mroce_paths_window(ps), 248U);
	mroce_paths_kill(ps, 1, 0);
	KUNIT_EXPECT_EQ(test, mroce_paths_window(ps), 232U);
	mroce_paths_sent(ps, 2, false);
	KUNIT_EXPECT_EQ(test, ps->path[2].cwnd - ps->path[2].inflight, 15U);
	KUNIT_EXPECT_TRUE(test, mroce_paths_has_window(ps, 2));
	KUNIT_EXPECT_FALSE(test, mroce_paths_has_window(ps, 1));
	KUNIT_EXPECT_FALSE(test, mroce_paths_has_window(ps, 16));
}

/*
 * A peer that answers nothing: 16 dead paths probed for 10 s of a 100 us
 * SRTT.  Without backoff that is 1.6 million probes (one per path per
 * SRTT); with it, the first generations at the RTT, then an interval
 * that doubles up to 1 s.
 */
static void mroce_path_test_probe_backoff(struct kunit *test)
{
	struct mroce_paths *ps = paths_new(test, 16, 256, true);
	u64 now, probes = 0, late = 0;
	u32 seq;
	int id;

	for (id = 0; id < 16; id++)
		mroce_paths_kill(ps, id, 0);
	for (now = 0; now <= 10 * USEC_PER_SEC;) {
		while (mroce_paths_probe_due(ps, now, 100, &seq) >= 0) {
			probes++;
			if (now >= 9 * USEC_PER_SEC)
				late++;
		}
		now = mroce_paths_next_probe_us(ps);
	}
	/* a few dozen per path while backing off, then 1 per second */
	KUNIT_EXPECT_LT(test, probes, 16ULL * 80);
	KUNIT_EXPECT_LE(test, late, 16ULL * 2);
	KUNIT_EXPECT_GE(test, late, 16ULL);	/* still probed: it may revive */
	KUNIT_EXPECT_EQ(test, ps->path[0].state, MROCE_PATH_DEAD);
	/* an answer resets the backoff: the next death probes at the RTT */
	mroce_paths_probe_acked(ps, 0, ps->path[0].tx_seq - 1, now);
	KUNIT_EXPECT_EQ(test, ps->path[0].state, MROCE_PATH_ACTIVE);
	mroce_paths_kill(ps, 0, now);
	KUNIT_EXPECT_EQ(test, ps->path[0].dead_gens, 0);
}

static struct kunit_case mroce_path_cases[] = {
	KUNIT_CASE(mroce_path_test_init),
	KUNIT_CASE(mroce_path_test_wrr_proportional),
	KUNIT_CASE(mroce_path_test_wrr_equal),
	KUNIT_CASE(mroce_path_test_pick_skips),
	KUNIT_CASE(mroce_path_test_pick_again),
	KUNIT_CASE(mroce_path_test_path_seq),
	KUNIT_CASE(mroce_path_test_loss_once_per_rtt),
	KUNIT_CASE(mroce_path_test_loss_congestion),
	KUNIT_CASE(mroce_path_test_weight_recovery),
	KUNIT_CASE(mroce_path_test_ce_penalty),
	KUNIT_CASE(mroce_path_test_qdelay_penalty),
	KUNIT_CASE(mroce_path_test_consecutive_losses),
	KUNIT_CASE(mroce_path_test_passed_losses),
	KUNIT_CASE(mroce_path_test_burst_losses),
	KUNIT_CASE(mroce_path_test_kill),
	KUNIT_CASE(mroce_path_test_probe_cadence),
	KUNIT_CASE(mroce_path_test_probe_backoff),
	KUNIT_CASE(mroce_path_test_probe_revives),
	KUNIT_CASE(mroce_path_test_stale_probe_ack),
	KUNIT_CASE(mroce_path_test_all_dead),
	KUNIT_CASE(mroce_path_test_pick_retx),
	KUNIT_CASE(mroce_path_test_echo_aliasing),
	KUNIT_CASE(mroce_path_test_one_path),
	KUNIT_CASE(mroce_path_test_64_paths),
	KUNIT_CASE(mroce_path_test_inflight_underflow),
	KUNIT_CASE(mroce_path_test_srtt_spread),
	KUNIT_CASE(mroce_path_test_window),
	{}
};

static struct kunit_suite mroce_path_suite = {
	.name = "mroce_path",
	.test_cases = mroce_path_cases,
};

kunit_test_suite(mroce_path_suite);
