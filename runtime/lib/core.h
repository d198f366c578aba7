/* core.c: start and end of the job, thread attachment, the MPI time union
 * under MPI_THREAD_MULTIPLE, slow paths of the per-call helpers. */
#ifndef SW_CORE_H
#define SW_CORE_H

#include "state.h"

void *sw_resolve(const char *symbol);
sw_thread *sw_thread_attach(void);
void sw_mt_enter(void);
void sw_mt_leave(void);
void sw_init_begin(void);
void sw_started(int fn, uint64_t t0, uint64_t t1, int provided);
void sw_finishing(int fn);
void sw_aborting(int fn, int errorcode);
void sw_pcontrol(int fn, int level, const char *name);
void sw_set_partial(void);
uint64_t sw_type_size_slow(sw_thread *T, unsigned slot, uintptr_t key, MPI_Datatype dt);
uint64_t sw_status_bytes_slow(const MPI_Status *st);
void sw_type_freed(void);

#endif
