/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mroce send scoreboard and loss detector (spec: "Sender state and
 * windows", "Loss detection", "Retransmission").
 *
 * For each request PSN in the window [una, nxt) the scoreboard remembers
 * its latest transmission: path, path sequence number and send time, and
 * whether it was selectively acknowledged, declared lost or resent.  ACKs
 * feed it the cumulative point and the 256-bit SACK; the loss detector
 * then declares lost exactly the transmissions that
 *
 *  1. have a gap behind them on their own path: a later transmission on
 *     the same path (path sequence number at least K higher) was
 *     delivered, and the packet has been out for reo_wnd.  A path keeps
 *     its packets in order, so reordering between paths never triggers
 *     this rule, and reo_wnd is short unless reordering inside a path
 *     has been seen;
 *  2. (RACK) were overtaken in time: a transmission sent later, on any
 *     path, was delivered and the packet has been out for more than
 *     SRTT + reo_wnd (mroce_sb_reo_wnd()).  This finds the last packets of a path, which
 *     nothing on their own path follows.
 *
 * K and reo_wnd adapt: each spurious retransmission (the peer reports
 * the copy it got as a duplicate) doubles K and widens reo_wnd; they
 * decay back while no reordering is seen.  Tail losses (nothing delivered
 * after them) are left to the caller's tail probe and RTO
 * (mroce_recovery.c), which choose what to resend from the send queue,
 * where READ and ATOMIC answers are known too.
 *
 * Pure code: no ib_core, no locks, no clocks (times are u32 microseconds
 * passed in, compared modulo 2^32).  KUnit suite mroce_sb.
 */
#ifndef MROCE_SB_H
#define MROCE_SB_H

#include <linux/bits.h>
#include <linux/types.h>

#include "mroce_psn.h"
#include "mroce_wire.h"

#define MROCE_SB_PATHS		MROCE_WIRE_MAX_PATHS
/* the whole window must order correctly under the half-space rule */
static_assert(MROCE_WINDOW <= MROCE_PSN_WINDOW_MAX);
#define MROCE_SB_K_INIT		3	/* spec: path_reorder_pkts */
#define MROCE_SB_K_MAX		64
#define MROCE_SB_REO_MULT_MAX	16	/* reo_wnd <= 16 x min_rtt / 4 */
#define MROCE_SB_DECAY_PKTS	4096	/* deliveries per step back */

/* mroce_sb_slot.flags */
#define MROCE_SB_SACKED		BIT(0)	/* delivered, above the cumulative point */
#define MROCE_SB_LOST		BIT(1)	/* declared lost, not resent yet */
#define MROCE_SB_RETX		BIT(2)	/* resent at least once */

/* The latest transmission of one PSN. */
struct mroce_sb_slot {
	u32 path_seq;
	u32 xmit_us;
	u8 path;
	u8 flags;
	u8 nretx;		/* saturating */
};

enum mroce_sb_event {
	MROCE_SB_DELIVERED,	/* cumulatively or selectively acknowledged */
	MROCE_SB_LOST_PATH_SEQ,	/* rule 1 */
	MROCE_SB_LOST_RACK,	/* rule 2 */
};

/* Called for each PSN that changes state; @s is its slot. */
typedef void (*mroce_sb_fn)(void *ctx, u32 psn, const struct mroce_sb_slot *s,
			    enum mroce_sb_event ev);

struct mroce_sb {
	u32 una;		/* oldest PSN not cumulatively acknowledged */
	u32 nxt;		/* next new PSN */
	u32 rack_xmit_us;	/* send time of the latest-sent delivery */
	bool rack_valid;
	u32 k;			/* rule 1 threshold */
	u32 reo_mult;		/* rule 2 window, in min_rtt / 4 */
	u32 calm_pkts;		/* deliveries since reordering was seen */
	u64 dlv_paths;		/* paths with a delivery: dlv_seq valid */
	u32 dlv_seq[MROCE_SB_PATHS];	/* highest delivered path seq */
	struct mroce_sb_slot s[MROCE_WINDOW];
};

/* What the loss detector needs to know about the connection. */
struct mroce_sb_clock {
	u32 now_us;
	u32 srtt_us;		/* 0: no sample yet, rule 2 waits */
	u32 rttvar_us;
	u32 min_rtt_us;
	u32 spread_us;		/* max - min SRTT over active paths */
};

void mroce_sb_init(struct mroce_sb *sb, u32 psn);

static inline struct mroce_sb_slot *mroce_sb_slot(struct mroce_sb *sb, u32 psn)
{
	return &sb->s[psn % MROCE_WINDOW];
}

/* Packets sent and neither acknowledged nor selectively acknowledged. */
u32 mroce_sb_outstanding(const struct mroce_sb *sb);

/*
 * Record a transmission of @psn: a new PSN if @psn == nxt (the window must
 * have room), else a retransmission of a PSN in [una, nxt).  Returns
 * false, recording nothing, for any other PSN.
 */
bool mroce_sb_sent(struct mroce_sb *sb, u32 psn, u8 path, u32 path_seq,
		   u32 now_us);

/*
 * Apply an acknowledgment: everything before @cum arrived, and PSN
 * cum + i for each bit i (1..255) set in @sack (may be NULL).  @fn sees
 * every newly delivered PSN (MROCE_SB_DELIVERED).  Returns the number of
 * newly delivered PSNs, or -1 if @cum is beyond nxt (a bogus ACK, nothing
 * applied).  A stale ACK (cum before una) still contributes its SACK bits.
 */
int mroce_sb_ack(struct mroce_sb *sb, u32 cum, const u64 *sack,
		 mroce_sb_fn fn, void *ctx);

/*
 * Run rules 1 and 2 over [una, nxt); @fn sees every newly lost PSN.
 * Returns the number declared lost.  *@wait_us (if not NULL) gets the
 * time until rule 2 could declare the next packet lost (U32_MAX if no
 * packet waits on it): the caller arms its reorder timer with it.
 */
u32 mroce_sb_detect(struct mroce_sb *sb, const struct mroce_sb_clock *c,
		    mroce_sb_fn fn, void *ctx, u32 *wait_us);

/*
 * An ACK echoed the transmission (@path, @path_seq) sent at @xmit_us: it
 * was delivered, exactly that copy.  Call before mroce_sb_ack().
 */
void mroce_sb_echo(struct mroce_sb *sb, u8 path, u32 path_seq, u32 xmit_us);

/*
 * Was a transmission sent on the path of @s after @s delivered (its path
 * sequence number is below the highest delivered on that path)?  Then
 * the path carries packets: @s's loss is not a sign of a dead path.
 * True for every rule 1 loss.
 */
static inline bool mroce_sb_passed(const struct mroce_sb *sb,
				   const struct mroce_sb_slot *s)
{
	return s->path < MROCE_SB_PATHS &&
	       (sb->dlv_paths & BIT_ULL(s->path)) &&
	       (s32)(sb->dlv_seq[s->path] - s->path_seq) > 0;
}

/* The oldest PSN declared lost and not resent yet, from @from on. */
bool mroce_sb_next_lost(const struct mroce_sb *sb, u32 from, u32 *psn);

/* Reordering was seen: be more patient before declaring loss. */
void mroce_sb_spurious(struct mroce_sb *sb);

/*
 * An ACK says the peer received @psn as a duplicate (ECHO_DUP).  If we
 * had resent @psn and know it was delivered, the resend was spurious:
 * adapts like mroce_sb_spurious() and returns true, once per resend.
 */
bool mroce_sb_dup_echo(struct mroce_sb *sb, u32 psn);

/*
 * reo_wnd for @c: max(reo_mult x unit, path spread, 4 RTTVAR), at most
 * SRTT + 4 RTTVAR, where unit = max(min_rtt / 4, RTTVAR / 2): a jittery
 * or bimodal RTT (reordering inside a path) widens the window quickly.
 */
u32 mroce_sb_reo_wnd(const struct mroce_sb *sb, const struct mroce_sb_clock *c);

#endif /* MROCE_SB_H */
