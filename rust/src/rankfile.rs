//! Reading a tiktoken rank file (`<base64 token> <rank>` per line) fast, for
//! bpe_studio/engine/formats/tiktoken_format.py (`parse_tiktoken`), which stays the reference and names the
//! line of any error. Only the canonical form is read here (what tiktoken and BPE Studio write): padded
//! standard base64 with zero unused bits, decimal ranks, no rank or token twice. Anything else gives None,
//! and the Python parser reads the file instead (accepting what it accepts, refusing the rest by line).

use rustc_hash::FxHashSet;

/// The bytes Python's `bytes.split()` and `bytes.strip()` take for whitespace (`\x0b` too, unlike Rust's
/// `is_ascii_whitespace`).
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// The value of a base64 digit of the standard alphabet.
const fn digit(b: u8) -> Option<u32> {
    Some(match b {
        b'A'..=b'Z' => b - b'A',
        b'a'..=b'z' => b - b'a' + 26,
        b'0'..=b'9' => b - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => return None,
    } as u32)
}

/// Appends the bytes of canonical padded base64 to `out`; false (and `out` in any state) for other
/// lengths, characters, padding or non-zero spare bits.
fn decode_base64(text: &[u8], out: &mut Vec<u8>) -> bool {
    if text.is_empty() || !text.len().is_multiple_of(4) {
        return false;
    }
    let pad = text.iter().rev().take_while(|&&b| b == b'=').count();
    if pad > 2 {
        return false;
    }
    let quads = text.len() / 4;
    for (n, quad) in text.chunks_exact(4).enumerate() {
        let used = if n + 1 == quads { 4 - pad } else { 4 };
        let mut value = 0u32;
        for &b in &quad[..used] {
            let Some(d) = digit(b) else {
                return false;
            };
            value = value << 6 | d;
        }
        value <<= 6 * (4 - used) as u32;
        let take = used * 6 / 8; // 4 digits: 3 bytes; 3: 2; 2: 1
        if used < 4 && value & ((1 << (8 * (3 - take))) - 1) != 0 {
            return false; // spare bits set: Python ignores them; leave such a file to it
        }
        out.extend_from_slice(&value.to_be_bytes()[1..1 + take]);
    }
    true
}

/// A decimal rank that fits in a u32, or None.
fn decode_rank(text: &[u8]) -> Option<u32> {
    if text.is_empty() || text.len() > 10 || !text.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let value = text.iter().fold(0u64, |v, &b| v * 10 + u64::from(b - b'0'));
    u32::try_from(value).ok()
}

/// Each byte's base64 digit value, or INVALID.
const DIGITS: [u8; 256] = {
    let mut table = [INVALID; 256];
    let mut b = 0;
    while b < 256 {
        if let Some(d) = digit(b as u8) {
            table[b] = d as u8;
        }
        b += 1;
    }
    table
};
/// Not a base64 digit (its top bit is set, which no digit's is).
const INVALID: u8 = 0xff;

/// Reads the line at `at` when it has the form every real file has, `<base64 token> <decimal rank>` with
/// one space and `\n` or the end after it (the token's last quad padded, with zero spare bits), into
/// `found`, in one pass over its bytes: a table per digit, four digits at a time. The general loop
/// splits the line into fields and decodes digit by digit (three quarters of reading o200k, issue 20).
/// Returns where the next line starts, or None, with `found` as it was, for any other line (a non-digit,
/// a tab, `\r`, an empty token ...), which the general loop then reads: the same fields, so the same result.
fn canonical_line(data: &[u8], at: usize, found: &mut Ranks) -> Option<usize> {
    let before = found.bytes.len();
    let read = |found: &mut Ranks| -> Option<usize> {
        let rest = &data[at..];
        let mut i = 0;
        // The token's quads, up to the space.
        loop {
            let quad = rest.get(i..i + 4)?;
            let d = [quad[0], quad[1], quad[2], quad[3]].map(|b| DIGITS[b as usize]);
            let value = |n: usize| d[..n].iter().fold(0u32, |v, &d| v << 6 | u32::from(d));
            if (d[0] | d[1] | d[2] | d[3]) & 0x80 == 0 {
                found.bytes.extend_from_slice(&value(4).to_be_bytes()[1..]);
                i += 4;
                if rest.get(i) == Some(&b' ') {
                    break;
                }
                continue;
            }
            // The last quad: 3 digits and "=" (2 bytes, 2 spare bits), or 2 digits and "==" (1 byte, 4).
            let (used, take) = match quad {
                [_, _, b'=', b'='] => (2, 1),
                [_, _, _, b'='] => (3, 2),
                _ => return None,
            };
            let spare = 6 * used - 8 * take;
            if d[..used].iter().any(|&d| d & 0x80 != 0) || value(used) & ((1 << spare) - 1) != 0 {
                return None;
            }
            found.bytes.extend_from_slice(&(value(used) >> spare).to_be_bytes()[4 - take..]);
            i += 4;
            if rest.get(i) != Some(&b' ') {
                return None;
            }
            break;
        }
        // The rank: 1-10 digits, then the end of the line.
        let digits = &rest[i + 1..];
        let n = digits.iter().take(11).take_while(|b| b.is_ascii_digit()).count();
        if !matches!(digits.get(n), None | Some(&b'\n')) {
            return None;
        }
        found.ranks.push(decode_rank(&digits[..n])?);
        found.starts.push(found.bytes.len());
        Some(at + i + 1 + n + 1)
    };
    let next = read(found);
    if next.is_none() {
        found.bytes.truncate(before);
    }
    next
}

/// A parsed rank file: line i (of those not empty) has rank `ranks[i]` and token
/// `bytes[starts[i]..starts[i + 1]]`.
#[derive(Debug, PartialEq)]
pub struct Ranks {
    pub ranks: Vec<u32>,
    pub bytes: Vec<u8>,
    pub starts: Vec<usize>,
}

impl Ranks {
    /// The token of line `i`.
    pub fn token(&self, i: usize) -> &[u8] {
        &self.bytes[self.starts[i]..self.starts[i + 1]]
    }
}

/// Every line's rank and token bytes, in file order, or None when a line is not canonical or a rank or
/// token repeats (the Python parser then reads the file and names the line). A token of only `=` is the
/// empty token, as tiktoken reads it.
///
/// Example: `parse(b"YQ== 0\nYmM= 1\n")` has ranks `[0, 1]` and tokens `b"a"`, `b"bc"`.
pub fn parse(data: &[u8]) -> Option<Ranks> {
    parse_with(data, true)
}

/// `parse`, with or without the fast path for canonical lines (`canonical_line`; the tests compare the two).
fn parse_with(data: &[u8], fast: bool) -> Option<Ranks> {
    // (About as many lines as a real file has for its size: 13-17 bytes each. Room is made as needed.)
    let lines = data.len() / 12 + 1;
    let mut found = Ranks {
        ranks: Vec::with_capacity(lines),
        bytes: Vec::with_capacity(data.len() / 4 * 3),
        starts: Vec::with_capacity(lines + 1),
    };
    found.starts.push(0);
    // Each line, as `data.split(|&b| b == b'\n')` gives them (an empty one after a last newline).
    let mut at = 0;
    while at <= data.len() {
        if fast {
            if let Some(next) = canonical_line(data, at, &mut found) {
                at = next;
                continue;
            }
        }
        let end = data[at..].iter().position(|&b| b == b'\n').map_or(data.len(), |n| at + n);
        let line = &data[at..end];
        at = end + 1;
        let mut fields = line.split(|&b| is_space(b)).filter(|f| !f.is_empty());
        let Some(token) = fields.next() else {
            continue; // an empty line
        };
        let (Some(rank), None) = (fields.next(), fields.next()) else {
            return None;
        };
        found.ranks.push(decode_rank(rank)?);
        if !token.iter().all(|&b| b == b'=') && !decode_base64(token, &mut found.bytes) {
            return None;
        }
        found.starts.push(found.bytes.len());
    }
    // Each rank once: files list them in order, so a check of the order is enough, else sort a copy.
    if !found.ranks.windows(2).all(|w| w[0] < w[1]) {
        let mut sorted = found.ranks.clone();
        sorted.sort_unstable();
        if sorted.windows(2).any(|w| w[0] == w[1]) {
            return None;
        }
    }
    let mut tokens: FxHashSet<&[u8]> = FxHashSet::default();
    tokens.reserve(found.ranks.len());
    if !(0..found.ranks.len()).all(|i| tokens.insert(found.token(i))) {
        return None;
    }
    drop(tokens);
    Some(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_lines_are_read() {
        let data = b"YQ== 0\nYmM= 1\r\n\n  Zm9v\t2 \n= 3\nAAEC 4";
        let want = [(0, &b"a"[..]), (1, b"bc"), (2, b"foo"), (3, b""), (4, &[0, 1, 2])];
        let got = parse(data).unwrap();
        assert_eq!((0..got.ranks.len()).map(|i| (got.ranks[i], got.token(i))).collect::<Vec<_>>(), want);
        assert!(parse(b"").unwrap().ranks.is_empty());
        let vt = parse(b"YQ==\x0b7").unwrap();
        assert_eq!((vt.ranks, vt.bytes), (vec![7], b"a".to_vec()), "\\x0b is whitespace, as in Python");
        let unordered = parse(b"YQ== 5\nYg== 2").unwrap();
        assert_eq!(unordered.ranks, [5, 2]);
    }

    #[test]
    fn anything_else_is_left_to_the_python_parser() {
        for data in [
            &b"YQ== 0 1"[..],    // three fields
            b"YQ==",             // one field
            b"YQ 0",             // unpadded
            b"YR== 0",           // spare bits set
            b"YQ=== 0",          // too much padding
            b"Y*== 0",           // not base64
            b"YQ== -1",          // negative
            b"YQ== +1",          // a sign
            b"YQ== 99999999999", // too large
            b"YQ== 0\nYg== 0",   // a rank twice
            b"YQ== 0\nYQ== 1",   // a token twice
        ] {
            assert_eq!(parse(data), None, "{}", String::from_utf8_lossy(data));
        }
    }

    #[test]
    fn the_fast_path_reads_every_line_as_the_general_loop_does() {
        // Lines of random tokens, mostly canonical, with the faults a file can have here and there.
        let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut state = 7u64;
        let mut next = |n: u64| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 33) % n
        };
        for _ in 0..3000 {
            let mut data = Vec::new();
            for rank in 0..next(6) {
                let quads = next(4);
                let mut token: Vec<u8> = (0..4 * quads).map(|_| alphabet[next(64) as usize]).collect();
                if quads > 0 && next(3) == 0 {
                    let n = token.len();
                    token[n - 1] = b'=';
                    if next(2) == 0 {
                        token[n - 2] = b'=';
                    }
                }
                let fault: &[u8] =
                    [&b""[..], b"", b"", b"\r", b" ", b"\t", b"=", b"x", b"-"][next(9) as usize];
                let at = next(4);
                if at == 0 {
                    data.extend_from_slice(fault);
                }
                data.extend_from_slice(&token);
                data.extend_from_slice(if at == 1 { b"\t" } else { b" " });
                data.extend_from_slice(rank.to_string().as_bytes());
                if at >= 2 {
                    data.extend_from_slice(fault);
                }
                data.push(b'\n');
            }
            assert_eq!(
                parse_with(&data, true),
                parse_with(&data, false),
                "{}",
                String::from_utf8_lossy(&data)
            );
        }
    }

    #[test]
    fn every_byte_string_round_trips_through_canonical_base64() {
        let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let encode = |bytes: &[u8]| -> Vec<u8> {
            let mut out = Vec::new();
            for chunk in bytes.chunks(3) {
                let mut v = 0u32;
                for (i, &b) in chunk.iter().enumerate() {
                    v |= u32::from(b) << (16 - 8 * i);
                }
                for i in 0..4 {
                    out.push(if i <= chunk.len() {
                        alphabet[(v >> (18 - 6 * i)) as usize & 63]
                    } else {
                        b'='
                    });
                }
            }
            out
        };
        for len in 1..10 {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 97 + 13) as u8).collect();
            let mut out = Vec::new();
            assert!(decode_base64(&encode(&bytes), &mut out));
            assert_eq!(out, bytes);
        }
    }
}
