#!/bin/bash
# fork-model.sh — builds scripts/fork-model.c (a model of child stealing's fork: fib by hand,
# one kind of store at a time taken away) with each compiler of CCS (default: cc) and runs
# it pinned to one CPU.
#   scripts/fork-model.sh [N] [ROUNDS] [CPU]     (defaults: 32, 11, the last CPU this process
#                                                  may run on)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
n=${1:-32}
rounds=${2:-11}
if [ -n "${3:-}" ]; then
    cpu=$3
else # (the last of Cpus_allowed_list, e.g. "0-3,8-11": a cpuset may leave out the others)
    cpu=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status 2>/dev/null | tr ',' '\n' | tail -n 1 | sed 's/.*-//')
    cpu=${cpu:-$(($(getconf _NPROCESSORS_ONLN) - 1))}
fi
pin=()
if command -v taskset >/dev/null; then pin=(taskset -c "$cpu"); else cpu="not pinned (no taskset)"; fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for cc in ${CCS:-cc}; do
    "$cc" -O2 -std=c11 -Wall -Wextra -Werror -o "$out/fork-model" "$here/fork-model.c"
    echo "$cc ($("$cc" --version | head -n 1)), CPU $cpu of $(getconf _NPROCESSORS_ONLN):"
    ${pin[@]+"${pin[@]}"} "$out/fork-model" "$n" "$rounds"
done
