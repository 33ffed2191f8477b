// SPDX-License-Identifier: GPL-2.0-only
/*
 * mroce latency histograms (mroce_hist.h): reset, the bucket bounds and
 * the percentile query.  Readers run rarely (rdma resource), so the query
 * walks the buckets.
 */

#include <linux/build_bug.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/string.h>

#include "mroce_hist.h"

static_assert(sizeof(struct mroce_hist) == 728);

void mroce_hist_reset(struct mroce_hist *h)
{
	memset(h, 0, sizeof(*h));
}

/* A bucket would wrap: halve all, rounding up so none empties. */
void mroce_hist_halve(struct mroce_hist *h)
{
	u32 i;

	h->n = 0;
	for (i = 0; i < MROCE_HIST_BUCKETS; i++) {
		h->b[i] = h->b[i] / 2 + (h->b[i] & 1);
		h->n += h->b[i];
	}
}

u32 mroce_hist_bucket_max(u32 i)
{
	u32 e, sub;

	if (i < MROCE_HIST_SUB)
		return i;
	if (i >= MROCE_HIST_OVERFLOW)
		return U32_MAX;
	/* bucket i covers [(8 + sub) << (e - 3), (9 + sub) << (e - 3)) */
	e = i / MROCE_HIST_SUB + MROCE_HIST_SUB_BITS - 1;
	sub = i % MROCE_HIST_SUB;
	return ((MROCE_HIST_SUB + sub + 1) << (e - MROCE_HIST_SUB_BITS)) - 1;
}

u32 mroce_hist_pct(const struct mroce_hist *h, u32 ppm)
{
	u64 rank, seen = 0;
	u32 i;

	if (!h->n)
		return 0;
	ppm = clamp_t(u32, ppm, 1, 1000000);
	/* n < 2^40 (buckets are u32): n x 10^6 fits in u64 */
	rank = div_u64(h->n * ppm + 999999, 1000000);
	for (i = 0; i < MROCE_HIST_BUCKETS; i++) {
		seen += h->b[i];
		if (seen >= rank)
			return min(mroce_hist_bucket_max(i), h->max);
	}
	return h->max;	/* not reached: seen ends at n */
}
