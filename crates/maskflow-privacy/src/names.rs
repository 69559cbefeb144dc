//! Which column and sheet names are values: a header `John Smith` in a
//! pivot with a column per employee, a sheet named after a customer
//! (`Acme Corp`, `Smith, J.`), a header that is an e-mail address, a date,
//! an ID or a number. Such a name is masked in the extract that is sent and
//! indexed by the guard as a value (issue #26, break 9). A name made of the
//! language's words or written as an identifier (`order_id`, `Amount`,
//! `Customer Name`, `2023 Sales`, `unitPrice`) is structure and is kept.
//!
//! The categories are the guard's own: person and organisation names,
//! rare words (not among the common words of [`super::words`]), e-mail
//! addresses, dates with a day, phone numbers, numbers and IDs of at least
//! [`super::keys::MIN_DIGITS`] digits (a year alone is not one).

use std::collections::HashMap;
use std::sync::OnceLock;

use super::keys::{MIN_DIGITS, email_spans, token_hash};
use super::words::is_common;

const GIVEN_NAMES: &str = include_str!("data/given_names.txt");
const SURNAMES: &str = include_str!("data/surnames.txt");

/// Why a name was taken for a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameKind {
    /// `jane.doe@acme.com`
    Email,
    /// `2024-03-01`, `01/03/2024`, `1 March 2024`
    Date,
    /// `+1 555-123-4567`
    Phone,
    /// `123456`, `1,250.00`
    Number,
    /// `INV-00123`, `EMP1042`
    Id,
    /// `John Smith`, `Smith, J.`, `Alice`
    Person,
    /// `Acme Corp`, `Globex Ltd.`
    Organisation,
    /// A capitalised word that is not among the language's common words
    /// (`Okonkwo`, `Zebulon`): names, brands, codes.
    RareWord,
}

impl NameKind {
    /// The reason shown to the user, as a phrase ("looks like …").
    pub fn reason(self) -> &'static str {
        match self {
            Self::Email => "looks like an e-mail address",
            Self::Date => "looks like a date",
            Self::Phone => "looks like a phone number",
            Self::Number => "looks like a number from the data",
            Self::Id => "looks like an ID",
            Self::Person => "looks like a person's name",
            Self::Organisation => "looks like a company's name",
            Self::RareWord => "has a word that is not common language (a name?)",
        }
    }
}

/// Whether a name from the lists is also a word of the language (`rose`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Entry {
    Name,
    AlsoWord,
}

struct People {
    given: HashMap<&'static str, Entry>,
    surnames: HashMap<&'static str, Entry>,
}

fn load(list: &'static str) -> HashMap<&'static str, Entry> {
    list.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| match l.strip_suffix('*') {
            Some(word) => (word, Entry::AlsoWord),
            None => (l, Entry::Name),
        })
        .collect()
}

fn people() -> &'static People {
    static PEOPLE: OnceLock<People> = OnceLock::new();
    PEOPLE.get_or_init(|| People {
        given: load(GIVEN_NAMES),
        surnames: load(SURNAMES),
    })
}

/// Words of column names that are also names (`Price`, `Page`): a name
/// beside one is a column's subject, not a person (`Mark Price`).
const HEADER_WORDS: &[&str] = &[
    "price", "cost", "rate", "total", "amount", "date", "day", "days", "page", "bank", "banks",
    "long", "short", "cash", "stock", "bill", "bills", "grant", "grants", "hall", "lane", "hill",
    "wood", "house", "case", "cross", "best", "booth", "ward", "miles", "mills", "field", "fields",
    "street", "rank", "key", "weeks", "good", "branch", "church", "park", "powers", "small",
    "strong", "little", "key", "bond", "gross", "sharp", "marks", "summers", "winters",
];

/// Legal-form words that end a company's name.
const COMPANY_SUFFIXES: &[&str] = &[
    "inc",
    "corp",
    "corporation",
    "ltd",
    "llc",
    "llp",
    "gmbh",
    "plc",
    "ag",
    "sa",
    "sas",
    "co",
    "company",
    "limited",
    "bv",
    "nv",
    "oy",
    "ab",
    "srl",
    "spa",
    "pty",
    "kg",
    "sarl",
];

/// Longest name (in characters) looked at for words; longer ones are
/// sentences, checked only for e-mail addresses, dates and IDs.
const MAX_NAME_CHARS: usize = 80;

/// Whether `name` (a column or sheet name) is a value, and of which kind.
pub fn classify(name: &str) -> Option<NameKind> {
    let name = name.trim();
    if name.is_empty() {
        return None;
    }
    if !email_spans(name).is_empty() {
        return Some(NameKind::Email);
    }
    if let Some(kind) = numeric(name) {
        return Some(kind);
    }
    let words: Vec<&str> = name.split_whitespace().collect();
    if words.iter().any(|w| is_date(w)) || month_name_date(&words) {
        return Some(NameKind::Date);
    }
    if let Some(kind) = words.iter().find_map(|w| id_like(w, words.len() > 1)) {
        return Some(kind);
    }
    if name.chars().count() > MAX_NAME_CHARS || is_identifier(name) {
        return None;
    }
    wordy(&words)
}

/// Whether a cell reads as a person's name: 2 to 4 capitalised words, the
/// first a given name (`Grace Hopper`, `Ada Q. Lovelace`), or a name
/// [`classify`] takes for a person. Used to profile a column (issue #38): a
/// column of such cells identifies however often each repeats.
pub(crate) fn person_like(cell: &str) -> bool {
    let words: Vec<&str> = cell.split_whitespace().collect();
    if !(2..=4).contains(&words.len()) || !words.iter().all(|w| capitalised(w)) {
        return false;
    }
    let first = words[0]
        .trim_matches(|c: char| !c.is_alphanumeric())
        .to_lowercase();
    people().given.contains_key(first.as_str())
}

/// A name that is a number as a whole: digits with separators.
fn numeric(name: &str) -> Option<NameKind> {
    let numberish = name
        .chars()
        .all(|c| c.is_ascii_digit() || " -.,/+()'".contains(c));
    let digits = name.chars().filter(char::is_ascii_digit).count();
    if !numberish || digits < MIN_DIGITS {
        return None;
    }
    if is_date(name) {
        return Some(NameKind::Date);
    }
    let groups: Vec<&str> = name
        .split(|c: char| !c.is_ascii_digit())
        .filter(|g| !g.is_empty())
        .collect();
    // A year, or a period of years and months (`2023`, `2023-24`, `03/2024`).
    if groups.iter().all(|g| is_year(g) || g.len() <= 2) {
        return None;
    }
    let separated = name.contains([' ', '-', '(', '+']);
    if digits >= 7 && separated {
        Some(NameKind::Phone)
    } else {
        Some(NameKind::Number)
    }
}

fn is_year(g: &str) -> bool {
    g.len() == 4 && g.parse::<u32>().is_ok_and(|y| (1900..=2099).contains(&y))
}

/// A date with a day: `2024-03-01`, `01/03/2024`, `1.3.24`, `20240301`.
fn is_date(word: &str) -> bool {
    let word = word.trim_matches(|c: char| !c.is_ascii_alphanumeric());
    let groups: Vec<&str> = word.split(['-', '/', '.']).collect();
    let num = |g: &str| {
        g.parse::<u32>()
            .ok()
            .filter(|_| g.bytes().all(|b| b.is_ascii_digit()))
    };
    if groups.len() == 1 && word.len() == 8 {
        let (y, m, d) = (num(&word[..4]), num(&word[4..6]), num(&word[6..]));
        return matches!((y, m, d), (Some(y), Some(m), Some(d))
            if (1900..=2099).contains(&y) && (1..=12).contains(&m) && (1..=31).contains(&d));
    }
    if groups.len() != 3 || groups.iter().any(|g| num(g).is_none() || g.len() > 4) {
        return false;
    }
    let [a, b, c] = [groups[0], groups[1], groups[2]].map(|g| num(g).unwrap_or(0));
    let day_month = |d: u32, m: u32| (1..=31).contains(&d) && (1..=12).contains(&m);
    if groups[0].len() == 4 {
        return day_month(c, b);
    }
    (groups[2].len() == 4 || groups[2].len() == 2) && (day_month(a, b) || day_month(b, a))
}

const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];

fn is_month(word: &str) -> bool {
    let w = word.trim_end_matches([',', '.']).to_ascii_lowercase();
    w.len() >= 3
        && MONTHS.iter().any(|m| w.starts_with(m))
        && w.chars().all(|c| c.is_ascii_alphabetic())
}

/// `1 March 2024`, `March 1, 2024`, `Mar 1`: a month's name beside a day.
fn month_name_date(words: &[&str]) -> bool {
    let day = |w: &str| {
        let w = w.trim_end_matches([',', '.']);
        let w = ["st", "nd", "rd", "th"]
            .iter()
            .find_map(|e| w.strip_suffix(e))
            .unwrap_or(w);
        !w.is_empty() && w.len() <= 2 && w.parse::<u32>().is_ok_and(|d| (1..=31).contains(&d))
    };
    words
        .windows(2)
        .any(|p| (is_month(p[0]) && day(p[1])) || (day(p[0]) && is_month(p[1])))
}

/// A word with an identifying number: `INV-00123`, `EMP1042`, or a long
/// number beside words (`Account 12345678`). A year is no ID (`FY2024`).
fn id_like(word: &str, among_words: bool) -> Option<NameKind> {
    let runs: Vec<&str> = word
        .split(|c: char| !c.is_ascii_digit())
        .filter(|r| !r.is_empty())
        .collect();
    let letters = word.chars().any(char::is_alphabetic);
    let long = runs.iter().any(|r| r.len() >= MIN_DIGITS && !is_year(r));
    if letters && long {
        return Some(NameKind::Id);
    }
    let digits: usize = runs.iter().map(|r| r.len()).sum();
    (!letters && among_words && long && digits > MIN_DIGITS).then_some(NameKind::Number)
}

/// `order_id`, `unitPrice`, `amount`: written as a program's name, not
/// as a person writes a name.
fn is_identifier(name: &str) -> bool {
    if name.contains(char::is_whitespace) {
        return false;
    }
    if name.contains('_') || !name.chars().any(char::is_uppercase) {
        return true;
    }
    // camelCase: a capital after a lowercase letter.
    name.chars()
        .zip(name.chars().skip(1))
        .any(|(a, b)| a.is_lowercase() && b.is_uppercase())
}

/// A word as written: `Smith`, `SMITH` (a capital first).
fn capitalised(word: &str) -> bool {
    word.chars().next().is_some_and(char::is_uppercase)
}

/// An initial: `J.` or `J` (one capital letter).
fn initial(word: &str) -> bool {
    let w = word.trim_end_matches([',', '.']);
    w.chars().count() == 1 && w.chars().all(char::is_uppercase)
}

/// Person and company names and rare words, from the words of a name.
fn wordy(words: &[&str]) -> Option<NameKind> {
    let clean: Vec<String> = words
        .iter()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase()
        })
        .collect();
    let caps: Vec<bool> = words.iter().map(|w| capitalised(w)).collect();
    let people = people();
    let header_word = clean.iter().any(|w| HEADER_WORDS.contains(&w.as_str()));
    let last = clean.last().map(String::as_str).unwrap_or("");
    if words.len() >= 2 && caps[0] && COMPANY_SUFFIXES.contains(&last) {
        return Some(NameKind::Organisation);
    }
    // A name that is not also a word: `Alice`, `Okafor`, `Alice Sales`
    // (not beside a column's subject: `Johnson Price`).
    let named = |w: &str, map: &HashMap<&str, Entry>| map.get(w) == Some(&Entry::Name);
    let pure = clean
        .iter()
        .zip(&caps)
        .any(|(w, &c)| c && (named(w, &people.given) || named(w, &people.surnames)));
    if pure && !header_word {
        return Some(NameKind::Person);
    }
    let known = |w: &str| people.given.contains_key(w) || people.surnames.contains_key(w);
    if words.len() <= 4 && !header_word && caps.iter().all(|&c| c) {
        // `John Smith`, `Smith, John`, `J. Smith`, `Smith, J.`
        let (first, given, surname) = (clean[0].as_str(), &people.given, &people.surnames);
        let first_last = words.len() >= 2
            && ((given.contains_key(first) && surname.contains_key(last))
                || (words[0].ends_with(',')
                    && surname.contains_key(first)
                    && given.contains_key(last)));
        let with_initial = words.len() >= 2
            && words.iter().any(|w| initial(w))
            && clean
                .iter()
                .zip(words)
                .any(|(c, w)| !initial(w) && (known(c) || rare(c)));
        if first_last || with_initial {
            return Some(NameKind::Person);
        }
    }
    if words.len() <= 4
        && words
            .iter()
            .zip(&clean)
            .any(|(w, c)| capitalised(w) && w.chars().skip(1).all(char::is_lowercase) && rare(c))
    {
        return Some(NameKind::RareWord);
    }
    None
}

/// A word of letters, at least 4 long, that is not a common word, nor a
/// common word with an ending (`Actuals`), nor two of them (`Subtotal`,
/// `Timestamp`, `Headcount`).
fn rare(word: &str) -> bool {
    if word.chars().count() < 4 || !word.chars().all(char::is_alphabetic) {
        return false;
    }
    let common = |w: &str| w.len() >= 3 && is_common(token_hash(w));
    if common(word) || super::words::abbreviates_common(word) {
        return false;
    }
    for ending in ["s", "es", "ed", "ing", "er"] {
        if word.strip_suffix(ending).is_some_and(common) {
            return false;
        }
    }
    let compound = word
        .char_indices()
        .skip(1)
        .any(|(i, _)| common(&word[..i]) && common(&word[i..]));
    !compound
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_flagged_with_their_kind() {
        let cases = [
            ("John Smith", NameKind::Person),
            ("Maria Garcia", NameKind::Person),
            ("Smith, J.", NameKind::Person),
            ("J. Smith", NameKind::Person),
            ("Smith, John", NameKind::Person),
            ("SMITH, JOHN", NameKind::Person),
            ("Alice", NameKind::Person),
            ("Gonzalez", NameKind::Person),
            ("Nguyen Sales", NameKind::Person),
            ("Acme Corp", NameKind::Organisation),
            ("Globex Ltd.", NameKind::Organisation),
            ("Okonkwo", NameKind::RareWord),
            ("Acme", NameKind::RareWord),
            ("jane.doe@acme.com", NameKind::Email),
            ("2024-03-01", NameKind::Date),
            ("01/03/2024", NameKind::Date),
            ("3.1.24", NameKind::Date),
            ("1 March 2024", NameKind::Date),
            ("March 1, 2024", NameKind::Date),
            ("Sales 2024-03-01", NameKind::Date),
            ("+1 555-123-4567", NameKind::Phone),
            ("123456", NameKind::Number),
            ("1,250.75", NameKind::Number),
            ("INV-00123", NameKind::Id),
            ("EMP1042", NameKind::Id),
            ("Account 12345678", NameKind::Number),
        ];
        let wrong: Vec<_> = cases
            .iter()
            .filter(|(name, kind)| classify(name) != Some(*kind))
            .map(|(name, _)| (name, classify(name)))
            .collect();
        assert!(wrong.is_empty(), "{wrong:?}");
    }

    #[test]
    fn ordinary_headers_are_structure() {
        let names = [
            // Abbreviations of headers (issue #38 point 6).
            "Eng Displ",
            "Trans Desc",
            "Carline Class Desc",
            "order_id",
            "Amount",
            "Customer Name",
            "Date",
            "2023 Sales",
            "Sales 2023",
            "2023",
            "2023-24",
            "FY2024",
            "Q1 2024",
            "03/2024",
            "March 2024",
            "unitPrice",
            "customer_email",
            "Email",
            "Phone Number",
            "Subtotal",
            "Timestamp",
            "Postcode",
            "Headcount",
            "Actuals",
            "SKU",
            "Qty",
            "EBITDA",
            "Mark Price",
            "Grant Amount",
            "Brown",
            "Rose",
            "Bill To",
            "Ship To Address",
            "Unit Price (EUR)",
            "Address Line 2",
            "Total Revenue",
            "Sheet1",
            "Summary",
            "Employees",
            "Price",
            "First Name",
            "Last Name",
            "Order Date",
            "Invoice No.",
            "Region",
            "Notes",
            "column_1",
        ];
        let flagged: Vec<_> = names
            .iter()
            .filter_map(|name| classify(name).map(|k| (name, k)))
            .collect();
        assert!(flagged.is_empty(), "{flagged:?}");
    }
}
