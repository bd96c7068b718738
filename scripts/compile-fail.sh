#!/bin/bash
# Compiles every tests/compile_fail/*.c for each variant its header lists, with GCC and with
# Clang (CCS, default "gcc clang"), expecting the compiler to refuse it with a message
# containing the words of every `expect:` line, and of every `expect-gcc:` or
# `expect-clang:` line for that compiler (words that only the diagnostic itself holds: the
# notes reprint the macros' definition lines, whatever the error); ok_control.c, whose
# expect is "(compiles)", must compile: it shows the command itself works.  Ends with "N passed, N failed"; exit
# status 1 if any case compiled or failed for another reason.
set -u
cd "$(dirname "$0")/.."
CCS=${CCS:-gcc clang}
export LC_ALL=C # (GCC quotes names with '' only in the C locale)
pass=0 fail=0
flags_of() {
    case $1 in
        cont-seg) echo "-DFK_STEAL=1 -DFK_STACK=1" ;; cont-lin) echo "-DFK_STEAL=1 -DFK_STACK=2" ;;
        child-seg) echo "-DFK_STEAL=2 -DFK_STACK=1" ;; child-lin) echo "-DFK_STEAL=2 -DFK_STACK=2" ;;
        child-native) echo "-DFK_STEAL=2 -DFK_STACK=3" ;; child-fiber) echo "-DFK_STEAL=2 -DFK_STACK=4" ;;
        cont-native) echo "-DFK_STEAL=1 -DFK_STACK=3" ;;
        *) echo "bad variant $1" >&2; return 1 ;;
    esac
}
for src in tests/compile_fail/*.c; do
    variants=$(sed -n 's/^.*variants: *//p' "$src" | head -1)
    mapfile -t expects < <(sed -n 's/^ \* expect: *//p' "$src")
    mapfile -t expects_gcc < <(sed -n 's/^ \* expect-gcc: *//p' "$src")
    mapfile -t expects_clang < <(sed -n 's/^ \* expect-clang: *//p' "$src")
    if [ -z "$variants" ]; then
        echo "FAIL $src: no 'variants:' line"; fail=$((fail + 1)); continue
    fi
    for CC in $CCS; do
        if ! command -v "$CC" >/dev/null; then
            echo "FAIL $src: no $CC on PATH (make setup installs it; CCS=gcc runs GCC alone)"; fail=$((fail + 1)); continue
        fi
        # (which compiler it is, by what it says of itself: cc may be either)
        case $("$CC" --version 2>/dev/null | head -1) in *clang*) extra=("${expects_clang[@]}") ;; *) extra=("${expects_gcc[@]}") ;; esac
        if [ $((${#expects[@]} + ${#extra[@]})) -eq 0 ]; then
            echo "FAIL $src: no 'expect:' line for $CC"; fail=$((fail + 1)); continue
        fi
    for v in $variants; do
        name="$(basename "$src" .c) ($v, $CC)"
        out=$($CC -std=c11 -D_GNU_SOURCE -fsyntax-only -Werror -Wall -Wextra -Iruntime/include $(flags_of "$v") "$src" 2>&1)
        st=$?
        if [ "${expects[0]:-}" = "(compiles)" ]; then
            if [ $st -eq 0 ]; then echo "ok $name (compiles)"; pass=$((pass + 1));
            else echo "FAIL $name: the control does not compile:"; sed 's/^/    /' <<< "$out" | head -5; fail=$((fail + 1)); fi
            continue
        elif [ $st -eq 0 ]; then
            echo "FAIL $name: compiled, but must not"; fail=$((fail + 1)); continue
        fi
        missing=
        for e in "${expects[@]}" "${extra[@]}"; do grep -qF -- "$e" <<< "$out" || missing="$e"; done
        if [ -n "$missing" ]; then
            echo "FAIL $name: refused, but not with \"$missing\":"; sed 's/^/    /' <<< "$out" | head -8; fail=$((fail + 1))
        else
            echo "ok $name"; pass=$((pass + 1))
        fi
    done
    done
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
