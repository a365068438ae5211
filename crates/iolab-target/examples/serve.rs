//! Serve a target until stdin closes (or for a number of seconds), then
//! print the server-side stats of the whole run as JSON: for benchmark
//! scripts that want the server's figures on stdout when it ends, with no
//! Python in the process. `iolab target` is the command for everything
//! else (signals, `--stats-http` windows, the CLI flags).
//!
//! ```text
//! cargo run --release -p iolab-target --example serve -- CONFIG.toml [SECONDS]
//! cargo run --release -p iolab-target --example serve -- --listen unix:/tmp/s 'disk0=memory,size=1g' [SECONDS]
//! ```

use std::io::Read;
use std::time::Duration;

use iolab_target::config::{load_toml, parse_compact};
use iolab_target::{ListenAddr, ServerConfig, TargetError};

fn main() -> Result<(), TargetError> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (spec, seconds) = match args.first().map(String::as_str) {
        Some("--listen") if args.len() >= 3 => {
            let listen: ListenAddr = args[1].parse().map_err(TargetError::Listen)?;
            (
                parse_compact(&[args[2].as_str()], ServerConfig::new(listen))?,
                args.get(3),
            )
        }
        Some(path) => (load_toml(path.as_ref())?, args.get(1)),
        None => {
            eprintln!("usage: serve CONFIG.toml [SECONDS] | serve --listen ADDR SPEC [SECONDS]");
            std::process::exit(2);
        }
    };
    let seconds = seconds.map(|s| {
        s.parse::<u64>().unwrap_or_else(|_| {
            eprintln!("SECONDS must be a whole number, got '{s}'");
            std::process::exit(2)
        })
    });
    let names: Vec<String> = spec.exports.iter().map(|e| e.name().to_string()).collect();
    let server = spec.bind()?;
    for n in &names {
        eprintln!("serving {}", server.local_addr().uri(n));
    }
    let running = server.spawn()?;
    match seconds {
        Some(s) => std::thread::sleep(Duration::from_secs(s)),
        None => {
            let _ = std::io::stdin().read_to_end(&mut Vec::new());
        }
    }
    let snap = running.handle().stats().snapshot()?;
    running.stop()?;
    println!(
        "{}",
        serde_json::to_string_pretty(&snap).expect("snapshots serialise")
    );
    Ok(())
}
