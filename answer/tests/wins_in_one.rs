//! The positions of a certificate where the side to move takes the royal at once are left
//! out of the certificates' index: every answer proves them by the rules, a win in 1.

use shogi4_answer::{probe, Certified, Knowledge, Searcher};
use shogi4_search::Limits;

#[test]
fn a_certificates_wins_in_one_are_answered_by_the_rules() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../tables/certificates/a1b2.s4cert")).unwrap();
    std::fs::write(dir.path().join("a1b2.s4cert"), &bytes).unwrap();
    let (certified, _) = Certified::load(dir.path());
    let known = Knowledge::new(&certified, &());
    let mut searcher = Searcher::new(1 << 20);
    let mut answered = 0;
    for proven in shogi4_certificate::proven_positions(&bytes).unwrap().filter(|p| p.within == 1).take(200) {
        assert!(certified.find(&proven.position).is_none());
        let (searched, _) = probe(&mut searcher, &proven.position, &Limits::nodes(1_000), &known);
        let answer = serde_json::to_value(&searched.answer).unwrap();
        assert_eq!((&answer["category"], &answer["dtw"]), (&"win".into(), &1.into()), "{answer}");
        answered += 1;
    }
    assert_eq!(answered, 200);
}
