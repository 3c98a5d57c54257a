//! What reviewers say again and again: findings of the recorded reviews grouped when they
//! say the same thing (the caller judges similarity, by terms and by meaning as duplicates
//! are judged), and the groups that recur enough turned into proposals: a project pattern, a
//! rejection pattern (most of the group was rejected), and a developer pattern per author
//! whose changes draw it again and again. cairn groups, counts and quotes; a person approves,
//! an assistant may phrase.

use std::collections::{BTreeMap, BTreeSet};

use super::records::{Disposition, Finding, ReviewRecord};

/// Fewest findings a group needs to be proposed…
pub const MIN_FINDINGS: usize = 3;
/// …from at least this many reviews.
pub const MIN_REVIEWS: usize = 2;
/// Examples a proposal quotes.
pub const EXAMPLES: usize = 5;
/// A developer pattern needs the author's share of the group to be at least this many times
/// their share of all findings: it recurs on their changes, not merely because they change
/// much.
pub const AUTHOR_LIFT: f64 = 2.0;

/// One finding of one review, by position.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct At {
    pub review: usize,
    pub finding: usize,
}

/// Every finding of `reviews`, in order.
pub fn occurrences(reviews: &[ReviewRecord]) -> Vec<At> {
    reviews
        .iter()
        .enumerate()
        .flat_map(|(review, r)| (0..r.findings.len()).map(move |finding| At { review, finding }))
        .collect()
}

/// Groups of items that say the same thing: `similar(a, b)` links two items, groups are
/// what links connect (union–find); `candidates(a)` names the items worth comparing with
/// `a`. Groups come largest first, each in item order.
pub fn group(
    count: usize,
    candidates: impl Fn(usize) -> Vec<usize>,
    similar: impl Fn(usize, usize) -> bool,
) -> Vec<Vec<usize>> {
    let mut parent: Vec<usize> = (0..count).collect();
    fn root(parent: &mut [usize], mut at: usize) -> usize {
        while parent[at] != at {
            parent[at] = parent[parent[at]];
            at = parent[at];
        }
        at
    }
    for a in 0..count {
        for b in candidates(a) {
            if b <= a || b >= count {
                continue;
            }
            let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
            if ra != rb && similar(a, b) {
                parent[ra.max(rb)] = ra.min(rb);
            }
        }
    }
    let mut groups: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for item in 0..count {
        let r = root(&mut parent, item);
        groups.entry(r).or_default().push(item);
    }
    let mut groups: Vec<Vec<usize>> = groups.into_values().collect();
    groups.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    groups
}

/// What a proposal would teach.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Teaches {
    /// Reviewers ask for this here; the team does it.
    ProjectPattern,
    /// Reviewers raise this here and the team rejects it.
    RejectionPattern,
    /// Reviewers raise this on one developer's changes again and again.
    DeveloperPattern { developer: String },
}

/// A finding a proposal quotes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Example {
    pub review: String,
    pub message: String,
    pub disposition: Disposition,
}

/// A recurring finding, as a learning to propose.
#[derive(Debug, Clone, PartialEq)]
pub struct Proposal {
    pub teaches: Teaches,
    pub category: String,
    /// Findings in the group (for a developer pattern, those on the developer's changes).
    pub findings: usize,
    pub reviews: usize,
    pub rejected: usize,
    /// The finding that says it best: the one most alike the others, shortest on ties.
    pub quote: String,
    /// The reason given most recently when such findings were rejected.
    pub reason: Option<String>,
    pub examples: Vec<Example>,
    /// Files the findings were on, most frequent first.
    pub paths: Vec<String>,
    /// The glob the files share, when they share one: a directory (`src/api/**`) or an
    /// extension (`*.py`).
    pub file_pattern: Option<String>,
}

/// The proposals a group makes: a project or rejection pattern when it recurs across
/// reviews, and a developer pattern for each author it recurs on more than on others (their
/// share of the group at least [`AUTHOR_LIFT`] times `share(author)`, their share of all
/// findings). `degree(item)` is how many of the group an item is alike (to pick the quote).
pub fn proposals(
    reviews: &[ReviewRecord],
    members: &[At],
    degree: impl Fn(At) -> usize,
    share: impl Fn(&str) -> f64,
) -> Vec<Proposal> {
    let mut out = Vec::new();
    if let Some(mut proposal) = proposal(reviews, members, &degree) {
        if proposal.rejected * 2 >= proposal.findings {
            proposal.teaches = Teaches::RejectionPattern;
        }
        out.push(proposal);
    }
    let mut by_author: BTreeMap<&str, Vec<At>> = BTreeMap::new();
    for at in members {
        let author = reviews[at.review].author.as_str();
        by_author.entry(author).or_default().push(*at);
    }
    for (author, mine) in by_author {
        let lift = mine.len() as f64 / members.len() as f64 / share(author).max(f64::EPSILON);
        if lift < AUTHOR_LIFT {
            continue;
        }
        if let Some(mut proposal) = proposal(reviews, &mine, &degree) {
            proposal.teaches = Teaches::DeveloperPattern {
                developer: author.to_string(),
            };
            out.push(proposal);
        }
    }
    out
}

fn finding(reviews: &[ReviewRecord], at: At) -> &Finding {
    &reviews[at.review].findings[at.finding]
}

/// A group as a project pattern, when it recurs enough.
fn proposal(
    reviews: &[ReviewRecord],
    members: &[At],
    degree: &impl Fn(At) -> usize,
) -> Option<Proposal> {
    let distinct: BTreeSet<usize> = members.iter().map(|at| at.review).collect();
    if members.len() < MIN_FINDINGS || distinct.len() < MIN_REVIEWS {
        return None;
    }
    let best = members.iter().copied().max_by(|a, b| {
        let (fa, fb) = (finding(reviews, *a), finding(reviews, *b));
        degree(*a)
            .cmp(&degree(*b))
            .then_with(|| fb.message.len().cmp(&fa.message.len()))
            .then_with(|| b.cmp(a))
    })?;
    let rejected: Vec<At> = members
        .iter()
        .copied()
        .filter(|at| finding(reviews, *at).disposition == Disposition::Rejected)
        .collect();
    let reason = rejected
        .iter()
        .max_by_key(|at| reviews[at.review].at)
        .and_then(|at| finding(reviews, *at).reason.clone());
    let mut categories: BTreeMap<&str, usize> = BTreeMap::new();
    let mut paths: BTreeMap<&str, usize> = BTreeMap::new();
    for at in members {
        let f = finding(reviews, *at);
        *categories.entry(f.category.as_str()).or_default() += 1;
        if let Some(file) = &f.file {
            *paths.entry(file.as_str()).or_default() += 1;
        }
    }
    let category = categories
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(a.0)))
        .map(|(c, _)| c.to_string())?;
    let all_paths: Vec<&str> = paths.keys().copied().collect();
    let mut ranked: Vec<(&str, usize)> = paths.into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    let mut newest: Vec<At> = members.to_vec();
    newest.sort_by_key(|at| std::cmp::Reverse(reviews[at.review].at));
    Some(Proposal {
        teaches: Teaches::ProjectPattern,
        category,
        findings: members.len(),
        reviews: distinct.len(),
        rejected: rejected.len(),
        quote: finding(reviews, best).message.clone(),
        reason,
        examples: newest
            .iter()
            .take(EXAMPLES)
            .map(|at| Example {
                review: reviews[at.review].id.clone(),
                message: finding(reviews, *at).message.clone(),
                disposition: finding(reviews, *at).disposition,
            })
            .collect(),
        paths: ranked.iter().map(|(p, _)| p.to_string()).collect(),
        file_pattern: shared_glob(&all_paths),
    })
}

/// The glob several files share: their deepest common directory (`src/api/**`), else their
/// common extension (`*.py`); `None` for one file or nothing shared.
pub fn shared_glob(paths: &[&str]) -> Option<String> {
    if paths.len() < 2 {
        return None;
    }
    let dirs: Vec<Vec<&str>> = paths
        .iter()
        .map(|p| {
            let mut parts: Vec<&str> = p.split('/').collect();
            parts.pop();
            parts
        })
        .collect();
    let mut common = dirs[0].clone();
    for dir in &dirs[1..] {
        let same = common.iter().zip(dir).take_while(|(a, b)| a == b).count();
        common.truncate(same);
    }
    if !common.is_empty() {
        return Some(format!("{}/**", common.join("/")));
    }
    let extension = |p: &str| {
        p.rsplit_once('/')
            .map_or(p, |(_, name)| name)
            .rsplit_once('.')
            .map(|(_, e)| e.to_string())
    };
    let first = extension(paths[0])?;
    paths
        .iter()
        .all(|p| extension(p).as_deref() == Some(first.as_str()))
        .then(|| format!("*.{first}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::review::records::Verdict;

    fn review(
        id: &str,
        author: &str,
        at: i64,
        findings: &[(&str, &str, Disposition)],
    ) -> ReviewRecord {
        ReviewRecord {
            id: id.into(),
            at,
            author: author.into(),
            reviewer: None,
            verdict: Verdict::Comment,
            findings: findings
                .iter()
                .map(|(file, message, disposition)| Finding {
                    category: "tests".into(),
                    file: Some((*file).into()),
                    line: None,
                    end_line: None,
                    message: (*message).into(),
                    disposition: *disposition,
                    reason: (*disposition == Disposition::Rejected).then(|| format!("no: {id}")),
                    file_pattern: None,
                    reviewer: None,
                })
                .collect(),
            applied: Vec::new(),
            contradicted: Vec::new(),
            memory: None,
            seq: 0,
        }
    }

    #[test]
    fn links_make_groups_largest_first() {
        let similar = |a: usize, b: usize| (a % 3) == (b % 3);
        let all = |_| (0..7).collect();
        assert_eq!(
            group(7, all, similar),
            vec![vec![0, 3, 6], vec![1, 4], vec![2, 5]]
        );
        // Only candidates are compared.
        let none = |_| Vec::new();
        assert_eq!(group(3, none, similar).len(), 3);
    }

    #[test]
    fn a_group_recurring_across_reviews_is_proposed_with_its_evidence() {
        use Disposition::*;
        let reviews = vec![
            review(
                "pr1",
                "alice",
                1,
                &[("src/api/a.py", "add a test for the error path", Implemented)],
            ),
            review(
                "pr2",
                "alice",
                2,
                &[(
                    "src/api/b.py",
                    "please add a test for this error path",
                    Implemented,
                )],
            ),
            review(
                "pr3",
                "bob",
                3,
                &[("src/api/sub/c.py", "a test for the error path?", Rejected)],
            ),
        ];
        let members = occurrences(&reviews);
        let made = proposals(
            &reviews,
            &members,
            |at| if at.review == 0 { 2 } else { 1 },
            |_| 0.1,
        );
        assert_eq!(
            made.len(),
            1,
            "alice's two findings are too few for a developer pattern"
        );
        let p = &made[0];
        assert_eq!(p.teaches, Teaches::ProjectPattern);
        assert_eq!((p.findings, p.reviews, p.rejected), (3, 3, 1));
        assert_eq!(p.quote, "add a test for the error path");
        assert_eq!(p.reason.as_deref(), Some("no: pr3"));
        assert_eq!(p.examples[0].review, "pr3", "newest first");
        assert_eq!(p.file_pattern.as_deref(), Some("src/api/**"));

        let too_few = proposals(&reviews, &members[..2], |_| 1, |_| 0.1);
        assert!(too_few.is_empty());
    }

    #[test]
    fn mostly_rejected_groups_are_rejection_patterns_and_authors_get_their_own() {
        use Disposition::*;
        let reviews = vec![
            review(
                "pr1",
                "carol",
                1,
                &[
                    ("a.rb", "use a guard clause", Rejected),
                    ("b.rb", "use a guard clause here", Rejected),
                ],
            ),
            review(
                "pr2",
                "carol",
                2,
                &[("c.rb", "guard clause please", Rejected)],
            ),
            review(
                "pr3",
                "dave",
                3,
                &[("d.rb", "use a guard clause", Implemented)],
            ),
        ];
        let members = occurrences(&reviews);
        // Carol's changes draw 3 of the 4; she has a third of all findings: a lift of 2.25.
        let made = proposals(&reviews, &members, |_| 1, |_| 1.0 / 3.0);
        assert_eq!(made.len(), 2);
        assert_eq!(made[0].teaches, Teaches::RejectionPattern);
        assert_eq!(made[0].file_pattern.as_deref(), Some("*.rb"));
        assert_eq!(
            made[1].teaches,
            Teaches::DeveloperPattern {
                developer: "carol".into()
            }
        );
        assert_eq!((made[1].findings, made[1].reviews), (3, 2));
        // Had she half of all findings, the group would say nothing of her in particular.
        assert_eq!(proposals(&reviews, &members, |_| 1, |_| 0.5).len(), 1);
    }

    #[test]
    fn shared_globs() {
        assert_eq!(
            shared_glob(&["src/a/x.py", "src/a/y/z.py"]).as_deref(),
            Some("src/a/**")
        );
        assert_eq!(shared_glob(&["a/x.py", "b/y.py"]).as_deref(), Some("*.py"));
        assert_eq!(shared_glob(&["a/x.py", "b/y.go"]), None);
        assert_eq!(shared_glob(&["a/x.py"]), None);
        assert_eq!(shared_glob(&["Makefile", "b/Makefile"]), None);
    }
}
