#!/usr/bin/env python3
"""Checks every relative link and image in the given Markdown files: the file exists and,
for #anchors, a heading in the target produces that anchor (GitHub's slug rule).

    python3 docs/check-links.py README.md docs/*.md configs/README.md results/README.md fuzz/README.md
"""
import os, re, sys

def slug(h):
    h = re.sub(r'`', '', h.strip().lower())
    h = re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', h)
    h = re.sub(r'[^\w\- ]', '', h)   # keep letters, digits, _, -, space (unicode letters kept)
    return h.replace(' ', '-')

def anchors(path):
    out, seen, fence = set(), {}, False
    for line in open(path, encoding='utf-8'):
        if line.startswith('```'):
            fence = not fence
        if fence:
            continue
        m = re.match(r'^(#{1,6})\s+(.*?)\s*#*\s*$', line)
        if m:
            s = slug(m.group(2)); n = seen.get(s, 0); seen[s] = n + 1
            out.add(s if n == 0 else f'{s}-{n}')
    return out

bad = 0; count = 0
for md in sys.argv[1:]:
    text = open(md, encoding='utf-8').read()
    text = re.sub(r'```.*?```', '', text, flags=re.S)       # no links inside code blocks
    text = re.sub(r'`[^`\n]*`', '', text)                   # nor in code spans
    for m in re.finditer(r'!?\[[^\]]*\]\(([^)\s]+)\)', text):
        target = m.group(1); count += 1
        if re.match(r'[a-z]+:', target):
            continue
        path, _, frag = target.partition('#')
        full = os.path.normpath(os.path.join(os.path.dirname(md), path)) if path else md
        if not os.path.exists(full):
            print(f'{md}: {target}: no file {full}'); bad += 1; continue
        if frag and full.endswith('.md') and frag not in anchors(full):
            print(f'{md}: {target}: no heading gives #{frag} in {full}'); bad += 1
print(f'{count} links checked, {bad} broken')
sys.exit(1 if bad else 0)
