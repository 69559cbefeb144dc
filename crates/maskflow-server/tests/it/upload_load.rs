//! Uploads under load (issue 29, point 4): files are read in bounded
//! extraction slots, so several large uploads at once never take more than
//! the service's slots; the ones past them are told they wait, and the API
//! answers a listing while they are in flight.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use axum::http::StatusCode;
use maskflow_core::{Event, Service, ServiceConfig};
use tokio::sync::broadcast::error::RecvError;

use crate::common::{app, call, send, upload};

/// A CSV of about `rows` × 90 bytes whose values the profile visits one by one.
fn customers(rows: usize, seed: usize) -> Vec<u8> {
    let mut out = String::from("id,name,email,joined,amount,city\n");
    let cities = ["Lyon", "Oslo", "Osaka", "Lagos", "Lima"];
    for i in 0..rows {
        let n = i * 7919 + seed;
        out.push_str(&format!(
            "{i},\"Smith, John {}\",john.{}@example.com,20{:02}-{:02}-{:02},\"{},{:02}\",{}\n",
            n % 997,
            n % 9973,
            10 + n % 15,
            1 + n % 12,
            1 + n % 28,
            n % 100_000,
            n % 100,
            cities[n % cities.len()],
        ));
    }
    out.into_bytes()
}

/// The most files whose progress was between its first and last event at once.
fn most_at_once(progress: &[String]) -> usize {
    let mut span: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for (i, id) in progress.iter().enumerate() {
        span.entry(id).or_insert((i, i)).1 = i;
    }
    (0..progress.len())
        .map(|i| span.values().filter(|(a, b)| *a <= i && i <= *b).count())
        .max()
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_uploads_at_once_are_read_a_bounded_few_at_a_time_and_listing_answers() {
    let home = tempfile::tempdir().expect("tmp");
    let service = Service::open(ServiceConfig::from_settings(home.path())).expect("open");
    let slots = service.extract_slots();
    let files = slots + 2;
    let mut rx = service.subscribe();
    let app = app(service);

    // Every event as it comes, the file ids of the reading progress in order.
    let progress = Arc::new(Mutex::new(Vec::<String>::new()));
    let waited = Arc::new(Mutex::new(Vec::<String>::new()));
    let (p, w) = (progress.clone(), waited.clone());
    let collector = tokio::spawn(async move {
        loop {
            match rx.recv().await {
                Ok(Event::ExtractProgress {
                    file_id, waiting, ..
                }) => {
                    let into = if waiting { &w } else { &p };
                    into.lock().expect("events").push(file_id);
                }
                Ok(_) => {}
                Err(RecvError::Lagged(n)) => panic!("the test missed {n} events"),
                Err(RecvError::Closed) => return,
            }
        }
    });

    let uploads: Vec<_> = (0..files)
        .map(|i| {
            let (app, body) = (app.clone(), customers(8_000, i));
            tokio::spawn(async move {
                let name = format!("customers_{i}.csv");
                send(&app, upload(&[(&name, &body)])).await
            })
        })
        .collect();

    // Once a file is being read, a listing is answered before they all are.
    while progress.lock().expect("events").is_empty() {
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    let (status, list) = call(&app, "GET", "/api/workflows", None).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    assert!(
        uploads.iter().any(|u| !u.is_finished()),
        "the listing came back while uploads were still being read"
    );

    for u in uploads {
        let (status, body) = u.await.expect("upload task");
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body[0]["extract"]["row_count"], 8_000, "{body}");
    }
    collector.abort();
    let progress = progress.lock().expect("events").clone();
    let waited = waited.lock().expect("events").clone();
    let read: std::collections::BTreeSet<&String> = progress.iter().collect();
    assert_eq!(read.len(), files, "every file reported its reading");
    assert!(
        most_at_once(&progress) <= slots,
        "at most {slots} files read at once, saw {}",
        most_at_once(&progress)
    );
    assert!(
        !waited.is_empty(),
        "{files} uploads at once for {slots} slots: some were told they wait"
    );
}

#[test]
fn most_at_once_counts_overlapping_spans() {
    let ids = |s: &str| s.chars().map(String::from).collect::<Vec<_>>();
    assert_eq!(most_at_once(&ids("aaabbbccc")), 1);
    assert_eq!(most_at_once(&ids("aabab")), 2);
    assert_eq!(most_at_once(&ids("abcabc")), 3);
}
