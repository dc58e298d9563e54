//! A step's action read from its table: one action per step, and only that action's keys.

use super::*;

/// The steps of a scenario, each with exactly one action and only the keys of that action; the
/// first one launches the client, and one at least is a `check`.
pub(super) fn steps(
    expanded: &[(usize, RawStep)],
    invalid: &impl Fn(usize, String) -> ScenarioError,
) -> Result<Vec<Step>, ScenarioError> {
    let mut steps = Vec::with_capacity(expanded.len());
    let mut launched = false;
    // What the harness left in the composer (`type` steps), carried from step to step.
    let mut composer = Line::default();
    for (line, s) in expanded {
        let line = *line;
        one_action(line, s, invalid)?;
        let action = match &s.type_ {
            Some(text) => type_action(line, text, s.keys.as_deref(), &mut composer, invalid)?,
            None => action(line, s, invalid)?,
        };
        let sends_a_line = matches!(
            action,
            Action::Say { .. } | Action::Command { .. } | Action::Resume(_) | Action::Paste { .. }
        );
        if sends_a_line && !composer.text().is_empty() {
            return Err(invalid(
                line,
                format!(
                    "the composer still holds `{}` from a `type` step: this step would send it \
                     in front of its own line; clear it first (`type = \"\"` with \
                     `keys = [\"ctrl-e\", \"ctrl-u\"]`)",
                    composer.text()
                ),
            ));
        }
        if matches!(action, Action::Quit | Action::Kill | Action::Launch { .. })
            || killed_mid_turn(&action)
        {
            // `quit` clears the draft before `/quit`; a new client starts with an empty composer.
            composer = Line::default();
        }
        launched |= matches!(action, Action::Launch { .. });
        if !launched {
            return Err(invalid(line, "the first step must be `launch`".into()));
        }
        let default_deadline = match &action {
            Action::Launch { .. } => 60,
            Action::Say { .. }
            | Action::Paste { .. }
            | Action::Quit
            | Action::Kill
            | Action::Check { .. } => 30,
            Action::Command { .. } => 90,
            Action::Resume(_) => 60,
            Action::Resize { .. } | Action::Type { .. } | Action::Settle { .. } => 30,
            Action::Export(_) => 60,
        };
        steps.push(Step {
            line,
            action,
            deadline_secs: s.deadline_secs.unwrap_or(default_deadline),
        });
    }
    if steps.is_empty() {
        return Err(invalid(
            1,
            "a scenario needs at least one `[[step]]`".into(),
        ));
    }
    if !steps
        .iter()
        .any(|s| matches!(s.action, Action::Check { .. }))
    {
        return Err(invalid(
            steps[0].line,
            "a scenario needs at least one `check` step".into(),
        ));
    }
    Ok(steps)
}

/// Whether a `say` step's `during` ends with `kill = true` (the client is gone after it).
pub(crate) fn killed_mid_turn(action: &Action) -> bool {
    matches!(action, Action::Say { during, .. }
        if during.last().is_some_and(|d| d.action == DuringAction::Kill))
}

/// A step has exactly one action and only the keys of that action.
fn one_action(
    line: usize,
    s: &RawStep,
    invalid: &impl Fn(usize, String) -> ScenarioError,
) -> Result<(), ScenarioError> {
    if s.actions() != 1 {
        return Err(invalid(
            line,
            "a step must have exactly one of `include`, `launch`, `say`, `command`, \
             `resume`, `resize`, `type`, `paste`, `settle`, `export`, `quit`, `kill`, `check`"
                .into(),
        ));
    }
    let stray = |key: &str, ok: bool| -> Result<(), ScenarioError> {
        if ok {
            Ok(())
        } else {
            Err(invalid(
                line,
                format!("`{key}` does not belong to this step"),
            ))
        }
    };
    stray(
        "reply",
        s.reply.is_none() || s.say.is_some() || s.paste.is_some(),
    )?;
    stray("fault", s.fault.is_none() || s.say.is_some())?;
    stray("fault_times", s.fault_times.is_none() || s.fault.is_some())?;
    stray("tools", s.tools.is_none() || s.say.is_some())?;
    stray("narration", s.narration.is_none() || s.tools.is_some())?;
    stray("more_tools", s.more_tools.is_none() || s.tools.is_some())?;
    stray("stream", s.stream.is_none() || s.say.is_some())?;
    stray(
        "during",
        s.during.is_none() || s.say.is_some() || s.launch.is_some(),
    )?;
    stray("wait_for", s.wait_for.is_none() || s.command.is_some())?;
    stray("prefill", s.prefill.is_none() || s.command.is_some())?;
    stray("expect", s.expect.is_none() || s.check.is_some())?;
    stray("known_bug", s.known_bug.is_none() || s.check.is_some())?;
    stray("client", s.client.is_none() || s.launch.is_some())?;
    stray("keys", s.keys.is_none() || s.type_.is_some())?;
    // Included steps have replaced their `include`: what is left is in no include.
    stray("steps", s.steps.is_none())?;
    Ok(())
}

/// The action of a step that names exactly one.
fn action(
    line: usize,
    s: &RawStep,
    invalid: &impl Fn(usize, String) -> ScenarioError,
) -> Result<Action, ScenarioError> {
    let action = if let Some(args) = &s.launch {
        Action::Launch {
            args: args.clone(),
            client: s.client.clone(),
            during: during::launch_entries(line, s.during.as_deref().unwrap_or_default(), invalid)?,
        }
    } else if let Some(text) = &s.say {
        say_action(line, s, text, invalid)?
    } else if let Some(text) = &s.paste {
        let reply = s.reply.clone().ok_or_else(|| {
            invalid(
                line,
                "`paste` needs the model's `reply` to the text sent as one message".into(),
            )
        })?;
        if text.trim().is_empty() || reply.trim().is_empty() {
            return Err(invalid(
                line,
                "`paste` and `reply` must not be empty".into(),
            ));
        }
        Action::Paste {
            text: text.clone(),
            reply,
        }
    } else if let Some(text) = &s.command {
        let wait_for = s.wait_for.clone().ok_or_else(|| {
            invalid(
                line,
                "`command` needs `wait_for`: the text that shows it finished".into(),
            )
        })?;
        if s.prefill.as_deref().is_some_and(|p| p.trim().is_empty()) {
            return Err(invalid(
                line,
                "`prefill` must not be empty: it is the text the command puts back".into(),
            ));
        }
        Action::Command {
            text: text.clone(),
            wait_for,
            prefill: s.prefill.clone(),
        }
    } else if let Some(id) = &s.resume {
        if id.trim().is_empty() {
            return Err(invalid(
                line,
                "`resume` needs a session id (or `{session}`)".into(),
            ));
        }
        Action::Resume(id.clone())
    } else if let Some(args) = &s.export {
        if args.is_empty() {
            return Err(invalid(
                line,
                "`export` needs the client's arguments, e.g. `[\"sessions\", \"export\", \"{out}\", …]`"
                    .into(),
            ));
        }
        Action::Export(args.clone())
    } else if let Some(size) = &s.resize {
        resize_action(line, size, invalid)?
    } else if let Some(ms) = s.settle {
        if !(50..=10_000).contains(&ms) {
            return Err(invalid(
                line,
                format!(
                    "`settle = {ms}`: the quiet time is milliseconds, 50..=10000 (the step's \
                     `deadline_secs` bounds the wait)"
                ),
            ));
        }
        Action::Settle { quiet_ms: ms }
    } else if s.quit == Some(true) {
        Action::Quit
    } else if s.quit == Some(false) {
        return Err(invalid(
            line,
            "`quit = false` is not a step; remove it".into(),
        ));
    } else if s.kill == Some(true) {
        Action::Kill
    } else if s.kill == Some(false) {
        return Err(invalid(
            line,
            "`kill = false` is not a step; remove it".into(),
        ));
    } else {
        check_action(line, s, invalid)?
    };
    Ok(action)
}

/// A `say` step: the user's text, the fake model's scripted reply, fault and tool calls.
fn say_action(
    line: usize,
    s: &RawStep,
    text: &str,
    invalid: &impl Fn(usize, String) -> ScenarioError,
) -> Result<Action, ScenarioError> {
    let reply = s.reply.clone().ok_or_else(|| {
        invalid(
            line,
            "`say` needs the model's `reply` (the fake model's script)".into(),
        )
    })?;
    if text.trim().is_empty() || reply.trim().is_empty() {
        return Err(invalid(line, "`say` and `reply` must not be empty".into()));
    }
    if s.narration.as_deref().is_some_and(|n| n.trim().is_empty()) {
        return Err(invalid(
            line,
            "`narration` must not be empty (leave it out for tool calls sent alone)".into(),
        ));
    }
    let tool_calls = checked_tool_calls(line, s.tools.as_deref().unwrap_or_default(), invalid)?;
    let mut rounds = Vec::new();
    for round in s.more_tools.iter().flatten() {
        if round.tools.is_empty()
            || round
                .narration
                .as_deref()
                .is_some_and(|n| n.trim().is_empty())
        {
            return Err(invalid(
                line,
                "each `more_tools` round needs `tools = [...]`, and a `narration` with text if any"
                    .into(),
            ));
        }
        rounds.push(crate::provider::Round {
            narration: round.narration.clone().unwrap_or_default(),
            tool_calls: checked_tool_calls(line, &round.tools, invalid)?,
        });
    }
    let stream = s
        .stream
        .as_ref()
        .map(|raw| during::pace(line, raw, invalid))
        .transpose()?;
    let during = during::entries(
        line,
        s.during.as_deref().unwrap_or_default(),
        text,
        &reply,
        invalid,
    )?;
    if !during.is_empty() && stream.is_none() {
        return Err(invalid(
            line,
            "`during` needs `stream = { chunk_chars, delay_ms }`: a reply sent at once leaves \
             no time to act while it streams"
                .into(),
        ));
    }
    if !during.is_empty() && s.fault.is_some() && s.fault_times.is_none() {
        return Err(invalid(
            line,
            "`during` with a fault on every answer: the reply never streams (set `fault_times`)"
                .into(),
        ));
    }
    if stream.is_some() && s.fault == Some(crate::provider::Fault::DropStream) {
        return Err(invalid(
            line,
            "`stream` does not combine with `fault = \"drop_stream\"` (a cut stream is sent at once)"
                .into(),
        ));
    }
    Ok(Action::Say {
        text: text.to_owned(),
        reply,
        fault: s.fault,
        fault_times: s.fault_times,
        tool_calls,
        stream,
        during,
        narration: s.narration.clone().unwrap_or_default(),
        rounds,
    })
}

/// The tool calls of `raw` (a `tools` list), checked.
fn checked_tool_calls(
    line: usize,
    raw: &[RawToolCall],
    invalid: &impl Fn(usize, String) -> ScenarioError,
) -> Result<Vec<crate::provider::ToolCall>, ScenarioError> {
    let mut out = Vec::new();
    for call in raw {
        if call.name.trim().is_empty() {
            return Err(invalid(line, "a tool call needs a `name`".into()));
        }
        let arguments = serde_json::to_value(&call.arguments)
            .map_err(|e| invalid(line, format!("tool `{}`: arguments: {e}", call.name)))?;
        out.push(crate::provider::ToolCall {
            name: call.name.clone(),
            arguments,
        });
    }
    Ok(out)
}

/// A `type` step: the text typed at the cursor of `composer` and the keys pressed after it,
/// each with what the composer holds afterwards.
fn type_action(
    line: usize,
    text: &str,
    keys: Option<&[EditKey]>,
    composer: &mut Line,
    invalid: &impl Fn(usize, String) -> ScenarioError,
) -> Result<Action, ScenarioError> {
    let keys = keys.unwrap_or_default();
    if text.is_empty() && keys.is_empty() {
        return Err(invalid(
            line,
            "`type = \"\"` needs `keys = [...]`: a step that types nothing and presses nothing"
                .into(),
        ));
    }
    if text.chars().any(char::is_control) {
        return Err(invalid(
            line,
            "`type` is text without Enter or control characters (a `say` or `command` step \
             sends a line; editing keys go in `keys`)"
                .into(),
        ));
    }
    composer.insert(text);
    let typed = composer.text();
    let keys = keys
        .iter()
        .map(|&k| {
            composer.press(k);
            (k, composer.text())
        })
        .collect();
    Ok(Action::Type {
        text: text.to_owned(),
        typed,
        keys,
    })
}

/// A `resize` step: `COLSxROWS` within the bounds of a scenario's size.
fn resize_action(
    line: usize,
    size: &str,
    invalid: &impl Fn(usize, String) -> ScenarioError,
) -> Result<Action, ScenarioError> {
    let crate::terminal::Size { cols, rows } = size.parse().map_err(|_| {
        invalid(
            line,
            format!("`resize = \"{size}\"`: expected `COLSxROWS`, e.g. `80x24`"),
        )
    })?;
    if !(10..=1000).contains(&rows) || !(40..=1000).contains(&cols) {
        return Err(invalid(
            line,
            format!("`resize` must be 40..=1000 cols and 10..=1000 rows, got {size}"),
        ));
    }
    Ok(Action::Resize { rows, cols })
}

/// A `check` step: its name and the exact findings expected.
fn check_action(
    line: usize,
    s: &RawStep,
    invalid: &impl Fn(usize, String) -> ScenarioError,
) -> Result<Action, ScenarioError> {
    let name = s.check.clone().unwrap_or_default();
    if s.known_bug.as_deref().is_some_and(|b| b.trim().is_empty()) {
        return Err(invalid(
            line,
            "`known_bug` must not be empty: it says what client defect the check pins".into(),
        ));
    }
    let mut expect = s
        .expect
        .as_ref()
        .ok_or_else(|| {
            invalid(
                line,
                "`check` needs `expect = { … }` (exact numbers)".into(),
            )
        })?
        .typed()
        .map_err(|e| invalid(line, e.to_string()))?;
    expect.known_bug = s.known_bug.clone();
    Ok(Action::Check { name, expect })
}
