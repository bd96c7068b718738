#!/bin/bash
# make bundle's tarball (scripts/bundle.sh), unpacked into a temporary directory: every
# library the loader resolves for its executables and libraries comes from the bundle (libc,
# libm, libpthread, libdl, librt and the loader aside), and this check fails on a copy with a
# library taken out; every run path is $ORIGIN-relative; BUNDLE.txt states the build id and
# the glibc floor.  Then a tiny variant of configs/scaling.json (the bundle's copy) runs with
# the bundle's forkscope from another directory, with the source tree hidden (a tmpfs over it,
# in a mount namespace; where unshare refuses, the sweep runs unhidden and the hiding is a
# skip, source_hidden, which tests/skips expects), the drivers it ran are the
# bundle's, env.json names the bundle's build, and `fit` runs on the results; its figures are
# the speedup with the work-span bound and the breakdown.
set -u
build=${BUILD:-build}
repo=$(pwd -P)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0 skip=0
ok() { echo "ok $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }

# outside ROOT: each library an ELF file of ROOT resolves outside ROOT (or not at all), one a line
outside() {
    local root f line name path
    root=$(cd "$1" && pwd -P)
    for f in "$root"/bin/* "$root"/libexec/forkscope/* "$root"/lib/*; do
        while read -r line; do
            case "$line" in
                *"=> not found"*) echo "$(basename "$f"): ${line%% *} not found"; continue ;;
                *" => /"*) name=${line%% *}; path=${line#* => }; path=${path%% (*} ;;
                *) continue ;;
            esac
            case "$name" in
                ld-linux*.so.*|libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*) continue ;;
            esac
            case "$(readlink -f "$path")" in
                "$root"/*) ;;
                *) echo "$(basename "$f"): $name => $path" ;;
            esac
        done < <(env -u LD_LIBRARY_PATH ldd "$f" 2>&1)
    done
}

out=$(BUILD=$build scripts/bundle.sh "$tmp/fk.tar.gz" 2>&1)
rc=$?
if [ $rc -ne 0 ] || [ ! -s "$tmp/fk.tar.gz" ]; then
    bad "scripts/bundle.sh: exit $rc: $out"
    echo "$pass passed, $fail failed, $skip skipped"
    exit 1
fi
ok "scripts/bundle.sh: $out"
mkdir -p "$tmp/u" && tar -C "$tmp/u" -xzf "$tmp/fk.tar.gz"
root=$(echo "$tmp"/u/forkscope-*)
missing=""
for p in bin/forkscope libexec/forkscope/fk-bench-serial libexec/forkscope/fk-bench-cont-seg libexec/forkscope/fk-bench-span \
         libexec/forkscope/fk-switch share/forkscope/configs/scaling.json share/forkscope/plots/speedup.gp \
         share/forkscope/BUNDLE.txt share/forkscope/SHA256SUMS; do
    [ -e "$root/$p" ] || missing="$missing $p"
done
nlib=$(ls "$root/lib" | wc -l)
if [ -z "$missing" ] && [ "$nlib" -gt 5 ]; then ok "the tree: bin/, libexec/forkscope/, lib/ ($nlib libraries), share/forkscope/"
else bad "the tree lacks:$missing (lib/: $nlib files)"; fi

why=$(outside "$root")
if [ -z "$why" ]; then ok "every library ldd resolves for the bundle's executables and libraries is the bundle's (glibc aside)"
else bad "libraries from outside the bundle: $(echo "$why" | head -5)"; fi

# the check itself: a copy without jansson resolves it elsewhere (or not at all), and says so
cp -a "$root" "$tmp/sabotaged"
rm "$tmp/sabotaged/lib/libjansson.so.4"
why=$(outside "$tmp/sabotaged")
if echo "$why" | grep -q "forkscope: libjansson.so.4 "; then ok "the check fails on a copy with libjansson taken out: $(echo "$why" | head -1)"
else bad "the check did not notice libjansson missing from lib/: '$why'"; fi
rm -rf "$tmp/sabotaged"

bad_rp=""
for f in "$root"/bin/* "$root"/libexec/forkscope/* "$root"/lib/*; do
    rp=$(patchelf --print-rpath "$f" 2>/dev/null)
    case "$rp" in '$ORIGIN'|'$ORIGIN/../lib'|'$ORIGIN/../../lib') ;; *) bad_rp="$bad_rp $(basename "$f"):'$rp'" ;; esac
done
if [ -z "$bad_rp" ]; then ok "every run path is \$ORIGIN-relative"; else bad "run paths:$bad_rp"; fi

id=$(sed -n 's/^build_id: //p' "$root/share/forkscope/BUNDLE.txt")
need=$(sed -n 's/^glibc_required: //p' "$root/share/forkscope/BUNDLE.txt")
have=$(sed -n 's/^glibc_build: //p' "$root/share/forkscope/BUNDLE.txt")
if [[ "$id" =~ ^[0-9a-f]{16}$ ]] && [ -n "$need" ] && [ "$(printf '%s\n%s\n' "$need" "$have" | sort -V | tail -1)" = "$have" ] &&
   (cd "$root" && sha256sum --quiet -c share/forkscope/SHA256SUMS); then
    ok "BUNDLE.txt: build id $id, needs glibc $need (built on $have); SHA256SUMS verify"
else bad "BUNDLE.txt: build id '$id', glibc '$need' (built on '$have'), or SHA256SUMS do not verify"; fi

# A tiny variant of configs/scaling.json: its benchmarks, variants, breakdown and span, at
# sizes of milliseconds, P = 1, 2, one run a cell.
mkdir -p "$tmp/elsewhere"
python3 - "$root/share/forkscope/configs/scaling.json" "$tmp/elsewhere/tiny.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
small = {"fib": {"n": 20}, "nqueens": {"n": 7}, "T1": {"t": 1, "a": 3, "d": 5, "b": 4, "r": 19},
         "T3": {"t": 0, "b": 200, "q": 0.2, "m": 4, "r": 42}, "uts-deep": {"t": 0, "b": 100, "q": 0.2, "m": 4, "r": 2}}
for b in c["benchmarks"]:
    b["params"] = small[b["name"]]
c.update(name="scaling-tiny", workers=[1, 2], repetitions=1, warmup=0, time_limit_s=60)
json.dump(c, open(sys.argv[2], "w"), indent=1)
PY
run=(env -i PATH=/usr/bin:/bin HOME="$tmp/elsewhere" LANG=C.UTF-8 "$root/bin/forkscope")
hide=""
if unshare --mount --map-root-user true 2>/dev/null; then hide="unshare --mount --map-root-user"; fi
cd "$tmp/elsewhere"
if [ -n "$hide" ]; then
    $hide sh -c 'mount -t tmpfs none "$1" && shift && exec "$@"' sh "$repo" "${run[@]}" run tiny.json -o res > run.out 2>&1
else
    "${run[@]}" run tiny.json -o res > run.out 2>&1
fi
rc=$?
if [ $rc -eq 0 ] && [ -s res/raw.jsonl ] && ! grep -q '"status": *"[^o]' res/raw.jsonl; then
    ok "a tiny scaling sweep ran in $tmp/elsewhere with the bundle's forkscope${hide:+ (source tree hidden by a tmpfs)}: $(wc -l < res/raw.jsonl) runs, all ok"
else bad "the tiny scaling sweep: exit $rc: $(tail -5 run.out)"; fi
if [ -z "$hide" ]; then # (the sweep above then could have read the source tree: not shown to need it)
    echo "skip source_hidden: unshare refused a mount namespace (--mount --map-root-user), so the sweep ran with the source tree visible"
    skip=$((skip + 1))
fi

why=$(python3 - res/env.json "$root" "$id" <<'PY'
import json, os, sys
env = json.load(open(sys.argv[1])); root = os.path.realpath(sys.argv[2]); errs = []
b = env.get("bundle") or {}
if b.get("build_id") != sys.argv[3]: errs.append("env.json bundle %s, not build %s" % (b, sys.argv[3]))
if not env.get("git_revision"): errs.append("no git_revision")
for v, d in (env.get("drivers") or {}).items():
    p = d.get("path") if isinstance(d, dict) else None
    if p and not os.path.realpath(p).startswith(root + "/libexec/forkscope/"): errs.append("%s ran %s" % (v, p))
if not env.get("drivers"): errs.append("no drivers in env.json")
print("; ".join(errs))
PY
)
if [ -z "$why" ]; then ok "env.json names the bundle's build ($id) and every driver it ran is the bundle's"
else bad "env.json: $why"; fi

rm -f res/summary.csv res/report.md
out=$("${run[@]}" fit res 2>&1)
rc=$?
if [ $rc -eq 0 ] && [ -s res/summary.csv ] && grep -q "Bundle (make bundle): build id $id" res/report.md; then
    ok "fit on the results: summary.csv, report.md naming the bundle's build"
else bad "fit: exit $rc: $(echo "$out" | tail -3)"; fi

# the figures: speedup with the work-span bound drawn for every benchmark, and the breakdown
if command -v gnuplot >/dev/null; then
    nb=$(grep -c '^[0-9]' res/plots/bounds.dat 2>/dev/null)
    if [ -s res/plots/speedup.png ] && [ -s res/plots/breakdown.png ] && [ "${nb:-0}" -ge 10 ] &&
       grep -q '^sc_anybound = 1' res/plots/settings.gp; then
        ok "plots: speedup.png with the work-span bound (bounds.dat: $nb points), breakdown.png"
    else bad "plots: $(ls res/plots 2>&1 | tr '\n' ' ')"; fi
else
    echo "skip plots: gnuplot not installed"; skip=$((skip + 1))
fi
cd "$repo"

echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
