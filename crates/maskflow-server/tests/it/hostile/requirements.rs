//! Break 1: code outside the sandbox through a requirement. The builder
//! asks for `xlsxwriter @ http://127.0.0.1:PORT2/xlsxwriter-3.3.0-py3-none-any.whl`
//! and for
//! `pandas\n--index-url http://127.0.0.1:PORT2/simple`; PORT2 is a second
//! recorder serving a real index and wheels whose `.pth` file writes a
//! marker outside every run folder when any interpreter starts with them.
//! Nothing may reach PORT2, no marker may appear, and each build fails with
//! a message naming its requirement, while an ordinary version range of a
//! curated package still builds.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{Folders, Recorder, Reply, backend, spec};

/// A pure-Python wheel `name-version-py3-none-any.whl` whose `.pth` file
/// writes `marker` when an interpreter starts with it installed.
fn wheel(name: &str, version: &str, marker: &Path) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    let mut w = zip::ZipWriter::new(&mut out);
    let opts = zip::write::SimpleFileOptions::default();
    let info = format!("{name}-{version}.dist-info");
    let pth = format!(
        "import os; open({:?}, 'a').write('ran as %d\\n' % os.getuid())\n",
        marker.display().to_string()
    );
    let files: Vec<(String, String)> =
        vec![
        (format!("{name}/__init__.py"), "VERSION = 'hostile'\n".into()),
        (format!("{name}_hostile.pth"), pth),
        (
            format!("{info}/METADATA"),
            format!("Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"),
        ),
        (
            format!("{info}/WHEEL"),
            "Wheel-Version: 1.0\nGenerator: hostile\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
                .into(),
        ),
    ];
    let mut record = String::new();
    for (path, text) in &files {
        w.start_file(path.as_str(), opts).expect("wheel member");
        w.write_all(text.as_bytes()).expect("wheel write");
        record.push_str(&format!("{path},,\n"));
    }
    record.push_str(&format!("{info}/RECORD,,\n"));
    w.start_file(format!("{info}/RECORD"), opts)
        .expect("wheel RECORD");
    w.write_all(record.as_bytes()).expect("wheel write");
    w.finish().expect("wheel");
    out.into_inner()
}

/// The foreign index: [`XLSX_WHEEL`], a PEP 503 page for
/// pandas and its wheel, each wheel with its own marker.
fn foreign_index(markers: &Path) -> Recorder {
    let xlsx = wheel("xlsxwriter", "3.3.0", &markers.join("marker-url"));
    let pandas = wheel("pandas", "9.9.9", &markers.join("marker-index"));
    Recorder::start(move |req, _| {
        let path = req.path.split('?').next().unwrap_or("");
        let (content_type, body) = if path.ends_with(XLSX_WHEEL) {
            ("application/octet-stream", xlsx.clone())
        } else if path.ends_with("pandas-9.9.9-py3-none-any.whl") {
            ("application/octet-stream", pandas.clone())
        } else if path.trim_end_matches('/').ends_with("/simple/pandas") {
            let page = "<!DOCTYPE html><html><body>\
                <a href=\"/files/pandas-9.9.9-py3-none-any.whl\">pandas-9.9.9-py3-none-any.whl</a>\
                </body></html>";
            ("text/html", page.as_bytes().to_vec())
        } else {
            return Reply::not_found();
        };
        Reply {
            status: 200,
            content_type: content_type.into(),
            body,
        }
    })
}

/// `uv` as the other tests find it (`MASKFLOW_UV`, then `PATH`), or why not.
pub fn uv() -> Result<PathBuf, String> {
    std::env::var_os("MASKFLOW_UV")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .into_iter()
        .chain([PathBuf::from("uv")])
        .find(|c| {
            std::process::Command::new(c)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .ok_or_else(|| "no uv (MASKFLOW_UV or PATH)".to_owned())
}

/// uv's cache shared by the test runs (`UV_CACHE_DIR`, else
/// `~/.cache/maskflow-test/uv`, as `scripts/test.sh` sets it).
pub fn uv_cache() -> PathBuf {
    if let Some(dir) = std::env::var_os("UV_CACHE_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir)
        .join(".cache/maskflow-test/uv")
}

/// Whether a test that needs uv may skip without it (not in CI).
pub fn skip_without_uv(test: &str) -> Option<PathBuf> {
    match uv() {
        Ok(uv) => Some(uv),
        Err(why) => {
            let required = std::env::var("MASKFLOW_REQUIRE_LLM_SERVERS").is_ok_and(|v| v == "1");
            assert!(!required, "{test} needs uv: {why}");
            eprintln!("SKIPPED {test}: {why}; scripts/test.sh installs it");
            None
        }
    }
}

/// The wheel the URL requirement names (a valid wheel file name, so uv
/// fetches it rather than refusing the name).
const XLSX_WHEEL: &str = "xlsxwriter-3.3.0-py3-none-any.whl";

/// The friend's script: writes a workbook with the package it asked for.
const ORDINARY: &str = "import xlsxwriter\nbook = xlsxwriter.Workbook('outputs/report.xlsx')\nbook.add_worksheet('Totals').write(0, 0, 'total')\nbook.close()\n";

const SCRIPT: &str = "import json, sys\nprint('rows', sum(1 for _ in open(json.load(open(sys.argv[1]))['fields']['people'])))\n";

#[test]
fn a_requirement_is_never_a_url_nor_an_option() {
    let Some(uv) = skip_without_uv("a_requirement_is_never_a_url_nor_an_option") else {
        return;
    };
    let dirs = Folders::new();
    let index = foreign_index(&dirs.outside());
    let url = format!("xlsxwriter @ http://127.0.0.1:{}/{XLSX_WHEEL}", index.port);
    let newline = format!("pandas\n--index-url http://127.0.0.1:{}/simple", index.port);
    let (u, n) = (url.clone(), newline.clone());
    let llm = backend(move |body| {
        if body.contains("ordinary requirement") {
            return spec(ORDINARY, &["xlsxwriter >= 3.0, < 4"], &["report.xlsx"]);
        }
        let req = if body.contains("attack by url") {
            &u
        } else {
            &n
        };
        spec(SCRIPT, &[req.as_str()], &[])
    });
    let cache = dirs.root.path().join("uv-cache");
    let mf = dirs.serve(
        &llm,
        &[
            ("MASKFLOW_UV", uv.as_os_str()),
            ("UV_CACHE_DIR", cache.as_os_str()),
        ],
    );
    let (by_url, _, _) = mf.build_people(&format!("{} (attack by url)", super::ASK));
    let (by_option, _, _) = mf.build_people(&format!("{} (attack by option)", super::ASK));
    // A friend: a plain version range of a curated package still builds.
    let (ordinary, _, _) = mf.build_people(&format!("{} (ordinary requirement)", super::ASK));

    let mut problems = Vec::new();
    let asked: Vec<String> = index.received().iter().map(|r| r.path.clone()).collect();
    if !asked.is_empty() {
        problems.push(format!("requests reached the foreign index: {asked:?}"));
    }
    let markers: Vec<String> = std::fs::read_dir(dirs.outside())
        .expect("outside")
        .flatten()
        .map(|e| {
            let text = std::fs::read_to_string(e.path()).unwrap_or_default();
            format!("{}: {}", e.file_name().to_string_lossy(), text.trim())
        })
        .collect();
    if !markers.is_empty() {
        problems.push(format!(
            "a wheel's code ran outside the sandbox: {markers:?}"
        ));
    }
    for (view, named) in [(&by_url, XLSX_WHEEL), (&by_option, "index-url")] {
        let version = &view["current_version"];
        if version["status"] != "failed" || !failure_text(version).contains(named) {
            problems.push(format!(
                "the build did not fail naming its requirement ({named}): status {}, {}",
                version["status"], version["failure_reason"]
            ));
        }
    }
    if ordinary["current_version"]["status"] != "pending_user_approval" {
        problems.push(format!(
            "an ordinary requirement (xlsxwriter >= 3.0, < 4) no longer builds: {}",
            ordinary["current_version"]
        ));
    }
    assert!(problems.is_empty(), "{problems:#?}");
    super::assert_no_customer_value(&llm);
}

/// The text a person reads about a failed version (its whole view, less
/// the script and spec the builder wrote).
fn failure_text(version: &Value) -> String {
    let mut v = version.clone();
    if let Some(o) = v.as_object_mut() {
        for k in ["script", "spec", "execution", "requirements"] {
            o.remove(k);
        }
    }
    v.to_string()
}
