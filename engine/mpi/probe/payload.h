/* Message buffers of the probe's timed transfers (ping-pong, stress test). */
#ifndef RW_PROBE_PAYLOAD_H
#define RW_PROBE_PAYLOAD_H
#include <stddef.h>

/* A buffer of `bytes` whose content never matters. Under SMPI it is a
 * shared buffer, which also spares the simulator a real copy of every
 * message. NULL when out of memory. */
char *rw_payload_alloc(size_t bytes);
void rw_payload_free(char *b);
#endif
