/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mroce receiver rate hint (Documentation/metaroce-spec.rst, "Rate
 * hint"): the receiver measures what arrives, per receiving port, in
 * epochs of E microseconds, and tells each sender the rate it may send at
 * so that all of them together fill, but do not overrun, the receiver.
 *
 * One struct mroce_hint per receiving port, one struct mroce_hint_conn per
 * connection that delivers to it.  The caller serialises all calls on one
 * struct mroce_hint (they change it); everything is O(1) per packet.
 *
 * Pure code: no ib_core dependency (KUnit suite mroce_ratehint).
 */
#ifndef MROCE_RATEHINT_H
#define MROCE_RATEHINT_H

#include <linux/types.h>

#include "mroce_cc.h"

#define MROCE_HINT_EPOCH_US	100	/* default epoch E */
#define MROCE_HINT_WINDOW		8	/* epochs the capacity estimate spans */
#define MROCE_HINT_TARGET_PCT	95	/* hints add up to 95% of the line rate */
#define MROCE_HINT_HEADROOM_NUM	5	/* ... or 5/4 of the measured capacity */
#define MROCE_HINT_HEADROOM_DEN	4
#define MROCE_HINT_HEAVY_NUM	3	/* "heavy": delivered >= 3/4 of its share */
#define MROCE_HINT_HEAVY_DEN	4

/* Per connection, owned by the caller; zero it (or mroce_hint_conn_init()). */
struct mroce_hint_conn {
	u64 epoch;		/* epoch of its last packet; 0 = never */
	u64 bytes;		/* bytes it delivered in that epoch */
	bool heavy;		/* reached the heavy threshold in it */
	bool ce;		/* delivered a CE-marked packet in it */
};

struct mroce_hint {
	u64 line_mbps;
	u32 epoch_us;
	u64 epoch;		/* current epoch: now / epoch_us + 1 */

	/* the current epoch so far */
	u64 bytes;		/* all connections */
	u64 heavy_bytes;	/* heavy connections */
	u32 n;			/* connections that delivered */
	u32 n_new;		/* of those, idle in the previous epoch */
	u32 n_heavy;		/* of those, past heavy_thresh */
	u32 n_ce;		/* of those, with CE-marked packets */

	/* the previous epoch, evaluated when the current one began */
	u32 prev_n;
	u32 prev_heavy;
	u64 prev_light_mbps;	/* what the light connections delivered */
	u64 target_mbps;	/* T: what all hints together allow */
	u64 heavy_thresh;	/* bytes per epoch that make a connection heavy */
	u32 hint_mbps;		/* the hint now; 0 = none */

	/* capacity estimate: aggregate arrival rate of recent epochs */
	u32 hist_mbps[MROCE_HINT_WINDOW];
	u32 hist_pos;
	u32 congested;		/* bit i: epoch hist_mbps[i] was congested */
};

static inline void mroce_hint_conn_init(struct mroce_hint_conn *c)
{
	c->epoch = 0;
	c->bytes = 0;
	c->heavy = false;
	c->ce = false;
}

void mroce_hint_init(struct mroce_hint *rh, u64 line_mbps, u32 epoch_us);
u32 mroce_hint_rx(struct mroce_hint *rh, struct mroce_hint_conn *c, u32 bytes,
		  bool ce, u64 now_us);
u32 mroce_hint_current(struct mroce_hint *rh, u64 now_us);

#endif /* MROCE_RATEHINT_H */
