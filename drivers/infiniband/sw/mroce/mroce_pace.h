/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mroce pacing: a token bucket that releases a connection's packets at
 * the congestion-control rate (struct mroce_cc_state.rate_bps).
 *
 * The bucket holds credit for at most two packets: after an idle period
 * the sender may send two packets back to back, then one per
 * pkt_bits / rate.  Time is in microseconds, so where a microsecond carries
 * more than one packet (4 KiB packets above 32 Gbit/s) the bucket also
 * holds one microsecond's worth of rate on top of one packet: the sender
 * may then release that many packets per timer tick and still reach the
 * rate exactly.  Credit is kept in bit x 10^6 units, so no fraction of a
 * bit is lost to rounding and the long-run rate is exact.
 *
 * Use, under the QP's send lock:
 *
 *	wait = mroce_pacer_next_us(&pacer, cc->rate_bps, pkt, now_us);
 *	if (wait)
 *		arm the pacing timer for now + wait and stop sending;
 *	else
 *		send the packet, then
 *		mroce_pacer_sent(&pacer, ..., pkt, len, now_us);
 *
 * where pkt is the size of the connection's full packets (it sizes the
 * burst, and no packet waits for more credit than one of them costs) and
 * len the size of the packet sent, which is what it pays: a message's
 * short last packet, or a small message, costs only its own bytes.
 *
 * rate_bps 0 means unpaced: next_us() is always 0 and sent() does nothing.
 * Pure code: no ib_core dependency (KUnit suite mroce_pace).
 */
#ifndef MROCE_PACE_H
#define MROCE_PACE_H

#include <linux/limits.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/types.h>

/* credit units per bit: rate_bps x elapsed_us is credit, exactly */
#define MROCE_PACE_UNIT		1000000ULL
#define MROCE_PACE_BURST_PKTS	2
#define MROCE_PACE_TICK_US	1	/* time resolution of the caller */

struct mroce_pacer {
	s64 credit;		/* may go negative: debt of a forced send */
	u64 last_us;		/* time of the last refill */
};

static inline void mroce_pacer_init(struct mroce_pacer *p)
{
	p->credit = S64_MAX;	/* full: clamped to the burst on first use */
	p->last_us = 0;
}

static inline s64 mroce_pacer_cost(u32 pkt_bytes)
{
	return (s64)pkt_bytes * 8 * MROCE_PACE_UNIT;
}

/* The most credit the bucket holds for packets of @pkt_bytes at @rate_bps. */
static inline s64 mroce_pacer_burst(u64 rate_bps, u32 pkt_bytes)
{
	s64 cost = mroce_pacer_cost(pkt_bytes);
	u64 tick = min_t(u64, rate_bps, S64_MAX / 4) * MROCE_PACE_TICK_US;

	return max_t(s64, MROCE_PACE_BURST_PKTS * cost, cost + (s64)tick);
}

static inline void mroce_pacer_refill(struct mroce_pacer *p, u64 rate_bps,
				      u32 pkt_bytes, u64 now_us)
{
	s64 cap = mroce_pacer_burst(rate_bps, pkt_bytes);

	if (now_us > p->last_us) {
		u64 dt = now_us - p->last_us;

		p->last_us = now_us;
		if (p->credit < cap) {
			u64 room = cap - p->credit;

			if (dt > div64_u64(room, rate_bps))
				p->credit = cap;
			else
				p->credit += rate_bps * dt;
		}
	}
	if (p->credit > cap)
		p->credit = cap;
}

/*
 * Microseconds until a packet of @pkt_bytes may leave at @rate_bps:
 * 0 = now.  Refills the bucket up to @now_us; calling it again at the
 * same time gives the same answer.
 */
static inline u64 mroce_pacer_next_us(struct mroce_pacer *p, u64 rate_bps,
				      u32 pkt_bytes, u64 now_us)
{
	s64 cost = mroce_pacer_cost(pkt_bytes);

	if (!rate_bps)
		return 0;
	mroce_pacer_refill(p, rate_bps, pkt_bytes, now_us);
	if (p->credit >= cost)
		return 0;
	return div64_u64(cost - p->credit + rate_bps - 1, rate_bps);
}

/*
 * A packet of @len bytes left at @now_us, on a connection whose full
 * packets are @pkt_bytes.  Sending before next_us() said so (a
 * retransmission that must not wait, say) puts the bucket in debt, at
 * most one burst deep, which later packets pay back.
 */
static inline void mroce_pacer_sent(struct mroce_pacer *p, u64 rate_bps,
				    u32 pkt_bytes, u32 len, u64 now_us)
{
	if (!rate_bps)
		return;
	mroce_pacer_refill(p, rate_bps, pkt_bytes, now_us);
	p->credit -= mroce_pacer_cost(len);
	p->credit = max(p->credit, -mroce_pacer_burst(rate_bps, pkt_bytes));
}

#endif /* MROCE_PACE_H */
