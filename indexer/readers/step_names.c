/*
 * step_names.c — the step-marker name rules listed in step_names.h.
 */
#include "step_names.h"
#include "../../store/xpv_event.h"

#include <string.h>

static int has_prefix(const char *s, size_t len, const char *prefix)
{
    size_t n = strlen(prefix);
    return len >= n && memcmp(s, prefix, n) == 0;
}

/* 1 when s[0, len) is a decimal number of 1..18 digits, stored in *v. */
static int decimal(const char *s, size_t len, int64_t *v)
{
    if (len == 0 || len > 18) return 0;
    int64_t x = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return 0;
        x = x * 10 + (s[i] - '0');
    }
    *v = x;
    return 1;
}

/* `training_step`, `train_step`, either with "#N" or "_N" after it. */
static int is_training_step(const char *s, size_t len, int64_t *number)
{
    static const char *const words[] = {"training_step", "train_step"};
    for (size_t w = 0; w < sizeof words / sizeof *words; w++) {
        size_t n = strlen(words[w]);
        if (!has_prefix(s, len, words[w])) continue;
        if (len == n) return 1;
        if ((s[n] == '#' || s[n] == '_') && decimal(s + n + 1, len - n - 1, number)) return 1;
    }
    return 0;
}

/* 1 when s[0, len) ends like a training-step marker: "train_step" or
 * "training_step", then maybe '#' or '_' and digits. Every host event's
 * name is asked, nearly none is one: this looks at the end alone. */
static int may_be_training_step(const char *s, size_t len)
{
    size_t end = len;
    while (end > 0 && s[end - 1] >= '0' && s[end - 1] <= '9')
        end--;
    if (end < len && (end == 0 || (s[--end] != '#' && s[end] != '_'))) return 0;
    static const char *const words[] = {"train_step", "training_step"};
    for (size_t w = 0; w < sizeof words / sizeof *words; w++) {
        size_t n = strlen(words[w]);
        if (end >= n && memcmp(s + end - n, words[w], n) == 0) return 1;
    }
    return 0;
}

int xpv_step_name_source(const char *name, size_t len, int64_t *number)
{
    *number = -1;
    if (has_prefix(name, len, "Optimizer.step#")) return XPV_STEP_OPTIMIZER;
    if (!may_be_training_step(name, len)) return 0;
    /* the last segment of a scoped name */
    size_t last = len;
    for (char c; last > 0 && (c = name[last - 1]) != '.' && c != ']' && c != ':' && c != '/';)
        last--;
    if (is_training_step(name + last, len - last, number)) return XPV_STEP_TRAINING_STEP;
    *number = -1;
    return 0;
}
