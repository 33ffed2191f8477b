/* SPDX-License-Identifier: GPL-2.0-only */
/* mroce-sim shim: the C library's string functions */
#ifndef SIM_LINUX_STRING_H
#define SIM_LINUX_STRING_H

#include <string.h>
#endif
