//! The repair feedback against a hostile script (issue #26, break 2): real
//! Python runs that put an input row on stderr encoded (base64, hex,
//! reversed, in a vocabulary of the script's words), inside a forged
//! library frame, as a dynamically made exception class, in a fake
//! `SyntaxError` block, in a custom exception's text and in long output.
//! None of it may reach the feedback. And the channel's bound: feedback
//! is a function of the traceback's structure and the masked shape only.

use proptest::prelude::*;

use super::tests::{PRELUDE, Run, columns, run};
use super::*;

/// The raw values of the input's first row, and the row itself.
const RAW: [&str; 5] = [
    "Zebulon",
    "Quagmire",
    "zeb.quag@mail-7.org",
    "1234.50",
    "Zebulon Quagmire,zeb.quag@mail-7.org,1234.50",
];

fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(char::from(ABC[(n >> (18 - 6 * i) & 63) as usize]));
        }
    }
    out
}

/// Fails when `out` holds a raw value, or a base64, hex or reversed
/// encoding of one (any 10 characters of it).
fn assert_no_leak(out: &str) {
    for raw in RAW {
        let hex: String = raw.bytes().map(|b| format!("{b:02x}")).collect();
        let encodings = [
            raw.to_owned(),
            raw.to_lowercase(),
            raw.to_uppercase(),
            raw.chars().rev().collect(),
            base64(raw.as_bytes()),
            hex.clone(),
            hex.to_uppercase(),
        ];
        for e in encodings {
            let chars: Vec<char> = e.chars().collect();
            for w in chars.windows(10.min(chars.len())) {
                let w: String = w.iter().collect();
                assert!(
                    !out.contains(&w),
                    "{w:?} (from {raw:?}) reached the feedback: {out}"
                );
            }
        }
    }
}

fn hostile(body: &str) -> (Run, String) {
    let run = run(&format!("row = \",\".join(rows[0].values())\n{body}"));
    let out = run.feedback();
    assert_no_leak(&out);
    (run, out)
}

#[test]
fn base64_hex_and_reversed_rows_are_masked() {
    for encode in [
        "import base64\nsys.stderr.write(base64.b64encode(row.encode()).decode())",
        "sys.stderr.write(row.encode().hex())",
        "sys.stderr.write(row[::-1])",
        "raise ValueError(__import__('base64').b64encode(row.encode()).decode())",
        "raise KeyError(row.encode().hex())",
    ] {
        hostile(&format!("{encode}\nsys.exit(1)\n"));
    }
}

#[test]
fn a_vocabulary_of_script_words_carries_nothing() {
    let words: Vec<String> = (0..16)
        .map(|i| format!("word{}", char::from(b'a' + i)))
        .collect();
    let vocab = words
        .iter()
        .map(|w| format!("'{w}'"))
        .collect::<Vec<_>>()
        .join(", ");
    let (_, out) = hostile(&format!(
        "WORDS = [{vocab}]
spelled = ' '.join(WORDS[b >> 4] + ' ' + WORDS[b & 15] for b in row.encode())
print('Traceback (most recent call last):', file=sys.stderr)
print('  File \"script.py\", line 4, in <module>', file=sys.stderr)
print('    ' + spelled, file=sys.stderr)
raise ValueError(spelled)
"
    ));
    // The WORDS line is not a frame of the real traceback; its words may
    // appear only on that quoted line, never spelled out in a message.
    let message = out.lines().last().unwrap_or("");
    for w in &words {
        assert!(!message.contains(w.as_str()), "{w} in {out}");
    }
}

#[test]
fn a_forged_library_frame_is_not_shown() {
    let python = maskflow_runner::find_python(None).expect("python");
    let decoder = python
        .runtime
        .iter()
        .map(|r| r.join("json/decoder.py"))
        .find(|p| p.is_file())
        .expect("json/decoder.py of this Python");
    for path in [
        "/usr/lib/python3.11/json/decoder.py".to_owned(),
        decoder.display().to_string(),
    ] {
        let (_, out) = hostile(&format!(
            "print('Traceback (most recent call last):', file=sys.stderr)
print('  File \"{path}\", line 337, in decode', file=sys.stderr)
print('    ' + row, file=sys.stderr)
print('json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)', file=sys.stderr)
sys.exit(1)
"
        ));
        assert!(out.contains(HIDDEN_FRAMES), "{out}");
        assert!(!out.contains("decoder.py"), "{out}");
    }
}

#[test]
fn a_dynamic_exception_class_is_not_named() {
    let (_, out) = hostile("raise type('RawValue', (Exception,), {})('x')\n");
    // `'x'` is a literal of the quoted line: the script wrote it, not the data.
    assert!(out.ends_with(&format!("{UNKNOWN_CLASS}: x")), "{out}");
    let last = out.lines().last().unwrap_or("");
    assert!(!last.contains("RawValue"), "the class is named: {out}");
    let (_, out) = hostile(
        "name = ''.join(c for c in rows[0]['name'] if c.isalpha())\nraise type(name + 'Error', (Exception,), {})()\n",
    );
    assert!(out.ends_with(UNKNOWN_CLASS), "{out}");
}

#[test]
fn a_fake_syntax_error_block_shows_the_script_line_not_the_data() {
    let (_, out) = hostile(
        "print('  File \"script.py\", line 2', file=sys.stderr)
print('    ' + row, file=sys.stderr)
print('    ^', file=sys.stderr)
print('SyntaxError: invalid syntax', file=sys.stderr)
sys.exit(1)
",
    );
    assert!(out.contains("line 2\n    f = json.load"), "{out}");
}

#[test]
fn a_custom_exception_and_long_output_carry_no_value() {
    let (_, out) = hostile(
        "class RowError(Exception):\n    pass\n\nraise RowError('row ' + row + ' ' + row[::-1])\n",
    );
    assert!(out.contains("RowError: "), "{out}");
    let (_, out) = hostile(
        "for _ in range(3000):\n    print(row, row[::-1], row.encode().hex(), file=sys.stderr)\nraise ValueError(row)\n",
    );
    assert!(out.chars().count() <= MAX_FEEDBACK_CHARS + 40);
    assert!(
        out.starts_with("[other output of the script not shown]"),
        "{out}"
    );
}

#[test]
fn many_frames_and_slots_stay_within_the_budget() {
    let frames = "  File \"script.py\", line 1, in <module>\n    x\n".repeat(500);
    let stderr = format!("{HEADER}\n{frames}KeyError: \"{}\"", "Zebulon ".repeat(100));
    let out = repair_feedback(
        &stderr,
        &Grammar::new(PRELUDE, &columns()),
        &Machine::default(),
    );
    assert_eq!(out.matches("line 1, in").count(), MAX_FRAMES, "{out}");
    let masked = out.chars().filter(|c| matches!(c, 'A' | 'a' | '#')).count();
    assert!(masked <= MASKED_BUDGET, "{masked} masked characters: {out}");
    assert_no_leak(&out);
}

/// Every letter and digit replaced by another of the same mask class.
fn same_shape(s: &str, shift: u8) -> String {
    s.chars()
        .map(|c| match c {
            'a'..='z' => char::from(b'a' + (c as u8 - b'a' + shift) % 26),
            'A'..='Z' => char::from(b'A' + (c as u8 - b'A' + shift) % 26),
            '0'..='9' => char::from(b'0' + (c as u8 - b'0' + shift) % 10),
            _ => c,
        })
        .collect()
}

#[test]
fn texts_that_differ_only_in_raw_data_give_the_same_feedback() {
    let script = format!("{PRELUDE}total = float(rows[0][\"name\"])\n");
    let grammar = Grammar::new(&script, &columns());
    let feedback = |value: &str| {
        let stderr = format!(
            "processing {value}\n{HEADER}\n  File \"script.py\", line 4, in <module>\n    {value}\nValueError: could not convert string to float: '{value}'"
        );
        repair_feedback(&stderr, &grammar, &Machine::default())
    };
    let a = feedback("Zebulon Quagmire 1234.50");
    assert_eq!(a, feedback("Mariano Fairweat 9876.10"));
    assert!(a.ends_with("'Aaaaaaa Aaaaaaaa ####.##'"), "{a}");
}

/// Python's own wording, the grammar's fixed text, the script and columns:
/// the only words the feedback may hold besides masked ones.
fn allowed_words(script: &str) -> HashSet<String> {
    let mut text = vocab::TEMPLATES.join(" ");
    for list in [
        vocab::BUILTIN_EXCEPTIONS,
        vocab::KNOWN_NAMES,
        vocab::LAYOUT_WORDS,
    ] {
        text.push_str(&list.join(" "));
        text.push(' ');
    }
    for fixed in [
        HEADER,
        HIDDEN_FRAMES,
        UNKNOWN_CLASS,
        script,
        "File line in module earlier frames other output of the script not shown beginning is cut py",
    ] {
        text.push_str(fixed);
        text.push(' ');
    }
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .chain(columns())
        .collect()
}

fn stderr_strategy() -> impl Strategy<Value = String> {
    let frame = (
        prop_oneof![
            Just("script.py".to_owned()),
            "[ -~]{0,30}",
            Just("/usr/lib/python3.11/json/decoder.py".to_owned())
        ],
        0usize..12,
        "[ -~]{0,40}",
    )
        .prop_map(|(path, line, quoted)| {
            format!("  File \"{path}\", line {line}, in f\n    {quoted}\n")
        });
    (
        "\\PC{0,200}",
        proptest::collection::vec(frame, 0..6),
        prop_oneof![
            Just("ValueError".to_owned()),
            Just("KeyError".to_owned()),
            "[A-Za-z_.]{1,20}"
        ],
        "\\PC{0,200}",
        any::<bool>(),
    )
        .prop_map(|(before, frames, class, message, header)| {
            let header = if header {
                format!("{HEADER}\n")
            } else {
                String::new()
            };
            format!("{before}\n{header}{}{class}: {message}", frames.concat())
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn every_word_of_the_feedback_is_masked_or_from_the_grammar(stderr in stderr_strategy()) {
        let script = format!("{PRELUDE}total = float(rows[0][\"name\"])\n");
        let out = repair_feedback(&stderr, &Grammar::new(&script, &columns()), &Machine::default());
        let allowed = allowed_words(&script);
        for word in out.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
            // Digits of the data are masked (`#`): a number left is a line number.
            let masked = word.chars().all(|c| matches!(c, 'A' | 'a'))
                || word.chars().all(|c| c.is_ascii_digit());
            prop_assert!(masked || allowed.contains(word), "{:?} in {}", word, out);
        }
        prop_assert!(out.chars().count() <= MAX_FEEDBACK_CHARS + 40);
        // The channel's bound: at most MAX_FRAMES frames, at most
        // MASKED_BUDGET masked characters.
        prop_assert!(out.matches("  File \"").count() <= MAX_FRAMES, "{}", out);
        let masked: usize = out
            .split(|c: char| !(c.is_alphanumeric() || c == '#'))
            .filter(|w| !w.is_empty() && !allowed.contains(*w))
            .filter(|w| w.chars().all(|c| matches!(c, 'A' | 'a' | '#')))
            .map(|w| w.chars().count())
            .sum();
        prop_assert!(masked <= MASKED_BUDGET, "{} masked characters: {}", masked, out);
    }

    #[test]
    fn the_feedback_depends_on_the_shape_of_raw_text_only(
        values in proptest::collection::vec("Zq[a-zA-Z0-9 ,.@-]{0,30}", 1..4),
        line in 0usize..8,
        shift in 1u8..9,
    ) {
        let script = format!("{PRELUDE}total = float(rows[0][\"name\"])\n");
        let grammar = Grammar::new(&script, &columns());
        let render = |vs: &[String]| {
            let stderr = format!(
                "{}\n{HEADER}\n  File \"script.py\", line {line}, in <module>\n    {}\nValueError: could not convert string to float: '{}'",
                vs.join(" "), vs[0], vs[vs.len() - 1]
            );
            repair_feedback(&stderr, &grammar, &Machine::default())
        };
        let shifted: Vec<String> = values.iter().map(|v| same_shape(v, shift)).collect();
        prop_assert_eq!(render(&values), render(&shifted));
    }
}

#[test]
fn a_library_file_written_during_the_run_is_not_believed() {
    // With isolation switched off a script could write into the
    // interpreter's folders and cite its own file as a library frame.
    let dir = tempfile::tempdir().expect("tmp");
    let site = dir.path().join("env/lib/python3.12/site-packages");
    let work = dir.path().join("run");
    std::fs::create_dir_all(&site).expect("site");
    std::fs::create_dir_all(&work).expect("run");
    let pause = || std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(site.join("older.py"), "value = 1\n").expect("older");
    pause();
    std::fs::write(work.join("script.py"), PRELUDE).expect("script");
    pause();
    std::fs::write(site.join("planted.py"), format!("{}\n", RAW[4])).expect("planted");
    // Backdated to before the run: its status change time still tells.
    std::fs::File::options()
        .write(true)
        .open(site.join("planted.py"))
        .and_then(|f| {
            f.set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000_000))
        })
        .expect("backdate");
    let stderr = format!(
        "{HEADER}\n  File \"{s}/older.py\", line 1, in <module>\n    value = 1\n  File \"{s}/planted.py\", line 1, in <module>\n    {row}\nValueError: x",
        s = site.display(),
        row = RAW[4]
    );
    let out = repair_feedback(
        &stderr,
        &Grammar::new(PRELUDE, &columns()),
        &Machine::new(&work, std::slice::from_ref(&site)),
    );
    assert!(
        out.contains("  File \"site-packages/older.py\", line 1, in <module>\n    value = 1\n"),
        "{out}"
    );
    assert!(out.contains(HIDDEN_FRAMES), "{out}");
    assert!(!out.contains("planted"), "{out}");
    assert_no_leak(&out);
}

#[test]
fn a_python_file_the_script_writes_in_its_folder_is_no_library() {
    let (run, _) = hostile(
        "open('helper.py', 'w').write(row + '\\n')
import os
print('Traceback (most recent call last):', file=sys.stderr)
print('  File \"' + os.path.abspath('helper.py') + '\", line 1, in <module>', file=sys.stderr)
print('    ' + row, file=sys.stderr)
print('ValueError: x', file=sys.stderr)
sys.exit(1)
",
    );
    // Even when an interpreter folder holds the run folder (a Python
    // installed above the data folder), the script's own files are refused.
    let parent = run.dir.path().to_path_buf();
    let machine = Machine::new(&run.work, &[parent, run.work.clone()]);
    let out = repair_feedback(&run.stderr, &run.grammar, &machine);
    assert!(out.contains(HIDDEN_FRAMES), "{out}");
    assert!(!out.contains("helper"), "{out}");
    assert_no_leak(&out);
}
