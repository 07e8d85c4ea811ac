/*
 * step_names.h — host annotation names that mark training steps when a
 * PyTorch trace has no `ProfilerStep#N`.
 *
 *  - XPV_STEP_TRAINING_STEP: the name's last component (after the last '.',
 *    ']', ':' or '/') is `training_step` or `train_step`, optionally
 *    followed by '#' or '_' and a decimal number: PyTorch Lightning's
 *    `[LightningModule]Model.training_step` and `[Strategy]…training_step`,
 *    and users' `record_function("train_step")`.
 *  - XPV_STEP_OPTIMIZER: `Optimizer.step#<Class>.step`, which torch.optim
 *    records around every optimizer step.
 * Anything else is 0. Matching is exact and case-sensitive: these are names
 * that code writes, not prose.
 */
#ifndef XPV_STEP_NAMES_H
#define XPV_STEP_NAMES_H

#include <stddef.h>
#include <stdint.h>

/* The enum xpv_step_source the name marks (0 none); *number is the step
 * number it carries, -1 when it carries none. */
int xpv_step_name_source(const char *name, size_t len, int64_t *number);

#endif
