//! `crossling models`: the registry of pretrained encoders (src/model/registry).
use anyhow::Result;
use clap::Subcommand;
use crossling::model::registry;

#[derive(Subcommand)]
pub enum ModelsCommand {
    /// Every registry entry: name, whether it is fetched, what it is, its source, licence and caveats.
    #[command(after_help = "Example:\n  crossling models list")]
    List,
    /// Fetch a model into the model cache and check it (no-op when it is there).
    ///
    /// Example: `crossling models fetch e5-small` (then `crossling features --model e5-small …`).
    #[command(after_help = "Example:\n  crossling models fetch e5-small")]
    Fetch { name: String },
    /// Print the folder of a fetched model (an error saying how to fetch it when it is not there).
    #[command(after_help = "Example:\n  crossling models path e5-small")]
    Path { name: String },
    /// Check every file of a fetched model against the sha256 recorded when it was fetched.
    #[command(after_help = "Example:\n  crossling models verify e5-small")]
    Verify { name: String },
}

pub fn run(cmd: ModelsCommand) -> Result<()> {
    match cmd {
        ModelsCommand::List => {
            for e in &registry::ENTRIES {
                let there = registry::installed(e.name).is_ok();
                println!("{} ({})", e.name, if there { "fetched" } else { "not fetched" });
                println!("  what:     {}", e.description);
                println!("  source:   {} (sha256-pinned)", e.source.describe());
                println!("  MLM head: {}", if e.has_mlm_head { "yes" } else { "no" });
                println!("  licence:  {}", e.licence);
                println!("  cite:     {}", e.citation);
                println!("  caveats:  {}", e.caveats);
            }
            Ok(())
        }
        ModelsCommand::Fetch { name } => {
            let dir = registry::fetch(&name, crossling::data::resolve::offline())?;
            let n = registry::verify(&name)?;
            println!("{name}: {} ({n} files verified)", dir.display());
            Ok(())
        }
        ModelsCommand::Path { name } => {
            println!("{}", registry::installed(&name)?.display());
            Ok(())
        }
        ModelsCommand::Verify { name } => {
            let n = registry::verify(&name)?;
            println!("{name}: {n} files match their recorded sha256");
            Ok(())
        }
    }
}
