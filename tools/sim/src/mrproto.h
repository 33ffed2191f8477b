/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The driver's pure protocol headers, for the C++ model: C linkage, and
 * the shim's function-like macros that collide with the C++ library
 * (min, max, swap, clamp) undefined again afterwards.  Include it after
 * the ns-3 and standard headers.
 */
#ifndef MRSIM_MRPROTO_H
#define MRSIM_MRPROTO_H

extern "C" {
#include <linux/types.h>

#include "mroce_cc.h"
#include "mroce_delack.h"
#include "mroce_pace.h"
#include "mroce_path.h"
#include "mroce_psn.h"
#include "mroce_ratehint.h"
#include "mroce_rto.h"
#include "mroce_sb.h"
#include "mroce_wire.h"
}

#undef min
#undef max
#undef min3
#undef max3
#undef swap
#undef clamp
#undef min_t
#undef max_t
#undef clamp_t
#undef clamp_val

#endif
