//! The registry's Hugging Face hub path (`src/model/registry/hub.rs`) against a local HTTP server on the loopback
//! that serves a small model folder in the hub's URL layout (`/{repo}/resolve/{revision}/{file}`): a fetch builds
//! the folder, records every file's sha256 and opens as the served model does; a file whose content differs from its
//! pin, a connection cut halfway through a file, an endpoint that does not answer and `offline` each stop with a
//! one-line error that names what was expected, and leave nothing in the model cache (no folder, no staging folder).
mod common;

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};

use crossling::model::hf::export_hf;
use crossling::model::registry::{fetch_entry, verify_folder, Entry, FetchOptions, HubFile, Source};
use crossling::model::{LoadedModel, MlmModel, ModelConfig, ModelTokenizer};
use sha2::{Digest, Sha256};
use tch::{nn::VarStore, Device, Kind, Tensor};

const REVISION: &str = "0123456789abcdef0123456789abcdef01234567";

/// A tiny BERT exported as a Hugging Face folder (`dir/served`).
fn served_model(dir: &Path) -> PathBuf {
    let (tok, cfg) = common::tiny_english(dir, 32);
    let cfg = ModelConfig { languages: vec!["en".into()], ..cfg };
    tch::manual_seed(5);
    let vs = VarStore::new(Device::Cpu);
    MlmModel::new(&vs.root(), &cfg).unwrap();
    let out = dir.join("served");
    export_hf(&vs, &cfg, &ModelTokenizer::crossling(tok), None, &out).unwrap();
    out
}

/// The folder's files with their byte counts and sha256, as a registry entry pins them.
fn pins(folder: &Path) -> Vec<HubFile> {
    let mut names: Vec<String> =
        std::fs::read_dir(folder).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
        .into_iter()
        .map(|n| {
            let bytes = std::fs::read(folder.join(&n)).unwrap();
            HubFile {
                path: Box::leak(n.into_boxed_str()),
                bytes: bytes.len() as u64,
                sha256: Box::leak(hex::encode(Sha256::digest(&bytes)).into_boxed_str()),
            }
        })
        .collect()
}

fn entry(name: &'static str, repo: &'static str, files: Vec<HubFile>) -> Entry {
    Entry {
        name,
        source: Source::Hub { repo, revision: REVISION, files: Box::leak(files.into_boxed_slice()) },
        licence: "MIT",
        citation: "a test fixture",
        description: "a tiny BERT",
        has_mlm_head: true,
        caveats: "none",
    }
}

/// Serves `folder` at `http://127.0.0.1:PORT/{repo}/resolve/{REVISION}/{file}` until the test ends; under the
/// repository `cut/tiny` every file's body stops halfway (the full length announced) and the connection closes.
fn serve(folder: PathBuf) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let _ = answer(stream, &folder);
        }
    });
    format!("http://{addr}")
}

fn answer(mut stream: TcpStream, folder: &Path) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request = String::new();
    reader.read_line(&mut request)?;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header)? == 0 || header == "\r\n" || header == "\n" {
            break;
        }
    }
    let path = request.split_whitespace().nth(1).unwrap_or("/");
    let parts: Vec<&str> = path.trim_start_matches('/').splitn(5, '/').collect();
    let (body, cut) = match parts.as_slice() {
        [owner, _, "resolve", rev, file] if *rev == REVISION => {
            (std::fs::read(folder.join(file)).ok(), *owner == "cut")
        }
        _ => (None, false),
    };
    match body {
        None => write!(stream, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")?,
        Some(body) => {
            write!(stream, "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len())?;
            stream.write_all(if cut { &body[..body.len() / 2] } else { &body })?;
        }
    }
    stream.flush()?;
    stream.shutdown(std::net::Shutdown::Both)
}

/// Nothing of entry `name` in `root`: no folder and no staging folder beside it.
fn nothing_left(root: &Path, name: &str) {
    assert!(!root.join(name).exists(), "{name}: a folder was left in the model cache");
    if let Ok(rd) = std::fs::read_dir(root) {
        let left: Vec<String> = rd.map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        assert!(left.iter().all(|n| !n.contains(name)), "{name}: left behind {left:?}");
    }
}

#[test]
fn a_pinned_hub_model_is_fetched_checked_and_opened() {
    let d = tempfile::tempdir().unwrap();
    let served = served_model(d.path());
    let endpoint = serve(served.clone());
    let root = d.path().join("models/registry");
    let opts = FetchOptions { root: root.clone(), offline: false, hub_endpoint: endpoint.clone(), progress: false };
    let files = pins(&served);
    assert!(files.iter().any(|f| f.path == "model.safetensors") && files.len() >= 3);

    // Fetched, recorded, verified, and it computes what the served folder computes.
    let e = entry("tiny-hub", "crossling/tiny", files.clone());
    let dir = fetch_entry(&e, &opts).unwrap();
    assert_eq!(dir, root.join("tiny-hub"));
    assert_eq!(verify_folder(&dir, "tiny-hub").unwrap(), files.len());
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("crossling-registry.json")).unwrap()).unwrap();
    assert_eq!(record["revision"], REVISION);
    assert_eq!(record["repo"], "crossling/tiny");
    let ids = Tensor::from_slice(&[2i64, 5, 7, 9, 3]).view([1, 5]);
    let ours = LoadedModel::open(&dir, Device::Cpu).unwrap().hidden_states(&ids, None, "en").unwrap();
    let theirs = LoadedModel::open(&served, Device::Cpu).unwrap().hidden_states(&ids, None, "en").unwrap();
    for (a, b) in ours.hidden_states.iter().zip(&theirs.hidden_states) {
        assert_eq!(f64::try_from((a - b).abs().max().to_kind(Kind::Double)).unwrap(), 0.0);
    }
    // A second fetch finds it there and verified: no request (the server could be gone).
    let offline = FetchOptions { offline: true, hub_endpoint: "http://127.0.0.1:9".into(), ..opts.clone() };
    assert_eq!(fetch_entry(&e, &offline).unwrap(), dir);
    // A file changed in the cache after the fetch: verify names it.
    std::fs::write(dir.join("config.json"), "{}").unwrap();
    let err = verify_folder(&dir, "tiny-hub").unwrap_err().to_string();
    assert!(err.contains("config.json") && err.contains("recorded at fetch"), "{err}");

    // A file whose content differs from its pin: both hashes, the URL, nothing written.
    let mut wrong = files.clone();
    let w = wrong.iter_mut().find(|f| f.path == "model.safetensors").unwrap();
    w.sha256 = "0000000000000000000000000000000000000000000000000000000000000000";
    let err = fetch_entry(&entry("tiny-wrong", "crossling/tiny", wrong), &opts).unwrap_err().to_string();
    assert!(err.contains("sha256 mismatch") || err.contains("expected 000000"), "{err}");
    assert!(err.contains("model.safetensors") && err.contains("nothing was written"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    nothing_left(&root, "tiny-wrong");

    // A connection cut halfway through a file.
    let err = fetch_entry(&entry("tiny-cut", "cut/tiny", files.clone()), &opts).unwrap_err().to_string();
    assert!(err.contains("cut after") && err.contains("nothing was written"), "{err}");
    assert!(err.contains(&format!("{endpoint}/cut/tiny/resolve/{REVISION}/")), "{err}");
    nothing_left(&root, "tiny-cut");

    // A file the server does not have (404), and an endpoint that does not answer.
    let mut missing = files.clone();
    missing.push(HubFile { path: "absent.json", bytes: 2, sha256: "00" });
    let err = fetch_entry(&entry("tiny-404", "crossling/tiny", missing), &opts).unwrap_err().to_string();
    assert!(err.contains("absent.json") && err.contains("local model folder"), "{err}");
    nothing_left(&root, "tiny-404");
    let dead = FetchOptions { hub_endpoint: "http://127.0.0.1:9".into(), ..opts.clone() };
    let err = fetch_entry(&entry("tiny-dead", "crossling/tiny", files.clone()), &dead).unwrap_err().to_string();
    assert!(err.contains("http://127.0.0.1:9/crossling/tiny/resolve/"), "{err}");
    nothing_left(&root, "tiny-dead");

    // Offline with no copy: the source named, and the way out.
    let err = fetch_entry(&entry("tiny-offline", "crossling/tiny", files), &offline).unwrap_err().to_string();
    assert!(err.contains(&format!("Hugging Face hub crossling/tiny at {REVISION}")), "{err}");
    assert!(err.contains("CROSSLING_OFFLINE") && err.contains("local model folder"), "{err}");
    nothing_left(&root, "tiny-offline");
}
