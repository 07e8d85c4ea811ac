/*
 * json_scan.c — the tokenizer behind the trace-JSON reader (see json_scan.h).
 *
 * Strings are scanned 16 bytes at a time with SSE2 where the compiler
 * offers it: one compare finds the next quote, backslash, control character
 * or non-ASCII byte, so the long ASCII call stacks that fill PyTorch traces
 * cost a few instructions per 16 bytes. Non-ASCII bytes are validated as
 * UTF-8 (no overlongs, no surrogates, nothing above U+10FFFF).
 *
 * Numbers keep their text: integer and fixed-point conversions are exact
 * decimal arithmetic; doubles use an exact fast path when the digits and
 * the power of ten are both exactly representable, strtod() otherwise.
 */
#include "json_scan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define MAX_NUMBER_LEN 1024

static int fail(js_error *e, const char *at, const char *reason)
{
    if (e) {
        e->at = at;
        e->reason = reason;
    }
    return JS_ERR;
}

/* ---- whitespace ---- */

const char *js_skip_ws_run(const char *p, const char *end)
{
#ifdef __SSE2__
    const __m128i sp = _mm_set1_epi8(' '), nl = _mm_set1_epi8('\n'), cr = _mm_set1_epi8('\r'),
                  tab = _mm_set1_epi8('\t');
    while (end - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
        __m128i ws = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, sp), _mm_cmpeq_epi8(v, nl)),
                                  _mm_or_si128(_mm_cmpeq_epi8(v, cr), _mm_cmpeq_epi8(v, tab)));
        unsigned other = ~(unsigned)_mm_movemask_epi8(ws) & 0xFFFFu;
        if (other) return p + __builtin_ctz(other);
        p += 16;
    }
#endif
    while (p < end && js_is_ws((unsigned char)*p))
        p++;
    return p;
}

/* ---- strings ---- */

/* Validates the UTF-8 sequence at p; *n gets its length. */
static int utf8_check(const unsigned char *p, const unsigned char *end, int *n, js_error *e)
{
    unsigned c = p[0];
    int need;
    unsigned lo = 0x80, hi = 0xBF;
    if (c < 0xC2) return fail(e, (const char *)p, "invalid UTF-8 byte");
    if (c < 0xE0)
        need = 1;
    else if (c < 0xF0) {
        need = 2;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
    } else if (c < 0xF5) {
        need = 3;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else {
        return fail(e, (const char *)p, "invalid UTF-8 byte");
    }
    for (int i = 1; i <= need; i++) {
        if (p + i >= end) return JS_MORE;
        unsigned b = p[i];
        unsigned l = i == 1 ? lo : 0x80, h = i == 1 ? hi : 0xBF;
        if (b < l || b > h) return fail(e, (const char *)p + i, "invalid UTF-8 sequence");
    }
    *n = need + 1;
    return JS_OK;
}

static int hex_value(unsigned char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    c |= 0x20;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

/* Validates the escape at p (a backslash); *n gets its length. */
static int escape_check(const char *p, const char *end, int *n, js_error *e)
{
    if (p + 1 >= end) return JS_MORE;
    switch (p[1]) {
    case '"':
    case '\\':
    case '/':
    case 'b':
    case 'f':
    case 'n':
    case 'r':
    case 't':
        *n = 2;
        return JS_OK;
    case 'u':
        if (end - p < 6) return JS_MORE;
        for (int i = 2; i < 6; i++)
            if (hex_value((unsigned char)p[i]) < 0) return fail(e, p + i, "invalid \\u escape");
        *n = 6;
        return JS_OK;
    default:
        return fail(e, p + 1, "invalid escape in string");
    }
}

int js_scan_string(const char *p, const char *end, const char **after, int *escaped, js_error *e)
{
    int esc = 0;
    for (;;) {
#ifdef __SSE2__
        const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'),
                      ctl = _mm_set1_epi8(0x1F);
#define SPECIAL(v)                                                                                 \
    _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)),                \
                 _mm_or_si128(_mm_cmpeq_epi8(_mm_max_epu8(v, ctl), ctl),                           \
                              _mm_cmplt_epi8(v, _mm_setzero_si128())))
        /* Probe 16 bytes (most strings are short keys and names); after a
         * clean probe, go 32 bytes a turn until something shows up. */
        while (end - p >= 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
            unsigned m = (unsigned)_mm_movemask_epi8(SPECIAL(v));
            if (m) {
                p += __builtin_ctz(m);
                break;
            }
            p += 16;
            while (end - p >= 32) {
                __m128i a = _mm_loadu_si128((const __m128i *)(const void *)p);
                __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(p + 16));
                if (_mm_movemask_epi8(_mm_or_si128(SPECIAL(a), SPECIAL(b)))) break;
                p += 32;
            }
        }
#undef SPECIAL
#endif
        if (p >= end) {
            *after = p;
            *escaped = esc;
            return JS_MORE;
        }
        unsigned char c = (unsigned char)*p;
        int n = 1, rc = JS_OK;
        if (c == '"') {
            *after = p + 1;
            *escaped = esc;
            return JS_OK;
        } else if (c == '\\') {
            rc = escape_check(p, end, &n, e);
            esc = 1;
        } else if (c < 0x20) {
            return fail(e, p, "control character in string");
        } else if (c >= 0x80) {
            rc = utf8_check((const unsigned char *)p, (const unsigned char *)end, &n, e);
        }
        if (rc == JS_MORE) {
            *after = p;
            *escaped = esc;
        }
        if (rc != JS_OK) return rc;
        p += n;
    }
}

static char *put_utf8(char *d, unsigned cp)
{
    if (cp < 0x80) {
        *d++ = (char)cp;
    } else if (cp < 0x800) {
        *d++ = (char)(0xC0 | (cp >> 6));
        *d++ = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        *d++ = (char)(0xE0 | (cp >> 12));
        *d++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *d++ = (char)(0x80 | (cp & 0x3F));
    } else {
        *d++ = (char)(0xF0 | (cp >> 18));
        *d++ = (char)(0x80 | ((cp >> 12) & 0x3F));
        *d++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *d++ = (char)(0x80 | (cp & 0x3F));
    }
    return d;
}

static unsigned hex4(const char *p)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++)
        v = v * 16 + (unsigned)hex_value((unsigned char)p[i]);
    return v;
}

size_t js_unescape(const char *s, size_t len, char *dst)
{
    const char *end = s + len;
    char *d = dst;
    while (s < end) {
        const char *bs = memchr(s, '\\', (size_t)(end - s));
        size_t plain = bs ? (size_t)(bs - s) : (size_t)(end - s);
        memmove(d, s, plain);
        d += plain;
        s += plain;
        if (!bs) break;
        char c = s[1];
        s += 2;
        switch (c) {
        case 'b':
            *d++ = '\b';
            break;
        case 'f':
            *d++ = '\f';
            break;
        case 'n':
            *d++ = '\n';
            break;
        case 'r':
            *d++ = '\r';
            break;
        case 't':
            *d++ = '\t';
            break;
        case 'u': {
            unsigned cp = hex4(s);
            s += 4;
            if (cp >= 0xD800 && cp <= 0xDBFF && end - s >= 6 && s[0] == '\\' && s[1] == 'u') {
                unsigned lo = hex4(s + 2);
                if (lo >= 0xDC00 && lo <= 0xDFFF) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    s += 6;
                }
            }
            if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0xFFFD;
            d = put_utf8(d, cp);
            break;
        }
        default:
            *d++ = c;
            break; /* " \ / */
        }
    }
    return (size_t)(d - dst);
}

/* ---- numbers ---- */

/* Eight bytes as a little-endian word, whatever the host's order. */
static uint64_t load_le8(const char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)(unsigned char)p[i] << (8 * i);
    return v;
}

/* How many of the 8 bytes at p are digits before the first that is not:
 * a digit's high nibble is 3 and its low nibble + 6 stays below 16. */
static int digits8(const char *p)
{
    uint64_t v = load_le8(p);
    const uint64_t hi = 0xF0F0F0F0F0F0F0F0ull, three = 0x3030303030303030ull;
    uint64_t bad = ((v & hi) ^ three) | (((v + 0x0606060606060606ull) & hi) ^ three);
    return bad ? __builtin_ctzll(bad) / 8 : 8;
}

/* The value of 8 digits at p (digits8(p) == 8), combining neighbours
 * pairwise in one word: 8 -> 4 two-digit -> 2 four-digit -> 1. */
static uint64_t value8(const char *p)
{
    uint64_t v = load_le8(p) & 0x0F0F0F0F0F0F0F0Full;
    v = (v * (10 * 256 + 1)) >> 8 & 0x00FF00FF00FF00FFull;
    v = (v * (100 * 65536 + 1)) >> 16 & 0x0000FFFF0000FFFFull;
    return (v * (10000 * 4294967296ull + 1)) >> 32;
}

/* Skips a run of digits, 8 at a time while the window allows. */
static const char *skip_digits(const char *p, const char *end)
{
    while (end - p >= 8) {
        int n = digits8(p);
        p += n;
        if (n < 8) return p;
    }
    while (p < end && js_is_digit(*p))
        p++;
    return p;
}

int js_scan_number(const char *p, const char *end, int final, const char **after, int *is_int,
                   js_error *e)
{
    const char *s = p;
    int integral = 1;
    if (p < end && *p == '-') p++;
    if (p >= end) goto more;
    if (*p == '0') {
        p++;
    } else if (*p >= '1' && *p <= '9') {
        p = skip_digits(p, end);
    } else {
        return fail(e, p, "invalid number");
    }
    if (p < end && *p == '.') {
        integral = 0;
        p++;
        if (p >= end) goto more;
        if (!js_is_digit(*p)) return fail(e, p, "invalid number: no digit after '.'");
        p = skip_digits(p, end);
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        integral = 0;
        p++;
        if (p < end && (*p == '+' || *p == '-')) p++;
        if (p >= end) goto more;
        if (!js_is_digit(*p)) return fail(e, p, "invalid number: bad exponent");
        while (p < end && js_is_digit(*p))
            p++;
    }
    if (p >= end && !final) goto more;
    if (p - s > MAX_NUMBER_LEN) return fail(e, s, "number too long");
    if (p < end && js_is_digit(*p)) return fail(e, p, "invalid number: leading zero");
    *after = p;
    *is_int = integral;
    return JS_OK;
more:
    if (final) return fail(e, p, "unexpected end of input in a number");
    if (p - s > MAX_NUMBER_LEN) return fail(e, s, "number too long");
    return JS_MORE;
}

int js_to_uint64(const char *s, size_t n, uint64_t *out)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10) return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

int js_to_int64(const char *s, size_t n, int64_t *out)
{
    int neg = n && s[0] == '-';
    uint64_t v;
    if (js_to_uint64(s + neg, n - (size_t)neg, &v) != 0) return -1;
    if (neg) {
        if (v > (uint64_t)INT64_MAX + 1) return -1;
        *out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
    } else {
        if (v > (uint64_t)INT64_MAX) return -1;
        *out = (int64_t)v;
    }
    return 0;
}

typedef struct {
    int neg;
    const char *ip, *fp; /* integer and fraction digits */
    size_t ni, nf;
    int64_t exp; /* clamped to +-100000 */
} number_parts;

static void split_number(const char *s, size_t n, number_parts *np)
{
    const char *end = s + n, *p = s;
    memset(np, 0, sizeof *np);
    if (p < end && *p == '-') np->neg = 1, p++;
    np->ip = p;
    while (p < end && js_is_digit(*p))
        p++;
    np->ni = (size_t)(p - np->ip);
    if (p < end && *p == '.') {
        np->fp = ++p;
        while (p < end && js_is_digit(*p))
            p++;
        np->nf = (size_t)(p - np->fp);
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        int eneg = p < end && *p == '-';
        if (p < end && (*p == '-' || *p == '+')) p++;
        int64_t x = 0;
        for (; p < end && js_is_digit(*p); p++)
            if (x < 100000) x = x * 10 + (*p - '0');
        np->exp = eneg ? -x : x;
    }
}

static int digit_at(const number_parts *np, int64_t i)
{
    if (i < (int64_t)np->ni) return np->ip[i] - '0';
    i -= (int64_t)np->ni;
    if (i < (int64_t)np->nf) return np->fp[i] - '0';
    return 0;
}

/* The common case, "-123.456" with no exponent and at most 19 digits kept
 * (microsecond epoch stamps scaled to ns take 19): 1 when done, 0 when the
 * general path is needed, which also answers an out-of-range value. */
static int scaled_simple(const char *s, size_t n, int scale, int64_t *out)
{
    const char *p = s, *end = s + n;
    int neg = p < end && *p == '-';
    p += neg;
    uint64_t v = 0;
    int digits = 0;
    while (end - p >= 8 && digits <= 8 && digits8(p) == 8) {
        v = v * 100000000 + value8(p);
        p += 8;
        digits += 8;
    }
    while (p < end && js_is_digit(*p))
        v = v * 10 + (uint64_t)(*p++ - '0'), digits++;
    if (p < end && *p == '.') p++;
    for (int i = 0; i < scale; i++) {
        unsigned d = p < end && js_is_digit(*p) ? (unsigned)(*p++ - '0') : 0;
        v = v * 10 + d;
        digits++;
    }
    while (p < end && js_is_digit(*p))
        p++;
    /* 19 digits cannot wrap a uint64_t (< 10^19 < 2^64); the sign decides
     * what fits in an int64_t. */
    if (p != end || digits > 19 || v > (uint64_t)INT64_MAX + (uint64_t)neg) return 0;
    *out = !neg ? (int64_t)v : v > (uint64_t)INT64_MAX ? INT64_MIN : -(int64_t)v;
    return 1;
}

int js_to_scaled_int64(const char *s, size_t n, int scale, int64_t *out)
{
    if (scale >= 0 && scaled_simple(s, n, scale, out)) return 0;
    number_parts np;
    split_number(s, n, &np);
    /* Digits before the scaled decimal point: truncation drops the rest. */
    int64_t keep = (int64_t)np.ni + np.exp + scale;
    uint64_t v = 0;
    for (int64_t i = 0; i < keep; i++) {
        unsigned d = (unsigned)digit_at(&np, i);
        if (v == 0 && d == 0) {
            if (i >= (int64_t)(np.ni + np.nf)) break; /* only zeros follow */
            continue;
        }
        if (v > (UINT64_MAX - d) / 10) return -1;
        v = v * 10 + d;
    }
    if (np.neg) {
        if (v > (uint64_t)INT64_MAX + 1) return -1;
        *out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
    } else {
        if (v > (uint64_t)INT64_MAX) return -1;
        *out = (int64_t)v;
    }
    return 0;
}

int js_to_double(const char *s, size_t n, double *out)
{
    static const double pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                   1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    number_parts np;
    split_number(s, n, &np);
    /* Exact fast path: digits < 2^53 and a power of ten <= 1e22 are both
     * exact doubles, so one multiply or divide rounds correctly. */
    if (np.ni + np.nf <= 15) {
        uint64_t m = 0;
        for (size_t i = 0; i < np.ni; i++)
            m = m * 10 + (uint64_t)(np.ip[i] - '0');
        for (size_t i = 0; i < np.nf; i++)
            m = m * 10 + (uint64_t)(np.fp[i] - '0');
        int64_t e10 = np.exp - (int64_t)np.nf;
        if (e10 >= -22 && e10 <= 22) {
            double v = (double)m;
            v = e10 < 0 ? v / pow10[-e10] : v * pow10[e10];
            *out = np.neg ? -v : v;
            return 0;
        }
    }
    char buf[MAX_NUMBER_LEN + 1];
    if (n > MAX_NUMBER_LEN) return -1;
    memcpy(buf, s, n);
    buf[n] = 0;
    double v = strtod(buf, NULL);
    if (isinf(v)) return -1;
    *out = v;
    return 0;
}

/* ---- skipping ---- */

enum {
    EXP_VALUE,
    EXP_VALUE_OR_CLOSE,
    EXP_KEY_OR_CLOSE,
    EXP_KEY,
    EXP_COLON,
    EXP_COMMA_OR_CLOSE,
};

void js_skipper_init(js_skipper *s)
{
    memset(s, 0, sizeof *s);
}

static int top_is_object(const js_skipper *s)
{
    int d = s->depth - 1;
    return (s->is_object[d / 8] >> (d % 8)) & 1;
}

static int push(js_skipper *s, int is_object, const char *at, js_error *e)
{
    if (s->depth >= JS_MAX_DEPTH) return fail(e, at, "nesting too deep");
    int d = s->depth++;
    if (is_object)
        s->is_object[d / 8] |= (uint8_t)(1u << (d % 8));
    else
        s->is_object[d / 8] &= (uint8_t) ~(1u << (d % 8));
    s->expect = is_object ? EXP_KEY_OR_CLOSE : EXP_VALUE_OR_CLOSE;
    return JS_OK;
}

int js_scan_literal(const char *p, const char *end, int final, const char **after, js_error *e)
{
    static const char *const words[] = {"true", "false", "null", "NaN", "Infinity", "-Infinity"};
    const char *word = NULL;
    for (int i = 0; i < 6 && !word; i++)
        if (*p == words[i][0] && (*p != '-' || end - p < 2 || p[1] == 'I')) word = words[i];
    if (!word) return fail(e, p, "invalid literal");
    size_t n = strlen(word);
    size_t have = (size_t)(end - p) < n ? (size_t)(end - p) : n;
    if (memcmp(p, word, have) != 0) return fail(e, p, "invalid literal");
    if (have < n) return final ? fail(e, end, "unexpected end of input") : JS_MORE;
    *after = p + n;
    return JS_OK;
}

/* One scalar value (string start, number, literal) or container start. */
static int skip_value_start(js_skipper *s, const char **pp, const char *end, int final, js_error *e)
{
    const char *p = *pp, *after;
    int is_int, rc;
    switch (*p) {
    case '{':
        *pp = p + 1;
        return push(s, 1, p, e);
    case '[':
        *pp = p + 1;
        return push(s, 0, p, e);
    case '"':
        s->in_string = 1;
        s->string_is_key = 0;
        *pp = p + 1;
        return JS_OK;
    case 't':
    case 'f':
    case 'n':
    case 'N':
    case 'I':
        rc = js_scan_literal(p, end, final, &after, e);
        break;
    default:
        if (*p == '-' && end - p >= 2 && p[1] == 'I') {
            rc = js_scan_literal(p, end, final, &after, e);
            break;
        }
        if (*p != '-' && !js_is_digit(*p)) return fail(e, p, "expected a value");
        rc = js_scan_number(p, end, final, &after, &is_int, e);
        break;
    }
    if (rc != JS_OK) return rc;
    *pp = after;
    s->expect = EXP_COMMA_OR_CLOSE;
    return JS_OK;
}

int js_skipper_feed(js_skipper *s, const char *p, const char *end, int final, const char **stop,
                    js_error *e)
{
    for (;;) {
        if (s->in_string) {
            const char *after;
            int esc, rc = js_scan_string(p, end, &after, &esc, e);
            if (rc == JS_MORE) {
                if (final) return fail(e, end, "unexpected end of input in a string");
                *stop = after;
                return JS_MORE;
            }
            if (rc != JS_OK) return rc;
            p = after;
            s->in_string = 0;
            s->expect = s->string_is_key ? EXP_COLON : EXP_COMMA_OR_CLOSE;
        } else {
            p = js_skip_ws(p, end);
            if (p >= end) {
                if (final) return fail(e, p, "unexpected end of input");
                *stop = p;
                return JS_MORE;
            }
            const char *start = p;
            int rc = JS_OK;
            char c = *p;
            switch (s->expect) {
            case EXP_VALUE_OR_CLOSE:
                if (c == ']') {
                    s->depth--, p++;
                    s->expect = EXP_COMMA_OR_CLOSE;
                    break;
                }
                /* fall through */
            case EXP_VALUE:
                rc = skip_value_start(s, &p, end, final, e);
                break;
            case EXP_KEY_OR_CLOSE:
                if (c == '}') {
                    s->depth--, p++;
                    s->expect = EXP_COMMA_OR_CLOSE;
                    break;
                }
                /* fall through */
            case EXP_KEY:
                if (c != '"') return fail(e, p, "expected a string key");
                s->in_string = 1;
                s->string_is_key = 1;
                p++;
                break;
            case EXP_COLON:
                if (c != ':') return fail(e, p, "expected ':'");
                s->expect = EXP_VALUE;
                p++;
                break;
            default: /* EXP_COMMA_OR_CLOSE */
                if (s->depth == 0) break;
                if (c == ',') {
                    s->expect = top_is_object(s) ? EXP_KEY : EXP_VALUE;
                    p++;
                } else if (c == (top_is_object(s) ? '}' : ']')) {
                    s->depth--, p++;
                } else {
                    return fail(e, p, "expected ',' or a closing bracket");
                }
                break;
            }
            if (rc == JS_MORE) {
                *stop = start;
                return JS_MORE;
            }
            if (rc != JS_OK) return rc;
        }
        if (s->depth == 0 && s->expect == EXP_COMMA_OR_CLOSE && !s->in_string) {
            *stop = p;
            return JS_OK;
        }
    }
}

/* js_skip_value() for a well-formed value lying whole in [p, end), walked
 * as straight code rather than the skipper's resumable state machine (the
 * short arrays of PyTorch's "Input Dims" and "Input type" args are most of
 * what it skips). 1 with *after on success; 0 for anything else, errors
 * and values cut by the window included, which the skipper then walks
 * again to give the answer and the reason. */
static int skip_fast(const char *p, const char *end, const char **after)
{
    uint64_t is_object = 0; /* bit d: the container at depth d+1 is an object */
    int depth = 0, want_key = 0, is_int, esc;
    for (;;) {
        if (want_key) {
            p = js_skip_ws(p, end);
            if (p >= end || *p != '"') return 0;
            if (js_scan_string_fast(p + 1, end, &p, &esc, NULL) != JS_OK) return 0;
            p = js_skip_ws(p, end);
            if (p >= end || *p != ':') return 0;
            p++;
        }
        p = js_skip_ws(p, end);
        if (p >= end) return 0;
        char c = *p;
        if (c == '{' || c == '[') {
            if (depth >= JS_MAX_DEPTH - 1) return 0;
            p = js_skip_ws(p + 1, end);
            if (p >= end) return 0;
            if (*p != (c == '{' ? '}' : ']')) {
                is_object = (is_object & ~(1ull << depth)) | ((uint64_t)(c == '{') << depth);
                depth++;
                want_key = c == '{';
                continue;
            }
            p++;
        } else if (c == '"') {
            if (js_scan_string_fast(p + 1, end, &p, &esc, NULL) != JS_OK) return 0;
        } else if (c == '-' && end - p >= 2 && p[1] == 'I') {
            if (js_scan_literal(p, end, 0, &p, NULL) != JS_OK) return 0;
        } else if (c == '-' || js_is_digit(c)) {
            if (js_scan_number_fast(p, end, 0, &p, &is_int, NULL) != JS_OK) return 0;
        } else if (c == 't' || c == 'f' || c == 'n' || c == 'N' || c == 'I') {
            if (js_scan_literal(p, end, 0, &p, NULL) != JS_OK) return 0;
        } else {
            return 0;
        }
        /* After a value: close what ends here, then a comma or the end. */
        for (;;) {
            if (depth == 0) {
                *after = p;
                return 1;
            }
            p = js_skip_ws(p, end);
            if (p >= end) return 0;
            int in_object = (int)((is_object >> (depth - 1)) & 1);
            if (*p == (in_object ? '}' : ']')) {
                p++;
                depth--;
                continue;
            }
            if (*p != ',') return 0;
            p++;
            want_key = in_object;
            break;
        }
    }
}

int js_skip_value(const char *p, const char *end, int final, const char **after, js_error *e)
{
    if (skip_fast(p, end, after)) return JS_OK;
    js_skipper s;
    js_skipper_init(&s);
    const char *stop;
    int rc = js_skipper_feed(&s, p, end, final, &stop, e);
    if (rc == JS_OK) *after = stop;
    return rc;
}
