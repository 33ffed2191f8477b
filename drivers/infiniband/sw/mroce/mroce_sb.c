// SPDX-License-Identifier: GPL-2.0-only
/*
 * mroce send scoreboard and loss detector; see mroce_sb.h.
 */

#include <linux/bitops.h>
#include <linux/limits.h>
#include <linux/minmax.h>
#include <linux/string.h>

#include "mroce_psn.h"
#include "mroce_sb.h"

void mroce_sb_init(struct mroce_sb *sb, u32 psn)
{
	memset(sb, 0, sizeof(*sb));
	sb->una = psn;
	sb->nxt = psn;
	sb->k = MROCE_SB_K_INIT;
	sb->reo_mult = 1;
}

u32 mroce_sb_outstanding(const struct mroce_sb *sb)
{
	u32 p, n = 0;

	for (p = sb->una; p != sb->nxt; p = mroce_psn_add(p, 1))
		if (!(sb->s[p % MROCE_WINDOW].flags & MROCE_SB_SACKED))
			n++;
	return n;
}

bool mroce_sb_sent(struct mroce_sb *sb, u32 psn, u8 path, u32 path_seq,
		   u32 now_us)
{
	struct mroce_sb_slot *s = mroce_sb_slot(sb, psn);

	if (path >= MROCE_SB_PATHS)
		return false;
	if (psn == sb->nxt) {
		if (mroce_psn_fwd(sb->una, sb->nxt) >= MROCE_WINDOW)
			return false;
		s->flags = 0;
		s->nretx = 0;
		sb->nxt = mroce_psn_add(sb->nxt, 1);
	} else if (mroce_psn_in_window(psn, sb->una, sb->nxt)) {
		s->flags = (s->flags & ~MROCE_SB_LOST) | MROCE_SB_RETX;
		if (s->nretx < U8_MAX)
			s->nretx++;
	} else {
		return false;
	}
	s->path = path;
	s->path_seq = path_seq;
	s->xmit_us = now_us;
	return true;
}

/* The transmission (@path, @path_seq, sent at @xmit_us) was delivered. */
static void mroce_sb_dlv_update(struct mroce_sb *sb, u8 path, u32 path_seq,
				u32 xmit_us)
{
	u64 pbit = BIT_ULL(path);

	if (!sb->rack_valid || (s32)(xmit_us - sb->rack_xmit_us) > 0) {
		sb->rack_xmit_us = xmit_us;
		sb->rack_valid = true;
	}
	if (!(sb->dlv_paths & pbit) ||
	    (s32)(path_seq - sb->dlv_seq[path]) > 0) {
		sb->dlv_seq[path] = path_seq;
		sb->dlv_paths |= pbit;
	}
}

/* @psn (in the window, not delivered before) reached the peer. */
static void mroce_sb_deliver(struct mroce_sb *sb, u32 psn, mroce_sb_fn fn,
			     void *ctx)
{
	struct mroce_sb_slot *s = mroce_sb_slot(sb, psn);

	/*
	 * Which copy of a resent PSN arrived is unknown: crediting the
	 * resend's later path seq and time would declare the packets sent
	 * before it lost (a spurious cascade).  Only the echo is exact.
	 */
	if (!(s->flags & MROCE_SB_RETX))
		mroce_sb_dlv_update(sb, s->path, s->path_seq, s->xmit_us);
	/* no reordering seen for a while: be quicker to declare loss again */
	if (++sb->calm_pkts >= MROCE_SB_DECAY_PKTS) {
		sb->calm_pkts = 0;
		sb->k = max_t(u32, sb->k / 2, MROCE_SB_K_INIT);
		sb->reo_mult = max_t(u32, sb->reo_mult - 1, 1);
	}
	if (fn)
		fn(ctx, psn, s, MROCE_SB_DELIVERED);
}

int mroce_sb_ack(struct mroce_sb *sb, u32 cum, const u64 *sack,
		 mroce_sb_fn fn, void *ctx)
{
	int n = 0;
	u32 i, p;

	if (mroce_psn_after(cum, sb->nxt))
		return -1;
	/* cumulative part; a stale ACK (cum before una) has none */
	if (mroce_psn_after(cum, sb->una)) {
		for (p = sb->una; p != cum; p = mroce_psn_add(p, 1)) {
			struct mroce_sb_slot *s = mroce_sb_slot(sb, p);

			if (!(s->flags & MROCE_SB_SACKED)) {
				mroce_sb_deliver(sb, p, fn, ctx);
				n++;
			}
			/* kept: a late duplicate can still prove it spurious */
			s->flags &= MROCE_SB_RETX;
		}
		sb->una = cum;
	}
	if (!sack)
		return n;
	for (i = 1; i < MROCE_WINDOW; i++) {
		struct mroce_sb_slot *s;

		if (!mroce_wire_sack_test(sack, i))
			continue;
		p = mroce_psn_add(cum, i);
		if (!mroce_psn_in_window(p, sb->una, sb->nxt))
			continue;
		s = mroce_sb_slot(sb, p);
		if (s->flags & MROCE_SB_SACKED)
			continue;
		s->flags |= MROCE_SB_SACKED;
		mroce_sb_deliver(sb, p, fn, ctx);	/* sees LOST still */
		s->flags &= ~MROCE_SB_LOST;
		n++;
	}
	return n;
}

u32 mroce_sb_reo_wnd(const struct mroce_sb *sb, const struct mroce_sb_clock *c)
{
	u32 unit = max(c->min_rtt_us / 4, c->rttvar_us / 2);
	u32 w = max3(sb->reo_mult * unit, c->spread_us, 4 * c->rttvar_us);

	return min(w, c->srtt_us + 4 * c->rttvar_us);
}

u32 mroce_sb_detect(struct mroce_sb *sb, const struct mroce_sb_clock *c,
		    mroce_sb_fn fn, void *ctx, u32 *wait_us)
{
	u32 reo = mroce_sb_reo_wnd(sb, c), wait = U32_MAX, n = 0, p;

	for (p = sb->una; p != sb->nxt; p = mroce_psn_add(p, 1)) {
		struct mroce_sb_slot *s = mroce_sb_slot(sb, p);
		enum mroce_sb_event ev;
		s32 age;

		if (s->flags & (MROCE_SB_SACKED | MROCE_SB_LOST))
			continue;
		age = (s32)(c->now_us - s->xmit_us);
		if ((sb->dlv_paths & BIT_ULL(s->path)) &&
		    (s32)(sb->dlv_seq[s->path] - s->path_seq) >= (s32)sb->k) {
			/* out of order inside a path is rare: wait reo_wnd */
			if (age < (s32)reo) {
				wait = min_t(u32, wait, reo - age);
				continue;
			}
			ev = MROCE_SB_LOST_PATH_SEQ;
		} else if (sb->rack_valid && c->srtt_us &&
			   (s32)(sb->rack_xmit_us - s->xmit_us) > 0) {
			s32 left = (s32)(c->srtt_us + reo) - age;

			if (left > 0) {
				wait = min_t(u32, wait, left);
				continue;
			}
			ev = MROCE_SB_LOST_RACK;
		} else {
			continue;
		}
		s->flags |= MROCE_SB_LOST;
		n++;
		if (fn)
			fn(ctx, p, s, ev);
	}
	if (wait_us)
		*wait_us = wait;
	return n;
}

bool mroce_sb_next_lost(const struct mroce_sb *sb, u32 from, u32 *psn)
{
	u32 p = mroce_psn_in_window(from, sb->una, sb->nxt) ? from : sb->una;

	for (; p != sb->nxt; p = mroce_psn_add(p, 1)) {
		if (sb->s[p % MROCE_WINDOW].flags & MROCE_SB_LOST) {
			*psn = p;
			return true;
		}
	}
	return false;
}

void mroce_sb_echo(struct mroce_sb *sb, u8 path, u32 path_seq, u32 xmit_us)
{
	if (path < MROCE_SB_PATHS)
		mroce_sb_dlv_update(sb, path, path_seq, xmit_us);
}

bool mroce_sb_dup_echo(struct mroce_sb *sb, u32 psn)
{
	struct mroce_sb_slot *s = mroce_sb_slot(sb, psn);

	/* only PSNs sent recently enough to still own their slot */
	if (mroce_psn_fwd(psn, sb->nxt) == 0 ||
	    mroce_psn_fwd(psn, sb->nxt) > MROCE_WINDOW ||
	    !(s->flags & MROCE_SB_RETX))
		return false;
	if (mroce_psn_in_window(psn, sb->una, sb->nxt) &&
	    !(s->flags & MROCE_SB_SACKED))
		return false;	/* not known delivered: the echo is ambiguous */
	s->flags &= ~MROCE_SB_RETX;	/* one verdict per resend */
	mroce_sb_spurious(sb);
	return true;
}

void mroce_sb_spurious(struct mroce_sb *sb)
{
	sb->k = min_t(u32, sb->k * 2, MROCE_SB_K_MAX);
	sb->reo_mult = min_t(u32, sb->reo_mult + 1, MROCE_SB_REO_MULT_MAX);
	sb->calm_pkts = 0;
}
