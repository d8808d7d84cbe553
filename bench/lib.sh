# bench/lib.sh: helpers shared by bench/overhead.sh and bench/repro.sh (sourced; bash + awk).
# The same conventions as bench/run.sh (which keeps its own copies): times in microseconds, a
# failing command stops the benchmark with its stderr.
#
# The caller sets WORK (a scratch directory) before using timed.

# Sets _T to the wall clock in microseconds (no fork with bash >= 5).
stamp() {
  if [[ -n ${EPOCHREALTIME:-} ]]; then
    _T=${EPOCHREALTIME/./}
  else
    _T=$(($(date +%s%N) / 1000))
  fi
}

# timed STDOUT_FILE cmd...: runs cmd, sets ELAPSED_US; stops the benchmark if cmd fails.
timed() {
  local out=$1 t0
  shift
  stamp
  t0=$_T
  if ! "$@" >"$out" 2>"$WORK/stderr"; then
    echo "bench: command failed: $*" >&2
    cat "$WORK/stderr" >&2
    exit 1
  fi
  stamp
  ELAPSED_US=$((_T - t0))
}

# median, minimum, maximum of the arguments (any numbers).
median() {
  printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 }
    END { if (NR % 2) print a[(NR + 1) / 2]; else printf "%.6f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
minimum() { printf '%s\n' "$@" | sort -g | head -n 1; }
maximum() { printf '%s\n' "$@" | sort -g | tail -n 1; }

# calc EXPR: awk arithmetic on numbers (printf format inside EXPR).
calc() { awk "BEGIN { $1 }"; }

passmiss() { # passmiss VALUE OP TARGET -> PASS or MISS
  calc "print (($1 $2 $3) ? \"PASS\" : \"MISS\")"
}

# A top-level number field ("  \"name\": value") of a `tasklens report --format json` output.
json_top() { awk -v k="\"$2\":" '$1 == k && /^  "/ { v = $2; sub(/,$/, "", v); print v; exit }' "$1"; }
# A number field of the top-level "program" object.
json_program() {
  awk -v k="\"$2\":" '/^  "program": \{/ { in_p = 1; next } in_p && /^  }/ { exit }
    in_p && $1 == k { v = $2; sub(/,$/, "", v); print v; exit }' "$1"
}
# json_any FILE KEY: the value of the first "KEY": anywhere in the file, whatever the layout: a
# number or string as is, an object or array squeezed onto one line (quotes and spaces dropped);
# "-" when the key is absent. For keys whose place in the report is not settled yet.
json_any() {
  tr '\n' ' ' <"$1" | awk -v k="\"$2\"" '{
    i = index($0, k); if (!i) { print "-"; exit }
    s = substr($0, i + length(k)); sub(/^[ \t]*:[ \t]*/, "", s)
    c = substr(s, 1, 1)
    if (c == "{" || c == "[") {
      d = 0
      for (j = 1; j <= length(s); j++) {
        ch = substr(s, j, 1)
        if (ch == "{" || ch == "[") d++
        else if (ch == "}" || ch == "]") { d--; if (d == 0) break }
      }
      v = substr(s, 1, j); gsub(/[" \t]/, "", v); print v; exit
    }
    match(s, /^("[^"]*"|[^,} \t]+)/); v = substr(s, 1, RLENGTH); gsub(/"/, "", v); print v }'
}
# The "tasks=N" a suite program printed.
out_tasks() { sed -n 's/.* tasks=\([0-9]*\).*/\1/p' "$1"; }

json_str() { local s=${1//\\/\\\\}; s=${s//\"/\\\"}; printf '"%s"' "$s"; }
# json_num V: V as a JSON number; null for "-" (absent); a string when not a number.
json_num() {
  if [[ $1 == - || -z $1 ]]; then printf null
  elif [[ $1 =~ ^-?[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?$ ]]; then printf '%s' "$1"
  else json_str "$1"; fi
}
join_json() { local IFS=,; echo "$*"; }
us_list() { printf '%s\n' "$@" | awk '{ printf "%s%.6f", (NR > 1 ? ", " : "["), $1 / 1e6 } END { print "]" }'; }

# cache_get VAR: a variable of BUILD's CMakeCache.txt.
cache_get() { sed -n "s/^$1:[A-Z]*=//p" "$BUILD/CMakeCache.txt" 2>/dev/null | head -n 1; }
