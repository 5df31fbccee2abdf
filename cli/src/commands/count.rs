//! `shogi4 count`: combinatorial position counts, without enumerating.

use shogi4_api::cli::CountReport;
use shogi4_engine::{Material, MaterialIndex};

use super::grouped;
use crate::error::CliError;

pub fn run(material: &str, json: bool) -> Result<(), CliError> {
    let material: Material = material.parse()?;
    let index = MaterialIndex::new(material);
    if json {
        super::print_json(&CountReport {
            material: material.to_string(),
            positions: index.positions(),
            slots: index.slots(),
        });
    } else {
        println!("{material}: {} positions (both sides to move, unfolded)", grouped(index.positions()));
        println!("{material}: {} slots (folded by colour flip and mirror)", grouped(index.slots()));
    }
    Ok(())
}
