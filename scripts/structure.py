#!/usr/bin/env python3
"""The structure check of issue 15, run by scripts/test.sh.

Reports, for every crate under crates/ and the desktop crate in src-tauri/:
  cycle      an import between two modules that are children of one module
             (the crate root's top-level modules, or the files and folders
             inside one module, e.g. core's service/builds.rs and
             service/manual.rs) and lie on a cycle, or between two files of
             ui/src: `cycle CRATE: a -> b`, `cycle CRATE: service::a ->
             service::b`, `cycle ui/src: a.ts -> b.ts`
  climb      an import that climbs within a crate: `super::super::…`
             anywhere, tests too (`climb PATH super::super`; name the
             module from `crate::` instead); or a module of a crate's own
             layering importing one above it (`climb PATH -> MODULE`):
             INNER_LAYERS lists, for such a module, the only other top-level
             modules of its crate it may import; core's store/ (all SQL,
             the bottom) imports only the error type and the leaf modules
             its rows are made of, never the service, builder or
             conversation above it
  shell      a shell's non-test source (SHELLS) naming a provider, the
             guard or the flow engine (SHELL_FORBIDDEN) instead of calling
             the service: `shell PATH NAME`
  long-file  a Rust source file over 800 lines, tests and generated code not
             counted: `long-file PATH`
  long-fn    a non-test Rust function over 120 lines: `long-fn PATH NAME`
  sql        SQL outside a store/ folder (core's, and the flows' checkpoint module maskflow-flows/src/store/): `sql PATH`
  dep        a forbidden crate dependency (from `cargo metadata`):
             `dep CRATE -> DEPENDENCY`

Imports are the paths written `crate::…`, `super::…` and `self::…` (in
`use` and in code, `{…}` groups expanded) outside test code, resolved
against the file's place in the module tree (`a/mod.rs` and `a.rs` are
module `a`). An item of a parent module (`super::Service`, re-exported or
not) counts as the parent's, not as an edge; modules written inline in a
file and `#[path]` are not followed.

Known violations are listed in scripts/structure-allow.txt, one per line. The
check fails on a violation that is not listed and on a listed one that no
longer occurs, so the list can only shrink (a ratchet): when you fix one,
delete its line.

  python3 scripts/structure.py              the check
  python3 scripts/structure.py --list       every violation found, one a line
  python3 scripts/structure.py --no-deps    without `cargo metadata`
  python3 scripts/structure.py --self-test  the checker's own tests

Python 3 standard library only.
"""

import json
import os
import re
import subprocess
import sys

MAX_FILE_LINES = 800
MAX_FN_LINES = 120

# The layers: the workspace crates each crate may use (issue 15's table,
# down to the shells; a crate not listed here may use any), and the crates
# none of them may reach, even indirectly.
LAYERS = {
    "maskflow-extractors": (),
    "maskflow-clock": (),
    "maskflow-runner": (),
    "maskflow-pyenv": ("maskflow-runner",),
    # The embedded model (llama.cpp): below the back ends, above nothing.
    "maskflow-local": (),
    "maskflow-llm": ("maskflow-clock", "maskflow-local"),
    "maskflow-privacy": ("maskflow-clock", "maskflow-extractors", "maskflow-llm"),
    "maskflow-table": (),
    "maskflow-flows": (
        "maskflow-clock",
        "maskflow-extractors",
        "maskflow-llm",
        "maskflow-privacy",
        "maskflow-table",
    ),
    "maskflow-core": (
        "maskflow-clock",
        "maskflow-extractors",
        "maskflow-flows",
        "maskflow-llm",
        "maskflow-privacy",
        "maskflow-pyenv",
        "maskflow-runner",
        "maskflow-table",
    ),
    # The shells: core, and the crates whose data types the call list and
    # the command line name (never the runner or the table directly).
    "maskflow-server": (
        "maskflow-clock",
        "maskflow-core",
        "maskflow-extractors",
        "maskflow-flows",
        "maskflow-llm",
        "maskflow-privacy",
    ),
    "maskflow-desktop": (
        "maskflow-core",
        "maskflow-extractors",
        "maskflow-flows",
        "maskflow-llm",
        "maskflow-privacy",
    ),
}
FORBIDDEN = {
    "maskflow-llm": ("axum", "tauri", "tao", "wry", "rusqlite"),
    # The LLM crate's OS keyring (its `keyring` feature) is the app's to
    # turn on: the privacy guard and the flows never read API keys.
    "maskflow-privacy": (
        "axum", "tauri", "tao", "wry", "rusqlite", "reqwest", "hyper",
        "keyring-core", "zbus-secret-service-keyring-store",
    ),
    "maskflow-table": ("axum", "tauri", "hyper", "reqwest", "wry", "rusqlite"),
    "maskflow-flows": (
        "axum", "tauri", "tao", "wry", "reqwest", "hyper",
        "keyring-core", "zbus-secret-service-keyring-store",
    ),
    "maskflow-extractors": ("axum", "tauri", "hyper", "reqwest", "wry", "rusqlite"),
    "maskflow-clock": ("axum", "tauri", "hyper", "reqwest", "wry", "rusqlite"),
    # The embedded model never reaches the network, the store or a shell.
    "maskflow-local": ("axum", "tauri", "tao", "wry", "hyper", "reqwest", "rusqlite"),
    "maskflow-runner": ("axum", "tauri", "hyper", "reqwest", "wry", "rusqlite"),
    "maskflow-pyenv": ("axum", "tauri", "tao", "wry", "rusqlite"),
    "maskflow-core": ("axum", "tauri", "tao", "wry"),
    "maskflow-server": ("tauri", "tao", "wry"),
    "maskflow-desktop": ("axum",),
}

# The modules of a crate's own layering: for a listed top-level module, the
# only other top-level modules of the crate it may import. Core's store/ is
# the bottom: it imports the error type, and the leaves its rows are made of
# (the status table, free-space checks, a Python lock), each importing
# nothing above the error type.
INNER_LAYERS = {
    "maskflow-core": {"store": ("error", "disk", "versions")},
}

# The shells: their non-test sources reach providers, the guard and the flow
# engine only through core's service (`ServiceConfig::with_backends`,
# `Service::flow_run_to_end`), so they never name these.
SHELLS = ("crates/maskflow-server/src/", "src-tauri/src/")
SHELL_FORBIDDEN = (
    # maskflow-llm: the provider trait, its back ends, the roles' table
    "Provider", "Roles", "ReplayProvider", "ManualProvider", "OpenAiProvider",
    "AnthropicProvider", "OllamaProvider",
    # maskflow-privacy: the guarded provider and the guard's index
    "GuardedProvider", "GuardIndex",
    # maskflow-flows: the engine, a run's handle, its ports
    "FlowEngine", "RunHandle", "FlowPorts", "FlowDatabase", "AgentBackends", "ScriptRunner",
    # maskflow-runner: the sandboxed runner
    "Runner",
)
SHELL_RE = re.compile(r"(?<![\w$])(" + "|".join(SHELL_FORBIDDEN) + r")(?![\w$])")

SQL_RE = re.compile(r"SELECT|INSERT INTO|UPDATE .* SET")
CFG_TEST_RE = re.compile(r"#\s*\[\s*cfg\s*\(\s*(?:all\s*\(\s*)?test\b")
TEST_ATTR_RE = re.compile(r"#\s*\[\s*(?:tokio::)?test\b")
FN_RE = re.compile(r"\bfn\s+([A-Za-z_][A-Za-z0-9_]*)")
PATH_START_RE = re.compile(r"(?<![\w$:])(crate|super|self)\s*::")
IDENT_RE = re.compile(r"\s*(?:r#)?([A-Za-z_][A-Za-z0-9_]*)")
TS_IMPORT_RE = re.compile(
    r"""(?:\bimport|\bexport)\s[^'";]*?\bfrom\s*['"]([^'"]+)['"]"""
    r"""|\bimport\s*['"]([^'"]+)['"]"""
    r"""|\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)"""
)


# ---------------------------------------------------------------- Rust lexing


def lex_rust(src):
    """Returns (no_comments, blanked): the source without comments, and the
    source without comments and with the contents of string and char literals
    blanked. Both keep every newline, so line numbers stay."""
    keep, blank = [], []
    i, n = 0, len(src)

    def put(text, blank_text=None):
        keep.append(text)
        blank.append(text if blank_text is None else blank_text)

    def blanked(text):
        return re.sub(r"[^\n]", " ", text)

    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            put(" " * (j - i))
            i = j
        elif src.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if src.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif src.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            put(blanked(src[i:j]))
            i = j
        elif (m := re.match(r'b?r(#*)"', src[i:i + 260])) and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_")):
            end = '"' + m.group(1)
            j = src.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            put(src[i:j], blanked(src[i:j]))
            i = j
        elif c == '"' or (c == "b" and src.startswith('b"', i) and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_"))):
            j = i + (2 if c == "b" else 1)
            while j < n and src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            j = min(n, j + 1)
            put(src[i:j], blanked(src[i:j]))
            i = j
        elif c == "'":
            m = re.match(r"'(?:\\(?:x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]+\}|.)|[^\\'\n])'", src[i:i + 16])
            if m:
                put(src[i:i + m.end()], "' '".ljust(m.end()))
                i += m.end()
            else:  # a lifetime
                put(c)
                i += 1
        else:
            put(c)
            i += 1
    return "".join(keep), "".join(blank)


def match_brace(code, open_at):
    """Index just past the brace that closes the one at `open_at`."""
    depth = 0
    for j in range(open_at, len(code)):
        if code[j] == "{":
            depth += 1
        elif code[j] == "}":
            depth -= 1
            if depth == 0:
                return j + 1
    return len(code)


def item_end(code, start):
    """From `start` (past an item's attributes), the end of the item: past its
    `;` or its closing brace, whichever comes first at bracket depth 0."""
    depth = 0
    for j in range(start, len(code)):
        ch = code[j]
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif depth == 0 and ch == ";":
            return j + 1
        elif depth == 0 and ch == "{":
            return match_brace(code, j)
    return len(code)


def skip_attributes(code, pos):
    """Past whitespace and `#[...]` attributes from `pos`."""
    while True:
        while pos < len(code) and code[pos].isspace():
            pos += 1
        if code.startswith("#[", pos) or code.startswith("#![", pos):
            depth = 0
            for j in range(code.index("[", pos), len(code)):
                if code[j] == "[":
                    depth += 1
                elif code[j] == "]":
                    depth -= 1
                    if depth == 0:
                        pos = j + 1
                        break
            else:
                return len(code)
        else:
            return pos


class RustFile:
    """One Rust source file, with its test-only parts found."""

    def __init__(self, path, src):
        self.path = path
        self.src = src
        self.code, self.blank = lex_rust(src)
        self.test_spans = []  # (start, end) offsets of #[cfg(test)] items
        self.test_mods = []  # names of `#[cfg(test)] mod x;` declarations
        self.test_mod_paths = []  # their `#[path = "…"]`, when they have one
        for m in CFG_TEST_RE.finditer(self.blank):
            attr_start = m.start()
            begin = skip_attributes(self.blank, attr_start)
            end = item_end(self.blank, begin)
            decl = re.match(r"(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", self.blank[begin:end])
            if decl:
                self.test_mods.append(decl.group(1))
                path = re.search(r'#\[\s*path\s*=\s*"([^"]+)"', self.code[attr_start:begin])
                if path:
                    self.test_mod_paths.append(path.group(1))
            self.test_spans.append((attr_start, end))
        for m in TEST_ATTR_RE.finditer(self.blank):
            begin = skip_attributes(self.blank, m.start())
            self.test_spans.append((m.start(), item_end(self.blank, begin)))

    def in_test(self, offset):
        return any(a <= offset < b for a, b in self.test_spans)

    def line_of(self, offset):
        return self.src.count("\n", 0, offset) + 1

    def counted_lines(self):
        """Lines outside test-only items."""
        lines = set(range(1, self.src.count("\n") + 1 + (0 if self.src.endswith("\n") else 1)))
        for a, b in self.test_spans:
            lines -= set(range(self.line_of(a), self.line_of(max(a, b - 1)) + 1))
        return len(lines)

    def long_functions(self, limit=MAX_FN_LINES):
        """(name, lines) of non-test functions with a body over `limit` lines."""
        out = []
        for m in FN_RE.finditer(self.blank):
            if self.in_test(m.start()):
                continue
            end = item_end(self.blank, m.end())
            if self.blank[end - 1] != "}":
                continue  # a declaration without a body
            lines = self.line_of(end - 1) - self.line_of(m.start()) + 1
            if lines > limit:
                out.append((m.group(1), lines))
        return out

    def paths(self):
        """(offset, segments) of every path that starts `crate::`,
        `super::` or `self::`, groups expanded: `use crate::{a::X, b::{self,
        Y}}` gives ["crate", "a", "X"], ["crate", "b", "self"] and
        ["crate", "b", "Y"]."""
        out = []
        for m in PATH_START_RE.finditer(self.blank):
            for segs in parse_path(self.blank, m.end(), [m.group(1)]):
                out.append((m.start(), segs))
        return out


def parse_path(code, i, segs):
    """The paths that go on from `segs` at `code[i:]` (just past a `::`):
    more segments, a `{…}` group or a `*`."""
    while i < len(code) and code[i].isspace():
        i += 1
    if code.startswith("{", i):
        group = code[i + 1:match_brace(code, i) - 1]
        out, depth, start = [], 0, 0
        for j, ch in enumerate(group + ","):
            if ch in "{(":
                depth += 1
            elif ch in "})":
                depth -= 1
            elif ch == "," and depth == 0:
                if group[start:j].strip():
                    out += parse_path(group[start:j] + " ", 0, segs)
                start = j + 1
        return out
    if code.startswith("*", i):
        return [segs]
    m = IDENT_RE.match(code, i)
    if not m:
        return [segs]
    segs = segs + [m.group(1)]
    rest = re.compile(r"\s*::").match(code, m.end())
    if rest and not code.startswith("<", rest.end()):
        return parse_path(code, rest.end(), segs)
    return [segs]


def resolve(segs, here):
    """The absolute module path (no `crate`) a path written in module `here`
    names; `self` segments dropped."""
    if segs[0] == "crate":
        out, rest = [], segs[1:]
    else:
        out, rest = list(here), segs
        while rest and rest[0] in ("self", "super"):
            if rest[0] == "super":
                out = out[:-1]
            rest = rest[1:]
    return out + [s for s in rest if s != "self"]


# ---------------------------------------------------------------- graphs


def cycle_edges(graph):
    """The edges (a, b) of `graph` (node -> set of nodes) that lie on a cycle:
    those whose two ends are in one strongly connected component."""
    index, low, on_stack, stack, comp = {}, {}, set(), [], {}
    counter = [0]
    nodes = set(graph) | {v for vs in graph.values() for v in vs}

    def strongconnect(v):
        # Iterative Tarjan: deep module graphs must not hit the recursion limit.
        work = [(v, iter(sorted(graph.get(v, ()))))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        while work:
            node, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    advanced = True
                    break
                if w in on_stack:
                    low[node] = min(low[node], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp[w] = node
                    if w == node:
                        break

    for v in sorted(nodes):
        if v not in index:
            strongconnect(v)
    return sorted((a, b) for a, bs in graph.items() for b in bs if a != b and comp[a] == comp[b])


# ---------------------------------------------------------------- the tree


def is_generated(path, src):
    return "/generated/" in path or "@generated" in src[:500]


def rust_files(root):
    """(crate, relative path) of every Rust file of the crates and the desktop."""
    out = []
    bases = [("crates/" + d, d) for d in sorted(os.listdir(os.path.join(root, "crates")))
             if os.path.isfile(os.path.join(root, "crates", d, "Cargo.toml"))]
    bases.append(("src-tauri", "maskflow-desktop"))
    for base, crate in bases:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, base)):
            dirnames[:] = sorted(d for d in dirnames if d not in ("target", "node_modules", ".git"))
            for f in sorted(filenames):
                if f.endswith(".rs"):
                    out.append((crate, os.path.relpath(os.path.join(dirpath, f), root)))
    return out


def is_test_path(rel):
    parts = rel.split("/")
    return parts[-1] == "tests.rs" or "tests" in parts[:-1] or "benches" in parts[:-1]


def module_path(rel):
    """(src dir, module path) of a file under a crate's src/: `src/lib.rs`
    is (), `src/a/mod.rs` and `src/a.rs` are ("a",), `src/a/b.rs` is ("a",
    "b"); None for a file outside src/ or under src/bin/."""
    parts = rel.split("/")
    if "src" not in parts:
        return None
    k = parts.index("src")
    inner = parts[k + 1:]
    if inner[0] == "bin":
        return None
    inner[-1] = inner[-1][:-3]
    if len(inner) == 1 and inner[0] in ("lib", "main"):
        inner = []
    elif inner[-1] == "mod":
        inner.pop()
    return "/".join(parts[:k + 1]), tuple(inner)


def rust_violations(files):
    """Violations of the Rust rules in `files`: a list of (crate, rel, source)."""
    found = {}
    parsed = [(crate, rel, RustFile(rel, src)) for crate, rel, src in files]
    # Files declared by `#[cfg(test)] mod x;` are test code.
    test_files = set()
    for _crate, rel, rf in parsed:
        here = os.path.dirname(rel)
        stem = os.path.basename(rel)[:-3]
        sub = here if stem in ("mod", "lib", "main") else os.path.join(here, stem)
        for name in rf.test_mods:
            test_files.add(os.path.join(sub, name + ".rs"))
            test_files.add(os.path.join(sub, name, "mod.rs"))
        for path in rf.test_mod_paths:
            test_files.add(os.path.normpath(os.path.join(here, path)))
    # The modules of each source tree, and the imports between them.
    modules, imports = {}, []
    for crate, rel, rf in parsed:
        test = is_test_path(rel) or rel in test_files
        for offset, segs in rf.paths():
            if segs[:2] == ["super", "super"]:
                found[f"climb {rel} super::super"] = f"line {rf.line_of(offset)}: name the module from crate:: instead"
        generated = is_generated(rel, rf.src)
        if not (test or generated):
            lines = rf.counted_lines()
            if lines > MAX_FILE_LINES:
                found[f"long-file {rel}"] = f"{lines} lines (limit {MAX_FILE_LINES})"
            for name, n in rf.long_functions():
                found[f"long-fn {rel} {name}"] = f"{n} lines (limit {MAX_FN_LINES})"
            if rel.startswith(SHELLS):
                for m in SHELL_RE.finditer(rf.blank):
                    if not rf.in_test(m.start()):
                        found[f"shell {rel} {m.group(1)}"] = (
                            f"line {rf.line_of(m.start())}: a shell calls the service, never a provider or the engine")
        place = module_path(rel)
        if place:
            src_dir, here = place
            known = modules.setdefault(src_dir, set())
            known.update(here[:k] for k in range(len(here) + 1))
            if not (test or generated):
                for offset, segs in rf.paths():
                    if not rf.in_test(offset):
                        imports.append((crate, rel, src_dir, here, tuple(resolve(segs, here)), rf.line_of(offset)))
        if not test and "/store/" not in rel:
            hits = [i + 1 for i, line in enumerate(rf.code.splitlines()) if SQL_RE.search(line)]
            if hits:
                found[f"sql {rel}"] = "SQL on line(s) " + ", ".join(map(str, hits[:8])) + (" …" if len(hits) > 8 else "")
    # An import from module `here` of path `target` is an edge between the
    # two children of their deepest common module it crosses, when the
    # target's child is a module (not an item of the parent, as
    # `crate::Error` or `super::Service`).
    graphs = {}
    for crate, rel, src_dir, here, target, line in imports:
        k = 0
        while k < min(len(here), len(target)) and here[k] == target[k]:
            k += 1
        if k < len(here) and k < len(target) and target[:k + 1] in modules[src_dir]:
            graph = graphs.setdefault((crate, src_dir, here[:k]), {})
            graph.setdefault(here[k], set()).add(target[k])
        layer = INNER_LAYERS.get(crate, {}).get(here[0] if here else None)
        if (layer is not None and target and target[0] != here[0] and target[0] not in layer
                and target[:1] in modules[src_dir]):
            found[f"climb {rel} -> {target[0]}"] = (
                f"line {line}: {here[0]} imports only {', '.join(layer)} (INNER_LAYERS)")
    for (crate, _src_dir, parent), graph in graphs.items():
        for a, b in cycle_edges(graph):
            a_name, b_name = "::".join(parent + (a,)), "::".join(parent + (b,))
            found[f"cycle {crate}: {a_name} -> {b_name}"] = f"{a_name} imports {b_name}, and {b_name} leads back to {a_name}"
    return found


def ts_strip_comments(src):
    src = re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), src, flags=re.S)
    return re.sub(r"(?m)^\s*//.*$", "", src)


def ts_violations(files):
    """Import cycles between the files of ui/src: `files` maps a path relative
    to ui/src to its source."""
    graph = {}
    for rel, src in files.items():
        deps = graph.setdefault(rel, set())
        for m in TS_IMPORT_RE.finditer(ts_strip_comments(src)):
            spec = m.group(1) or m.group(2) or m.group(3)
            if not spec.startswith("."):
                continue
            base = os.path.normpath(os.path.join(os.path.dirname(rel), spec))
            stem = re.sub(r"\.(js|jsx)$", "", base)
            for cand in (base, stem + ".ts", stem + ".tsx", stem + "/index.ts", stem + "/index.tsx"):
                if cand in files:
                    deps.add(cand)
                    break
    return {f"cycle ui/src: {a} -> {b}": f"{a} imports {b}, and {b} leads back to {a}" for a, b in cycle_edges(graph)}


def ui_files(root):
    out = {}
    base = os.path.join(root, "ui", "src")
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = [d for d in dirnames if d not in ("node_modules", "__tests__")]
        for f in filenames:
            if re.search(r"\.tsx?$", f) and not re.search(r"\.(test|spec)\.tsx?$", f) and not f.endswith(".d.ts"):
                path = os.path.join(dirpath, f)
                with open(path, encoding="utf-8") as fh:
                    out[os.path.relpath(path, base)] = fh.read()
    return out


def reachable(nodes, pid):
    """Package ids `pid` reaches through normal dependencies."""
    seen, todo = set(), [pid]
    while todo:
        cur = todo.pop()
        for dep in nodes[cur]["deps"]:
            if not any(k.get("kind") is None for k in dep.get("dep_kinds", [{"kind": None}])):
                continue
            if dep["pkg"] not in seen:
                seen.add(dep["pkg"])
                todo.append(dep["pkg"])
    return seen


def tree_reach(root, name):
    """The crates `name` reaches through normal dependencies, its features
    resolved for it alone (`cargo tree -p`)."""
    out = subprocess.run(
        ["cargo", "tree", "-p", name, "-e", "normal", "--prefix", "none", "--locked"],
        cwd=root, check=True, capture_output=True, text=True,
    ).stdout
    return {line.split()[0] for line in out.splitlines()[1:] if line.strip()}


def dep_violations(metadata, reach=None):
    """Forbidden dependencies in `cargo metadata` output: a layered crate uses
    only the workspace crates below it, and no listed crate reaches a forbidden one
    through normal (non-dev, non-build) dependencies. `reach` (crate name ->
    names it reaches, from `cargo tree -p`) replaces the walk of metadata's
    graph, whose features are unified over the workspace: core turns on the
    LLM crate's network back ends, which the privacy crate does without."""
    packages = {p["id"]: p for p in metadata["packages"]}
    members = {packages[i]["name"] for i in metadata["workspace_members"]}
    nodes = {n["id"]: n for n in metadata["resolve"]["nodes"]}
    found = {}
    for pid in metadata["workspace_members"]:
        name = packages[pid]["name"]
        if name not in FORBIDDEN:
            continue
        if reach is not None and name in reach:
            reached = reach[name]
        else:
            reached = {packages[d]["name"] for d in reachable(nodes, pid)}
        for dep_name in reached:
            if dep_name in FORBIDDEN[name]:
                found[f"dep {name} -> {dep_name}"] = "a forbidden dependency"
        if name in LAYERS:
            for dep in nodes[pid]["deps"]:
                dep_name = packages[dep["pkg"]]["name"]
                normal = any(k.get("kind") is None for k in dep.get("dep_kinds", [{"kind": None}]))
                if normal and dep_name in members and dep_name not in LAYERS[name]:
                    found[f"dep {name} -> {dep_name}"] = "a crate uses one that is not below it"
    return found


def collect(root, with_deps=True):
    files = []
    for crate, rel in rust_files(root):
        with open(os.path.join(root, rel), encoding="utf-8") as fh:
            files.append((crate, rel, fh.read()))
    found = rust_violations(files)
    found.update(ts_violations(ui_files(root)))
    if with_deps:
        meta = subprocess.run(
            ["cargo", "metadata", "--format-version", "1", "--locked"],
            cwd=root, check=True, capture_output=True, text=True,
        ).stdout
        reach = {name: tree_reach(root, name) for name in FORBIDDEN}
        found.update(dep_violations(json.loads(meta), reach))
    return found


def read_allow(path):
    allowed = []
    if os.path.exists(path):
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                line = line.strip()
                if line and not line.startswith("#"):
                    allowed.append(line)
    return allowed


def compare(found, allowed):
    """(new violations, stale allow-list entries)."""
    return sorted(set(found) - set(allowed)), sorted(set(allowed) - set(found))


# ---------------------------------------------------------------- self-test


def self_test():
    # Lexing: comments go, strings keep their text but not their braces.
    code, blank = lex_rust('let a = "{ // x"; // crate::gone\nlet c = \'{\'; /* crate::gone */ let l: &\'a str;')
    assert "gone" not in code and '"{ // x"' in code, code
    assert "{" not in blank and "'a str" in blank, blank

    # Test-only code is not counted; a long function is.
    body = "\n".join(f"    let x{i} = {i};" for i in range(130))
    rf = RustFile("src/a.rs", f"fn long() {{\n{body}\n}}\nfn short() {{}}\n"
                  f"#[cfg(test)]\nmod tests {{\n    fn long_test() {{\n{body}\n    }}\n}}\n")
    assert [n for n, _ in rf.long_functions()] == ["long"], rf.long_functions()
    assert rf.counted_lines() == 133, rf.counted_lines()
    assert RustFile("x.rs", "trait T { fn f(&self); }").long_functions(0) == []

    # Imports between top-level modules, with groups; a cycle is reported
    # edge by edge, an edge off the cycle is not.
    files = [
        ("c", "crates/c/src/lib.rs", "mod a; mod b; mod d;"),
        ("c", "crates/c/src/a.rs", "use crate::{b::X, d::{Y, Z}};"),
        ("c", "crates/c/src/b/mod.rs", "use super::a::Q; // crate::d in a comment"),
        ("c", "crates/c/src/b/inner.rs", "fn f() -> crate::Error { todo!() }"),
        ("c", "crates/c/src/d.rs", "#[cfg(test)]\nmod tests { use crate::a; }\n"),
        ("c", "crates/c/src/store/q.rs", 'const Q: &str = "SELECT 1";'),
        ("c", "crates/c/src/e.rs", 'const Q: &str = "UPDATE t SET x = 1";'),
        ("c", "crates/c/src/e/tests.rs", 'const Q: &str = "SELECT 1";'),
    ]
    found = rust_violations(files)
    assert set(found) == {"cycle c: a -> b", "cycle c: b -> a", "sql crates/c/src/e.rs"}, found

    # Cycles between the files of one module, through `super::`,
    # `crate::` paths, `self::` in a mod.rs and groups; an import of an
    # item of the parent (`super::Service`) or of a child's own submodule
    # is no edge, and a test's import does not count.
    files = [
        ("c", "crates/c/src/lib.rs", "mod service; mod store;"),
        ("c", "crates/c/src/service/mod.rs", "mod builds; mod manual; mod runs; pub struct Service;\n"
                                             "use self::builds::B;"),
        ("c", "crates/c/src/service/builds.rs", "use super::{Service, manual::M};"),
        ("c", "crates/c/src/service/manual.rs", "mod turns;\nfn f() { crate::service::runs::go(); }"),
        ("c", "crates/c/src/service/manual/turns.rs", "use crate::service::{Service, builds::{B, C}};"),
        ("c", "crates/c/src/service/runs.rs", "use super::Service;\n#[cfg(test)]\nmod tests { use super::super::manual; }"),
        ("c", "crates/c/src/store/mod.rs", "mod backups; mod schema; mod rows;"),
        ("c", "crates/c/src/store/schema.rs", "use super::{backups::{self}};\npub const B: &str = backups::MIGRATION;"),
        ("c", "crates/c/src/store/backups.rs", "fn known() -> usize { crate::store::schema::all().len() }"),
        ("c", "crates/c/src/store/rows.rs", "use crate::store::schema::V1; // super::backups in a comment"),
    ]
    found = rust_violations(files)
    assert {k for k in found if k.startswith("cycle")} == {
        "cycle c: service::builds -> service::manual",
        "cycle c: service::manual -> service::builds",
        "cycle c: store::backups -> store::schema",
        "cycle c: store::schema -> store::backups",
    }, found
    # ... and none once the store takes plain data and the builds stop
    # asking manual.
    files[2] = ("c", "crates/c/src/service/builds.rs", "use super::Service;")
    files[8] = ("c", "crates/c/src/store/backups.rs", "fn known(n: usize) -> usize { n }")
    assert not [k for k in rust_violations(files) if k.startswith("cycle")], rust_violations(files)

    # Climbing: `super::super` anywhere (a test's too); a module of core's
    # own layering importing one above it.
    files = [
        ("maskflow-core", "crates/maskflow-core/src/lib.rs", "mod builder; mod error; mod store;"),
        ("maskflow-core", "crates/maskflow-core/src/builder/mod.rs", "pub mod call; use crate::store::X;"),
        ("maskflow-core", "crates/maskflow-core/src/builder/call.rs", "fn f() { super::super::error::E; }"),
        ("maskflow-core", "crates/maskflow-core/src/store/mod.rs", "mod prompts; use crate::error::{self, Result};"),
        ("maskflow-core", "crates/maskflow-core/src/store/prompts.rs",
         "use crate::{builder::call::CallTag, store::X};\n#[cfg(test)]\nmod tests { use super::super::Y; }"),
    ]
    assert set(rust_violations(files)) == {
        "climb crates/maskflow-core/src/builder/call.rs super::super",
        "climb crates/maskflow-core/src/store/prompts.rs super::super",
        "climb crates/maskflow-core/src/store/prompts.rs -> builder",
        "cycle maskflow-core: builder -> store",
        "cycle maskflow-core: store -> builder",
    }, rust_violations(files)
    files[2] = ("maskflow-core", "crates/maskflow-core/src/builder/call.rs", "fn f() { crate::error::E; }")
    files[4] = ("maskflow-core", "crates/maskflow-core/src/store/prompts.rs",
                "use crate::store::X;\npub struct StoredCall { key: String }\n"
                "#[cfg(test)]\nmod tests { use crate::builder::call::CallTag; }")
    assert set(rust_violations(files)) == set(), rust_violations(files)

    # The shells name no provider nor the engine outside their tests; data
    # types and the service's calls are fine, and so are other crates.
    shell = "use maskflow_llm::{Provider, Roles};\nfn f(h: maskflow_flows::RunHandle) {}\n"
    tests = "#[cfg(test)]\nmod tests { use maskflow_llm::ReplayProvider; }\n"
    files = [
        ("maskflow-server", "crates/maskflow-server/src/serve.rs", shell + tests),
        ("maskflow-desktop", "src-tauri/src/lib.rs", "// Roles in a comment\nconst S: &str = \"FlowEngine\";\n"
                                                   "use maskflow_llm::manual::ManualPrompt; struct ProviderKind;\n" + tests),
        ("maskflow-server", "crates/maskflow-server/tests/it/serve.rs", shell),
        ("maskflow-core", "crates/maskflow-core/src/service/flows.rs", shell),
    ]
    assert set(rust_violations(files)) == {
        "shell crates/maskflow-server/src/serve.rs Provider",
        "shell crates/maskflow-server/src/serve.rs Roles",
        "shell crates/maskflow-server/src/serve.rs RunHandle",
    }, rust_violations(files)

    # `#[cfg(test)] mod x;` makes x.rs test code.
    long_src = "\n".join("fn f() {}" for _ in range(900))
    files = [("c", "crates/c/src/lib.rs", "mod a;"), ("c", "crates/c/src/a.rs", "#[cfg(test)]\nmod checks;\n"),
             ("c", "crates/c/src/a/checks.rs", long_src), ("c", "crates/c/src/big.rs", long_src),
             ("c", "crates/c/src/b.rs", '#[cfg(test)]\n#[path = "b_tests.rs"]\nmod tests;\n'),
             ("c", "crates/c/src/b_tests.rs", long_src)]
    assert set(rust_violations(files)) == {"long-file crates/c/src/big.rs"}, rust_violations(files)

    # ui/src: relative imports resolved to files; packages ignored.
    ui = {
        "app.tsx": "import { x } from './lib/x';\nimport { h } from 'preact';",
        "lib/x.ts": "import type { T } from '../transport';\nexport const x = 1;",
        "transport/index.ts": "// import { x } from '../lib/x'\nexport { y } from './y';",
        "transport/y.ts": "import { x } from '../lib/x';",
    }
    assert set(ts_violations(ui)) == {
        "cycle ui/src: lib/x.ts -> transport/index.ts",
        "cycle ui/src: transport/index.ts -> transport/y.ts",
        "cycle ui/src: transport/y.ts -> lib/x.ts",
    }, ts_violations(ui)

    # Dependencies: transitive normal ones count, dev ones do not.
    pkg = lambda n: {"id": n, "name": n}  # noqa: E731
    dep = lambda n, kind=None: {"pkg": n, "dep_kinds": [{"kind": kind}]}  # noqa: E731
    meta = {
        "packages": [pkg(n) for n in ("maskflow-core", "maskflow-clock", "mid", "axum", "tauri")],
        "workspace_members": ["maskflow-core", "maskflow-clock"],
        "resolve": {"nodes": [
            {"id": "maskflow-core", "deps": [dep("mid"), dep("tauri", "dev")]},
            {"id": "maskflow-clock", "deps": [dep("maskflow-core", "dev")]},
            {"id": "mid", "deps": [dep("axum")]},
            {"id": "axum", "deps": []}, {"id": "tauri", "deps": []},
        ]},
    }
    assert set(dep_violations(meta)) == {"dep maskflow-core -> axum"}, dep_violations(meta)
    meta["resolve"]["nodes"][1]["deps"] = [dep("maskflow-core")]
    assert "dep maskflow-clock -> maskflow-core" in dep_violations(meta)
    # What `cargo tree -p` reports for a crate replaces the unified graph.
    assert "dep maskflow-core -> axum" not in dep_violations(meta, {"maskflow-core": {"mid"}})
    assert "dep maskflow-core -> tauri" in dep_violations(meta, {"maskflow-core": {"tauri"}})
    # A shell uses the crates whose types it names, never the runner.
    meta = {
        "packages": [pkg(n) for n in ("maskflow-server", "maskflow-core", "maskflow-flows", "maskflow-runner")],
        "workspace_members": ["maskflow-server", "maskflow-core", "maskflow-flows", "maskflow-runner"],
        "resolve": {"nodes": [
            {"id": "maskflow-server", "deps": [dep("maskflow-core"), dep("maskflow-flows")]},
            {"id": "maskflow-core", "deps": [dep("maskflow-runner")]},
            {"id": "maskflow-flows", "deps": []}, {"id": "maskflow-runner", "deps": []},
        ]},
    }
    assert dep_violations(meta) == {}, dep_violations(meta)
    meta["resolve"]["nodes"][0]["deps"].append(dep("maskflow-runner"))
    assert set(dep_violations(meta)) == {"dep maskflow-server -> maskflow-runner"}, dep_violations(meta)

    # The ratchet: new and stale entries both fail.
    assert compare({"a": "", "b": ""}, ["b", "c"]) == (["a"], ["c"])
    print("structure.py self-test: ok")


def main(argv):
    if "--self-test" in argv:
        self_test()
        return 0
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    found = collect(root, with_deps="--no-deps" not in argv)
    if "--list" in argv:
        for key in sorted(found):
            print(key)
        return 0
    allow_path = os.path.join(root, "scripts", "structure-allow.txt")
    allowed = read_allow(allow_path)
    if "--no-deps" in argv:
        allowed = [a for a in allowed if not a.startswith("dep ")]
    new, stale = compare(found, allowed)
    for key in new:
        print(f"structure: {key}: {found[key]}", file=sys.stderr)
    for key in stale:
        print(f"structure: {key}: fixed, so delete its line from scripts/structure-allow.txt", file=sys.stderr)
    if new or stale:
        print(f"structure: {len(new)} new violation(s), {len(stale)} stale allow-list entr(ies)"
              " (scripts/structure.py explains the rules)", file=sys.stderr)
        return 1
    print(f"structure: ok ({len(allowed)} known violation(s) left in scripts/structure-allow.txt)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
