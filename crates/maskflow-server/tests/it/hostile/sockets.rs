//! Break 3: UNIX sockets. The test listens on a pathname socket outside
//! every run folder (as an ssh-agent or a D-Bus bus would) and on an
//! abstract one; the builder's script tries to connect to both, and to
//! send a datagram to each. No connection may be accepted and no datagram
//! received, while `socketpair` (which Python's own libraries use) works.

use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixDatagram, UnixListener};

use serde_json::Value;

use super::{ASK, Folders, backend_with, spec};

fn script(path: &str, abstract_name: &str) -> String {
    format!(
        r#"import json, socket
reached = {{}}
def attempt(name, f):
    try:
        f()
        reached[name] = True
    except Exception as e:
        reached[name] = False
def stream(addr):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(3)
    s.connect(addr)
    s.sendall(b"hello from the sandbox")
def datagram(addr):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.sendto(b"hello from the sandbox", addr)
def pair():
    a, b = socket.socketpair()
    a.sendall(b"x")
    assert b.recv(1) == b"x"
attempt("socketpair", pair)
print(json.dumps({{"socketpair": reached["socketpair"]}}), flush=True)
attempt("pathname", lambda: stream({path:?}))
attempt("abstract", lambda: stream("\0" + {abstract_name:?}))
attempt("pathname_dgram", lambda: datagram({path:?} + ".dgram"))
attempt("abstract_dgram", lambda: datagram("\0" + {abstract_name:?} + ".dgram"))
with open("outputs/reached.json", "w") as f:
    json.dump(reached, f)
"#
    )
}

#[test]
fn a_script_reaches_no_unix_socket_outside_its_run() {
    let dirs = Folders::new();
    let path = dirs.outside().join("agent.sock");
    let abstract_name = format!("maskflow-hostile-{}", std::process::id());
    let listener = UnixListener::bind(&path).expect("pathname listener");
    listener.set_nonblocking(true).expect("nonblocking");
    let addr = SocketAddr::from_abstract_name(abstract_name.as_bytes()).expect("abstract name");
    let abstract_listener = UnixListener::bind_addr(&addr).expect("abstract listener");
    abstract_listener
        .set_nonblocking(true)
        .expect("nonblocking");
    let dgram = UnixDatagram::bind(path.with_extension("sock.dgram")).expect("pathname datagram");
    dgram.set_nonblocking(true).expect("nonblocking");
    let addr = SocketAddr::from_abstract_name(format!("{abstract_name}.dgram").as_bytes())
        .expect("abstract name");
    let abstract_dgram = UnixDatagram::bind_addr(&addr).expect("abstract datagram");
    abstract_dgram.set_nonblocking(true).expect("nonblocking");

    let llm = backend_with(spec(
        &script(&path.display().to_string(), &abstract_name),
        &[],
        &["reached.json"],
    ));
    let mf = dirs.serve(&llm, &[]);
    let (view, _, _) = mf.build_people(ASK);
    let run = super::test_run(&view);

    let accepted = [
        ("pathname", listener.accept().is_ok()),
        ("abstract", abstract_listener.accept().is_ok()),
        ("pathname datagram", dgram.recv(&mut [0u8; 64]).is_ok()),
        (
            "abstract datagram",
            abstract_dgram.recv(&mut [0u8; 64]).is_ok(),
        ),
    ];
    for (which, got) in accepted {
        assert!(
            !got,
            "the {which} socket got a connection from the script: {run}"
        );
    }
    super::assert_no_customer_value(&llm);
    // The first line, printed before any attack (a filter may kill the rest).
    let reached: Value = run["stdout"]
        .as_str()
        .and_then(|s| s.lines().next())
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or(Value::Null);
    assert_eq!(
        reached["socketpair"], true,
        "socketpair keeps working inside the sandbox: {run}"
    );
}
