#!/usr/bin/env python3
"""The source tree keeps the shape the README's "Layout" gives it; each check fails when it
does not:
  - the harness's folders include each other only along the allowed edges (no cycles);
  - no function in harness/ or bench/ is longer than 100 lines;
  - every relative link and #anchor in the Markdown files resolves (docs/check-links.py).
Prints "ok ..." or "FAIL ..." per check and a closing "N passed, N failed"; exits 1 on a
failure.  Run from the repository's root (make check does, in the rel suite)."""
import glob, os, re, subprocess, sys

ALLOWED = {  # folder -> the folders it may include (besides itself); the README's "Layout"
    'main': {'cli', 'cluster', 'config', 'report', 'run', 'results', 'util'},
    'cli': {'cluster', 'report', 'run', 'config', 'results', 'util'},
    'cluster': {'run', 'report', 'config', 'results', 'util'},
    'report': {'analyze', 'config', 'results', 'util'},
    'run': {'config', 'analyze', 'results', 'util'},
    'analyze': {'config', 'results', 'util'},
    'config': {'results', 'util'},
    'results': {'util'},
    'util': set(),
}
MAX_LINES = 100
passed = failed = 0

def check(ok, what, detail=''):
    global passed, failed
    if ok:
        passed += 1
        print('ok ' + what)
    else:
        failed += 1
        print('FAIL ' + what + (': ' + detail if detail else ''))

def folder(path):
    parts = path.split('/')
    return parts[1] if len(parts) > 2 else 'main'

bad = []
files = sorted(glob.glob('harness/*.[ch]') + glob.glob('harness/*/*.[ch]'))
for f in files:
    src = folder(f)
    if src not in ALLOWED:
        bad.append('%s: folder %s is not in the layout' % (f, src))
        continue
    for m in re.finditer(r'#include "harness/([a-z]+)/', open(f).read()):
        dst = m.group(1)
        if dst != src and dst not in ALLOWED[src]:
            bad.append('%s includes harness/%s/' % (f, dst))
check(not bad and len(files) > 20, 'the harness folders include each other one way (%d files)' % len(files),
      '; '.join(bad))

long_fns = []
nfun = 0
for f in sorted(glob.glob('harness/*.c') + glob.glob('harness/*/*.c') + glob.glob('bench/*.c')):
    lines = open(f).read().split('\n')
    i = 0
    while i < len(lines):
        l = lines[i]
        # a definition: a line at column 0 naming something with "(", its signature (maybe over
        # several lines) ending in "{" or followed by a line "{"
        if re.match(r'^[A-Za-z_]', l) and '(' in l and not re.match(r'^(typedef|struct\s+\w+\s*\{|enum|union|extern)', l):
            j = i
            while j < len(lines) and j < i + 8 and not lines[j].rstrip().endswith(('{', ';')) and \
                    not (j > i and lines[j].startswith('{')):
                j += 1
            sig = ''.join(lines[i:j + 1])
            if j < len(lines) and '=' not in sig.split('(')[0] and \
                    (re.search(r'\)\s*(__attribute__\(\(.*\)\)\s*)?\{$', lines[j].rstrip()) or lines[j].startswith('{')):
                k = j + 1
                while k < len(lines) and not lines[k].startswith('}'):
                    k += 1
                nfun += 1
                if k - i + 1 > MAX_LINES:
                    long_fns.append('%s:%d (%d lines)' % (f, i + 1, k - i + 1))
                i = k
        i += 1
check(not long_fns and nfun > 300, 'no function over %d lines in harness/ and bench/ (%d functions)' % (MAX_LINES, nfun),
      ', '.join(long_fns))

# The harness knows kernels from their descriptions (bench/options.h), never by name: no string
# literal in harness/ has a kernel's name as a word, except where the CLI is named after one
# (main.c's `uts` command); a peer's kernels are what its driver lists (--kernels).
C_TOKENS = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
def string_literals(text):
    return [t[1:-1] for t in C_TOKENS.findall(text) if t.startswith('"')]
def kernel_names():
    m = re.search(r'#define BENCH_KERNEL_LIST\(X\)(.*?)\n\s*\n', open('bench/options.h').read() + '\n\n', re.S)
    return re.findall(r'X\((\w+)\)', m.group(1)) if m else []
KERNELS = kernel_names()
ALLOW_LITERAL = {('harness/main.c', 'uts')}
def literal_names(path, lits):
    found = []
    for lit in lits:
        for k in KERNELS:
            if (path, k) not in ALLOW_LITERAL and re.search(r'\b%s\b' % re.escape(k), lit):
                found.append('%s: "%s"' % (path, lit[:60]))
                break
    return found
named = []
for f in files:
    named += literal_names(f, string_literals(open(f).read()))
check(len(KERNELS) >= 10 and not named, 'no kernel is named by a string literal in harness/ (%d kernels)' % len(KERNELS),
      '; '.join(named))
# (the check can fail: a literal naming one is found)
check(literal_names('harness/x.c', string_literals('strcmp(k, "%s"); /* "%s" */' % (KERNELS[0], KERNELS[0]))) ==
      ['harness/x.c: "%s"' % KERNELS[0]] if KERNELS else False, 'a kernel named by a literal is found (not in a comment)')

md = ['README.md'] + sorted(glob.glob('docs/*.md')) + [p for p in ('configs/README.md', 'results/README.md',
                                                                 'fuzz/README.md') if os.path.exists(p)]
r = subprocess.run([sys.executable, 'docs/check-links.py'] + md, capture_output=True, text=True)
check(r.returncode == 0, 'the links of %d Markdown files resolve' % len(md), (r.stdout + r.stderr).strip()[-800:])

print('%d passed, %d failed' % (passed, failed))
sys.exit(1 if failed else 0)
