//! GPT-2's pre-tokenizer written out by hand, equal to the `regex` pattern of the `gpt2` preset
//! (bpe_studio/engine/config.py) on every input:
//!
//! `'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
//!
//! The character classes come from a table that Python builds with the `regex` module itself, so both
//! sides agree on every code point whatever Unicode version each has. The same table serves the cl100k
//! and o200k scanners (pretok_cl100k.rs, pretok_o200k.rs), which need letters split by case.

use std::cell::Cell;

use rustc_hash::FxHashMap;

/// Classes in the table (bpe_studio/engine/native.py builds it): anything else.
pub const OTHER: u8 = 0;
/// `\p{Lu}` and `\p{Lt}`: letters only o200k's upper-case class takes.
pub const UPPER: u8 = 1;
/// `\p{Ll}`: letters only o200k's lower-case class takes.
pub const LOWER: u8 = 2;
/// `\p{Lm}` and `\p{Lo}`: letters both of o200k's classes take (no case: CJK, say).
pub const CASELESS: u8 = 3;
/// `\p{M}`: marks; not letters for `\p{L}`, but in both of o200k's letter classes.
pub const MARK: u8 = 4;
/// `\p{N}`.
pub const NUMBER: u8 = 5;
/// `\s`.
pub const SPACE: u8 = 6;

/// True for `\p{L}`.
pub fn is_letter(class: u8) -> bool {
    matches!(class, UPPER | LOWER | CASELESS)
}

/// True for `[^\s\p{L}\p{N}]` (a mark is one).
pub const fn is_other(class: u8) -> bool {
    matches!(class, OTHER | MARK)
}

/// A set of classes that a run is made of, with its own slot in `Chars`'s memo of runs.
#[derive(Clone, Copy)]
pub struct Set {
    mask: u8,
    slot: usize,
}

impl Set {
    const fn new(classes: &[u8], slot: usize) -> Set {
        let mut mask = 0u8;
        let mut k = 0;
        while k < classes.len() {
            mask |= 1 << classes[k];
            k += 1;
        }
        Set { mask, slot }
    }

    /// True when `class` is in the set.
    pub fn has(self, class: u8) -> bool {
        self.mask & (1 << class) != 0
    }
}

/// `\p{L}`.
pub const LETTERS: Set = Set::new(&[UPPER, LOWER, CASELESS], 0);
/// `\p{N}`.
pub const NUMBERS: Set = Set::new(&[NUMBER], 1);
/// `[^\s\p{L}\p{N}]`.
pub const OTHERS: Set = Set::new(&[OTHER, MARK], 2);
/// `\s`.
pub const SPACES: Set = Set::new(&[SPACE], 3);
/// o200k's first letter class: `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`.
pub const U_LETTERS: Set = Set::new(&[UPPER, CASELESS, MARK], 4);
/// o200k's second letter class: `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`.
pub const W_LETTERS: Set = Set::new(&[LOWER, CASELESS, MARK], 5);
/// `[\p{L}\p{M}]` (Qwen 3.5's letters).
pub const LETTERS_AND_MARKS: Set = Set::new(&[UPPER, LOWER, CASELESS, MARK], 6);
/// `[^\s\p{L}\p{M}\p{N}]` (Qwen 3.5's punctuation).
pub const OTHERS_BUT_MARKS: Set = Set::new(&[OTHER], 7);
const SLOTS: usize = 8;

/// A text as code points with their classes and byte offsets, so that scanners look ahead freely.
///
/// Every look-ahead goes through `run` and `rfind`, which keep scanning linear in the text's length
/// whatever its shape: `run` remembers the last run it found of each set, so that asking again from
/// anywhere inside that run costs nothing (cl100k's `\p{N}{1,3}` asked for the digit run's end at every
/// group of three: quadratic on a long number). `steps` counts the characters they read, which tests
/// hold to a small multiple of the length (`pretokens_with_work`).
pub struct Chars<'a> {
    text: &'a str,
    offsets: Vec<usize>,
    pub chars: Vec<char>,
    cls: Vec<u8>,
    /// Per set, the last run found: (start, end). (1, 0) is no run.
    runs: [Cell<(usize, usize)>; SLOTS],
    steps: Cell<u64>,
}

impl<'a> Chars<'a> {
    /// Classifies `text`; Err with the first code point the table does not cover.
    pub fn new(text: &'a str, classes: &[u8]) -> Result<Self, u32> {
        let mut offsets: Vec<usize> = Vec::with_capacity(text.len() + 1);
        let mut chars: Vec<char> = Vec::with_capacity(text.len());
        let mut cls: Vec<u8> = Vec::with_capacity(text.len());
        for (offset, c) in text.char_indices() {
            let Some(&class) = classes.get(c as usize) else {
                return Err(c as u32);
            };
            offsets.push(offset);
            chars.push(c);
            // A class no scanner knows counts as OTHER: each scanner then advances on every character
            // whatever table it is given (with an unknown class, cl100k's looped on an empty pre-token).
            cls.push(if class > SPACE { OTHER } else { class });
        }
        offsets.push(text.len());
        let runs = std::array::from_fn(|_| Cell::new((1, 0)));
        Ok(Chars { text, offsets, chars, cls, runs, steps: Cell::new(0) })
    }

    /// Number of code points.
    pub fn len(&self) -> usize {
        self.chars.len()
    }

    /// True for the empty text.
    pub fn is_empty(&self) -> bool {
        self.chars.is_empty()
    }

    /// The class of code point `k`.
    pub fn class(&self, k: usize) -> u8 {
        self.cls[k]
    }

    /// The class of every code point, in order.
    pub fn classes(&self) -> &[u8] {
        &self.cls
    }

    /// The text of code points `a..b`.
    pub fn piece(&self, a: usize, b: usize) -> &'a str {
        &self.text[self.offsets[a]..self.offsets[b]]
    }

    /// The end of the run of code points from `start` whose class is in `set`. Amortised O(1) when asked
    /// again from inside the last run of the same set: every position in it has the same end.
    pub fn run(&self, start: usize, set: Set) -> usize {
        let (a, b) = self.runs[set.slot].get();
        if a <= start && start <= b {
            return b;
        }
        let mut end = start;
        while end < self.cls.len() && set.has(self.cls[end]) {
            end += 1;
        }
        self.steps.set(self.steps.get() + (end - start) as u64 + 1);
        self.runs[set.slot].set((start, end));
        end
    }

    /// The last `k` in `a..b` for which `test(char, class)` holds, reading from `b` backwards.
    pub fn rfind(&self, a: usize, b: usize, test: impl Fn(char, u8) -> bool) -> Option<usize> {
        let found = (a..b).rev().find(|&k| test(self.chars[k], self.cls[k]));
        self.steps.set(self.steps.get() + (b - found.map_or(a, |k| k)) as u64 + 1);
        found
    }

    /// The end of the run of code points from `start` that are one of `set` (`\r`, `\n`, ...).
    pub fn run_of_chars(&self, start: usize, set: &[char]) -> usize {
        let mut end = start;
        while end < self.chars.len() && set.contains(&self.chars[end]) {
            end += 1;
        }
        self.steps.set(self.steps.get() + (end - start) as u64 + 1);
        end
    }

    /// How many characters `run`, `rfind` and `run_of_chars` have read so far.
    pub fn steps(&self) -> u64 {
        self.steps.get()
    }
}

/// Length of `'(?i:[sdmt]|ll|ve|re)` at `i` (0 when none): the contractions of cl100k and o200k, in any
/// case. `regex` folds case simply, so `s` also matches the long s `ſ` (tests check every code point).
pub fn contraction_ci(chars: &[char], i: usize) -> usize {
    if chars.get(i) != Some(&'\'') {
        return 0;
    }
    let at = |k: usize| chars.get(i + k).map_or('\0', |c| c.to_ascii_lowercase());
    match (at(1), at(2)) {
        ('s' | 'ſ' | 'd' | 'm' | 't', _) => 2,
        ('l', 'l') | ('v', 'e') | ('r', 'e') => 3,
        _ => 0,
    }
}

/// Calls `emit` with each pre-token of `text` in order. Returns the first code point that the class
/// table does not cover (the caller extends the table and asks again), or None when done.
pub fn gpt2_pretokens<'a>(text: &'a str, classes: &[u8], mut emit: impl FnMut(&'a str)) -> Option<u32> {
    match gpt2_chars(text, classes) {
        Ok(text) => {
            gpt2_scan(&text, &mut emit);
            None
        }
        Err(code_point) => Some(code_point),
    }
}

/// `text` classified for gpt2, which knows letters, numbers, whitespace and the rest: one class for all
/// letters, marks are other.
fn gpt2_chars<'a>(text: &'a str, classes: &[u8]) -> Result<Chars<'a>, u32> {
    let mut text = Chars::new(text, classes)?;
    for class in text.cls.iter_mut() {
        *class = if is_letter(*class) {
            LOWER
        } else if *class == MARK {
            OTHER
        } else {
            *class
        };
    }
    Ok(text)
}

fn gpt2_scan<'a>(text: &Chars<'a>, emit: &mut dyn FnMut(&'a str)) {
    let (chars, n) = (&text.chars, text.len());
    let mut i = 0;
    while i < n {
        let c = chars[i];
        // '(?:[sdmt]|ll|ve|re): the first alternative wins, so "'sa" is "'s" then "a".
        if c == '\'' && i + 1 < n {
            let next = chars[i + 1];
            let after = if i + 2 < n { chars[i + 2] } else { '\0' };
            let len = match (next, after) {
                ('s' | 'd' | 'm' | 't', _) => 2,
                ('l', 'l') | ('v', 'e') | ('r', 'e') => 3,
                _ => 0,
            };
            if len > 0 {
                emit(text.piece(i, i + len));
                i += len;
                continue;
            }
        }
        // ` ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+`: an optional space, then a run of one class.
        let start = if c == ' ' && i + 1 < n && text.class(i + 1) != SPACE { i + 1 } else { i };
        let set = match text.class(start) {
            SPACE => None,
            NUMBER => Some(NUMBERS),
            OTHER => Some(OTHERS),
            _ => Some(LETTERS),
        };
        if let Some(set) = set {
            let end = text.run(start, set);
            emit(text.piece(i, end));
            i = end;
            continue;
        }
        // `\s+(?!\S)|\s+`: a whitespace run, but for its last character when a non-space follows (that
        // one starts the next pre-token, " word" say), unless the run is that one character.
        let mut end = text.run(i, SPACES);
        if end < n && end - i >= 2 {
            end -= 1;
        }
        emit(text.piece(i, end));
        i = end;
    }
}

/// A scanner: calls `emit` with each pre-token of a text in order; returns the first code point that
/// the class table does not cover (the caller extends the table and asks again), or None when done.
pub type Scanner = for<'a> fn(&'a str, &[u8], &mut dyn FnMut(&'a str)) -> Option<u32>;

/// The scanners by name: the presets, then the models' patterns that are a preset's with other parameters
/// (bpe_studio/engine/pretokenize/patterns.py maps each spelling of their patterns to these names).
pub const SCANNERS: [&str; 8] = ["gpt2", "cl100k", "o200k", "llama3", "qwen2", "qwen35", "nemo", "superbpe"];

/// The pre-tokens of `text` under a scanner (`SCANNERS`) and the characters it read to find them (see
/// `Chars`), for tests that hold the scanners linear on any shape of text; Err with the first code point
/// the table does not cover. Panics on a name that is not a scanner's.
pub fn pretokens_with_work<'a>(
    preset: &str,
    text: &'a str,
    classes: &[u8],
) -> Result<(Vec<&'a str>, u64), u32> {
    let Some(scan) = chars_scanner(preset) else {
        panic!("no native pre-tokenizer for {preset:?}");
    };
    let chars = scan.classify(text, classes)?;
    let mut pieces = Vec::new();
    (scan.scan)(&chars, &mut |piece: &'a str| pieces.push(piece));
    let steps = chars.steps();
    Ok((pieces, steps))
}

/// A scanner over a classified text: how it classifies (gpt2 folds its letters into one class and its
/// marks into the rest, `gpt2_chars`) and the scan itself. Counting a superword run's two splits in one
/// pass classifies each text once, for the stage-1 scanner, and runs both scans on it: the superword split
/// (pretok_superbpe.rs) reads only numbers, spaces and `is_other`, which gpt2's folding keeps as they are.
#[derive(Clone, Copy)]
pub struct CharsScanner {
    gpt2_classes: bool,
    /// The scan: calls `emit` with each pre-token of the classified text in order.
    pub scan: for<'a> fn(&Chars<'a>, &mut dyn FnMut(&'a str)),
}

impl CharsScanner {
    /// `text` classified as this scanner reads it; Err with the first code point the table does not cover.
    pub fn classify<'a>(&self, text: &'a str, classes: &[u8]) -> Result<Chars<'a>, u32> {
        if self.gpt2_classes {
            gpt2_chars(text, classes)
        } else {
            Chars::new(text, classes)
        }
    }
}

/// The scanner of a name in `SCANNERS` over classified texts, None for any other name.
pub fn chars_scanner(preset: &str) -> Option<CharsScanner> {
    use crate::pretok_cl100k::family_scan as cl100k;
    use crate::pretok_o200k::family_scan as o200k;
    let scan: for<'a> fn(&Chars<'a>, &mut dyn FnMut(&'a str)) = match preset {
        "gpt2" => gpt2_scan,
        "cl100k" => cl100k::<3, true, false>,
        "o200k" => o200k::<3, true>,
        "llama3" => cl100k::<3, false, false>,
        "qwen2" => cl100k::<1, false, false>,
        "qwen35" => cl100k::<1, false, true>,
        "nemo" => o200k::<1, false>,
        "superbpe" => crate::pretok_superbpe::superbpe_scan,
        _ => return None,
    };
    Some(CharsScanner { gpt2_classes: preset == "gpt2", scan })
}

/// The scanner of a name in `SCANNERS` (`gpt2`, `cl100k`, `llama3`, ..., and `superbpe`: the superword
/// split, pretok_superbpe.rs), None for any other name.
pub fn scanner(preset: &str) -> Option<Scanner> {
    fn gpt2<'a>(text: &'a str, classes: &[u8], emit: &mut dyn FnMut(&'a str)) -> Option<u32> {
        gpt2_pretokens(text, classes, emit)
    }
    use crate::pretok_cl100k::family_pretokens as cl100k;
    use crate::pretok_o200k::family_pretokens as o200k;
    match preset {
        "gpt2" => Some(gpt2),
        "cl100k" => Some(crate::pretok_cl100k::cl100k_pretokens),
        "o200k" => Some(crate::pretok_o200k::o200k_pretokens),
        "llama3" => Some(cl100k::<3, false, false>),
        "qwen2" => Some(cl100k::<1, false, false>),
        "qwen35" => Some(cl100k::<1, false, true>),
        "nemo" => Some(o200k::<1, false>),
        "superbpe" => Some(crate::pretok_superbpe::superbpe_pretokens),
        _ => None,
    }
}

/// Counts the pre-tokens of every text: (pre-token -> count, number of pre-tokens), or the first code
/// point the class table does not cover.
pub fn count<'a>(
    texts: &[&'a str],
    classes: &[u8],
    scan: Scanner,
) -> Result<(FxHashMap<&'a str, u64>, u64), u32> {
    let mut counts: FxHashMap<&'a str, u64> = FxHashMap::default();
    let mut total = 0u64;
    for text in texts {
        let missing = scan(text, classes, &mut |token| {
            *counts.entry(token).or_insert(0) += 1;
            total += 1;
        });
        if let Some(cp) = missing {
            return Err(cp);
        }
    }
    Ok((counts, total))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{classes, pieces};

    // The scanners that cut at spaces (all but `superbpe`, whose words run on across them).
    const PRESETS: [&str; 7] = ["gpt2", "cl100k", "o200k", "llama3", "qwen2", "qwen35", "nemo"];

    #[test]
    fn gpt2_contractions_are_lower_case_only_and_the_first_alternative_wins() {
        assert_eq!(
            pieces("gpt2", "I'm they're we've he'll she'd it's don't 'S 'LL 'Re"),
            [
                "I", "'m", " they", "'re", " we", "'ve", " he", "'ll", " she", "'d", " it", "'s", " don",
                "'t", " '", "S", " '", "LL", " '", "Re"
            ]
        );
        assert_eq!(pieces("gpt2", "DON'T I'M"), ["DON", "'", "T", " I", "'", "M"]);
        // "'sa" is "'s" then "a"; the long s is no contraction for gpt2 (case-sensitive).
        assert_eq!(pieces("gpt2", "it's'sa"), ["it", "'s", "'s", "a"]);
        assert_eq!(pieces("gpt2", "'ſ 'ſt"), ["'", "ſ", " '", "ſt"]);
    }

    #[test]
    fn gpt2_numbers_are_one_run_with_the_space_before_them() {
        assert_eq!(pieces("gpt2", "1234567 12 x1234"), ["1234567", " 12", " x", "1234"]);
        assert_eq!(pieces("gpt2", "١٢٣٤ ½"), ["١٢٣٤", " ½"]);
    }

    #[test]
    fn gpt2_a_whitespace_run_gives_its_last_space_to_the_next_word() {
        assert_eq!(pieces("gpt2", "a   b\n\n  c  "), ["a", "  ", " b", "\n\n ", " c", "  "]);
        // Only a space (not a newline or a tab) joins the word after it; a run at the end stays whole.
        assert_eq!(
            pieces("gpt2", "\tword 'x ,y  !? \r\n\r\nz"),
            ["\t", "word", " '", "x", " ,", "y", " ", " !?", " \r\n\r", "\n", "z"]
        );
        assert_eq!(pieces("gpt2", "x \n\n  "), ["x", " \n\n  "]);
        assert_eq!(pieces("gpt2", "a\u{a0}b \u{3000}c"), ["a", "\u{a0}", "b", " ", "\u{3000}", "c"]);
    }

    #[test]
    fn gpt2_letters_are_any_script_and_marks_are_punctuation() {
        assert_eq!(
            pieces("gpt2", "naïve café 日本語 ǅx Áb\u{301}c"),
            ["naïve", " café", " 日本語", " ǅx", " Áb", "\u{301}", "c"]
        );
        assert_eq!(pieces("gpt2", "e\u{301} \u{301}a ."), ["e", "\u{301}", " \u{301}", "a", " ."]);
        assert_eq!(
            pieces("gpt2", "x!!\n\ny a/b//\n"),
            ["x", "!!", "\n", "\n", "y", " a", "/", "b", "//", "\n"]
        );
    }

    #[test]
    fn an_empty_text_has_no_pre_token_in_any_preset() {
        for preset in PRESETS {
            assert!(pieces(preset, "").is_empty(), "{preset}");
        }
    }

    #[test]
    fn a_code_point_beyond_the_table_is_named_before_any_pre_token() {
        for preset in PRESETS {
            let scan = scanner(preset).unwrap();
            let mut seen = Vec::new();
            assert_eq!(scan("ab cd é", &classes()[..128], &mut |p| seen.push(p)), Some(0xe9), "{preset}");
            assert!(seen.is_empty(), "{preset}: {seen:?}");
            assert_eq!(scan("日本 😀", classes(), &mut |p| seen.push(p)), Some(0x1f600), "{preset}");
            assert!(seen.is_empty(), "{preset}: {seen:?}");
            // The count too is all or nothing.
            assert_eq!(count(&["ab", "x é"], &classes()[..128], scan), Err(0xe9), "{preset}");
        }
    }

    #[test]
    fn a_class_no_scanner_knows_counts_as_punctuation() {
        // A damaged table (class 9 for "!"): every scanner still advances and cuts the whole text.
        let mut table = classes()[..128].to_vec();
        table[b'!' as usize] = 9;
        for preset in PRESETS {
            let mut seen = Vec::new();
            assert_eq!(scanner(preset).unwrap()("a !! b!", &table, &mut |p| seen.push(p)), None);
            assert_eq!(seen, ["a", " !!", " b", "!"], "{preset}");
        }
    }

    #[test]
    fn only_the_named_scanners_exist() {
        assert!(SCANNERS.iter().all(|p| scanner(p).is_some()));
        assert!(scanner("r50k").is_none() && scanner("GPT2").is_none() && scanner("").is_none());
    }

    #[test]
    fn contractions_of_cl100k_and_o200k_ignore_case_and_take_the_long_s() {
        let chars = |s: &str| s.chars().collect::<Vec<_>>();
        assert_eq!(contraction_ci(&chars("'S"), 0), 2);
        assert_eq!(contraction_ci(&chars("'ſ"), 0), 2);
        assert_eq!(contraction_ci(&chars("'LL"), 0), 3);
        assert_eq!(contraction_ci(&chars("'vE"), 0), 3);
        assert_eq!(contraction_ci(&chars("x'Re"), 1), 3);
        assert_eq!(contraction_ci(&chars("'l"), 0), 0); // "'l" alone is no contraction
        assert_eq!(contraction_ci(&chars("'x"), 0), 0);
        assert_eq!(contraction_ci(&chars("s'"), 0), 0);
        assert_eq!(contraction_ci(&chars("'"), 0), 0);
    }

    #[test]
    fn count_gives_each_pre_token_its_count_and_the_total() {
        let texts = ["a b a", "it's a", ""];
        let (counts, total) = count(&texts, classes(), scanner("gpt2").unwrap()).unwrap();
        let mut counts: Vec<(&str, u64)> = counts.into_iter().collect();
        counts.sort();
        assert_eq!(counts, [(" a", 2), (" b", 1), ("'s", 1), ("a", 1), ("it", 1)]);
        assert_eq!(total, 6);
    }

    /// Characters read per character of text (plus a few per text) that a linear scanner stays within; a
    /// quadratic one reads about n/6 per character on the shapes below (over 800 at n = 5,000).
    const WORK_PER_CHAR: u64 = 8;

    /// Text of about n characters in each hostile shape: one character repeated, long runs of digits,
    /// whitespace, letters and punctuation, no ASCII, case changes that o200k splits on, one long line
    /// (issue 18: cl100k's `\p{N}{1,3}` looked for the end of the digit run at every group of three).
    fn shapes(n: usize) -> Vec<(&'static str, String)> {
        vec![
            ("letters", "a".repeat(n)),
            ("upper", "A".repeat(n)),
            ("digits", "7".repeat(n)),
            ("digits then letter", "7".repeat(n) + "x"),
            ("space digits", " ".to_string() + &"7".repeat(n)),
            ("spaces then letter", " ".repeat(n) + "x"),
            ("spaces at the end", "x".to_string() + &" ".repeat(n)),
            ("newlines", "\n".repeat(n)),
            ("space newline", " \n".repeat(n / 2) + "x"),
            ("newline then spaces", "\n".to_string() + &" ".repeat(n) + "x"),
            ("tabs and no-break spaces", "\t\u{a0}".repeat(n / 2) + "!"),
            ("punctuation", "!".repeat(n)),
            ("punctuation and slashes", "!".to_string() + &"/".repeat(n)),
            ("contractions", "'s".repeat(n / 2)),
            ("apostrophes", "'".repeat(n)),
            ("no ASCII", "日".repeat(n)),
            ("accents", "é".repeat(n)),
            ("marks", "\u{301}".repeat(n)),
            ("letter and mark", "A\u{301}".repeat(n / 2)),
            ("mark and letter", "\u{301}A".repeat(n / 2)),
            ("camel", "Aa".repeat(n / 2)),
            ("upper then caseless", "A".repeat(n) + "日!"),
            ("one line of words", "lorem ipsum 1234 dolor, sit! ".repeat(n / 29 + 1)),
        ]
    }

    /// Checks the characters read for `text` within the bound, and its pre-tokens checked against the
    /// scanner's own (the counting scanner and the counted one are the same code).
    fn work(preset: &str, text: &str) {
        let (found, steps) = pretokens_with_work(preset, text, classes()).unwrap();
        assert_eq!(found, pieces(preset, text), "{preset}");
        let chars = text.chars().count() as u64;
        assert!(steps <= WORK_PER_CHAR * (chars + 1), "{preset}: {steps} characters read for {chars}");
    }

    #[test]
    fn the_scanners_read_each_character_a_bounded_number_of_times_on_hostile_shapes() {
        for preset in SCANNERS {
            for (_, text) in shapes(5_000) {
                work(preset, &text);
            }
        }
    }

    #[test]
    fn the_scanners_read_each_character_a_bounded_number_of_times_on_runs_of_any_length() {
        // Runs of the characters that the patterns treat specially, in any order and length: the shapes
        // the Python tests draw with hypothesis, drawn here from a fixed pseudo-random sequence.
        const RUN_CHARS: [char; 17] = [
            'a', 'A', 's', '7', '\u{661}', ' ', '\n', '\r', '\t', '\u{a0}', '!', '\'', '/', '日', 'é',
            '\u{301}', 'ǅ',
        ];
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |bound: u64| {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) % bound
        };
        for round in 0..300 {
            let text: String = (0..next(13))
                .flat_map(|_| std::iter::repeat_n(RUN_CHARS[next(17) as usize], 1 + next(400) as usize))
                .collect();
            work(SCANNERS[round % SCANNERS.len()], &text);
        }
    }
}
