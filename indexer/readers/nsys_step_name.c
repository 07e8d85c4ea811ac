/*
 * nsys_step_name.c — the step-number matcher for NVTX range names. The
 * rules are listed in nsys_step_name.h; this file only implements them.
 * Plain ASCII tests (no locale): names are UTF-8 and only ASCII letters
 * and digits matter here.
 */
#include "nsys_step_name.h"

#include <string.h>

static int is_lower(char c)
{
    return c >= 'a' && c <= 'z';
}
static int is_upper(char c)
{
    return c >= 'A' && c <= 'Z';
}
static int is_alpha(char c)
{
    return is_lower(c) || is_upper(c);
}
static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}
static char to_lower(char c)
{
    return is_upper(c) ? (char)(c - 'A' + 'a') : c;
}

/* Length of the keyword at name[i] (longest first), 0 when none. */
static size_t keyword_at(const char *name, size_t len, size_t i)
{
    static const char *const keywords[] = {"iteration", "step", "iter"};
    for (size_t k = 0; k < sizeof keywords / sizeof *keywords; k++) {
        size_t n = strlen(keywords[k]);
        if (len - i < n) continue;
        size_t j = 0;
        while (j < n && to_lower(name[i + j]) == keywords[k][j])
            j++;
        if (j == n) return n;
    }
    return 0;
}

static int starts_word(const char *name, size_t i)
{
    if (i == 0 || !is_alpha(name[i - 1])) return 1;
    return is_upper(name[i]) && is_lower(name[i - 1]); /* camel-case hump */
}

/* Length of a `num` / `number` suffix (optionally after '_') at name[j]:
 * TraceMe metadata ("train#step_num=5,_r=1#", as JAX writes into NVTX)
 * and "step number 3" spell the number out. 0 when none. */
static size_t num_suffix_at(const char *name, size_t len, size_t j)
{
    static const char *const suffixes[] = {"_number", " number", "number", "_num", "num"};
    for (size_t k = 0; k < sizeof suffixes / sizeof *suffixes; k++) {
        size_t n = strlen(suffixes[k]), i = 0;
        while (i < n && j + i < len && to_lower(name[j + i]) == suffixes[k][i])
            i++;
        if (i == n && !(j + n < len && is_alpha(name[j + n]))) return n;
    }
    return 0;
}

/* Parses the number after the keyword that ends at name[j]; 1 on success. */
static int number_after(const char *name, size_t len, size_t j, int64_t *step)
{
    j += num_suffix_at(name, len, j);
    if (j < len && is_alpha(name[j])) return 0;
    size_t k = j;
    while (k < len && k - j < 3 && name[k] && strchr(" _#:=-", name[k]))
        k++;
    if (k >= len || !is_digit(name[k])) return 0;
    int64_t v = 0;
    size_t digits = 0;
    while (k < len && is_digit(name[k])) {
        if (++digits > 18) return 0;
        v = v * 10 + (name[k++] - '0');
    }
    if (k < len && (is_alpha(name[k]) || name[k] == '.')) {
        if (name[k] != '.' || (k + 1 < len && is_digit(name[k + 1]))) return 0;
    }
    *step = v;
    return 1;
}

int xpv_nsys_step_number(const char *name, size_t len, int64_t *step)
{
    if (!name || len == 0 || len > XPV_NSYS_STEP_NAME_MAX) return 0;
    for (size_t i = 0; i < len; i++) {
        size_t n = keyword_at(name, len, i);
        if (!n || !starts_word(name, i)) continue;
        if (number_after(name, len, i + n, step)) return 1;
        i += n - 1;
    }
    return 0;
}
