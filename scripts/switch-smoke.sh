#!/bin/bash
# fk-switch runs to the end and reports all three hand-offs (a small run: not a measurement).
out=$(timeout 60 build/bin/fk-switch --switches 20000 --reps 3 2>&1)
rc=$?
ok=1
for k in fiber raw thread; do
    echo "$out" | grep -q "\"$k\": {\"median_ns\": [0-9.]*" || ok=0
done
if [ $rc -eq 0 ] && [ $ok -eq 1 ]; then
    echo "ok fk-switch"
    echo "1 passed, 0 failed"
else
    echo "FAIL fk-switch: exit $rc (124: timed out), output: $out"
    echo "0 passed, 1 failed"
    exit 1
fi
