#!/usr/bin/env python3
"""The `sizes` test: no source file over 800 lines, no function over 80 lines.

usage: check_sizes.py SOURCE_DIR [--list]

Reads every .cc/.h/.c under algorithms/, sim/ and harness/ (tests included). A function is a
brace block opened at namespace or class scope whose header has a parameter list; its length
runs from the header's first line to the closing brace. A flat switch is exempt: a function
whose body is one switch with a case label on at least a third of its lines. Prints each
offender as FILE:LINE: NAME is N lines (limit 80); --list prints every function over 60 lines
too. Exit 1 when any file or function is over its limit.
"""
import os
import re
import sys

MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 80
CONTROL = re.compile(r'^\s*(if|for|while|switch|catch|else|do|try|return)\b')
SCOPE = re.compile(r'\b(namespace|class|struct|union|enum)\b')


def strip(line, in_comment):
    """The line without comments, string and char literals; and whether a /* */ stays open."""
    out, i, n = [], 0, len(line)
    while i < n:
        if in_comment:
            j = line.find('*/', i)
            if j < 0:
                return ''.join(out), True
            i, in_comment = j + 2, False
            continue
        c = line[i]
        if line.startswith('//', i):
            break
        if line.startswith('/*', i):
            in_comment, i = True, i + 2
            continue
        if c == "'" and 0 < i < n - 1 and line[i - 1].isalnum() and line[i + 1].isalnum():
            out.append(c)  # a digit separator (10'000), not a character literal
            i += 1
            continue
        if c in '"\'':
            j = i + 1
            while j < n and line[j] != c:
                j += 2 if line[j] == '\\' else 1
            out.append(c + c)
            i = j + 1
            continue
        out.append(c)
        i += 1
    return ''.join(out), in_comment


def functions(path):
    """Yields (first_line, last_line, name, is_flat_switch) for every function body."""
    lines = open(path, encoding='utf-8', errors='replace').read().split('\n')
    stack = []  # entries: ('scope'|'function'|'block', start_line, name, case_lines)
    header, header_line, in_comment = '', None, False
    for number, raw in enumerate(lines, 1):
        text, in_comment = strip(raw, in_comment)
        if text.lstrip().startswith('#'):
            continue
        if re.match(r'^\s*(case\b.*|default\s*):', text):
            for entry in reversed(stack):
                if entry[0] == 'function':
                    entry[3] += 1
                    break
        for ch in text:
            if ch == '{':
                inside = any(e[0] == 'function' for e in stack)
                h = header.strip()
                if not inside and '(' in h and not CONTROL.match(h) and not re.search(r'=\s*$', h) \
                        and not SCOPE.match(h):
                    name = re.sub(r'\s+', ' ', h.split('(')[0]).split(' ')[-1] or '?'
                    stack.append(['function', header_line or number, name, 0])
                elif not inside and (SCOPE.search(h) or h.startswith('extern')):
                    stack.append(['scope', number, h, 0])
                else:
                    stack.append(['block', number, h, 0])
                header, header_line = '', None
            elif ch == '}':
                if stack:
                    kind, start, name, cases = stack.pop()
                    if kind == 'function':
                        length = number - start + 1
                        yield start, number, name, cases * 3 >= length
                header, header_line = '', None
            elif ch == ';':
                header, header_line = '', None
            else:
                if not ch.isspace() and header_line is None:
                    header_line = number
                header += ch
        header += ' '


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip().split('\n')[2])
        return 2
    top, listing = sys.argv[1], '--list' in sys.argv
    bad, files, funcs = 0, 0, 0
    for folder in ('algorithms', 'sim', 'harness'):
        for root, _, names in sorted(os.walk(os.path.join(top, folder))):
            for name in sorted(names):
                if not name.endswith(('.cc', '.h', '.c')):
                    continue
                path = os.path.join(root, name)
                rel = os.path.relpath(path, top)
                files += 1
                count = sum(1 for _ in open(path, encoding='utf-8', errors='replace'))
                if count > MAX_FILE_LINES:
                    print(f'{rel}: {count} lines (limit {MAX_FILE_LINES})')
                    bad = 1
                for start, end, fname, flat in functions(path):
                    funcs += 1
                    length = end - start + 1
                    if length > MAX_FUNCTION_LINES and not flat:
                        print(f'{rel}:{start}: {fname} is {length} lines (limit {MAX_FUNCTION_LINES})')
                        bad = 1
                    elif listing and length > 60:
                        print(f'{rel}:{start}: {fname} is {length} lines{" (flat switch)" if flat else ""}')
    print(f'sizes: {files} files, {funcs} functions checked')
    return bad


if __name__ == '__main__':
    sys.exit(main())
