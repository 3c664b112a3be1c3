#!/usr/bin/env bash
# run.sh: compiles and runs the benchmark variants that `klap regress --mode=prepare` put in this
# folder, and writes raw.csv and env.properties next to itself. Plain bash + coreutils + nvcc:
# it runs on the GPU machine, which has no Java. See docs/regress.md.
#
#   bash run.sh [--compile-only] [--runs N] [--reps N] [--timeout S] [--jobs N] [--arch sm_XX]
#
# manifest.tsv (written by prepare) has one line per benchmark x variant:
#   name <TAB> variant <TAB> state <TAB> source <TAB> detail
# state is "ready" (source, relative to this folder, is compiled and run), "refused" (klap
# refused the benchmark at that granularity; detail is its first diagnostic) or "missing"/
# "klap-error" (nothing to compile; detail says why).
#
# raw.csv: name,variant,status,time_ms,launches,runs,detail with status one of
#   pass, fail, timeout, crash, compile-error, compiled (--compile-only), refused, missing, klap-error.
# time_ms is the median over the N process runs of the time_ms each run printed.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
NVCC="${NVCC:-nvcc}"
compile_only=0 runs=5 reps=1 timeout_s=120 jobs="$(nproc 2>/dev/null || echo 2)" arch=sm_90
while [ $# -gt 0 ]; do
  case "$1" in
    --compile-only) compile_only=1 ;;
    --runs) runs="$2"; shift ;;
    --reps) reps="$2"; shift ;;
    --timeout) timeout_s="$2"; shift ;;
    --jobs) jobs="$2"; shift ;;
    --arch) arch="$2"; shift ;;
    -h|--help) sed -n '2,18p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
for v in "$runs" "$reps" "$timeout_s" "$jobs"; do
  [[ "$v" =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: expected a positive integer, got '$v'" >&2; exit 2; }
done
[ -f "$here/manifest.tsv" ] || { echo "run.sh: no manifest.tsv in $here (run klap regress --mode=prepare)" >&2; exit 2; }
command -v "$NVCC" >/dev/null || { echo "run.sh: $NVCC not found" >&2; exit 2; }

state="$here/state" bin="$here/bin" logs="$here/logs"
rm -rf "$state" "$bin" "$logs"
mkdir -p "$state" "$bin" "$logs"

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
  echo "mode=$([ $compile_only = 1 ] && echo compile || echo run)"
  echo "runs=$runs"
  echo "reps=$reps"
  echo "timeout_s=$timeout_s"
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

# --- read the manifest -------------------------------------------------------------------------
names=() variants=() states=() sources=() details=()
while IFS=$'\t' read -r n v s src d; do
  [ -z "$n" ] && continue
  case "$n" in \#*) continue ;; esac
  [ "$src" = - ] && src=""
  [ "$d" = - ] && d=""
  names+=("$n"); variants+=("$v"); states+=("$s"); sources+=("$src"); details+=("$d")
done < "$here/manifest.tsv"
count=${#names[@]}
ready=()
for ((i = 0; i < count; i++)); do [ "${states[$i]}" = ready ] && ready+=("$i"); done
total=${#ready[@]}

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
echo "compiling $total variants with $NVCC -arch=$arch, $jobs at a time"
running=0 k=0
for i in "${ready[@]}"; do
  k=$((k + 1))
  compile_one "$k" "$i" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
done
wait

# --- run, one at a time --------------------------------------------------------------------------
median() { sort -g | awk '{a[NR] = $1} END { if (NR == 0) exit; if (NR % 2) print a[(NR + 1) / 2]; else printf "%.6g\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
run_one() { # position index
  local k=$1 i=$2 n="${names[$2]}" v="${variants[$2]}" key r rc line out times=() launches="" st=pass d=""
  key="$n.$v"
  for ((r = 1; r <= runs; r++)); do
    out="$logs/$key.run$r.log"
    (cd "$bin" && timeout -k 10 "$timeout_s" "./$key" -r "$reps") > "$out" 2>&1
    rc=$?
    line="$(grep -E '^(PASS|FAIL)( |:)' "$out" | tail -n 1)"
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then st=timeout d="run $r: no result after ${timeout_s} s"; break; fi
    if [[ "$line" == FAIL* ]]; then st=fail d="run $r: $line"; break; fi
    if [ $rc -gt 128 ]; then st=crash d="run $r: killed by signal $((rc - 128))${line:+; $line}"; break; fi
    if [ $rc -ne 0 ]; then st=fail d="run $r: exit status $rc: $(first_error "$out")"; break; fi
    if [[ "$line" =~ ^PASS\ [^\ ]+\ time_ms=([0-9.eE+-]+)(\ launches=([0-9]+))? ]]; then
      times+=("${BASH_REMATCH[1]}")
      [ -n "${BASH_REMATCH[3]}" ] && launches="${BASH_REMATCH[3]}"
    else
      st=fail d="run $r: no 'PASS NAME time_ms=...' line: $(first_error "$out")"; break
    fi
  done
  if [ $st = pass ]; then
    local t; t="$(printf '%s\n' "${times[@]}" | median)"
    printf '%s,%s,pass,%s,%s,%d,\n' "$(csv "$n")" "$(csv "$v")" "$t" "$launches" "${#times[@]}" > "$state/$key.row"
    printf '[%2d/%d] %-14s PASS %s ms (median of %d)%s\n' "$k" "$rtotal" "$n/$v" "$t" "${#times[@]}" "${launches:+, $launches launches}"
  else
    printf '%s,%s,%s,,,%d,%s\n' "$(csv "$n")" "$(csv "$v")" "$st" "${#times[@]}" "$(csv "$d")" > "$state/$key.row"
    printf '[%2d/%d] %-14s %s: %s\n' "$k" "$rtotal" "$n/$v" "$(echo "$st" | tr a-z A-Z)" "$d"
  fi
}
compiled=()
for i in "${ready[@]}"; do
  [ "$(cat "$state/${names[$i]}.${variants[$i]}.compile" 2>/dev/null)" = ok ] && compiled+=("$i")
done
if [ $compile_only = 0 ]; then
  rtotal=${#compiled[@]}
  echo "running $rtotal variants, $runs runs each (-r $reps), timeout $timeout_s s"
  k=0
  for i in "${compiled[@]}"; do k=$((k + 1)); run_one "$k" "$i"; done
fi

# --- raw.csv, in manifest order -------------------------------------------------------------------
raw="$here/raw.csv"
{
  echo "name,variant,status,time_ms,launches,runs,detail"
  for ((i = 0; i < count; i++)); do
    n="${names[$i]}" v="${variants[$i]}" key="${names[$i]}.${variants[$i]}"
    case "${states[$i]}" in
      ready)
        c="$(cat "$state/$key.compile" 2>/dev/null)"
        if [ "$c" != ok ]; then
          printf '%s,%s,compile-error,,,0,%s\n' "$(csv "$n")" "$(csv "$v")" "$(csv "$(first_error "$logs/$key.compile.log")")"
        elif [ $compile_only = 1 ]; then
          printf '%s,%s,compiled,,,0,\n' "$(csv "$n")" "$(csv "$v")"
        else
          cat "$state/$key.row"
        fi ;;
      *) printf '%s,%s,%s,,,0,%s\n' "$(csv "$n")" "$(csv "$v")" "$(csv "${states[$i]}")" "$(csv "${details[$i]}")" ;;
    esac
  done
} > "$raw.tmp" && mv "$raw.tmp" "$raw"

# --- summary ---------------------------------------------------------------------------------------
echo "results: $raw"
tail -n +2 "$raw" | cut -d, -f3 | sort | uniq -c | awk '{printf "  %-14s %d\n", $2, $1}'
bad="$(tail -n +2 "$raw" | awk -F, '$3 != "pass" && $3 != "compiled" && $3 != "refused"' | wc -l)"
[ "$bad" -eq 0 ]
