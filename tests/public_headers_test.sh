#!/usr/bin/env bash
# The line between the public headers and the engine's: every bundled app and every example builds
# against the public headers (include/schmp/, the kernels library's kernels/include/schmp/kernels/)
# and its own folder's files only, as a user's program does, and never names include/schmp/internal/.
# usage: public_headers_test.sh SOURCE_DIR
set -euo pipefail
cd "$1"
status=0
files=0
while IFS= read -r -d '' file; do
  files=$((files + 1))
  dir=$(dirname "$file")
  while IFS= read -r header; do
    if [[ $header == schmp/internal/* ]]; then
      echo "$file: includes the engine's $header"; status=1
    elif [[ -f "$dir/$header" && $header != *..* ]] || [[ -f "include/$header" || -f "kernels/include/$header" ]]; then
      continue
    elif [[ $header == schmp/* || $header == *..* || -e "${header%%/*}" && $header == */* ]]; then
      # A schmp header that is not public, or a file of this tree outside the program's folder.
      echo "$file: includes $header, which is no public header"; status=1
    fi
  done < <(sed -n 's/^#include ["<]\([^">]*\)[">].*/\1/p' "$file")
done < <(find apps examples -name '*.cpp' -print0 -o -name '*.hpp' -print0)
if ((files < 10)); then echo "public_headers: only $files sources under apps/ and examples/ in $PWD"; status=1; fi
if ((status == 0)); then echo "public_headers: every app and example ($files files) includes public headers only"; fi
exit $status
