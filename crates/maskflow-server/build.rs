//! Points `MASKFLOW_UI_DIR` at the built UI (`ui/dist`) so `maskflow serve`
//! embeds it. When the UI has not been built (`npm --prefix ui run build`),
//! a one-page stand-in that says so is embedded instead, so the server
//! still builds and its API tests still run.

use std::path::{Path, PathBuf};

fn stamp(dir: &Path, acc: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(|e| e.ok()).collect();
    entries.sort_by_key(|e| e.path());
    for e in entries {
        let path = e.path();
        if path.is_dir() {
            stamp(&path, acc);
        } else if let Ok(meta) = e.metadata() {
            let modified = meta
                .modified()
                .ok()
                .and_then(|m| m.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            acc.push(format!("{}:{}:{modified}", path.display(), meta.len()));
        }
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let dist = manifest.join("../../ui/dist");
    println!("cargo:rerun-if-changed={}", dist.display());
    let dir = if dist.join("index.html").is_file() {
        dist
    } else {
        let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default()).join("ui-missing");
        let page = "<!doctype html><html><head><meta charset=\"utf-8\"><title>Maskflow</title></head>\
<body><h1>Maskflow</h1><p>The server is running, but this build has no user interface: \
run <code>npm --prefix ui ci &amp;&amp; npm --prefix ui run build</code>, then rebuild. \
The API is described at <a href=\"/api/openapi.json\">/api/openapi.json</a>.</p></body></html>";
        if std::fs::create_dir_all(&out).is_ok() {
            let _ = std::fs::write(out.join("index.html"), page);
        }
        out
    };
    let mut files = Vec::new();
    stamp(&dir, &mut files);
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in files.join("\n").bytes() {
        hash = (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    println!("cargo:rustc-env=MASKFLOW_UI_DIR={}", dir.display());
    println!("cargo:rustc-env=MASKFLOW_UI_STAMP={hash:016x}");
}
