//! Prints a server's surface as JSON:
//! `cargo run -p tb-pysurface --example surface -- DATA_ROOT SERVER [MODULE]`;
//! `... -- DATA_ROOT --time` reads the five v1 servers and prints how long that takes.
fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(2).map(String::as_str) == Some("--time") {
        let root = std::path::Path::new(&args[1]);
        let servers = [
            "sandbox_external_retail",
            "external_booking_v1",
            "sandbox_auto_insurance",
            "sandbox_neobank_support_v1",
            "sandbox_consulting",
        ];
        for round in 0..5 {
            let t0 = std::time::Instant::now();
            let mut n = 0;
            for s in servers {
                n += tb_pysurface::read_server_surface(root, s)
                    .expect("surface")
                    .tools
                    .len();
            }
            let one_by_one = t0.elapsed();
            let t1 = std::time::Instant::now();
            let all = tb_pysurface::read_server_surfaces(root, &servers).expect("surfaces");
            let m: usize = all.iter().map(|s| s.tools.len()).sum();
            eprintln!(
                "round {round}: {n} tools of 5 servers one by one in {one_by_one:?}; {m} together in {:?}",
                t1.elapsed()
            );
        }
        return;
    }
    let (Some(root), Some(server)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: surface DATA_ROOT SERVER [MODULE]");
        std::process::exit(2);
    };
    let root = std::path::Path::new(root);
    let t0 = std::time::Instant::now();
    let s = match args.get(3) {
        Some(m) => tb_pysurface::read_module_surface(root, server, m),
        None => tb_pysurface::read_server_surface(root, server),
    };
    let dt = t0.elapsed();
    match s {
        Ok(s) => {
            let tools: Vec<_> = s
                .tools
                .iter()
                .map(|t| serde_json::json!({"name": t.name, "description": t.description, "input_schema": t.input_schema, "agent_input_schema": t.agent_input_schema}))
                .collect();
            println!(
                "{}",
                serde_json::to_string(&serde_json::json!({"module": s.module, "tools": tools}))
                    .unwrap()
            );
            eprintln!("{} tools in {:?}", s.tools.len(), dt);
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
