/*
 * static_files.c — see static_files.h. The table built by xpv_static_init
 * is written once before the listeners start and only read afterwards.
 */
#include "static_files.h"
#include "assets.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const xpv_asset *asset;
    const char *type;
    char etag[48];
    xpv_buf gz; /* empty when not worth compressing */
} static_file;

static static_file *files;
static size_t nfiles;

void xpv_static_init(void)
{
    size_t n = 0;
    while (xpv_assets[n].path)
        n++;
    files = xpv_xcalloc(n ? n : 1, sizeof *files);
    nfiles = n;
    for (size_t i = 0; i < n; i++) {
        static_file *f = &files[i];
        f->asset = &xpv_assets[i];
        f->type = xpv_http_content_type(f->asset->path);
        snprintf(f->etag, sizeof f->etag, "W/\"s%016llx\"",
                 (unsigned long long)xpv_hash64(f->asset->data, (size_t)f->asset->size));
        int text =
            strncmp(f->type, "text/", 5) == 0 || strstr(f->type, "json") || strstr(f->type, "svg");
        if (text && f->asset->size >= 512 &&
            xpv_http_gzip(f->asset->data, (size_t)f->asset->size, 9, &f->gz) != 0)
            xpv_buf_free(&f->gz);
    }
}

void xpv_static_free(void)
{
    for (size_t i = 0; i < nfiles; i++)
        xpv_buf_free(&files[i].gz);
    free(files);
    files = NULL;
    nfiles = 0;
}

static const static_file *find(const char *rel)
{
    for (size_t i = 0; i < nfiles; i++)
        if (strcmp(files[i].asset->path, rel) == 0) return &files[i];
    return NULL;
}

/* The frontend routes with the URL hash; these plain paths are accepted too
 * so a bookmarked or typed page address still opens the app. */
static int is_app_route(const char *path)
{
    static const char *const routes[] = {"/profiles", "/profile",  "/overview",
                                         "/kernels",  "/timeline", "/steps"};
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
        size_t n = strlen(routes[i]);
        if (strncmp(path, routes[i], n) == 0 && (path[n] == 0 || path[n] == '/')) return 1;
    }
    return 0;
}

void xpv_static_reply(const char *path, xpv_reply *r)
{
    const static_file *f = NULL;
    if (strcmp(path, "/") == 0 || is_app_route(path))
        f = find("index.html");
    else
        f = find(path + 1);
    if (!f) {
        xpv_reply_error(r, 404, "not found: %.200s", path);
        return;
    }
    r->status = 200;
    r->content_type = f->type;
    r->static_data = f->asset->data;
    r->static_len = (size_t)f->asset->size;
    if (f->gz.len) {
        r->static_gz = (const unsigned char *)f->gz.data;
        r->static_gz_len = f->gz.len;
    }
    r->cacheable = 1;
    snprintf(r->etag, sizeof r->etag, "%s", f->etag);
}
