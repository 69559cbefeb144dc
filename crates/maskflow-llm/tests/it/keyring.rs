//! Keys in a real Secret Service (gnome-keyring). `scripts/test.sh` runs this
//! inside `dbus-run-session` with an unlocked gnome-keyring-daemon and sets
//! `MASKFLOW_KEYRING_TEST=1`; elsewhere it says loudly that it was skipped.

use maskflow_llm::keys::{Credentials, KeyringCredentials};

#[test]
fn a_key_round_trips_through_the_system_keyring() {
    if std::env::var("MASKFLOW_KEYRING_TEST").ok().as_deref() != Some("1") {
        eprintln!(
            "\n!!!!! SKIPPED: no Secret Service session; scripts/test.sh runs this under dbus-run-session !!!!!\n"
        );
        return;
    }
    let creds = KeyringCredentials::default();
    let id = "maskflow-test-provider";
    creds
        .set(id, "sk-real-keyring-test")
        .expect("store in gnome-keyring");
    assert_eq!(
        creds.get(id).expect("read"),
        Some("sk-real-keyring-test".into())
    );
    creds.delete(id).expect("delete");
    assert_eq!(creds.get(id).expect("read after delete"), None);
}
