/* SPDX-License-Identifier: GPL-2.0-only */
/* mroce-sim shim: the simulator is single-threaded: mutexes do nothing */
#ifndef SIM_LINUX_MUTEX_H
#define SIM_LINUX_MUTEX_H

struct mutex {
	int unused;
};

#define DEFINE_MUTEX(name)	struct mutex name = { 0 }
#define mutex_lock(m)		((void)(m))
#define mutex_unlock(m)		((void)(m))
#endif
