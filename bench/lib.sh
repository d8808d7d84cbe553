# bench/lib.sh: helpers shared by the bench scripts (sourced; bash + awk): times in
# microseconds, a failing command stops the benchmark with its stderr.
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

# killable cmd...: runs cmd and returns its status, in a way that a TERM or INT sent to the
# script (`pkill -f bench/scale.sh`) stops cmd and everything it started too: bash runs a trap
# only once its foreground command has returned, so cmd runs in the background while the
# script waits for it, and the trap (bench_stop_children_on_signal) takes the tree down.
killable() {
  "$@" &
  local rc=0
  wait "$!" || rc=$?
  return "$rc"
}

# kill_tree PID: TERM to PID's descendants, then to PID.
kill_tree() {
  local child
  for child in $(pgrep -P "$1"); do kill_tree "$child"; done
  kill -TERM "$1" 2>/dev/null || true
}

# bench_stop_children_on_signal: on TERM or INT, stop every process the script started (their
# whole trees) and exit (the EXIT trap still removes $WORK).
bench_stop_children_on_signal() {
  trap 'for c in $(pgrep -P $$); do kill_tree "$c"; done; exit 143' TERM INT
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

# bench_build_dir NAME [BUILD_DIR]: sets BUILD, OUT, TL and EXAMPLES from the build directory
# (default ./build), or stops with a message naming the script.
bench_build_dir() {
  local name=$1 arg=${2:-./build}
  if [[ ! -d $arg ]]; then
    echo "$name: build directory '$arg' not found; configure and build first:" >&2
    echo "  cmake -S . -B build -G Ninja && cmake --build build" >&2
    exit 2
  fi
  BUILD=$(cd "$arg" && pwd)
  OUT=$BUILD/bench
  TL=$BUILD/tasklens
  EXAMPLES=$BUILD/examples
}

# bench_build NAME TARGET...: builds the targets (deduplicated) in BUILD, if any are given.
bench_build() {
  local name=$1
  shift
  (($#)) || return 0
  echo "$name: building $* in $BUILD" >&2
  cmake --build "$BUILD" --target $(printf '%s\n' "$@" | sort -u) >&2
}

# bench_runtime NAME: sets RT to LLVM 16's runtime, the one this build's `record` preloads (the
# plain runs preload it too), as an absolute path; stops if it is missing.
bench_runtime() {
  RT=$(cache_get TASKLENS_OMP_RUNTIME)
  [[ -n $RT && -f $RT ]] || RT=$SRC/third_party/libomp16/libomp.so.5
  if [[ ! -f $RT ]]; then
    echo "$1: LLVM 16's libomp not found ($RT): run scripts/fetch-libomp16.sh" >&2
    exit 2
  fi
  RT=$(cd "$(dirname "$RT")" && pwd)/$(basename "$RT")
}

# bench_scratch NAME: clears the OpenMP settings that would change the runs and sets WORK to a
# scratch directory removed at exit.
bench_scratch() {
  unset LD_PRELOAD OMP_TOOL OMP_TOOL_LIBRARIES OMP_TOOL_VERBOSE_INIT OMP_NUM_THREADS
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/tasklens-$1.XXXXXX")
  trap 'rm -rf "$WORK"' EXIT
}

# suite_args PREFIX SHAPE: the bench-size arguments of a suite shape with tiny tasks (fib 29,
# nqueens 11, health 6 1000, uts 10 0), or ${PREFIX}_<SHAPE>_ARGS when that is set.
suite_args() {
  local var="${1}_${2^^}_ARGS"
  local -A size=([fib]=29 [nqueens]=11 [health]="6 1000" [uts]="10 0")
  echo "${!var:-${size[$2]}}"
}
