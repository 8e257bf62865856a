//! The `crossling` binary: parses the command line (see `cli`; the benchmarks are `bench`) and reports any error as
//! one message with a non-zero exit.
use clap::Parser;

mod bench;
mod cli;

fn main() {
    crossling::device::allocator::configure();
    crossling::device::vector_math::init();
    if let Err(e) = cli::Cli::parse().dispatch() {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
