//! Closed games: the royals plus a fixed multiset of non-royal pieces, named like `KKCF`.

use std::fmt;
use std::fmt::Write as _;
use std::str::FromStr;

use crate::Kind;

/// A closed game: both royals and 0–2 pieces of each non-royal kind (C, F, R, T).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Material {
    counts: [u8; 4],
}

/// Why a material name could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseMaterialError {
    /// The text given.
    pub text: String,
    /// Why it is not a closed game name.
    pub reason: &'static str,
}

impl fmt::Display for ParseMaterialError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid material {:?}: {}", self.text, self.reason)
    }
}

impl std::error::Error for ParseMaterialError {}

impl Material {
    /// The full game, `KKCCFFRRTT`.
    pub const FULL: Material = Material { counts: [2; 4] };

    /// The material with `counts[i]` pieces of [`Kind::HAND_KINDS`]`[i]`, each at most 2.
    pub fn from_counts(counts: [u8; 4]) -> Option<Material> {
        counts.iter().all(|&c| c <= 2).then_some(Material { counts })
    }

    /// Pieces of each non-royal kind, in order C, F, R, T.
    pub const fn counts(self) -> [u8; 4] {
        self.counts
    }

    /// How many pieces of `kind` (1 for the royal, which each side has).
    pub fn count(self, kind: Kind) -> u8 {
        kind.hand_index().map_or(1, |i| self.counts[i])
    }

    /// Number of non-royal pieces.
    pub fn pieces(self) -> u32 {
        self.counts.iter().map(|&c| u32::from(c)).sum()
    }

    /// Every closed game with at most `max_pieces` non-royal pieces, smallest first, then by name.
    pub fn all_up_to(max_pieces: u32) -> Vec<Material> {
        let mut all: Vec<Material> = (0..81u32)
            .map(|n| Material { counts: [0, 1, 2, 3].map(|i| (n / 3u32.pow(3 - i) % 3) as u8) })
            .filter(|m| m.pieces() <= max_pieces)
            .collect();
        all.sort();
        all
    }
}

impl Ord for Material {
    /// Fewer pieces first, then by name (`KKC` < `KKF` < `KKCC` < `KKCF`). For names of equal
    /// length, more of an earlier letter sorts first, so comparing counts in reverse does it.
    fn cmp(&self, other: &Material) -> std::cmp::Ordering {
        (self.pieces(), other.counts).cmp(&(other.pieces(), self.counts))
    }
}

impl PartialOrd for Material {
    fn partial_cmp(&self, other: &Material) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl FromStr for Material {
    type Err = ParseMaterialError;

    fn from_str(text: &str) -> Result<Material, ParseMaterialError> {
        let error = |reason| ParseMaterialError { text: text.to_string(), reason };
        let rest = text.strip_prefix("KK").ok_or(error("a closed game name starts with KK (both royals)"))?;
        let mut counts = [0u8; 4];
        let mut last = 0;
        for c in rest.chars() {
            let index = Kind::from_letter(c)
                .filter(|_| c.is_ascii_uppercase())
                .and_then(Kind::hand_index)
                .ok_or(error("after KK only the letters C, F, R, T may follow"))?;
            if index < last {
                return Err(error("letters must come in the order C, F, R, T"));
            }
            last = index;
            counts[index] += 1;
            if counts[index] > 2 {
                return Err(error("each kind appears at most twice"));
            }
        }
        Ok(Material { counts })
    }
}

impl fmt::Display for Material {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("KK")?;
        for (kind, &count) in Kind::HAND_KINDS.iter().zip(&self.counts) {
            for _ in 0..count {
                f.write_char(kind.letter())?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_reject() {
        for name in ["KK", "KKC", "KKCF", "KKCCFFRRTT", "KKRT"] {
            assert_eq!(name.parse::<Material>().unwrap().to_string(), name);
        }
        for bad in ["", "K", "KKX", "KKFC", "KKCCC", "KKc", "kk"] {
            assert!(bad.parse::<Material>().is_err(), "{bad}");
        }
        assert_eq!(Material::all_up_to(3).len(), 31);
        assert_eq!(Material::all_up_to(8).len(), 81);
        let names: Vec<String> = Material::all_up_to(2).iter().map(|m| m.to_string()).collect();
        let mut sorted = names.clone();
        sorted.sort_by_key(|n| (n.len(), n.clone()));
        assert_eq!(names, sorted);
    }
}
