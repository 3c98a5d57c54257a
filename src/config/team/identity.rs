//! Which shared repository a working copy belongs to: the normalised git remote, so every
//! teammate's clone (over ssh or https, with or without `.git`) lands in the same database.

use std::path::Path;

/// A repository as the team server knows it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Identity {
    /// The normalised remote, e.g. `github.com/acme/app`.
    pub key: String,
    /// The server namespace (one per organisation).
    pub namespace: String,
    /// The server database (one per repository).
    pub database: String,
}

/// The database of an organisation's memories, in the organisation's namespace (a
/// repository's database never starts with `_`).
pub const ORG_DATABASE: &str = "_org";

impl Identity {
    /// The organisation's memories beside this repository's: the same namespace, the
    /// [`ORG_DATABASE`] database.
    pub fn organisation(&self) -> Identity {
        Identity {
            key: format!("{} (organisation)", self.namespace),
            namespace: self.namespace.clone(),
            database: ORG_DATABASE.to_string(),
        }
    }

    /// The identity of `key` (a normalised remote or any name the team agrees on), in the
    /// namespace of `org`, or of the key's owner segment (`acme` in `github.com/acme/app`).
    pub fn new(key: &str, org: Option<&str>) -> Result<Identity, String> {
        let key = key.trim().trim_matches('/').to_lowercase();
        if key.is_empty() {
            return Err("the repository identity is empty".to_string());
        }
        let segments: Vec<&str> = key.split('/').filter(|s| !s.is_empty()).collect();
        let owner = match org {
            Some(org) => org.trim().to_lowercase(),
            // host/owner/name: the owner; a bare name: the name itself.
            None => segments
                .get(segments.len().saturating_sub(2).min(1))
                .copied()
                .unwrap_or(&key)
                .to_string(),
        };
        let namespace = name(&owner);
        if namespace.is_empty() {
            return Err(format!("`{owner}` cannot name a namespace"));
        }
        Ok(Identity {
            database: name(&key),
            namespace,
            key,
        })
    }
}

/// A server name made of `[a-z0-9_]`: everything else becomes `_`.
fn name(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect::<String>()
        .trim_matches('_')
        .to_string()
}

/// A git remote URL reduced to `host/path`: scheme, user, password, port and `.git` dropped,
/// scp-like ssh (`git@host:owner/name`) read as a path, lower case.
pub(crate) fn normalise_remote(url: &str) -> Option<String> {
    let url = url.trim();
    if url.is_empty() {
        return None;
    }
    let (host, path) = if let Some((scheme, rest)) = url.split_once("://") {
        if scheme.eq_ignore_ascii_case("file") {
            (String::new(), rest.to_string())
        } else {
            let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
            let host = authority.rsplit('@').next().unwrap_or(authority);
            let host = host.split(':').next().unwrap_or(host);
            (host.to_string(), path.to_string())
        }
    } else if let Some((authority, path)) = url.split_once(':')
        && !authority.contains('/')
        && authority.len() > 1
    {
        // scp-like: [user@]host:path
        let host = authority.rsplit('@').next().unwrap_or(authority);
        (host.to_string(), path.to_string())
    } else {
        (String::new(), url.to_string())
    };
    let path = path.trim_matches('/');
    let path = path
        .strip_suffix(".git")
        .unwrap_or(path)
        .trim_end_matches('/');
    let joined = if host.is_empty() {
        path.to_string()
    } else {
        format!("{host}/{path}")
    };
    let joined = joined.trim_matches('/').to_lowercase();
    (!joined.is_empty()).then_some(joined)
}

/// The fetch URL of the repository's `origin` remote (or its only remote).
pub(crate) fn remote_url(root: &Path) -> Option<String> {
    let repo = gix::open(root).ok()?;
    let remote = repo
        .find_default_remote(gix::remote::Direction::Fetch)?
        .ok()?;
    let url = remote.url(gix::remote::Direction::Fetch)?;
    Some(url.to_bstring().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssh_and_https_forms_of_one_remote_are_equal() {
        let forms = [
            "git@github.com:Acme/App.git",
            "https://github.com/acme/app",
            "https://github.com/acme/app.git/",
            "ssh://git@github.com:22/acme/app.git",
            "https://alice:token@github.com/acme/app.git",
            "git://github.com/acme/app",
        ];
        for form in forms {
            assert_eq!(
                normalise_remote(form).as_deref(),
                Some("github.com/acme/app"),
                "{form}"
            );
        }
        assert_ne!(
            normalise_remote("git@github.com:acme/app2.git"),
            normalise_remote("git@github.com:acme/app.git")
        );
        assert_eq!(normalise_remote("  "), None);
    }

    #[test]
    fn namespace_is_the_owner_and_database_the_whole_key() {
        let id = Identity::new("github.com/acme/app", None).unwrap();
        assert_eq!(id.namespace, "acme");
        assert_eq!(id.database, "github_com_acme_app");
        let id = Identity::new("gitlab.example.com/group/sub/app", Some("Platform")).unwrap();
        assert_eq!(id.namespace, "platform");
        assert_eq!(id.database, "gitlab_example_com_group_sub_app");
        let bare = Identity::new("app", None).unwrap();
        assert_eq!(bare.namespace, "app");
        assert!(Identity::new("  ", None).is_err());
        assert!(Identity::new("github.com/acme/app", Some("--")).is_err());
    }
}
