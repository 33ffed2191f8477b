// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit suite for the responder's message check (mroce_msg.h): messages
 * as a requester sends them pass, at every length around the PMTU and
 * across the PSN wrap, cut at the PMTU or in large segments; each field a
 * later packet repeats, changed alone, fails; so do segments out of
 * place, segments of two sizes in one message, segments below the PMTU
 * or above MROCE_SEG_MAX, and requests inside a message.
 */

#include <kunit/test.h>

#include "mroce_msg.h"
#include "mroce_psn.h"
#include "mroce_wire.h"

#define PMTU	1024U
#define MAXSEG	8

/* The packets a requester sends for a message of @len bytes, @sz each. */
static u32 msg_build_seg(struct mroce_msg_seg *seg, u8 op, u32 len, u32 msn,
			 u32 sz)
{
	u32 n = len ? DIV_ROUND_UP(len, sz) : 1, k;

	for (k = 0; k < n; k++) {
		seg[k] = (struct mroce_msg_seg){
			.opcode = op, .msn = msn, .msg_len = len,
			.offset = k * sz,
			.payload_len = min(sz, len - k * sz),
			.va = 0x10000, .rkey = 0x1234, .rq_seq = 7,
			.imm = 0xabcd,
		};
		if (k == 0)
			seg[k].flags |= MROCE_F_FIRST;
		if (k == n - 1)
			seg[k].flags |= MROCE_F_LAST | MROCE_F_SOLICITED;
	}
	return n;
}

/* ... cut at the PMTU */
static u32 msg_build(struct mroce_msg_seg *seg, u8 op, u32 len, u32 msn)
{
	return msg_build_seg(seg, op, len, msn, PMTU);
}

/* Feed @n packets from @psn; returns how many passed before one failed. */
static u32 msg_feed(struct mroce_msg_track *t, const struct mroce_msg_seg *seg,
		    u32 n, u32 psn)
{
	u32 k;

	for (k = 0; k < n; k++)
		if (!mroce_msg_track_seg(t, &seg[k], mroce_psn_add(psn, k), PMTU))
			break;
	return k;
}

static void mroce_msg_test_valid(struct kunit *test)
{
	static const u8 ops[] = { MROCE_OP_SEND, MROCE_OP_SEND_IMM,
				  MROCE_OP_WRITE, MROCE_OP_WRITE_IMM };
	static const u32 lens[] = { 0, 1, PMTU - 1, PMTU, PMTU + 1,
				    3 * PMTU, 3 * PMTU + 5 };
	const struct mroce_msg_seg rd = {
		.opcode = MROCE_OP_READ_REQ, .flags = MROCE_F_FIRST | MROCE_F_LAST,
		.msg_len = 5 * PMTU,
	};
	struct mroce_msg_seg seg[MAXSEG];
	struct mroce_msg_track t;
	u32 psn = MROCE_PSN_MASK - 2, msn = 0, i, j, n;

	mroce_msg_track_init(&t);
	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		for (j = 0; j < ARRAY_SIZE(lens); j++) {
			n = msg_build(seg, ops[i], lens[j], msn++);
			KUNIT_EXPECT_EQ_MSG(test, msg_feed(&t, seg, n, psn), n,
					    "op %u len %u", ops[i], lens[j]);
			KUNIT_EXPECT_FALSE(test, t.open);
			psn = mroce_psn_add(psn, n);
			/* a READ between messages */
			KUNIT_EXPECT_TRUE(test, mroce_msg_track_seg(&t, &rd, psn,
								    PMTU));
			psn = mroce_psn_add(psn, 1);
		}
	}
}

/* Each field a later packet repeats, changed alone on packet 1 of 3. */
static void mroce_msg_test_fields(struct kunit *test)
{
	struct mroce_msg_seg seg[MAXSEG];
	struct mroce_msg_track t;
	unsigned int f;

	for (f = 0; f < 9; f++) {
		u8 op = f == 6 || f == 7 ? MROCE_OP_SEND_IMM : MROCE_OP_WRITE_IMM;
		bool ok = false;

		msg_build(seg, op, 3 * PMTU, 5);
		switch (f) {
		case 0:
			seg[1].opcode = op == MROCE_OP_SEND_IMM ? MROCE_OP_SEND :
								  MROCE_OP_WRITE;
			break;
		case 1:
			seg[1].msn++;
			break;
		case 2:
			seg[1].msg_len += PMTU;
			break;
		case 3:
			seg[1].va += PMTU;
			break;
		case 4:
			seg[1].rkey ^= 0x100;
			break;
		case 5:
			seg[1].rq_seq++;
			break;
		case 6:
			seg[1].imm++;
			break;
		case 7:
			/* a SEND has no address: one that differs is ignored */
			seg[1].va += PMTU;
			ok = true;
			break;
		case 8:
			seg[1].flags |= MROCE_F_SOLICITED;
			break;
		}
		mroce_msg_track_init(&t);
		KUNIT_EXPECT_EQ_MSG(test, msg_feed(&t, seg, 3, 100), ok ? 3U : 1U,
				    "field %u", f);
	}
}

/* Segments out of place, and requests where a message goes on. */
static void mroce_msg_test_structure(struct kunit *test)
{
	const struct mroce_msg_seg rd = {
		.opcode = MROCE_OP_READ_REQ, .flags = MROCE_F_FIRST | MROCE_F_LAST,
		.msg_len = PMTU,
	};
	const struct mroce_msg_seg ack = { .opcode = MROCE_OP_ACK };
	struct mroce_msg_seg seg[MAXSEG], two[MAXSEG];
	struct mroce_msg_track t;

	/* a middle packet with no first before it */
	msg_build(seg, MROCE_OP_WRITE, 3 * PMTU, 1);
	mroce_msg_track_init(&t);
	KUNIT_EXPECT_FALSE(test, mroce_msg_track_seg(&t, &seg[1], 11, PMTU));

	/* a new message before the last one ended */
	msg_build(two, MROCE_OP_WRITE, PMTU, 2);
	mroce_msg_track_init(&t);
	KUNIT_EXPECT_TRUE(test, mroce_msg_track_seg(&t, &seg[0], 10, PMTU));
	KUNIT_EXPECT_FALSE(test, mroce_msg_track_seg(&t, &two[0], 11, PMTU));

	/* a READ inside a message */
	mroce_msg_track_init(&t);
	KUNIT_EXPECT_TRUE(test, mroce_msg_track_seg(&t, &seg[0], 10, PMTU));
	KUNIT_EXPECT_FALSE(test, mroce_msg_track_seg(&t, &rd, 11, PMTU));

	/* the segment of another PSN: offset two PMTUs at one PSN on */
	mroce_msg_track_init(&t);
	KUNIT_EXPECT_TRUE(test, mroce_msg_track_seg(&t, &seg[0], 10, PMTU));
	KUNIT_EXPECT_FALSE(test, mroce_msg_track_seg(&t, &seg[2], 11, PMTU));

	/* a short packet that is not the last */
	msg_build(seg, MROCE_OP_WRITE, 3 * PMTU, 1);
	seg[1].payload_len = PMTU / 2;
	mroce_msg_track_init(&t);
	KUNIT_EXPECT_EQ(test, msg_feed(&t, seg, 3, 10), 1U);

	/* a not-last packet that reaches the message's end */
	msg_build(seg, MROCE_OP_WRITE, 2 * PMTU, 1);
	seg[1].flags &= ~(MROCE_F_LAST | MROCE_F_SOLICITED);
	mroce_msg_track_init(&t);
	KUNIT_EXPECT_EQ(test, msg_feed(&t, seg, 2, 10), 1U);

	/* a last packet that ends short of the message's length */
	msg_build(seg, MROCE_OP_SEND, 2 * PMTU, 1);
	seg[1].payload_len = PMTU - 1;
	mroce_msg_track_init(&t);
	KUNIT_EXPECT_EQ(test, msg_feed(&t, seg, 2, 10), 1U);

	/* a zero-length message is one packet, FIRST and LAST */
	msg_build(seg, MROCE_OP_SEND, 0, 1);
	seg[0].flags &= ~MROCE_F_LAST;
	mroce_msg_track_init(&t);
	KUNIT_EXPECT_FALSE(test, mroce_msg_track_seg(&t, &seg[0], 10, PMTU));

	/* not a request at all */
	mroce_msg_track_init(&t);
	KUNIT_EXPECT_FALSE(test, mroce_msg_track_seg(&t, &ack, 10, PMTU));
}

/*
 * Large segments: any size from the PMTU to MROCE_SEG_MAX, the same for
 * every packet of a message; the first packet says which.
 */
static void mroce_msg_test_large(struct kunit *test)
{
	static const u32 sizes[] = { PMTU, PMTU + 1, 1388, 2048,
				     MROCE_SEG_MAX - 1, MROCE_SEG_MAX };
	struct mroce_msg_seg seg[MAXSEG];
	struct mroce_msg_track t;
	u32 psn = MROCE_PSN_MASK - 1, msn = 0, i, n, len;

	mroce_msg_track_init(&t);
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		/* three full segments and a short last one */
		len = 3 * sizes[i] + 7;
		n = msg_build_seg(seg, MROCE_OP_WRITE, len, msn++, sizes[i]);
		KUNIT_EXPECT_EQ_MSG(test, msg_feed(&t, seg, n, psn), n,
				    "segments of %u", sizes[i]);
		psn = mroce_psn_add(psn, n);
		/* a one-packet message of up to MROCE_SEG_MAX bytes */
		n = msg_build_seg(seg, MROCE_OP_SEND, sizes[i], msn++,
				  sizes[i]);
		KUNIT_EXPECT_EQ(test, msg_feed(&t, seg, n, psn), 1U);
		psn = mroce_psn_add(psn, n);
	}

	/* a first segment below the PMTU, or above MROCE_SEG_MAX */
	msg_build_seg(seg, MROCE_OP_WRITE, 3 * PMTU, 1, PMTU - 1);
	mroce_msg_track_init(&t);
	KUNIT_EXPECT_EQ(test, msg_feed(&t, seg, 3, 10), 0U);
	msg_build_seg(seg, MROCE_OP_WRITE, 3 * (MROCE_SEG_MAX + 1), 1,
		      MROCE_SEG_MAX + 1);
	mroce_msg_track_init(&t);
	KUNIT_EXPECT_EQ(test, msg_feed(&t, seg, 3, 10), 0U);
	/* ... and one packet larger than MROCE_SEG_MAX */
	msg_build_seg(seg, MROCE_OP_SEND, MROCE_SEG_MAX + 1, 1,
		      MROCE_SEG_MAX + 1);
	mroce_msg_track_init(&t);
	KUNIT_EXPECT_EQ(test, msg_feed(&t, seg, 1, 10), 0U);

	/* a first packet of 1388, then PMTU segments at PMTU offsets */
	msg_build_seg(seg, MROCE_OP_WRITE, 4 * PMTU, 1, PMTU);
	seg[0].payload_len = 1388;
	mroce_msg_track_init(&t);
	KUNIT_EXPECT_EQ(test, msg_feed(&t, seg, 4, 10), 1U);

	/* 1388-byte segments, but the second at the PMTU's offset */
	msg_build_seg(seg, MROCE_OP_WRITE, 3 * 1388, 1, 1388);
	seg[1].offset = PMTU;
	mroce_msg_track_init(&t);
	KUNIT_EXPECT_EQ(test, msg_feed(&t, seg, 3, 10), 1U);

	/* a last packet longer than the segments before it */
	msg_build_seg(seg, MROCE_OP_WRITE, 2 * 1388 + 64, 1, 1388);
	seg[1].payload_len += seg[2].payload_len;
	seg[1].flags = seg[2].flags;
	mroce_msg_track_init(&t);
	KUNIT_EXPECT_EQ(test, msg_feed(&t, seg, 2, 10), 1U);
	/* ... and at the PMTU */
	msg_build(seg, MROCE_OP_WRITE, 2 * PMTU + 64, 1);
	seg[1].payload_len += seg[2].payload_len;
	seg[1].flags = seg[2].flags;
	mroce_msg_track_init(&t);
	KUNIT_EXPECT_EQ(test, msg_feed(&t, seg, 2, 10), 1U);

	/* 1388-byte segments, the second one a byte shorter */
	msg_build_seg(seg, MROCE_OP_WRITE, 3 * 1388, 1, 1388);
	seg[1].payload_len--;
	mroce_msg_track_init(&t);
	KUNIT_EXPECT_EQ(test, msg_feed(&t, seg, 3, 10), 1U);
}

static struct kunit_case mroce_msg_cases[] = {
	KUNIT_CASE(mroce_msg_test_valid),
	KUNIT_CASE(mroce_msg_test_large),
	KUNIT_CASE(mroce_msg_test_fields),
	KUNIT_CASE(mroce_msg_test_structure),
	{}
};

static struct kunit_suite mroce_msg_suite = {
	.name = "mroce_msg",
	.test_cases = mroce_msg_cases,
};

kunit_test_suite(mroce_msg_suite);
