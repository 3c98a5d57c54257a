//! `cairn review`, `cairn record-review` and `cairn rules`: what `review_diff` and
//! `record_review` answer, and the rule statistics.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context as _;
use cairn::app::{
    AddressedRequest, Cairn, GuidelineChangeRequest, ProposeRequest, RecordReviewRequest,
    ReviewRequest, Rules, RulesRequest,
};
use cairn::review::stats::{ChangeEffect, RuleStat, Window, is_high_rejection};
use cairn::secrets;

use super::{ReviewArgs, RulesArgs, output};

/// `cairn review`.
pub async fn review(cairn: &Cairn, args: ReviewArgs) -> anyhow::Result<ExitCode> {
    let request = ReviewRequest {
        diff: match &args.diff {
            Some(path) => Some(read_input(path)?),
            None => None,
        },
        base: args.base,
        head: args.head,
        author: args.author,
        max_tokens: args.max_tokens,
    };
    output::answer(&cairn.review(request).await?, args.json)?;
    Ok(ExitCode::SUCCESS)
}

/// `cairn record-review`: the `record_review` arguments as JSON, from a file or stdin.
pub async fn record_review(cairn: &Cairn, file: &Path, json: bool) -> anyhow::Result<ExitCode> {
    let text = read_input(file)?;
    let mut request: RecordReviewRequest = from_json(file, &text, "record_review")?;
    request.written_by = std::env::var("USER").ok();
    let recorded = cairn.record_review(request).await?;
    output::answer(&recorded, json)?;
    Ok(ExitCode::SUCCESS)
}

/// `cairn rules`, `cairn rules --addressed CATEGORY`, `--propose` or `--record FILE`.
pub async fn rules(cairn: &Cairn, args: RulesArgs) -> anyhow::Result<ExitCode> {
    if args.propose {
        let request = ProposeRequest {
            files: args.files,
            min_sample: args.min_sample,
            min_rate: args.min_rate,
            max_tokens: args.max_tokens,
        };
        output::answer(&cairn.propose_guidelines(request).await?, args.json)?;
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(file) = &args.record {
        let text = read_input(file)?;
        let mut request: GuidelineChangeRequest =
            from_json(file, &text, "record_guideline_change")?;
        request.written_by = std::env::var("USER").ok();
        output::answer(&cairn.record_guideline_change(request).await?, args.json)?;
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(category) = args.addressed {
        let addressed = cairn.mark_addressed(AddressedRequest { category }).await?;
        let ids = &addressed.ids;
        output::line(format!(
            "{} rejection pattern{} of `{}` marked addressed{}",
            ids.len(),
            if ids.len() == 1 { "" } else { "s" },
            addressed.category,
            if ids.is_empty() {
                String::new()
            } else {
                format!(": {}", ids.join(", "))
            }
        ))?;
        return Ok(ExitCode::SUCCESS);
    }
    let request = RulesRequest {
        min_sample: args.min_sample,
        min_rate: args.min_rate,
    };
    let rules = cairn.rules(request).await?;
    if args.json {
        output::json(&rules)?;
    } else {
        output::text(rules_report(&rules))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// A file's text, or stdin's for `-`; more than [`MAX_DIFF_BYTES`] is refused before it is
/// parsed, with the limit named.
///
/// [`MAX_DIFF_BYTES`]: cairn::review::diff::MAX_DIFF_BYTES
fn read_input(path: &Path) -> anyhow::Result<String> {
    use std::io::Read as _;
    const LIMIT: usize = cairn::review::diff::MAX_DIFF_BYTES;
    let name = if path.as_os_str() == "-" {
        "stdin".to_string()
    } else {
        path.display().to_string()
    };
    let mut bytes = Vec::new();
    let read = if path.as_os_str() == "-" {
        std::io::stdin()
            .take(LIMIT as u64 + 1)
            .read_to_end(&mut bytes)
    } else {
        std::fs::File::open(path).and_then(|f| f.take(LIMIT as u64 + 1).read_to_end(&mut bytes))
    };
    read.with_context(|| format!("cannot read {name}"))?;
    if bytes.len() > LIMIT {
        anyhow::bail!(
            "{name} is larger than the limit of {} MiB",
            LIMIT / (1024 * 1024)
        );
    }
    String::from_utf8(bytes).with_context(|| format!("cannot read {name} as text"))
}

/// `text`, read from `file`, as the JSON object of the tool `tool`; an error says what is
/// wrong and where without quoting the input.
fn from_json<T: serde::de::DeserializeOwned>(
    file: &Path,
    text: &str,
    tool: &str,
) -> anyhow::Result<T> {
    serde_json::from_str(text).map_err(|e| {
        anyhow::anyhow!(
            "{} is not a {tool} JSON object: {}",
            file.display(),
            secrets::json_error(text, &e)
        )
    })
}

/// The `cairn rules` report: categories by rejection rate, high ones marked.
fn rules_report(rules: &Rules) -> String {
    let (stats, min_sample, min_rate) = (&rules.stats, rules.min_sample, rules.min_rate);
    if stats.is_empty() {
        return "no review outcomes recorded yet (record_review)".to_string();
    }
    let mut sorted: Vec<&RuleStat> = stats.iter().collect();
    sorted.sort_by(|a, b| {
        b.rejection_rate
            .total_cmp(&a.rejection_rate)
            .then(b.flagged.cmp(&a.flagged))
            .then(a.category.cmp(&b.category))
    });
    let mut text = format!(
        "{:<24} {:>7} {:>11} {:>8} {:>8} {:>9}\n",
        "category", "flagged", "implemented", "rejected", "deferred", "rejection"
    );
    for s in &sorted {
        let high = is_high_rejection(s, min_sample, min_rate);
        text.push_str(&format!(
            "{:<24} {:>7} {:>11} {:>8} {:>8} {:>8.0}%{}\n",
            s.category,
            s.flagged,
            s.implemented,
            s.rejected,
            s.deferred,
            s.rejection_rate * 100.0,
            if high { "  ← high" } else { "" }
        ));
    }
    let high: Vec<&&RuleStat> = sorted
        .iter()
        .filter(|s| is_high_rejection(s, min_sample, min_rate))
        .collect();
    if high.is_empty() {
        text.push_str(&format!(
            "\nno category is rejected in {:.0}%+ of at least {min_sample} findings",
            min_rate * 100.0
        ));
    } else {
        text.push_str("\nHigh-rejection categories (`cairn rules --propose` asks for guideline changes; record them with `cairn rules --record`):\n");
        for s in high {
            text.push_str(&format!(
                "- {}: {} of {} rejected; supporting memories: {}\n",
                s.category,
                s.rejected,
                s.flagged,
                if s.memories.is_empty() {
                    "none".to_string()
                } else {
                    s.memories.join(", ")
                }
            ));
        }
    }
    let changes: Vec<(&str, &ChangeEffect)> = sorted
        .iter()
        .flat_map(|s| s.changes.iter().map(|c| (s.category.as_str(), c)))
        .collect();
    if !changes.is_empty() {
        text.push_str("\nGuideline changes:\n");
        for (category, change) in changes {
            text.push_str(&change_line(category, change));
        }
    }
    text
}

/// One guideline change: where, what became of it, and for an accepted one the category's
/// rejection rate before and after.
fn change_line(category: &str, c: &ChangeEffect) -> String {
    let place = match &c.section {
        Some(section) => format!("{} § {section}", c.file),
        None => c.file.clone(),
    };
    let mut line = format!(
        "- {} {} {} · {category} · {place}",
        c.id,
        c.outcome,
        cairn::clock::date_of(c.at / 1000)
    );
    if let (Some(before), Some(after)) = (&c.before, &c.after) {
        line.push_str(&format!(
            ": rejection rate {} before → {} after",
            window(before),
            window(after)
        ));
    }
    if !c.addressed.is_empty() {
        line.push_str(&format!(" (addressed {})", c.addressed.join(", ")));
    }
    line.push('\n');
    line
}

/// A rate with its sample: `100% of 3 findings in 3 reviews`, or `no findings yet`.
fn window(w: &Window) -> String {
    if w.flagged == 0 {
        return "— (no findings yet)".to_string();
    }
    format!(
        "{:.0}% of {} finding{} in {} review{}",
        w.rejection_rate * 100.0,
        w.flagged,
        if w.flagged == 1 { "" } else { "s" },
        w.reviews,
        if w.reviews == 1 { "" } else { "s" }
    )
}
