/*
 * json_scan.h — a purpose-built JSON tokenizer for huge trace files.
 *
 * It walks bytes in place: strings come back as slices of the input (with a
 * flag when they hold escapes, to be decoded by js_unescape), numbers as
 * their text, nested values as their raw text. Nothing is allocated per
 * value. It is strict JSON (RFC 8259): UTF-8 is validated, control
 * characters in strings, bad escapes, leading zeros and the like are errors;
 * the one extension is NaN/Infinity/-Infinity, which Python's json module
 * writes for non-finite floats and reads back, so profilers emit them.
 *
 * Every function works on a window [p, end) that may end mid-value: then it
 * returns JS_MORE and the caller refills and retries from a point it kept.
 * JS_ERR comes with a reason and the position of the offending byte.
 *
 * Nesting is walked with an explicit bit stack (js_skipper), never by
 * recursion, and bounded by JS_MAX_DEPTH. js_skipper is resumable: it can
 * skip a value of any size across refills, keeping only a few bytes.
 */
#ifndef XPV_JSON_SCAN_H
#define XPV_JSON_SCAN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

enum { JS_OK = 0, JS_MORE = 1, JS_ERR = -1 };

#define JS_MAX_DEPTH 64

typedef struct {
    const char *at;     /* offending byte */
    const char *reason; /* static text */
} js_error;

static inline int js_is_ws(unsigned char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* One compare rejects every byte above ' ' (nearly all that are not
 * whitespace); a mask picks the four whitespace bytes out of the rest. */
#define JS_WS_MASK ((1ull << ' ') | (1ull << '\n') | (1ull << '\r') | (1ull << '\t'))

static inline const char *js_skip_ws(const char *p, const char *end)
{
    while (p < end && (unsigned char)*p <= ' ' && ((JS_WS_MASK >> (unsigned char)*p) & 1))
        p++;
    return p;
}

/* p is just past the opening quote. On JS_OK *after is just past the
 * closing quote and *escaped says whether the body holds backslashes. */
int js_scan_string(const char *p, const char *end, const char **after, int *escaped, js_error *e);

/* js_scan_string() with the commonest case inline: a string (a key, a
 * name) that ends within 16 bytes, with no escape, control or non-ASCII
 * byte before its closing quote. */
static inline int js_scan_string_fast(const char *p, const char *end, const char **after,
                                      int *escaped, js_error *e)
{
#ifdef __SSE2__
    if (end - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
        __m128i quote = _mm_cmpeq_epi8(v, _mm_set1_epi8('"'));
        /* signed: below 0x20 takes in the bytes from 0x80 up */
        __m128i other = _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\\')),
                                     _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)));
        unsigned q = (unsigned)_mm_movemask_epi8(quote), o = (unsigned)_mm_movemask_epi8(other);
        /* the first quote comes before anything else that needs a look */
        if (q && (o == 0 || (q & -q) < (o & -o))) {
            *after = p + __builtin_ctz(q) + 1;
            *escaped = 0;
            return JS_OK;
        }
    }
#endif
    return js_scan_string(p, end, after, escaped, e);
}

/* Decodes a string body (validated by js_scan_string) into dst, which needs
 * len bytes at most. Lone surrogate escapes become U+FFFD. Returns the
 * decoded length. */
size_t js_unescape(const char *s, size_t len, char *dst);

/* p is at the number's first byte. On JS_OK *after is just past it and
 * *is_int says it has no fraction or exponent. `final` says the window ends
 * the input (a number may then end at `end`). */
int js_scan_number(const char *p, const char *end, int final, const char **after, int *is_int,
                   js_error *e);

static inline int js_is_digit(char c)
{
    return (unsigned char)(c - '0') < 10;
}

/* js_scan_number() with the commonest case inline: no exponent, at most
 * 16 digits before and after an optional '.', and the window holding
 * more than the longest such number. Anything else (an error included)
 * is js_scan_number()'s. Traces hold ~8 numbers an event (ids, times,
 * the shapes in PyTorch's args), so the call and its checks add up. */
static inline int js_scan_number_fast(const char *p, const char *end, int final, const char **after,
                                      int *is_int, js_error *e)
{
    const char *r = p + (end - p > 40 && *p == '-'), *lim;
    if (end - p > 40 && js_is_digit(*r)) {
        if (*r != '0') {
            lim = r + 16;
            for (r++; r < lim && js_is_digit(*r);)
                r++;
        } else {
            lim = ++r + 1; /* a digit after a leading zero is the slow path's error */
        }
        int integral = *r != '.';
        if (!integral && js_is_digit(r[1])) {
            lim = r + 17;
            for (r += 2; r < lim && js_is_digit(*r);)
                r++;
        }
        if (r < lim && !js_is_digit(*r) && *r != '.' && (*r | 0x20) != 'e') {
            *after = r;
            *is_int = integral;
            return JS_OK;
        }
    }
    return js_scan_number(p, end, final, after, is_int, e);
}

/* true, false, null, and (as Python's json module writes and reads them
 * for non-finite floats) NaN, Infinity, -Infinity. */
int js_scan_literal(const char *p, const char *end, int final, const char **after, js_error *e);

/* Exact conversions of a validated number's text. */
/* Integer text to int64: 0, or -1 when it does not fit. */
int js_to_int64(const char *s, size_t n, int64_t *out);
/* The same for at most 18 digits (always fits), without checks. */
static inline int64_t js_small_int(const char *s, size_t n)
{
    int neg = n && *s == '-';
    int64_t v = 0;
    for (size_t i = (size_t)neg; i < n; i++)
        v = v * 10 + (s[i] - '0');
    return neg ? -v : v;
}
/* Non-negative integer text to uint64: 0, or -1 when it does not fit. */
int js_to_uint64(const char *s, size_t n, uint64_t *out);
/* Any number times 10^scale, truncated toward zero, exactly (no floating
 * point): 0, or -1 when the result does not fit in int64. */
int js_to_scaled_int64(const char *s, size_t n, int scale, int64_t *out);
/* Correctly rounded double: 0, or -1 when it is out of range (inf). */
int js_to_double(const char *s, size_t n, double *out);

/* Resumable skipping/validation of one value of any size. */
typedef struct {
    int depth;
    int expect;    /* internal state */
    int in_string; /* inside a string (key or value) */
    int string_is_key;
    uint8_t is_object[JS_MAX_DEPTH / 8];
} js_skipper;

void js_skipper_init(js_skipper *s);
/* Feeds [p, end). JS_OK: the value ended, *stop is just past it. JS_MORE:
 * everything before *stop is consumed (call again with the window starting
 * there, refilled). JS_ERR: e says why. `final` marks the end of input. */
int js_skipper_feed(js_skipper *s, const char *p, const char *end, int final, const char **stop,
                    js_error *e);

/* Skips one complete value that must lie in [p, end): JS_OK with *after,
 * JS_MORE when the window ends first, JS_ERR. */
int js_skip_value(const char *p, const char *end, int final, const char **after, js_error *e);

#endif
