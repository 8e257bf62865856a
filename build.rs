//! Build script: checks that `./setup.sh` has provided libtorch and bakes an rpath to it into every binary
//! (library tests, integration tests, the CLI), so nothing has to set `LD_LIBRARY_PATH`; and marks the build
//! `no_data_mirror` when the real-data mirror is absent (see [`data_mirror_cfg`]).
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-env-changed=LIBTORCH");
    println!("cargo:rerun-if-changed=build.rs");
    let libtorch = match std::env::var("LIBTORCH") {
        Ok(dir) => PathBuf::from(dir),
        Err(_) => panic!("LIBTORCH is not set: run ./setup.sh from the crossling folder (it installs torch in .venv)"),
    };
    let lib = libtorch.join("lib");
    if !lib.join("libtorch_cpu.so").exists() && !lib.join("libtorch_cpu.dylib").exists() {
        panic!(
            "libtorch not found at {}: run ./setup.sh from the crossling folder (it installs torch==2.13.0 in .venv)",
            lib.display()
        );
    }
    // torch-sys asks for torch_cuda, but rustc links with --as-needed and no symbol of it is referenced, so the
    // linker drops it and libtorch then sees no GPU at run time (tch-rs issue #980). Keep it explicitly.
    if lib.join("libtorch_cuda.so").exists() {
        println!("cargo:rustc-link-arg=-Wl,--no-as-needed,-ltorch_cuda,--as-needed");
    }
    // Keep the path through the .venv/libtorch link, so a rebuilt virtual environment needs no rebuild here.
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", lib.display());
    println!("cargo:rustc-env=CROSSLING_LIBTORCH_LIB={}", lib.display());
    data_mirror_cfg();
}

/// Tests that read the real-data mirror (`$CROSSLING_DATA`, else `../shared/data` beside the crate, as
/// `crate::data::formats::test_mirror` and `tests/common` find it) carry
/// `#[cfg_attr(no_data_mirror, ignore = "…")]`: where the mirror is absent they are reported as ignored, with the
/// reason, instead of passing without checking anything.
fn data_mirror_cfg() {
    println!("cargo:rustc-check-cfg=cfg(no_data_mirror)");
    println!("cargo:rerun-if-env-changed=CROSSLING_DATA");
    let mirror = std::env::var_os("CROSSLING_DATA")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data"));
    let sources = mirror.join("SOURCES.tsv");
    println!("cargo:rerun-if-changed={}", sources.display());
    if !sources.is_file() {
        println!("cargo:rustc-cfg=no_data_mirror");
    }
}
