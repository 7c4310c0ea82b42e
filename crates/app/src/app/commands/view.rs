//! What the rows show and the overlays: sort, metric, metric2, pick-metric, prompt,
//! help, quit.

use std::fmt;

use crate::app::command::{
    quote, Command, Input, KernelsSpec, MetricChoice, ParseError, PromptKind, SortSpec,
};
use crate::app::{App, CmdError, Mode, SortKey};

pub fn parse_sort(i: &Input) -> Result<Command, ParseError> {
    let args = i.args;
    match args {
        [] => Err(i.missing("expected 'next' or a sort key")),
        [t] if t.text == "next" && !t.quoted => Ok(Command::Sort(SortSpec::Next)),
        _ => {
            let (key_toks, descending) = match args.last() {
                Some(t) if !t.quoted && (t.text == "asc" || t.text == "desc") => {
                    (&args[..args.len() - 1], t.text == "desc")
                }
                _ => (args, true),
            };
            let (Some(first), Some(last)) = (key_toks.first(), key_toks.last()) else {
                return Err(Input::at(
                    &args[0],
                    "expected a sort key before the direction",
                ));
            };
            let key = if key_toks.len() == 1 {
                first.text.clone()
            } else {
                i.text[first.pos..last.pos + last.len].to_string()
            };
            // Names and data order sort ascending unless told otherwise.
            let descending = if key == "name" || key == "data" {
                matches!(args.last(), Some(t) if t.text == "desc")
            } else {
                descending
            };
            Ok(Command::Sort(SortSpec::By { key, descending }))
        }
    }
}

pub fn metric_choice(i: &Input, allow_off: bool) -> Result<MetricChoice, ParseError> {
    let m = i.rest("a metric name or 'next'")?;
    Ok(match m.as_str() {
        "next" if !i.args[0].quoted => MetricChoice::Next,
        "off" if allow_off && !i.args[0].quoted => MetricChoice::Off,
        _ => MetricChoice::Named(m),
    })
}

pub fn parse_prompt(i: &Input) -> Result<Command, ParseError> {
    let w = i.word(&["search", "command"], "expected 'search' or 'command'")?;
    Ok(Command::Prompt(if w == "search" {
        PromptKind::Search
    } else {
        PromptKind::Command
    }))
}

pub fn print(c: &Command, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    match c {
        Command::Sort(SortSpec::Next) => f.write_str("sort next"),
        Command::Sort(SortSpec::By { key, descending }) => write!(
            f,
            "sort {} {}",
            quote(key),
            if *descending { "desc" } else { "asc" }
        ),
        Command::Metric(m) | Command::Metric2(m) => match m {
            MetricChoice::Next => write!(f, "{} next", c.name()),
            MetricChoice::Off => write!(f, "{} off", c.name()),
            MetricChoice::Named(n) => write!(f, "{} {}", c.name(), quote(n)),
        },
        Command::Prompt(PromptKind::Search) => f.write_str("prompt search"),
        Command::Prompt(PromptKind::Command) => f.write_str("prompt command"),
        _ => f.write_str(c.name()),
    }
}

impl App {
    pub(super) fn view_command(&mut self, cmd: Command) -> Result<Option<Command>, CmdError> {
        match cmd {
            // In the kernel table, `s` cycles the table's order.
            Command::Sort(SortSpec::Next)
                if self.panel.is(&crate::app::panels::kernels::Kernels) =>
            {
                self.panel_command(Command::Kernels(KernelsSpec {
                    by: Some("next".into()),
                    ..Default::default()
                }))
            }
            Command::Sort(spec) => {
                self.sort = match spec {
                    SortSpec::Next => self.next_sort(),
                    SortSpec::By { key, descending } => match key.as_str() {
                        "name" => SortKey::Name { descending },
                        "data" => SortKey::Data,
                        k => SortKey::Metric {
                            column: self
                                .profile
                                .metrics
                                .resolve(k)
                                .ok_or_else(|| self.unknown_metric(k))?,
                            descending,
                        },
                    },
                };
                self.resort();
                let label = self.sort_label();
                self.info(format!("sorted by {label}"));
                Ok(Some(Command::Sort(self.sort_spec())))
            }
            Command::Metric(choice) => {
                let m = self.choose_metric(&choice, Some(&self.metric.clone()))?;
                let Some(m) = m else {
                    return Err("the primary metric cannot be off".into());
                };
                let followed = matches!(&self.sort, SortKey::Metric { column, .. } if *column == self.inclusive_column());
                self.metric = m.clone();
                // The second metric is never the primary: it would repeat its column.
                if self.metric2.as_deref() == Some(m.as_str()) {
                    self.metric2 = self.other_metric(&m);
                }
                self.refresh_metric();
                if followed {
                    self.sort = SortKey::Metric {
                        column: self.inclusive_column(),
                        descending: true,
                    };
                    self.resort();
                }
                self.mode = Mode::Normal;
                Ok(Some(Command::Metric(MetricChoice::Named(m))))
            }
            Command::Metric2(choice) => {
                let cur = self.metric2.clone();
                let mut m2 = self.choose_metric(&choice, cur.as_ref())?;
                if m2.as_deref() == Some(self.metric.as_str()) {
                    if matches!(choice, MetricChoice::Named(_)) {
                        return Err(format!(
                            "{} is the primary metric already; pick another second metric",
                            self.metric
                        )
                        .into());
                    }
                    // Cycling steps over the primary.
                    m2 = self.choose_metric(&choice, m2.as_ref())?;
                    if m2.as_deref() == Some(self.metric.as_str()) {
                        m2 = None;
                    }
                }
                self.metric2 = m2;
                Ok(Some(Command::Metric2(match &self.metric2 {
                    Some(m) => MetricChoice::Named(m.clone()),
                    None => MetricChoice::Off,
                })))
            }
            Command::PickMetric => {
                let names = self.profile.metrics.picker_metrics();
                let selected = names.iter().position(|m| *m == self.metric).unwrap_or(0);
                self.mode = Mode::MetricPicker { selected };
                Ok(Some(cmd))
            }
            Command::Prompt(kind) => {
                self.mode = Mode::Prompt {
                    kind,
                    input: String::new(),
                    history_pos: None,
                };
                Ok(Some(cmd))
            }
            Command::Help => {
                self.mode = Mode::Help { scroll: 0 };
                Ok(Some(cmd))
            }
            Command::Messages => {
                if self.profile.warnings.is_empty() && self.past_messages.is_empty() {
                    self.info("no messages");
                } else {
                    self.mode = Mode::Messages { scroll: 0 };
                }
                Ok(Some(cmd))
            }
            Command::Scroll(details, n) => {
                self.scroll(details, n);
                Ok(Some(cmd))
            }
            Command::TogglePane(details) => {
                let (flag, what) = if details {
                    (&mut self.hide_details, "details pane")
                } else {
                    (&mut self.hide_count, "count column")
                };
                *flag = !*flag;
                let now = if *flag { "hidden" } else { "shown" };
                self.info(format!("{what} {now}"));
                Ok(Some(cmd))
            }
            Command::Quit => {
                self.quit = true;
                Ok(Some(cmd))
            }
            other => Err(format!("{other} is not a view command").into()),
        }
    }

    /// The default second metric beside `primary`: the first other base metric that
    /// is not `count` (count has a column of its own).
    fn other_metric(&self, primary: &str) -> Option<String> {
        self.profile
            .metrics
            .base_metrics()
            .into_iter()
            .find(|m| m != primary && m != "count")
    }

    pub(in crate::app) fn unknown_metric(&self, m: &str) -> String {
        let names = self.profile.metrics.names();
        let hint = crate::present::suggest::did_you_mean(m, names.iter().map(String::as_str));
        format!("unknown metric {m:?}{hint} (metrics: {})", names.join(", "))
    }

    fn choose_metric(
        &self,
        choice: &MetricChoice,
        current: Option<&String>,
    ) -> Result<Option<String>, CmdError> {
        let names = self.profile.metrics.base_metrics();
        match choice {
            MetricChoice::Off => Ok(None),
            MetricChoice::Named(m) => match self.profile.metrics.resolve(m) {
                Some(col) => Ok(Some(col)),
                None => Err(self.unknown_metric(m).into()),
            },
            MetricChoice::Next => {
                if names.is_empty() {
                    return Err("this profile has no metrics".into());
                }
                let i = current
                    .and_then(|c| names.iter().position(|m| m == c))
                    .map(|i| (i + 1) % names.len())
                    .unwrap_or(0);
                Ok(Some(names[i].clone()))
            }
        }
    }

    /// s cycles: primary inclusive, primary exclusive, name, data order.
    fn next_sort(&self) -> SortKey {
        let inc = self.inclusive_column();
        let exc = self.metric.clone();
        match &self.sort {
            SortKey::Metric { column, .. } if *column == inc && inc != exc => SortKey::Metric {
                column: exc,
                descending: true,
            },
            SortKey::Metric { .. } => SortKey::Name { descending: false },
            SortKey::Name { .. } => SortKey::Data,
            SortKey::Data => SortKey::Metric {
                column: inc,
                descending: true,
            },
        }
    }

    fn sort_spec(&self) -> SortSpec {
        match &self.sort {
            SortKey::Data => SortSpec::By {
                key: "data".into(),
                descending: false,
            },
            SortKey::Name { descending } => SortSpec::By {
                key: "name".into(),
                descending: *descending,
            },
            SortKey::Metric { column, descending } => SortSpec::By {
                key: column.clone(),
                descending: *descending,
            },
        }
    }
}
