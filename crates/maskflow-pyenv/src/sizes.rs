//! The download size of a pinned package, for the approval the user gives
//! before a package outside the curated set is installed: read from the
//! package index's JSON Simple API (PEP 691, sizes per PEP 700) — the index
//! uv is given ([`super::Environments::index`]); only the package's name is
//! sent. Best effort: no network, an index without sizes or no matching
//! wheel gives no size.

use std::time::Duration;

use serde::Deserialize;

use maskflow_runner::Python;

#[derive(Deserialize)]
struct Project {
    files: Vec<File>,
}

#[derive(Deserialize)]
struct File {
    filename: String,
    #[serde(default)]
    size: Option<u64>,
}

/// Whether a wheel's file name fits `base` on this machine: pure Python,
/// or built for its CPython (or the stable ABI) on this platform and CPU.
pub fn wheel_fits(filename: &str, base: &Python) -> bool {
    let Some(stem) = filename.strip_suffix(".whl") else {
        return false;
    };
    let tags: Vec<&str> = stem.rsplitn(4, '-').take(3).collect();
    let [platform, abi, python] = tags.as_slice() else {
        return false;
    };
    if *platform == "any" {
        return true;
    }
    let cp = format!("cp{}{}", base.version.0, base.version.1);
    let python_ok = python.split('.').any(|p| p == cp || p == "py3")
        || (abi.contains("abi3") && python.starts_with("cp3"));
    let os = match std::env::consts::OS {
        "linux" => "linux",
        "macos" => "macosx",
        "windows" => "win",
        other => other,
    };
    let arch = match (std::env::consts::OS, std::env::consts::ARCH) {
        ("windows", "x86_64") => "amd64",
        ("macos", "aarch64") => "arm64",
        (_, a) => a,
    };
    let musl = platform.contains("musllinux");
    python_ok
        && !musl
        && platform
            .split('.')
            .any(|p| p.contains(os) && (p.ends_with(arch) || p.contains("universal2")))
}

/// The size in bytes of the wheel `name==version` would be installed from,
/// when the package index `index` says.
pub async fn download_size(name: &str, version: &str, base: &Python, index: &str) -> Option<u64> {
    let plain = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '+' | '!'))
    };
    if !plain(name) || !plain(version) {
        return None;
    }
    if !index.starts_with("http") {
        return None;
    }
    let url = format!(
        "{}/{}/",
        index.trim_end_matches('/'),
        super::dist_name(name)
    );
    let mut builder = reqwest::Client::builder().timeout(Duration::from_secs(10));
    // As uv does: a machine's own certificate bundle (a company proxy's CA).
    if let Some(bundle) = std::env::var_os("SSL_CERT_FILE").and_then(|p| std::fs::read(p).ok())
        && let Ok(certs) = reqwest::Certificate::from_pem_bundle(&bundle)
    {
        for cert in certs {
            builder = builder.add_root_certificate(cert);
        }
    }
    let client = builder.build().ok()?;
    let project: Project = client
        .get(url)
        .header("Accept", "application/vnd.pypi.simple.v1+json")
        .send()
        .await
        .ok()?
        .error_for_status()
        .ok()?
        .json()
        .await
        .ok()?;
    let wanted = super::dist_name(name);
    project
        .files
        .iter()
        .filter(|f| {
            let mut parts = f.filename.splitn(3, '-');
            let (n, v) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
            super::dist_name(n) == wanted && v == version && wheel_fits(&f.filename, base)
        })
        .filter_map(|f| f.size)
        .max()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn py(major: u32, minor: u32) -> Python {
        Python {
            program: "python3".into(),
            version: (major, minor),
            executable: "/usr/bin/python3".into(),
            runtime: Vec::new(),
        }
    }

    #[test]
    fn wheels_are_matched_to_this_python_and_machine() {
        let p = py(3, 11);
        assert!(wheel_fits("tabulate-0.9.0-py3-none-any.whl", &p));
        assert!(!wheel_fits("tabulate-0.9.0.tar.gz", &p));
        let here = match (std::env::consts::OS, std::env::consts::ARCH) {
            ("linux", "x86_64") => {
                "numpy-2.1.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
            }
            ("linux", "aarch64") => {
                "numpy-2.1.0-cp311-cp311-manylinux_2_17_aarch64.manylinux2014_aarch64.whl"
            }
            ("macos", _) => "numpy-2.1.0-cp311-cp311-macosx_14_0_arm64.whl",
            _ => "numpy-2.1.0-cp311-cp311-win_amd64.whl",
        };
        assert!(wheel_fits(here, &p), "{here}");
        assert!(!wheel_fits(&here.replace("cp311", "cp312"), &p));
        assert!(!wheel_fits(
            "numpy-2.1.0-cp311-cp311-musllinux_1_2_x86_64.whl",
            &p
        ));
        assert!(!wheel_fits(
            "numpy-2.1.0-cp311-cp311-manylinux_2_17_ppc64le.whl",
            &p
        ));
    }
}
