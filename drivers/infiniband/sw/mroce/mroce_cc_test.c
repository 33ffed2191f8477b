// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit suite mroce_cc: the congestion-control framework (mroce_cc.c) and
 * the algorithms "metaroce", "dcqcn" and "none" seen from outside: the
 * connection start and the restart after idle, seeded from the receiver's
 * hint, then senders sharing a bottleneck in a small discrete-time
 * simulation (1 us steps) with ECN marking, paced by mroce_pace.h and,
 * where asked, capped by rate hints from the receiver model of
 * mroce_ratehint.c.  The exact steps of each algorithm, which need its
 * private state, are the suites mroce_cc_metaroce and mroce_cc_dcqcn.
 */

#include <kunit/test.h>
#include <linux/math64.h>

#include "mroce_cc_test.h"
#include "mroce_pace.h"
#include "mroce_ratehint.h"

/* ---- none ------------------------------------------------------------ */

static void mroce_cc_test_none(struct kunit *test)
{
	const struct mroce_cc_ops *ops = &mroce_cc_none;
	struct mroce_cc_state cc = {};

	mroce_cc_init_conn(ops, &cc, 25 * GBPS, 5 * GBPS);
	KUNIT_EXPECT_EQ(test, cc.cwnd_pkts, MROCE_CC_MAX_CWND);
	KUNIT_EXPECT_EQ(test, cc.rate_bps, 0);
	KUNIT_EXPECT_EQ(test, cc.line_rate_bps, 25 * GBPS);
	KUNIT_EXPECT_TRUE(test, !ops->on_ack && !ops->on_loss);
}

/* ---- start and restart ------------------------------------------------- */

/*
 * A start seeded from the receiver's hint: R = min(line, H_last) within
 * the bounds, the full window, whatever the connection did before.
 */
static void mroce_cc_test_seeded_start(struct kunit *test)
{
	const struct mroce_cc_ops *algos[] = {
		&mroce_cc_metaroce, &mroce_cc_dcqcn,
	};
	struct mroce_cc_state cc = {};
	int i;

	for (i = 0; i < ARRAY_SIZE(algos); i++) {
		const struct mroce_cc_ops *ops = algos[i];

		mroce_cc_init_conn(ops, &cc, 25 * GBPS, 0);
		KUNIT_EXPECT_EQ(test, cc.rate_bps, 25 * GBPS);
		cc.pkt_bytes = 4096;
		/* marked, capped: far below the line rate */
		cc_ack_at(ops, &cc, 100, 8, 8, 40);
		cc_ack_at(ops, &cc, 200, 8, 8, 40);
		KUNIT_EXPECT_LT(test, cc.rate_bps, 7 * GBPS);

		mroce_cc_init_conn(ops, &cc, 25 * GBPS, 3 * GBPS);
		KUNIT_EXPECT_EQ(test, cc.rate_bps, 3 * GBPS);
		KUNIT_EXPECT_EQ(test, cc.cwnd_pkts, MROCE_CC_MAX_CWND);
		KUNIT_EXPECT_EQ(test, cc.line_rate_bps, 25 * GBPS);
		/* a hint above the line rate: the line rate */
		mroce_cc_init_conn(ops, &cc, 25 * GBPS, 30 * GBPS);
		KUNIT_EXPECT_EQ(test, cc.rate_bps, 25 * GBPS);
		/* a hint below the floor: the floor */
		mroce_cc_init_conn(ops, &cc, 25 * GBPS, 1 * MBPS);
		KUNIT_EXPECT_EQ(test, cc.rate_bps, MROCE_CC_MIN_RATE_BPS);
		/* an unknown line rate: 100 Gbit/s */
		mroce_cc_init_conn(ops, &cc, 0, 0);
		KUNIT_EXPECT_EQ(test, cc.rate_bps, MROCE_CC_DEFAULT_LINE_BPS);
		KUNIT_EXPECT_EQ(test, cc.line_rate_bps, MROCE_CC_DEFAULT_LINE_BPS);
	}
}

/*
 * mroce_cc_tx(): a connection that sends after more than one RTO with
 * nothing in flight starts again, from the hint it passes; one that is
 * still waiting for ACKs, or paused for less, keeps its state.
 */
static void mroce_cc_test_idle_restart(struct kunit *test)
{
	const struct mroce_cc_ops *algos[] = {
		&mroce_cc_metaroce, &mroce_cc_dcqcn, &mroce_cc_none,
	};
	const u32 rto = 5000;
	int i;

	for (i = 0; i < ARRAY_SIZE(algos); i++) {
		const struct mroce_cc_ops *ops = algos[i];
		struct mroce_cc_state cc = {};
		struct mroce_cc_ack a = cc_ack(1100, 8, 8, 40);
		u64 cut;

		mroce_cc_init_conn(ops, &cc, 25 * GBPS, 0);
		cc.pkt_bytes = 4096;
		/* the first packet of a connection: it has just started */
		KUNIT_EXPECT_FALSE(test, mroce_cc_tx(ops, &cc, false, 1000, rto,
						     0));
		KUNIT_EXPECT_EQ(test, cc.tx_us, 1000);
		/* a hint of 3 Gbit/s and a mark */
		a.rate_hint_bps = 3 * GBPS;
		if (ops->on_ack)
			ops->on_ack(&cc, &a);
		cut = cc.rate_bps;
		if (ops != &mroce_cc_none)
			KUNIT_EXPECT_LT(test, cut, 3 * GBPS);
		KUNIT_EXPECT_FALSE(test, mroce_cc_tx(ops, &cc, true, 1200, rto,
						     3 * GBPS));
		/* a long wait for an ACK is not idle */
		KUNIT_EXPECT_FALSE(test, mroce_cc_tx(ops, &cc, true, 9000, rto,
						     3 * GBPS));
		/* nothing in flight for exactly one RTO: not yet */
		KUNIT_EXPECT_FALSE(test, mroce_cc_tx(ops, &cc, false, 14000,
						     rto, 3 * GBPS));
		KUNIT_EXPECT_EQ(test, cc.rate_bps, cut);
		/* more than one RTO: start again at the last hint */
		KUNIT_EXPECT_TRUE(test, mroce_cc_tx(ops, &cc, false, 19001,
						    rto, 3 * GBPS));
		KUNIT_EXPECT_EQ(test, cc.tx_us, 19001);
		KUNIT_EXPECT_EQ(test, cc.line_rate_bps, 25 * GBPS);
		KUNIT_EXPECT_EQ(test, cc.cwnd_pkts, MROCE_CC_MAX_CWND);
		KUNIT_EXPECT_EQ(test, cc.rate_bps,
				ops == &mroce_cc_none ? 0 : 3 * GBPS);
		/* without a hint, at the line rate */
		KUNIT_EXPECT_TRUE(test, mroce_cc_tx(ops, &cc, false, 30000,
						    rto, 0));
		KUNIT_EXPECT_EQ(test, cc.rate_bps,
				ops == &mroce_cc_none ? 0 : 25 * GBPS);
	}
}

/* ---- a bottleneck simulation --------------------------------------------- */

#define SIM_PKT		4096	/* bytes on the wire */
#define SIM_ACK_EVERY	4
#define SIM_ACK_DELAY	8	/* us: delayed-ACK timer */
#define SIM_QCAP	4096	/* packets: never full (8 x 256 window) */
#define SIM_ACKQ	512
#define SIM_FLOWS	8
#define SIM_RTO		5000	/* us: idle restart, the driver's RTO floor */

struct sim_pkt {
	u64 sent_us;
	u8 flow;
	bool ce;
};

struct sim_ack {
	u64 due_us;
	u64 sent_us;
	u32 rx;
	u32 ce;
	u32 hint_mbps;
	bool echo_ce;
};

struct sim_flow {
	struct mroce_cc_state cc;
	struct mroce_pacer pacer;
	struct mroce_hint_conn rc;
	struct sim_ack ackq[SIM_ACKQ];
	u32 ack_head, ack_tail;
	u64 start_us;
	u64 pause_from, pause_until;	/* no new packets in [from, until) */
	bool on;
	u32 inflight;
	u32 restarts;		/* mroce_cc_tx() started it again */
	u32 hint_rcvd_mbps;	/* the last hint the sender received */
	/* receiver side */
	u32 rx_pend, ce_pend, hint_mbps;
	u64 pend_us, pend_sent_us;
	bool pend_ce;
	/* sender's RTT estimates */
	u32 srtt_us, min_rtt_us;
	u64 delivered;		/* bytes through the bottleneck */
	u64 rate_sum;		/* cc.rate_bps in Mbit/s, summed per us */
};

struct sim {
	const struct mroce_cc_ops *ops;
	int n;
	u64 line_bps;		/* senders' links */
	u64 cap_bps;		/* the bottleneck */
	u32 base_rtt_us;
	u32 kmin, kmax;		/* marking ramp, bytes queued */
	u32 pmax;		/* marking probability at kmax, of 65536 */
	bool hints;
	bool seed;		/* restart from the last hint (else 0) */
	struct mroce_hint rh;
	struct sim_pkt q[SIM_QCAP];
	u32 q_head, q_len;
	u64 q_bytes;
	s64 drain;		/* bottleneck credit, bit x 10^6 */
	u32 rng;
	u32 drops;
	u64 now;
	struct sim_flow f[SIM_FLOWS];
};

static u32 sim_rand16(struct sim *s)
{
	s->rng = s->rng * 1103515245 + 12345;
	return s->rng >> 16;
}

static struct sim *sim_new(struct kunit *test, const struct mroce_cc_ops *ops,
			   int n, u64 line, u64 cap, u32 rtt)
{
	struct sim *s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	int i;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, s);
	s->ops = ops;
	s->n = n;
	s->line_bps = line;
	s->cap_bps = cap;
	s->base_rtt_us = rtt;
	/* DCTCP-style step marking at K = 32 KiB */
	s->kmin = 32768;
	s->kmax = 32768;
	s->pmax = 65536;
	s->rng = 1;
	s->seed = true;
	mroce_hint_init(&s->rh, div_u64(cap, MBPS), MROCE_HINT_EPOCH_US);
	for (i = 0; i < n; i++)
		mroce_hint_conn_init(&s->f[i].rc);
	return s;
}

static void sim_ack_out(struct sim *s, struct sim_flow *fl)
{
	struct sim_ack *a = &fl->ackq[fl->ack_tail++ % SIM_ACKQ];

	a->due_us = s->now + s->base_rtt_us;
	a->sent_us = fl->pend_sent_us;
	a->rx = fl->rx_pend;
	a->ce = fl->ce_pend;
	a->echo_ce = fl->pend_ce;
	a->hint_mbps = fl->hint_mbps;
	fl->rx_pend = 0;
	fl->ce_pend = 0;
}

/* A packet left the bottleneck and reached the receiver. */
static void sim_deliver(struct sim *s, const struct sim_pkt *p)
{
	struct sim_flow *fl = &s->f[p->flow];

	fl->delivered += SIM_PKT;
	if (!fl->rx_pend)
		fl->pend_us = s->now;
	fl->rx_pend++;
	fl->ce_pend += p->ce;
	fl->pend_sent_us = p->sent_us;
	fl->pend_ce = p->ce;
	if (s->hints)
		fl->hint_mbps = mroce_hint_rx(&s->rh, &fl->rc, SIM_PKT, p->ce,
					      s->now);
	if (fl->rx_pend >= SIM_ACK_EVERY || p->ce)
		sim_ack_out(s, fl);
}

static void sim_sender_ack(struct sim *s, struct sim_flow *fl,
			   const struct sim_ack *sa)
{
	u32 rtt = s->now - sa->sent_us;
	struct mroce_cc_ack a = {};

	fl->srtt_us = fl->srtt_us ? fl->srtt_us - fl->srtt_us / 8 + rtt / 8 :
				    rtt;
	fl->min_rtt_us = fl->min_rtt_us ? min(fl->min_rtt_us, rtt) : rtt;
	fl->inflight -= min(fl->inflight, sa->rx);
	a.now_us = s->now;
	a.acked_pkts = sa->rx;
	a.inflight_pkts = fl->inflight;
	a.rx_count = sa->rx;
	a.ce_count = sa->ce;
	a.echo_ce = sa->echo_ce;
	a.rtt_us = rtt;
	a.srtt_us = fl->srtt_us;
	a.min_rtt_us = fl->min_rtt_us;
	a.rate_hint_bps = (u64)sa->hint_mbps * MBPS;
	if (sa->hint_mbps)
		fl->hint_rcvd_mbps = sa->hint_mbps;
	if (s->ops->on_ack)
		s->ops->on_ack(&fl->cc, &a);
}

static void sim_send(struct sim *s, struct sim_flow *fl, int idx)
{
	u64 hint = s->seed ? (u64)fl->hint_rcvd_mbps * MBPS : 0;

	if (s->now >= fl->pause_from && s->now < fl->pause_until)
		return;
	while (fl->inflight < fl->cc.cwnd_pkts &&
	       !mroce_pacer_next_us(&fl->pacer, fl->cc.rate_bps, SIM_PKT,
				    s->now)) {
		struct sim_pkt *p;
		bool ce = false;

		if (s->q_len == SIM_QCAP) {
			s->drops++;
			return;
		}
		if (s->q_bytes >= s->kmax)
			ce = true;
		else if (s->q_bytes > s->kmin)
			ce = sim_rand16(s) < div_u64((u64)s->pmax *
						     (s->q_bytes - s->kmin),
						     s->kmax - s->kmin);
		if (mroce_cc_tx(s->ops, &fl->cc, fl->inflight > 0, s->now, SIM_RTO,
				hint))
			fl->restarts++;
		p = &s->q[(s->q_head + s->q_len++) % SIM_QCAP];
		p->sent_us = s->now;
		p->flow = idx;
		p->ce = ce;
		s->q_bytes += SIM_PKT;
		mroce_pacer_sent(&fl->pacer, fl->cc.rate_bps, SIM_PKT, SIM_PKT,
				 s->now);
		fl->inflight++;
	}
}

static void sim_step(struct sim *s)
{
	const s64 cost = (s64)SIM_PKT * 8 * 1000000;
	int i, k;

	for (k = 0; k < s->n; k++) {
		struct sim_flow *fl;

		i = (k + (u32)s->now) % s->n;	/* no flow always first */
		fl = &s->f[i];
		if (s->now < fl->start_us)
			continue;
		if (!fl->on) {
			fl->on = true;
			mroce_cc_init_conn(s->ops, &fl->cc, s->line_bps, 0);
			fl->cc.pkt_bytes = SIM_PKT;
			mroce_pacer_init(&fl->pacer);
		}
		while (fl->ack_head != fl->ack_tail &&
		       fl->ackq[fl->ack_head % SIM_ACKQ].due_us <= s->now)
			sim_sender_ack(s, fl,
				       &fl->ackq[fl->ack_head++ % SIM_ACKQ]);
		sim_send(s, fl, i);
		fl->rate_sum += div_u64(fl->cc.rate_bps, MBPS);
	}

	s->drain += s->cap_bps;		/* one microsecond's worth */
	while (s->q_len && s->drain >= cost) {
		struct sim_pkt p = s->q[s->q_head];

		s->q_head = (s->q_head + 1) % SIM_QCAP;
		s->q_len--;
		s->q_bytes -= SIM_PKT;
		s->drain -= cost;
		sim_deliver(s, &p);
	}
	if (!s->q_len)
		s->drain = min(s->drain, cost);

	for (i = 0; i < s->n; i++) {
		struct sim_flow *fl = &s->f[i];

		if (fl->rx_pend && s->now - fl->pend_us >= SIM_ACK_DELAY)
			sim_ack_out(s, fl);
	}
	s->now++;
}

static void sim_run(struct sim *s, u64 until_us)
{
	while (s->now < until_us)
		sim_step(s);
}

/*
 * Throughput (Mbit/s) of each flow over [from, to) and their sum; and,
 * if @rate, each flow's sending rate (Mbit/s) averaged over that time.
 */
static u64 sim_measure(struct sim *s, u64 from, u64 to, u64 *mbps, u64 *rate)
{
	u64 before[SIM_FLOWS], rsum[SIM_FLOWS], sum = 0;
	int i;

	sim_run(s, from);
	for (i = 0; i < s->n; i++) {
		before[i] = s->f[i].delivered;
		rsum[i] = s->f[i].rate_sum;
	}
	sim_run(s, to);
	for (i = 0; i < s->n; i++) {
		mbps[i] = div64_u64((s->f[i].delivered - before[i]) * 8,
				    to - from);
		if (rate)
			rate[i] = div64_u64(s->f[i].rate_sum - rsum[i],
					    to - from);
		sum += mbps[i];
	}
	return sum;
}

/* Jain's fairness index x 1000 */
static u64 sim_jain(const u64 *x, int n)
{
	u64 sum = 0, sq = 0;
	int i;

	for (i = 0; i < n; i++) {
		sum += x[i];
		sq += x[i] * x[i];
	}
	return sq ? div64_u64(sum * sum * 1000, n * sq) : 0;
}

/*
 * Three senders join a bottleneck of capacity C one after another, each
 * starting at the line rate, and send as much as they may.  @settle_us
 * after the last one joined, over @span_us:
 *
 * - without rate hints (ECN and delay only): each one's average sending
 *   rate within 10% of the average of the three (they converged to equal
 *   shares), their throughput fair (Jain > 0.95) and together at least
 *   85% of C.  AIMD leaves the queue empty for part of each sawtooth:
 *   about 90% of C is what it achieves in this model;
 * - with the receiver's rate hints (C is the receiver's link): each
 *   within 10% of C/3 (the hints make it 95% of C/3 exactly), Jain > 0.99.
 */
static void sim_converge(struct kunit *test, const struct mroce_cc_ops *ops,
			 u32 rtt, bool hints, u64 settle_us, u64 span_us)
{
	u64 cap = 25 * GBPS, share = div_u64(cap, 3 * MBPS), mbps[3], rate[3];
	struct sim *s = sim_new(test, ops, 3, 25 * GBPS, cap, rtt);
	const u64 gap = 2000;
	u64 sum, mean;
	int i;

	if (ops == &mroce_cc_dcqcn) {
		/* DCQCN's RED-ECN: 5 KB..200 KB, 1% at Kmax, 100% beyond */
		s->kmin = 5000;
		s->kmax = 200000;
		s->pmax = 655;
	}
	s->hints = hints;
	for (i = 0; i < 3; i++)
		s->f[i].start_us = i * gap;
	sum = sim_measure(s, 2 * gap + settle_us, 2 * gap + settle_us + span_us,
			  mbps, rate);
	kunit_info(test, "%s rtt %u hints %d: rates %llu %llu %llu, throughput %llu %llu %llu Mbit/s, jain %llu/1000\n",
		   ops->name, rtt, hints, rate[0], rate[1], rate[2], mbps[0],
		   mbps[1], mbps[2], sim_jain(mbps, 3));
	mean = div_u64(rate[0] + rate[1] + rate[2], 3);
	for (i = 0; i < 3; i++) {
		if (hints) {
			KUNIT_EXPECT_GE(test, rate[i], share - div_u64(share, 10));
			KUNIT_EXPECT_LE(test, rate[i], share + div_u64(share, 10));
		} else {
			KUNIT_EXPECT_GE(test, rate[i], mean - div_u64(mean, 10));
			KUNIT_EXPECT_LE(test, rate[i], mean + div_u64(mean, 10));
		}
	}
	KUNIT_EXPECT_GT(test, sim_jain(mbps, 3), hints ? 990 : 950);
	KUNIT_EXPECT_GE(test, sum, div_u64(cap * 85, 100 * MBPS));
	KUNIT_EXPECT_EQ(test, s->drops, 0);
	/* senders that never pause never start again */
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, s->f[i].restarts, 0);
}

static void mroce_cc_test_metaroce_converge(struct kunit *test)
{
	sim_converge(test, &mroce_cc_metaroce, 20, false, 14000, 8000);
	sim_converge(test, &mroce_cc_metaroce, 40, false, 14000, 8000);
	sim_converge(test, &mroce_cc_metaroce, 100, false, 14000, 8000);
	sim_converge(test, &mroce_cc_metaroce, 40, true, 2000, 4000);
}

static void mroce_cc_test_dcqcn_converge(struct kunit *test)
{
	sim_converge(test, &mroce_cc_dcqcn, 20, false, 50000, 80000);
	sim_converge(test, &mroce_cc_dcqcn, 40, false, 50000, 80000);
	sim_converge(test, &mroce_cc_dcqcn, 100, false, 50000, 80000);
	sim_converge(test, &mroce_cc_dcqcn, 40, true, 2000, 4000);
}

static u64 sim_sum_rate(struct sim *s)
{
	u64 sum = 0;
	int i;

	for (i = 0; i < s->n; i++)
		sum += s->f[i].cc.rate_bps;
	return sum;
}

/*
 * Incast: 8 senders start at once at the line rate towards one receiver
 * link.  With the receiver's rate hint the aggregate sending rate is at
 * or below the link's capacity after one RTT plus the time to collect
 * the hints (the first epoch), i.e. within 2-3 RTTs; without it, ECN
 * alone takes several more.
 */
static void mroce_cc_test_incast_hint(struct kunit *test)
{
	const u32 rtt = 40;
	u64 cap = 25 * GBPS, settled[2] = { 0, 0 }, mbps[8], sum;
	int h, i;

	for (h = 1; h >= 0; h--) {
		struct sim *s = sim_new(test, &mroce_cc_metaroce, 8, cap, cap,
					rtt);

		s->hints = h;
		while (s->now < 100 * rtt) {
			sim_step(s);
			if (!settled[h] && sim_sum_rate(s) <= cap)
				settled[h] = s->now;
		}
		kunit_info(test, "hints %d: aggregate <= C after %llu us\n",
			   h, settled[h]);
		if (h) {
			KUNIT_EXPECT_GT(test, settled[h], 0);
			KUNIT_EXPECT_LE(test, settled[h], 3 * rtt);
			/* and stays there, at a fair share of 95% of C */
			for (i = 0; i < 8; i++)
				KUNIT_EXPECT_LE(test, s->f[i].cc.rate_bps,
						div_u64(cap * 95, 800) + MBPS);
		}
		/* then all of them share the link fairly */
		sum = sim_measure(s, 4000, 8000, mbps, NULL);
		KUNIT_EXPECT_GT(test, sim_jain(mbps, 8), 950);
		KUNIT_EXPECT_GE(test, sum, div_u64(cap * (h ? 93 : 85),
						   100 * MBPS));
		KUNIT_EXPECT_EQ(test, s->drops, 0);
	}
	KUNIT_EXPECT_GT(test, settled[0], settled[1]);
}

/*
 * Incast, pause, resume: 8 senders with the receiver's rate hints share
 * its link (C, also their line rate), all pause for longer than the RTO,
 * then resume at once.  Each starts again (mroce_cc_tx()).  From the last
 * hint it received (95% of C / 8), together they ask for at most 95% of
 * C plus one additive increase each (line / 64) until the receiver's new
 * hints arrive; started again from the line rate, they would ask for 8 C.
 */
static void mroce_cc_test_incast_resume(struct kunit *test)
{
	const u32 rtt = 40, pause = 4000, idle = 2 * SIM_RTO;
	u64 cap = 25 * GBPS, peak[2] = { 0, 0 }, mbps[8], sum, resume;
	int seed, i;

	resume = pause + idle;
	for (seed = 1; seed >= 0; seed--) {
		struct sim *s = sim_new(test, &mroce_cc_metaroce, 8, cap, cap,
					rtt);
		u32 restarts = 0;

		s->hints = true;
		s->seed = seed;
		for (i = 0; i < 8; i++) {
			s->f[i].pause_from = pause;
			s->f[i].pause_until = resume;
		}
		sim_run(s, resume);
		while (s->now < resume + 20 * rtt) {
			sim_step(s);
			peak[seed] = max(peak[seed], sim_sum_rate(s));
		}
		for (i = 0; i < 8; i++)
			restarts += s->f[i].restarts;
		kunit_info(test, "seeded %d: %u restarts, aggregate rate up to %llu Mbit/s after the pause\n",
			   seed, restarts, div_u64(peak[seed], MBPS));
		KUNIT_EXPECT_EQ(test, restarts, 8);
		/* and then they share the link as before the pause */
		sum = sim_measure(s, resume + 2000, resume + 6000, mbps, NULL);
		KUNIT_EXPECT_GT(test, sim_jain(mbps, 8), 950);
		KUNIT_EXPECT_GE(test, sum, div_u64(cap * 93, 100 * MBPS));
		KUNIT_EXPECT_EQ(test, s->drops, 0);
	}
	KUNIT_EXPECT_LE(test, peak[1], div_u64(cap * 95, 100) + 8 * cap / 64);
	KUNIT_EXPECT_GE(test, peak[0], 8 * cap);
}

/* "none": window-limited, unpaced; fills the link, keeps a queue */
static void mroce_cc_test_none_sim(struct kunit *test)
{
	u64 cap = 25 * GBPS, mbps[2], sum;
	struct sim *s = sim_new(test, &mroce_cc_none, 2, cap, cap, 40);

	sum = sim_measure(s, 1000, 3000, mbps, NULL);
	KUNIT_EXPECT_GE(test, sum, div_u64(cap * 95, 100 * MBPS));
	KUNIT_EXPECT_GT(test, s->q_bytes, 256 * SIM_PKT);
}

static struct kunit_case mroce_cc_cases[] = {
	KUNIT_CASE(mroce_cc_test_none),
	KUNIT_CASE(mroce_cc_test_seeded_start),
	KUNIT_CASE(mroce_cc_test_idle_restart),
	KUNIT_CASE(mroce_cc_test_metaroce_converge),
	KUNIT_CASE(mroce_cc_test_dcqcn_converge),
	KUNIT_CASE(mroce_cc_test_incast_hint),
	KUNIT_CASE(mroce_cc_test_incast_resume),
	KUNIT_CASE(mroce_cc_test_none_sim),
	{}
};

static struct kunit_suite mroce_cc_suite = {
	.name = "mroce_cc",
	.test_cases = mroce_cc_cases,
};

kunit_test_suite(mroce_cc_suite);
