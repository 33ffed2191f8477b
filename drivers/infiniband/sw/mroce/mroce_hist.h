/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mroce latency histograms: per-QP completion latency and per-path RTT
 * ("rdma resource show qp -dd", Documentation/mroce.rst "Tail latency").
 *
 * A log-linear histogram of u32 values (microseconds), in the manner of
 * HdrHistogram: values below 8 have a bucket each; above, every power of
 * two [2^e, 2^(e+1)) is split into 8 equal buckets.  A bucket is at most
 * 1/8 of its lower bound wide, so a percentile read as its bucket's upper
 * bound is at most 12.5% (and 1 us below 8 us: exactly) above the true
 * value.  Values from 2^24 us (16.8 s) up share one overflow bucket; the
 * maximum is kept exactly.
 *
 * Fixed memory: MROCE_HIST_BUCKETS u32 counters and 20 bytes more, 728
 * bytes in all.  Recording is O(1) with no allocation and no lock of its
 * own: the caller serialises every call on one histogram (the QP's
 * sq.lock).  When a bucket would wrap, all buckets are halved: the
 * histogram keeps its shape (percentiles stay right to a bucket) and
 * @total still counts every sample.
 *
 * Pure code: no ib_core dependency (KUnit suite mroce_hist).
 */
#ifndef MROCE_HIST_H
#define MROCE_HIST_H

#include <linux/bitops.h>
#include <linux/compiler.h>
#include <linux/limits.h>
#include <linux/types.h>

#define MROCE_HIST_SUB_BITS	3
#define MROCE_HIST_SUB		BIT(MROCE_HIST_SUB_BITS)	/* 8 */
#define MROCE_HIST_RANGE_BITS	24	/* exact buckets below 2^24 us */
/* 8 unit buckets, 8 per power of two from 2^3 to 2^23, one overflow */
#define MROCE_HIST_BUCKETS	\
	(MROCE_HIST_SUB * (MROCE_HIST_RANGE_BITS - MROCE_HIST_SUB_BITS + 1) + 1)
#define MROCE_HIST_OVERFLOW	(MROCE_HIST_BUCKETS - 1)

/* Percentiles, in parts per million, as mroce_hist_pct() takes them. */
#define MROCE_HIST_P50		500000
#define MROCE_HIST_P99		990000
#define MROCE_HIST_P999		999000

struct mroce_hist {
	u32 b[MROCE_HIST_BUCKETS];
	u32 max;		/* the largest sample, exact */
	u64 n;			/* samples in b[] (less than total once halved) */
	u64 total;		/* samples recorded since the reset */
};

/* The bucket of value @v. */
static inline u32 mroce_hist_bucket(u32 v)
{
	u32 e;

	if (v < MROCE_HIST_SUB)
		return v;
	if (v >> MROCE_HIST_RANGE_BITS)
		return MROCE_HIST_OVERFLOW;
	e = fls(v) - 1;				/* 2^e <= v < 2^(e+1), e >= 3 */
	return (e - MROCE_HIST_SUB_BITS + 1) * MROCE_HIST_SUB +
	       ((v >> (e - MROCE_HIST_SUB_BITS)) & (MROCE_HIST_SUB - 1));
}

void mroce_hist_halve(struct mroce_hist *h);

/* Count one sample @v.  O(1); the caller holds the histogram's lock. */
static inline void mroce_hist_record(struct mroce_hist *h, u32 v)
{
	u32 i = mroce_hist_bucket(v);

	if (unlikely(h->b[i] == U32_MAX))
		mroce_hist_halve(h);
	h->b[i]++;
	h->n++;
	h->total++;
	if (v > h->max)
		h->max = v;
}

void mroce_hist_reset(struct mroce_hist *h);
/* The largest value bucket @i holds (MROCE_HIST_OVERFLOW: U32_MAX). */
u32 mroce_hist_bucket_max(u32 i);
/*
 * The @ppm-th percentile (parts per million, 1 .. 1000000) of the
 * samples: the upper bound of the bucket that holds the sample of rank
 * ceil(n x ppm / 10^6), never above the maximum; 0 when empty.
 */
u32 mroce_hist_pct(const struct mroce_hist *h, u32 ppm);

#endif /* MROCE_HIST_H */
