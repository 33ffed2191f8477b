// SPDX-License-Identifier: GPL-2.0-only
/*
 * mroce congestion control: the registry, the connection (re)start, the
 * arithmetic the algorithms share, and the "none" algorithm.
 *
 * "none" is what rxe does: a fixed window and no pacing.  It is the
 * baseline the MetaRoCE algorithms are measured against.  The others live
 * in mroce_cc_metaroce.c and mroce_cc_dcqcn.c and are registered here.
 *
 * Shared by the algorithms, as tcp_cong.c shares tcp_slow_start() and
 * tcp_reno_*() (spec "Reference sender algorithm"):
 *
 *  - start:  R = min(line rate, H_last), the line rate 100 Gbit/s when
 *            the transport does not know it (mroce_cc_start())
 *  - track:  the connection's SRTT as the transport reports it, or the
 *            first RTT sample until it does; the latest rate hint H and
 *            when it arrived (mroce_cc_track_ack())
 *  - rounds: one SRTT long, 100 us before the first RTT sample
 *            (mroce_cc_round_us())
 *  - cap:    increases stop at the line rate, and at H while H is younger
 *            than 4 rounds (mroce_cc_rate_cap())
 *  - bounds: min(10 Mbit/s, line rate) <= R <= line rate, also when H is
 *            below the floor (mroce_cc_clamp_rate())
 *
 * Pure protocol code: linux/module.h for the registry's module
 * references, no ib_core or rdma header.
 */

#include <linux/limits.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/string.h>

#include "mroce_cc.h"

/* A rate hint caps increases for this many rounds after it arrived. */
static const u32 mroce_cc_hint_rounds = 4;

static LIST_HEAD(mroce_cc_list);
static DEFINE_MUTEX(mroce_cc_mutex);

static struct mroce_cc_ops *mroce_cc_find(const char *name)
{
	struct mroce_cc_ops *ops;

	list_for_each_entry(ops, &mroce_cc_list, list)
		if (!strcmp(ops->name, name))
			return ops;
	return NULL;
}

int mroce_cc_register(struct mroce_cc_ops *ops)
{
	int err = 0;

	if (!ops->init || !ops->name[0])
		return -EINVAL;

	mutex_lock(&mroce_cc_mutex);
	if (mroce_cc_find(ops->name))
		err = -EEXIST;
	else
		list_add_tail(&ops->list, &mroce_cc_list);
	mutex_unlock(&mroce_cc_mutex);
	return err;
}
EXPORT_SYMBOL_GPL(mroce_cc_register);

void mroce_cc_unregister(struct mroce_cc_ops *ops)
{
	mutex_lock(&mroce_cc_mutex);
	list_del(&ops->list);
	mutex_unlock(&mroce_cc_mutex);
}
EXPORT_SYMBOL_GPL(mroce_cc_unregister);

/*
 * Look up an algorithm by name and pin the module that provides it.
 * Our own algorithms are not pinned: that would keep rmmod from ever
 * unloading a module with devices present.
 */
const struct mroce_cc_ops *mroce_cc_get(const char *name)
{
	struct mroce_cc_ops *ops;

	mutex_lock(&mroce_cc_mutex);
	ops = mroce_cc_find(name);
	if (ops && ops->owner != THIS_MODULE && !try_module_get(ops->owner))
		ops = NULL;
	mutex_unlock(&mroce_cc_mutex);
	return ops;
}

void mroce_cc_put(const struct mroce_cc_ops *ops)
{
	if (ops->owner != THIS_MODULE)
		module_put(ops->owner);
}

/**
 * mroce_cc_init_conn - start (or restart) a connection on @ops
 * @ops: its algorithm
 * @cc: its state
 * @line_rate_bps: the link speed, 0: not known
 * @hint_bps: the last rate hint received on the connection, 0: none
 *
 * Through ops->init_conn, or, for an algorithm without one, with the line
 * rate stored and ops->init.
 */
void mroce_cc_init_conn(const struct mroce_cc_ops *ops,
			struct mroce_cc_state *cc, u64 line_rate_bps,
			u64 hint_bps)
{
	if (ops->init_conn) {
		ops->init_conn(cc, line_rate_bps, hint_bps);
	} else {
		cc->line_rate_bps = line_rate_bps;
		ops->init(cc);
	}
}
EXPORT_SYMBOL_GPL(mroce_cc_init_conn);

/**
 * mroce_cc_tx - the transport is about to send a new packet
 * @ops: the connection's algorithm
 * @cc: its state
 * @in_flight: packets of the connection are unacknowledged
 * @now_us: now, microseconds
 * @idle_us: the idle period after which the connection starts again: its
 *	RTO
 * @hint_bps: the last rate hint received on the connection, 0: none
 *
 * A connection that sends after an idle period longer than @idle_us
 * (nothing in flight, no new packet for that long) starts again, seeded
 * from the receiver's last hint: mroce_cc_init_conn() with the line rate
 * it has.  Retransmissions are not new packets.  For packets sent back to
 * back, calling it for the first one is enough: idle periods are RTOs
 * long.
 *
 * Return: true if the connection started again.
 */
bool mroce_cc_tx(const struct mroce_cc_ops *ops, struct mroce_cc_state *cc,
		 bool in_flight, u64 now_us, u32 idle_us, u64 hint_bps)
{
	bool restart = cc->tx_us && !in_flight &&
		       mroce_cc_elapsed(now_us, cc->tx_us) > idle_us;

	if (restart)
		mroce_cc_init_conn(ops, cc, cc->line_rate_bps, hint_bps);
	cc->tx_us = now_us;
	return restart;
}
EXPORT_SYMBOL_GPL(mroce_cc_tx);

/**
 * mroce_cc_start - the start every algorithm shares
 * @cc: the connection's state
 * @line_rate_bps: the link speed, 0: not known (MROCE_CC_DEFAULT_LINE_BPS)
 * @hint_bps: the last rate hint received on the connection, 0: none
 *
 * Clears the private state and the statistics, sets the line rate.
 *
 * Return: the start rate, min(line rate, @hint_bps) within the bounds.
 */
u64 mroce_cc_start(struct mroce_cc_state *cc, u64 line_rate_bps,
		   u64 hint_bps)
{
	u64 rate;

	memset(cc->priv, 0, sizeof(cc->priv));
	cc->qdelay_us = 0;
	cc->line_rate_bps = line_rate_bps ?: MROCE_CC_DEFAULT_LINE_BPS;
	rate = cc->line_rate_bps;
	if (hint_bps)
		rate = min(rate, hint_bps);
	return mroce_cc_clamp_rate(cc, rate);
}
EXPORT_SYMBOL_GPL(mroce_cc_start);

/**
 * mroce_cc_track_ack - follow the SRTT and the rate hint through an ACK
 * @t: what the algorithm tracks
 * @ack: the acknowledgment
 */
void mroce_cc_track_ack(struct mroce_cc_track *t,
			const struct mroce_cc_ack *ack)
{
	if (ack->srtt_us)
		t->srtt_us = ack->srtt_us;
	else if (!t->srtt_us && ack->rtt_us)
		t->srtt_us = ack->rtt_us;
	if (ack->rate_hint_bps) {
		t->hint_bps = ack->rate_hint_bps;
		t->hint_us = ack->now_us;
	}
}
EXPORT_SYMBOL_GPL(mroce_cc_track_ack);

/**
 * mroce_cc_round_us - the length of a round: SRTT
 * @t: what the algorithm tracks
 *
 * Return: microseconds, MROCE_CC_DEFAULT_RTT_US before the first RTT sample.
 */
u32 mroce_cc_round_us(const struct mroce_cc_track *t)
{
	return t->srtt_us ?: MROCE_CC_DEFAULT_RTT_US;
}
EXPORT_SYMBOL_GPL(mroce_cc_round_us);

/**
 * mroce_cc_rate_cap - how far the rate may increase now
 * @cc: the connection's state
 * @t: what the algorithm tracks
 * @now_us: now, microseconds
 *
 * Return: the line rate, or the latest rate hint if it is lower and younger
 * than mroce_cc_hint_rounds rounds.
 */
u64 mroce_cc_rate_cap(const struct mroce_cc_state *cc,
		      const struct mroce_cc_track *t, u64 now_us)
{
	if (t->hint_bps && mroce_cc_elapsed(now_us, t->hint_us) <=
			   (u64)mroce_cc_hint_rounds * mroce_cc_round_us(t))
		return min(cc->line_rate_bps, t->hint_bps);
	return cc->line_rate_bps;
}
EXPORT_SYMBOL_GPL(mroce_cc_rate_cap);

/**
 * mroce_cc_clamp_rate - a rate within the bounds of the connection
 * @cc: the connection's state
 * @rate_bps: the rate the algorithm computed
 *
 * Return: @rate_bps within [min(MROCE_CC_MIN_RATE_BPS, line), line].
 */
u64 mroce_cc_clamp_rate(const struct mroce_cc_state *cc, u64 rate_bps)
{
	return clamp(rate_bps, min(MROCE_CC_MIN_RATE_BPS, cc->line_rate_bps),
		     cc->line_rate_bps);
}
EXPORT_SYMBOL_GPL(mroce_cc_clamp_rate);

static void mroce_cc_none_init(struct mroce_cc_state *cc)
{
	cc->cwnd_pkts = MROCE_CC_MAX_CWND;
	cc->rate_bps = 0;
}

struct mroce_cc_ops mroce_cc_none = {
	.name = "none",
	.owner = THIS_MODULE,
	.init = mroce_cc_none_init,
};

static struct mroce_cc_ops *const mroce_cc_builtin[] = {
	&mroce_cc_none,
	&mroce_cc_metaroce,
	&mroce_cc_dcqcn,
};

int mroce_cc_init(void)
{
	int i, err;

	for (i = 0; i < ARRAY_SIZE(mroce_cc_builtin); i++) {
		err = mroce_cc_register(mroce_cc_builtin[i]);
		if (err) {
			while (--i >= 0)
				mroce_cc_unregister(mroce_cc_builtin[i]);
			return err;
		}
	}
	return 0;
}

void mroce_cc_exit(void)
{
	int i;

	for (i = ARRAY_SIZE(mroce_cc_builtin) - 1; i >= 0; i--)
		mroce_cc_unregister(mroce_cc_builtin[i]);
}
