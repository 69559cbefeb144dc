//! What one raw value looks like, read cheaply from its bytes: a number
//! (and its value), a date in which layout, a time, a boolean, text — and
//! whether it is a placeholder for a missing value (`N/A`, `-`, `null`).

/// The kind of one value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Integer,
    Decimal,
    Date(DateLayout),
    DateTime(DateLayout, TimeLayout),
    Time,
    Boolean,
    Text,
}

/// How a date's three numbers are laid out, with their separator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum DateLayout {
    /// `2024-01-31`: year first.
    YearFirst(u8),
    /// `31/01/2024` or `01/31/2024`: year last, day and month in an order
    /// only other values can tell; `.0` is the separator, `.1` whether the
    /// first number is over 12 (so a day), `.2` whether the second is.
    YearLast(u8, bool, bool),
    /// `14 Oct 2026`, `Oct 14, 2026`: an English month name, the day before
    /// or after it, the year last.
    MonthName {
        /// A space or `-` between the parts.
        sep: u8,
        /// The day before the month.
        day_first: bool,
        /// The month's name in full (`October`), not abbreviated.
        full: bool,
        /// A comma after the day (`Oct 14, 2026`).
        comma: bool,
    },
}

/// Whether a time has seconds and how it joins a date.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct TimeLayout {
    /// `T` or a space between date and time.
    pub joint: u8,
    /// `HH:MM:SS` rather than `HH:MM`.
    pub seconds: bool,
}

/// Words that stand for "no value" (compared case-insensitively).
const PLACEHOLDERS: [&str; 14] = [
    "n/a",
    "na",
    "n.a.",
    "-",
    "--",
    "null",
    "none",
    "nan",
    "nil",
    "not available",
    "unknown",
    "missing",
    "?",
    "#n/a",
];

/// Whether `v` (trimmed) is a placeholder for a missing value.
#[cfg(test)]
pub(super) fn is_placeholder(v: &str) -> bool {
    placeholder(v).is_some()
}

/// Which of Maskflow's placeholder words `v` (trimmed) is, as an index of
/// [`PLACEHOLDERS`].
pub(super) fn placeholder(v: &str) -> Option<usize> {
    if v.len() > 13 {
        return None;
    }
    PLACEHOLDERS.iter().position(|p| p.eq_ignore_ascii_case(v))
}

/// Maskflow's spelling of placeholder word `i`.
pub(super) fn placeholder_word(i: usize) -> &'static str {
    PLACEHOLDERS.get(i).copied().unwrap_or("?")
}

/// Whether placeholder word `i` is a word a list may hold as one of its
/// entries (`UNKNOWN` among operators, `None` among answers), not only a
/// mark of a missing value.
pub(super) fn may_be_category(i: usize) -> bool {
    matches!(
        placeholder_word(i),
        "unknown" | "none" | "missing" | "not available" | "nil"
    )
}

/// How a text value's letters are cased.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Case {
    /// `gold`.
    Lower,
    /// `GOLD`.
    Upper,
    /// `Gold Member`, `GoLd`, `Van der Berg`: both cases (names and
    /// titles are told apart no further, which would say little).
    Mixed,
    /// No letter.
    None,
}

impl Case {
    /// The case of `v`.
    pub(super) fn of(v: &str) -> Case {
        let (mut lower, mut upper) = (false, false);
        for c in v.chars() {
            lower |= c.is_lowercase();
            upper |= c.is_uppercase();
        }
        match (lower, upper) {
            (false, false) => Case::None,
            (true, false) => Case::Lower,
            (false, true) => Case::Upper,
            _ => Case::Mixed,
        }
    }

    /// The case in words.
    pub(super) fn describe(self) -> &'static str {
        match self {
            Case::Lower => "lower case",
            Case::Upper => "upper case",
            Case::Mixed => "mixed case",
            Case::None => "no letters",
        }
    }
}

/// The kind of `v` (trimmed, not empty), with its numeric value for numbers.
#[cfg(test)]
pub(super) fn classify(v: &str) -> (Kind, Option<f64>) {
    let (k, n, _) = classify_full(v);
    (k, n)
}

/// The kind of `v` (trimmed, not empty), with its numeric value and the
/// format it is written in for numbers.
pub(super) fn classify_full(v: &str) -> (Kind, Option<f64>, Option<NumberFormat>) {
    let Some(&first) = v.as_bytes().first() else {
        return (Kind::Text, None, None);
    };
    if (first.is_ascii_digit() || first.is_ascii_alphabetic())
        && let Some(kind) = temporal(v)
    {
        return (kind, None, None);
    }
    if (first.is_ascii_digit()
        || matches!(first, b'-' | b'+' | b'.' | b'$' | b'(')
        || first.is_ascii_uppercase()
        || !first.is_ascii())
        && let Some((n, integer, format)) = number(v)
    {
        let kind = if integer {
            Kind::Integer
        } else {
            Kind::Decimal
        };
        return (kind, Some(n), Some(format));
    }
    if matches!(v.len(), 2..=5)
        && ["true", "false", "yes", "no"]
            .iter()
            .any(|w| w.eq_ignore_ascii_case(v))
    {
        return (Kind::Boolean, None, None);
    }
    (Kind::Text, None, None)
}

/// How a number is written: its decimal mark, thousands separator,
/// currency sign and where it stands, percent, parentheses for negatives,
/// scientific notation. A value-free description (no digit of the value).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(super) struct NumberFormat {
    /// `.` or `,` as the decimal mark; 0 for a whole number.
    pub decimal: u8,
    /// `,`, `.` or a space grouping thousands; 0 for none.
    pub group: u8,
    /// The currency sign (`$`, `€`, `£`, `¥`) or ISO 4217 code (`EUR`), if
    /// any: one of Maskflow's own lists, never text of the file.
    pub currency: Option<&'static str>,
    /// Whether the currency sign or code follows the number.
    pub currency_after: bool,
    /// A `%` after the number.
    pub percent: bool,
    /// A negative written in parentheses.
    pub parentheses: bool,
    /// Scientific notation (`1.5e3`).
    pub scientific: bool,
    /// A workbook cell of text type that holds a number.
    pub as_text: bool,
}

impl NumberFormat {
    /// The format in words, e.g. `decimal comma, thousands point, € before`.
    pub(super) fn describe(&self) -> String {
        let mark = |c: u8| match c {
            b'.' => "point",
            b',' => "comma",
            _ => "space",
        };
        let mut parts: Vec<String> = Vec::new();
        if self.scientific {
            parts.push("scientific".into());
        } else if self.decimal == 0 {
            parts.push("whole number".into());
        } else {
            parts.push(format!("decimal {}", mark(self.decimal)));
        }
        if self.group != 0 {
            parts.push(format!("thousands {}", mark(self.group)));
        }
        if let Some(c) = self.currency {
            let at = if self.currency_after {
                "after"
            } else {
                "before"
            };
            parts.push(format!("{c} {at}"));
        }
        if self.percent {
            parts.push("percent".into());
        }
        if self.parentheses {
            parts.push("negative in parentheses".into());
        }
        if self.as_text {
            parts.push("stored as text".into());
        }
        parts.join(", ")
    }
}

/// The currency signs a number may carry.
const SIGNS: [&str; 4] = ["$", "€", "£", "¥"];
/// ISO 4217 codes written beside amounts in exports (`EUR 1,234.50`,
/// `1.234,50 EUR`): the widely traded currencies.
const CODES: [&str; 36] = [
    "EUR", "USD", "GBP", "JPY", "CHF", "CAD", "AUD", "NZD", "CNY", "HKD", "SGD", "SEK", "NOK",
    "DKK", "ISK", "PLN", "CZK", "HUF", "RON", "BGN", "TRY", "RUB", "UAH", "INR", "BRL", "MXN",
    "ARS", "CLP", "COP", "ZAR", "KRW", "TWD", "THB", "IDR", "MYR", "PHP",
];

/// The sign or code `s` starts with (`after`: ends with), and `s` without it.
fn currency_at(s: &str, after: bool) -> Option<(&'static str, &str)> {
    let found = |list: &[&'static str]| {
        list.iter().copied().find(|c| {
            if after {
                s.ends_with(c)
            } else {
                s.starts_with(c)
            }
        })
    };
    // Codes are looked for only beside a capital letter: this runs for
    // every number of a large file.
    let edge = if after {
        s.as_bytes().last()
    } else {
        s.as_bytes().first()
    };
    let c = found(&SIGNS).or_else(|| {
        edge.filter(|b| b.is_ascii_uppercase())
            .and_then(|_| found(&CODES))
    })?;
    let rest = if after {
        s[..s.len() - c.len()].trim_end()
    } else {
        s[c.len()..].trim_start()
    };
    // A code is a word of its own or stands against the digits.
    let touching = if after {
        rest.as_bytes().last()
    } else {
        rest.as_bytes().first()
    };
    let word_apart = c.len() == 1 || touching.is_some_and(|b| !b.is_ascii_alphabetic());
    word_apart.then_some((c, rest))
}

/// `v` without its sign, parentheses, currency sign or code and percent
/// sign: the digits left, whether the number is negative, and the format so
/// far.
fn affixes(v: &str) -> (&str, bool, NumberFormat) {
    let mut f = NumberFormat::default();
    let mut s = v.trim();
    let mut negative = false;
    if let Some(inner) = s.strip_prefix('(').and_then(|r| r.strip_suffix(')')) {
        negative = true;
        f.parentheses = true;
        s = inner.trim();
    }
    if let Some(r) = s.strip_prefix('-') {
        negative = !negative;
        s = r.trim_start();
    } else if let Some(r) = s.strip_prefix('+') {
        s = r.trim_start();
    }
    if let Some((c, rest)) = currency_at(s, false) {
        f.currency = Some(c);
        s = rest;
    }
    let before = s.len();
    s = s.trim_end_matches('%').trim_end();
    f.percent = s.len() < before;
    if f.currency.is_none()
        && let Some((c, rest)) = currency_at(s, true)
    {
        f.currency = Some(c);
        f.currency_after = true;
        s = rest;
    }
    s = s.trim_end_matches('%').trim_end();
    if let Some(r) = s.strip_prefix('-') {
        negative = !negative;
        s = r;
    }
    (s, negative, f)
}

/// A number written as people write amounts: a sign or parentheses, a
/// currency symbol before or after, thousands grouped with `,` (or `,` as
/// the decimal mark when it is followed by other than three digits), or
/// grouped with `.` before a decimal comma (`1.234,56`), a `%`.
/// Returns its value, whether it is a whole number written without a
/// decimal mark, and its format.
fn number(v: &str) -> Option<(f64, bool, NumberFormat)> {
    let (s, negative, mut f) = affixes(v);
    if s.is_empty()
        || !s
            .bytes()
            .all(|c| c.is_ascii_digit() || c == b'.' || c == b',')
    {
        // Scientific notation, as Python and Excel write it.
        let n: f64 = s.parse().ok().filter(|n: &f64| n.is_finite())?;
        f.scientific = true;
        return s.bytes().any(|c| c == b'e' || c == b'E').then_some((
            if negative { -n } else { n },
            false,
            f,
        ));
    }
    if !s.as_bytes()[0].is_ascii_digit() && !s.starts_with('.') {
        return None;
    }
    // The number without its grouping, in a buffer on the stack (this
    // runs for every cell of a large file).
    let mut buf = [0u8; 64];
    let mut len = 0;
    let mut push = |b: u8| {
        if len < buf.len() {
            buf[len] = b;
            len += 1;
        }
    };
    let grouped_by = |int: &str, sep: char| {
        let mut groups = int.split(sep);
        let first = groups.next().unwrap_or("");
        !first.is_empty() && first.len() <= 3 && groups.all(|g| g.len() == 3)
    };
    let dots = s.bytes().filter(|&b| b == b'.').count();
    if s.contains(',') && s.contains('.') && s.rfind(',') > s.rfind('.') {
        // `1.234,56`: thousands grouped with points, a decimal comma.
        let (int, frac) = s.rsplit_once(',').unwrap_or((s, ""));
        if !grouped_by(int, '.') || frac.contains('.') {
            return None;
        }
        int.bytes().filter(|&b| b != b'.').for_each(&mut push);
        push(b'.');
        frac.bytes().for_each(&mut push);
        f.group = b'.';
        f.decimal = b',';
    } else if s.contains(',') {
        let (int, frac) = s.split_once('.').unwrap_or((s, ""));
        let mut groups = int.split(',');
        let first = groups.next().unwrap_or("");
        let rest: Vec<&str> = groups.collect();
        let grouped = grouped_by(int, ',') && !frac.contains(',');
        if grouped {
            int.bytes().filter(|&b| b != b',').for_each(&mut push);
            f.group = b',';
            if s.contains('.') {
                push(b'.');
                frac.bytes().for_each(&mut push);
                f.decimal = b'.';
            }
        } else if rest.len() == 1 && !s.contains('.') {
            // `12,50`: a decimal comma.
            first.bytes().for_each(&mut push);
            push(b'.');
            rest[0].bytes().for_each(&mut push);
            f.decimal = b',';
        } else {
            return None;
        }
    } else if dots > 1 {
        // `1.234.567`: thousands grouped with points.
        if !grouped_by(s, '.') {
            return None;
        }
        s.bytes().filter(|&b| b != b'.').for_each(&mut push);
        f.group = b'.';
    } else {
        s.bytes().for_each(&mut push);
        if dots == 1 {
            f.decimal = b'.';
        }
    }
    if len == buf.len() {
        return None;
    }
    let plain = std::str::from_utf8(&buf[..len]).ok()?;
    let n: f64 = plain.trim_end_matches('.').parse().ok()?;
    let integer = !plain.contains('.');
    Some((if negative { -n } else { n }, integer, f))
}

/// The digits of `s` as a number when `s` is 1..=4 ASCII digits.
fn digits(s: &str) -> Option<u32> {
    (!s.is_empty() && s.len() <= 4 && s.bytes().all(|c| c.is_ascii_digit()))
        .then(|| s.bytes().fold(0, |n, c| n * 10 + u32::from(c - b'0')))
}

/// A date, a date and time, or a time of day.
fn temporal(v: &str) -> Option<Kind> {
    if v.len() <= 12
        && let Some(layout) = date(v)
    {
        return Some(Kind::Date(layout));
    }
    if let Some(layout) = month_name_date(v) {
        return Some(Kind::Date(layout));
    }
    if !v.as_bytes()[0].is_ascii_digit() {
        return None;
    }
    if let Some(at) = v.find(['T', ' '])
        && let Some(layout) = date(&v[..at])
        && let Some(seconds) = time(&v[at + 1..])
    {
        let joint = v.as_bytes()[at];
        return Some(Kind::DateTime(layout, TimeLayout { joint, seconds }));
    }
    time(v).map(|_| Kind::Time)
}

fn date(v: &str) -> Option<DateLayout> {
    let sep = *v
        .as_bytes()
        .iter()
        .find(|c| matches!(c, b'-' | b'/' | b'.'))?;
    let mut parts = v.split(char::from(sep));
    let (a, b, c) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let (x, y, z) = (digits(a)?, digits(b)?, digits(c)?);
    if a.len() == 4 && b.len() <= 2 && c.len() <= 2 {
        return ((1..=12).contains(&y) && (1..=31).contains(&z))
            .then_some(DateLayout::YearFirst(sep));
    }
    if c.len() == 4 && a.len() <= 2 && b.len() <= 2 && x >= 1 && y >= 1 {
        let ok = (x <= 12 && y <= 31) || (y <= 12 && x <= 31);
        return ok.then_some(DateLayout::YearLast(sep, x > 12, y > 12));
    }
    None
}

/// An English month's name, abbreviated (`Oct`, `Sept`) or in full, any
/// case: whether it is in full.
pub fn month_name(s: &str) -> Option<bool> {
    const MONTHS: [&str; 12] = [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ];
    if !(3..=9).contains(&s.len()) || !s.is_ascii() {
        return None;
    }
    let lower = s.to_ascii_lowercase();
    MONTHS.iter().find_map(|m| {
        if *m == lower {
            // `May` is its own abbreviation: `%b` reads it.
            Some(m.len() > 3)
        } else if m[..3] == lower || (lower == "sept" && *m == "september") {
            Some(false)
        } else {
            None
        }
    })
}

/// A date with an English month name: `14 Oct 2026`, `14-Oct-2026`,
/// `4 October 2026`, `Oct 14, 2026`, `October 14 2026`.
fn month_name_date(v: &str) -> Option<DateLayout> {
    if !(9..=20).contains(&v.len()) || !v.as_bytes()[v.len() - 1].is_ascii_digit() {
        return None;
    }
    let sep = if v.contains('-') { b'-' } else { b' ' };
    let mut parts = v.split(char::from(sep));
    let (a, b, c) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || c.len() != 4 || digits(c).is_none() {
        return None;
    }
    let day = |s: &str| s.len() <= 2 && digits(s).is_some_and(|d| (1..=31).contains(&d));
    if day(a)
        && let Some(full) = month_name(b)
    {
        return Some(DateLayout::MonthName {
            sep,
            day_first: true,
            full,
            comma: false,
        });
    }
    let (b, comma) = b.strip_suffix(',').map_or((b, false), |b| (b, true));
    if sep == b' '
        && day(b)
        && let Some(full) = month_name(a)
    {
        return Some(DateLayout::MonthName {
            sep,
            day_first: false,
            full,
            comma,
        });
    }
    None
}

/// A time `H:MM`, `HH:MM:SS`, with fractions of a second and a zone
/// (`Z`, `+01:00`) allowed; `Some(true)` when it has seconds.
fn time(v: &str) -> Option<bool> {
    let v = v.trim_end_matches('Z');
    let v = match v.get(8..).and_then(|t| t.find(['+', '-'])) {
        Some(at) => &v[..8 + at],
        None => v,
    };
    let v = v.split_once('.').map_or(v, |(t, frac)| {
        if frac.bytes().all(|c| c.is_ascii_digit()) {
            t
        } else {
            v
        }
    });
    let mut parts = v.split(':');
    let h = parts.next().filter(|p| p.len() <= 2).and_then(digits)?;
    let m = parts.next().filter(|p| p.len() == 2).and_then(digits)?;
    let s = match parts.next() {
        Some(p) if p.len() == 2 => Some(digits(p)?),
        Some(_) => return None,
        None => None,
    };
    if parts.next().is_some() || h > 99 || m > 59 || s.is_some_and(|s| s > 60) {
        return None;
    }
    Some(s.is_some())
}

impl DateLayout {
    /// The layout as a `strftime` format; `day_first`/`month_first` say
    /// what other values of the column showed for an ambiguous one.
    pub(super) fn format(self, day_first: bool, month_first: bool) -> String {
        match self {
            DateLayout::YearFirst(sep) => {
                let s = char::from(sep);
                format!("%Y{s}%m{s}%d")
            }
            DateLayout::YearLast(sep, ..) => {
                let s = char::from(sep);
                match (day_first, month_first) {
                    (true, false) => format!("%d{s}%m{s}%Y"),
                    (false, true) => format!("%m{s}%d{s}%Y"),
                    _ => format!("%d{s}%m{s}%Y or %m{s}%d{s}%Y"),
                }
            }
            DateLayout::MonthName {
                sep,
                day_first,
                full,
                comma,
            } => {
                let s = char::from(sep);
                let month = if full { "%B" } else { "%b" };
                let comma = if comma { "," } else { "" };
                if day_first {
                    format!("%d{s}{month}{s}%Y")
                } else {
                    format!("{month}{s}%d{comma}{s}%Y")
                }
            }
        }
    }

    /// The layout with the day/month evidence taken out (so every value of
    /// one layout counts together).
    pub(super) fn key(self) -> DateLayout {
        match self {
            DateLayout::YearLast(sep, ..) => DateLayout::YearLast(sep, false, false),
            other => other,
        }
    }
}

/// `x` rounded to two significant figures, written so it cannot be a value
/// of the file's own spelling: plain when it is a whole number of at most
/// three characters (`12`, `120`), otherwise in scientific notation
/// (`1.2e3`, `5e-1`, `-4.5e-2`) — a plain `4.5` would be a decimal the
/// guard finds in a file that holds it, and block the prompt.
pub(super) fn round2(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return "0".into();
    }
    let mut e = x.abs().log10().floor() as i32;
    // The two significant digits as a whole number, 10..=99.
    let mut d = (x.abs() / 10f64.powi(e - 1)).round();
    if d >= 100.0 {
        d = (d / 10.0).round();
        e += 1;
    }
    let sign = if x < 0.0 { "-" } else { "" };
    let plain = match e {
        -1..=2 => {
            let v = if e >= 1 {
                d * 10f64.powi(e - 1)
            } else {
                d / 10f64.powi(1 - e)
            };
            format!("{sign}{v}")
        }
        _ => String::new(),
    };
    if !plain.is_empty() && plain.len() <= 3 && !plain.contains('.') {
        return plain;
    }
    let mantissa = if d % 10.0 == 0.0 {
        format!("{}", d / 10.0)
    } else {
        format!("{:.1}", d / 10.0)
    };
    format!("{sign}{mantissa}e{e}")
}
