// kernelpeer: the delta-kernel-rs peer of deltasync's benchmark (see
// BENCHMARKS.md and deltalog/bench/bench.sh). It builds a Snapshot of the
// table at TABLE_DIR with the default engine ITER times and prints the
// version, protocol and metadata once, and the in-process time of each
// Snapshot build on stderr.
use std::time::Instant;

use delta_kernel::Snapshot;
use delta_kernel_default_engine::storage::store_from_url;
use delta_kernel_default_engine::DefaultEngineBuilder;

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = args.next().expect("usage: kernelpeer TABLE_DIR [ITER]");
    let iters: usize = args.next().map(|s| s.parse().expect("ITER")).unwrap_or(1);
    let path = std::fs::canonicalize(&dir).expect("table dir");
    let url = url::Url::from_directory_path(&path).expect("table url");
    let engine = DefaultEngineBuilder::new(store_from_url(&url).expect("object store")).build();
    for i in 0..iters {
        let start = Instant::now();
        let snap = Snapshot::builder_for(url.as_str()).build(&engine).expect("snapshot");
        let elapsed = start.elapsed();
        if i == 0 {
            let tc = snap.table_configuration();
            let md = tc.metadata();
            println!("version={} protocol={:?} metadata.id={} configuration={:?}",
                snap.version(), tc.protocol(), md.id(), md.configuration());
        }
        eprintln!("snapshot_ms={:.3}", elapsed.as_secs_f64() * 1e3);
    }
}
