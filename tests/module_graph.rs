//! The crate's module graph (issue 24): every `crate::MODULE` path in the library's code (comments, doc links and
//! `#[cfg(test)]` code left out) is an import of a top-level module by another. The data flow of DESIGN.md orders
//! the modules in [`LAYERS`]; a module may import only modules of lower layers, so the graph has no cycle and no
//! import against the flow. The drawing (`tests/module_graph/module-graph.dot` and `.svg`) is generated from the
//! same graph; this test fails when it is out of date. Regenerate it with
//! `CROSSLING_WRITE_GRAPH=1 cargo test --test module_graph` (the SVG needs Graphviz's `dot`).
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The top-level modules in data-flow order, lowest first; one line per layer.
const LAYERS: &[&[&str]] = &[
    &["error"],
    &["atomic_file", "cpu_time", "paths", "progress", "scale", "arrays", "device"],
    &["data"],
    &["text"],
    &["model"],
    &["train"],
    &["features", "wordvec"],
    &["analysis", "plot"],
    &["claims"],
    &["tasks"],
    &["jobs", "figures"],
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
