#!/bin/sh
# fork-model.sh — builds scripts/fork-model.c (a model of child stealing's fork: fib by hand,
# one kind of store at a time taken away) and runs it pinned to one CPU.
#   scripts/fork-model.sh [N] [ROUNDS] [CPU]     (defaults: 32, 11, the last online CPU)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
n=${1:-32}
rounds=${2:-11}
cpu=${3:-$(($(getconf _NPROCESSORS_ONLN) - 1))}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for cc in ${CC:-cc}; do
    "$cc" -O2 -std=c11 -Wall -Wextra -Werror -o "$out/fork-model" "$here/fork-model.c"
    echo "$cc ($("$cc" --version | head -n 1)), CPU $cpu of $(getconf _NPROCESSORS_ONLN):"
    taskset -c "$cpu" "$out/fork-model" "$n" "$rounds"
done
