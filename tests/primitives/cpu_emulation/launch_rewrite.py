#!/usr/bin/env python3
# Copies the sources, turning kernel<<<cfg>>>(args) into ::emu::launch([&]{ kernel(args); }, cfg).
import os, re, shutil, sys
def find_launches(s):
    out = []; i = 0
    while True:
        a = s.find('<<<', i)
        if a < 0: break
        # kernel expression backwards
        j = a
        while s[j-1].isspace(): j -= 1
        k = j
        if s[k-1] == '>':
            depth = 0
            while True:
                k -= 1
                if s[k] == '>': depth += 1
                elif s[k] == '<':
                    depth -= 1
                    if depth == 0: break
        while k > 0 and (s[k-1].isalnum() or s[k-1] in '_:'): k -= 1
        b = s.find('>>>', a)
        cfg = s[a+3:b]
        p = b + 3
        while s[p].isspace(): p += 1
        if s[p] != '(':
            i = b + 3
            continue
        depth = 0; q = p
        while True:
            if s[q] == '(': depth += 1
            elif s[q] == ')':
                depth -= 1
                if depth == 0: break
            q += 1
        out.append((k, j, cfg, p, q))
        i = q
    return out
def rewrite(s):
    ls = find_launches(s)
    for (k, j, cfg, p, q) in reversed(ls):
        kernel = s[k:j]; args = s[p+1:q]
        s = s[:k] + '::emu::launch([&]() { ' + kernel + '(' + args + '); }, ' + cfg + ')' + s[q+1:]
    return s
src, dst = sys.argv[1], sys.argv[2]
for root, dirs, files in os.walk(src):
    for f in files:
        sp = os.path.join(root, f); rel = os.path.relpath(sp, src); dp = os.path.join(dst, rel)
        os.makedirs(os.path.dirname(dp), exist_ok=True)
        if f.endswith(('.cuh', '.cu', '.hpp')):
            open(dp, 'w').write(rewrite(open(sp).read()))
        else:
            shutil.copy(sp, dp)
