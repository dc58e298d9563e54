//! `include` steps.
//!
//! The steps of a shared `*.steps.toml` file (or `steps = [FROM, TO]` of them), each reported at
//! the include's line.

use super::*;

/// Expands `include` steps: the included file's steps, each reported at the include's line.
pub(super) fn expand_includes(
    raw: Vec<toml::Spanned<RawStep>>,
    text: &str,
    path: &Path,
    invalid: &impl Fn(usize, String) -> ScenarioError,
) -> Result<Vec<(usize, RawStep)>, ScenarioError> {
    let mut expanded: Vec<(usize, RawStep)> = Vec::with_capacity(raw.len());
    for spanned in raw {
        let line = line_at(text, spanned.span().start);
        let s = spanned.into_inner();
        let Some(include) = s.include.clone() else {
            expanded.push((line, s));
            continue;
        };
        if s.actions() > 0 {
            return Err(invalid(
                line,
                "`include` is a step of its own: no other action beside it".into(),
            ));
        }
        let file = path.parent().unwrap_or(Path::new(".")).join(&include);
        let included =
            std::fs::read_to_string(&file).map_err(|source| ScenarioError::IncludeRead {
                path: path.to_owned(),
                line,
                included: file.clone(),
                source,
            })?;
        let steps: RawSteps =
            toml::from_str(&included).map_err(|source| ScenarioError::IncludeParse {
                path: path.to_owned(),
                line,
                included: file.clone(),
                source: Box::new(source),
            })?;
        let count = steps.step.len();
        let [from, to] = s.steps.unwrap_or([1, count]);
        if from == 0 || from > to || to > count {
            return Err(invalid(
                line,
                format!(
                    "`steps = [{from}, {to}]`: `{}` has steps 1 to {count}",
                    file.display()
                ),
            ));
        }
        for step in steps.step.into_iter().take(to).skip(from - 1) {
            if step.include.is_some() {
                return Err(invalid(
                    line,
                    format!(
                        "`{}` includes another file: includes do not nest",
                        file.display()
                    ),
                ));
            }
            expanded.push((line, step));
        }
    }
    Ok(expanded)
}
