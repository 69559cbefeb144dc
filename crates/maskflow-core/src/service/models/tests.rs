//! The model manager against a real HTTP server on loopback (a small one
//! written here, so a test can drop a connection mid-way, stall, and see the
//! `Range` header each request carried).

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::{Arc, Mutex, mpsc};

use sha2::{Digest, Sha256};
use tokio::sync::broadcast;

use super::*;
use crate::events::Event;
use crate::service::{Service, ServiceConfig, StorageKind};
use maskflow_llm::{ChatMessage, ChatRole, LlmRequest, Provider, Role};

/// A fake model: a real GGUF header and `len` bytes of padding.
fn fake_model(len: usize) -> Vec<u8> {
    let mut bytes = gguf::fake_header(
        "llama",
        &[
            ("block_count", 2),
            ("embedding_length", 64),
            ("attention.head_count", 4),
            ("context_length", 512),
        ],
    );
    bytes.extend((0..len).map(|i| (i % 251) as u8));
    bytes
}

fn sha(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// How the server answers.
#[derive(Default)]
struct Script {
    /// The first response stops after this many body bytes and closes.
    drop_first_after: Option<usize>,
    /// Every response sends this many body bytes, then waits for the
    /// channel (the test's end) before closing.
    stall_after: Option<(usize, Mutex<mpsc::Receiver<()>>)>,
    /// Every response sends its body one byte at a time, a pause between
    /// bytes, with no `Content-Length` (issue 39: it never timed out).
    trickle: bool,
}

/// A loopback HTTP/1.1 server of one file, with `Range` support.
struct FileServer {
    url: String,
    /// The `Range` header of each request, in order (`None`: no header).
    ranges: Arc<Mutex<Vec<Option<String>>>>,
}

impl FileServer {
    fn start(body: Vec<u8>, script: Script) -> FileServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!(
            "http://{}/models/tiny.gguf",
            listener.local_addr().expect("addr")
        );
        let ranges = Arc::new(Mutex::new(Vec::new()));
        let seen = ranges.clone();
        std::thread::spawn(move || {
            for (n, stream) in listener.incoming().enumerate() {
                let Ok(stream) = stream else { return };
                serve_one(stream, &body, &script, n == 0, &seen);
            }
        });
        FileServer { url, ranges }
    }

    fn ranges(&self) -> Vec<Option<String>> {
        self.ranges.lock().expect("ranges").clone()
    }
}

fn serve_one(
    mut stream: TcpStream,
    body: &[u8],
    script: &Script,
    first: bool,
    seen: &Mutex<Vec<Option<String>>>,
) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let mut range = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("range")
        {
            range = Some(value.trim().to_owned());
        }
    }
    seen.lock().expect("seen").push(range.clone());
    let start: usize = range
        .as_deref()
        .and_then(|r| r.strip_prefix("bytes="))
        .and_then(|r| r.trim_end_matches('-').parse().ok())
        .unwrap_or(0);
    let len = body.len();
    let head = if range.is_some() {
        format!(
            "HTTP/1.1 206 Partial Content\r\nContent-Length: {}\r\nContent-Range: bytes {start}-{}/{len}\r\nConnection: close\r\n\r\n",
            len - start,
            len - 1
        )
    } else {
        format!("HTTP/1.1 200 OK\r\nContent-Length: {len}\r\nConnection: close\r\n\r\n")
    };
    let rest = &body[start..];
    if script.trickle {
        let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n");
        for b in rest {
            if stream
                .write_all(&[*b])
                .and_then(|()| stream.flush())
                .is_err()
            {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        return;
    }
    let _ = stream.write_all(head.as_bytes());
    if let Some(cut) = script.drop_first_after.filter(|_| first) {
        let _ = stream.write_all(&rest[..cut.min(rest.len())]);
        let _ = stream.flush();
        let _ = stream.shutdown(std::net::Shutdown::Both);
        return;
    }
    if let Some((cut, release)) = &script.stall_after {
        let _ = stream.write_all(&rest[..(*cut).min(rest.len())]);
        let _ = stream.flush();
        let _ = release.lock().expect("release").recv();
        return;
    }
    let _ = stream.write_all(rest);
}

fn service(home: &Path) -> Service {
    Service::open(ServiceConfig::from_settings(home)).expect("open")
}

fn pull_url(server: &FileServer, sha256: String) -> PullModel {
    PullModel {
        name: Some("tiny".into()),
        url: Some(server.url.clone()),
        sha256: Some(sha256),
        use_when_done: None,
    }
}

/// The `model_progress` events received so far.
fn progress(rx: &mut broadcast::Receiver<Event>) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    while let Ok(event) = rx.try_recv() {
        if let Event::ModelProgress { stage, done, .. } = event {
            out.push((stage, done));
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pull_shows_progress_resumes_after_a_dropped_connection_and_keeps_a_checked_file() {
    let home = tempfile::tempdir().expect("home");
    let s = service(home.path());
    let body = fake_model(3 << 20);
    let cut = 1 << 20;
    let server = FileServer::start(
        body.clone(),
        Script {
            drop_first_after: Some(cut),
            ..Script::default()
        },
    );
    let mut rx = s.subscribe();
    let model = s
        .pull_model(pull_url(&server, sha(&body)))
        .await
        .expect("pull");
    assert_eq!(model.sha256, sha(&body));
    assert_eq!(model.bytes, body.len() as u64);
    assert_eq!(model.architecture.as_deref(), Some("llama"));
    // The second request asked for the rest only.
    assert_eq!(
        server.ranges(),
        vec![None, Some(format!("bytes={cut}-"))],
        "the drop was resumed from the .part"
    );
    let events = progress(&mut rx);
    let downloading: Vec<u64> = events
        .iter()
        .filter(|(stage, _)| stage == "downloading")
        .map(|(_, d)| *d)
        .collect();
    assert!(downloading.len() >= 4, "{events:?}");
    assert!(downloading.iter().any(|d| *d > 0 && *d < body.len() as u64));
    assert_eq!(events.last().map(|e| e.0.as_str()), Some("ready"));
    let folder = s.models_folder();
    assert_eq!(std::fs::read(folder.join("tiny.gguf")).expect("kept"), body);
    assert!(!folder.join("tiny.gguf.part").exists());
    let view = s.models().expect("list");
    assert_eq!(view.installed.len(), 1);
    assert!(view.downloads.is_empty());
    // Storage counts the models folder.
    let storage = s.storage().expect("storage");
    let models = storage
        .kinds
        .iter()
        .find(|k| k.kind == StorageKind::Models)
        .expect("models kind");
    assert!(models.bytes >= body.len() as u64, "{models:?}");
    // Pulling it again is refused while it is installed.
    let again = s.pull_model(pull_url(&server, sha(&body))).await;
    assert!(matches!(again, Err(CoreError::Conflict(_))), "{again:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_part_left_by_an_earlier_pull_is_resumed_with_a_range_request() {
    let home = tempfile::tempdir().expect("home");
    let s = service(home.path());
    let body = fake_model(600 << 10);
    let server = FileServer::start(body.clone(), Script::default());
    let folder = s.models_folder();
    std::fs::create_dir_all(&folder).expect("folder");
    std::fs::write(folder.join("tiny.gguf.part"), &body[..100_000]).expect("part");
    s.pull_model(pull_url(&server, sha(&body)))
        .await
        .expect("pull");
    assert_eq!(server.ranges(), vec![Some("bytes=100000-".to_owned())]);
    assert_eq!(std::fs::read(folder.join("tiny.gguf")).expect("kept"), body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_checksum_is_refused_and_the_download_removed() {
    let home = tempfile::tempdir().expect("home");
    let s = service(home.path());
    let body = fake_model(300 << 10);
    let server = FileServer::start(body, Script::default());
    let mut rx = s.subscribe();
    let e = s
        .pull_model(pull_url(&server, "0".repeat(64)))
        .await
        .expect_err("wrong checksum");
    assert!(matches!(e, CoreError::InvalidRequest(_)), "{e:?}");
    assert!(e.to_string().contains("SHA-256"), "{e}");
    assert!(e.to_string().contains("removed"), "{e}");
    let folder = s.models_folder();
    assert!(!folder.join("tiny.gguf").exists());
    assert!(!folder.join("tiny.gguf.part").exists());
    assert!(s.models().expect("list").installed.is_empty());
    assert_eq!(
        progress(&mut rx).last().map(|e| e.0.clone()),
        Some("failed".to_owned())
    );
    // A checksum that is not one is refused before anything is asked.
    let e = s
        .pull_model(pull_url(&server, "xyz".into()))
        .await
        .expect_err("bad sha");
    assert!(e.to_string().contains("64 hexadecimal"), "{e}");
    assert_eq!(server.ranges().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_that_is_not_a_model_is_refused_after_its_download() {
    let home = tempfile::tempdir().expect("home");
    let s = service(home.path());
    let body = b"<html>not found</html>".to_vec();
    let server = FileServer::start(body.clone(), Script::default());
    let e = s
        .pull_model(pull_url(&server, sha(&body)))
        .await
        .expect_err("not gguf");
    assert!(e.to_string().contains("not a GGUF model"), "{e}");
    assert!(!s.models_folder().join("tiny.gguf.part").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_download_stops_and_keeps_its_part_for_the_next_pull() {
    let home = tempfile::tempdir().expect("home");
    let s = service(home.path());
    let body = fake_model(2 << 20);
    let (release, wait) = mpsc::channel();
    let server = FileServer::start(
        body.clone(),
        Script {
            stall_after: Some((512 << 10, Mutex::new(wait))),
            ..Script::default()
        },
    );
    let mut rx = s.subscribe();
    let view = s
        .start_model_pull(pull_url(&server, sha(&body)))
        .expect("start");
    assert_eq!(view.downloads.len(), 1);
    // Wait until bytes arrived, then cancel.
    loop {
        if let Ok(Event::ModelProgress { stage, done, .. }) = rx.recv().await
            && stage == "downloading"
            && done > 0
        {
            break;
        }
    }
    s.cancel_model_pull("tiny").expect("cancel");
    loop {
        if let Ok(Event::ModelProgress { stage, .. }) = rx.recv().await
            && stage != "downloading"
        {
            assert_eq!(stage, "cancelled");
            break;
        }
    }
    drop(release);
    let part = s.models_folder().join("tiny.gguf.part");
    assert!(std::fs::metadata(&part).expect("part").len() > 0);
    assert!(s.models().expect("list").downloads.is_empty());
    assert!(matches!(
        s.cancel_model_pull("tiny"),
        Err(CoreError::NotFound { .. })
    ));
    // `rm` of a model that is only a `.part` removes the part.
    s.remove_model("tiny").expect("rm part");
    assert!(!part.exists());
}

#[test]
fn a_gguf_file_on_disk_is_added_checked_listed_and_removed() {
    let home = tempfile::tempdir().expect("home");
    let s = service(home.path());
    let elsewhere = tempfile::tempdir().expect("elsewhere");
    let file = elsewhere.path().join("My-Model.Q4.gguf");
    let body = fake_model(10_000);
    std::fs::write(&file, &body).expect("write");
    let view = s
        .add_model_file(AddModelFile {
            path: file.display().to_string(),
            name: Some("mine".into()),
        })
        .expect("add");
    let added = &view.installed[0];
    assert_eq!(added.name, "mine");
    assert_eq!(added.source, ModelSource::File);
    assert_eq!(added.sha256, sha(&body));
    assert!(added.memory_bytes > body.len() as u64);
    assert_eq!(
        std::fs::read(s.models_folder().join("mine.gguf")).expect("kept"),
        body
    );
    // The same name twice is refused; a file that is not GGUF is named.
    let e = s
        .add_model_file(AddModelFile {
            path: file.display().to_string(),
            name: Some("mine".into()),
        })
        .expect_err("twice");
    assert!(matches!(e, CoreError::Conflict(_)), "{e:?}");
    let text = elsewhere.path().join("notes.gguf");
    std::fs::write(&text, "hello").expect("write");
    let e = s
        .add_model_file(AddModelFile {
            path: text.display().to_string(),
            name: None,
        })
        .expect_err("not gguf");
    assert!(e.to_string().contains("notes.gguf"), "{e}");
    let e = s
        .add_model_file(AddModelFile {
            path: file.display().to_string(),
            name: Some("../up".into()),
        })
        .expect_err("bad name");
    assert!(e.to_string().contains("model name"), "{e}");
    let view = s.remove_model("mine").expect("rm");
    assert!(view.installed.is_empty());
    assert!(!s.models_folder().join("mine.gguf").exists());
    assert!(file.exists(), "the original stays");
    assert!(matches!(
        s.remove_model("mine"),
        Err(CoreError::NotFound { .. })
    ));
}

#[test]
fn use_points_the_local_back_end_at_the_model_and_rm_refuses_it_then() {
    let home = tempfile::tempdir().expect("home");
    let s = service(home.path());
    let file = home.path().join("m.gguf");
    std::fs::write(&file, fake_model(1000)).expect("write");
    s.add_model_file(AddModelFile {
        path: file.display().to_string(),
        name: Some("m".into()),
    })
    .expect("add");
    assert!(matches!(
        s.use_model("nope"),
        Err(CoreError::NotFound { .. })
    ));
    if !local_kind_known() {
        // Until this build has the embedded back end, `use` says so.
        let e = s.use_model("m").expect_err("no local kind");
        assert!(
            e.to_string().contains("without the embedded back end"),
            "{e}"
        );
        assert_eq!(s.models().expect("list").in_use, None);
        return;
    }
    let view = s.use_model("m").expect("use");
    assert_eq!(view.in_use.as_deref(), Some("m"));
    let settings = crate::settings::load(&s.db()).expect("settings");
    let local = settings
        .providers
        .iter()
        .find(|p| p.id == LOCAL_ID)
        .expect("local back end");
    assert_eq!(local.kind.as_str(), LOCAL_KIND);
    let path = std::path::absolute(s.models_folder().join("m.gguf")).expect("abs");
    assert_eq!(
        local.model.as_deref(),
        Some(path.display().to_string().as_str())
    );
    for role in REQUIRED_ROLES {
        assert_eq!(settings.roles[role], LOCAL_ID);
    }
    let e = s.remove_model("m").expect_err("in use");
    assert!(e.to_string().contains("local back end uses"), "{e}");
}

/// Issue 39, finding 8: a model file changed after it was added loaded as
/// if it were the one added. Its SHA-256 is checked again before it loads
/// when its size or time differ from the record.
#[tokio::test]
async fn a_model_file_changed_after_it_was_added_is_refused_before_it_loads() {
    if !local_kind_known() {
        return;
    }
    let home = tempfile::tempdir().expect("home");
    let s = service(home.path());
    let file = home.path().join("m.gguf");
    std::fs::write(&file, fake_model(1000)).expect("write");
    s.add_model_file(AddModelFile {
        path: file.display().to_string(),
        name: Some("m".into()),
    })
    .expect("add");
    let view = s.use_model("m").expect("use");
    assert!(view.installed[0].modified_ms.is_some(), "{view:?}");
    // The same size, other bytes, a later time (the added file may be a hard
    // link to the one picked, so either name changes it).
    let installed = s.models_folder().join("m.gguf");
    let mut other = fake_model(1000);
    let last = other.len() - 1;
    other[last] ^= 0xff;
    std::fs::write(&installed, &other).expect("tamper");
    std::fs::File::options()
        .write(true)
        .open(&installed)
        .and_then(|f| {
            f.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5))
        })
        .expect("touch");
    let provider = s
        .llm(&Role::Validator, None, None, None)
        .expect("the validator's back end");
    let request = LlmRequest {
        role: Role::Validator,
        messages: vec![ChatMessage::from_parts(
            ChatRole::User,
            vec![maskflow_llm::Part::instructions("Say yes.")],
        )],
        schema: None,
    };
    let e = provider
        .complete(&request, &|_: &str| {})
        .await
        .expect_err("a changed model file");
    assert!(e.to_string().contains("changed since it was added"), "{e}");
}

#[test]
fn the_first_start_is_offered_until_a_choice_or_a_back_end_is_saved() {
    let home = tempfile::tempdir().expect("home");
    let s = service(home.path());
    let view = s.models().expect("list");
    assert!(view.first_start);
    assert_eq!(view.catalog.len(), CATALOG.len());
    let smol = view
        .catalog
        .iter()
        .find(|c| c.name == "smollm2-135m")
        .expect("listed");
    assert!(smol.sha256.is_some());
    assert_eq!(smol.speed_note, "not measured yet");
    let view = s
        .first_start_choice(FirstStartInput {
            choice: StartChoice::Manual,
        })
        .expect("choose");
    assert!(!view.first_start);
    // A second service on a fresh folder that saved a back end is past it too.
    let other = tempfile::tempdir().expect("home");
    let s = service(other.path());
    s.update_settings(LlmSettings::default()).expect("save");
    assert!(!s.models().expect("list").first_start);
}

#[test]
fn names_and_requests_are_checked_before_anything_is_downloaded() {
    let home = tempfile::tempdir().expect("home");
    let s = service(home.path());
    for bad in ["", ".hidden", "a/b", "x y", &"n".repeat(65)] {
        assert!(check_name(bad).is_err(), "{bad:?}");
    }
    let plan = |r: PullModel| s.plan(r).map(|_| ()).expect_err("refused").to_string();
    assert!(plan(PullModel::default()).contains("recommended model's name"));
    assert!(
        plan(PullModel {
            name: Some("gpt-9".into()),
            ..PullModel::default()
        })
        .contains("smollm2-135m")
    );
    assert!(
        plan(PullModel {
            url: Some("file:///etc/passwd".into()),
            sha256: Some("0".repeat(64)),
            ..PullModel::default()
        })
        .contains("https://")
    );
    assert!(
        plan(PullModel {
            url: Some("https://example.org/m.gguf".into()),
            ..PullModel::default()
        })
        .contains("needs its sha256")
    );
}

/// Issue 39: a server that sends a byte at a time (under any read
/// timeout) is a stalled transfer: each attempt ends, and the download
/// fails saying so, its `.part` kept for a later resume.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trickling_server_is_a_stalled_download() {
    let dir = tempfile::tempdir().expect("dir");
    let server = FileServer::start(
        fake_model(1 << 20),
        Script {
            trickle: true,
            ..Script::default()
        },
    );
    let fetch = download::Fetch {
        url: server.url.clone(),
        part: dir.path().join("tiny.gguf.part"),
        sha256: None,
        limit: download::MAX_MODEL_BYTES,
        stall_window: std::time::Duration::from_millis(300),
    };
    let client = download::client().expect("client");
    let (_tx, mut cancel) = tokio::sync::watch::channel(false);
    let err = download::fetch(&client, &fetch, &mut cancel, &|_, _| {})
        .await
        .expect_err("a trickle never completes");
    assert!(err.to_string().contains("stalled"), "{err}");
    assert_eq!(server.ranges().len() as u32, download::ATTEMPTS);
}

/// Issue 39: `models add` of a symbolic link keeps the real file, so
/// pointing the link elsewhere later changes nothing Maskflow loads.
#[cfg(unix)]
#[test]
fn a_linked_model_file_is_added_as_the_real_file_not_the_link() {
    let home = tempfile::tempdir().expect("home");
    let s = service(home.path());
    let elsewhere = tempfile::tempdir().expect("elsewhere");
    let real = elsewhere.path().join("real.gguf");
    let body = fake_model(4_000);
    std::fs::write(&real, &body).expect("write");
    let link = elsewhere.path().join("nice.gguf");
    std::os::unix::fs::symlink(&real, &link).expect("link");
    let view = s
        .add_model_file(AddModelFile {
            path: link.display().to_string(),
            name: None,
        })
        .expect("add");
    assert_eq!(view.installed[0].name, "nice");
    let kept = s.models_folder().join("nice.gguf");
    let meta = std::fs::symlink_metadata(&kept).expect("kept");
    assert!(meta.is_file(), "the models folder holds a link: {meta:?}");
    // The link now points at another file: the model is unchanged.
    let other = elsewhere.path().join("other.gguf");
    std::fs::write(&other, fake_model(10)).expect("other");
    std::fs::remove_file(&link).expect("unlink");
    std::os::unix::fs::symlink(&other, &link).expect("relink");
    assert_eq!(std::fs::read(&kept).expect("kept"), body);
}
