//! Resident memory benchmark: the heap the daemon's index holds once loaded, split into every
//! file's extraction and the graph, counted by a counting allocator (allocations, not pages:
//! free memory the allocator keeps and the code mapped are not in it).
//!
//! Run: `cargo run --release --example resident_bench -- --store DATA/store`, where `DATA` is a
//! data directory `cairn index` wrote (`cairn --repo REPO --data-dir DATA index`).

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use cairn::storage::Store;

/// The system allocator, counting the bytes in use as glibc lays them out: each allocation
/// takes its size plus an 8-byte header, rounded up to 16, at least 32 (requests of 128 KiB
/// and more are mapped on their own, and counted the same way here).
struct Counting;

static IN_USE: AtomicUsize = AtomicUsize::new(0);

fn chunk(size: usize) -> usize {
    (size + 8).next_multiple_of(16).max(32)
}

// SAFETY: every call is passed on to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        IN_USE.fetch_add(chunk(layout.size()), Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        IN_USE.fetch_sub(chunk(layout.size()), Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        IN_USE.fetch_add(chunk(layout.size()), Ordering::Relaxed);
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        IN_USE.fetch_add(chunk(new_size), Ordering::Relaxed);
        IN_USE.fetch_sub(chunk(layout.size()), Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn mb(bytes: usize) -> f64 {
    bytes as f64 / 1_048_576.0
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let store_dir: PathBuf = std::env::args()
        .skip_while(|a| a != "--store")
        .nth(1)
        .expect("--store DATA/store")
        .into();
    let store = Store::open(&store_dir).await?;
    let sources = store.load_sources().await?;
    let graph = store.load_graph().await?;
    let (files, nodes, edges) = (sources.len(), graph.nodes.len(), graph.edges.len());
    let with_reasons = graph.edges.iter().filter(|e| !e.reasons.is_empty()).count();
    let lines: usize = graph.edges.iter().map(|e| e.lines.len()).sum();
    // The shared end ids, each counted once (the map is gone before anything is measured).
    let end_bytes: usize = {
        let mut ends = std::collections::HashMap::new();
        for edge in graph.edges.iter() {
            for end in [&edge.src, &edge.dst] {
                ends.insert(std::sync::Arc::as_ptr(end) as *const u8 as usize, end.len());
            }
        }
        ends.values().map(|len| chunk(16 + len)).sum()
    };
    // What each holds is what dropping it frees (the store's caches are not counted).
    let held = IN_USE.load(Ordering::Relaxed);
    let mut graph = graph;
    // Out of their shared chunks, a copy of each edge (the chunks are freed as it is made).
    let mut edge_list: Vec<_> = std::mem::take(&mut graph.edges).iter().cloned().collect();
    let mut freed = |take: &dyn Fn(&mut cairn::graph::Edge)| {
        let before = IN_USE.load(Ordering::Relaxed);
        edge_list.iter_mut().for_each(take);
        mb(before - IN_USE.load(Ordering::Relaxed))
    };
    let lines_mb = freed(&|e| drop(std::mem::take(&mut e.lines)));
    let reasons_mb = freed(&|e| drop(std::mem::take(&mut e.reasons)));
    drop(edge_list);
    let edges_freed = held - IN_USE.load(Ordering::Relaxed);
    let before_nodes = IN_USE.load(Ordering::Relaxed);
    let mut node_list = std::mem::take(&mut graph.nodes);
    let mut node_part = |take: &dyn Fn(&mut cairn::graph::Node)| {
        let before = IN_USE.load(Ordering::Relaxed);
        node_list
            .iter_mut()
            .filter_map(std::sync::Arc::get_mut)
            .for_each(take);
        mb(before - IN_USE.load(Ordering::Relaxed))
    };
    let signatures_mb = node_part(&|n| drop(n.signature.take()));
    let docs_mb = node_part(&|n| drop(n.doc.take()));
    drop(node_list);
    let nodes_freed = before_nodes - IN_USE.load(Ordering::Relaxed);
    drop(graph);
    let without_graph = IN_USE.load(Ordering::Relaxed);
    // The extractions part by part: what dropping each kind of record frees.
    let mut sources = sources;
    let mut strings = [0usize; 2]; // [inline (<= 24 bytes), longer]
    let mut count = |text: &str| strings[usize::from(text.len() > 24)] += 1;
    let mut records = [0usize; 3]; // calls, symbols, types
    for source in &sources {
        let extract = &source.file.extract;
        records[0] += extract.calls.len();
        records[1] += extract.symbols.len();
        records[2] += extract.types.len();
        for call in &extract.calls {
            count(&call.name);
            call.receiver.as_deref().map(&mut count);
        }
        for symbol in &extract.symbols {
            count(&symbol.name);
            count(&symbol.qualname);
            count(&symbol.signature);
            symbol.doc.as_deref().map(&mut count);
        }
        for hint in &extract.types {
            count(&hint.name);
        }
    }
    let mut parts = serde_json::Map::new();
    let mut part = |name: &str, take: &mut dyn FnMut(&mut cairn::graph::SourceFile)| {
        let before = IN_USE.load(Ordering::Relaxed);
        sources.iter_mut().for_each(|s| take(&mut s.file));
        let freed = before - IN_USE.load(Ordering::Relaxed);
        parts.insert(name.to_string(), serde_json::json!(mb(freed)));
    };
    part("calls", &mut |s| drop(std::mem::take(&mut s.extract.calls)));
    part("symbols", &mut |s| {
        drop(std::mem::take(&mut s.extract.symbols))
    });
    part("imports", &mut |s| {
        drop(std::mem::take(&mut s.extract.imports))
    });
    part("types", &mut |s| drop(std::mem::take(&mut s.extract.types)));
    part("mutations", &mut |s| {
        drop(std::mem::take(&mut s.extract.mutations))
    });
    part("returns", &mut |s| {
        drop(std::mem::take(&mut s.extract.returns))
    });
    part("bases", &mut |s| drop(std::mem::take(&mut s.extract.bases)));
    drop(sources);
    let without_sources = IN_USE.load(Ordering::Relaxed);
    let graph_bytes = held - without_graph;
    let source_bytes = without_graph - without_sources;
    println!(
        "{}",
        serde_json::json!({
            "files": files,
            "nodes": nodes,
            "edges": edges,
            "extractions_mb": mb(source_bytes),
            "extraction_bytes_per_file": source_bytes / files.max(1),
            "extraction_parts_mb": parts,
            "calls_symbols_types": records,
            "graph_parts_mb": {"end_ids": mb(end_bytes), "edges": mb(edges_freed), "edge_lines": lines_mb, "edge_reasons": reasons_mb, "nodes": mb(nodes_freed), "node_signatures": signatures_mb, "node_docs": docs_mb},
            "edges_with_reasons": with_reasons,
            "edge_lines": lines,
            "strings_short_long": strings,
            "graph_mb": mb(graph_bytes),
            // Extraction names are interned once per process (`extract::Text`), apart from the
            // records above and never freed; the interner's own table is not counted.
            "interned_names": {"entries": ustr::num_entries(), "mb": mb(ustr::total_allocated())},
            "graph_bytes_per_node_and_edge": graph_bytes / (nodes + edges).max(1),
        })
    );
    Ok(())
}
