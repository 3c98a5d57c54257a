//! The in-process sentence embedder against vectors computed by Python sentence-transformers,
//! with the real all-MiniLM-L6-v2 model (fetched by `.ci/fetch-model`).

use std::time::Instant;

use cairn::memory::embed::{self, DIMENSION, Embedder};
use serde::Deserialize;

use crate::support::fixture;

#[derive(Deserialize)]
struct Reference {
    dimension: usize,
    items: Vec<ReferenceItem>,
}

#[derive(Deserialize)]
struct ReferenceItem {
    text: String,
    vector: Vec<f32>,
}

fn reference() -> Reference {
    let path = fixture("minilm/reference-vectors.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Loads the real model; a missing model fails the test rather than skipping it.
fn load_embedder() -> Embedder {
    let dir = embed::default_model_dir();
    assert!(
        embed::model_present(&dir),
        "the all-MiniLM-L6-v2 model is not in {}: run `.ci/fetch-model` (or set {} to the model \
         directory)",
        dir.display(),
        embed::MODEL_DIR_ENV
    );
    let started = Instant::now();
    let embedder = Embedder::load(&dir).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("loaded the model in {:?}", started.elapsed());
    embedder
}

#[test]
fn embeddings_match_sentence_transformers() {
    let reference = reference();
    assert_eq!(reference.dimension, DIMENSION);
    let embedder = load_embedder();

    // Each reference sentence on its own and all of them in one batch.
    let texts: Vec<&str> = reference
        .items
        .iter()
        .map(|item| item.text.as_str())
        .collect();
    let batch = embedder
        .embed(&texts)
        .expect("embed the reference sentences");
    assert_eq!(batch.len(), texts.len());
    let mut singles = Vec::new();
    for (item, batched) in reference.items.iter().zip(&batch) {
        let single = embedder.embed_one(&item.text).expect("embed one sentence");
        assert_eq!(single.len(), DIMENSION);
        let norm: f32 = single.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5, "not unit length: {norm}");
        let agreement = embed::cosine(&single, &item.vector);
        let max_diff = single
            .iter()
            .zip(&item.vector)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        eprintln!(
            "cosine with sentence-transformers {agreement:.7}, largest component difference \
             {max_diff:.1e}: {:?}",
            item.text
        );
        assert!(
            agreement >= 0.9999,
            "{:?}: cosine {agreement} with the reference vector",
            item.text
        );
        assert!(embed::cosine(&single, batched) > 0.99999);
        singles.push(single);
    }

    // The paraphrases are much closer than the unrelated sentence.
    let paraphrase = embed::cosine(&singles[0], &singles[1]);
    let unrelated = embed::cosine(&singles[0], &singles[2]);
    eprintln!("paraphrase cosine {paraphrase:.4}, unrelated cosine {unrelated:.4}");
    assert!(paraphrase > 0.5, "paraphrase cosine {paraphrase}");
    assert!(unrelated < 0.2, "unrelated cosine {unrelated}");
    assert!(paraphrase > unrelated + 0.3);

    // Padding does not leak into the result: texts of very different lengths give the same
    // vectors batched together as alone.
    let long_paragraph = "A memory records that the team reviews every migration twice \
        before it reaches production, that flaky tests are quarantined rather than retried, \
        and that public functions carry a doc comment with an example. "
        .repeat(3);
    let mixed = [
        "ok",
        "Prefer early returns over nested conditionals.",
        long_paragraph.as_str(),
        "",
        "Use `cargo test --test it embed` to run only these tests.",
    ];
    let batched = embedder.embed(&mixed).expect("embed a mixed batch");
    assert_eq!(batched.len(), mixed.len());
    for (text, batched) in mixed.iter().zip(&batched) {
        let single = embedder.embed_one(text).expect("embed one text");
        assert_eq!(batched.len(), DIMENSION);
        let agreement = embed::cosine(&single, batched);
        assert!(
            agreement > 0.99999,
            "{text:?}: batched vs single cosine {agreement}"
        );
    }
    assert!(embedder.embed(&[]).expect("embed nothing").is_empty());

    // A very long text is truncated to the model's limit instead of failing; its vector is
    // that of its first 256 word pieces.
    let words: Vec<String> = (0..5_000).map(|i| format!("word{}", i % 97)).collect();
    let long_text = words.join(" ");
    let started = Instant::now();
    let long_vector = embedder
        .embed_one(&long_text)
        .expect("embed a 5,000-word text");
    eprintln!("5,000 words embedded in {:?}", started.elapsed());
    assert_eq!(long_vector.len(), DIMENSION);
    assert!(long_vector.iter().all(|x| x.is_finite()));
    let longer = format!("{long_text} and then a completely different ending about taxes");
    let longer_vector = embedder.embed_one(&longer).expect("embed a longer text");
    assert!(embed::cosine(&long_vector, &longer_vector) > 0.99999);
}

/// Prints load time, single-query latency and batch throughput. Run it with
/// `cargo test --release --test it embed_throughput -- --ignored --nocapture`.
#[test]
#[ignore = "a benchmark: prints timings, asserts nothing about them"]
fn embed_throughput() {
    let embedder = load_embedder();
    let queries = [
        "how are database migrations reviewed",
        "which editor theme does the user prefer",
        "error handling conventions in the storage layer",
        "where are flaky tests quarantined",
    ];
    for query in queries {
        embedder.embed_one(query).expect("warm up");
    }
    let rounds = 50;
    let started = Instant::now();
    for i in 0..rounds {
        embedder
            .embed_one(queries[i % queries.len()])
            .expect("embed a query");
    }
    let per_query = started.elapsed().as_secs_f64() * 1000.0 / rounds as f64;
    eprintln!("single query: {per_query:.2} ms");

    // Memory-sized texts: one or two sentences, 15 to 60 words.
    const WORDS: [&str; 8] = [
        "review",
        "the",
        "migration",
        "before",
        "merge",
        "tests",
        "must",
        "pass",
    ];
    let memories: Vec<String> = (0..256)
        .map(|i| {
            let words = 15 + (i * 7) % 46;
            (0..words)
                .map(|w| WORDS[(i + w) % WORDS.len()])
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    let texts: Vec<&str> = memories.iter().map(String::as_str).collect();
    let started = Instant::now();
    for chunk in texts.chunks(32) {
        embedder.embed(chunk).expect("embed a batch");
    }
    let elapsed = started.elapsed().as_secs_f64();
    eprintln!(
        "batches of 32: {:.1} memories/s ({} memories in {elapsed:.2} s)",
        texts.len() as f64 / elapsed,
        texts.len()
    );
    // One call: `embed` sorts the texts by length before batching, so less padding.
    let started = Instant::now();
    embedder.embed(&texts).expect("embed all");
    let elapsed = started.elapsed().as_secs_f64();
    eprintln!(
        "one call of {}: {:.1} memories/s",
        texts.len(),
        texts.len() as f64 / elapsed
    );
}

/// The repository's and the organisation's memories (or any two stores given clones of one
/// setting) hold one model between them: the first to embed loads it for both.
#[tokio::test(flavor = "multi_thread")]
async fn stores_sharing_the_semantic_settings_load_the_model_once() {
    use cairn::memory::{Memories, MemoryType, NewMemory, SemanticSettings};
    let fetched = SemanticSettings::resolve(None, true);
    let fetched = fetched
        .model_dir
        .expect("the model is not there: run `.ci/fetch-model`");
    // A directory of its own (links to the model's files): every service in a process shares
    // the model of one directory, and other tests here load the default one.
    let own = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(&fetched).unwrap() {
        let entry = entry.unwrap();
        std::os::unix::fs::symlink(entry.path(), own.path().join(entry.file_name())).unwrap();
    }
    let settings = SemanticSettings::resolve(Some(own.path().to_path_buf()), true);
    assert!(settings.model_dir.is_some());
    let repo = crate::support::TestRepo::new();
    let org = tempfile::tempdir().unwrap();
    let project = Memories::open(repo.path(), repo.data_dir(), settings.clone());
    let organisation = Memories::open(repo.path(), org.path(), settings.clone());
    assert!(!settings.model_loaded());
    let learning = |content: &str| NewMemory {
        kind: Some(MemoryType::Decision),
        content: content.to_string(),
        ..NewMemory::default()
    };
    project
        .remember(learning("Cart totals are integers of cents."), None)
        .await
        .unwrap();
    assert!(
        settings.model_loaded(),
        "loaded by the first store, seen by every clone"
    );
    // The second store embeds with the same model: its write is found by meaning.
    organisation
        .remember(
            learning("Retries of the payment gateway stop after three attempts."),
            None,
        )
        .await
        .unwrap();
    let found = organisation
        .search(&cairn::memory::Query {
            text: "how often do we retry the payment provider".to_string(),
            limit: 1,
            ..cairn::memory::Query::default()
        })
        .await
        .unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
}
