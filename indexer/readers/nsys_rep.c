/*
 * nsys_rep.c — Nsight Systems' own report files (.nsys-rep, older .qdrep).
 * Their layout is private to nsys, so they are listed but not read: the
 * profile shows as unsupported with the `nsys export` command that turns
 * one into the SQLite export this tool reads (nsys_sqlite_reader.c).
 */
#include "readers.h"

#include <stdio.h>
#include <string.h>

int xpv_claims_nsys_rep(const xpv_sniff_input *in)
{
    return xpv_sniff_name_ends(in, ".nsys-rep") || xpv_sniff_name_ends(in, ".qdrep");
}

void xpv_explain_nsys_rep(const char *path, char *out, size_t n)
{
    const char *dot = strrchr(path, '.');
    int stem = dot ? (int)(dot - path) : (int)strlen(path);
    snprintf(out, n,
             "Nsight Systems reports are readable only by nsys; export one with: "
             "nsys export --type sqlite --output %.*s.sqlite %s "
             "(write it outside the profile directory if that is read-only)",
             stem, path, path);
}
