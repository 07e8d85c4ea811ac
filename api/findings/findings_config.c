/*
 * findings_config.c — the findings' thresholds: one table of keys, default
 * values and meanings, and the key=value file format that overrides them.
 *
 * Invariant: every field of xpv_findings_config has exactly one row here,
 * so the defaults, the parser and the documentation never disagree.
 */
#include "findings_config.h"

#include <ctype.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *key;
    size_t offset;
    double value;
    const char *meaning;
} setting;

#define ROW(field, v, text)                                                                        \
    {                                                                                              \
#field, offsetof(xpv_findings_config, field), v, text                                      \
    }

static const setting SETTINGS[] = {
    ROW(compile_min_ms, 1.0, "compilation shorter than this (ms) is not reported"),
    ROW(compile_step_share_crit, 0.10,
        "compilation inside steps, as a share of step time, that makes it critical"),
    ROW(input_share_warn, 0.05, "share of step time the devices wait for input: warning"),
    ROW(input_share_crit, 0.20, "share of step time the devices wait for input: critical"),
    ROW(collective_share_info, 0.20, "share of device step time in collectives worth noting"),
    ROW(exposed_share_warn, 0.10,
        "share of device step time in collectives that no compute overlaps: warning"),
    ROW(exposed_share_crit, 0.30,
        "share of device step time in collectives that no compute overlaps: critical"),
    ROW(transfer_share_warn, 0.10,
        "share of device step time in host-device copies (H2D + D2H): warning"),
    ROW(transfer_share_crit, 0.30,
        "share of device step time in host-device copies (H2D + D2H): critical"),
    ROW(sync_copies_per_step_warn, 1.0, "synchronous copies per step: warning"),
    ROW(launch_min_kernels, 20, "fewest kernels for launch overhead to be judged"),
    ROW(launch_short_kernel_us, 10.0, "a kernel shorter than this (µs) is short"),
    ROW(launch_short_share, 0.50, "share of kernels that are short before launch overhead counts"),
    ROW(launch_idle_share_warn, 0.30,
        "share of the devices' active time spent idle between kernels: warning"),
    ROW(host_share_warn, 0.10,
        "share of step time the devices wait for the host between CUDA graph launches: warning"),
    ROW(host_share_crit, 0.30,
        "share of step time the devices wait for the host between CUDA graph launches: critical"),
    ROW(step_outlier_factor, 1.5, "a step this many times the median step time is an outlier"),
    ROW(step_outlier_min_steps, 5, "fewest steps for a median to compare against"),
    ROW(hot_spot_top_share, 0.80, "share of device time the top 3 kernels or ops make: info"),
    ROW(idle_device_share, 0.05,
        "a device busy less than this share of the busiest device's time is idle"),
};
#define NSETTINGS (sizeof SETTINGS / sizeof SETTINGS[0])

void xpv_findings_config_defaults(xpv_findings_config *c)
{
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < NSETTINGS; i++)
        *(double *)(void *)((char *)c + SETTINGS[i].offset) = SETTINGS[i].value;
}

void xpv_findings_config_describe(xpv_buf *out)
{
    for (size_t i = 0; i < NSETTINGS; i++)
        xpv_buf_printf(out, "%-26s %-6g %s\n", SETTINGS[i].key, SETTINGS[i].value,
                       SETTINGS[i].meaning);
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = 0;
    return s;
}

static int apply_line(xpv_findings_config *c, char *line, int lineno, xpv_err *err)
{
    char *hash = strchr(line, '#');
    if (hash) *hash = 0;
    char *s = trim(line);
    if (!*s) return 0;
    char *eq = strchr(s, '=');
    if (!eq) return xpv_err_set(err, "line %d: expected key=value", lineno);
    *eq = 0;
    char *key = trim(s), *val = trim(eq + 1), *end;
    for (size_t i = 0; i < NSETTINGS; i++) {
        if (strcmp(key, SETTINGS[i].key) != 0) continue;
        double v = strtod(val, &end);
        if (!*val || *end || !isfinite(v) || v < 0)
            return xpv_err_set(err, "line %d: %s needs a number >= 0, not '%s'", lineno, key, val);
        *(double *)(void *)((char *)c + SETTINGS[i].offset) = v;
        return 0;
    }
    return xpv_err_set(err, "line %d: unknown key '%s'", lineno, key);
}

int xpv_findings_config_parse(xpv_findings_config *c, const char *text, xpv_err *err)
{
    int lineno = 0;
    while (*text) {
        size_t n = strcspn(text, "\n");
        char line[512];
        lineno++;
        if (n >= sizeof line) return xpv_err_set(err, "line %d: longer than 511 bytes", lineno);
        memcpy(line, text, n);
        line[n] = 0;
        if (apply_line(c, line, lineno, err) != 0) return -1;
        text += n;
        if (*text) text++;
    }
    return 0;
}
