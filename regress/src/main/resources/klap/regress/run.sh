#!/usr/bin/env bash
# run.sh: compiles and runs the benchmark variants that `klap regress --mode=prepare` put in this
# folder, and writes raw.csv (or, for a scale sweep, scale.csv) and env.properties next to itself.
# Plain bash + coreutils + nvcc: it runs on the GPU machine, which has no Java. See docs/regress.md.
#
#   bash run.sh [--compile-only] [--runs N] [--reps N] [--timeout S] [--jobs N] [--arch sm_XX]
#   --run-only runs the binaries of an earlier --compile-only in this folder without compiling
#   (compile while the GPU is busy with other work, then time on an idle machine).
#
# manifest.tsv (written by prepare) has one line per benchmark x variant:
#   name <TAB> variant <TAB> state <TAB> source <TAB> detail [<TAB> env]
# state is "ready" (source, relative to this folder, is compiled and run), "refused" (klap
# refused the benchmark in that variant; detail is its first diagnostic) or "missing"/
# "klap-error" (nothing to compile; detail says why). env ("-" or absent: none) is a list of
# NAME=VALUE words the binary runs with, e.g. KLAP_NP=inter-warp for a klap --np=all program.
# sweep.tsv (written by prepare --scale) makes this a scale sweep: one line per input size,
#   name <TAB> factor <TAB> size <TAB> program arguments
# and every variant of that benchmark runs with those arguments; after a timeout, the larger
# factors of that variant are skipped.
#
# Every binary runs as [env NAME=VALUE..] ./NAME.VARIANT -r REPS [ARGS] under `timeout S`, --runs
# times (defaults: 5 runs, 11 repetitions, 120 s), and must print PASS NAME time_ms=T [launches=L]
# [first_ms=F] [warm_ms=W] or FAIL NAME: reason. Over the runs, time_ms, first_ms and warm_ms are medians.
# raw.csv:   name,variant,status,time_ms,first_ms,warm_ms,launches,runs,detail
# scale.csv: name,variant,factor,size,args,status,time_ms,first_ms,warm_ms,launches,runs,detail
# status: pass, fail, timeout, crash, compile-error, compiled (--compile-only), refused, missing,
# klap-error, skipped (scale: a smaller input timed out).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
NVCC="${NVCC:-nvcc}"
compile_only=0 run_only=0 runs=5 reps=11 timeout_s=120 jobs="$(nproc 2>/dev/null || echo 2)" arch=sm_90
while [ $# -gt 0 ]; do
  case "$1" in
    --compile-only) compile_only=1 ;;
    --run-only) run_only=1 ;;
    --runs) runs="${2-}"; shift ;;
    --reps) reps="${2-}"; shift ;;
    --timeout) timeout_s="${2-}"; shift ;;
    --jobs) jobs="${2-}"; shift ;;
    --arch) arch="${2-}"; shift ;;
    -h|--help) sed -n '2,25p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
for v in "$runs" "$reps" "$timeout_s" "$jobs"; do
  [[ "$v" =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: expected a positive integer, got '$v'" >&2; exit 2; }
done
[ -f "$here/manifest.tsv" ] || { echo "run.sh: no manifest.tsv in $here (run klap regress --mode=prepare)" >&2; exit 2; }
command -v "$NVCC" >/dev/null || { echo "run.sh: $NVCC not found" >&2; exit 2; }
sweep=0
[ -f "$here/sweep.tsv" ] && [ $compile_only = 0 ] && sweep=1

state="$here/state" bin="$here/bin" logs="$here/logs"
if [ $run_only = 1 ]; then
  [ $compile_only = 0 ] || { echo "run.sh: --run-only and --compile-only exclude each other" >&2; exit 2; }
  [ -d "$bin" ] || { echo "run.sh: --run-only: no $bin (run --compile-only first)" >&2; exit 2; }
  rm -f "$state"/*.row
  mkdir -p "$logs"
else
  rm -rf "$state" "$bin" "$logs"
  mkdir -p "$state" "$bin" "$logs"
fi

# --- read the manifest and the sweep -----------------------------------------------------------
names=() variants=() states=() sources=() details=() envs=()
while IFS=$'\t' read -r n v s src d e; do
  [ -z "$n" ] && continue
  case "$n" in \#*) continue ;; esac
  [ "$src" = - ] && src=""
  [ "$d" = - ] && d=""
  [ "$e" = - ] && e=""
  names+=("$n"); variants+=("$v"); states+=("$s"); sources+=("$src"); details+=("$d"); envs+=("$e")
done < "$here/manifest.tsv"
count=${#names[@]}
ready=()
for ((i = 0; i < count; i++)); do [ "${states[$i]}" = ready ] && ready+=("$i"); done
total=${#ready[@]}
s_names=() s_factors=() s_sizes=() s_args=()
if [ $sweep = 1 ]; then
  while IFS=$'\t' read -r n f z a; do
    [ -z "$n" ] && continue
    case "$n" in \#*) continue ;; esac
    [ "$a" = - ] && a=""
    s_names+=("$n"); s_factors+=("$f"); s_sizes+=("$z"); s_args+=("$a")
  done < "$here/sweep.tsv"
fi

# --- the machine -----------------------------------------------------------------------------
smi() { command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu="$1" --format=csv,noheader 2>/dev/null | head -n 1; }
{
  echo "date=$(date +%Y-%m-%d)"
  echo "started=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host=$(hostname 2>/dev/null || echo unknown)"
  echo "device=$(smi name)"
  echo "driver=$(smi driver_version)"
  echo "cuda=$("$NVCC" --version 2>/dev/null | sed -n 's/.*release \([^,]*\), \(V[^ ]*\).*/\1 (\2)/p' | head -n 1)"
  echo "arch=$arch"
  echo "mode=$([ $compile_only = 1 ] && echo compile || { [ $sweep = 1 ] && echo scale || echo run; })"
  echo "runs=$runs"
  echo "reps=$reps"
  echo "timeout_s=$timeout_s"
  [ $sweep = 1 ] && echo "factors=$(printf '%s\n' "${s_factors[@]}" | sort -n -u | paste -s -d, -)"
} > "$here/env.properties"

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
secs() { printf '%d.%d' $(( $1 / 1000 )) $(( ($1 % 1000) / 100 )); }
csv() { # one CSV field, quoted when needed (RFC 4180)
  local s="${1//$'\r'/ }"; s="${s//$'\n'/ }"
  if [[ "$s" == *[,\"]* ]]; then s="\"${s//\"/\"\"}\""; fi
  printf '%s' "$s"
}
first_error() { # the first line of a log that looks like an error, else its first line
  local l; l="$(grep -m 1 -E 'error|Error|ERROR' "$1" 2>/dev/null)"
  [ -n "$l" ] || l="$(head -n 1 "$1" 2>/dev/null)"
  printf '%s' "${l:0:300}"
}

# --- compile, $jobs at a time --------------------------------------------------------------------
compile_one() { # position index
  local k=$1 i=$2 n="${names[$2]}" v="${variants[$2]}" src="$here/${sources[$2]}"
  local key="$n.$v" t0 t1 st
  t0=$(now_ms)
  if "$NVCC" -std=c++17 -O3 -rdc=true -lineinfo -arch="$arch" -I "$here/src" -I "$here/src/$n" \
       -o "$bin/$key" "$src" > "$logs/$key.compile.log" 2>&1; then st=ok; else st=failed; fi
  t1=$(now_ms)
  echo "$st" > "$state/$key.compile"
  # one printf, so that the lines of parallel jobs do not interleave
  local msg
  msg="$(printf '[%2d/%d] %-14s compile %s %s s' "$k" "$total" "$n/$v" "$st" "$(secs $((t1 - t0)))")"
  if [ $st = failed ]; then
    msg+=$'\n'"$(grep -m 3 -E 'error' "$logs/$key.compile.log" | cut -c1-200 | sed 's/^/        /')"
  fi
  printf '%s\n' "$msg"
  return 0
}
[ $run_only = 1 ] && echo "running the binaries of an earlier --compile-only"
[ $run_only = 1 ] || echo "compiling $total variants with $NVCC -arch=$arch, $jobs at a time"
running=0 k=0
[ $run_only = 1 ] || for i in "${ready[@]}"; do
  k=$((k + 1))
  compile_one "$k" "$i" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
done
wait

# --- run -----------------------------------------------------------------------------------------
median() { sort -g | awk '{a[NR] = $1} END { if (NR == 0) exit; if (NR % 2) print a[(NR + 1) / 2]; else printf "%.6g\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
num='([0-9.eE+-]+)'
run_env=""
# measure KEY LOGTAG [ARGS...]: runs bin/KEY -r $reps ARGS $runs times, one at a time, each under
# timeout, with the NAME=VALUE words of $run_env (the manifest's env) in its environment; sets st
# (pass|fail|timeout|crash), d (why not), ok (passing runs), t/f/w (medians of time_ms, first_ms,
# warm_ms over the runs; empty when no run printed it) and l (launches).
measure() {
  local key=$1 tag=$2 r rc line out rest times=() firsts=() warms=()
  shift 2
  st=pass d="" ok=0 t="" f="" w="" l=""
  for ((r = 1; r <= runs; r++)); do
    out="$logs/$key$tag.run$r.log"
    # shellcheck disable=SC2086 # run_env: NAME=VALUE words without blanks
    (cd "$bin" && env $run_env timeout -k 10 "$timeout_s" "./$key" -r "$reps" "$@") > "$out" 2>&1
    rc=$?
    line="$(grep -E '^(PASS|FAIL)( |:)' "$out" | tail -n 1)"
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then st=timeout d="run $r: no result after ${timeout_s} s"; break; fi
    if [[ "$line" == FAIL* ]]; then st=fail d="run $r: $line"; break; fi
    if [ $rc -gt 128 ]; then st=crash d="run $r: killed by signal $((rc - 128))${line:+; $line}"; break; fi
    if [ $rc -ne 0 ]; then st=fail d="run $r: exit status $rc: $(first_error "$out")"; break; fi
    if [[ "$line" =~ ^PASS\ [^\ ]+\ time_ms=$num(\ .*)?$ ]]; then
      times+=("${BASH_REMATCH[1]}")
      rest=" ${BASH_REMATCH[2]} "
      [[ "$rest" =~ \ launches=([0-9]+)\  ]] && l="${BASH_REMATCH[1]}"
      if [[ "$rest" =~ \ first_ms=$num\  ]]; then firsts+=("${BASH_REMATCH[1]}")
      elif [ "$reps" = 1 ]; then firsts+=("${times[-1]}")  # an older program: with -r 1, its time is the first
      fi
      [[ "$rest" =~ \ warm_ms=$num\  ]] && warms+=("${BASH_REMATCH[1]}")
      ok=$((ok + 1))
    else
      st=fail d="run $r: no 'PASS NAME time_ms=...' line: $(first_error "$out")"; break
    fi
  done
  if [ $st = pass ]; then
    t="$(printf '%s\n' "${times[@]}" | median)"
    [ ${#firsts[@]} -gt 0 ] && f="$(printf '%s\n' "${firsts[@]}" | median)"
    [ ${#warms[@]} -gt 0 ] && w="$(printf '%s\n' "${warms[@]}" | median)"
  fi
  return 0
}
# one progress line from what measure set
progress() { # k total label
  if [ $st = pass ]; then
    local what
    if [ -n "$w" ]; then what="warm $w ms, first $f ms"
    elif [ -n "$f" ]; then what="first $f ms"
    else what="$t ms"
    fi
    printf '[%2d/%d] %-14s PASS %s (median of %d)%s\n' "$1" "$2" "$3" "$what" "$ok" "${l:+, $l launches}"
  else
    printf '[%2d/%d] %-14s %s: %s\n' "$1" "$2" "$3" "$(echo "$st" | tr a-z A-Z)" "$d"
  fi
}
# the measured CSV fields: status,time_ms,first_ms,warm_ms,launches,runs,detail
measured_fields() {
  if [ $st = pass ]; then printf 'pass,%s,%s,%s,%s,%d,' "$t" "$f" "$w" "$l" "$ok"
  else printf '%s,,,,,%d,%s' "$st" "$ok" "$(csv "$d")"
  fi
}
compiled=()
for i in "${ready[@]}"; do
  [ "$(cat "$state/${names[$i]}.${variants[$i]}.compile" 2>/dev/null)" = ok ] && compiled+=("$i")
done
# the CSV fields status,...,detail of a variant that did not compile or was never ready
not_run_fields() { # index
  local key="${names[$1]}.${variants[$1]}"
  if [ "${states[$1]}" != ready ]; then
    printf '%s,,,,,0,%s' "$(csv "${states[$1]}")" "$(csv "${details[$1]}")"
  elif [ "$(cat "$state/$key.compile" 2>/dev/null)" != ok ]; then
    printf 'compile-error,,,,,0,%s' "$(csv "$(first_error "$logs/$key.compile.log")")"
  else
    printf 'compiled,,,,,0,'
  fi
}

if [ $sweep = 1 ]; then
  # --- scale sweep: every variant of a benchmark at every size of sweep.tsv, smallest first ----------
  out="$here/scale.csv"
  rtotal=0
  for ((j = 0; j < ${#s_names[@]}; j++)); do
    for i in "${compiled[@]}"; do [ "${names[$i]}" = "${s_names[$j]}" ] && rtotal=$((rtotal + 1)); done
  done
  echo "scale sweep: $rtotal runs of ${#s_names[@]} sizes, $runs runs each (-r $reps), timeout $timeout_s s"
  k=0
  echo "name,variant,factor,size,args,status,time_ms,first_ms,warm_ms,launches,runs,detail" > "$out.tmp"
  for ((i = 0; i < count; i++)); do
    n="${names[$i]}" v="${variants[$i]}" key="${names[$i]}.${variants[$i]}" timed_out=""
    runnable=0
    [ "$(cat "$state/$key.compile" 2>/dev/null)" = ok ] && runnable=1
    for ((j = 0; j < ${#s_names[@]}; j++)); do
      [ "${s_names[$j]}" = "$n" ] || continue
      fz="${s_factors[$j]}"
      prefix="$(csv "$n"),$(csv "$v"),$fz,${s_sizes[$j]},$(csv "${s_args[$j]}")"
      if [ $runnable = 0 ]; then
        echo "$prefix,$(not_run_fields "$i")" >> "$out.tmp"
      elif [ -n "$timed_out" ]; then
        echo "$prefix,skipped,,,,,0,$(csv "not run: timed out at ${timed_out}x")" >> "$out.tmp"
        k=$((k + 1))
        printf '[%2d/%d] %-14s SKIPPED: timed out at %sx\n' "$k" "$rtotal" "$n/$v x$fz" "$timed_out"
      else
        read -r -a argv <<< "${s_args[$j]}"
        run_env="${envs[$i]}"
        measure "$key" ".x$fz" "${argv[@]}"
        [ $st = timeout ] && timed_out="$fz"
        echo "$prefix,$(measured_fields)" >> "$out.tmp"
        k=$((k + 1))
        progress "$k" "$rtotal" "$n/$v x$fz"
      fi
    done
  done
  mv "$out.tmp" "$out"
  col=6
else
  if [ $compile_only = 0 ]; then
    rtotal=${#compiled[@]}
    echo "running $rtotal variants, $runs runs each (-r $reps), timeout $timeout_s s"
    k=0
    for i in "${compiled[@]}"; do
      k=$((k + 1))
      key="${names[$i]}.${variants[$i]}"
      run_env="${envs[$i]}"
      measure "$key" ""
      measured_fields > "$state/$key.row"
      progress "$k" "$rtotal" "${names[$i]}/${variants[$i]}"
    done
  fi
  # --- raw.csv, in manifest order -------------------------------------------------------------------
  out="$here/raw.csv"
  {
    echo "name,variant,status,time_ms,first_ms,warm_ms,launches,runs,detail"
    for ((i = 0; i < count; i++)); do
      key="${names[$i]}.${variants[$i]}"
      printf '%s,%s,' "$(csv "${names[$i]}")" "$(csv "${variants[$i]}")"
      if [ -f "$state/$key.row" ]; then cat "$state/$key.row"; else not_run_fields "$i"; fi
      echo
    done
  } > "$out.tmp" && mv "$out.tmp" "$out"
  col=3
fi

# --- summary ---------------------------------------------------------------------------------------
echo "results: $out"
tail -n +2 "$out" | awk -F, -v c=$col '{print $c}' | sort | uniq -c | awk '{printf "  %-14s %d\n", $2, $1}'
bad="$(tail -n +2 "$out" | awk -F, -v c=$col '$c != "pass" && $c != "compiled" && $c != "refused"' | wc -l)"
[ "$bad" -eq 0 ]
