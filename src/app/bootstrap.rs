//! Framework knowledge bootstrap: the frameworks the repository's manifests name, and the
//! knowledge cairn ships about them seeded through the ordinary write path.

use std::path::Path;

use serde::Serialize;

use super::{AskError, Cairn, RememberRequest};
use crate::frameworks::{self, Catalogue, Detection, Format, ManifestNote, Scope, Shipped};
use crate::fsutil::repo::{Limit, RepoFiles};
use crate::index::walk;
use crate::memory::{self, Action, MemoryType, Source};

/// A bootstrap: seed the shipped knowledge, or (`dry_run`) only say what would be written.
#[derive(Debug, Clone, Default)]
pub struct BootstrapRequest {
    pub dry_run: bool,
    /// Who writes: the user, or `mcp` for an assistant.
    pub written_by: Option<String>,
}

/// One shipped memory, as written or as it would be.
#[derive(Debug, Clone, Serialize)]
pub struct Seeded {
    pub framework: String,
    pub title: String,
    pub content: String,
    /// The documentation it comes from (the memory's `source_ref`).
    pub source_ref: String,
    /// The files it applies to, stored as the memory's `file_pattern`.
    pub file_pattern: String,
    /// The store it belongs in.
    pub scope: Scope,
    /// What the write did (`null` in a dry run).
    pub event: Option<Action>,
    /// The memory it landed in (`null` in a dry run).
    pub id: Option<String>,
    /// A live memory already holds this text: writing it changes nothing.
    pub stored: bool,
}

/// What a bootstrap found and did.
#[derive(Debug, Serialize)]
pub struct Bootstrap {
    pub dry_run: bool,
    /// Every framework found, once per manifest that names it, by manifest path.
    pub detected: Vec<Detection>,
    /// The shipped memories of the detected frameworks, in framework order.
    pub seeded: Vec<Seeded>,
    /// Memories added or changed (in a dry run: that would be).
    pub written: usize,
    /// Memories already stored.
    pub unchanged: usize,
    /// Detected frameworks cairn ships no knowledge for.
    pub without_knowledge: Vec<String>,
    /// Manifests passed over, and why.
    pub notes: Vec<ManifestNote>,
}

impl Bootstrap {
    /// The detected frameworks' names, each once, in order of first detection.
    pub fn frameworks(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for d in &self.detected {
            if !names.contains(&d.framework.as_str()) {
                names.push(&d.framework);
            }
        }
        names
    }
}

impl Cairn {
    /// Detects the frameworks the repository's manifests name and seeds the knowledge cairn
    /// ships about them as `framework_knowledge` memories (source `import`, the documentation
    /// link as `source_ref`), deduplicated like any write: a second run writes nothing.
    pub async fn bootstrap(&self, request: BootstrapRequest) -> Result<Bootstrap, AskError> {
        let catalogue = Catalogue::shipped().map_err(|e| AskError::Store(e.into()))?;
        let root = self.repo.root.clone();
        let exclude = self.repo.settings.index.exclude.clone();
        let (detected, notes) =
            tokio::task::spawn_blocking(move || detect_in(&root, &exclude, catalogue))
                .await
                .map_err(|e| AskError::Store(e.into()))?;
        let mut bootstrap = Bootstrap {
            dry_run: request.dry_run,
            detected,
            seeded: Vec::new(),
            written: 0,
            unchanged: 0,
            without_knowledge: Vec::new(),
            notes,
        };
        // Shipped knowledge goes to the organisation's store by default: both stores count.
        let mut all = self.memories.all().await?;
        if let Ok(org) = self.org_memories() {
            all.extend(org.all().await?);
        }
        let stored: Vec<String> = all
            .into_iter()
            .filter(|m| m.is_live() && m.kind == MemoryType::FrameworkKnowledge)
            .map(|m| m.content)
            .collect();
        let names: Vec<String> = bootstrap
            .frameworks()
            .into_iter()
            .map(String::from)
            .collect();
        // `[memory] org_types` without framework_knowledge keeps shipped facts in the repository.
        let org_allowed = self.org_types()?.contains(&MemoryType::FrameworkKnowledge);
        for name in names {
            let Some(framework) = catalogue.named(&name) else {
                continue;
            };
            if framework.memories.is_empty() {
                bootstrap.without_knowledge.push(name);
                continue;
            }
            for shipped in &framework.memories {
                let mut seeded = seeded(&name, shipped);
                if !org_allowed {
                    seeded.scope = Scope::Repository;
                }
                seeded.stored = stored.iter().any(|c| c.trim() == shipped.content.trim());
                if !request.dry_run {
                    let outcome = self
                        .remember(remember_request(&seeded, request.written_by.clone()))
                        .await?;
                    seeded.event = Some(outcome.event);
                    seeded.id = Some(outcome.id);
                    // Where it landed: the repository's store when there is no organisation.
                    if let Some(memory) = &outcome.memory {
                        seeded.scope = match memory.scope {
                            crate::memory::Scope::Org => Scope::Org,
                            crate::memory::Scope::Repository => Scope::Repository,
                        };
                    }
                }
                let changed = match seeded.event {
                    Some(event) => event != Action::None,
                    None => !seeded.stored,
                };
                if changed {
                    bootstrap.written += 1;
                } else {
                    bootstrap.unchanged += 1;
                }
                bootstrap.seeded.push(seeded);
            }
        }
        Ok(bootstrap)
    }
}

fn seeded(framework: &str, shipped: &Shipped) -> Seeded {
    Seeded {
        framework: framework.to_string(),
        title: shipped.title.clone(),
        content: shipped.content.clone(),
        source_ref: shipped.source.clone(),
        file_pattern: shipped.file_pattern.clone(),
        scope: shipped.scope,
        event: None,
        id: None,
        stored: false,
    }
}

/// The write of one shipped memory, with its glob and scope.
fn remember_request(seeded: &Seeded, written_by: Option<String>) -> RememberRequest {
    RememberRequest {
        title: Some(seeded.title.clone()),
        source: Source::Import,
        source_ref: Some(seeded.source_ref.clone()),
        written_by,
        file_pattern: Some(seeded.file_pattern.clone()),
        scope: Some(match seeded.scope {
            Scope::Org => memory::Scope::Org,
            Scope::Repository => memory::Scope::Repository,
        }),
        ..RememberRequest::new(MemoryType::FrameworkKnowledge, seeded.content.clone())
    }
}

/// The frameworks named by the manifests under `root`, and the manifests passed over.
fn detect_in(
    root: &Path,
    exclude: &[String],
    catalogue: &Catalogue,
) -> (Vec<Detection>, Vec<ManifestNote>) {
    let found = walk::manifests(root, exclude, |path| Format::of(path).is_some());
    let mut notes: Vec<ManifestNote> = found
        .skipped
        .into_iter()
        .map(|s| ManifestNote {
            manifest: s.path,
            reason: s.reason,
        })
        .collect();
    let mut detected = Vec::new();
    let files = match RepoFiles::open(root) {
        Ok(files) => files,
        Err(e) => {
            notes.push(ManifestNote {
                manifest: String::new(),
                reason: format!("cannot open the repository: {e}"),
            });
            return (detected, notes);
        }
    };
    for file in found.files {
        let read = read_manifest(&files, &file.path).and_then(|text| {
            frameworks::detect(catalogue, &file.path, &text).map_err(|note| note.reason)
        });
        match read {
            Ok(found) => detected.extend(found),
            Err(reason) => notes.push(ManifestNote {
                manifest: file.path,
                reason,
            }),
        }
    }
    (detected, notes)
}

/// A manifest's text, through the repository reader (at most [`Limit::MANIFEST`], UTF-8, a
/// leading byte-order mark dropped).
fn read_manifest(files: &RepoFiles, path: &str) -> Result<String, String> {
    let text = files.text(path, Limit::MANIFEST).map_err(|e| e.reason())?;
    Ok(text
        .strip_prefix('\u{feff}')
        .map(str::to_string)
        .unwrap_or(text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::model::{MAX_CONTENT_BYTES, MAX_LABEL_BYTES, MAX_TITLE_BYTES};
    use crate::secrets;

    /// Every shipped memory passes a write's checks untouched: within the limits, nothing a
    /// secret detector would redact, a source link that fits a label.
    #[test]
    fn shipped_memories_pass_the_write_checks() {
        let catalogue = Catalogue::shipped().unwrap();
        let mut count = 0;
        for framework in &catalogue.frameworks {
            for memory in &framework.memories {
                let request = remember_request(&seeded(&framework.name, memory), None);
                assert!(
                    request.content.len() <= MAX_CONTENT_BYTES,
                    "{}",
                    memory.title
                );
                assert!(request.title.as_ref().unwrap().len() <= MAX_TITLE_BYTES);
                assert!(memory.source.len() <= MAX_LABEL_BYTES, "{}", memory.source);
                for text in [&memory.title, &memory.content, &memory.source] {
                    assert!(!secrets::contains_secret(text), "{text}");
                    assert_eq!(&secrets::redact(text).text, text);
                }
                assert!(memory.source.starts_with("https://"));
                assert_eq!(request.kind, MemoryType::FrameworkKnowledge);
                assert_eq!(request.source, Source::Import);
                count += 1;
            }
        }
        assert!(count >= 7 * 3, "{count} shipped memories");
    }

    #[test]
    fn manifests_that_cannot_be_read_say_why() {
        let dir = tempfile::tempdir().unwrap();
        let files = RepoFiles::open(dir.path()).unwrap();
        std::fs::write(
            dir.path().join("big"),
            vec![b' '; Limit::MANIFEST.bytes as usize + 1],
        )
        .unwrap();
        assert!(
            read_manifest(&files, "big")
                .unwrap_err()
                .contains("larger than the limit for a manifest")
        );
        std::fs::write(dir.path().join("binary"), b"{\"a\": \xff\xfe}").unwrap();
        assert!(
            read_manifest(&files, "binary")
                .unwrap_err()
                .contains("offset 6")
        );
        std::fs::write(dir.path().join("bom"), "\u{feff}{}").unwrap();
        assert_eq!(read_manifest(&files, "bom").unwrap(), "{}");
    }
}
