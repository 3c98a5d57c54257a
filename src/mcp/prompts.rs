//! The text of cairn's MCP prompts.

use crate::app::Bootstrap;
use crate::memory::Memory;

/// Instructions for turning a finished review into `remember` calls.
pub fn extract_learnings(
    developer: Option<&str>,
    profile: Option<&Memory>,
    review: Option<&str>,
) -> String {
    let who = developer.map_or("the author".to_string(), |d| format!("@{d}"));
    let profile_text = match (developer, profile) {
        (Some(_), Some(p)) => format!(
            "Current contributor profile of {who} ({}):\n> {}\n",
            p.id, p.content
        ),
        (Some(_), None) => format!("{who} has no contributor profile yet.\n"),
        (None, _) => "No developer given: skip developer-scoped learnings.\n".to_string(),
    };
    let review_text = review.map_or(String::new(), |r| {
        format!("\nThe review:\n<review>\n{}\n</review>\n", r.trim())
    });
    format!(
        "Extract durable learnings from the finished code review below and store each with one \
`remember` call. Store only what will still be true and useful in a later review of this \
repository; skip anything specific to this one diff, anything already served by cairn (lines \
that start with a memory id), and never copy secrets, tokens or credentials.

Kinds to look for (type = the value to pass):
1. project_pattern — a convention this codebase follows (\"every DB write goes through a \
transaction helper\"). Anchor on the paths it governs.
2. decision — a choice made and why (\"PR #42: no eager loading on the feed, N+1 risk \
accepted\"). Put the PR or review id in source_ref.
3. developer_pattern — a habit of {who} a reviewer should watch for (\"forgets to close \
connections in error paths\"). developer is required.
4. developer_strength — what {who} does well. developer is required.
5. risk_module — a file or module that needs extra care, and why. Anchor on its path.
6. contributor_profile — one short paragraph about {who}: areas, habits, strengths. It \
replaces the current profile (kept in history): merge what the profile already says with \
what this review adds.
7. rejection_pattern — a review comment the author rejected with a good reason, so it is not \
raised again (\"flagging missing type hints in tests/ is noise here\"). Anchor on the file.

{profile_text}
Rules: 1–3 sentences per memory, specific (names, paths, identifiers), one learning per call. \
If a learning contradicts an existing memory, pass its id as supersedes. Use \
search_project_memory first to avoid repeating what is known; cairn also deduplicates and \
answers each write with ADD, UPDATE, NONE or SUPERSEDE.{review_text}"
    )
}

/// How to work with cairn in this repository, with the top project memories.
pub fn session_start(repo: &str, memories: &[String]) -> String {
    let known = if memories.is_empty() {
        "No memories are stored for this repository yet.".to_string()
    } else {
        format!(
            "What the team has learned here (most important first):\n{}",
            memories.join("\n")
        )
    };
    format!(
        "You are working in {repo}; cairn knows its code graph and its review memory.\n\
- Start with get_context (pass a focus: the paths or the task) for the shape, the top files and \
symbols, hot spots and the team's memories.\n\
- Before changing a file or symbol, expand it: callers with lines, tests that reach it, blast \
radius, and the memories anchored on it.\n\
- Before reviewing or deciding, search_project_memory for patterns, decisions, risks and \
rejected suggestions; search_developer_memory for the author's habits.\n\
- When a review or session teaches something durable, store it with remember (one learning per \
call, with paths); the extract_learnings prompt walks through it.\n\n{known}"
    )
}

/// How to review a change with cairn, from the briefing to the recorded outcome.
pub fn review(base: Option<&str>, head: Option<&str>, author: Option<&str>) -> String {
    let mut args: Vec<String> = Vec::new();
    if let Some(base) = base {
        args.push(format!("base: \"{base}\""));
    }
    if let Some(head) = head {
        args.push(format!("head: \"{head}\""));
    }
    if let Some(author) = author {
        args.push(format!("author: \"{author}\""));
    }
    let call = if args.is_empty() {
        "review_diff with no arguments (the working tree and index against HEAD)".to_string()
    } else {
        format!("review_diff with {}", args.join(", "))
    };
    let who = author.map_or("the author".to_string(), |a| format!("@{a}"));
    format!(
        "Review this change with cairn.\n\n\
1. Call {call}. It lists the changed symbols with their callers (with lines), the tests to \
run, the changed code no test reaches, side effects the change adds, risky files, the team's \
patterns and decisions, rejection patterns and rule categories that are usually rejected here, \
{who}'s habits, the files' experts, and files that usually change together with these.\n\
2. expand any symbol whose callers or dependents you need to read (include source when the \
diff alone is not enough).\n\
3. Review: check the change against the patterns and decisions; raise nothing the rejection \
patterns say is noise here, and be sparing with categories the briefing lists as usually \
rejected; ask for tests where changed code is unreached; name co-change partners that seem \
forgotten. Give each finding a category (e.g. correctness, security, error-handling, naming, \
tests, performance, style), a file and line, and a message.\n\
4. When {who} has answered, call record_review with the verdict, every finding with its \
disposition (implemented, rejected with the reason, or deferred), the author, and a \
review_id (the PR number) so a repeat does not count twice. Add learnings for anything durable \
(see the extract_learnings prompt): patterns, decisions, risks, {who}'s habits and strengths.\n"
    )
}

/// Asks for `framework_knowledge` memories about the frameworks the manifests name, after
/// saying which of them cairn ships knowledge for and how much of it is stored.
pub fn bootstrap_framework_knowledge(repo: &str, plan: &Bootstrap) -> String {
    if plan.detected.is_empty() {
        let mut text = format!(
            "cairn found no framework it recognises in the manifests of {repo} (pyproject.toml, \
requirements*.txt, setup.cfg, package.json, go.mod, Cargo.toml, pom.xml, build.gradle, \
composer.json, Gemfile). If the code uses a framework anyway, you may still store facts about it \
as below."
        );
        push_notes(&mut text, plan);
        text.push_str(&remember_shape());
        return text;
    }
    let mut text = format!(
        "Write framework knowledge for {repo}: review-relevant facts about the frameworks it \
uses, stored with remember so reviews, expand and the context pack can serve them.\n\n\
Frameworks detected in the manifests:"
    );
    let lines = detection_lines(plan);
    for line in lines.iter().take(LISTED_DETECTIONS) {
        text.push_str(&format!("\n- {line}"));
    }
    if lines.len() > LISTED_DETECTIONS {
        text.push_str(&format!("\n- and {} more", lines.len() - LISTED_DETECTIONS));
    }
    let mut shipped: Vec<(&str, Vec<&crate::app::Seeded>)> = Vec::new();
    for s in &plan.seeded {
        match shipped.iter_mut().find(|(name, _)| *name == s.framework) {
            Some((_, list)) => list.push(s),
            None => shipped.push((&s.framework, vec![s])),
        }
    }
    if !shipped.is_empty() {
        text.push_str("\n\nKnowledge cairn ships for them (framework_knowledge, from the official documentation):");
    }
    for (name, memories) in &shipped {
        let stored = memories.iter().filter(|s| s.stored).count();
        let state = if stored == memories.len() {
            "all stored".to_string()
        } else {
            format!(
                "{stored} stored; `cairn bootstrap` seeds the other {}",
                memories.len() - stored
            )
        };
        text.push_str(&format!(
            "\n- {name}: {} memories, {state}:",
            memories.len()
        ));
        for s in memories {
            text.push_str(&format!("\n  - {}", s.title));
        }
    }
    if !plan.without_knowledge.is_empty() {
        text.push_str(&format!(
            "\n\nDetected without shipped knowledge: {}.",
            plan.without_knowledge.join(", ")
        ));
    }
    push_notes(&mut text, plan);
    text.push_str(
        "\n\nFor each detected framework (first those without shipped knowledge), store 3–6 \
further facts a reviewer can check in a diff of this repository: an API that behaves \
surprisingly, a security default, a performance trap, a change in the detected version that \
matters. Do not repeat the shipped facts listed above. Nothing is fetched for you: write only \
what you know to be true of the detected version from the framework's official documentation, \
and skip a framework rather than guess. Use search_project_memory first to see what is known.",
    );
    text.push_str(&remember_shape());
    text
}

/// Most framework and version lines listed (a monorepo may have hundreds).
const LISTED_DETECTIONS: usize = 40;
/// Most unreadable manifests listed.
const LISTED_NOTES: usize = 20;
/// Most manifests named per framework and version.
const LISTED_MANIFESTS: usize = 5;

/// One line per framework and version specification: `Django (python package django, version
/// >=4.2) in pyproject.toml, services/api/pyproject.toml`, at most five manifests named.
fn detection_lines(plan: &Bootstrap) -> Vec<String> {
    let mut lines: Vec<(String, Vec<&str>)> = Vec::new();
    for d in &plan.detected {
        let version = d
            .version
            .as_deref()
            .map_or("no version given".to_string(), |v| format!("version {v}"));
        let head = format!(
            "{} ({} package {}, {version})",
            d.framework, d.ecosystem, d.package
        );
        match lines.iter_mut().find(|(h, _)| *h == head) {
            Some((_, manifests)) => manifests.push(&d.manifest),
            None => lines.push((head, vec![&d.manifest])),
        }
    }
    lines
        .into_iter()
        .map(|(head, manifests)| {
            let mut named = manifests[..manifests.len().min(LISTED_MANIFESTS)].join(", ");
            if manifests.len() > LISTED_MANIFESTS {
                named.push_str(&format!(" and {} more", manifests.len() - LISTED_MANIFESTS));
            }
            format!("{head} in {named}")
        })
        .collect()
}

fn push_notes(text: &mut String, plan: &Bootstrap) {
    if plan.notes.is_empty() {
        return;
    }
    text.push_str("\n\nManifests cairn could not read:");
    for note in plan.notes.iter().take(LISTED_NOTES) {
        if note.manifest.is_empty() {
            text.push_str(&format!("\n- {}", note.reason));
        } else {
            text.push_str(&format!("\n- {}: {}", note.manifest, note.reason));
        }
    }
    if plan.notes.len() > LISTED_NOTES {
        text.push_str(&format!("\n- and {} more", plan.notes.len() - LISTED_NOTES));
    }
}

/// The `remember` call one framework fact takes.
fn remember_shape() -> String {
    "\n\nOne fact per remember call:\n\
{\"type\": \"framework_knowledge\", \"title\": \"<framework>: <short title>\", \"content\": \"<1–3 \
sentences naming the framework and the API>\", \"source\": \"import\", \"source_ref\": \"<https link to \
the official documentation page>\", \"file_pattern\": \"<the files it applies to, a gitignore-style \
glob such as **/*.py>\"}\n\
A generic file_pattern stores the fact for the whole organisation (scope org); add \"scope\": \
\"repository\" to keep it to this repository. Add \"paths\" only for files of this repository the fact is about. cairn deduplicates every \
write: NONE means it is known already."
        .to_string()
}
