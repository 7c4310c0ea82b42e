#!/usr/bin/env python3
"""The size rules of the sources (functions of at most ~150 lines, files of at most
1,000 lines outside their `#[cfg(test)] mod`), measured:

    python3 scripts/long_functions.py fn 150 $(find src crates -name '*.rs')
        functions longer than 150 lines, from the `fn` line to its closing brace
    python3 scripts/long_functions.py file 1000 $(find src crates -name '*.rs')
        files with more than 1,000 lines outside `#[cfg(test)] mod … { }` blocks

Comments, strings and char literals are blanked before braces are matched; closures
and nested functions count in the function that holds them."""
import sys, re

def strip(src):
    out = []; i = 0; n = len(src)
    while i < n:
        c = src[i]
        if src.startswith('//', i):
            j = src.find('\n', i)
            j = n if j < 0 else j
            out.append(' ' * (j - i)); i = j; continue
        if src.startswith('/*', i):
            depth = 0; j = i
            while j < n:
                if src.startswith('/*', j): depth += 1; j += 2; continue
                if src.startswith('*/', j):
                    depth -= 1; j += 2
                    if depth == 0: break
                    continue
                j += 1
            out.append(re.sub(r'[^\n]', ' ', src[i:j])); i = j; continue
        m = re.match(r'b?r(#*)"', src[i:i+40]) if c in 'rb' and (i == 0 or not (src[i-1].isalnum() or src[i-1]=='_')) else None
        if m:
            hashes = m.group(1); end = '"' + hashes
            j = src.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r'[^\n]', ' ', src[i:j])); i = j; continue
        if c == '"':
            j = i + 1
            while j < n and src[j] != '"':
                j += 2 if src[j] == '\\' else 1
            j += 1
            out.append(re.sub(r'[^\n]', ' ', src[i:j])); i = j; continue
        if c == "'":
            if i + 1 < n and src[i+1] == '\\':
                j = src.find("'", i + 2) + 1
                out.append(' ' * (j - i)); i = j; continue
            if i + 2 < n and src[i+2] == "'":
                out.append('   '); i += 3; continue
        out.append(c); i += 1
    return ''.join(out)

def fns(path):
    src = open(path).read()
    s = strip(src)
    res = []
    for m in re.finditer(r'\bfn\s+([A-Za-z_][A-Za-z0-9_]*)', s):
        j = m.end(); depth = 0
        # find body start: first '{' at paren depth 0, or ';'
        while j < len(s):
            ch = s[j]
            if ch in '([': depth += 1
            elif ch in ')]': depth -= 1
            elif ch == ';' and depth == 0: j = -1; break
            elif ch == '{' and depth == 0: break
            j += 1
        if j < 0 or j >= len(s): continue
        d = 0; k = j
        while k < len(s):
            if s[k] == '{': d += 1
            elif s[k] == '}':
                d -= 1
                if d == 0: break
            k += 1
        l0 = s.count('\n', 0, m.start()) + 1
        l1 = s.count('\n', 0, k) + 1
        res.append((l1 - l0 + 1, path, l0, m.group(1)))
    return res

def nontest_lines(path):
    src = open(path).read()
    s = strip(src)
    # drop `#[cfg(test)] mod x { ... }` blocks
    total = len(src.rstrip('\n').split('\n'))
    tests = 0
    for m in re.finditer(r'#\[cfg\(test\)\]\s*(pub(\(\w+\))?\s+)?mod\s+\w+\s*\{', s):
        j = m.end() - 1; d = 0; k = j
        while k < len(s):
            if s[k] == '{': d += 1
            elif s[k] == '}':
                d -= 1
                if d == 0: break
            k += 1
        tests += s.count('\n', m.start(), k) + 1
    return total - tests, total

if __name__ == '__main__':
    if len(sys.argv) < 3 or sys.argv[1] not in ('fn', 'file'):
        sys.exit(__doc__)
    mode = sys.argv[1]
    files = sys.argv[3:]
    lim = int(sys.argv[2])
    if mode == 'fn':
        allf = []
        for f in files: allf += fns(f)
        for n, p, l, name in sorted(allf, reverse=True):
            if n > lim: print(f'{n:5d} {p}:{l} {name}')
    else:
        for f in files:
            nt, t = nontest_lines(f)
            if nt > lim: print(f'{nt:5d} non-test ({t} total) {f}')
