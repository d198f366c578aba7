/* The module interface: what the life cycle (lifecycle.c) and the log writer
 * (logwrite.c) call in every module, without naming any.  A module fills
 * an sw_module with the hooks it needs (NULL: nothing to do) and registers
 * it with SW_MODULE in its own .c file; nothing else lists it.  Modules are
 * walked in the order of their log section ids (format.h), those without a
 * section last, so sections appear in the log in id order.
 *
 * When each hook runs:
 *   init       in MPI_Init, before the ranks' clocks start together (the
 *              configuration is loaded and sw_pmpi resolved)
 *   start      the window opens (sw_job.tsc0 is set), before recording
 *   stop       MPI_Finalize or MPI_Abort entry: the window has closed
 *              (sw_job.tsc1 is set; sw_job.ns_per_tick not yet)
 *   pack_rank  this rank's record of the module's log section; collective
 *              over sw_job.comm unless log_flags has SW_LOG_ABORTED
 *   pack_head  rank 0 (or an aborting rank): the section's part before the
 *              ranks' records
 *   finish     MPI_Finalize, after the log is written; collective */
#ifndef SW_MODULE_H
#define SW_MODULE_H

#include <stdint.h>

#include "buf.h"

typedef struct {
    const char *name;
    void (*init)(void);
    void (*start)(void);
    void (*stop)(void);
    uint32_t section; /* SW_SEC_* of the module's log section; 0: none */
    int raw;          /* the section is stored as packed, not compressed (format.h) */
    void (*pack_rank)(sw_buf *b, unsigned log_flags);
    void (*pack_head)(sw_buf *b);
    void (*finish)(void);
} sw_module;

#define SW_MODULE(var)                                                                             \
    static const sw_module var;                                                                    \
    static const sw_module *const var##_entry __attribute__((used, section("sw_modules"))) = &var; \
    static const sw_module var

/* The registered modules, in walking order; *n of them. */
const sw_module *const *sw_modules(unsigned *n);

#endif
