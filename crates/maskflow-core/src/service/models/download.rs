//! Downloading one model file: into `<file>.part`, resumed with an HTTP
//! `Range` request when a `.part` is already there (from a dropped
//! connection, a cancel or a previous process), its SHA-256 computed on the
//! way and checked at the end. A wrong checksum removes the `.part`: a file
//! that is not the one asked for is never kept. Nothing here knows the
//! service; progress goes to a callback and a cancel is a watch channel.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use sha2::{Digest, Sha256};
use tokio::sync::watch;

/// Attempts of one download: a connection dropped mid-way is resumed from
/// where it stopped this many times before the download fails (the `.part`
/// stays, so pulling again resumes too).
pub const ATTEMPTS: u32 = 4;
/// The largest file accepted when its size is not known in advance.
pub const MAX_MODEL_BYTES: u64 = 64 << 30;
/// Progress is reported after this many bytes, or after [`PROGRESS_PERIOD`]
/// on a slow connection, whichever comes first.
const PROGRESS_EVERY: u64 = 256 << 10;
/// The longest a download that is receiving bytes goes without a report.
const PROGRESS_PERIOD: Duration = Duration::from_millis(500);
/// A transfer that brings fewer than [`STALL_BYTES`] in this long is
/// stalled (a server sending a byte every few seconds never trips the
/// read timeout): the attempt ends and the download resumes.
pub const STALL_WINDOW: Duration = Duration::from_secs(60);
/// See [`STALL_WINDOW`].
pub const STALL_BYTES: u64 = 64 << 10;
/// Free space is measured again after this many bytes (a file whose size
/// the server does not say is only bounded by the cap).
const SPACE_EVERY: u64 = 64 << 20;

/// Why a download failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DownloadError {
    /// The server answered with an error status.
    #[error("{url} answered HTTP {status}")]
    Status {
        /// The URL.
        url: String,
        /// The HTTP status.
        status: u16,
    },
    /// The connection failed, also after resuming.
    #[error(
        "downloading {url} failed after {attempts} attempt(s): {reason}; pull it again to resume"
    )]
    Network {
        /// The URL.
        url: String,
        /// Attempts made.
        attempts: u32,
        /// The last failure.
        reason: String,
    },
    /// The file could not be written.
    #[error("writing {path}: {source}")]
    Write {
        /// The `.part` file.
        path: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not the one asked for; it was removed.
    #[error("{url}: the downloaded file's SHA-256 is {actual}, not {expected}; it was removed")]
    Checksum {
        /// The URL.
        url: String,
        /// The SHA-256 expected.
        expected: String,
        /// The SHA-256 of what came.
        actual: String,
    },
    /// The server sent more than the file may have.
    #[error("{url} sent more than {limit} bytes; the download was stopped and removed")]
    TooLarge {
        /// The URL.
        url: String,
        /// The limit.
        limit: u64,
    },
    /// The user cancelled; the `.part` stays for a later resume.
    #[error("the download was cancelled")]
    Cancelled,
    /// The disk cannot take the rest of the file; the `.part` stays.
    #[error("{url}: {message}")]
    DiskFull {
        /// The URL.
        url: String,
        /// How much was needed and was free, where.
        message: String,
    },
}

/// One download's parameters.
#[derive(Debug)]
pub struct Fetch {
    /// Where from.
    pub url: String,
    /// The `.part` file written (and resumed).
    pub part: PathBuf,
    /// The SHA-256 the file must have (lower-case hex), if known.
    pub sha256: Option<String>,
    /// The most bytes accepted.
    pub limit: u64,
    /// How long a transfer may bring fewer than [`STALL_BYTES`] before the
    /// attempt is ended as stalled ([`STALL_WINDOW`]).
    pub stall_window: Duration,
}

/// A finished download.
#[derive(Clone, Debug, PartialEq)]
pub struct Fetched {
    /// Its SHA-256, lower-case hex.
    pub sha256: String,
    /// Its size.
    pub bytes: u64,
}

/// The HTTP client of downloads: the system's proxies, no overall time
/// limit (a model is gigabytes), but a connection that stalls is dropped.
pub fn client() -> Result<reqwest::Client, DownloadError> {
    reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(15))
        .read_timeout(Duration::from_secs(60))
        .user_agent(concat!("maskflow/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| DownloadError::Network {
            url: String::new(),
            attempts: 0,
            reason: e.to_string(),
        })
}

/// Downloads `fetch.url` into `fetch.part`, resuming what is there;
/// `progress(done, total)` is called as bytes arrive. The `.part` is left
/// complete on success (the caller moves it), kept on a network failure or
/// a cancel, and removed on a wrong checksum or an oversized body.
pub async fn fetch(
    client: &reqwest::Client,
    fetch: &Fetch,
    cancel: &mut watch::Receiver<bool>,
    progress: &(dyn Fn(u64, Option<u64>) + Send + Sync),
) -> Result<Fetched, DownloadError> {
    let mut last_error = String::new();
    let mut attempts = 0;
    while attempts < ATTEMPTS {
        attempts += 1;
        if *cancel.borrow() {
            return Err(DownloadError::Cancelled);
        }
        match attempt(client, fetch, cancel, progress).await {
            Ok(done) => return verified(fetch, done).await,
            Err(Attempt::Fatal(e)) => return Err(e),
            Err(Attempt::Retry(reason)) => last_error = reason,
        }
    }
    Err(DownloadError::Network {
        url: fetch.url.clone(),
        attempts,
        reason: last_error,
    })
}

enum Attempt {
    /// Worth resuming (the connection failed or dropped).
    Retry(String),
    /// Not worth another attempt.
    Fatal(DownloadError),
}

impl From<DownloadError> for Attempt {
    fn from(e: DownloadError) -> Self {
        Attempt::Fatal(e)
    }
}

fn write_error(path: &Path, source: std::io::Error) -> DownloadError {
    DownloadError::Write {
        path: path.display().to_string(),
        source,
    }
}

/// One request: resumes from the `.part`'s length; the hash of what the
/// `.part` already holds is computed first.
async fn attempt(
    client: &reqwest::Client,
    fetch: &Fetch,
    cancel: &mut watch::Receiver<bool>,
    progress: &(dyn Fn(u64, Option<u64>) + Send + Sync),
) -> Result<u64, Attempt> {
    let have = std::fs::metadata(&fetch.part).map_or(0, |m| m.len());
    let mut request = client.get(&fetch.url);
    if have > 0 {
        request = request.header(reqwest::header::RANGE, format!("bytes={have}-"));
    }
    let response = tokio::select! {
        r = request.send() => r.map_err(|e| Attempt::Retry(e.to_string()))?,
        _ = cancel.wait_for(|c| *c) => return Err(DownloadError::Cancelled.into()),
    };
    let status = response.status();
    if status == reqwest::StatusCode::RANGE_NOT_SATISFIABLE && have > 0 {
        // The `.part` already holds the whole file (a cancel after the last
        // byte): the checksum decides.
        return Ok(have);
    }
    if !status.is_success() {
        let e = DownloadError::Status {
            url: fetch.url.clone(),
            status: status.as_u16(),
        };
        // A server error may pass; a 404 or 403 will not.
        return Err(if status.is_server_error() {
            Attempt::Retry(e.to_string())
        } else {
            Attempt::Fatal(e)
        });
    }
    let resumed = status == reqwest::StatusCode::PARTIAL_CONTENT
        && content_range_start(&response) == Some(have);
    let start = if resumed { have } else { 0 };
    let total = if resumed {
        content_range_total(&response)
    } else {
        response.content_length()
    };
    if total.is_some_and(|t| t > fetch.limit) {
        return Err(too_large(fetch).into());
    }
    room(fetch, total, start)?;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(resumed)
        .write(true)
        .truncate(!resumed)
        .open(&fetch.part)
        .map_err(|e| write_error(&fetch.part, e))?;
    let mut done = start;
    progress(done, total);
    let (mut reported, mut reported_at) = (done, Instant::now());
    let (mut window_start, mut window_done) = (Instant::now(), done);
    let mut space_at = done;
    let mut body = response.bytes_stream();
    loop {
        let chunk = tokio::select! {
            c = body.next() => c,
            _ = cancel.wait_for(|c| *c) => {
                file.flush().map_err(|e| write_error(&fetch.part, e))?;
                return Err(DownloadError::Cancelled.into());
            }
        };
        let Some(chunk) = chunk else { break };
        let chunk = match chunk {
            Ok(c) => c,
            Err(e) => {
                file.flush().map_err(|e| write_error(&fetch.part, e))?;
                return Err(Attempt::Retry(e.to_string()));
            }
        };
        done += chunk.len() as u64;
        if done > fetch.limit {
            drop(file);
            let _ = std::fs::remove_file(&fetch.part);
            return Err(too_large(fetch).into());
        }
        file.write_all(&chunk)
            .map_err(|e| write_error(&fetch.part, e))?;
        if done - space_at >= SPACE_EVERY {
            file.flush().map_err(|e| write_error(&fetch.part, e))?;
            room(fetch, total, done)?;
            space_at = done;
        }
        if window_start.elapsed() >= fetch.stall_window {
            if done - window_done < STALL_BYTES {
                file.flush().map_err(|e| write_error(&fetch.part, e))?;
                return Err(Attempt::Retry(format!(
                    "the transfer stalled ({} bytes in {} s)",
                    done - window_done,
                    fetch.stall_window.as_secs_f32()
                )));
            }
            (window_start, window_done) = (Instant::now(), done);
        }
        if done - reported >= PROGRESS_EVERY || reported_at.elapsed() >= PROGRESS_PERIOD {
            progress(done, total);
            (reported, reported_at) = (done, Instant::now());
        }
    }
    file.flush().map_err(|e| write_error(&fetch.part, e))?;
    if total.is_some_and(|t| done < t) {
        return Err(Attempt::Retry(format!(
            "the connection closed after {done} of {} bytes",
            total.unwrap_or_default()
        )));
    }
    progress(done, Some(done));
    Ok(done)
}

/// Room on the disk for the rest of the file (when the server says how
/// much), or for the next [`SPACE_EVERY`] bytes when it does not: without
/// a size only the cap bounds the file.
fn room(fetch: &Fetch, total: Option<u64>, done: u64) -> Result<(), DownloadError> {
    let needed = total.map_or(SPACE_EVERY, |t| t.saturating_sub(done));
    let dir = fetch.part.parent().unwrap_or(Path::new("."));
    crate::disk::ensure_space_in(dir, needed, "the rest of the download").map_err(|e| {
        DownloadError::DiskFull {
            url: fetch.url.clone(),
            message: e.to_string(),
        }
    })
}

fn too_large(fetch: &Fetch) -> DownloadError {
    let _ = std::fs::remove_file(&fetch.part);
    DownloadError::TooLarge {
        url: fetch.url.clone(),
        limit: fetch.limit,
    }
}

/// The complete `.part`'s size and SHA-256, checked against the expected
/// one (hashed off the async workers: a model is gigabytes).
async fn verified(fetch: &Fetch, bytes: u64) -> Result<Fetched, DownloadError> {
    let part = fetch.part.clone();
    let sha256 = tokio::task::spawn_blocking(move || sha256_of(&part))
        .await
        .map_err(|e| write_error(&fetch.part, std::io::Error::other(e.to_string())))?
        .map_err(|e| write_error(&fetch.part, e))?;
    if let Some(expected) = &fetch.sha256
        && !expected.eq_ignore_ascii_case(&sha256)
    {
        let _ = std::fs::remove_file(&fetch.part);
        return Err(DownloadError::Checksum {
            url: fetch.url.clone(),
            expected: expected.to_ascii_lowercase(),
            actual: sha256,
        });
    }
    Ok(Fetched { sha256, bytes })
}

/// The SHA-256 of a file, lower-case hex.
pub fn sha256_of(path: &Path) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// `Content-Range: bytes START-END/TOTAL`'s parts.
fn content_range(response: &reqwest::Response) -> Option<(u64, Option<u64>)> {
    let value = response
        .headers()
        .get(reqwest::header::CONTENT_RANGE)?
        .to_str()
        .ok()?;
    let rest = value.trim().strip_prefix("bytes ")?;
    let (range, total) = rest.split_once('/')?;
    let (start, _) = range.split_once('-')?;
    Some((start.trim().parse().ok()?, total.trim().parse().ok()))
}

fn content_range_start(response: &reqwest::Response) -> Option<u64> {
    content_range(response).map(|(s, _)| s)
}

fn content_range_total(response: &reqwest::Response) -> Option<u64> {
    content_range(response).and_then(|(_, t)| t)
}
