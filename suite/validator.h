/* The validator: independent of every solver, it runs on every result before it is stored.
 *
 * An assignment is valid iff every fast buffer is not pinned, its offset is a multiple of the
 * alignment, offset + size <= capacity, and no two fast buffers that are live at a common
 * time overlap in address. O(n log n): a sweep over time with an ordered set of the address
 * intervals of the live fast buffers (neighbours in address order are the only candidates for
 * an overlap). The error names the two buffers that collide and when. */
#ifndef MB_VALIDATOR_H
#define MB_VALIDATOR_H

#include <stdbool.h>
#include <stdint.h>

#include "assignment.h"
#include "error.h"
#include "hardware.h"
#include "workload.h"

bool mb_validate(const mb_workload *w, const mb_hardware *hw, const mb_assignment *a,
                 mb_error *err);
/* The same, and when invalid, blame names the buffers at fault, so that a caller that read the
 * assignment from a file can name their rows (check names the CSV lines): blame[0] the buffer
 * of a per-buffer violation (pinned, misaligned, beyond the capacity) or the first of the two
 * buffers of an overlap as the message names them, blame[1] the second of the overlap, -1
 * when there is none (and both -1 when the assignment does not fit the workload at all). */
bool mb_validate_blame(const mb_workload *w, const mb_hardware *hw, const mb_assignment *a,
                       int32_t blame[2], mb_error *err);
/* Fast bytes used: the max over time of the bytes of live fast buffers (a utilisation figure),
 * and the highest offset + size of any fast buffer. */
void mb_assignment_usage(const mb_workload *w, const mb_assignment *a, int64_t *peak_fast_bytes,
                         int64_t *max_address);

#endif
