//! The stages that split their work over two threads give what one thread gives.

use super::*;

proptest! {
    /// The bucket sort of the shingle index equals the comparison sort, on entries pushed in
    /// (source, position) order as `Index::new` pushes them — with many equal hashes (a small
    /// hash range, all in one bucket) and with hashes over all 61 bits.
    #[test]
    fn shingle_bucket_sort_equals_sort_unstable(
        hashes in prop::collection::vec(prop_oneof![0u64..8, 0u64..(1 << 61)], 0..600),
        per_source in 1usize..40,
        split in 0usize..600,
        two_threads: bool,
    ) {
        let entries: Vec<(u64, u32, u32)> = hashes
            .iter()
            .enumerate()
            .map(|(i, &h)| (h, (i / per_source) as u32, (i % per_source) as u32))
            .collect();
        let mut old = entries.clone();
        old.sort_unstable();
        let (first, second) = entries.split_at(split.min(entries.len()));
        let new = align::sort_by_hash(&[first, second], two_threads);
        prop_assert_eq!(new, old);
    }
}

proptest! {
    /// The vocabulary read in two halves on two threads numbers every word as one pass does:
    /// the same ids, the same numbering (words repeated across the halves, case folded, CJK).
    #[test]
    fn a_vocabulary_read_in_two_halves_is_the_one_pass_vocabulary(
        texts in prop::collection::vec(
            prop::collection::vec(
                prop::sample::select(vec!["lamp", "Lamp", "keeper", "灯塔", "the", "x1", "dusk."]),
                0..12,
            ),
            0..20,
        ),
        half in 0usize..20,
    ) {
        let texts: Vec<String> = texts.iter().map(|t| t.join(" ")).collect();
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        let (one_vocab, one) = vocabulary::tokenize_split(&texts, texts.len());
        let (two_vocab, two) = vocabulary::tokenize_split(&texts, half.min(texts.len()));
        prop_assert_eq!(one_vocab, two_vocab);
        let ids = |t: &[vocabulary::Tokens]| t.iter().map(|t| t.ids.clone()).collect::<Vec<_>>();
        prop_assert_eq!(ids(&one), ids(&two));
    }

    /// An excerpt made in one pass keeping only the quoted words is the excerpt made from every
    /// word's range (the two ways `repeats` quotes a message, by its length).
    #[test]
    fn an_excerpt_in_one_pass_is_the_excerpt_from_all_ranges(
        words in prop::collection::vec(
            prop::sample::select(vec!["lamp,", "Keeper", "灯塔", "—", "x1", "dusk.", "\n", "  "]),
            0..30,
        ),
        start in 0usize..32,
        len in 0usize..12,
    ) {
        let text = words.join(" ");
        let range = start..start + len;
        prop_assert_eq!(
            vocabulary::excerpt(&text, range.clone()),
            vocabulary::excerpt_in(&text, &vocabulary::word_ranges(&text), range)
        );
    }

    /// The alignment index made on two threads is the one made on one: the same hashes, the
    /// same sorted shingles, short sources and prefixes.
    #[test]
    fn an_index_made_on_two_threads_is_the_one_made_on_one(
        sources in prop::collection::vec(prop::collection::vec(0u32..6, 0..30), 0..25),
    ) {
        let sources: Vec<(align::SourceKind, Vec<u32>)> = sources
            .into_iter()
            .enumerate()
            .map(|(i, ids)| (align::SourceKind::Message(i), ids))
            .collect();
        let one = align::Index::made(sources.clone(), false);
        let two = align::Index::made(sources, true);
        prop_assert_eq!(one, two);
    }
}

/// A transcript long enough to be looked up on two threads gives the word stream of one thread.
#[test]
fn a_long_transcript_is_looked_up_in_order_on_two_threads() {
    let exp = expected(
        vec![simple(
            Role::Assistant,
            "the keeper lit the lamp at dusk",
            1,
        )],
        vec![],
    );
    let lines: Vec<String> = (0..2 * vocabulary::PARALLEL_LINES + 3)
        .map(|i| format!("the lamp {i} keeper unknown{}", i % 7))
        .collect();
    let t = transcript(&lines);
    let vocabulary = vocabulary::Vocabulary::new(&exp);
    let both = vocabulary::Words::new(&t, &vocabulary);
    let one = both.stream(&t.lines, 0);
    assert_eq!(both.transcript, one.0);
    assert_eq!(both.line_of, one.1);
    assert!(both.line_of.last() == Some(&(lines.len() - 1)));
}
