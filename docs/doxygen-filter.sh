#!/bin/sh
# docs/doxygen-filter.sh FILE — Doxygen's input filter for the C++ reference (docs/Doxyfile). The
# headers are commented in plain // lines, which Doxygen would skip, so here:
#   - the comment block that opens the file describes the file (@file);
#   - any other comment on lines of its own documents what follows it;
#   - a comment after a declaration on its line documents that declaration (///<).
# The headers themselves stay as they are.
exec awk '
  NR == 1 && /^\/\// { opening = 1; print "/// @file" }
  opening && !/^\/\// { opening = 0 }
  /^[[:space:]]*\/\/[^\/!]/ || /^[[:space:]]*\/\/$/ { sub(/\/\//, "///"); print; next }
  match($0, /[;,{][[:space:]]*\/\/[[:space:]]/) {
    rest = substr($0, RSTART + 1); sub(/\/\//, "///<", rest); print substr($0, 1, RSTART) rest; next
  }
  { print }
' "$1"
