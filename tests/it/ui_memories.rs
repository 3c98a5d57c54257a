//! The page's memory curation: editing a memory by superseding it (over HTTP: the CSRF
//! token, secrets, oversized and stale forms, forged ids; in Chromium: the form, then the
//! search serving the new text), the "needs attention" list and the developer view.

use std::time::Duration;

use fantoccini::Locator;
use serde_json::Value;

use crate::daemon::Daemon;
use crate::support::TestRepo;
use crate::ui::{
    StartedDaemon, add_memory, base, body_text, browser, chromedriver, click_link, code_of,
    csrf_in, exists, find, get_with, log_in, log_in_address, origin_of, post_page,
    repository_with_memories, screenshot, submit, wait_for,
};

/// `application/x-www-form-urlencoded` of `pairs`.
fn encoded(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(name, value)| {
            let value: String = value
                .bytes()
                .map(|b| {
                    if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                        (b as char).to_string()
                    } else {
                        format!("%{b:02X}")
                    }
                })
                .collect();
            format!("{name}={value}")
        })
        .collect::<Vec<_>>()
        .join("&")
}

/// Every memory the CLI lists, superseded ones included.
fn every_memory(repo: &TestRepo) -> Vec<Value> {
    let listed: Value =
        serde_json::from_str(&repo.cairn_ok(&["memory", "list", "--all", "--json"])).unwrap();
    listed.as_array().unwrap().clone()
}

fn show(repo: &TestRepo, id: &str) -> Value {
    serde_json::from_str(&repo.cairn_ok(&["memory", "show", id, "--json"])).unwrap()
}

/// The value of the hidden `seen` field of an edit form.
fn seen_in(page: &str) -> String {
    let start = page
        .find(r#"name="seen" value=""#)
        .unwrap_or_else(|| panic!("no seen field in {page}"))
        + r#"name="seen" value=""#.len();
    page[start..].split('"').next().unwrap().to_string()
}

/// The id of the memory a "Saved" page links as new.
fn new_id_in(page: &str) -> String {
    let start = page
        .find(r#"<a class="new" href="/ui/memories/"#)
        .unwrap_or_else(|| panic!("no new memory in {page}"))
        + r#"<a class="new" href="/ui/memories/"#.len();
    page[start..].split('"').next().unwrap().to_string()
}

/// The `<section>` of the attention page with this id.
fn section_of(page: &str, id: &str) -> String {
    crate::ui::part(
        page,
        &format!(r#"<section class="attention" id="{id}">"#),
        "</section>",
    )
    .to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn editing_supersedes_through_the_write_path_and_refusals_store_nothing() {
    let (repo, stored) = repository_with_memories();
    let daemon = Daemon::start(&repo);
    let (cookie, _) = log_in(&daemon, &code_of(&log_in_address(&repo))).await;
    let origin = base(&daemon);
    let edit = format!("/ui/memories/{}/edit", stored.cents);

    let (status, _) = get_with(&daemon, &edit, None).await;
    assert_eq!(status, 401, "no form without a session");
    let (status, form) = get_with(&daemon, &edit, Some(&cookie)).await;
    assert_eq!(status, 200, "{form}");
    assert!(
        form.contains("Cart totals are integers of cents, never floats: rounding drifted on refunds.</textarea>"),
        "{form}"
    );
    assert!(form.contains("src/shop/cart.py</textarea>"), "{form}");
    let csrf = csrf_in(&form);
    let seen = seen_in(&form);
    let before = every_memory(&repo).len();
    let nothing_stored = |why: &str| {
        assert_eq!(every_memory(&repo).len(), before, "{why}: nothing stored");
        assert!(
            show(&repo, &stored.cents)["superseded_by"].is_null(),
            "{why}: still live"
        );
    };
    let text = "Cart totals are integers of cents, never floats: rounding drifted on refunds and on gift cards.";
    let fields = |csrf: &str, content: &str| {
        encoded(&[
            ("csrf", csrf),
            ("seen", &seen),
            ("title", "Cart totals are cents"),
            ("content", content),
            ("paths", "src/shop/cart.py\nsrc/shop/pricing.py"),
            ("symbols", ""),
        ])
    };

    // No token, a wrong one, a foreign Origin: refused, nothing stored.
    for body in [
        encoded(&[("content", text)]),
        fields("", text),
        fields(&"0".repeat(csrf.len()), text),
    ] {
        let (status, page) = post_page(&daemon, &edit, &cookie, &origin, &body).await;
        assert_eq!(status, 403, "{body}: {page}");
        assert!(page.contains("nothing was stored"), "{page}");
    }
    let (status, _) = post_page(
        &daemon,
        &edit,
        &cookie,
        "http://evil.example",
        &fields(&csrf, text),
    )
    .await;
    assert_eq!(status, 403, "a foreign Origin");
    nothing_stored("without the token");

    // A secret in the text: refused, named by kind, the form shown again.
    let key = ["AKIA", "Z7Q4", "K2M9", "XW3T", "R8PB"].concat();
    let secret = format!("Cart totals are cents; the refund job signs with {key}.");
    let (status, page) = post_page(&daemon, &edit, &cookie, &origin, &fields(&csrf, &secret)).await;
    assert_eq!(status, 400, "{page}");
    assert!(
        page.contains("looks like a secret") && page.contains("nothing was stored"),
        "{page}"
    );
    assert!(
        page.contains(r#"<form class="edit""#),
        "the form again: {page}"
    );
    nothing_stored("a secret");
    let rows = repo.cairn_ok(&["memory", "export"]);
    assert!(!rows.contains(&key), "the secret reached the store");

    // Not a memory: too long a text, too large a form, nothing changed, a stale form.
    let long = "cents ".repeat(800);
    let (status, page) = post_page(&daemon, &edit, &cookie, &origin, &fields(&csrf, &long)).await;
    assert_eq!(status, 400, "{page}");
    assert!(page.contains("bytes"), "{page}");
    let huge = fields(&csrf, &"x".repeat(70 * 1024));
    let (status, page) = post_page(&daemon, &edit, &cookie, &origin, &huge).await;
    assert_eq!(status, 413, "{page}");
    assert!(
        page.contains("larger than 64 KiB") && page.contains("nothing was stored"),
        "{page}"
    );
    let same = encoded(&[
        ("csrf", &csrf),
        ("seen", &seen),
        ("title", "Cart totals are cents"),
        (
            "content",
            "Cart totals are integers of cents, never floats: rounding drifted on refunds.",
        ),
        ("paths", "src/shop/cart.py"),
    ]);
    let (status, page) = post_page(&daemon, &edit, &cookie, &origin, &same).await;
    assert_eq!(status, 400, "{page}");
    assert!(page.contains("unchanged"), "{page}");
    let stale = fields(&csrf, text).replace(&format!("seen={seen}"), "seen=1700000000000");
    let (status, page) = post_page(&daemon, &edit, &cookie, &origin, &stale).await;
    assert_eq!(status, 400, "{page}");
    assert!(
        page.contains("changed since this form was opened"),
        "{page}"
    );
    // A forged id: not found.
    let forged = "/ui/memories/m_00000000deadbeef/edit";
    let (status, page) = post_page(&daemon, forged, &cookie, &origin, &fields(&csrf, text)).await;
    assert_eq!(status, 404, "{page}");
    let (status, _) = get_with(&daemon, forged, Some(&cookie)).await;
    assert_eq!(status, 404);
    nothing_stored("refused edits");

    // The edit: a new memory that supersedes the old one, its anchors checked.
    let (status, page) = post_page(&daemon, &edit, &cookie, &origin, &fields(&csrf, text)).await;
    assert_eq!(status, 200, "{page}");
    let new = new_id_in(&page);
    assert_ne!(new, stored.cents);
    assert!(
        page.contains(&format!(
            r#"supersedes <a href="/ui/memories/{}">"#,
            stored.cents
        )),
        "{page}"
    );
    assert_eq!(every_memory(&repo).len(), before + 1);
    let written = show(&repo, &new);
    assert_eq!(written["content"], text);
    assert_eq!(written["supersedes"], stored.cents.as_str());
    assert_eq!(written["type"], "decision");
    assert_eq!(
        written["source_ref"], "PR #42",
        "where the learning came from is kept"
    );
    assert_eq!(
        written["paths"],
        serde_json::json!(["src/shop/cart.py", "src/shop/pricing.py"])
    );
    let old = show(&repo, &stored.cents);
    assert_eq!(old["superseded_by"], new.as_str());
    assert!(old["invalidated_at"].is_i64(), "{old}");

    // Both pages show the chain; the old one has no edit button any more.
    let (_, old_page) = get_with(
        &daemon,
        &format!("/ui/memories/{}", stored.cents),
        Some(&cookie),
    )
    .await;
    assert!(old_page.contains("Supersession chain"), "{old_page}");
    assert!(
        old_page.contains(&format!(r#"<a href="/ui/memories/{new}">"#)),
        "{old_page}"
    );
    assert!(
        !old_page.contains(&format!(r#"action="/ui/memories/{}/edit""#, stored.cents)),
        "{old_page}"
    );
    let (_, new_page) = get_with(&daemon, &format!("/ui/memories/{new}"), Some(&cookie)).await;
    assert!(new_page.contains("Supersession chain"), "{new_page}");
    assert!(
        new_page.contains(&format!(r#"<a href="/ui/memories/{}">"#, stored.cents)),
        "{new_page}"
    );
    // The search serves the new text, not the old one.
    let (_, found) = get_with(&daemon, "/ui/?q=gift+cards", Some(&cookie)).await;
    assert!(found.contains(&format!("/ui/memories/{new}")), "{found}");
    let (_, found) = get_with(&daemon, "/ui/?q=refunds", Some(&cookie)).await;
    assert!(
        !found.contains(&format!("/ui/memories/{}\"", stored.cents)),
        "{found}"
    );

    // The old one cannot be edited again: its form is refused, and a replayed POST too.
    let (status, _) = get_with(&daemon, &edit, Some(&cookie)).await;
    assert_eq!(status, 409);
    let replay = fields(&csrf, "Cart totals are integers of cents, always.");
    let (status, page) = post_page(&daemon, &edit, &cookie, &origin, &replay).await;
    assert_eq!(status, 400, "{page}");
    assert!(
        page.contains("superseded by") && page.contains("nothing was stored"),
        "{page}"
    );
    assert_eq!(every_memory(&repo).len(), before + 1);
    assert!(exists(&repo, &stored.storage));
    assert!(daemon.stop().success());
}

#[tokio::test(flavor = "multi_thread")]
async fn the_attention_list_finds_each_kind_and_developer_memories_stay_in_their_view() {
    let (repo, stored) = repository_with_memories();
    let add = |args: &[&str]| add_memory(&repo, args);
    // Near the cents decision by terms (8 of 10 shared), but not merged by the write.
    let twin = add(&[
        "-t",
        "decision",
        "Cart totals are integers of cents, never floats: rounding drifted on discounts.",
    ]);
    let legacy = add(&[
        "-t",
        "project_pattern",
        "--path",
        "src/shop/legacy_checkout.py",
        "The legacy checkout posts orders twice when the network drops.",
    ]);
    let private = add(&[
        "-t",
        "developer_pattern",
        "--developer",
        "alice",
        "Alice forgets to close cursors in the reporting scripts.",
    ]);
    // The cart changes in a commit after the cents decision was written.
    std::thread::sleep(Duration::from_millis(1_100));
    let cart = repo.read("src/shop/cart.py");
    repo.write("src/shop/cart.py", format!("{cart}\n# totals in cents\n"));
    repo.commit("cart: note the unit");
    let daemon = Daemon::start(&repo);
    let (cookie, _) = log_in(&daemon, &code_of(&log_in_address(&repo))).await;

    // A command's search reads the storage pattern: it is not "never read" any more. A
    // person looking at the page reads nothing for an assistant: the rounding risk stays.
    let served = repo.cairn_ok(&["memory", "search", "save function"]);
    assert!(served.contains(&stored.storage), "{served}");
    let (_, found) = get_with(&daemon, "/ui/?q=rounding+fragile", Some(&cookie)).await;
    assert!(found.contains(&stored.rounding), "{found}");
    let (status, page) = get_with(&daemon, "/ui/attention?days=0", Some(&cookie)).await;
    assert_eq!(status, 200, "{page}");
    let section = |id: &str| section_of(&page, id);
    let link = |id: &str| format!(r#"href="/ui/memories/{id}""#);
    let duplicates = section("duplicates");
    assert!(
        duplicates.contains(&link(&stored.cents)) && duplicates.contains(&link(&twin)),
        "{duplicates}"
    );
    assert!(duplicates.contains(" by terms"), "{duplicates}");
    assert!(!duplicates.contains(&link(&legacy)), "{duplicates}");
    let gone = section("gone");
    assert!(
        gone.contains(&link(&legacy)) && gone.contains("src/shop/legacy_checkout.py"),
        "{gone}"
    );
    assert!(!gone.contains(&link(&stored.cents)), "{gone}");
    let changed = section("changed");
    assert!(
        changed.contains(&link(&stored.cents)) && changed.contains("src/shop/cart.py"),
        "{changed}"
    );
    assert!(
        !changed.contains(&link(&stored.storage)) && !changed.contains(&link(&twin)),
        "{changed}"
    );
    let never = section("never-read");
    for id in [&stored.cents, &stored.rounding, &twin, &legacy] {
        assert!(never.contains(&link(id)), "{id}: {never}");
    }
    assert!(
        !never.contains(&link(&stored.storage)),
        "read by the search: {never}"
    );
    // Each row offers the edit and forget forms.
    assert!(
        never.contains(&format!(r#"href="/ui/memories/{legacy}/edit""#)),
        "{never}"
    );
    assert!(
        never.contains(&format!(r#"href="/ui/memories/{legacy}/forget""#)),
        "{never}"
    );
    // The default is 90 days: nothing that young is listed as never read.
    let (_, default) = get_with(&daemon, "/ui/attention", Some(&cookie)).await;
    assert!(default.contains("Never read in 90 days"), "{default}");
    let never_by_default = section_of(&default, "never-read");
    assert!(
        !never_by_default.contains(&link(&stored.rounding)),
        "{never_by_default}"
    );
    let (status, _) = get_with(&daemon, "/ui/attention?days=soon", Some(&cookie)).await;
    assert_eq!(status, 400);

    // Alice's memory shows only under her view: not in the project's search or list.
    assert!(!page.contains(&link(&private)), "{page}");
    let (_, her_attention) = get_with(
        &daemon,
        "/ui/attention?days=0&developer=alice",
        Some(&cookie),
    )
    .await;
    assert!(
        section_of(&her_attention, "never-read").contains(&link(&private)),
        "{her_attention}"
    );
    let (_, project) = get_with(&daemon, "/ui/?q=cursors", Some(&cookie)).await;
    assert!(!project.contains(&link(&private)), "{project}");
    let (_, hers) = get_with(&daemon, "/ui/?q=cursors&developer=alice", Some(&cookie)).await;
    assert!(hers.contains(&link(&private)), "{hers}");
    let (_, bobs) = get_with(&daemon, "/ui/?q=cursors&developer=bob", Some(&cookie)).await;
    assert!(!bobs.contains(&link(&private)), "{bobs}");
    assert!(daemon.stop().success());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_person_edits_a_memory_and_opens_what_needs_attention_in_chromium() {
    let (repo, stored) = repository_with_memories();
    // A near-duplicate of the rounding risk, for the attention page to show.
    let twin: Value = serde_json::from_str(&repo.cairn_ok(&[
        "memory",
        "add",
        "--json",
        "-t",
        "risk_module",
        "Discount rounding in pricing is fragile; two reviewers sign off every change.",
    ]))
    .unwrap();
    assert_eq!(twin["event"], "ADD", "{twin}");
    let address = log_in_address(&repo);
    let _daemon = StartedDaemon(repo.data_dir());
    let (_driver, driver_url) = chromedriver().await;
    let profile = tempfile::tempdir().unwrap();
    let client = browser(&driver_url, profile.path()).await;
    client.goto(&address).await.unwrap();
    let origin = origin_of(&address);

    // Search, open the memory, edit it.
    let field = find(&client, "input#q").await;
    submit(&client, &field, "cents refunds", "?q=cents").await;
    click_link(&client, "Cart totals are cents").await;
    find(&client, "p.content.lead").await;
    find(&client, "form.inline button")
        .await
        .click()
        .await
        .unwrap();
    let content = find(&client, "textarea#content").await;
    screenshot(&client, "edit").await;
    content.clear().await.unwrap();
    content
        .send_keys(
            "Cart totals are integers of cents; refunds and gift cards round once, at the end.",
        )
        .await
        .unwrap();
    find(&client, "form.edit button[type=submit]")
        .await
        .click()
        .await
        .unwrap();
    wait_for(&client, Locator::XPath("//h1[.='Saved']")).await;
    let saved = body_text(&client).await;
    assert!(
        saved.contains(&format!("supersedes {}", stored.cents)),
        "{saved}"
    );

    // The new memory's page shows the chain; the search serves the new text.
    find(&client, "a.new").await.click().await.unwrap();
    find(&client, "section.chain").await;
    let page = body_text(&client).await;
    assert!(
        page.contains("round once, at the end") && page.contains(&stored.cents),
        "{page}"
    );
    screenshot(&client, "memory-chain").await;
    client
        .goto(&format!("{origin}/ui/?q=gift+cards"))
        .await
        .unwrap();
    let found = body_text(&client).await;
    assert!(found.contains("round once, at the end"), "{found}");
    let cli = repo.cairn_ok(&["memory", "search", "gift cards"]);
    assert!(
        cli.contains("round once, at the end"),
        "the CLI serves it too: {cli}"
    );

    // The attention page, reached from the search.
    client.goto(&format!("{origin}/ui/")).await.unwrap();
    click_link(&client, "Needs attention").await;
    find(&client, "section#never-read").await;
    let days = find(&client, "input#days").await;
    days.clear().await.unwrap();
    submit(&client, &days, "0", "days=0").await;
    let listed = body_text(&client).await;
    assert!(listed.contains("Never read in 0 days"), "{listed}");
    assert!(listed.contains("Discount rounding"), "{listed}");
    assert!(
        listed.contains("Near-duplicates (1)") && listed.contains("by terms"),
        "{listed}"
    );
    screenshot(&client, "attention").await;
    client.close().await.unwrap();
}
