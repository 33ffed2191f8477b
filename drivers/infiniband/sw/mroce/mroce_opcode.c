// SPDX-License-Identifier: GPL-2.0-only
/*
 * mroce work request opcodes: what each send opcode a consumer may post
 * does, in one table that the requester, the completer and the kernel
 * post_send test by mask rather than by opcode.  The packet opcodes have
 * their own table (mroce_wire_ops[], mroce_wire.c).
 */

#include "mroce.h"

#define WR_SEND_OPS	(MROCE_WR_RC | MROCE_WR_UD | MROCE_WR_RWQE | \
			 MROCE_WR_INLINE)

static const struct mroce_wr_opinfo mroce_wr_ops[] = {
	[IB_UVERBS_WR_RDMA_WRITE] = {
		.name = "RDMA_WRITE", .wire_op = MROCE_OP_WRITE,
		.wc_op = IB_WC_RDMA_WRITE,
		.mask = MROCE_WR_RC | MROCE_WR_RDMA | MROCE_WR_INLINE,
	},
	[IB_UVERBS_WR_RDMA_WRITE_WITH_IMM] = {
		.name = "RDMA_WRITE_WITH_IMM", .wire_op = MROCE_OP_WRITE_IMM,
		.wc_op = IB_WC_RDMA_WRITE,
		.mask = MROCE_WR_RC | MROCE_WR_RDMA | MROCE_WR_RWQE |
			MROCE_WR_IMM | MROCE_WR_INLINE,
	},
	[IB_UVERBS_WR_SEND] = {
		.name = "SEND", .wire_op = MROCE_OP_SEND,
		.ud_op = MROCE_OP_UD_SEND, .wc_op = IB_WC_SEND,
		.mask = WR_SEND_OPS,
	},
	[IB_UVERBS_WR_SEND_WITH_IMM] = {
		.name = "SEND_WITH_IMM", .wire_op = MROCE_OP_SEND_IMM,
		.ud_op = MROCE_OP_UD_SEND_IMM, .wc_op = IB_WC_SEND,
		.mask = WR_SEND_OPS | MROCE_WR_IMM,
	},
	[IB_UVERBS_WR_RDMA_READ] = {
		.name = "RDMA_READ", .wire_op = MROCE_OP_READ_REQ,
		.wc_op = IB_WC_RDMA_READ,
		.mask = MROCE_WR_RC | MROCE_WR_RDMA | MROCE_WR_READ,
	},
	[IB_UVERBS_WR_ATOMIC_CMP_AND_SWP] = {
		.name = "ATOMIC_CMP_AND_SWP", .wire_op = MROCE_OP_ATOMIC_CMP_SWP,
		.wc_op = IB_WC_COMP_SWAP,
		.mask = MROCE_WR_RC | MROCE_WR_ATOMIC,
	},
	[IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD] = {
		.name = "ATOMIC_FETCH_AND_ADD",
		.wire_op = MROCE_OP_ATOMIC_FETCH_ADD,
		.wc_op = IB_WC_FETCH_ADD,
		.mask = MROCE_WR_RC | MROCE_WR_ATOMIC,
	},
	/*
	 * imm_data: the key to invalidate: a fast MR's lkey or rkey (kernel
	 * QPs), a type 2 memory window's rkey (user QPs)
	 */
	[IB_UVERBS_WR_LOCAL_INV] = {
		.name = "LOCAL_INV", .wc_op = IB_WC_LOCAL_INV,
		.mask = MROCE_WR_RC | MROCE_WR_LOCAL,
	},
	/* wr.bind: ibv_bind_mw() (type 1) or post_send (type 2) */
	[IB_UVERBS_WR_BIND_MW] = {
		.name = "BIND_MW", .wc_op = IB_WC_BIND_MW,
		.mask = MROCE_WR_RC | MROCE_WR_LOCAL | MROCE_WR_USER,
	},
	/* imm_data carries the peer's rkey to invalidate, host order */
	[IB_UVERBS_WR_SEND_WITH_INV] = {
		.name = "SEND_WITH_INV", .wire_op = MROCE_OP_SEND_INV,
		.wc_op = IB_WC_SEND,
		.mask = MROCE_WR_RC | MROCE_WR_RWQE | MROCE_WR_INLINE |
			MROCE_WR_INV,
	},
	[IB_WR_REG_MR] = {
		.name = "REG_MR", .wc_op = IB_WC_REG_MR,
		.mask = MROCE_WR_RC | MROCE_WR_LOCAL | MROCE_WR_KERNEL,
	},
};

/* What opcode @op does; NULL if mroce does not support it. */
const struct mroce_wr_opinfo *mroce_wr_opinfo(unsigned int op)
{
	if (op >= ARRAY_SIZE(mroce_wr_ops) || !mroce_wr_ops[op].name)
		return NULL;
	return &mroce_wr_ops[op];
}

/* The completion opcode of a send WQE, whatever its opcode field holds. */
enum ib_wc_opcode mroce_wr_wc_opcode(unsigned int op)
{
	const struct mroce_wr_opinfo *info = mroce_wr_opinfo(op);

	return info ? info->wc_op : IB_WC_SEND;
}
