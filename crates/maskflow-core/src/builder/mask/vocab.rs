//! The closed lists the repair feedback's grammar is built from: Python's
//! built-in exception classes, the fixed wording of Python's (and pandas')
//! own error messages as templates with `{}` slots, and the few names a
//! slot may show as they are (type names, codecs, the run folder's layout).
//! Nothing here comes from a script or its output.

/// Python's built-in exception classes (3.9 – 3.13).
pub const BUILTIN_EXCEPTIONS: &[&str] = &[
    "ArithmeticError",
    "AssertionError",
    "AttributeError",
    "BaseException",
    "BaseExceptionGroup",
    "BlockingIOError",
    "BrokenPipeError",
    "BufferError",
    "BytesWarning",
    "ChildProcessError",
    "ConnectionAbortedError",
    "ConnectionError",
    "ConnectionRefusedError",
    "ConnectionResetError",
    "DeprecationWarning",
    "EOFError",
    "EncodingWarning",
    "EnvironmentError",
    "Exception",
    "ExceptionGroup",
    "FileExistsError",
    "FileNotFoundError",
    "FloatingPointError",
    "FutureWarning",
    "GeneratorExit",
    "IOError",
    "ImportError",
    "ImportWarning",
    "IndentationError",
    "IndexError",
    "InterruptedError",
    "IsADirectoryError",
    "KeyError",
    "KeyboardInterrupt",
    "LookupError",
    "MemoryError",
    "ModuleNotFoundError",
    "NameError",
    "NotADirectoryError",
    "NotImplementedError",
    "OSError",
    "OverflowError",
    "PendingDeprecationWarning",
    "PermissionError",
    "ProcessLookupError",
    "PythonFinalizationError",
    "RecursionError",
    "ReferenceError",
    "ResourceWarning",
    "RuntimeError",
    "RuntimeWarning",
    "StopAsyncIteration",
    "StopIteration",
    "SyntaxError",
    "SyntaxWarning",
    "SystemError",
    "SystemExit",
    "TabError",
    "TimeoutError",
    "TypeError",
    "UnboundLocalError",
    "UnicodeDecodeError",
    "UnicodeEncodeError",
    "UnicodeError",
    "UnicodeTranslateError",
    "UnicodeWarning",
    "UserWarning",
    "ValueError",
    "Warning",
    "ZeroDivisionError",
];

/// The fixed wording of Python's and pandas' messages; `{}` is a variable
/// part. Tried in order: the more specific wording first.
pub const TEMPLATES: &[&str] = &[
    // NameError, UnboundLocalError
    "name {} is not defined. Did you mean: {}?",
    "name {} is not defined",
    "cannot access local variable {} where it is not associated with a value",
    "local variable {} referenced before assignment",
    "free variable {} referenced before assignment in enclosing scope",
    // AttributeError
    "{} object has no attribute {}. Did you mean: {}?",
    "{} object has no attribute {}",
    "module {} has no attribute {}. Did you mean: {}?",
    "module {} has no attribute {}",
    "type object {} has no attribute {}",
    "Can only use .str accessor with string values!",
    "Can only use .dt accessor with datetimelike values",
    // TypeError
    "can only concatenate str (not {}) to str",
    "can only concatenate list (not {}) to list",
    "unsupported operand type(s) for {}: {} and {}",
    "{} object is not subscriptable",
    "{} object is not callable",
    "{} object is not iterable",
    "{} object does not support item assignment",
    "{} object cannot be interpreted as an integer",
    "unhashable type: {}",
    "{}() takes {} positional arguments but {} were given",
    "{}() takes {} positional argument but {} were given",
    "{}() got an unexpected keyword argument {}",
    "{}() missing {} required positional arguments: {}",
    "{}() missing {} required positional argument: {}",
    "{} not supported between instances of {} and {}",
    "expected str, bytes or os.PathLike object, not {}",
    "int() argument must be a string, a bytes-like object or a real number, not {}",
    "float() argument must be a string or a real number, not {}",
    "float() argument must be a string or a number, not {}",
    "strptime() argument 1 must be str, not {}",
    "must be real number, not {}",
    "sequence item {}: expected str instance, {} found",
    "bad operand type for unary {}: {}",
    "string indices must be integers, not {}",
    "string indices must be integers",
    "list indices must be integers or slices, not {}",
    "cannot unpack non-iterable {} object",
    "Object of type {} is not JSON serializable",
    "a bytes-like object is required, not {}",
    "write() argument must be str, not {}",
    // ValueError
    "could not convert string to float: {}",
    "invalid literal for int() with base 10: {}",
    "invalid literal for int() with base {}: {}",
    "time data {} does not match format {}",
    "time data {} doesn't match format {}, at position {}. {}",
    "unconverted data remains: {}",
    "not enough values to unpack (expected {}, got {})",
    "too many values to unpack (expected {})",
    "cannot convert float NaN to integer",
    "Cannot convert non-finite values (NA or inf) to integer",
    "math domain error",
    "day is out of range for month",
    "month must be in 1..12",
    "year {} is out of range",
    "Length mismatch: Expected axis has {} elements, new values have {} elements",
    "Length of values ({}) does not match length of index ({})",
    "cannot reindex on an axis with duplicate labels",
    "The truth value of a Series is ambiguous. Use a.empty, a.bool(), a.item(), a.any() or a.all().",
    "The truth value of a DataFrame is ambiguous. Use a.empty, a.bool(), a.item(), a.any() or a.all().",
    "The truth value of an array with more than one element is ambiguous. Use a.any() or a.all()",
    "Excel file format cannot be determined, you must specify an engine manually.",
    "Unknown format code {} for object of type {}",
    "Unable to parse string {} at position {}",
    "{} is not in list",
    "I/O operation on closed file.",
    "No objects to concatenate",
    "Worksheet named {} not found",
    "columns overlap but no suffix specified: {}",
    "Invalid file path or buffer object type: {}",
    // KeyError (pandas)
    "\"None of [Index([{}], dtype={})] are in the [columns]\"",
    "\"[{}] not in index\"",
    "\"[{}] not found in axis\"",
    "{} not found in axis",
    // OSError and its kin
    "[Errno 2] No such file or directory: {}",
    "[Errno 13] Permission denied: {}",
    "[Errno 21] Is a directory: {}",
    "[Errno 20] Not a directory: {}",
    "[Errno 30] Read-only file system: {}",
    "[Errno 17] File exists: {}",
    "[Errno 28] No space left on device",
    // ImportError
    "No module named {}",
    "cannot import name {} from {} ({})",
    "cannot import name {} from {}",
    "Missing optional dependency {}.  Use pip or conda to install {}.",
    // UnicodeError
    "{} codec can't decode byte {} in position {}: invalid start byte",
    "{} codec can't decode byte {} in position {}: invalid continuation byte",
    "{} codec can't decode bytes in position {}: unexpected end of data",
    "{} codec can't encode character {} in position {}: character maps to <undefined>",
    "{} codec can't encode characters in position {}: ordinal not in range(128)",
    "{} codec can't encode character {} in position {}: ordinal not in range(128)",
    // ZeroDivisionError, IndexError, RecursionError
    "division by zero",
    "float division by zero",
    "integer division or modulo by zero",
    "integer modulo by zero",
    "list index out of range",
    "string index out of range",
    "tuple index out of range",
    "list assignment index out of range",
    "pop from empty list",
    "index {} is out of bounds for axis {} with size {}",
    "single positional indexer is out-of-bounds",
    "maximum recursion depth exceeded while calling a Python object",
    "maximum recursion depth exceeded",
    // SyntaxError, IndentationError
    "invalid syntax. Perhaps you forgot a comma?",
    "invalid syntax",
    "unexpected indent",
    "expected an indented block after function definition on line {}",
    "expected an indented block after {} statement on line {}",
    "expected an indented block",
    "unindent does not match any outer indentation level",
    "unterminated string literal (detected at line {})",
    "unterminated triple-quoted string literal (detected at line {})",
    "EOL while scanning string literal",
    "unexpected EOF while parsing",
    "expected ':'",
    "unmatched {}",
    "{} was never closed",
    "closing parenthesis {} does not match opening parenthesis {}",
    "invalid decimal literal",
    "'return' outside function",
    "inconsistent use of tabs and spaces in indentation",
    "Missing parentheses in call to 'print'. Did you mean print(...)?",
    // json.JSONDecodeError
    "Expecting value: line {} column {} (char {})",
    "Extra data: line {} column {} (char {})",
    "Expecting property name enclosed in double quotes: line {} column {} (char {})",
    "Unterminated string starting at: line {} column {} (char {})",
    // pandas' ParserError and EmptyDataError
    "Error tokenizing data. C error: Expected {} fields in line {}, saw {}",
    "No columns to parse from file",
    "Usecols do not match columns, columns expected but not found: {}",
    "Missing column provided to 'parse_dates': {}",
];

/// Names a variable part may show as they are: Python's and pandas' type
/// names, codecs and operators (a closed list: choosing one of them is the
/// only thing a script controls).
pub const KNOWN_NAMES: &[&str] = &[
    "str",
    "int",
    "float",
    "bool",
    "bytes",
    "bytearray",
    "list",
    "dict",
    "tuple",
    "set",
    "frozenset",
    "complex",
    "NoneType",
    "object",
    "type",
    "function",
    "method",
    "builtin_function_or_method",
    "module",
    "generator",
    "range",
    "slice",
    "DataFrame",
    "Series",
    "Index",
    "RangeIndex",
    "MultiIndex",
    "DatetimeIndex",
    "Timestamp",
    "Timedelta",
    "NaTType",
    "datetime",
    "datetime.datetime",
    "date",
    "datetime.date",
    "time",
    "timedelta",
    "Decimal",
    "ndarray",
    "numpy.ndarray",
    "int64",
    "float64",
    "DataFrameGroupBy",
    "SeriesGroupBy",
    "Workbook",
    "Worksheet",
    "Cell",
    "PosixPath",
    "TextIOWrapper",
    "utf-8",
    "ascii",
    "charmap",
    "latin-1",
    "cp1252",
    "utf-16",
    "if",
    "for",
    "while",
    "with",
    "try",
    "else",
    "elif",
];

/// Phrases of Python's wording that pass the masker as Python wrote them
/// wherever they stand (a script that catches an error and prints it, a
/// message no template matches): every fixed piece of [`TEMPLATES`] with
/// at least two words, longest first. A closed list, so a phrase is one
/// choice among them (see `Masker::mask` for what it costs).
pub fn phrases() -> &'static [String] {
    static PHRASES: std::sync::LazyLock<Vec<String>> = std::sync::LazyLock::new(|| {
        let mut out: Vec<String> = TEMPLATES
            .iter()
            .flat_map(|t| t.split("{}"))
            .map(|p| p.trim().trim_start_matches(['.', ',', ':']).trim())
            .filter(|p| {
                p.split(|c: char| !c.is_ascii_alphabetic())
                    .filter(|w| w.len() >= 2)
                    .count()
                    >= 2
            })
            .map(str::to_owned)
            .collect();
        out.sort_by_key(|p| std::cmp::Reverse(p.len()));
        out.dedup();
        out
    });
    &PHRASES
}

/// The type names of [`KNOWN_NAMES`] that a masked text keeps when they
/// stand quoted, as Python quotes a type (`'DataFrame' object …`): the
/// capitalised ones, which no common lowercase word of the data is.
pub fn quoted_type(word: &str) -> bool {
    word.starts_with(|c: char| c.is_ascii_uppercase()) && KNOWN_NAMES.contains(&word)
}

/// Words of the run folder's own layout, kept wherever they stand as a
/// whole token inside a masked variable part (`./inputs/aaaa/aaaa.csv`).
pub const LAYOUT_WORDS: &[&str] = &[
    "inputs", "outputs", "tmp", "home", "script", "py", "json", "csv", "tsv", "txt", "xlsx", "xls",
    "xlsm", "pdf", "docx", "parquet",
];

/// The variable parts of `message` when it has `template`'s wording.
pub fn match_template<'m>(template: &str, message: &'m str) -> Option<Vec<&'m str>> {
    let pieces: Vec<&str> = template.split("{}").collect();
    let (first, rest) = pieces.split_first()?;
    let mut remaining = message.strip_prefix(first)?;
    if rest.is_empty() {
        return remaining.is_empty().then(Vec::new);
    }
    let mut slots = Vec::with_capacity(rest.len());
    for (i, piece) in rest.iter().enumerate() {
        let last = i + 1 == rest.len();
        let slot = if last {
            let slot = remaining.strip_suffix(piece)?;
            remaining = "";
            slot
        } else if piece.is_empty() {
            return None;
        } else {
            // A slot is never empty: look for the piece after its first character.
            let skip = remaining.chars().next()?.len_utf8();
            let at = remaining[skip..].find(piece)? + skip;
            let slot = &remaining[..at];
            remaining = &remaining[at + piece.len()..];
            slot
        };
        if slot.is_empty() {
            return None;
        }
        slots.push(slot);
    }
    Some(slots)
}

/// The first template `message` has the wording of, with its slots.
pub fn find_template(message: &str) -> Option<(&'static str, Vec<&str>)> {
    TEMPLATES
        .iter()
        .find_map(|t| match_template(t, message).map(|slots| (*t, slots)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_template_gives_its_slots_and_only_its_wording_matches() {
        assert_eq!(
            match_template("name {} is not defined", "name 'x' is not defined"),
            Some(vec!["'x'"])
        );
        assert_eq!(
            match_template(
                "{} object has no attribute {}",
                "'A' object has no attribute 'b'"
            ),
            Some(vec!["'A'", "'b'"])
        );
        assert_eq!(
            match_template("division by zero", "division by zero"),
            Some(vec![])
        );
        assert_eq!(
            match_template("division by zero", "division by zero!"),
            None
        );
        assert_eq!(
            match_template("name {} is not defined", "name  is not defined"),
            None
        );
        assert_eq!(match_template("No module named {}", "No module"), None);
        let (t, slots) =
            find_template("name 'pd' is not defined. Did you mean: 'id'?").expect("known wording");
        assert_eq!(t, "name {} is not defined. Did you mean: {}?");
        assert_eq!(slots, vec!["'pd'", "'id'"]);
    }

    #[test]
    fn the_lists_have_no_duplicate_template() {
        let mut seen = std::collections::HashSet::new();
        for t in TEMPLATES {
            assert!(seen.insert(t), "{t} twice");
        }
    }
}
