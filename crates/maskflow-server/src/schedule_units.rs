//! The operating system's own scheduler for a cron schedule (issue 30):
//! `maskflow schedule install` writes a systemd user timer and service
//! (Linux), a launchd agent (macOS) or a Task Scheduler entry (Windows)
//! that calls `maskflow run` or `maskflow flows run` — no home-made daemon.
//! Here: turning a 5-field cron expression into systemd's `OnCalendar=`
//! (refusing clearly what has no equivalent) and writing the unit texts.
//! Pure functions; the command writes the files.
//!
//! Every value written into a unit is data from outside (a workflow's name
//! the LLM chose, a folder the user picked): each is escaped for the format
//! that reads it, so no control character survives into the text (systemd
//! ends a line at CR as at LF), or the unit is refused (issue 39).

use std::fmt;

/// A cron expression that has no `OnCalendar=` equivalent, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unconvertible {
    /// The expression.
    pub cron: String,
    /// Why it cannot be converted.
    pub reason: String,
}

impl fmt::Display for Unconvertible {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cron {:?} cannot be written as a systemd timer: {}",
            self.cron, self.reason
        )
    }
}

impl std::error::Error for Unconvertible {}

/// Why a unit cannot be written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UnitError {
    /// The cron expression has no equivalent in this scheduler.
    Cron(Unconvertible),
    /// A value that names a thing (the schedule, a program, a folder)
    /// holds what the format cannot carry safely.
    Unsafe {
        /// Which value ("the schedule's name", "argument 3", …).
        what: String,
        /// The value, debug-quoted.
        value: String,
        /// What is wrong and what to do.
        problem: String,
    },
}

impl fmt::Display for UnitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnitError::Cron(e) => e.fmt(f),
            UnitError::Unsafe {
                what,
                value,
                problem,
            } => write!(f, "{what} {value} {problem}"),
        }
    }
}

impl std::error::Error for UnitError {}

impl From<Unconvertible> for UnitError {
    fn from(e: Unconvertible) -> Self {
        UnitError::Cron(e)
    }
}

/// A character no unit file, plist or task XML may carry raw: the C0 and
/// C1 controls (CR, LF, tab, NUL, …), DEL and the Unicode line and
/// paragraph separators.
pub fn is_unsafe_char(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}')
}

/// `c` as a C escape systemd's unquoting reads back (`\x0d`, `\u2028`).
fn c_escape(c: char) -> String {
    let n = u32::from(c);
    if n < 0x80 {
        format!("\\x{n:02x}")
    } else {
        format!("\\u{n:04x}")
    }
}

const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const MONTHS: [&str; 12] = [
    "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC",
];

/// One numeric field (minute, hour, day of month, month) in systemd's
/// syntax: `*`, `N`, `A..B`, `N/S` and lists of those. Cron's `*/S`
/// becomes `MIN/S`; a stepped range has no equivalent.
fn numeric(field: &str, min: u32, max: u32, what: &str, names: &[&str]) -> Result<String, String> {
    let value = |v: &str| -> Result<u32, String> {
        let upper = v.to_ascii_uppercase();
        let n = match names.iter().position(|n| *n == upper) {
            Some(i) => u32::try_from(i).map_err(|e| e.to_string())? + min,
            None => v
                .parse::<u32>()
                .map_err(|_| format!("{what} {v:?} is not a number"))?,
        };
        if n < min || n > max {
            return Err(format!("{what} {n} is outside {min}-{max}"));
        }
        Ok(n)
    };
    if field == "*" {
        return Ok("*".into());
    }
    let mut parts = Vec::new();
    for item in field.split(',') {
        let (range, step) = match item.split_once('/') {
            Some((r, s)) => (
                r,
                Some(s.parse::<u32>().map_err(|_| format!("{what} step {s:?}"))?),
            ),
            None => (item, None),
        };
        if step == Some(0) {
            return Err(format!("{what} step 0"));
        }
        let text = match (range, range.split_once('-'), step) {
            ("*", _, Some(s)) => format!("{min:02}/{s}"),
            (_, Some((a, b)), None) => format!("{:02}..{:02}", value(a)?, value(b)?),
            (_, Some(_), Some(_)) => {
                return Err(format!("a stepped range ({item}) in the {what}"));
            }
            (single, None, Some(s)) => format!("{:02}/{s}", value(single)?),
            (single, None, None) => format!("{:02}", value(single)?),
        };
        parts.push(text);
    }
    Ok(parts.join(","))
}

/// The day-of-week field as systemd's names (`Mon..Fri`, `Sat,Sun`).
fn weekdays(field: &str) -> Result<Option<String>, String> {
    if field == "*" {
        return Ok(None);
    }
    let day = |v: &str| -> Result<usize, String> {
        let upper = v.to_ascii_uppercase();
        if let Some(i) = DAYS.iter().position(|d| d.to_ascii_uppercase() == upper) {
            return Ok(i);
        }
        match v.parse::<usize>() {
            Ok(n) if n <= 7 => Ok(n % 7),
            _ => Err(format!("day of week {v:?}")),
        }
    };
    let mut parts = Vec::new();
    for item in field.split(',') {
        if item.contains('/') {
            return Err(format!("a stepped day of week ({item})"));
        }
        match item.split_once('-') {
            // Cron's 5-7 or 6-0 wraps through Sunday; spell it out.
            Some((a, b)) => {
                let (a, b) = (day(a)?, if b == "7" { 7 } else { day(b)? });
                if a <= b && b == 7 {
                    parts.push(format!("{}..Sat,Sun", DAYS[a]));
                } else if a <= b {
                    parts.push(format!("{}..{}", DAYS[a], DAYS[b]));
                } else {
                    return Err(format!("the day-of-week range {item} runs backwards"));
                }
            }
            None => parts.push(DAYS[day(item)?].to_owned()),
        }
    }
    Ok(Some(parts.join(",")))
}

/// `OnCalendar=`'s value for a 5-field cron expression (or `@daily`…),
/// in local time as cron's. Refuses what systemd cannot say: `L`, `W`,
/// `#`, `?`, stepped ranges, `@reboot`, and a day of month together with a
/// day of week (cron runs on either; systemd would need both).
pub fn on_calendar(cron: &str) -> Result<String, Unconvertible> {
    let refuse = |reason: String| Unconvertible {
        cron: cron.to_owned(),
        reason,
    };
    let expr = cron.trim();
    let expanded = match expr.to_ascii_lowercase().as_str() {
        "@yearly" | "@annually" => "0 0 1 1 *",
        "@monthly" => "0 0 1 * *",
        "@weekly" => "0 0 * * 0",
        "@daily" | "@midnight" => "0 0 * * *",
        "@hourly" => "0 * * * *",
        other if other.starts_with('@') => {
            return Err(refuse(format!("{other} has no calendar time")));
        }
        _ => expr,
    };
    let fields: Vec<&str> = expanded.split_whitespace().collect();
    let [minute, hour, dom, month, dow] = fields.as_slice() else {
        return Err(refuse(
            "give 5 fields: minute hour day-of-month month day-of-week".into(),
        ));
    };
    if let Some(c) = expanded
        .chars()
        .find(|c| matches!(c, 'L' | 'W' | '#' | '?'))
    {
        return Err(refuse(format!("{c:?} has no systemd equivalent")));
    }
    if *dom != "*" && *dow != "*" {
        return Err(refuse(
            "cron runs when EITHER the day of month or the day of week matches; a timer needs both"
                .into(),
        ));
    }
    let minute = numeric(minute, 0, 59, "minute", &[]).map_err(refuse)?;
    let hour = numeric(hour, 0, 23, "hour", &[]).map_err(refuse)?;
    let dom = numeric(dom, 1, 31, "day of month", &[]).map_err(refuse)?;
    let month = numeric(month, 1, 12, "month", &MONTHS).map_err(refuse)?;
    let days = weekdays(dow).map_err(refuse)?;
    let date = format!("*-{month}-{dom}");
    let time = format!("{hour}:{minute}:00");
    Ok(match days {
        Some(days) => format!("{days} {date} {time}"),
        None => format!("{date} {time}"),
    })
}

/// One argument of `ExecStart=` (or an `Environment=` assignment), quoted
/// for systemd: `"…"` with `\` and `"` escaped, `%` (specifiers) and `$`
/// (variables) doubled, and every control character as a C escape
/// (`\x0d`), which systemd unquotes back to the same argument.
pub fn systemd_quote(arg: &str) -> String {
    let mut out = String::with_capacity(arg.len() + 2);
    out.push('"');
    for c in arg.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '%' => out.push_str("%%"),
            '$' => out.push_str("$$"),
            c if is_unsafe_char(c) => out.push_str(&c_escape(c)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Free text for a value systemd shows as it is (`Description=`): `%`
/// doubled, `\` doubled (so no line ends in a continuation) and every
/// control character written out as a visible escape (`\x0d`), so the
/// text stays on its one line.
pub fn systemd_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '%' => out.push_str("%%"),
            '\\' => out.push_str("\\\\"),
            c if is_unsafe_char(c) => out.push_str(&c_escape(c)),
            c => out.push(c),
        }
    }
    out
}

/// What a unit runs and when.
#[derive(Debug, Clone)]
pub struct UnitSpec {
    /// The schedule's name (letters, digits, `-`, `_`).
    pub name: String,
    /// What the description says it runs.
    pub what: String,
    /// The cron expression.
    pub cron: String,
    /// The program and its arguments.
    pub command: Vec<String>,
    /// `MASKFLOW_HOME` for the run.
    pub home: String,
}

impl UnitSpec {
    /// Refuses a schedule name that is not a plain file-name part and a
    /// program, argument or data folder holding a control character: they
    /// name things, so escaping would change what they name.
    pub fn check(&self) -> Result<(), UnitError> {
        let refuse = |what: String, value: &str, problem: &str| UnitError::Unsafe {
            what,
            value: format!("{value:?}"),
            problem: problem.to_owned(),
        };
        let plain = !self.name.is_empty()
            && self
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !plain {
            return Err(refuse(
                "the schedule's name".into(),
                &self.name,
                "is not letters, digits, - and _ only: rename the schedule",
            ));
        }
        let named = self
            .command
            .iter()
            .enumerate()
            .map(|(i, a)| (format!("argument {i} of the command"), a.as_str()))
            .chain(std::iter::once((
                "the data folder (MASKFLOW_HOME)".to_owned(),
                self.home.as_str(),
            )));
        for (what, value) in named {
            if value.chars().any(is_unsafe_char) {
                return Err(refuse(
                    what,
                    value,
                    "holds a control character (a line break, tab…) that a scheduler's \
                     file cannot carry safely: rename the folder or workflow it comes from",
                ));
            }
        }
        Ok(())
    }
}

/// `maskflow-<name>.timer` and `maskflow-<name>.service`: (file name, text) each.
pub fn systemd_units(spec: &UnitSpec) -> Result<[(String, String); 2], UnitError> {
    spec.check()?;
    let calendar = on_calendar(&spec.cron)?;
    let base = format!("maskflow-{}", spec.name);
    let exec: Vec<String> = spec.command.iter().map(|a| systemd_quote(a)).collect();
    let timer = format!(
        "[Unit]\n\
         Description=Maskflow schedule {name} ({cron})\n\
         \n\
         [Timer]\n\
         OnCalendar={calendar}\n\
         Persistent=true\n\
         Unit={base}.service\n\
         \n\
         [Install]\n\
         WantedBy=timers.target\n",
        name = spec.name,
        cron = systemd_text(&spec.cron),
    );
    let service = format!(
        "[Unit]\n\
         Description=Maskflow schedule {name}: {what}\n\
         \n\
         [Service]\n\
         Type=oneshot\n\
         Environment={env}\n\
         ExecStart={exec}\n",
        name = spec.name,
        what = systemd_text(&spec.what),
        env = systemd_quote(&format!("MASKFLOW_HOME={}", spec.home)),
        exec = exec.join(" "),
    );
    Ok([
        (format!("{base}.timer"), timer),
        (format!("{base}.service"), service),
    ])
}

/// The values a numeric cron field allows (`None`: every value), for
/// schedulers that list times instead of patterns (launchd).
#[cfg(any(target_os = "macos", test))]
fn expand(field: &str, min: u32, max: u32) -> Result<Option<Vec<u32>>, String> {
    if field == "*" {
        return Ok(None);
    }
    let mut values = Vec::new();
    for item in field.split(',') {
        let (range, step) = match item.split_once('/') {
            Some((r, s)) => (r, s.parse::<u32>().map_err(|_| format!("step {s:?}"))?),
            None => (item, 1),
        };
        let num = |v: &str| {
            v.parse::<u32>()
                .map_err(|_| format!("{v:?} is not a number"))
        };
        let (a, b) = match range.split_once('-') {
            _ if range == "*" => (min, max),
            Some((a, b)) => (num(a)?, num(b)?),
            None if step > 1 => (num(range)?, max),
            None => (num(range)?, num(range)?),
        };
        if step == 0 || a < min || b > max || a > b {
            return Err(format!("{item:?} is outside {min}-{max}"));
        }
        values.extend((a..=b).step_by(step as usize));
    }
    values.sort_unstable();
    values.dedup();
    Ok(Some(values))
}

/// A launchd agent (`~/Library/LaunchAgents/com.maskflow.schedule.<name>.plist`)
/// whose `StartCalendarInterval` lists every time the cron expression
/// names (numeric fields only; at most 1000 entries).
#[cfg(any(target_os = "macos", test))]
pub fn launchd_plist(spec: &UnitSpec) -> Result<String, UnitError> {
    spec.check()?;
    let refuse = |reason: String| {
        UnitError::Cron(Unconvertible {
            cron: spec.cron.clone(),
            reason,
        })
    };
    let fields: Vec<&str> = spec.cron.split_whitespace().collect();
    let [minute, hour, dom, month, dow] = fields.as_slice() else {
        return Err(refuse(
            "give 5 numeric fields (launchd takes no @names or month names)".into(),
        ));
    };
    if *dom != "*" && *dow != "*" {
        return Err(refuse("a day of month together with a day of week".into()));
    }
    let keys = [
        ("Minute", minute, 0, 59),
        ("Hour", hour, 0, 23),
        ("Day", dom, 1, 31),
        ("Month", month, 1, 12),
        ("Weekday", dow, 0, 7),
    ];
    let mut entries: Vec<Vec<(&str, u32)>> = vec![Vec::new()];
    for (key, field, min, max) in keys {
        if let Some(values) = expand(field, min, max).map_err(&refuse)? {
            entries = entries
                .into_iter()
                .flat_map(|e| {
                    values
                        .iter()
                        .map(move |v| [e.clone(), vec![(key, *v)]].concat())
                })
                .collect();
            if entries.len() > 1000 {
                return Err(refuse(
                    "more than 1000 times; launchd lists each one".into(),
                ));
            }
        }
    }
    let xml = |t: &str| {
        t.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    };
    let args: String = spec
        .command
        .iter()
        .map(|a| format!("<string>{}</string>", xml(a)))
        .collect();
    let times: String = entries
        .iter()
        .map(|e| {
            let inner: String = e
                .iter()
                .map(|(k, v)| format!("<key>{k}</key><integer>{v}</integer>"))
                .collect();
            format!("<dict>{inner}</dict>")
        })
        .collect();
    Ok(format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n\
         <plist version=\"1.0\"><dict>\n\
         <key>Label</key><string>com.maskflow.schedule.{name}</string>\n\
         <key>ProgramArguments</key><array>{args}</array>\n\
         <key>EnvironmentVariables</key><dict><key>MASKFLOW_HOME</key><string>{home}</string></dict>\n\
         <key>StartCalendarInterval</key><array>{times}</array>\n\
         </dict></plist>\n",
        name = spec.name,
        home = xml(&spec.home),
    ))
}

/// A Task Scheduler entry (`schtasks /Create /XML`) for a daily or weekly
/// cron time (`M H * * *` or `M H * * D,…`); anything else is refused.
#[cfg(any(windows, test))]
pub fn schtasks_xml(spec: &UnitSpec) -> Result<String, UnitError> {
    spec.check()?;
    let refuse = |reason: &str| {
        UnitError::Cron(Unconvertible {
            cron: spec.cron.clone(),
            reason: reason.into(),
        })
    };
    let fields: Vec<&str> = spec.cron.split_whitespace().collect();
    let [minute, hour, "*", "*", dow] = fields.as_slice() else {
        return Err(refuse(
            "Task Scheduler entries take \"M H * * *\" or \"M H * * D,…\" only",
        ));
    };
    let (Ok(m), Ok(h)) = (minute.parse::<u32>(), hour.parse::<u32>()) else {
        return Err(refuse("give one minute and one hour"));
    };
    if m > 59 || h > 23 {
        return Err(refuse("the minute or hour is out of range"));
    }
    const NAMES: [&str; 7] = [
        "Sunday",
        "Monday",
        "Tuesday",
        "Wednesday",
        "Thursday",
        "Friday",
        "Saturday",
    ];
    let schedule = if *dow == "*" {
        "<ScheduleByDay><DaysInterval>1</DaysInterval></ScheduleByDay>".to_owned()
    } else {
        let mut days = String::new();
        for d in dow.split(',') {
            let n = d
                .parse::<usize>()
                .ok()
                .filter(|n| *n <= 7)
                .ok_or_else(|| refuse("days of week as numbers 0-7"))?;
            days.push_str(&format!("<{}/>", NAMES[n % 7]));
        }
        format!(
            "<ScheduleByWeek><WeeksInterval>1</WeeksInterval><DaysOfWeek>{days}</DaysOfWeek></ScheduleByWeek>"
        )
    };
    let xml = |t: &str| {
        t.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
    };
    let (program, args) = spec
        .command
        .split_first()
        .ok_or_else(|| refuse("no command"))?;
    let args: Vec<String> = args.iter().map(|a| windows_quote(a)).collect();
    Ok(format!(
        "<?xml version=\"1.0\" encoding=\"UTF-16\"?>\n\
         <Task version=\"1.2\" xmlns=\"http://schemas.microsoft.com/windows/2004/02/mit/task\">\n\
         <Triggers><CalendarTrigger><StartBoundary>2000-01-01T{h:02}:{m:02}:00</StartBoundary>{schedule}</CalendarTrigger></Triggers>\n\
         <Settings><StartWhenAvailable>true</StartWhenAvailable></Settings>\n\
         <Actions><Exec><Command>{program}</Command><Arguments>{args}</Arguments></Exec></Actions>\n\
         </Task>\n",
        program = xml(program),
        args = xml(&args.join(" ")),
    ))
}

/// One argument as Windows' command-line parsing (`CommandLineToArgvW`)
/// reads it back: in `"…"`, a `"` as `\\"` and the backslashes before a
/// quote (or the closing one) doubled, so an argument ending in `\\`
/// cannot swallow the quote and run into the next argument.
#[cfg(any(windows, test))]
fn windows_quote(arg: &str) -> String {
    let mut out = String::from('"');
    let mut slashes = 0;
    for c in arg.chars() {
        match c {
            '\\' => slashes += 1,
            '"' => {
                out.push_str(&"\\".repeat(slashes * 2 + 1));
                out.push('"');
                slashes = 0;
            }
            c => {
                out.push_str(&"\\".repeat(slashes));
                out.push(c);
                slashes = 0;
            }
        }
    }
    out.push_str(&"\\".repeat(slashes * 2));
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cron_becomes_on_calendar() {
        let cases = [
            ("0 7 * * *", "*-*-* 07:00:00"),
            ("*/15 * * * *", "*-*-* *:00/15:00"),
            ("30 8 * * 1-5", "Mon..Fri *-*-* 08:30:00"),
            ("0 9 1,15 * *", "*-*-01,15 09:00:00"),
            ("0 0 * 1-3 *", "*-01..03-* 00:00:00"),
            ("5 4 * JAN sun", "Sun *-01-* 04:05:00"),
            ("0 12 * * 5-7", "Fri..Sat,Sun *-*-* 12:00:00"),
            ("0 0 * * 0,7", "Sun,Sun *-*-* 00:00:00"),
            ("@weekly", "Sun *-*-* 00:00:00"),
            ("@hourly", "*-*-* *:00:00"),
            ("10/20 * * * *", "*-*-* *:10/20:00"),
        ];
        for (cron, want) in cases {
            assert_eq!(on_calendar(cron).as_deref(), Ok(want), "{cron}");
        }
    }

    #[test]
    fn what_systemd_cannot_say_is_refused_with_the_reason() {
        for (cron, why) in [
            ("0 7 1 * 1", "EITHER"),
            ("0 7 L * *", "'L'"),
            ("0 7 * * 5#2", "'#'"),
            ("0 1-5/2 * * *", "stepped range"),
            ("@reboot", "no calendar time"),
            ("0 7 * *", "5 fields"),
            ("61 * * * *", "outside"),
            ("0 7 * * */2", "stepped day"),
        ] {
            let err = on_calendar(cron).expect_err(cron).to_string();
            assert!(err.contains(why) && err.contains(cron), "{cron}: {err}");
        }
    }

    fn spec(cron: &str) -> UnitSpec {
        UnitSpec {
            name: "daily".into(),
            what: "run flow report".into(),
            cron: cron.into(),
            command: vec![
                "/usr/bin/maskflow".into(),
                "flows".into(),
                "run".into(),
                "a&b".into(),
            ],
            home: "/data".into(),
        }
    }

    #[test]
    fn launchd_lists_each_time_and_task_scheduler_takes_daily_or_weekly() {
        let plist = launchd_plist(&spec("0,30 7 * * 1-5")).expect("plist");
        assert_eq!(
            plist.matches("<dict><key>Minute</key>").count(),
            10,
            "{plist}"
        );
        assert!(plist.contains("<string>a&amp;b</string>"), "{plist}");
        assert!(launchd_plist(&spec("0 7 1 * 1")).is_err());
        let task = schtasks_xml(&spec("30 8 * * 1,5")).expect("task");
        assert!(
            task.contains("T08:30:00") && task.contains("<Monday/><Friday/>"),
            "{task}"
        );
        assert!(schtasks_xml(&spec("*/5 * * * *")).is_err());
    }

    #[test]
    fn arguments_are_quoted_for_systemd() {
        assert_eq!(systemd_quote("a b"), "\"a b\"");
        assert_eq!(systemd_quote("50%$x\"\\"), "\"50%%$$x\\\"\\\\\"");
        assert_eq!(systemd_quote("a\rb\nc\u{85}"), "\"a\\x0db\\x0ac\\u0085\"");
    }

    fn is_unsafe_but_lf(c: char) -> bool {
        c != '\n' && is_unsafe_char(c)
    }

    /// Issue 39: the LLM's workflow name (in `what`) and the cron text
    /// stay on their `Description=` line whatever they hold.
    #[test]
    fn free_text_cannot_add_a_line_to_a_unit() {
        let mut s = spec("0 7 * * *");
        s.what = "run workflow Tidy\r[Service]\rExecStartPre=/bin/sh -c \"id\"\u{2028}\\".into();
        let [(_, timer), (_, service)] = systemd_units(&s).expect("units");
        let known = [
            "[",
            "Description=",
            "OnCalendar=",
            "Persistent=",
            "Unit=",
            "WantedBy=",
            "Type=",
            "Environment=",
            "ExecStart=",
        ];
        for text in [&timer, &service] {
            assert!(!text.chars().any(is_unsafe_but_lf), "{text:?}");
            for line in text.lines() {
                assert!(
                    line.is_empty() || known.iter().any(|k| line.starts_with(k)),
                    "{line:?}"
                );
            }
        }
        assert!(
            service.contains(
                "Description=Maskflow schedule daily: run workflow Tidy\\x0d[Service]\\x0dExecStartPre=/bin/sh -c \"id\"\\u2028\\\\\n"
            ),
            "{service}"
        );
    }

    #[test]
    fn names_and_paths_with_control_characters_are_refused_in_every_format() {
        let mut bad_name = spec("0 7 * * *");
        bad_name.name = "x\ry".into();
        let mut bad_path = spec("0 7 * * *");
        bad_path.command[3] = "/tmp/out\n[Service]".into();
        let mut bad_home = spec("0 7 * * *");
        bad_home.home = "/data\r".into();
        for (s, what) in [
            (&bad_name, "the schedule's name"),
            (&bad_path, "argument 3"),
            (&bad_home, "the data folder"),
        ] {
            for err in [
                systemd_units(s).map(|_| ()).expect_err(what),
                launchd_plist(s).map(|_| ()).expect_err(what),
                schtasks_xml(s).map(|_| ()).expect_err(what),
            ] {
                assert!(err.to_string().contains(what), "{err}");
            }
        }
    }

    #[test]
    fn task_scheduler_arguments_are_quoted_as_windows_reads_them() {
        assert_eq!(windows_quote("a b"), "\"a b\"");
        assert_eq!(windows_quote(r"C:\out\"), r#""C:\out\\""#);
        assert_eq!(windows_quote(r#"say "hi""#), r#""say \"hi\"""#);
        assert_eq!(windows_quote(r#"a\"b"#), r#""a\\\"b""#);
    }
}
