/* record.c: this rank's record and lifecycle entry, which every log holds
 * (the optional sections come from the modules, module.h). */
#ifndef SW_RECORD_H
#define SW_RECORD_H

#include <stdint.h>

#include "buf.h"
#include "scalewise/format.h"

/* This rank's record, uncompressed; *flags_out: its flags (SW_RANK_PARTIAL). */
void sw_pack_rank(sw_buf *b, uint32_t *flags_out);
/* This rank's rank lifecycle values, in the section's order after the rank. */
void sw_rank_lifecycle(uint64_t out[SW_LIFE_VALUES]);

#endif
