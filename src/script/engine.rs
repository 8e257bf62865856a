//! The Rhai engine of a script run: namespaces, constants, `import` from `scripts/`, captured `print`, and errors
//! that name the script, line and column with the Rust cause.
//!
//! Scripts see the constants `SCALE`, `SEED`, `DEVICE` and `FIGURE` (functions in imported modules get them as
//! `scale()`, `seed()`, `device()`, `figure()`, since Rhai functions do not see the caller's scope). Rhai has no
//! file or network access of its own; everything a script writes goes through the `results` namespace into the
//! outputs folder.
use std::path::{Path, PathBuf};

use rhai::module_resolvers::FileModuleResolver;
use rhai::{Dynamic, Engine, EvalAltResult, Module, Position, Scope};

use super::ns_common::Session;
use crate::error::{Error, Result};

/// Builds the engine with every namespace registered.
pub fn build_engine(session: &Session) -> Engine {
    let mut engine = Engine::new();
    engine.set_module_resolver(FileModuleResolver::new_with_path(&session.env.scripts_dir));
    engine.set_max_expr_depths(128, 64);
    let log = session.env.log.clone();
    engine.on_print(move |s| log.push(s));
    let log = session.env.log.clone();
    engine.on_debug(move |s, src, pos| {
        log.push(format!("[debug {}{pos}] {s}", src.map(|s| format!("{s} ")).unwrap_or_default()))
    });

    let mut env_fns = Module::new();
    let e = session.env.clone();
    let scale = e.scale.name().to_string();
    env_fns.set_native_fn("scale", move || Ok(scale.clone()));
    let device = e.compute.device_name();
    env_fns.set_native_fn("device", move || Ok(device.clone()));
    let figure = e.figure.clone();
    env_fns.set_native_fn("figure", move || Ok(figure.clone()));
    let seed = e.seed as i64;
    env_fns.set_native_fn("seed", move || Ok(seed));
    engine.register_global_module(env_fns.into());

    super::handles::register(&mut engine);
    super::ns_wordvec::register(&mut engine);
    for (name, module) in super::namespaces(session) {
        engine.register_static_module(name, module.into());
    }
    engine
}

/// Runs the script at `path` in `session`; returns the script's final value.
pub fn run_file(session: &Session, path: &Path) -> Result<Dynamic> {
    let source = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let engine = build_engine(session);
    let mut ast = engine.compile(&source).map_err(|e| {
        let pos = e.position();
        Error::Script {
            script: path.to_path_buf(),
            line: pos.line().unwrap_or(0),
            column: pos.position().unwrap_or(0),
            msg: format!("syntax error: {}", e.err_type()),
        }
    })?;
    ast.set_source(path.display().to_string());
    let mut scope = Scope::new();
    let env = &session.env;
    scope.push_constant("SCALE", env.scale.name().to_string());
    scope.push_constant("SEED", env.seed as i64);
    scope.push_constant("DEVICE", env.compute.device_name());
    scope.push_constant("FIGURE", env.figure.clone());
    engine.eval_ast_with_scope::<Dynamic>(&mut scope, &ast).map_err(|e| script_error(path, &env.scripts_dir, &e))
}

/// Maps a Rhai error to [`Error::Script`] at the innermost position, naming the file it is in (the script or an
/// imported module) and the chain of calls that led there.
pub fn script_error(script: &Path, scripts_dir: &Path, err: &EvalAltResult) -> Error {
    let mut file: PathBuf = script.to_path_buf();
    let mut chain = Vec::new();
    let mut cur = err;
    loop {
        match cur {
            EvalAltResult::ErrorInModule(name, inner, pos) => {
                chain.push(format!("import '{name}' at {}{}", file.display(), fmt_pos(*pos)));
                let p = scripts_dir.join(name);
                file = if p.extension().is_some() { p } else { p.with_extension("rhai") };
                cur = inner;
            }
            EvalAltResult::ErrorInFunctionCall(fn_name, src, inner, pos) => {
                chain.push(format!("call to {fn_name}() at {}{}", file.display(), fmt_pos(*pos)));
                if !src.is_empty() {
                    file = PathBuf::from(src);
                }
                cur = inner;
            }
            _ => break,
        }
    }
    let pos = cur.position();
    // Rhai appends " (line L, position C)"; the position is reported separately.
    let text = cur.to_string();
    let mut msg = match text.rfind(" (line ") {
        Some(i) if text.ends_with(')') => text[..i].to_string(),
        _ => text,
    };
    for c in chain.iter().rev() {
        msg.push_str(&format!("\n  in {c}"));
    }
    Error::Script { script: file, line: pos.line().unwrap_or(0), column: pos.position().unwrap_or(0), msg }
}

fn fmt_pos(pos: Position) -> String {
    match (pos.line(), pos.position()) {
        (Some(l), Some(c)) => format!(":{l}:{c}"),
        (Some(l), None) => format!(":{l}"),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::env::{RunLog, ScriptEnv};
    use super::*;

    fn session(dir: &Path) -> Session {
        Session::new(ScriptEnv {
            scale: crate::Scale::Smoke,
            seed: 42,
            compute: crate::device::Compute::cpu(),
            figure: "demo".into(),
            registered_title: None,
            out_dir: dir.join("out"),
            scripts_dir: dir.to_path_buf(),
            fresh: false,
            models_dir: dir.join("models"),
            given_models: Default::default(),
            log: RunLog::default(),
        })
        .unwrap()
    }

    fn run(dir: &Path, name: &str, text: &str) -> Result<Dynamic> {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        run_file(&session(dir), &p)
    }

    #[test]
    fn constants_print_and_imports() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("lib")).unwrap();
        std::fs::write(
            dir.path().join("lib/util.rhai"),
            "fn twice(x) { x * 2 }\nfn where_() { scale() + \"/\" + seed() }\n",
        )
        .unwrap();
        let s = session(dir.path());
        let p = dir.path().join("main.rhai");
        std::fs::write(&p, "import \"lib/util\" as u;\nprint(`${SCALE} ${SEED} ${DEVICE} ${FIGURE}`);\nu::twice(21) + u::where_().len()")
            .unwrap();
        let v = run_file(&s, &p).unwrap();
        assert_eq!(v.as_int().unwrap(), 42 + "smoke/42".len() as i64);
        assert_eq!(s.env.log.lines(), ["smoke 42 cpu demo"]);
    }

    #[test]
    fn errors_name_script_line_and_column() {
        let dir = tempfile::tempdir().unwrap();
        let e = run(dir.path(), "bad.rhai", "let x = 1;\nlet y = x +;\n").unwrap_err();
        let Error::Script { script, line, .. } = &e else { panic!("{e:?}") };
        assert!(script.ends_with("bad.rhai") && *line == 2, "{e}");
        assert!(e.to_string().contains("syntax error"), "{e}");

        let e = run(dir.path(), "rt.rhai", "let a = 1;\n  let b = a / 0;\n").unwrap_err();
        assert!(e.to_string().contains("rt.rhai:2:"), "{e}");

        // An error inside an imported module names the module file and the import site.
        std::fs::create_dir_all(dir.path().join("lib")).unwrap();
        std::fs::write(dir.path().join("lib/m.rhai"), "fn f() {\n  throw \"boom\";\n}\n").unwrap();
        let e = run(dir.path(), "imp.rhai", "import \"lib/m\" as m;\n\nm::f();\n").unwrap_err();
        let text = e.to_string();
        assert!(text.contains("boom") && text.contains("imp.rhai:3"), "{text}");

        // A Rust-side error (a namespace refusing an argument) keeps its message.
        let e = run(dir.path(), "ns.rhai", "\nresults::value(\"\", 1);\n").unwrap_err();
        assert!(e.to_string().contains("ns.rhai:2:") && e.to_string().contains("empty key"), "{e}");
    }
}
