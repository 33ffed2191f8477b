/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mroce path table: the N paths (UDP source ports) of one connection and
 * what the sender knows about each of them (spec "Multipath").
 *
 * - Spraying: new packets go to the active paths with free path window,
 *   chosen by a smooth weighted round-robin over the path weights w_p.
 * - Penalty: a declared loss halves w_p, an ECN echo or a queueing
 *   delay above target_qdelay scales w_p and cwnd_p by (1 - alpha_p / 2);
 *   a loss halves cwnd_p too if the path was marked within the last
 *   MROCE_PATH_CONG_RTTS round trips (congestion), not otherwise (a lossy
 *   link: the window stays, the weight moves traffic off the path); each
 *   kind of decrease at most once per round trip of the path.  A round
 *   trip without loss or mark gives back 1/16 of weight, one without mark
 *   or congestion loss one packet of window.
 * - Failure: an RTO, or 4 consecutive transmissions lost without a
 *   delivery between or after them on the path, kills
 *   a path: its entropy generation moves on (a new source port, see
 *   mroce_wire_sport()) and it is probed until an ACK answers a probe.
 * - Path sequence numbers: each transmission's number on its path
 *   (mroce_paths_sent()), which loss rule 1 in mroce_sb.c compares.
 *
 * Pure code: no ib_core headers, no locking (the caller holds the lock
 * that serialises its sender, the QP's sq lock), no clock: times are
 * passed in as microseconds on any monotonic u64 clock.  KUnit suite
 * mroce_path.
 *
 * Units: w_p counts 1/16 (MROCE_PATH_W_ONE is a weight of 1), cwnd_p and
 * in-flight count packets, alpha_p is a fraction of MROCE_PATH_ALPHA_ONE.
 * Path ids are ints 0 .. n - 1; functions given another id do nothing
 * (and return false / 0).
 */
#ifndef MROCE_PATH_H
#define MROCE_PATH_H

#include <linux/bitops.h>
#include <linux/bits.h>
#include <linux/types.h>

#define MROCE_PATHS_MAX			64	/* MROCE_WIRE_MAX_PATHS */
#define MROCE_PATHS_DEF			16	/* MROCE_WIRE_DEF_PATHS */

#define MROCE_PATH_W_ONE		16	/* weight 1, the start value */
#define MROCE_PATH_W_MIN		1	/* 1/16 */
#define MROCE_PATH_W_REVIVE		4	/* 1/4 after a revival */

#define MROCE_PATH_ALPHA_SHIFT		16
#define MROCE_PATH_ALPHA_ONE		BIT(MROCE_PATH_ALPHA_SHIFT)
#define MROCE_PATH_ALPHA_GAIN_SHIFT	4	/* EWMA gain 1/16 */
#define MROCE_PATH_SRTT_SHIFT		3	/* SRTT_p gain 1/8 */

#define MROCE_PATH_DEAD_LOSSES		4	/* consecutive, no delivery, */
						/* sent over >= SRTT_p */
#define MROCE_PATH_CONG_RTTS		2	/* a loss this close to a mark */
#define MROCE_PATH_PROBE_MIN_US		100	/* probe every max(SRTT, this) */
#define MROCE_PATH_PROBES_PER_GEN	3	/* unanswered, then gen++ */
/*
 * A peer that answers nothing must not draw probes at the RTT forever:
 * after this many unanswered generations the interval doubles with each
 * further one, up to MROCE_PATH_PROBE_MAX_US.
 */
#define MROCE_PATH_PROBE_BACKOFF_GENS	4
#define MROCE_PATH_PROBE_MAX_US		1000000	/* 1 s */
#define MROCE_PATH_ECHO_REQ_PKTS	32	/* new packets per echo request */

enum mroce_path_state {
	MROCE_PATH_ACTIVE,
	MROCE_PATH_DEAD,	/* not used for data, probed */
};

/* Per-path counters (spec "Per-path statistics"); they only grow. */
struct mroce_path_stats {
	u64 tx_pkts;		/* transmissions, retransmissions included */
	u64 retx_pkts;		/* of which retransmissions */
	u64 delivered;		/* mroce_paths_delivered() */
	u64 lost;		/* mroce_paths_lost() */
	u64 ce_echoes;		/* ACKs echoing the path with ECHO_CE */
	u64 qdelay_marks;	/* echoes with SRTT_p - min_rtt > target */
	u64 rtt_samples;
	u64 probes;		/* PROBEs sent */
	u32 deaths;
	u32 revivals;
};

/*
 * One path.  The integrator reads these fields for statistics, for
 * path[0 .. n - 1]; only the functions below write them.
 */
struct mroce_path {
	u8 state;		/* enum mroce_path_state */
	u8 gen;			/* entropy generation, source port */
	u8 w;			/* weight, 1/16 units, 1 .. 16 */
	u8 consec_lost;		/* losses since the last delivery (saturates) */
	u8 gen_probes;		/* probes sent in this generation */
	u8 dead_gens;		/* generations probed since it died */
	bool round_dirty;	/* a loss or mark in the current round */
	bool round_marked;	/* a mark or congestion loss in the round */
	s32 credit;		/* smooth weighted round-robin */
	u32 cwnd;		/* path window, packets, >= 1 */
	u32 inflight;		/* packets sent and not delivered or lost */
	u32 tx_seq;		/* path sequence number of the next transmission */
	u32 gen_seq;		/* first path seq of this generation */
	u32 srtt_x8;		/* SRTT_p x 8, us; 0: no sample in this gen */
	u32 min_rtt_us;		/* 0: no sample in this generation */
	u32 alpha;		/* EWMA of marked echoes, of ALPHA_ONE */
	u32 consec_xmit_us;	/* sent time of the run's first loss */
	u64 round_end_us;	/* current round trip ends */
	u64 loss_hold_us;	/* no loss decrease before */
	u64 mark_hold_us;	/* no mark decrease before */
	u64 cong_until_us;	/* a loss before this is congestion */
	u64 next_probe_us;	/* dead: next probe due */
	u64 last_delivery_us;	/* 0: never */
	u64 last_echo_us;	/* last ACK echoing the path, 0: never */
	struct mroce_path_stats stats;
};

/* The path table of one connection (one direction). */
struct mroce_paths {
	u32 n;			/* paths 0 .. n - 1, 1 .. MROCE_PATHS_MAX */
	u32 win_pkts;		/* connection window W, cap of every cwnd_p */
	bool windowed;		/* path windows limit spraying */
	u64 active;		/* bit id: path id is active */
	u32 min_rtt_us;		/* over all paths; 0: no sample */
	u32 qdelay_target_us;	/* SRTT_p - min_rtt above: a mark; 0: off */
	u32 since_echo_req;	/* new packets since the last echo request */
	struct mroce_path path[];
};

/* Bytes to allocate for a table of @n paths. */
static inline size_t mroce_paths_size(u32 n)
{
	return sizeof(struct mroce_paths) + (size_t)n * sizeof(struct mroce_path);
}

static inline bool mroce_paths_valid(const struct mroce_paths *ps, int id)
{
	return id >= 0 && id < (int)ps->n;
}

static inline bool mroce_paths_active(const struct mroce_paths *ps, int id)
{
	return mroce_paths_valid(ps, id) && (ps->active & BIT_ULL(id));
}

static inline u32 mroce_paths_nr_active(const struct mroce_paths *ps)
{
	return hweight64(ps->active);
}

/* SRTT_p in microseconds, 0 before the first sample of this generation. */
static inline u32 mroce_path_srtt_us(const struct mroce_path *p)
{
	return p->srtt_x8 >> MROCE_PATH_SRTT_SHIFT;
}

/* "active" or "dead", for statistics. */
static inline const char *mroce_path_state_name(const struct mroce_path *p)
{
	return p->state == MROCE_PATH_ACTIVE ? "active" : "dead";
}

/*
 * May a new packet go on @id now?  Active, and below its path window if
 * windows apply.  Retransmissions do not ask (mroce_paths_pick_retx()).
 */
static inline bool mroce_paths_has_window(const struct mroce_paths *ps, int id)
{
	const struct mroce_path *p;

	if (!mroce_paths_active(ps, id))
		return false;
	p = &ps->path[id];
	return !ps->windowed || p->inflight < p->cwnd;
}

/*
 * Set up @ps (mroce_paths_size(@n) bytes) for @n paths, all active with
 * weight 1 and cwnd_p = ceil(@win_pkts / @n), entropy generation 0,
 * qdelay_target_us = MROCE_CC_QDELAY_TARGET_US (the caller may change it
 * afterwards).
 * @windowed false: path windows never hold packets back (a congestion
 * control without per-path windows, such as "none").  -EINVAL if @n is
 * not 1 .. MROCE_PATHS_MAX.
 */
int mroce_paths_init(struct mroce_paths *ps, u32 n, u32 win_pkts,
		     bool windowed, u64 now_us);

/*
 * Path for the next new packet: smooth weighted round-robin over the
 * active paths with window; -1 if there is none (wait for an ACK or a
 * revival).  Updates the round-robin state: call it only when the packet
 * will be sent (connection window and pacer already agreed).  O(n).
 */
int mroce_paths_pick(struct mroce_paths *ps);

/*
 * Pick @id again if it may take a new packet now (as mroce_paths_pick()
 * would have: it charges @id's credit), else -1.  For a requester whose
 * provider sends a run of packets on one path (MROCE_XPORT_CAP_SEG_PATH):
 * the weights still decide each path's share, in bursts.
 */
int mroce_paths_pick_again(struct mroce_paths *ps, int id);

/*
 * Path for the retransmission of a packet whose lost transmission went
 * on @lost_on: @lost_on itself if active, whether or not its window is
 * full (the retransmission takes the slot the loss released); else the
 * active path with the most free window (cwnd_p - in flight, ties to the
 * lowest id); else, every path being dead, mroce_paths_fallback().
 * Never -1.
 */
int mroce_paths_pick_retx(struct mroce_paths *ps, int lost_on);

/*
 * Every path is dead: the path with the most recent delivery (ties and
 * "never" to the lowest id), on which the oldest packet is retransmitted
 * under RTO backoff.  Its transmissions count as probes: an ACK echoing
 * one revives the path (mroce_paths_probe_acked()).
 */
int mroce_paths_fallback(const struct mroce_paths *ps);

/*
 * A request packet (@retx: a retransmission) is being sent on @id:
 * counts it in flight and returns its path sequence number.
 */
u32 mroce_paths_sent(struct mroce_paths *ps, int id, bool retx);

/*
 * Should the new packet about to go on @id carry ACK_REQ, so that the
 * path gets an RTT sample and its round trips end?  The receiver's ACK
 * cadence can alias with the spraying order: every 8th packet over 16
 * equally weighted paths is always on the same 2 paths, and the others
 * would never be echoed.  Yes if the path's last echo is older than
 * max(@srtt_us, 100 us), for at most one packet in
 * MROCE_PATH_ECHO_REQ_PKTS.  Call once per new packet that may carry
 * ACK_REQ, with the connection SRTT (0: none yet).
 */
bool mroce_paths_want_echo(struct mroce_paths *ps, int id, u64 now_us,
			   u32 srtt_us);

/*
 * A transmission on path @id was delivered (cumulative ACK or SACK).
 * @in_flight: it had not been declared lost since it was sent, so it
 * leaves the path's in-flight count now; false after mroce_paths_lost()
 * took it out already.  Either way the delivery clears the consecutive
 * losses and stamps the path's last delivery.  In-flight never goes
 * below zero.  (Loss rule 1 compares path sequence numbers in the
 * scoreboard, mroce_sb.c; the path table only hands them out.)
 */
void mroce_paths_delivered(struct mroce_paths *ps, int id, bool in_flight,
			   u64 now_us);

/*
 * An ACK echoed path @id: @rtt_us is its RTT sample (0: none), @ce its
 * ECHO_CE.  Updates SRTT_p, min_rtt_p, the connection min_rtt and
 * alpha_p; a mark (ECHO_CE, or SRTT_p - min_rtt > qdelay_target_us) scales
 * w_p and cwnd_p by (1 - alpha_p / 2), at most once per SRTT_p; a round
 * trip (SRTT_p) without loss or mark adds 1/16 to w_p (up to 1), one
 * without mark or congestion loss one packet to cwnd_p (up to the
 * connection window).  Echoes of a dead path
 * are ignored: call mroce_paths_probe_acked() first.
 */
void mroce_paths_echo(struct mroce_paths *ps, int id, u32 rtt_us, bool ce,
		      u64 now_us);

/*
 * A transmission on @id was declared lost: it leaves the in-flight
 * count, and w_p halves (at least 1/16), at most once per SRTT_p.
 * @passed: a transmission sent after it on @id was delivered
 * (mroce_sb_passed()), so the path carries packets: the loss does not
 * count towards its death, and clears the consecutive losses as a
 * delivery does (losses are declared in batches, after the deliveries
 * of the ACK that revealed them: without it, 4 random losses declared
 * by one ACK would kill a path that delivered between them).  If
 * the path was marked (ECHO_CE or queueing delay, mroce_paths_echo())
 * within the last MROCE_PATH_CONG_RTTS SRTT_p the loss is congestion and
 * cwnd_p halves too (at least 1); else it is taken as random (a lossy
 * link), which selective retransmission repairs: halving the window for
 * it would cap the path at a few packets per round trip.  @xmit_us: when
 * the lost transmission was sent (the scoreboard's 32-bit clock).
 * Returns true if the path died of it (as mroce_paths_kill()): at least
 * 4 consecutive losses without a delivery, sent over at least SRTT_p.
 * A burst sent at once and lost at once is one queue's overflow (or one
 * segmentation buffer that a qdisc dropped whole), not a dead route: a
 * route that drops everything still does a round trip later.
 */
bool mroce_paths_lost(struct mroce_paths *ps, int id, bool passed,
		      u32 xmit_us, u64 now_us);

/*
 * The RTO expired for a packet last sent on @id: the path dies, its
 * generation moves on (mod 256: the caller derives the new source port,
 * mroce_wire_sport(base, id, gen)) and a probe is due at once.  Returns
 * true if the path was active.
 */
bool mroce_paths_kill(struct mroce_paths *ps, int id, u64 now_us);

/*
 * A dead path whose probe is due at @now_us, or -1.  The probe counts as
 * sent: it takes the path sequence number stored in @path_seq, and the
 * next one is due max(@srtt_us, 100 us) later.  Before the 4th probe of
 * a generation (3 unanswered) the generation moves on again: read the
 * path's gen for the source port after this call.  Call it until -1.
 */
int mroce_paths_probe_due(struct mroce_paths *ps, u64 now_us, u32 srtt_us,
			  u32 *path_seq);

/* When the next probe is due, U64_MAX if no path is dead. */
u64 mroce_paths_next_probe_us(const struct mroce_paths *ps);

/*
 * An ACK echoed (@id, @path_seq).  If @id is dead and @path_seq belongs
 * to its current generation (a probe, or a fallback retransmission) the
 * path is active again with w_p = 1/4 and cwnd_p = 1: returns true.
 * Echoes of older generations are stale and ignored.
 */
bool mroce_paths_probe_acked(struct mroce_paths *ps, int id, u32 path_seq,
			     u64 now_us);

/*
 * Connection window the path windows allow: the sum of cwnd_p over the
 * active paths, at most win_pkts (win_pkts if !windowed).
 */
u32 mroce_paths_window(const struct mroce_paths *ps);

/*
 * max SRTT_p - min SRTT_p over the active paths with a sample: the
 * reordering spread for RACK's reo_wnd (loss detection rule 2).
 */
u32 mroce_paths_srtt_spread_us(const struct mroce_paths *ps);

#endif /* MROCE_PATH_H */
