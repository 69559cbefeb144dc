//! Who may use the API (issue 26, break 8): no cookie is ever set or
//! accepted, only the bearer token opens `/api/…`; a request naming another
//! host is refused (DNS rebinding); a state-changing request from another
//! site is refused even with the token; the event WebSocket takes the token
//! as a subprotocol, never echoes it, and checks host and origin too.
//! Through the router (`oneshot`) and against a real listener.

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use futures_util::StreamExt;
use maskflow_core::{Service, ServiceConfig};
use maskflow_server::api::{AppState, router};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tower::ServiceExt;

use crate::common::TOKEN;

const PORT: u16 = 4242;

fn app(home: &std::path::Path) -> Router {
    let service = Service::open(ServiceConfig::from_settings(home)).expect("open service");
    router(AppState::new(service, TOKEN.into(), PORT))
}

/// A request to `uri` with `headers`, and an empty or JSON body.
fn request(
    method: &str,
    uri: &str,
    headers: &[(&str, &str)],
    body: Option<Value>,
) -> Request<Body> {
    let mut b = Request::builder().method(method).uri(uri);
    for (k, v) in headers {
        b = b.header(*k, *v);
    }
    match body {
        Some(v) => b
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(v.to_string())),
        None => b.body(Body::empty()),
    }
    .expect("request")
}

/// The status, the `Set-Cookie` headers and the JSON body (`Null` if none).
async fn answer(app: &Router, r: Request<Body>) -> (StatusCode, Vec<String>, Value) {
    let response = app.clone().oneshot(r).await.expect("response");
    let status = response.status();
    let cookies = response
        .headers()
        .get_all(header::SET_COOKIE)
        .iter()
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .collect();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .expect("body");
    (
        status,
        cookies,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

fn bearer() -> String {
    format!("Bearer {TOKEN}")
}

#[tokio::test]
async fn no_response_ever_sets_a_cookie_and_a_cookie_opens_nothing() {
    let home = tempfile::tempdir().expect("tmp");
    let app = app(home.path());
    let b = bearer();
    let cookie = format!("maskflow_token={TOKEN}");
    let tries = [
        request("GET", "/", &[], None),
        request("GET", &format!("/?token={TOKEN}"), &[], None),
        request("GET", "/#token=x", &[], None),
        request("GET", "/api/workflows", &[("authorization", &b)], None),
        request("GET", "/api/workflows", &[], None),
        request("GET", &format!("/api/workflows?token={TOKEN}"), &[], None),
        request("GET", "/api/workflows", &[("cookie", &cookie)], None),
        request("GET", "/api/workflows", &[("host", "evil.example")], None),
        request(
            "PUT",
            "/api/settings/isolation",
            &[("authorization", &b), ("host", "127.0.0.1:4242")],
            Some(json!({"allow_unisolated": false})),
        ),
    ];
    let mut statuses = Vec::new();
    for r in tries {
        let (status, cookies, _) = answer(&app, r).await;
        assert_eq!(cookies, Vec::<String>::new(), "no Set-Cookie ({status})");
        statuses.push(status.as_u16());
    }
    // The page needs no token; the API needs the bearer token and only it.
    assert_eq!(statuses[..8], [200, 200, 200, 200, 401, 401, 401, 421]);
    assert_eq!(statuses[8], 200, "a CLI's PUT works");
}

#[tokio::test]
async fn a_request_naming_another_host_is_refused() {
    let home = tempfile::tempdir().expect("tmp");
    let app = app(home.path());
    let b = bearer();
    for host in [
        "evil.example:4242",
        "evil.example",
        "127.0.0.1:4243",
        "127.0.0.1",
        "localhost.evil.example:4242",
        "0.0.0.0:4242",
    ] {
        for path in ["/api/workflows", "/", "/api/events"] {
            let (s, _, e) = answer(
                &app,
                request("GET", path, &[("host", host), ("authorization", &b)], None),
            )
            .await;
            assert_eq!(s, StatusCode::MISDIRECTED_REQUEST, "{host} {path}");
            assert_eq!(e["code"], "misdirected", "{host} {path}: {e}");
            assert!(
                e["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("127.0.0.1:4242")),
                "{e}"
            );
        }
    }
    // An absolute request target names a host too.
    let (s, _, _) = answer(
        &app,
        request(
            "GET",
            "http://evil.example:4242/api/workflows",
            &[("authorization", &b)],
            None,
        ),
    )
    .await;
    assert_eq!(s, StatusCode::MISDIRECTED_REQUEST);
    for host in [
        "127.0.0.1:4242",
        "localhost:4242",
        "LocalHost:4242",
        "[::1]:4242",
    ] {
        let (s, _, _) = answer(
            &app,
            request(
                "GET",
                "/api/workflows",
                &[("host", host), ("authorization", &b)],
                None,
            ),
        )
        .await;
        assert_eq!(s, StatusCode::OK, "{host}");
    }
}

#[tokio::test]
async fn a_state_change_from_another_site_is_refused_even_with_the_token() {
    let home = tempfile::tempdir().expect("tmp");
    let app = app(home.path());
    let b = bearer();
    let own = "127.0.0.1:4242";
    let settings = json!({"allow_unisolated": true});
    let post = |extra: &[(&'static str, &'static str)]| {
        let mut h: Vec<(&str, &str)> = vec![("authorization", &b), ("host", own)];
        h.extend_from_slice(extra);
        request("PUT", "/api/settings/isolation", &h, Some(settings.clone()))
    };
    let refused: [&[(&str, &str)]; 6] = [
        &[("origin", "http://127.0.0.1:9999")],
        &[("origin", "http://evil.example")],
        &[("origin", "null")],
        &[("sec-fetch-site", "cross-site")],
        &[("sec-fetch-site", "same-site")],
        &[
            ("origin", "http://localhost:4243"),
            ("sec-fetch-site", "same-site"),
        ],
    ];
    for extra in refused {
        let (s, _, e) = answer(&app, post(extra)).await;
        assert_eq!(
            (s, e["code"].as_str()),
            (StatusCode::FORBIDDEN, Some("forbidden")),
            "{extra:?}"
        );
    }
    for method in ["POST", "DELETE", "PATCH"] {
        let r = request(
            method,
            "/api/workflows",
            &[("authorization", &b), ("origin", "http://127.0.0.1:9999")],
            Some(json!({})),
        );
        assert_eq!(answer(&app, r).await.0, StatusCode::FORBIDDEN, "{method}");
    }
    // Isolation is still required: no refused request changed it.
    let r = request(
        "GET",
        "/api/settings/isolation",
        &[("authorization", &b)],
        None,
    );
    let (_, _, now) = answer(&app, r).await;
    assert_eq!(now["allow_unisolated"], false, "{now}");
    // The page itself, a non-browser client, and a cross-site GET still work.
    let ok: [&[(&str, &str)]; 3] = [
        &[
            ("origin", "http://127.0.0.1:4242"),
            ("sec-fetch-site", "same-origin"),
        ],
        &[("origin", "http://localhost:4242")],
        &[],
    ];
    for extra in ok {
        let body = json!({"allow_unisolated": false});
        let mut h: Vec<(&str, &str)> = vec![("authorization", &b), ("host", own)];
        h.extend_from_slice(extra);
        let r = request("PUT", "/api/settings/isolation", &h, Some(body));
        let (s, _, e) = answer(&app, r).await;
        assert_eq!(s, StatusCode::OK, "{extra:?}: {e}");
    }
    let r = request(
        "GET",
        "/api/workflows",
        &[("authorization", &b), ("sec-fetch-site", "cross-site")],
        None,
    );
    assert_eq!(answer(&app, r).await.0, StatusCode::OK);
}

#[tokio::test]
async fn the_websocket_token_is_only_taken_on_the_event_socket() {
    let home = tempfile::tempdir().expect("tmp");
    let app = app(home.path());
    let offered = format!("maskflow, maskflow.bearer.{TOKEN}");
    let r = request(
        "GET",
        "/api/workflows",
        &[("sec-websocket-protocol", &offered)],
        None,
    );
    assert_eq!(answer(&app, r).await.0, StatusCode::UNAUTHORIZED);
}

/// The router on a real loopback listener; returns its port.
async fn listen(home: &std::path::Path) -> u16 {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let service = Service::open(ServiceConfig::from_settings(home)).expect("open service");
    let app = router(AppState::new(service, TOKEN.into(), port));
    tokio::spawn(async move { axum::serve(listener, app).await });
    port
}

/// Opens the event socket as a browser would: `Origin`, `Host` and the
/// offered subprotocols; the handshake's answer or its refusal's status.
async fn open_socket(
    port: u16,
    origin: &str,
    host: &str,
    protocols: &str,
) -> Result<axum::http::HeaderMap, u16> {
    let mut r = format!("ws://127.0.0.1:{port}/api/events")
        .into_client_request()
        .expect("ws request");
    let h = r.headers_mut();
    h.insert("origin", origin.parse().expect("origin"));
    h.insert("host", host.parse().expect("host"));
    if !protocols.is_empty() {
        h.insert(
            "sec-websocket-protocol",
            protocols.parse().expect("protocols"),
        );
    }
    match tokio_tungstenite::connect_async(r).await {
        Ok((mut ws, response)) => {
            let _ = ws.close(None).await;
            let _ = ws.next().await;
            Ok(response.headers().clone())
        }
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
            Err(response.status().as_u16())
        }
        Err(e) => panic!("the handshake failed without an HTTP answer: {e}"),
    }
}

#[tokio::test]
async fn the_event_socket_takes_the_token_as_a_subprotocol_and_never_echoes_it() {
    let home = tempfile::tempdir().expect("tmp");
    let port = listen(home.path()).await;
    let own = format!("http://127.0.0.1:{port}");
    let host = format!("127.0.0.1:{port}");
    let offered = format!("maskflow, maskflow.bearer.{TOKEN}");
    let headers = open_socket(port, &own, &host, &offered)
        .await
        .expect("the browser's socket opens");
    assert_eq!(headers["sec-websocket-protocol"], "maskflow");
    for (name, value) in &headers {
        let value = String::from_utf8_lossy(value.as_bytes());
        assert!(!value.contains(TOKEN), "{name}: {value}");
    }
    assert!(headers.get(header::SET_COOKIE).is_none());
    // Without the token, with a wrong one, from another site or another host.
    let wrong = "maskflow, maskflow.bearer.wrong-token-0123456789".to_owned();
    let refused = [
        (own.clone(), host.clone(), "maskflow".to_owned(), 401),
        (own.clone(), host.clone(), wrong, 401),
        (
            "http://127.0.0.1:9".to_owned(),
            host.clone(),
            offered.clone(),
            403,
        ),
        (
            own.clone(),
            format!("evil.example:{port}"),
            offered.clone(),
            421,
        ),
    ];
    for (origin, host, protocols, status) in refused {
        assert_eq!(
            open_socket(port, &origin, &host, &protocols).await.err(),
            Some(status),
            "{origin} {host} {protocols}"
        );
    }
}
