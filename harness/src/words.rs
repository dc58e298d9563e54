//! Word segmentation shared by the oracle: UAX-29 word segments (crate `unicode-segmentation`),
//! case-folded, keeping only segments with a letter or digit; each CJK ideograph (and kana/hangul
//! syllable run per UAX-29) counts as one word, so CJK text without spaces is counted per character.
//!
//! OWNER: helper "model".

/// A word with the index of the transcript line (or any caller-defined unit) it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// The case-folded word.
    pub text: String,
    /// Caller-defined position (the transcript line index for transcripts).
    pub at: usize,
}

/// Splits `text` into case-folded words, every word tagged with `at`.
pub fn words(text: &str, at: usize) -> Vec<Word> {
    let _ = (text, at);
    unimplemented!("model helper")
}
