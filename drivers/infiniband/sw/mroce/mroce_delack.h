/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mroce delayed ACK: how long a receiver may hold the ACK of a message's
 * last packet (the spec's ack_delay, MR-36).
 *
 * A receiver ACKs every ack_every packets (the cadence) and whenever the
 * sender asks (ACK_REQ).  The delayed ACK is for the rest: a message's
 * last packet that neither answered, at the tail of a stream the sender
 * did not ask about.  Its deadline is a trade.  Too short, and it fires
 * inside a stream, before the cadence: an ACK and a timer expiry for
 * every few messages instead of one ACK for ack_every packets.  Too long,
 * and the tail's completions wait, and the sender's tail probe, which
 * allows the receiver ack_delay_allowance, fires for an ACK that was
 * merely late.
 *
 * So the deadline follows the arrival rate, as TCP's delayed-ACK timeout
 * (ato) follows the inter-arrival time: ack_every packets' worth of the
 * mean gap between arrivals, with half as much again for jitter, within
 * [ack_delay_min, ack_delay_max].  A hardware or fast software receiver
 * sees packets microseconds apart and keeps the floor; a slow one (a
 * guest under instruction emulation takes 20-35 us a message) gets a
 * deadline the cadence beats while the stream lasts.  The mean is of
 * every gap, so a GRO batch (packets handed over together, then a long
 * gap) counts what the link carried.  A gap counts at most ack_delay_max:
 * a stream that stops and starts again has one long gap, which lifts the
 * deadline for the next dozen or so packets, not for good.
 *
 * Pure code: no ib_core dependency (KUnit suite mroce_delack).
 */
#ifndef MROCE_DELACK_H
#define MROCE_DELACK_H

#include <linux/limits.h>
#include <linux/minmax.h>
#include <linux/types.h>

/*
 * The floor: a fast receiver's deadline, and every receiver's before its
 * first gap is measured.  It keeps a burst of one-packet messages from
 * arming a timer per message.
 */
#define MROCE_ACK_DELAY_MIN_US	100
/*
 * The ceiling (the spec's ack_delay_max): at most RTO_min / 4, and below
 * the sender's ack_delay allowance (MROCE_TLP_ACK_ALLOWANCE_US) so that
 * no tail probe fires for an ACK that is merely delayed.
 */
#define MROCE_ACK_DELAY_MAX_US	400
/* the mean gap is an EWMA with gain 1/8 (as SRTT), kept times 8 */
#define MROCE_DELACK_GAP_SHIFT	3

struct mroce_delack {
	u32 last_us;		/* the previous arrival; 0 before the first */
	u32 gap_us8;		/* mean gap between arrivals, us << 3 */
	u32 ack_every;		/* the receiver's cadence, packets per ACK */
};

static inline void mroce_delack_init(struct mroce_delack *d, u32 ack_every)
{
	d->last_us = 0;
	d->gap_us8 = 0;
	d->ack_every = max(ack_every, 1U);
}

/* A request packet arrived at @now_us (a wrapping microsecond clock). */
static inline void mroce_delack_arrival(struct mroce_delack *d, u32 now_us)
{
	u32 gap;

	if (d->last_us) {
		gap = min_t(u32, now_us - d->last_us, MROCE_ACK_DELAY_MAX_US);
		d->gap_us8 = d->gap_us8 - (d->gap_us8 >> MROCE_DELACK_GAP_SHIFT) +
			     gap;
	}
	d->last_us = now_us ?: 1;
}

/*
 * The deadline, microseconds from the oldest unanswered last packet:
 * 3/2 x ack_every mean gaps, within [ack_delay_min, ack_delay_max].
 */
static inline u32 mroce_delack_us(const struct mroce_delack *d)
{
	u64 us = ((u64)d->gap_us8 * d->ack_every * 3) >>
		 (MROCE_DELACK_GAP_SHIFT + 1);

	return clamp_t(u64, us, MROCE_ACK_DELAY_MIN_US, MROCE_ACK_DELAY_MAX_US);
}

/*
 * What the next ACK reports (spec "rx_count", "ce_count", receiver
 * obligations): the packets received on the connection since the last
 * ACK that reported them, and how many of those carried CE.  An ACK
 * with no triggering packet (rx_count 0: a resend in a ping-pong that
 * carries the receive state, mroce_resp_pb_ack()) may report nothing,
 * so it leaves them to the next ACK; otherwise the sender's congestion
 * control would never see those packets, nor their CE marks.  The wire
 * fields saturate at 65535; a saturated ce_count also reads rx_count
 * 65535, and ce_count <= rx_count always.
 */
struct mroce_ack_count {
	u32 rx;			/* arrivals since the last report */
	u32 ce;			/* of them, CE-marked */
};

static inline void mroce_ack_count_init(struct mroce_ack_count *c)
{
	c->rx = 0;
	c->ce = 0;
}

static inline void mroce_ack_count_arrival(struct mroce_ack_count *c, bool ce)
{
	c->rx++;
	if (ce)
		c->ce++;
}

/*
 * The rx_count and ce_count of an ACK; @trig: it answers a triggering
 * packet (else it reports 0 and 0, and the count goes on).
 */
static inline void mroce_ack_count_report(struct mroce_ack_count *c,
					  bool trig, u16 *rx, u16 *ce)
{
	if (!trig) {
		*rx = 0;
		*ce = 0;
		return;
	}
	*rx = clamp_t(u32, c->rx, 1, U16_MAX);
	*ce = min_t(u32, c->ce, *rx);
	mroce_ack_count_init(c);
}

#endif /* MROCE_DELACK_H */
