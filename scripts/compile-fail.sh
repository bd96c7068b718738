#!/bin/bash
# Compiles every tests/compile_fail/*.c for each variant its header lists, expecting the
# compiler to refuse it with a message containing the `expect:` words (ok_control.c, whose
# expect is "(compiles)", must compile: it shows the command itself works).  Ends with
# "N passed, N failed"; exit status 1 if any case compiled or failed for another reason.
set -u
cd "$(dirname "$0")/.."
CC=${CC:-gcc}
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
    expect=$(sed -n 's/^ \* expect: *//p' "$src" | head -1)
    if [ -z "$variants" ] || [ -z "$expect" ]; then
        echo "FAIL $src: no 'variants:' or 'expect:' line"; fail=$((fail + 1)); continue
    fi
    for v in $variants; do
        name="$(basename "$src" .c) ($v)"
        out=$($CC -std=c11 -D_GNU_SOURCE -fsyntax-only -Werror -Wall -Wextra -Iruntime/include $(flags_of "$v") "$src" 2>&1)
        st=$?
        if [ "$expect" = "(compiles)" ]; then
            if [ $st -eq 0 ]; then echo "ok $name (compiles)"; pass=$((pass + 1));
            else echo "FAIL $name: the control does not compile:"; sed 's/^/    /' <<< "$out" | head -5; fail=$((fail + 1)); fi
        elif [ $st -eq 0 ]; then
            echo "FAIL $name: compiled, but must not"; fail=$((fail + 1))
        elif ! grep -qF -- "$expect" <<< "$out"; then
            echo "FAIL $name: refused, but not with \"$expect\":"; sed 's/^/    /' <<< "$out" | head -5; fail=$((fail + 1))
        else
            echo "ok $name"; pass=$((pass + 1))
        fi
    done
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
