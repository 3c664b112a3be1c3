#!/usr/bin/env bash
# Compiles every testcases/src/*.cu program for sm_90 with relocatable device code
# (required for device-side launches) into the build directory $1 (default /tmp/klap-tc),
# two files at a time. Prints one line per file; exits non-zero if any compilation fails.
# Environment: NVCC (default nvcc), JOBS (default 2), NVCC_FLAGS (extra flags, default none).
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
src="$here/src"
out="${1:-/tmp/klap-tc}"
nvcc_bin="${NVCC:-nvcc}"
jobs="${JOBS:-2}"
mkdir -p "$out/logs" || exit 2

shopt -s nullglob
files=("$src"/*.cu)
if [ ${#files[@]} -eq 0 ]; then
    echo "no .cu files in $src" >&2
    exit 2
fi

compile_one() {
    local f="$1" name
    name="$(basename "$f" .cu)"
    local start=$SECONDS
    # shellcheck disable=SC2086
    if "$nvcc_bin" -std=c++17 -rdc=true -arch=sm_90 ${NVCC_FLAGS:-} "$f" -o "$out/$name" \
        >"$out/logs/$name.log" 2>&1; then
        echo "OK   $name ($((SECONDS - start)) s)"
    else
        echo "FAIL $name (see $out/logs/$name.log)"
        sed 's/^/     /' "$out/logs/$name.log" | head -n 20
        return 1
    fi
}
export -f compile_one
export out nvcc_bin

printf '%s\0' "${files[@]}" | xargs -0 -n 1 -P "$jobs" bash -c 'compile_one "$1"' _
rc=$?
if [ $rc -ne 0 ]; then
    echo "compile-all: some programs failed to compile" >&2
    exit 1
fi
echo "compile-all: ${#files[@]} programs built in $out"
