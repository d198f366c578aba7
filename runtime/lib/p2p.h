/* p2p.c: the point-to-point row of each thread, in world ranks. */
#ifndef SW_P2P_H
#define SW_P2P_H

#include "state.h"

void sw_p2p_add(sw_thread *T, int world, uint64_t bytes);

#endif
