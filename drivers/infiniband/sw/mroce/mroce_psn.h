/* SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB */
/*
 * MetaRoCE 24-bit packet sequence number (PSN) arithmetic.
 *
 * Pure protocol code: no ib_core or rdma headers, so KUnit and a userspace
 * conformance suite can include it as is (with <linux/types.h> and
 * <linux/bits.h> shims providing u32, s32, bool, BIT() and GENMASK()).
 *
 * PSNs live in a circle of 2^24 values and wrap from 0xffffff to 0.  The
 * helpers only ever look at the low 24 bits of their arguments: anything
 * above bit 23 is ignored, so a value that was not masked after parsing
 * cannot corrupt a comparison.  The subtractions below are done in u32
 * and then masked, which is exact because 2^24 divides 2^32.
 *
 * The half-space rule: on a circle, "a is before b" only means something
 * if we agree on which way round is shorter.  As in TCP's before()/after(),
 * b is after a when the forward distance a -> b is less than half the
 * circle (2^23), and before it when it is more.  At exactly 2^23 both ways
 * round are equally long; TCP's before() then says each value is before
 * the other.  Here neither is before nor after the other, which keeps
 * mroce_psn_before(a, b) == mroce_psn_after(b, a) for all inputs.  A sender
 * must therefore keep every pair of PSNs it compares - in practice the
 * whole window of outstanding PSNs including the next one to send - less
 * than 2^23 apart: see MROCE_PSN_WINDOW_MAX (mroce's window, MROCE_WINDOW,
 * is far below it; mroce_sb.h asserts so).
 *
 * mroce_psn_between() and mroce_psn_in_window() do not depend on the half
 * space: they measure forward from the start of the range, so they are
 * exact for any range shorter than the whole circle.
 */
#ifndef MROCE_PSN_H
#define MROCE_PSN_H

#include <linux/bits.h>
#include <linux/types.h>

#define MROCE_PSN_BITS		24
/* 0xffffff: the largest PSN, and the mask that brings a u32 into range */
#define MROCE_PSN_MASK		GENMASK(MROCE_PSN_BITS - 1, 0)
/* 2^23: half the PSN circle, the largest signed distance magnitude */
#define MROCE_PSN_HALF		BIT(MROCE_PSN_BITS - 1)
/*
 * Most PSNs a window [start, end) may span so that every PSN in it,
 * including end itself, compares correctly with every other.
 */
#define MROCE_PSN_WINDOW_MAX	(MROCE_PSN_HALF - 1)

/* @psn reduced to 24 bits. */
static inline u32 mroce_psn_mask(u32 psn)
{
	return psn & MROCE_PSN_MASK;
}

/*
 * @psn + @n modulo 2^24.  @n may be any u32: (u32)-1 steps back by one,
 * BIT(24) is a full turn.
 */
static inline u32 mroce_psn_add(u32 psn, u32 n)
{
	return (psn + n) & MROCE_PSN_MASK;
}

/*
 * Forward distance from @from to @to, 0 .. 2^24 - 1: how many times @from
 * must be incremented to reach @to, i.e. the number of PSNs in [@from, @to).
 */
static inline u32 mroce_psn_fwd(u32 from, u32 to)
{
	return (to - from) & MROCE_PSN_MASK;
}

/*
 * True if @a comes strictly before @b: @b is 1 .. 2^23 - 1 steps ahead.
 * False for equal PSNs and for PSNs exactly 2^23 apart (see above).
 */
static inline bool mroce_psn_before(u32 a, u32 b)
{
	u32 d = mroce_psn_fwd(a, b);

	return d != 0 && d < MROCE_PSN_HALF;
}

/* True if @a comes strictly after @b; same as mroce_psn_before(@b, @a). */
static inline bool mroce_psn_after(u32 a, u32 b)
{
	return mroce_psn_before(b, a);
}

/*
 * True if @psn is in the closed range [@lo, @hi], walking forward from @lo
 * (TCP's between(seq1, seq2, seq3) for 24 bits).  @lo == @hi is the single
 * PSN @lo; @hi == @lo - 1 is the whole circle.
 */
static inline bool mroce_psn_between(u32 psn, u32 lo, u32 hi)
{
	return mroce_psn_fwd(lo, psn) <= mroce_psn_fwd(lo, hi);
}

/*
 * True if @psn is in the half-open window [@start, @end), e.g. the PSNs
 * sent but not yet acknowledged, [snd_una, snd_nxt).  Empty when
 * @start == @end.
 */
static inline bool mroce_psn_in_window(u32 psn, u32 start, u32 end)
{
	return mroce_psn_fwd(start, psn) < mroce_psn_fwd(start, end);
}

#endif /* MROCE_PSN_H */
