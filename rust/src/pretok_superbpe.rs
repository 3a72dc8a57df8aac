//! The stage-2 split of SuperBPE (superword) tokenizers written out by hand, equal to the `regex` pattern
//! `SUPERWORD_PATTERN` of bpe_studio/engine/training/extend.py on every input: Hugging Face's `Split` with
//! behaviour `isolated` on
//!
//! `\p{N}{1,3}| ?[^\s\p{L}\p{N}]{2,}[\r\n/]*| +(?!\S)`
//!
//! that is, every match of that regex is a piece, and so is every non-empty stretch between two matches
//! (words with the single spaces between them, single punctuation, newlines). Classes come from the shared
//! table (pretok.rs).
//!
//! Linear on any text: at each position the alternatives look at most two characters ahead unless they
//! match, and a match consumes every character it reads (runs are memoised by `Chars::run`).

use crate::pretok::{is_other, Chars, NUMBER, NUMBERS, OTHERS, SPACE};

/// Calls `emit` with each piece of `text` in order. Returns the first code point that the class table
/// does not cover, or None when done.
pub fn superbpe_pretokens<'a>(text: &'a str, classes: &[u8], emit: &mut dyn FnMut(&'a str)) -> Option<u32> {
    match Chars::new(text, classes) {
        Ok(text) => {
            superbpe_scan(&text, emit);
            None
        }
        Err(code_point) => Some(code_point),
    }
}

/// `superbpe_pretokens` on a classified text.
pub fn superbpe_scan<'a>(text: &Chars<'a>, emit: &mut dyn FnMut(&'a str)) {
    let n = text.len();
    let (classes, chars) = (text.classes(), &text.chars);
    let mut gap = 0; // where the stretch of characters no match starts at began
    let mut i = 0;
    while i < n {
        // The places where no alternative can start (most: letters, single spaces and punctuation
        // between words) passed over with one test each, not the alternatives' branches in turn.
        while i + 2 < n && !may_start(classes, chars, i) {
            i += 1;
        }
        match match_end(text, i) {
            Some(end) => {
                if gap < i {
                    emit(text.piece(gap, i));
                }
                emit(text.piece(i, end));
                i = end;
                gap = end;
            }
            None => i += 1,
        }
    }
    if gap < n {
        emit(text.piece(gap, n));
    }
}

/// Flags of a class (`pretok`'s classes, below 8) for `may_start`.
const NUM: u8 = 1;
const OTH: u8 = 2;
const SPC: u8 = 4;
const FLAGS: [u8; 8] = {
    let mut flags = [0u8; 8];
    let mut class = 0;
    while class < 8 {
        flags[class] = if class as u8 == NUMBER {
            NUM
        } else if class as u8 == SPACE {
            SPC
        } else if is_other(class as u8) {
            OTH
        } else {
            0
        };
        class += 1;
    }
    flags
};

/// False only where `match_end(text, i)` is None (`i + 2 < n`): `i` is not a number, not the first of two
/// punctuation marks, and not a space followed by whitespace or by two punctuation marks. A class beyond
/// the table's is taken as one where a match may start (`match_end` then answers).
#[inline]
fn may_start(classes: &[u8], chars: &[char], i: usize) -> bool {
    let flag = |k: u8| if k < 8 { FLAGS[k as usize] } else { NUM | OTH | SPC };
    let (f0, f1, f2) = (flag(classes[i]), flag(classes[i + 1]), flag(classes[i + 2]));
    let space = u8::from(chars[i] == ' ');
    (f0 & NUM) | (f0 & f1 & OTH) | (space * ((f1 & SPC) | (f1 & f2 & OTH))) != 0
}

/// The end of the regex's match at `i` (its alternatives in order), or None when none matches there.
fn match_end(text: &Chars<'_>, i: usize) -> Option<usize> {
    let (chars, n) = (&text.chars, text.len());
    // \p{N}{1,3}
    if text.class(i) == NUMBER {
        return Some(text.run(i, NUMBERS).min(i + 3));
    }
    // ` ?[^\s\p{L}\p{N}]{2,}[\r\n/]*`: the run of punctuation is greedy and whatever follows it is not
    // punctuation, so no backtracking can help; without the space it cannot start at a space.
    let start = if chars[i] == ' ' { i + 1 } else { i };
    if start + 1 < n && is_other(text.class(start)) && is_other(text.class(start + 1)) {
        let end = text.run(start, OTHERS);
        return Some(text.run_of_chars(end, &['\r', '\n', '/']));
    }
    // ` +(?!\S)`: the run of spaces when whitespace or the end follows it, else all but its last space
    // (which is followed by a space), else nothing (one space before a non-space).
    if chars[i] == ' ' {
        let mut end = i;
        while end < n && chars[end] == ' ' {
            end += 1;
        }
        if end == n || text.class(end) == SPACE {
            return Some(end);
        }
        return (end - i >= 2).then_some(end - 1);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::{match_end, superbpe_scan};
    use crate::pretok::Chars;
    use crate::testing;

    fn pieces(text: &str) -> Vec<&str> {
        testing::pieces("superbpe", text)
    }

    #[test]
    fn words_and_single_spaces_stay_together_digits_and_punctuation_runs_split() {
        assert_eq!(pieces("By the way, 2024!!\nok  "), ["By the way, ", "202", "4", "!!\n", "ok", "  "]);
        assert_eq!(pieces("a  b"), ["a", " ", " b"]);
        assert_eq!(pieces("x -- y"), ["x", " --", " y"]);
        assert_eq!(pieces("a.b\n\nc"), ["a.b\n\nc"]);
        assert_eq!(pieces("!!/\r\n/x"), ["!!/\r\n/", "x"]);
        assert_eq!(pieces(""), Vec::<&str>::new());
        assert_eq!(pieces("naïve 12345 café"), ["naïve ", "123", "45", " café"]);
    }

    #[test]
    fn passing_over_places_no_match_starts_at_cuts_as_trying_every_place() {
        // The scan before `may_start`: every place tried in turn. Texts of the characters each alternative
        // turns on (digits, spaces and other whitespace, punctuation, '/', '\r', marks, letters), short
        // and long, in both classifications the scan is given (its own and gpt2's, which the one-pass
        // count hands it).
        fn every_place<'a>(text: &Chars<'a>) -> Vec<&'a str> {
            let (n, mut out, mut gap, mut i) = (text.len(), Vec::new(), 0, 0);
            while i < n {
                match match_end(text, i) {
                    Some(end) => {
                        if gap < i {
                            out.push(text.piece(gap, i));
                        }
                        out.push(text.piece(i, end));
                        (i, gap) = (end, end);
                    }
                    None => i += 1,
                }
            }
            if gap < n {
                out.push(text.piece(gap, n));
            }
            out
        }
        let alphabet = [
            'a', 'Z', ' ', ' ', ' ', '\n', '\t', '\u{a0}', '1', '7', '.', '!', '/', '\r', '\u{301}', 'é',
            '中',
        ];
        let mut next = testing::xorshift(0x5EED_0BAD_F00D_CAFEu64);
        for round in 0..3_000 {
            let len = next([4, 12, 60][round % 3]) as usize;
            let text: String = (0..len).map(|_| alphabet[next(alphabet.len() as u64) as usize]).collect();
            let gpt2 = crate::pretok::chars_scanner("gpt2").expect("gpt2");
            for chars in [
                Chars::new(&text, testing::classes()).unwrap(),
                gpt2.classify(&text, testing::classes()).unwrap(),
            ] {
                let mut found = Vec::new();
                superbpe_scan(&chars, &mut |piece| found.push(piece));
                assert_eq!(found, every_place(&chars), "{text:?}");
            }
        }
    }
}
