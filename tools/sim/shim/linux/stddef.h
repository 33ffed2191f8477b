/* SPDX-License-Identifier: GPL-2.0-only */
/* mroce-sim shim: NULL, offsetof, true/false */
#ifndef SIM_LINUX_STDDEF_H
#define SIM_LINUX_STDDEF_H

#include <stdbool.h>
#include <stddef.h>
#endif
