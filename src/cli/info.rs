//! `crossling info`: version, linked libtorch, devices, data roots.
use anyhow::Result;
use crossling::data::manifest::Catalog;
use crossling::data::resolve::DataRoots;

pub fn run() -> Result<()> {
    let t = crossling::device::torch_info();
    println!("crossling {}", env!("CARGO_PKG_VERSION"));
    println!("libtorch: {} (loaded)", t.describe());
    println!("intra-op threads: {}", t.intra_op_threads);
    println!("CUDA: {} ({} device(s)), cuDNN: {}", t.cuda_available, t.cuda_devices, t.cudnn_available);
    let roots = DataRoots::from_env();
    println!(
        "data mirror (CROSSLING_DATA): {}",
        roots.mirror.as_ref().map(|p| p.display().to_string()).unwrap_or_else(|| "not set".into())
    );
    println!("data cache: {}", roots.cache.display());
    println!("manifests: {}", Catalog::default_dir().display());
    Ok(())
}
