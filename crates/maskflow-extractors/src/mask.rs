//! The one masking function: every letter becomes `A` or `a`, every digit `#`.
//!
//! Used for every sample value, text preview, heading, OCR text and error
//! output that could ever reach an LLM. Punctuation, symbols and whitespace
//! are kept so the LLM still sees the *shape* of a value.

/// Masks one value: uppercase letter → `A`, any other letter (lowercase, or a
/// letter with no case such as CJK, Arabic, Hebrew or Thai) → `a`, any digit
/// of any script → `#`; everything else is kept.
///
/// The result has the same number of characters and contains no alphanumeric
/// character other than `A` and `a`.
pub fn mask(value: &str) -> String {
    value.chars().map(mask_char).collect()
}

/// Masks one character (see [`mask`]).
pub fn mask_char(c: char) -> char {
    if c.is_ascii() {
        return match c {
            'A'..='Z' => 'A',
            'a'..='z' => 'a',
            '0'..='9' => '#',
            _ => c,
        };
    }
    if c.is_uppercase() {
        'A'
    } else if c.is_alphabetic() {
        // Lowercase, titlecase-less scripts and letters with no case.
        'a'
    } else if c.is_numeric() {
        '#'
    } else {
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn seed_examples_hold_exactly() {
        assert_eq!(mask("PROD-194211"), "AAAA-######");
        assert_eq!(mask("John Smith"), "Aaaa Aaaaa");
        assert_eq!(mask("john.smith@acme.com"), "aaaa.aaaaa@aaaa.aaa");
        assert_eq!(mask("2024-01-15"), "####-##-##");
        assert_eq!(mask("$1,234.56"), "$#,###.##");
    }

    #[test]
    fn unicode_letters_and_digits_of_any_script() {
        assert_eq!(mask("Élodie Жуков"), "Aaaaaa Aaaaa");
        assert_eq!(mask("東京"), "aa");
        assert_eq!(mask("مرحبا"), "aaaaa");
        assert_eq!(mask("שלום"), "aaaa");
        assert_eq!(
            mask("สวัสดี")
                .chars()
                .filter(|c| c.is_alphanumeric() && *c != 'a')
                .count(),
            0
        );
        assert_eq!(mask("٣٤٥"), "###"); // Arabic-Indic digits
        assert_eq!(mask("१२३"), "###"); // Devanagari digits
        assert_eq!(mask("１２Ａｂ"), "##Aa"); // full-width forms
        assert_eq!(mask("€ 12 — ok!"), "€ ## — aa!");
    }

    proptest! {
        #[test]
        fn keeps_the_character_count(s in any::<String>()) {
            prop_assert_eq!(mask(&s).chars().count(), s.chars().count());
        }

        #[test]
        fn is_idempotent(s in any::<String>()) {
            let once = mask(&s);
            prop_assert_eq!(mask(&once), once);
        }

        #[test]
        fn no_letter_or_digit_survives(s in any::<String>()) {
            for c in mask(&s).chars() {
                prop_assert!(!c.is_alphanumeric() || c == 'A' || c == 'a', "{c:?} survived");
            }
        }

        #[test]
        fn keeps_everything_that_is_not_alphanumeric(s in any::<String>()) {
            for (a, b) in s.chars().zip(mask(&s).chars()) {
                if !a.is_alphanumeric() {
                    prop_assert_eq!(a, b);
                }
            }
        }
    }
}
