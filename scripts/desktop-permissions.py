#!/usr/bin/env python3
"""Rewrites the desktop's command list (src-tauri/build.rs) and the main
window's permissions (tauri.conf.json) from core's list of calls
(crates/maskflow-core/src/api.rs and api_more.rs) plus the hand-written commands.

Run after adding a call; the desktop test
`every_command_has_a_permission_that_the_window_is_given` fails until then.
"""
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The hand-written commands, as in src-tauri/src/commands.rs's COMMAND_NAMES.
SPECIAL = ["extract_path", "upload_file", "run_output", "test_output", "session_file"]


def calls() -> list[str]:
    # api.rs, then its continuation(s) (api_more.rs), in the list's order.
    api = "".join(p.read_text() for p in sorted((ROOT / "crates/maskflow-core/src").glob("api*.rs")))
    return re.findall(r"^\s+([a-z_]+): (?:get|post|put|patch|delete) ", api, re.M) + SPECIAL


def main() -> None:
    names = calls()
    build = ROOT / "src-tauri/build.rs"
    text = build.read_text()
    m = re.search(r"commands\(&\[\n(.*?)\n    \]\)", text, re.S)
    text = text[: m.start(1)] + "\n".join(f'        "{c}",' for c in names) + text[m.end(1) :]
    build.write_text(text)

    conf = ROOT / "tauri.conf.json"
    text = conf.read_text()
    m = re.search(r'("permissions": \[\n)(.*?)(\n\s*\])', text, re.S)
    lines = m.group(2).split("\n")
    indent = re.match(r"\s*", lines[0]).group(0)
    # Tauri's own and its plugins' permissions (`core:…`, `notification:…`) stay as written.
    core = [l.strip().rstrip(",") for l in lines if l.strip() and not l.strip().startswith('"allow-')]
    allow = [f'"allow-{c.replace("_", "-")}"' for c in names]
    text = text[: m.start(2)] + ",\n".join(indent + x for x in core + allow) + text[m.end(2) :]
    json.loads(text)
    conf.write_text(text)
    print(f"{len(names)} commands in src-tauri/build.rs and tauri.conf.json")


if __name__ == "__main__":
    main()
