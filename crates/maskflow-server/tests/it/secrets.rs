//! Secrets stay off the command line (#13): `maskflow serve` takes its
//! token from `MASKFLOW_TOKEN` or `--token-file` as well as `--token`.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_maskflow");

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `serve` with `args` and `env`, and returns the URL it prints.
fn url(args: &[&str], env: &[(&str, &str)]) -> String {
    let home = tempfile::tempdir().expect("home");
    let mut cmd = Command::new(BIN);
    cmd.args(["serve", "--port", "0"])
        .args(args)
        .env("MASKFLOW_HOME", home.path())
        .env_remove("MASKFLOW_TOKEN")
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("start serve");
    let stdout = child.stdout.take().expect("stdout");
    let _server = Server(child);
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).expect("url");
    line.trim().to_owned()
}

#[test]
fn the_token_comes_from_the_environment_or_a_file() {
    let u = url(&[], &[("MASKFLOW_TOKEN", "token-from-env-1234")]);
    assert!(u.ends_with("/#token=token-from-env-1234"), "{u}");
    let dir = tempfile::tempdir().expect("tmp");
    let file = dir.path().join("token");
    std::fs::write(&file, "token-from-file-5678\n").expect("write");
    let u = url(
        &["--token-file", file.to_str().expect("utf-8")],
        &[("MASKFLOW_TOKEN", "ignored-env-token-0000")],
    );
    assert!(u.ends_with("/#token=token-from-file-5678"), "{u}");
}
