/*
 * nsys_step_name.h — telling whether an NVTX range name carries a training
 * step number ("step 12", "train_step_12", "Step#3", "iteration 7",
 * "ProfilerStep#5", "epoch_1_step_200") and which.
 *
 * Rules, chosen to avoid false positives ("conv2d_1x1", "steps 4",
 * "backstep 3", "step 1.5", long annotation strings):
 *  - a keyword `step`, `iteration` or `iter` (any case) that starts a word:
 *    at the start, after a non-letter, or as a camel-case hump (`trainStep`);
 *  - the keyword is not followed by another letter (`steps`, `iterator`),
 *    except a `num` / `number` suffix, optionally after '_' or ' '
 *    (`step_num=5` as JAX's TraceMe metadata writes it into NVTX names:
 *    "train#step_num=5,_r=1#"; "stepNum 3"; "step number 7");
 *  - then at most 3 separators out of " _#:=-", then decimal digits
 *    (at most 18);
 *  - the number is not followed by a letter or digit, nor by '.' + digit;
 *  - names longer than XPV_NSYS_STEP_NAME_MAX bytes are never step markers
 *    (real step markers are short; profilers' op annotations are long).
 * The first keyword that satisfies all rules gives the number.
 */
#ifndef XPV_NSYS_STEP_NAME_H
#define XPV_NSYS_STEP_NAME_H

#include <stddef.h>
#include <stdint.h>

#define XPV_NSYS_STEP_NAME_MAX 96

/* Returns 1 and sets *step when name (len bytes, not necessarily
 * NUL-terminated) carries a step number, 0 otherwise. */
int xpv_nsys_step_number(const char *name, size_t len, int64_t *step);

#endif
