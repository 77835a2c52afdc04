#!/usr/bin/env python3
"""arity.py — the house's figures for issue 31: functions defined per folder with more than 6
and 10 parameters, files per folder, and the README's length. Run from the repository root:
python3 tests/tools/arity.py [--list N] (--list N also names each function above N)."""
import os, re, sys

def functions(path):
    src = open(path, encoding='utf-8', errors='replace').read()
    src = re.sub(r'/\*.*?\*/', ' ', src, flags=re.S)
    src = re.sub(r'//[^\n]*', ' ', src)
    src = re.sub(r'"(\\.|[^"\\])*"', '""', src)
    src = re.sub(r"'(\\.|[^'\\])*'", "''", src)
    src = re.sub(r'^\s*#(?:[^\n]*\\\n)*[^\n]*', ' ', src, flags=re.M)   # a macro with its continued lines
    depth, i, start, out = 0, 0, 0, []
    while i < len(src):
        c = src[i]
        if c == '{':
            if depth == 0:
                head = src[start:i]
                m = re.search(r'(\w+)\s*\(([^()]*(\([^()]*\)[^()]*)*)\)\s*$', head)
                if m and not re.search(r'=\s*$', head[:m.start()]) and m.group(1) not in ('if', 'for', 'while', 'switch'):
                    params = m.group(2).strip()
                    n = 0 if params in ('', 'void') else params.count(',') + 1 - params.count('(') // 2 * 0
                    # a function-pointer parameter's own commas: count top-level commas only
                    d, n = 0, (0 if params in ('', 'void') else 1)
                    for ch in params:
                        d += ch == '('
                        d -= ch == ')'
                        n += ch == ',' and d == 0
                    out.append((m.group(1), n))
            depth += 1
        elif c == '}':
            depth -= 1
            if depth == 0:
                start = i + 1
        elif c == ';' and depth == 0:
            start = i + 1
        i += 1
    return out

def main():
    lst = int(sys.argv[sys.argv.index('--list') + 1]) if '--list' in sys.argv else None
    rows = {}
    for root, dirs, files in os.walk("."):
        dirs[:] = sorted(d for d in dirs if not d.startswith('.') and d not in ('build', 'tests', 'data', 'examples')
                         and not d.startswith('build-'))
        for f in sorted(files):
            if not f.endswith('.c'):
                continue
            folder = os.path.normpath(root)
            r = rows.setdefault(folder, [0, 0, 0, 0, 0])
            r[0] += 1
            for name, n in functions(os.path.join(root, f)):
                r[1] += 1
                r[2] += n > 6
                r[3] += n >= 10
                if lst is not None and n > lst:
                    print(f'{n:3d} {os.path.join(folder, f)}:{name}')
    hdrs = {}
    for root, dirs, files in os.walk('.'):
        if '/build' in root or '/tests' in root or '/.' in root:
            continue
        for f in files:
            if f.endswith('.h'):
                hdrs[os.path.normpath(root)] = hdrs.get(os.path.normpath(root), 0) + 1
    print(f'{"folder":24s} {".c":>4s} {".h":>4s} {"functions":>9s} {">6 params":>9s} {">=10":>5s}')
    tot = [0, 0, 0, 0, 0]
    for folder, r in sorted(rows.items()):
        print(f'{folder:24s} {r[0]:4d} {hdrs.get(folder, 0):4d} {r[1]:9d} {r[2]:9d} {r[3]:5d}')
        tot = [a + b for a, b in zip(tot, r)]
    print(f'{"all":24s} {tot[0]:4d} {sum(hdrs.values()):4d} {tot[1]:9d} {tot[2]:9d} {tot[3]:5d}')
    print(f'README.md: {sum(1 for _ in open("README.md"))} lines')

main()
