#!/usr/bin/env python3
"""grammar_check.py - checks the TextMate grammar (editors/vscode/syntaxes/llmp.tmLanguage.json)
against the language as the compiler defines it.

Two sources of truth, both read from the compiler's own files:
  - the words: keywords (grammar/lexer.l), units (compiler/front/units.c), operators
    (compiler/front/ops.def), declaration kinds and enumeration words (compiler/front/schema.c,
    words.h); each is tokenized in a small sample and must get its scope;
  - the tokens of every shipped .llmp file (examples/, stdlib/, hw/), split as grammar/lexer.l
    splits them: comments, strings, numbers, units, keywords and booleans must get their scopes,
    names none of those, no character may be left unscoped or marked invalid, and each
    top-level declaration's kind and name must get storage.type and entity.name.type.

It also checks the language configuration's indentation rules against the shipped files' layout.
The grammar is run by a small TextMate engine here (match, begin/end, captures, include), whose
regular expressions are the subset that Python's re and Oniguruma read alike; with
--tokens FILE it checks the tokens that VS Code's own engine (vscode-textmate with Oniguruma,
editors/vscode/test/tokenize.js) wrote for the texts --inputs listed.

usage: grammar_check.py ROOT                  check, with the engine here
       grammar_check.py ROOT --inputs FILE     write the texts to tokenize, {name: text}
       grammar_check.py ROOT --tokens FILE     check vscode-textmate's tokens of those texts
       grammar_check.py ROOT --tokens FILE --vim   check Vim's syntax groups of them
exits 0 when every check passes
"""
import json
import os
import re
import sys


# --- a TextMate engine ------------------------------------------------------------------

class Rule:
    """A grammar rule: a match, a begin/end region, or a list of patterns."""

    def __init__(self, raw, grammar):
        self.raw, self.grammar = raw, grammar
        self.match = re.compile(raw["match"]) if "match" in raw else None
        self.begin = re.compile(raw["begin"]) if "begin" in raw else None
        self.end = re.compile(raw["end"]) if "end" in raw else None
        self.name = raw.get("name")
        self._patterns = None

    def patterns(self):
        """The match and begin rules reachable from this rule's patterns, includes expanded."""
        if self._patterns is None:
            self._patterns = []
            for p in self.raw.get("patterns", []):
                self.grammar.flatten(p, self._patterns, set())
        return self._patterns


class Grammar:
    def __init__(self, path):
        self.raw = json.load(open(path, encoding="utf-8"))
        self.scope = self.raw["scopeName"]
        self.rules = {}
        self.root = Rule({"patterns": self.raw["patterns"]}, self)

    def rule(self, raw):
        key = id(raw)
        if key not in self.rules:
            self.rules[key] = Rule(raw, self)
        return self.rules[key]

    def flatten(self, raw, out, seen):
        inc = raw.get("include")
        if inc is None:
            r = self.rule(raw)
            if r.match or r.begin:
                out.append(r)
            else:
                for p in raw.get("patterns", []):
                    self.flatten(p, out, seen)
            return
        if inc in seen:
            return
        seen.add(inc)
        if inc in ("$self", "$base"):
            target = {"patterns": self.raw["patterns"]}
        elif inc.startswith("#"):
            target = self.raw["repository"][inc[1:]]
        else:
            raise ValueError("include of another grammar: " + inc)
        self.flatten(target, out, seen)

    def tokenize(self, text):
        """Per line, per character, the list of scopes (outermost first)."""
        stack = [(self.root, [self.scope])]
        lines = []
        for line in text.split("\n"):
            scopes = [[self.scope] for _ in line]
            pos, steps = 0, 0
            while pos <= len(line):
                steps += 1
                if steps > 4 * len(line) + 64:
                    raise SystemExit(f"grammar_check.py: the grammar loops on `{line}`")
                rule, base = stack[-1]
                best = None
                cands = ([(rule.end, "end")] if rule.end else []) + [(r, "rule") for r in rule.patterns()]
                for cand, kind in cands:
                    rx = cand if kind == "end" else (cand.match or cand.begin)
                    m = rx.search(line, pos)
                    if m and (best is None or m.start() < best[0].start()):
                        best = (m, cand, kind)
                if best is None:
                    for i in range(pos, len(line)):
                        scopes[i] = list(base)
                    break
                m, cand, kind = best
                for i in range(pos, m.start()):
                    scopes[i] = list(base)
                if kind == "end":
                    self.paint(scopes, m, base, rule.raw.get("endCaptures", rule.raw.get("captures")))
                    stack.pop()
                elif cand.match:
                    self.paint(scopes, m, base + ([cand.name] if cand.name else []), cand.raw.get("captures"))
                else:
                    inner = base + ([cand.name] if cand.name else [])
                    self.paint(scopes, m, inner, cand.raw.get("beginCaptures", cand.raw.get("captures")))
                    stack.append((cand, inner))
                if m.end() > pos:
                    pos = m.end()
                elif kind == "end" or cand.begin:
                    pos = m.end()   # an empty end or begin changes the stack: no loop
                else:
                    pos += 1
                # the rest of a line after an empty end at its end is nothing
                if pos >= len(line) and m.end() == len(line) and kind != "end" and not cand.begin:
                    break
            lines.append(scopes)
        return lines

    @staticmethod
    def paint(scopes, m, base, captures):
        for i in range(m.start(), m.end()):
            scopes[i] = list(base)
        for g, cap in (captures or {}).items():
            g = int(g)
            if g <= (m.re.groups) and m.start(g) >= 0 and cap.get("name"):
                for i in range(m.start(g), m.end(g)):
                    scopes[i] = scopes[i] + [cap["name"]]


# --- the language, as the compiler defines it ---------------------------------------------

def read(root, rel):
    return open(os.path.join(root, rel), encoding="utf-8").read()


def language(root):
    lexer = read(root, "grammar/lexer.l")
    keywords = re.findall(r'^"([a-z]+)"\s+return TOK_', lexer, re.M)
    units = re.findall(r'\{"([A-Za-z]+)", [BSF]_,', read(root, "compiler/front/units.c"))
    ops = re.findall(r'^X\([A-Z0-9_]+, "([a-z0-9_]+)"', read(root, "compiler/front/ops.def"), re.M)
    schema = read(root, "compiler/front/schema.c")
    kinds = re.findall(r'\[DK_[A-Z]+\] = \{"([a-z]+)"', schema)
    words = set()
    for body in re.findall(r'static const char \*const e_\w+\[\] = \{([^}]*)\}', schema):
        words.update(re.findall(r'"([a-z0-9_]+)"', body))
    for table in re.findall(r'^#define \w+_WORDS\(X\) (.*)$', read(root, "compiler/front/words.h"), re.M):
        words.update(re.findall(r'X\(\w+, "([a-z0-9_]+)"\)', table))
    subs = re.findall(r'\{"([a-z]+)", &s_\w+, (true|false)\}', schema)
    assert keywords and units and ops and kinds and words and subs, "a table was not found"
    return keywords, units, ops, kinds, sorted(words), subs


# grammar/lexer.l's tokens, as (kind, text, line, start, end) with 0-based line and columns.
NUM = r"[0-9][0-9_]*(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"
TOKEN = re.compile(r"""(?P<ws>[ \t\r]+)|(?P<comment>\#[^\n]*)|(?P<nl>\n)
  |(?P<string>"(?:[^"\\\n]|\\.)*"?)|(?P<punct>==|!=|<=|>=|[-+*/%<>=.,;(){}\[\]])
  |(?P<digits>[0-9][0-9_]*[A-Za-z_][A-Za-z0-9_]*)|(?P<num>""" + NUM + r""")
  |(?P<id>[A-Za-z_][A-Za-z0-9_]*)|(?P<bad>.)""", re.X)


def lex(text, units, keywords):
    unitset = set(units)
    out = []
    line = col0 = 0
    pos = 0

    def add(kind, a, b):
        out.append((kind, text[a:b], line, a - col0, b - col0))

    def unit_after(p):
        m = re.compile(r"[ \t]*([A-Za-z_][A-Za-z0-9_]*)(/[A-Za-z_][A-Za-z0-9_]*)?").match(text, p)
        if m and m.group(1) in unitset:
            end = m.end(2) if m.group(2) == "/s" else m.end(1)
            add("unit", m.start(1), end)
            return end
        return p

    while pos < len(text):
        m = TOKEN.match(text, pos)
        k = m.lastgroup
        if k == "nl":
            add("nl", pos, pos)
            line, col0 = line + 1, m.end()
        elif k == "digits" and len(m.group()) > len(re.match(NUM, m.group()).group()):
            w = m.group()
            d = len(re.match(r"[0-9_]*", w).group())
            e = re.match(r"[eE][0-9]+", w[d:])
            if w[d:] in unitset:
                n = d
            elif e and w[d + e.end():] in unitset:
                n = d + e.end()
            else:
                n = 0
            if n:
                add("number", pos, pos + n)
                pos = unit_after(pos + n)
                continue
            add("id", pos, m.end())
        elif k in ("num", "digits"):
            end = pos + len(re.match(NUM, text[pos:]).group())
            add("number", pos, end)
            pos = unit_after(end)
            continue
        elif k == "id":
            add("keyword" if m.group() in keywords else "id", pos, m.end())
        elif k != "ws":
            add(k, pos, m.end())
        pos = m.end()
    return out


# --- the checks ---------------------------------------------------------------------------

WANT = {
    "comment": ("comment.line.number-sign.llmp",),
    "string": ("string.quoted.double.llmp",),
    "number": ("constant.numeric.llmp",),
    "unit": ("keyword.other.unit.llmp",),
    "bool": ("constant.language.boolean.llmp",),
    "keyword": ("keyword.", "storage.modifier.extends.llmp"),
    "kind": ("storage.type.llmp",),
    "decl": ("entity.name.type.llmp",),
    "enum": ("support.constant.enum.llmp",),
    "op": ("support.function.operator.llmp",),
}
NOT_A_NAME = ("comment.", "string.", "constant.numeric", "keyword.", "invalid.", "constant.language")


class Checker:
    def __init__(self):
        self.failures = 0
        self.checked = 0

    def fail(self, where, msg):
        self.failures += 1
        if self.failures <= 40:
            print(f"{where}: {msg}")

    def token(self, where, scopes, kind, text, want=None):
        """Every character of the token carries a scope that starts with one of want."""
        self.checked += 1
        want = want or WANT[kind]
        for s in scopes:
            if not any(x.startswith(w) for x in s for w in want):
                self.fail(where, f"{kind} `{text}` has scopes {' '.join(s)}; expected {' or '.join(want)}")
                return


def kinds_of(tokens):
    """Marks the kind and name of each declaration and labelled nested block, as the parser
    reads them: NAME NAME [extends NAME] { at the start of a statement."""
    out = list(tokens)
    code = [i for i, t in enumerate(out) if t[0] != "comment"]
    for n in range(len(code) - 2):
        t, u, v = (out[code[n + k]] for k in range(3))
        prev = out[code[n - 1]] if n else None
        starts = prev is None or prev[0] == "nl" or prev[1] in ("{", "}", ";")
        if starts and t[0] == u[0] == "id" and (v[1] == "{" or v[1] == "extends"):
            out[code[n]] = ("kind",) + t[1:]
            out[code[n + 1]] = ("decl",) + u[1:]
    return out


def check_file(chk, path, text, lines, units, keywords):
    toks = kinds_of(lex(text, units, keywords))
    rel = path
    for kind, tx, ln, a, b in toks:
        where = f"{rel}:{ln + 1}:{a + 1}"
        scopes = lines[ln][a:b]
        if kind == "keyword" and tx in ("true", "false"):
            kind = "bool"
        if kind in WANT:
            chk.token(where, scopes, kind, tx)
        elif kind == "id":
            chk.checked += 1
            for s in scopes:
                if len(s) < 2 or any(x.startswith(NOT_A_NAME) for x in s[1:]):
                    chk.fail(where, f"name `{tx}` has scopes {' '.join(s)}")
                    break
    for ln, row in enumerate(lines):
        src = text.split("\n")[ln]
        for col, s in enumerate(row):
            if src[col] in " \t\r":
                continue
            if len(s) < 2:
                chk.fail(f"{rel}:{ln + 1}:{col + 1}", f"`{src[col]}` is left unscoped")
                break
            if any(x.startswith("invalid.") for x in s):
                chk.fail(f"{rel}:{ln + 1}:{col + 1}", f"`{src[col]}` is marked {' '.join(s)}")
                break


def samples(keywords, units, ops, kinds, words, subs):
    """Lines that use each word of the compiler's tables, with the scope each must get:
    (text, [(token text, occurrence, kind)])."""
    out = []
    for k in kinds:
        out.append((f"{k} x_{k} extends y {{ }}", [(k, 0, "kind"), (f"x_{k}", 0, "decl"), ("extends", 0, "keyword")]))
    for w, labelled in subs:
        out.append((f"a b {{ {w} lbl {{ x = 1 }} }}" if labelled == "true" else f"a b {{ {w} {{ x = 1 }} }}",
                    [(w, 0, "kind")]))
    for u in units:
        for sep in (" ", ""):
            out.append((f"x = 2{sep}{u}", [("2", 0, "number"), (u, 0, "unit")]))
            out.append((f"x = 1.5e3{sep}{u}/s + 3", [("1.5e3", 0, "number"), (f"{u}/s", 0, "unit")]))
    for w in keywords:
        kind = "bool" if w in ("true", "false") else "keyword"
        out.append((f"a b {{ x = 1 }}; {w}", [(w, 0, kind)]))
    for w in words:
        out.append((f"x = {w}", [(w, 0, "enum")]))
        out.append((f"placement = [{w}, {w}]", [(w, 1, "enum")]))
    for o in ops:
        out.append((f"op a = {o}(t, 2 * x, split = column)", [(o, 0, "op"), ("column", 0, "enum")]))
    out.append(('import "stdlib/transformer"  # a comment "x"',
                [("import", 0, "keyword"), ('"stdlib/transformer"', 0, "string"), ('# a comment "x"', 0, "comment")]))
    out.append(('description = "a \\"quoted\\" word\\n"', [('"a \\"quoted\\" word\\n"', 0, "string")]))
    out.append(("schedule = 1f1b; x = 80GiB", [("1f1b", 0, "enum"), ("80", 0, "number"), ("GiB", 0, "unit")]))
    # the lexer's own edge cases: a word after a number that is no unit, and units elsewhere
    out.append(("x = 4 * s + b", [("4", 0, "number")]))
    # what check reports as an error shows as one, and ends where the lexer ends it
    out.append(("memory = 80 GIB", [("GIB", 0, "invalid.illegal.unit.llmp")]))
    out.append(('x = "a\\qb"', [("\\q", 0, "invalid.illegal.escape.llmp")]))
    out.append(("x = !a", [("!", 0, "invalid.illegal.character.llmp")]))
    out.append(('x = "open\ny = 2', [('"open', 0, "string"), ("y", 0, "variable.other.property.llmp"),
                                      ("2", 0, "number")]))
    return out


def check_samples(tokenize, chk, tables):
    units = tables[1]
    keywords = tables[0]
    for text, wants in samples(*tables):
        lines = tokenize("sample:" + text, text)
        for tx, occ, kind in wants:
            at = -1
            for _ in range(occ + 1):
                at = text.find(tx, at + 1)
                while at > 0 and (text[at - 1].isalnum() or text[at - 1] == "_"):
                    at = text.find(tx, at + 1)
            ln = text.count("\n", 0, at)
            col = at - (text.rfind("\n", 0, at) + 1)
            scopes = lines[ln][col:col + len(tx)]
            if kind in WANT:
                chk.token(f"sample `{text}`", scopes, kind, tx)
            else:
                chk.token(f"sample `{text}`", scopes, "token", tx, (kind,))
        # the sample's own names, as in a shipped file (the error samples aside)
        if not any(kind.startswith("invalid.") for _, _, kind in wants):
            for kind, tx, ln, a, b in lex(text, units, keywords):
                if kind == "id":
                    for s in lines[ln][a:b]:
                        if len(s) < 2 or any(x.startswith(NOT_A_NAME) for x in s[1:]):
                            chk.fail(f"sample `{text}`", f"name `{tx}` has scopes {' '.join(s)}")
                            break


def shipped(root):
    for top in ("examples", "stdlib", "hw"):
        for d, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if f.endswith(".llmp"):
                    yield os.path.relpath(os.path.join(d, f), root)


def check_indentation(chk, root, files):
    """The language configuration's indentation rules agree with llmp fmt's layout, in which
    every shipped file is: a line that opens a bracket is followed by a deeper one, and only
    a line that starts with a closing bracket comes back out."""
    cfg = json.load(open(os.path.join(root, "editors/vscode/language-configuration.json"), encoding="utf-8"))
    inc = re.compile(cfg["indentationRules"]["increaseIndentPattern"])
    dec = re.compile(cfg["indentationRules"]["decreaseIndentPattern"])
    for rel in files:
        rows = [(len(l) - len(l.lstrip()), l) for l in read(root, rel).split("\n") if l.strip()]
        for (ind, line), (nind, nline) in zip(rows, rows[1:]):
            chk.checked += 1
            if line.lstrip().startswith("#") or nline.lstrip().startswith("#"):
                continue
            if bool(inc.search(line)) != (nind > ind):
                chk.fail(rel, f"increaseIndentPattern {'matches' if inc.search(line) else 'misses'} `{line.strip()}`")
            if bool(dec.search(nline)) != (nind < ind):
                chk.fail(rel, f"decreaseIndentPattern {'matches' if dec.search(nline) else 'misses'} `{nline.strip()}`")


# editors/vim/syntax/llmp.vim's groups, as the grammar's scopes they stand for
VIM = {
    "llmpComment": "comment.line.number-sign.llmp", "llmpTodo": "comment.line.number-sign.llmp",
    "llmpString": "string.quoted.double.llmp", "llmpEscape": "string.quoted.double.llmp constant.character.escape.llmp",
    "llmpBadEscape": "string.quoted.double.llmp invalid.illegal.escape.llmp",
    "llmpImport": "keyword.control.import.llmp", "llmpStatement": "keyword.control.llmp",
    "llmpLet": "keyword.other.let.llmp", "llmpOpKw": "keyword.other.op.llmp",
    "llmpLogical": "keyword.operator.logical.llmp", "llmpExtends": "storage.modifier.extends.llmp",
    "llmpBoolean": "constant.language.boolean.llmp", "llmpKind": "storage.type.llmp",
    "llmpDeclName": "entity.name.type.llmp", "llmpParent": "entity.other.inherited-class.llmp",
    "llmpNumber": "constant.numeric.llmp", "llmpUnit": "keyword.other.unit.llmp",
    "llmpBadUnit": "invalid.illegal.unit.llmp", "llmpEnum": "support.constant.enum.llmp",
    "llmpOpCall": "support.function.operator.llmp", "llmpBuiltin": "support.function.builtin.llmp",
    "llmpCall": "entity.name.function.llmp", "llmpField": "variable.other.property.llmp",
    "llmpMember": "variable.other.member.llmp", "llmpLetName": "variable.other.let.llmp",
    "llmpOpName": "entity.name.function.op.llmp", "llmpName": "variable.other.llmp",
    "llmpDelimiter": "punctuation.llmp", "llmpOperator": "keyword.operator.llmp",
    "llmpError": "invalid.illegal.character.llmp",
}


def per_char(tokens, text, vim):
    """An engine's tokens of each line, [start, end, scopes], as one scope list per character;
    Vim's are its syntax groups, read as the scopes in VIM."""
    lines = []
    for src, row in zip(text.split("\n"), tokens):
        scopes = [[] for _ in src]
        for a, b, sc in row:
            if vim:
                if sc[0] and sc[0] not in VIM:
                    raise SystemExit(f"grammar_check.py: syntax group {sc[0]} is not in VIM")
                sc = ["source.llmp"] + (VIM[sc[0]].split() if sc[0] else [])
            for i in range(a, min(b, len(src))):
                scopes[i] = sc
        lines.append(scopes)
    return lines


def main():
    args = sys.argv[1:]
    vim = args[-1:] == ["--vim"]
    args = args[:-1] if vim else args
    if not args or args[0].startswith("-") or len(args) not in (1, 3) or args[1:2] not in ([], ["--inputs"], ["--tokens"]):
        sys.exit(__doc__.split("\n\n")[-1].strip())
    root = args[0]
    g = Grammar(os.path.join(root, "editors/vscode/syntaxes/llmp.tmLanguage.json"))
    tables = language(root)
    keywords, units = tables[0], tables[1]
    files = sorted(shipped(root))
    if args[1:2] == ["--inputs"]:
        inputs = {rel: read(root, rel) for rel in files}
        inputs.update({"sample:" + text: text for text, _ in samples(*tables)})
        json.dump(inputs, open(args[2], "w", encoding="utf-8"))
        return
    if args[1:2] == ["--tokens"]:
        tokens = json.load(open(args[2], encoding="utf-8"))
        engine = "Neovim's syntax groups" if vim else "vscode-textmate"
        tokenize = lambda name, text: per_char(tokens[name], text, vim)  # noqa: E731
    else:
        engine = "grammar_check.py's engine"
        tokenize = lambda name, text: g.tokenize(text)  # noqa: E731
    chk = Checker()
    for rel in files:
        text = read(root, rel)
        check_file(chk, rel, text, tokenize(rel, text), units, keywords)
    check_samples(tokenize, chk, tables)
    check_indentation(chk, root, files)
    print(f"{len(files)} files and the compiler's word tables, {chk.checked} tokens and lines ({engine}): "
          f"{chk.failures} failures")
    sys.exit(1 if chk.failures else 0)


if __name__ == "__main__":
    main()
