//! The crate's module graph (issue 24): every `crate::MODULE` path in the library's code (comments, doc links and
//! `#[cfg(test)]` code left out) is an import of a top-level module by another. The data flow of DESIGN.md orders
//! the modules in [`LAYERS`]; a module may import only modules of lower layers, so the graph has no cycle and no
//! import against the flow. The drawing (`tests/module_graph/module-graph.dot` and `.svg`) is generated from the
//! same graph; this test fails when it is out of date. Regenerate it with
//! `CROSSLING_WRITE_GRAPH=1 cargo test --test module_graph` (the SVG needs Graphviz's `dot`).
//!
//! Inside the modules, files import each other without circles (issue 68 §3: a parent dispatches, siblings share a
//! common file, nothing imports its caller). [`no_circles_between_files`] builds the graph of file modules of the
//! library and the binary (`src/a/b.rs` is `a::b`, `src/a/mod.rs` is `a`) from every path that starts with `crate::`,
//! `super::`, `self::` or, in a file that declares modules, a child's name (`use` groups expanded; comments and
//! `#[cfg(test)]` code left out as above), each path leading to the longest prefix that is a file. A `pub use`
//! is no import of its own: a name it re-exports leads to the file it comes from. The test fails with every circle
//! (a strongly connected set of files) and the paths that make its edges.
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The top-level modules in data-flow order, lowest first; one line per layer.
const LAYERS: &[&[&str]] = &[
    &["error"],
    &["atomic_file", "cpu_time", "paths", "progress", "scale", "arrays", "device"],
    &["data"],
    &["text"],
    &["nn"],
    &["model"],
    &["train"],
    &["features", "wordvec"],
    &["analysis", "plot"],
    &["claims"],
    &["tasks"],
    &["jobs", "figures"],
    &["report"],
    &["script"],
    &["grid"],
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

/// The library's code of `text`: `#[cfg(test)]` items and comments removed.
fn library_code(text: &str) -> String {
    let mut out = String::new();
    let mut skip_depth: Option<i64> = None;
    let mut depth = 0i64;
    let mut pending_cfg_test = false;
    for line in text.lines() {
        let code = match line.find("//") {
            Some(i) if !line[..i].contains('"') => &line[..i],
            _ => line,
        };
        let trimmed = code.trim();
        if skip_depth.is_none() && trimmed.starts_with("#[cfg(test)]") {
            pending_cfg_test = true;
            continue;
        }
        let opens = code.matches('{').count() as i64;
        let closes = code.matches('}').count() as i64;
        if pending_cfg_test && !trimmed.is_empty() {
            pending_cfg_test = false;
            if opens > closes {
                skip_depth = Some(depth);
            } else {
                continue; // a one-line item under #[cfg(test)]
            }
        }
        depth += opens - closes;
        if let Some(d) = skip_depth {
            if depth <= d {
                skip_depth = None;
            }
            continue;
        }
        out.push_str(code);
        out.push('\n');
    }
    out
}

/// The top-level modules `code` imports through `crate::…`, including `use crate::{a::…, b}` groups.
fn imports(code: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut level = 0;
            let end = group
                .char_indices()
                .find(|&(_, c)| {
                    level += match c {
                        '{' => 1,
                        '}' => -1,
                        _ => 0,
                    };
                    level < 0
                })
                .map_or(group.len(), |(i, _)| i);
            let mut nesting = 0;
            let mut word = String::new();
            let mut at_start = true;
            for c in group[..end].chars() {
                match c {
                    '{' => nesting += 1,
                    '}' => nesting -= 1,
                    ',' if nesting == 0 => at_start = true,
                    c if c.is_alphanumeric() || c == '_' => {
                        if at_start {
                            word.push(c)
                        }
                    }
                    _ => {
                        if !word.is_empty() {
                            found.insert(std::mem::take(&mut word));
                            at_start = false;
                        }
                    }
                }
            }
            if !word.is_empty() {
                found.insert(word);
            }
        } else {
            let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            found.insert(name);
        }
    }
    found.retain(|m| modules.contains(m));
    found
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Edges `from → to` with the files that make each, over the library's top-level modules (the binary's `main.rs`,
/// `cli/` and `bench/` sit above all of them and are left out, as are test-only files named `tests.rs`).
fn module_graph(src: &Path) -> BTreeMap<(String, String), BTreeSet<String>> {
    let mut modules = BTreeSet::new();
    for entry in std::fs::read_dir(src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        if !["main", "lib", "cli", "bench"].contains(&name.as_str()) {
            modules.insert(name);
        }
    }
    let mut edges: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    let mut files = Vec::new();
    rust_files(src, &mut files);
    for file in files {
        let rel = file.strip_prefix(src).unwrap().to_string_lossy().replace('\\', "/");
        let top = rel.split('/').next().unwrap().trim_end_matches(".rs").to_string();
        if !modules.contains(&top) || rel.ends_with("/tests.rs") {
            continue;
        }
        let code = library_code(&std::fs::read_to_string(&file).unwrap());
        for to in imports(&code, &modules) {
            if to != top {
                edges.entry((top.clone(), to)).or_default().insert(rel.clone());
            }
        }
    }
    edges
}

/// The graph in Graphviz DOT, one rank per layer, lowest at the bottom.
fn dot(edges: &BTreeMap<(String, String), BTreeSet<String>>) -> String {
    let mut s = String::from(
        "// Generated by tests/module_graph.rs (CROSSLING_WRITE_GRAPH=1 cargo test --test module_graph).\n\
         // The crate's top-level modules; an arrow is an import (`crate::MODULE`), drawn from the importer down\n\
         // to the imported module. Layers follow DESIGN.md's data flow. `error` (imported by nearly every\n\
         // module) is left out of the drawing.\n\
         digraph crossling {\n  rankdir=BT;\n  node [shape=box, fontname=\"Helvetica\", fontsize=11];\n  \
         edge [color=\"#555555\", arrowsize=0.6];\n",
    );
    for (i, layer) in LAYERS.iter().enumerate().skip(1) {
        s += &format!("  {{ rank=same; /* layer {i} */ {} }}\n", layer.join("; "));
    }
    for (from, to) in edges.keys() {
        if to != "error" {
            s += &format!("  {from} -> {to};\n");
        }
    }
    s + "}\n"
}

#[test]
fn imports_follow_the_data_flow_and_the_drawing_is_current() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let edges = module_graph(&root.join("src"));
    let mut problems = Vec::new();
    let modules: BTreeSet<&String> = edges.keys().flat_map(|(a, b)| [a, b]).collect();
    for m in &modules {
        if layer_of(m).is_none() {
            problems.push(format!("module {m} has no layer in tests/module_graph.rs LAYERS"));
        }
    }
    for ((from, to), files) in &edges {
        if let (Some(a), Some(b)) = (layer_of(from), layer_of(to)) {
            if b >= a {
                let files: Vec<&str> = files.iter().map(String::as_str).collect();
                problems.push(format!("{from} (layer {a}) imports {to} (layer {b}) in {}", files.join(", ")));
            }
        }
    }
    assert!(problems.is_empty(), "imports against the data flow:\n{}", problems.join("\n"));

    let text = dot(&edges);
    let dir = root.join("tests").join("module_graph");
    let dot_path = dir.join("module-graph.dot");
    if std::env::var_os("CROSSLING_WRITE_GRAPH").is_some() {
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(&dot_path, &text).unwrap();
        let svg = std::process::Command::new("dot")
            .args(["-Tsvg", "-o"])
            .arg(dir.join("module-graph.svg"))
            .arg(&dot_path)
            .status()
            .expect("Graphviz `dot` draws the SVG");
        assert!(svg.success());
    }
    let committed = std::fs::read_to_string(&dot_path).unwrap_or_default();
    assert_eq!(
        committed, text,
        "tests/module_graph/module-graph.dot is out of date: CROSSLING_WRITE_GRAPH=1 cargo test --test module_graph"
    );
}

#[test]
fn the_scanner_sees_imports_and_skips_comments_and_tests() {
    let modules: BTreeSet<String> = ["model", "text", "train", "error"].iter().map(|s| s.to_string()).collect();
    let code = library_code(
        "use crate::{error::Result, model::{a, b}, text};\n\
         // crate::train in a comment\n\
         /// [`crate::train`] in a doc link\n\
         fn f() { let x = \"// not a comment\"; }\n\
         #[cfg(test)]\n\
         mod tests {\n    use crate::train::x;\n    fn g() { }\n}\n",
    );
    let found: Vec<String> = imports(&code, &modules).into_iter().collect();
    assert_eq!(found, ["error", "model", "text"]);
    assert_eq!(imports("let c = crate::train::run();", &modules).into_iter().collect::<Vec<_>>(), ["train"]);
}

// ---- The file-level graph: no circles between the files of a folder (issue 68 §3). ----

/// A module path from its crate's root: `["crossling", "tasks", "backbone"]` for `src/tasks/backbone.rs`, with
/// `"main"` as the root of the binary's modules (`cli`, `bench`).
type ModulePath = Vec<String>;

/// The module a file under `src/` is (`a/b.rs` → `a::b`, `a/mod.rs` → `a`), under its crate's root.
fn file_module(rel: &str) -> ModulePath {
    let mut parts: Vec<String> = rel.trim_end_matches(".rs").split('/').map(str::to_string).collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    let root = if ["main", "cli", "bench"].contains(&parts[0].as_str()) { "main" } else { "crossling" };
    if ["main", "lib"].contains(&parts[0].as_str()) {
        parts.clear();
    }
    std::iter::once(root.to_string()).chain(parts).collect()
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Ident(String),
    Path, // `::`
    Punct(char),
}

/// `code` as identifiers, `::` and punctuation; string and character literals and lifetimes left out.
fn tokens(code: &str) -> Vec<Token> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            // A raw string r"…", r#"…"#, br"…".
            if (word == "r" || word == "br") && i < chars.len() && (chars[i] == '"' || chars[i] == '#') {
                let hashes = chars[i..].iter().take_while(|&&c| c == '#').count();
                if chars.get(i + hashes) == Some(&'"') {
                    i += hashes + 1;
                    while i < chars.len() && !(chars[i] == '"' && chars[i + 1..].iter().take(hashes).all(|&c| c == '#'))
                    {
                        i += 1;
                    }
                    i += 1 + hashes;
                    continue;
                }
            }
            out.push(Token::Ident(word));
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
        } else if c == '\'' {
            // A character literal ('a', '\n', '\u{1F600}') or a lifetime ('a).
            if chars.get(i + 1) == Some(&'\\') {
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if chars.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                i += 1;
            }
        } else if c == ':' && chars.get(i + 1) == Some(&':') {
            out.push(Token::Path);
            i += 2;
        } else {
            if !c.is_whitespace() {
                out.push(Token::Punct(c));
            }
            i += 1;
        }
    }
    out
}

/// One path the code names, with its `use` groups expanded: `use super::{a::B, c as d}` names `super::a::B` and
/// `super::c`. `reexport` marks the paths of a `pub use`, which make a name of this module stand for another's.
#[derive(Debug, Clone, PartialEq)]
struct NamedPath {
    segments: Vec<String>,
    name: String,
    reexport: bool,
}

/// The paths of the tree that starts at `tokens[*pos]` under `prefix`, the position left after it.
fn path_tree(tokens: &[Token], pos: &mut usize, prefix: Vec<String>) -> Vec<(Vec<String>, String)> {
    let mut path = prefix;
    loop {
        match tokens.get(*pos) {
            Some(Token::Ident(s)) => {
                path.push(s.clone());
                *pos += 1;
                if tokens.get(*pos) == Some(&Token::Path) {
                    *pos += 1;
                    continue;
                }
                let mut name = s.clone();
                if tokens.get(*pos) == Some(&Token::Ident("as".into())) {
                    if let Some(Token::Ident(alias)) = tokens.get(*pos + 1) {
                        name = alias.clone();
                    }
                    *pos += 2;
                }
                return vec![(path, name)];
            }
            Some(Token::Punct('{')) => {
                *pos += 1;
                let mut out = Vec::new();
                while let Some(t) = tokens.get(*pos) {
                    match t {
                        Token::Punct('}') => {
                            *pos += 1;
                            break;
                        }
                        Token::Punct(',') => *pos += 1,
                        _ => {
                            let before = *pos;
                            out.extend(path_tree(tokens, pos, path.clone()));
                            if *pos == before {
                                *pos += 1;
                            }
                        }
                    }
                }
                return out;
            }
            Some(Token::Punct('*')) => {
                *pos += 1;
                return vec![(path, "*".into())];
            }
            _ => {
                let name = path.last().cloned().unwrap_or_default();
                return vec![(path, name)];
            }
        }
    }
}

/// The paths in `code` that start with `crate`, `super`, `self` or the name of one of `children` (the modules the
/// file declares with `mod NAME;`, which its code may name without `self::`).
fn named_paths(code: &str, children: &BTreeSet<String>) -> Vec<NamedPath> {
    let tokens = tokens(code);
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let starts_path = matches!(tokens.get(i), Some(Token::Ident(_)))
            && (tokens.get(i + 1) == Some(&Token::Path) || tokens.get(i + 1) == Some(&Token::Punct('{')))
            && (i == 0 || tokens[i - 1] != Token::Path);
        if !starts_path {
            i += 1;
            continue;
        }
        let reexport = i >= 2 && tokens[i - 1] == Token::Ident("use".into()) && {
            // `pub use`, `pub(crate) use`, `pub(super) use`
            tokens[i - 2] == Token::Ident("pub".into())
                || (i >= 5 && tokens[i - 2] == Token::Punct(')') && tokens[i - 5] == Token::Ident("pub".into()))
        };
        let Token::Ident(first) = &tokens[i] else { unreachable!() };
        let keep = ["crate", "super", "self"].contains(&first.as_str()) || children.contains(first);
        let mut pos = i;
        for (segments, name) in path_tree(&tokens, &mut pos, Vec::new()) {
            if keep {
                out.push(NamedPath { segments, name, reexport });
            }
        }
        i = pos.max(i + 1);
    }
    out
}

/// The library's and the binary's modules, one per file, with what each file's code names.
struct FileGraph {
    /// module → (file, its paths)
    files: BTreeMap<ModulePath, (String, Vec<NamedPath>)>,
    /// module → name → the module a `pub use` of that name re-exports
    reexports: BTreeMap<ModulePath, BTreeMap<String, ModulePath>>,
}

impl FileGraph {
    fn read(src: &Path) -> FileGraph {
        let mut paths = Vec::new();
        rust_files(src, &mut paths);
        let mut modules = BTreeMap::new();
        for file in paths {
            let rel = file.strip_prefix(src).unwrap().to_string_lossy().replace('\\', "/");
            if rel.ends_with("/tests.rs") || rel == "tests.rs" {
                continue;
            }
            let code = library_code(&std::fs::read_to_string(&file).unwrap());
            modules.insert(file_module(&rel), (rel, code));
        }
        let mut files = BTreeMap::new();
        for (module, (rel, code)) in &modules {
            let children: BTreeSet<String> = modules
                .keys()
                .filter(|m| m.len() == module.len() + 1 && m.starts_with(module))
                .map(|m| m.last().unwrap().clone())
                .collect();
            files.insert(module.clone(), (rel.clone(), named_paths(code, &children)));
        }
        let mut graph = FileGraph { files, reexports: BTreeMap::new() };
        // Re-exports may go through re-exports: resolve them until nothing changes.
        loop {
            let mut reexports: BTreeMap<ModulePath, BTreeMap<String, ModulePath>> = BTreeMap::new();
            for (module, (_, named)) in &graph.files {
                for p in named.iter().filter(|p| p.reexport && p.name != "*") {
                    if let Some(target) = graph.resolve(module, &p.segments) {
                        reexports.entry(module.clone()).or_default().insert(p.name.clone(), target);
                    }
                }
            }
            if reexports == graph.reexports {
                return graph;
            }
            graph.reexports = reexports;
        }
    }

    /// The file module that `segments`, named in `module`, leads to: the longest prefix that is a file, or the module
    /// a name it re-exports comes from.
    fn resolve(&self, module: &ModulePath, segments: &[String]) -> Option<ModulePath> {
        let mut at: ModulePath = module.clone();
        let mut rest = segments;
        match rest.first().map(String::as_str) {
            Some("crate") => {
                at.truncate(1);
                rest = &rest[1..];
            }
            Some("self") => rest = &rest[1..],
            Some("super") => {
                while rest.first().is_some_and(|s| s == "super") {
                    at.pop();
                    rest = &rest[1..];
                }
            }
            _ => {}
        }
        if at.is_empty() {
            return None;
        }
        for segment in rest {
            if segment == "self" {
                continue;
            }
            let mut child = at.clone();
            child.push(segment.clone());
            if self.files.contains_key(&child) {
                at = child;
            } else if let Some(target) = self.reexports.get(&at).and_then(|r| r.get(segment)) {
                return Some(target.clone());
            } else {
                break;
            }
        }
        Some(at)
    }

    /// Edges `from → to` between file modules (crate roots left out), with the paths that make each.
    fn edges(&self) -> BTreeMap<(ModulePath, ModulePath), BTreeSet<String>> {
        let mut edges: BTreeMap<(ModulePath, ModulePath), BTreeSet<String>> = BTreeMap::new();
        for (module, (_, named)) in &self.files {
            if module.len() < 2 {
                continue;
            }
            for p in named.iter().filter(|p| !p.reexport) {
                if let Some(to) = self.resolve(module, &p.segments) {
                    if to.len() >= 2 && &to != module {
                        edges.entry((module.clone(), to)).or_default().insert(p.segments.join("::"));
                    }
                }
            }
        }
        edges
    }
}

fn show(m: &ModulePath) -> String {
    m[1..].join("::")
}

/// The circles of a graph: its strongly connected components of more than one module (Tarjan), each as one cycle
/// through all its modules' edges listed.
fn circles(edges: &BTreeMap<(ModulePath, ModulePath), BTreeSet<String>>) -> Vec<Vec<ModulePath>> {
    let nodes: BTreeSet<&ModulePath> = edges.keys().flat_map(|(a, b)| [a, b]).collect();
    let nodes: Vec<&ModulePath> = nodes.into_iter().collect();
    let index_of: BTreeMap<&ModulePath, usize> = nodes.iter().enumerate().map(|(i, m)| (*m, i)).collect();
    let mut next: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    for (a, b) in edges.keys() {
        next[index_of[a]].push(index_of[b]);
    }
    struct Tarjan<'a> {
        next: &'a [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        counter: usize,
        components: Vec<Vec<usize>>,
    }
    impl Tarjan<'_> {
        fn visit(&mut self, v: usize) {
            self.index[v] = Some(self.counter);
            self.low[v] = self.counter;
            self.counter += 1;
            self.stack.push(v);
            self.on_stack[v] = true;
            for &w in &self.next[v] {
                match self.index[w] {
                    None => {
                        self.visit(w);
                        self.low[v] = self.low[v].min(self.low[w]);
                    }
                    Some(iw) if self.on_stack[w] => self.low[v] = self.low[v].min(iw),
                    _ => {}
                }
            }
            if Some(self.low[v]) == self.index[v] {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack[w] = false;
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.components.push(component);
                }
            }
        }
    }
    let n = nodes.len();
    let mut t = Tarjan {
        next: &next,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        counter: 0,
        components: Vec::new(),
    };
    for v in 0..n {
        if t.index[v].is_none() {
            t.visit(v);
        }
    }
    let mut out: Vec<Vec<ModulePath>> =
        t.components.into_iter().map(|c| c.into_iter().map(|i| nodes[i].clone()).collect()).collect();
    out.sort();
    out
}

#[test]
fn no_circles_between_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let graph = FileGraph::read(&root.join("src"));
    let edges = graph.edges();
    let mut report = Vec::new();
    for component in circles(&edges) {
        let members: BTreeSet<&ModulePath> = component.iter().collect();
        let mut lines = vec![format!("circle: {}", component.iter().map(show).collect::<Vec<_>>().join(", "))];
        for ((a, b), via) in &edges {
            if members.contains(a) && members.contains(b) {
                let files = &graph.files[a].0;
                lines.push(format!(
                    "  {} -> {} ({files}: {})",
                    show(a),
                    show(b),
                    via.iter().cloned().collect::<Vec<_>>().join(", ")
                ));
            }
        }
        report.push(lines.join("\n"));
    }
    assert!(report.is_empty(), "{} circles in the module graph (a parent dispatches, siblings share a common file, nothing imports its caller):\n{}", report.len(), report.join("\n"));
}

#[test]
fn the_file_scanner_expands_groups_and_resolves_relative_paths() {
    let children: BTreeSet<String> = ["child"].iter().map(|s| s.to_string()).collect();
    let code = library_code(
        "use super::{a::B, c as d, e::{f, g::*}};\n\
         pub use child::Thing;\n\
         pub(crate) use self::child::Other as Renamed;\n\
         use std::collections::{super_thing::X, child::Y};\n\
         fn f() { let s = \"crate::not_a_path\"; child::run(); crate::x::y(); x.child(); }\n\
         #[cfg(test)]\n\
         mod tests {\n    use super::super::tested::T;\n}\n",
    );
    let found: Vec<(String, String, bool)> =
        named_paths(&code, &children).into_iter().map(|p| (p.segments.join("::"), p.name, p.reexport)).collect();
    let expected = [
        ("super::a::B", "B", false),
        ("super::c", "d", false),
        ("super::e::f", "f", false),
        ("super::e::g", "*", false),
        ("child::Thing", "Thing", true),
        ("self::child::Other", "Renamed", true),
        ("child::run", "run", false),
        ("crate::x::y", "y", false),
    ];
    let expected: Vec<(String, String, bool)> =
        expected.iter().map(|(p, n, r)| (p.to_string(), n.to_string(), *r)).collect();
    assert_eq!(found, expected);

    assert_eq!(file_module("tasks/word_align/mod.rs"), ["crossling", "tasks", "word_align"]);
    assert_eq!(file_module("cli/task.rs"), ["main", "cli", "task"]);
    assert_eq!(file_module("lib.rs"), ["crossling"]);

    // a/mod.rs re-exports B from a/b.rs; a/c.rs names it through the parent: the edge goes to a::b, not to a.
    let m = |s: &str| -> ModulePath { std::iter::once("crossling").chain(s.split("::")).map(str::to_string).collect() };
    let path = |s: &str, reexport: bool| NamedPath {
        segments: s.split("::").map(str::to_string).collect(),
        name: s.rsplit("::").next().unwrap().to_string(),
        reexport,
    };
    let mut graph = FileGraph {
        files: BTreeMap::from([
            (m("a"), ("a/mod.rs".to_string(), vec![path("b::B", true), path("c::run", false)])),
            (m("a::b"), ("a/b.rs".to_string(), vec![])),
            (m("a::c"), ("a/c.rs".to_string(), vec![path("super::B", false), path("crate::a::b::B", false)])),
        ]),
        reexports: BTreeMap::new(),
    };
    graph.reexports = BTreeMap::from([(m("a"), BTreeMap::from([("B".to_string(), m("a::b"))]))]);
    assert_eq!(graph.resolve(&m("a::c"), &["super".into(), "B".into()]), Some(m("a::b")));
    let edges: Vec<(String, String)> = graph.edges().into_keys().map(|(a, b)| (show(&a), show(&b))).collect();
    assert_eq!(edges, [("a".to_string(), "a::c".to_string()), ("a::c".to_string(), "a::b".to_string())]);
    assert!(circles(&graph.edges()).is_empty());

    // a/c.rs naming an item of a/mod.rs itself while a calls into a/c.rs: a circle.
    graph.files.get_mut(&m("a::c")).unwrap().1.push(path("super::helper", false));
    assert_eq!(circles(&graph.edges()), [vec![m("a"), m("a::c")]]);
}
