// SPDX-License-Identifier: GPL-2.0-only
/*
 * mroce receiver rate hint: a max-min fair share of the receiver's
 * capacity, recomputed every epoch E (default 100 us, about two base RTTs).
 *
 * Per epoch the receiver counts the bytes that arrived (IP packets, as the
 * line rate counts them), the connections that delivered at least one
 * packet (n), which of them delivered at least 3/4 of their share
 * ("heavy"), what the others ("light") delivered, and whether the epoch
 * was congested: at least half the active connections delivered CE-marked
 * packets.  (Drops are no signal here: mroce receives in the UDP
 * encapsulation callback, before any socket queue that could overflow.)
 * Then:
 *
 *   A   = bytes x 8 / E, the aggregate arrival rate of the epoch
 *   T   = 95% of the line rate, or, if one of the last 8 epochs was
 *         congested, min(95% of line, 5/4 x the highest A of the last 8
 *         epochs)
 *   hint = max(T / n, (T - light) / heavy), at least 1 Mbit/s;
 *         0 ("no hint") when n <= 1
 *
 * and connections that deliver their first packet in an epoch in which
 * they were not active before count at once, as heavy (n and heavy grow,
 * the hint shrinks at their first packet), so an incast is capped within
 * one RTT; a connection that stops counts until the end of the epoch
 * after its last packet, 1-2 epochs.
 *
 * Why the hint does not spiral down.  A hint derived from what arrived
 * (hint = A / n) does: senders capped at the hint deliver at most the
 * hint, a little less in practice (pacing, ACK clocking, ECN cuts), so
 * the next A is smaller, and so on to the floor.  Here T never follows A
 * down while the receiver is not congested: it is 95% of the line rate,
 * and the fair-share property does not depend on what senders do with
 * their hints.  A is used only in congested epochs, when it is a
 * measurement of the receiver's capacity (a link with a standing queue,
 * the queue that marks, delivers exactly its capacity), not of the
 * senders' caps; the estimate is the highest over a window of
 * 8 epochs, so the epochs in which senders are still backing off do not
 * pull it down, and T keeps 5/4 headroom over it: should A still
 * underestimate (the queue drained mid-epoch, marks from a congestion
 * point elsewhere), senders using their caps deliver up to T, the next A
 * is up to 5/4 higher, and T grows by 5/4 per epoch until it meets the
 * real capacity or 95% of the line.  When the congestion ends, T returns
 * to 95% of the line after 8 epochs.
 *
 * Why no sender hogs.  With two or more active connections every hint is
 * a share of T: at least the equal split T / n, and more only as the
 * max-min share (T - light) / heavy, i.e. capacity that light connections
 * demonstrably leave unused.  A light connection that grows past 3/4 of
 * the share becomes heavy the next epoch, and the share shrinks to make
 * room for it.  A single connection gets no hint: there is nothing to
 * share, its own congestion control finds the capacity, and a cap at T
 * would only cost it the last 5%.
 */

#include <linux/limits.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/string.h>

#include "mroce_ratehint.h"

static u64 mroce_hint_line_target(const struct mroce_hint *rh)
{
	return max_t(u64, div_u64(rh->line_mbps * MROCE_HINT_TARGET_PCT, 100), 1);
}

/* Mbit/s of @bytes in one epoch: bits per microsecond. */
static u64 mroce_hint_mbps(const struct mroce_hint *rh, u64 bytes)
{
	return div_u64(bytes * 8, rh->epoch_us);
}

/* The share of a heavy connection, with @n active, @heavy of them heavy. */
static u64 mroce_hint_share(const struct mroce_hint *rh, u32 n, u32 heavy,
			    u64 light_mbps)
{
	u64 t = rh->target_mbps;
	u64 spare = t > light_mbps ? t - light_mbps : 0;

	return max(div_u64(t, max(n, 1U)), div_u64(spare, max(heavy, 1U)));
}

/*
 * The hint for the connections active now, from the previous epoch's
 * evaluation and the connections that joined since; and the heavy
 * threshold that goes with it.
 */
static void mroce_hint_set_hint(struct mroce_hint *rh)
{
	u32 n = rh->prev_n + rh->n_new;
	u64 share;

	share = mroce_hint_share(rh, n, rh->prev_heavy + rh->n_new,
				 rh->prev_light_mbps);
	/* Mbit/s x us = bits */
	rh->heavy_thresh = div_u64(share * rh->epoch_us * MROCE_HINT_HEAVY_NUM,
				   8 * MROCE_HINT_HEAVY_DEN);
	rh->hint_mbps = n <= 1 ? 0 : clamp_t(u64, share, 1, U32_MAX);
}

static void mroce_hint_push(struct mroce_hint *rh, u64 mbps, bool congested)
{
	u32 pos = rh->hist_pos;

	rh->hist_mbps[pos] = min_t(u64, mbps, U32_MAX);
	if (congested)
		rh->congested |= 1U << pos;
	else
		rh->congested &= ~(1U << pos);
	rh->hist_pos = (pos + 1) % MROCE_HINT_WINDOW;
}

static u64 mroce_hint_target(const struct mroce_hint *rh)
{
	u64 line = mroce_hint_line_target(rh), peak = 0;
	int i;

	if (!rh->congested)
		return line;
	for (i = 0; i < MROCE_HINT_WINDOW; i++)
		peak = max_t(u64, peak, rh->hist_mbps[i]);
	if (!peak)
		return line;
	return clamp_t(u64, div_u64(peak * MROCE_HINT_HEADROOM_NUM,
				    MROCE_HINT_HEADROOM_DEN), 1, line);
}

/* Close the epochs before the one @now_us falls in, if any. */
static void mroce_hint_advance(struct mroce_hint *rh, u64 now_us)
{
	u64 e = div_u64(now_us, rh->epoch_us) + 1, skipped;
	int i;

	if (e <= rh->epoch)
		return;
	rh->prev_n = 0;
	rh->prev_heavy = 0;
	rh->prev_light_mbps = 0;
	if (rh->epoch) {
		bool congested = rh->n && rh->n_ce * 2 >= rh->n;

		mroce_hint_push(rh, mroce_hint_mbps(rh, rh->bytes), congested);
		skipped = e - rh->epoch - 1;
		if (!skipped) {
			rh->prev_n = rh->n;
			rh->prev_heavy = rh->n_heavy;
			rh->prev_light_mbps =
				mroce_hint_mbps(rh, rh->bytes - rh->heavy_bytes);
		}
		for (i = 0; i < min_t(u64, skipped, MROCE_HINT_WINDOW); i++)
			mroce_hint_push(rh, 0, false);
	}
	rh->epoch = e;
	rh->bytes = 0;
	rh->heavy_bytes = 0;
	rh->n = 0;
	rh->n_new = 0;
	rh->n_heavy = 0;
	rh->n_ce = 0;

	rh->target_mbps = mroce_hint_target(rh);
	mroce_hint_set_hint(rh);
}

/**
 * mroce_hint_init - start a receiving port's rate-hint state
 * @rh: the state
 * @line_mbps: the port's line rate, Mbit/s (0: MROCE_CC_DEFAULT_LINE_BPS)
 * @epoch_us: the epoch E, microseconds (0: MROCE_HINT_EPOCH_US)
 */
void mroce_hint_init(struct mroce_hint *rh, u64 line_mbps, u32 epoch_us)
{
	memset(rh, 0, sizeof(*rh));
	rh->line_mbps = line_mbps ?: MROCE_CC_DEFAULT_LINE_BPS / 1000000;
	rh->epoch_us = epoch_us ?: MROCE_HINT_EPOCH_US;
	rh->target_mbps = mroce_hint_line_target(rh);
	mroce_hint_set_hint(rh);
}

/**
 * mroce_hint_rx - account a packet received on a connection
 * @rh: the receiving port's state
 * @c: the connection's state
 * @bytes: the packet's size, IP header through UDP payload
 * @ce: it arrived CE-marked
 * @now_us: arrival time, microseconds, monotonic
 *
 * Call for every packet a connection delivers (requests, responses,
 * duplicates, probes: what rx_count counts).
 *
 * Return: the rate hint to send the connection, Mbit/s; 0 = no hint.
 */
u32 mroce_hint_rx(struct mroce_hint *rh, struct mroce_hint_conn *c, u32 bytes,
		  bool ce, u64 now_us)
{
	bool joined = false;

	mroce_hint_advance(rh, now_us);
	if (c->epoch != rh->epoch) {
		if (!c->epoch || c->epoch + 1 != rh->epoch) {
			rh->n_new++;
			joined = true;
		}
		c->epoch = rh->epoch;
		c->bytes = 0;
		c->heavy = false;
		c->ce = false;
		rh->n++;
	}
	c->bytes += bytes;
	rh->bytes += bytes;
	if (ce && !c->ce) {
		c->ce = true;
		rh->n_ce++;
	}
	if (c->heavy) {
		rh->heavy_bytes += bytes;
	} else if (c->bytes >= rh->heavy_thresh) {
		c->heavy = true;
		rh->n_heavy++;
		rh->heavy_bytes += c->bytes;
	}
	if (joined)
		mroce_hint_set_hint(rh);
	return rh->hint_mbps;
}

/**
 * mroce_hint_current - the current hint, for an ACK no packet triggered
 * @rh: the receiving port's state
 * @now_us: now, microseconds
 *
 * Return: Mbit/s, 0 = no hint.
 */
u32 mroce_hint_current(struct mroce_hint *rh, u64 now_us)
{
	mroce_hint_advance(rh, now_us);
	return rh->hint_mbps;
}
