//! Generated review learnings for the memory benchmarks: a few hundred distinct templates
//! over areas, files, identifiers and rules, so keyword search has realistic overlap.

use cairn::memory::{ExportRecord, Memory, MemoryType};

const AREAS: &[&str] = &[
    "billing",
    "auth",
    "search",
    "feed",
    "checkout",
    "admin",
    "notifications",
    "uploads",
    "reports",
    "sessions",
    "cache",
    "migrations",
    "webhooks",
    "payments",
    "profiles",
    "orders",
];
const FILES: &[&str] = &[
    "views.py",
    "models.py",
    "serializers.py",
    "tasks.py",
    "service.py",
    "handlers.ts",
    "client.ts",
    "store.ts",
    "utils.py",
    "forms.py",
    "signals.py",
    "queries.py",
];
const IDENTS: &[&str] = &[
    "select_related",
    "prefetch_related",
    "send_file",
    "transaction.atomic",
    "get_or_create",
    "bulk_update",
    "useEffect",
    "fetchJson",
    "retry_with_backoff",
    "validate_token",
    "render_to_string",
    "cache.get_many",
    "on_commit",
    "QuerySet.iterator",
    "json.loads",
    "session.flush",
    "reverse_lazy",
    "F() expressions",
    "update_fields",
    "select_for_update",
];
const RULES: &[&str] = &[
    "must be wrapped in a transaction",
    "should never run inside a request",
    "needs a second reviewer",
    "is called on every page load, so keep it cheap",
    "leaks connections when an exception escapes",
    "was rejected in review because it hides N+1 queries",
    "is preferred over hand-written loops",
    "must check permissions before touching the database",
    "breaks when the tenant id is missing",
    "is flaky under parallel tests",
    "should log at debug level only",
    "needs an index on the lookup column",
];
const WHY: &[&str] = &[
    "after the outage in March",
    "as agreed in the architecture review",
    "because the mobile client retries aggressively",
    "since the nightly batch job shares the table",
    "to keep p95 latency under 200 ms",
    "because auditors read these rows",
    "as the payment provider requires idempotency",
    "",
];

pub fn text(rng: &mut fastrand::Rng) -> (MemoryType, String, String) {
    let area = AREAS[rng.usize(..AREAS.len())];
    let file = FILES[rng.usize(..FILES.len())];
    let ident = IDENTS[rng.usize(..IDENTS.len())];
    let rule = RULES[rng.usize(..RULES.len())];
    let why = WHY[rng.usize(..WHY.len())];
    let path = format!("src/{area}/{file}");
    let n = rng.u32(1..5000);
    let kind = [
        MemoryType::ProjectPattern,
        MemoryType::Decision,
        MemoryType::RiskModule,
        MemoryType::RejectionPattern,
    ][rng.usize(..4)];
    let content = format!("{ident} in {path} {rule} {why} (PR #{n}).").replace("  ", " ");
    (kind, content, path)
}

pub fn record(rng: &mut fastrand::Rng, i: usize) -> ExportRecord {
    let (kind, content, path) = text(rng);
    let now = cairn::clock::now_ms();
    let mut memory = Memory::new(
        format!("m_{:016x}", i as u64 * 2654435761 + 1),
        kind,
        content.chars().take(60).collect(),
        content,
        now,
    );
    memory.anchors.paths = vec![path];
    memory.provenance.source = cairn::memory::Source::Review;
    memory.validity.created_at = now - rng.i64(0..86_400_000 * 365);
    ExportRecord {
        memory,
        vector: None,
    }
}
