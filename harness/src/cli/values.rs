//! The command line's names of the crate's enums.
//!
//! The command line's names of the crate's enums that are not the CLI's own ([`Ui`],
//! [`Terminal`]): their allowed values and what each means, as `--help` lists them. The triage
//! enums derive theirs ([`crate::triage::bisect::Bad`], [`crate::triage::bisect::By`],
//! [`crate::triage::minimize::Matching`]).

use clap::builder::PossibleValue;
use clap::ValueEnum;

use crate::client::Ui;
use crate::terminal::Terminal;

impl ValueEnum for Ui {
    fn value_variants<'a>() -> &'a [Self] {
        &[Ui::Classic, Ui::Tui]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self {
            Ui::Classic => {
                PossibleValue::new(self.name()).help("The prompt_toolkit CLI (`hermes`)")
            }
            Ui::Tui => PossibleValue::new(self.name())
                .help("The Ink TUI (`hermes --tui`; hermes-agent 0.19.0 and Node.js 20+)"),
        })
    }
}

impl ValueEnum for Terminal {
    fn value_variants<'a>() -> &'a [Self] {
        &[Terminal::Vt100, Terminal::Reflow]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self {
            Terminal::Vt100 => PossibleValue::new(self.name())
                .help("Rows cut or padded on a width change, never re-wrapped"),
            Terminal::Reflow => PossibleValue::new(self.name())
                .help("Soft-wrapped rows re-wrap on a width change, as in tmux"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every variant has the name the scenarios use (`Ui::name`, `Terminal::name`).
    #[test]
    fn names_match_the_scenario_names() {
        for ui in Ui::value_variants() {
            assert_eq!(ui.to_possible_value().unwrap().get_name(), ui.name());
        }
        for t in Terminal::value_variants() {
            assert_eq!(t.to_possible_value().unwrap().get_name(), t.name());
        }
        assert_eq!(Ui::from_str("tui", false), Ok(Ui::Tui));
        assert_eq!(Terminal::from_str("reflow", false), Ok(Terminal::Reflow));
    }
}
