//! Prints a server's surface as JSON: `cargo run -p tb-pysurface --example surface -- DATA_ROOT SERVER [--module M]`.
fn main() {
    let args: Vec<String> = std::env::args().collect();
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
                .map(|t| serde_json::json!({"name": t.name, "description": t.description, "input_schema": t.input_schema}))
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
