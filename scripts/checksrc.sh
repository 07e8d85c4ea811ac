#!/usr/bin/env bash
# checksrc.sh — the rules the build enforces on the source, beside the
# compiler's warnings (the way curl's checksrc does): called by
# scripts/test.sh, runnable alone. Prints each breach as FILE:LINE: RULE
# and exits 1 when there is any.
#
#   header     every C file opens with a comment naming it: "/*\n * name.c — job"
#   format     clang-format (the repo's .clang-format) would change nothing
#   layering   the folders are layers, each knowing only those below it:
#              common/ < store/ < indexer/ < api/ < server/ < app/; no SQL
#              in server/ or app/; readers/ never include discovery
#   tables     the tables in STORE_TABLES are read only through their store
#              module (store/<table>.c): no SQL text outside store/ names
#              them, but for the writers in STORE_WRITERS
#   length     no C function body longer than 100 lines
#   circles    at most 3 loops of files that include or call each other
#              (scripts/circles.py prints them with the names that tie them)
#   size       no source file (C, header, JS, Python) longer than 900 lines:
#              split it by concern
#   js         page modules import no other page module; prettier is clean
# No pipefail: each check below is `… | grep . && bad=1`, which must
# follow grep alone (a grep that matches nothing earlier in the pipe is
# not a breach).
set -u
cd "$(dirname "$0")/.."
bad=0
fail() { echo "$1"; bad=1; }

c_files=$(git ls-files '*.c' '*.h')

for f in $c_files; do
  name=$(basename "$f")
  [ "$(sed -n 1p "$f")" = "/*" ] && sed -n 2p "$f" | grep -q "^ \* $name — " ||
    fail "$f:1: header: the file must open with /* and \" * $name — what it does\""
done

command -v clang-format >/dev/null || { echo "checksrc: clang-format is not installed"; exit 1; }
for f in $c_files; do
  clang-format --dry-run -Werror "$f" >/dev/null 2>&1 ||
    fail "$f: format: clang-format would change it (run clang-format -i $f)"
done

for f in $(git ls-files 'server/*.c' 'server/*.h' 'app/*.c' 'app/*.h'); do
  grep -n 'sqlite3_prepare\|sqlite3_exec\|sqlite3_step\|sqlite3_get_table' "$f" |
    while IFS=: read -r line _; do echo "$f:$line: layering: SQL belongs in store/, indexer/ or api/"; done
done | grep . && bad=1
check_includes() { # dir, forbidden include pattern, why
  git ls-files "$1*.c" "$1*.h" | xargs grep -nE "^#include \"$2" /dev/null |
    while IFS=: read -r f line _; do echo "$f:$line: layering: $3"; done
}
{
  check_includes common/ '(\.\./)*(store|indexer|api|server|app)/' "common/ depends on nothing"
  check_includes store/ '(\.\./)+(indexer|api|server|app)/' "store/ knows only common/"
  check_includes indexer/ '(\.\./)+(api|server|app)/' "indexer/ knows nothing of api/, server/ or app/"
  check_includes api/ '(\.\./)+(server|app)/' "api/ knows nothing of server/ or app/"
  check_includes server/ '(\.\./)+app/' "server/ knows nothing of app/"
  check_includes indexer/readers/ '\.\./(discover|indexer)\.h' "readers know the registry, not discovery"
} | grep . && bad=1

# The tables whose every read goes through store/<table>.c, and the files
# that still write them (each module's header says why).
STORE_TABLES='steps|kernel_stats|kernel_device_stats|profiles|tracks|strings|findings|compile_marks'
STORE_WRITERS='indexer/analysis/step_breakdown.c indexer/analysis/kernel_rows.c'
STORE_WRITERS="$STORE_WRITERS indexer/indexer.c indexer/index_file.c indexer/ingest_rows.c"
# SQL text: a file's string literals, adjacent ones joined, comments aside.
git ls-files 'common/*.[ch]' 'indexer/*.[ch]' 'api/*.[ch]' 'server/*.[ch]' 'app/*.[ch]' |
  while read -r f; do
    case " $STORE_WRITERS " in *" $f "*) continue ;; esac
    T="$STORE_TABLES" perl -0777 -ne '
      my (@runs, $end);
      while (m{("(?:[^"\\\n]|\\.)*")|'"'"'(?:[^'"'"'\\\n]|\\.)*'"'"'|/\*.*?\*/|//[^\n]*}gs) {
        next unless defined $1;
        my ($text, $at) = (substr($1, 1, -1), $-[0]);
        if (@runs && substr($_, $end, $at - $end) =~ /^\s*$/) { $runs[-1][1] .= $text }
        else { push @runs, [$at, $text] }
        $end = $+[0];
      }
      for my $r (@runs) {
        next unless $r->[1] =~ /\b(?:FROM|JOIN|INTO|UPDATE|TABLE|INDEXED\s+BY)\s+(?:\w+(?:\s+\w+)?\s*,\s*)?($ENV{T})\b/;
        my $line = 1 + (substr($_, 0, $r->[0]) =~ tr/\n//);
        print "$ARGV:$line: tables: SQL on `$1` belongs in store/$1.c\n";
      }' "$f"
  done | grep . && bad=1

for f in $(git ls-files '*.c'); do
  awk -v f="$f" '
    /^\{/ { start = NR }
    /^\}/ && start { if (NR - start - 1 > 100) printf "%s:%d: length: function body of %d lines (100 at most)\n", f, start, NR - start - 1; start = 0 }
  ' "$f"
done | grep . && bad=1

out=$(python3 scripts/circles.py) || { echo "$out" | sed 's/^/circles: /'; bad=1; }
git ls-files '*.c' '*.h' '*.js' '*.mjs' '*.py' | xargs wc -l | grep -v ' total$' |
  while read -r n f; do
    [ "$n" -gt 900 ] && echo "$f:1: size: $n lines (900 at most; split the file by concern)"
  done | grep . && bad=1

pages='profiles|overview|kernels|timeline|tools|tensorboard'
git ls-files 'static/js/*.js' | grep -v '^static/js/app.js$' | xargs grep -nE "from '\./($pages)\.js'" |
  while IFS=: read -r f line _; do echo "$f:$line: js: a page module imports another page; share through a helper module"; done |
  grep . && bad=1
if [ -x scripts/check_js_format.sh ]; then
  scripts/check_js_format.sh || fail "static/js: js: prettier would change files (scripts/check_js_format.sh)"
fi

[ "$bad" = 0 ] && echo "checksrc: ok" || echo "checksrc: breaches found"
exit "$bad"
