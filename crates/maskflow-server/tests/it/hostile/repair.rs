//! Break 2: raw rows in the repair prompt. For each channel the builder's
//! script writes the file's first row to stderr and fails: as base64, as
//! hex, reversed, spelled in a vocabulary the script defines, as the quoted
//! line of a fake library frame, and as the name of an exception type it
//! makes at run time. One build per channel (the guard stopping one must
//! not hide another). No request the back end receives may carry a raw
//! value or any of those encodings of one, and each repair is still sent.

use super::checks::{assert_none_found, base64, first_found, hex, raw_needles, windows};
use super::{ASK, Folders, PEOPLE, backend, spec};

/// The script's vocabulary: one word per hex digit of a byte.
const WORDS: [&str; 16] = [
    "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
    "kilo", "lima", "mike", "november", "oscar", "papa",
];

/// Reads the first row as `row` (text) and `data` (UTF-8 bytes).
const READ: &str = r#"import base64, csv, json, sys
fields = json.load(open(sys.argv[1]))["fields"]
rows = list(csv.reader(open(fields["people"], newline="")))
row = ",".join(rows[1])
data = row.encode()
WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
         "india", "juliet", "kilo", "lima", "mike", "november", "oscar", "papa"]
"#;

/// Each channel: its tag and the lines that leak the row and fail.
const CHANNELS: [(&str, &str); 6] = [
    (
        "base64",
        "sys.stderr.write('checksum ' + base64.b64encode(data).decode() + '\\n')\nsys.exit(1)\n",
    ),
    (
        "hex",
        "sys.stderr.write('digest ' + data.hex() + '\\n')\nsys.exit(1)\n",
    ),
    (
        "reversed",
        "sys.stderr.write('mirror ' + row[::-1] + '\\n')\nsys.exit(1)\n",
    ),
    (
        "vocabulary",
        "sys.stderr.write('words ' + ' '.join(WORDS[b >> 4] + ' ' + WORDS[b & 15] for b in data) + '\\n')\nsys.exit(1)\n",
    ),
    (
        "frame",
        r#"minor = sys.version_info[1]
sys.stderr.write('Traceback (most recent call last):\n'
                 '  File "/usr/lib/python3.%d/json/decoder.py", line 337, in decode\n'
                 '    %s\n'
                 'json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)\n' % (minor, row))
sys.exit(1)
"#,
    ),
    (
        "typename",
        "name = ''.join(ch for ch in rows[1][0] if ch.isalnum())\nraise type(name + 'Error', (Exception,), {})('the report could not be written')\n",
    ),
];

/// The first data row's encodings, as the scripts write them.
fn encodings() -> Vec<String> {
    let first = PEOPLE.lines().nth(1).expect("a first row");
    let data = first.as_bytes();
    let mut out = Vec::new();
    out.extend(windows(&base64(data), 12));
    out.extend(windows(&hex(data), 12));
    for cell in first.split(',').filter(|c| c.len() >= 5) {
        out.push(cell.chars().rev().collect());
        let spelled: Vec<String> = cell
            .bytes()
            .map(|b| {
                format!(
                    "{} {}",
                    WORDS[usize::from(b >> 4)],
                    WORDS[usize::from(b & 15)]
                )
            })
            .collect();
        out.push(spelled.join(" "));
    }
    let name: String = first
        .split(',')
        .next()
        .unwrap_or("")
        .chars()
        .filter(|c| c.is_alphanumeric())
        .collect();
    out.push(name);
    out
}

fn tag(channel: &str) -> String {
    format!("(report channel {channel})")
}

#[test]
fn a_failing_script_cannot_smuggle_a_row_into_the_repair_prompt() {
    let dirs = Folders::new();
    let llm = backend(|body| {
        let (_, leak) = CHANNELS
            .iter()
            .find(|(c, _)| body.contains(&tag(c)))
            .unwrap_or(&CHANNELS[0]);
        spec(&format!("{READ}{leak}"), &[], &["report.csv"])
    });
    let mf = dirs.serve(&llm, &[]);
    let mut unrepaired = Vec::new();
    for (channel, _) in CHANNELS {
        let (view, _, _) = mf.build_people(&format!("{ASK} {}", tag(channel)));
        let run = super::test_run(&view);
        assert_eq!(
            run["status"], "failed",
            "the {channel} script fails: {view}"
        );
        let asked = llm
            .bodies()
            .iter()
            .filter(|b| b.contains("You are Maskflow's builder") && b.contains(&tag(channel)))
            .count();
        if asked < 2 {
            let why = &view["current_version"]["failure_reason"];
            unrepaired.push(format!("{channel}: {why}"));
        }
    }
    let mut needles = raw_needles(PEOPLE);
    needles.extend(encodings());
    let leaked: Vec<String> = CHANNELS
        .iter()
        .filter_map(|(channel, _)| {
            let bodies: Vec<String> = llm
                .bodies()
                .into_iter()
                .filter(|b| b.contains(&tag(channel)))
                .collect();
            first_found(&bodies, &needles).map(|(n, _)| format!("{channel}: {n:?}"))
        })
        .collect();
    assert!(
        leaked.is_empty(),
        "a raw value or an encoding of one reached the back end through: {leaked:#?}"
    );
    assert_none_found("a raw value or an encoding", &llm.bodies(), &needles);
    assert!(
        unrepaired.is_empty(),
        "no repair prompt was sent for: {unrepaired:#?}"
    );
}
