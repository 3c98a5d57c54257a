//! A bounded soak and fault run of team mode (the `team_soak` benchmark's run, shorter):
//! eight members against a real SurrealDB server that is killed and restarted, one member
//! offline for the first half with hundreds of queued writes, pairs superseding one memory
//! at once, two clocks minutes off. Nothing accepted is lost or doubled, every member ends
//! with the same shared set, no private memory is readable by another member, and each pair's
//! supersession ends in the documented state.

#[path = "../../examples/common/soak.rs"]
mod soak;

use std::path::Path;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread")]
async fn eight_members_through_a_server_restart_and_an_offline_half_lose_nothing() {
    assert!(
        Path::new(soak::LIBFAKETIME).exists(),
        "{} is missing: install Debian's faketime package (.ci/deps does)",
        soak::LIBFAKETIME
    );
    let cairn = Path::new(env!("CARGO_BIN_EXE_cairn"));
    let plan = soak::Plan {
        cairn: cairn.to_path_buf(),
        surreal: cairn.with_file_name("examples").join("surreal"),
        members: 8,
        duration: Duration::from_secs(30),
        offline_writes: 200,
        seed: 7,
    };
    let report = soak::run(&plan).await;
    let summary = format!("{}\n{}", report.summary(), report.json());
    eprintln!("{summary}");
    assert!(report.faults().is_empty(), "{summary}");
    assert!(report.offline_queued >= 200, "{summary}");
    assert!(report.outage_writes > 0, "{summary}");
    assert!(report.write_ms.len() >= report.offline_queued, "{summary}");
    // The skewed members' writes carry their own clocks: minutes off, as set.
    let skews: Vec<i64> = report.skews.iter().map(|(_, s)| *s).collect();
    assert!(
        skews.len() == 2 && skews[0] < -200 && skews[1] > 150,
        "{summary}"
    );
    assert_eq!(report.supersessions.len(), 3, "{summary}");
}
