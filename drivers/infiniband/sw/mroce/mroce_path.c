// SPDX-License-Identifier: GPL-2.0-only
/*
 * mroce path table (spec "Multipath"): spraying, path penalty, dead
 * paths, probing and entropy replacement.  See mroce_path.h.
 *
 * Rounds.  "Once per RTT" and "per RTT without loss or mark" are
 * measured in SRTT_p of the path (before its first sample: the
 * connection's min_rtt, else MROCE_CC_DEFAULT_RTT_US).  A decrease holds
 * further decreases of the same kind (loss, mark) for one SRTT_p, so a
 * burst of losses or marks from one window is one congestion event.  An
 * independent round clock ends a round on the first echo at least one
 * SRTT_p after the round began; a round without loss or mark ends with
 * the weight's increase, one without mark or congestion loss with the
 * window's.
 *
 * Loss and the window.  A loss cuts cwnd_p only next to a mark (within
 * MROCE_PATH_CONG_RTTS SRTT_p of one), as the connection's rate is cut
 * only next to CE or the delay signal (mroce_cc_metaroce.c): switches
 * mark before they drop, so a loss without a mark is a lossy link, and
 * halving the window on it is Reno's response, which at a loss rate p
 * holds a path near 1.2 / sqrt(p) packets per round trip whatever the
 * link could carry (and here less: the window grew back only in round
 * trips without any loss).  The weight still halves on every loss, so
 * a path that loses more than the others gets fewer packets.
 *
 * Smooth weighted round-robin (as nginx's upstream balancer): each pick
 * adds w_p to the credit of every eligible path and takes the one with
 * most credit (ties to the lowest id), which then gives back the sum of
 * the eligible weights.  Over any stretch of picks with a fixed eligible
 * set, path p gets w_p / sum(w) of them, interleaved rather than in
 * bursts.  Paths without window keep their credit frozen.
 *
 * Pure code: no ib_core headers.
 */

#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/limits.h>
#include <linux/minmax.h>
#include <linux/string.h>

#include "mroce_cc.h"
#include "mroce_path.h"
#include "mroce_wire.h"

static_assert(MROCE_PATHS_MAX == MROCE_WIRE_MAX_PATHS);
static_assert(MROCE_PATHS_DEF == MROCE_WIRE_DEF_PATHS);
static_assert(MROCE_PATHS_MAX <= 64);	/* one u64 active mask */

/* Length of a round trip of @p for the once-per-RTT rules. */
static u32 mroce_path_rtt(const struct mroce_paths *ps,
			  const struct mroce_path *p)
{
	if (p->srtt_x8)
		return max(mroce_path_srtt_us(p), 1U);
	if (ps->min_rtt_us)
		return ps->min_rtt_us;
	return MROCE_CC_DEFAULT_RTT_US;
}

/* @val x (1 - alpha / 2), rounded down, at least 1. */
static u32 mroce_path_scale(u32 val, u32 alpha)
{
	u64 v = (u64)val * (2ULL * MROCE_PATH_ALPHA_ONE - alpha);

	return max_t(u64, v >> (MROCE_PATH_ALPHA_SHIFT + 1), 1);
}

static void mroce_path_start_round(const struct mroce_paths *ps,
				   struct mroce_path *p, u64 now_us)
{
	p->round_end_us = now_us + mroce_path_rtt(ps, p);
	p->round_dirty = false;
	p->round_marked = false;
}

int mroce_paths_init(struct mroce_paths *ps, u32 n, u32 win_pkts,
		     bool windowed, u64 now_us)
{
	u32 cwnd;
	int id;

	if (n < 1 || n > MROCE_PATHS_MAX)
		return -EINVAL;

	memset(ps, 0, mroce_paths_size(n));
	ps->n = n;
	ps->win_pkts = max(win_pkts, 1U);
	ps->windowed = windowed;
	ps->active = GENMASK_ULL(n - 1, 0);
	ps->qdelay_target_us = MROCE_CC_QDELAY_TARGET_US;
	cwnd = DIV_ROUND_UP(ps->win_pkts, n);

	for (id = 0; id < (int)ps->n; id++) {
		struct mroce_path *p = &ps->path[id];

		p->state = MROCE_PATH_ACTIVE;
		p->w = MROCE_PATH_W_ONE;
		p->cwnd = cwnd;
		p->next_probe_us = U64_MAX;
		mroce_path_start_round(ps, p, now_us);
	}
	return 0;
}

/*
 * One round of smooth weighted round-robin: every path with window gains
 * its weight in credit, and the chosen one pays the round's total.  The
 * choice is the path with the most credit, or @want (>= 0: a burst that
 * stays on its path, charged as if the round had chosen it).
 */
static int mroce_paths_round(struct mroce_paths *ps, int want)
{
	s32 total = 0;
	int id, best = -1;

	for (id = 0; id < (int)ps->n; id++) {
		struct mroce_path *p = &ps->path[id];

		if (!mroce_paths_has_window(ps, id))
			continue;
		p->credit += p->w;
		total += p->w;
		if (best < 0 || p->credit > ps->path[best].credit)
			best = id;
	}
	if (want >= 0)
		best = want;
	if (best >= 0)
		ps->path[best].credit -= total;
	return best;
}

int mroce_paths_pick(struct mroce_paths *ps)
{
	return mroce_paths_round(ps, -1);
}

/*
 * A burst: the caller wants @id again (its chunk runs on one path).  The
 * credits move as if the weighted pick had chosen @id, so the shares over
 * many bursts stay the weights' (what @id takes now the others get back
 * at the next mroce_paths_pick()).
 */
int mroce_paths_pick_again(struct mroce_paths *ps, int id)
{
	if (!mroce_paths_has_window(ps, id))
		return -1;
	return mroce_paths_round(ps, id);
}

int mroce_paths_fallback(const struct mroce_paths *ps)
{
	int id, best = 0;

	for (id = 0; id < (int)ps->n; id++) {
		if (ps->path[id].last_delivery_us >
		    ps->path[best].last_delivery_us)
			best = id;
	}
	return best;
}

int mroce_paths_pick_retx(struct mroce_paths *ps, int lost_on)
{
	s64 free, best_free = 0;
	int id, best = -1;

	if (mroce_paths_active(ps, lost_on))
		return lost_on;

	for (id = 0; id < (int)ps->n; id++) {
		const struct mroce_path *p = &ps->path[id];

		if (!mroce_paths_active(ps, id))
			continue;
		free = (s64)p->cwnd - p->inflight;
		if (best < 0 || free > best_free) {
			best = id;
			best_free = free;
		}
	}
	return best >= 0 ? best : mroce_paths_fallback(ps);
}

u32 mroce_paths_sent(struct mroce_paths *ps, int id, bool retx)
{
	struct mroce_path *p;

	if (!mroce_paths_valid(ps, id))
		return 0;
	p = &ps->path[id];
	p->inflight++;
	p->stats.tx_pkts++;
	if (retx)
		p->stats.retx_pkts++;
	return p->tx_seq++;
}

void mroce_paths_delivered(struct mroce_paths *ps, int id, bool in_flight,
			   u64 now_us)
{
	struct mroce_path *p;

	if (!mroce_paths_valid(ps, id))
		return;
	p = &ps->path[id];
	if (in_flight && p->inflight)
		p->inflight--;
	p->consec_lost = 0;
	p->last_delivery_us = now_us;
	p->stats.delivered++;
}

static void mroce_path_sample(struct mroce_paths *ps, struct mroce_path *p,
			      u32 rtt_us)
{
	/* kept x 8 as in TCP, so that it converges to the microsecond */
	rtt_us = min(rtt_us, U32_MAX >> MROCE_PATH_SRTT_SHIFT);
	if (!p->srtt_x8)
		p->srtt_x8 = rtt_us << MROCE_PATH_SRTT_SHIFT;
	else
		p->srtt_x8 += rtt_us - (p->srtt_x8 >> MROCE_PATH_SRTT_SHIFT);
	if (!p->min_rtt_us || rtt_us < p->min_rtt_us)
		p->min_rtt_us = rtt_us;
	if (!ps->min_rtt_us || rtt_us < ps->min_rtt_us)
		ps->min_rtt_us = rtt_us;
	p->stats.rtt_samples++;
}

bool mroce_paths_want_echo(struct mroce_paths *ps, int id, u64 now_us,
			   u32 srtt_us)
{
	u64 stale = max_t(u64, srtt_us, MROCE_PATH_PROBE_MIN_US), last;
	int i;

	if (ps->since_echo_req < MROCE_PATH_ECHO_REQ_PKTS)
		ps->since_echo_req++;
	if (ps->since_echo_req < MROCE_PATH_ECHO_REQ_PKTS ||
	    !mroce_paths_active(ps, id))
		return false;
	last = ps->path[id].last_echo_us;
	if (last && now_us - last < stale)
		return false;
	/*
	 * The stalest active path only: the first stale one would be
	 * every MROCE_PATH_ECHO_REQ_PKTS-th packet, aliasing again.
	 */
	for (i = 0; i < (int)ps->n; i++)
		if (mroce_paths_active(ps, i) &&
		    ps->path[i].last_echo_us < last)
			return false;
	ps->since_echo_req = 0;
	return true;
}

void mroce_paths_echo(struct mroce_paths *ps, int id, u32 rtt_us, bool ce,
		      u64 now_us)
{
	struct mroce_path *p;
	u32 dec, srtt;
	bool qdelay;

	if (!mroce_paths_active(ps, id))
		return;
	p = &ps->path[id];
	p->last_echo_us = now_us;

	if (rtt_us)
		mroce_path_sample(ps, p, rtt_us);
	if (ce)
		p->stats.ce_echoes++;
	srtt = mroce_path_srtt_us(p);
	qdelay = ps->qdelay_target_us && srtt && ps->min_rtt_us &&
		 srtt > ps->min_rtt_us + ps->qdelay_target_us;
	if (qdelay)
		p->stats.qdelay_marks++;

	/* alpha_p: EWMA of marked echoes; rounding down still reaches 0 */
	dec = p->alpha >> MROCE_PATH_ALPHA_GAIN_SHIFT;
	p->alpha -= dec ? dec : min(p->alpha, 1U);
	if (ce || qdelay)
		p->alpha += MROCE_PATH_ALPHA_ONE >> MROCE_PATH_ALPHA_GAIN_SHIFT;

	if (ce || qdelay) {
		p->round_dirty = true;
		p->round_marked = true;
		p->cong_until_us = now_us + (u64)MROCE_PATH_CONG_RTTS *
					    mroce_path_rtt(ps, p);
		if (now_us >= p->mark_hold_us) {
			/* alpha_p > 0 here: each decrease takes >= 1/16 */
			p->w = max_t(u32, mroce_path_scale(p->w, p->alpha),
				     MROCE_PATH_W_MIN);
			p->cwnd = mroce_path_scale(p->cwnd, p->alpha);
			p->mark_hold_us = now_us + mroce_path_rtt(ps, p);
		}
	}

	if (now_us >= p->round_end_us) {
		if (!p->round_dirty)
			p->w = min(p->w + 1, MROCE_PATH_W_ONE);
		if (!p->round_marked)
			p->cwnd = min(p->cwnd + 1, ps->win_pkts);
		mroce_path_start_round(ps, p, now_us);
	}
}

/* Take @p out of service: new generation, probe at once. */
static void mroce_path_die(struct mroce_paths *ps, int id, u64 now_us)
{
	struct mroce_path *p = &ps->path[id];

	ps->active &= ~BIT_ULL(id);
	p->state = MROCE_PATH_DEAD;
	p->gen++;
	p->gen_seq = p->tx_seq;
	p->gen_probes = 0;
	p->dead_gens = 0;
	p->next_probe_us = now_us;
	/* the new source port is a new route: forget the old one */
	p->srtt_x8 = 0;
	p->min_rtt_us = 0;
	p->alpha = 0;
	p->cong_until_us = 0;
	p->consec_lost = 0;
	p->stats.deaths++;
}

bool mroce_paths_lost(struct mroce_paths *ps, int id, bool passed,
		      u32 xmit_us, u64 now_us)
{
	struct mroce_path *p;
	u32 span;
	bool cong;

	if (!mroce_paths_valid(ps, id))
		return false;
	p = &ps->path[id];
	if (p->inflight)
		p->inflight--;
	p->stats.lost++;
	if (!mroce_paths_active(ps, id))
		return false;

	cong = now_us < p->cong_until_us;
	p->round_dirty = true;
	if (cong)
		p->round_marked = true;
	if (now_us >= p->loss_hold_us) {
		p->w = max_t(u32, p->w / 2, MROCE_PATH_W_MIN);
		if (cong)
			p->cwnd = max(p->cwnd / 2, 1U);
		p->loss_hold_us = now_us + mroce_path_rtt(ps, p);
	}
	if (passed) {
		p->consec_lost = 0;
		return false;
	}
	/*
	 * A resend is sent after packets of the run it was lost with: the
	 * span is the distance from the run's first loss, either way.
	 */
	if (!p->consec_lost)
		p->consec_xmit_us = xmit_us;
	if (p->consec_lost < U8_MAX)
		p->consec_lost++;
	span = abs((s32)(xmit_us - p->consec_xmit_us));
	if (p->consec_lost >= MROCE_PATH_DEAD_LOSSES &&
	    span >= mroce_path_rtt(ps, p)) {
		mroce_path_die(ps, id, now_us);
		return true;
	}
	return false;
}

bool mroce_paths_kill(struct mroce_paths *ps, int id, u64 now_us)
{
	if (!mroce_paths_active(ps, id))
		return false;
	mroce_path_die(ps, id, now_us);
	return true;
}

/* max(SRTT, 100 us), doubled per unanswered generation past the first few */
static u64 mroce_path_probe_interval(const struct mroce_path *p, u32 srtt_us)
{
	u64 base = max_t(u32, srtt_us, MROCE_PATH_PROBE_MIN_US);
	u32 shift = p->dead_gens > MROCE_PATH_PROBE_BACKOFF_GENS ?
		    p->dead_gens - MROCE_PATH_PROBE_BACKOFF_GENS : 0;

	if (shift >= 20)
		return MROCE_PATH_PROBE_MAX_US;
	return min_t(u64, base << shift, MROCE_PATH_PROBE_MAX_US);
}

int mroce_paths_probe_due(struct mroce_paths *ps, u64 now_us, u32 srtt_us,
			  u32 *path_seq)
{
	int id;

	for (id = 0; id < (int)ps->n; id++) {
		struct mroce_path *p = &ps->path[id];

		if (p->state != MROCE_PATH_DEAD || now_us < p->next_probe_us)
			continue;
		if (p->gen_probes >= MROCE_PATH_PROBES_PER_GEN) {
			/* this source port does not get through either */
			p->gen++;
			p->gen_seq = p->tx_seq;
			p->gen_probes = 0;
			if (p->dead_gens < U8_MAX)
				p->dead_gens++;
		}
		p->gen_probes++;
		p->stats.probes++;
		p->next_probe_us = now_us + mroce_path_probe_interval(p, srtt_us);
		*path_seq = p->tx_seq++;
		return id;
	}
	return -1;
}

u64 mroce_paths_next_probe_us(const struct mroce_paths *ps)
{
	u64 next = U64_MAX;
	int id;

	for (id = 0; id < (int)ps->n; id++) {
		if (ps->path[id].state == MROCE_PATH_DEAD)
			next = min(next, ps->path[id].next_probe_us);
	}
	return next;
}

bool mroce_paths_probe_acked(struct mroce_paths *ps, int id, u32 path_seq,
			     u64 now_us)
{
	struct mroce_path *p;

	if (!mroce_paths_valid(ps, id) || mroce_paths_active(ps, id))
		return false;
	p = &ps->path[id];
	/* sent in this generation: gen_seq <= path_seq < tx_seq */
	if (path_seq - p->gen_seq >= p->tx_seq - p->gen_seq)
		return false;

	ps->active |= BIT_ULL(id);
	p->state = MROCE_PATH_ACTIVE;
	p->w = MROCE_PATH_W_REVIVE;
	p->cwnd = 1;
	p->credit = 0;
	p->consec_lost = 0;
	p->gen_probes = 0;
	p->next_probe_us = U64_MAX;
	p->loss_hold_us = 0;
	p->mark_hold_us = 0;
	mroce_path_start_round(ps, p, now_us);
	p->stats.revivals++;
	return true;
}

u32 mroce_paths_window(const struct mroce_paths *ps)
{
	u32 sum = 0;
	int id;

	if (!ps->windowed)
		return ps->win_pkts;
	for (id = 0; id < (int)ps->n; id++) {
		if (mroce_paths_active(ps, id))
			sum += ps->path[id].cwnd;
	}
	return min(sum, ps->win_pkts);
}

u32 mroce_paths_srtt_spread_us(const struct mroce_paths *ps)
{
	u32 lo = U32_MAX, hi = 0;
	int id;

	for (id = 0; id < (int)ps->n; id++) {
		u32 srtt = mroce_path_srtt_us(&ps->path[id]);

		if (!mroce_paths_active(ps, id) || !srtt)
			continue;
		lo = min(lo, srtt);
		hi = max(hi, srtt);
	}
	return hi >= lo ? hi - lo : 0;
}
