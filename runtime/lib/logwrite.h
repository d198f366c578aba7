/* logwrite.c: gathers every rank's record and writes the job's log. */
#ifndef SW_LOGWRITE_H
#define SW_LOGWRITE_H

/* Collective over the job's private communicator; with SW_LOG_ABORTED
 * (scalewise/format.h) the calling rank writes its own record alone. */
void sw_write_log(unsigned log_flags);

#endif
