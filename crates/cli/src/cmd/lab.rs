//! `mtuperf lab up|down|status|exec|serve`: parse → call mtuperf-lab → print.
use std::io::Write as _;

use anyhow::anyhow;
use clap::{Subcommand, ValueEnum};
use mtuperf_lab::{Lab, LabError, LabOptions, Scenario, DEFAULT_NAME};
use mtuperf_proto::units::BitsPerSec;

use crate::exit::{self, CmdResult, Failure};
use crate::global::Global;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub action: Action,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum OnOff {
    On,
    Off,
}

#[derive(Debug, Subcommand)]
pub enum Action {
    /// Build a lab: namespaces joined by veth pairs, one per scenario (all by default).
    Up {
        #[arg(long, default_value = DEFAULT_NAME)]
        name: String,
        /// std, jumbo, routed, blackhole, mismatch, switchport or asym (repeatable; default: all).
        #[arg(long = "scenario", value_name = "NAME")]
        scenarios: Vec<String>,
        /// TSO/GSO/GRO on every lab interface.
        #[arg(long, value_enum, default_value = "on")]
        offload: OnOff,
        /// Shape every link on both ends' egress (tc tbf), e.g. 1gbit, 100M.
        #[arg(long, value_name = "RATE")]
        rate: Option<String>,
        /// Drop this percentage of UDP datagrams and ICMP echoes (never TCP) on every link.
        #[arg(long, value_name = "PCT")]
        loss: Option<f64>,
        /// Print every command as a shell line.
        #[arg(long, short)]
        verbose: bool,
    },
    /// Remove a lab: its agents, namespaces, veths and nftables tables.
    Down {
        #[arg(long, default_value = DEFAULT_NAME)]
        name: String,
        #[arg(long, short)]
        verbose: bool,
    },
    /// Hosts, links, MTUs, offloads, rate, loss and agents of a lab.
    Status {
        #[arg(long, default_value = DEFAULT_NAME)]
        name: String,
        #[arg(long)]
        json: bool,
    },
    /// Run a command inside a lab host; its exit code is passed through.
    Exec {
        #[arg(long, default_value = DEFAULT_NAME)]
        name: String,
        /// client, std, jumbo, routed-router, routed, blackhole-router, blackhole, mismatch.
        host: String,
        #[arg(
            trailing_var_arg = true,
            allow_hyphen_values = true,
            required = true,
            value_name = "CMD"
        )]
        command: Vec<String>,
    },
    /// Start an agent (`mtuperf serve`) in every server host of the lab.
    Serve {
        #[arg(long, default_value = DEFAULT_NAME)]
        name: String,
        /// Extra arguments for the agent, after `--`.
        #[arg(last = true, value_name = "AGENT_ARGS")]
        extra: Vec<String>,
    },
}

fn code_of(e: &LabError) -> u8 {
    if e.is_environment() {
        exit::ENVIRONMENT
    } else if e.is_usage() {
        exit::USAGE
    } else {
        exit::FAILED
    }
}

fn fail(e: LabError) -> Failure {
    Failure::new(code_of(&e), e)
}

fn existing(name: &str) -> Result<Lab, Failure> {
    Lab::load(name)
        .map_err(fail)?
        .ok_or_else(|| fail(LabError::NotFound { name: name.into() }))
}

pub fn run(_g: &Global, a: Args) -> CmdResult {
    match a.action {
        Action::Up {
            name,
            scenarios,
            offload,
            rate,
            loss,
            verbose,
        } => {
            let scenarios = scenarios
                .iter()
                .map(|s| s.parse::<Scenario>())
                .collect::<Result<Vec<_>, _>>()
                .map_err(fail)?;
            let rate = match rate {
                None => None,
                Some(r) => Some(
                    BitsPerSec::parse(&r)
                        .map_err(|e| {
                            Failure::usage(
                                "--rate",
                                &r,
                                "a rate such as 1gbit or 100M",
                                &e.to_string(),
                            )
                        })?
                        .0 as u64,
                ),
            };
            let opts = LabOptions {
                name,
                scenarios,
                offload: matches!(offload, OnOff::On),
                rate,
                loss_pct: loss,
                verbose,
            };
            let lab = Lab::up(&opts).map_err(fail)?;
            out!("{}", lab.status().render_text());
            outln!(
                "run commands in a host with: mtuperf lab exec --name {} HOST -- CMD",
                lab.name
            );
            Ok(0)
        }
        Action::Down { name, verbose } => {
            if Lab::down(&name, verbose).map_err(fail)? {
                outln!("lab {name:?} removed");
            } else {
                outln!("lab {name:?}: nothing to remove");
            }
            Ok(0)
        }
        Action::Status { name, json } => {
            let loaded = match Lab::load(&name) {
                Err(e) if json => {
                    let code = code_of(&e);
                    outln!("{}", error_json(&e.to_string(), code));
                    return Ok(code);
                }
                other => other.map_err(fail)?,
            };
            let Some(lab) = loaded else {
                let msg =
                    format!("no lab named {name:?}; build it with: mtuperf lab up --name {name}");
                if json {
                    outln!("{}", error_json(&msg, exit::CHECK_FAILED));
                } else {
                    outln!("{msg}");
                }
                return Ok(exit::CHECK_FAILED);
            };
            let st = lab.status();
            if json {
                outln!(
                    "{}",
                    serde_json::to_string_pretty(&st).map_err(|e| anyhow!(e))?
                );
            } else {
                out!("{}", st.render_text());
            }
            Ok(0)
        }
        Action::Exec {
            name,
            host,
            command,
        } => {
            let lab = existing(&name)?;
            lab.check_host(&host).map_err(fail)?;
            let ns = lab.netns(&host).unwrap_or_default();
            if !mtuperf_sys::netns::exists(&ns) {
                return Err(Failure::new(
                    exit::FAILED,
                    anyhow!("lab {name:?}: the namespace {ns} of host {host} is gone; rebuild the lab (mtuperf lab down --name {name}, then lab up)"),
                ));
            }
            match lab.exec_command(&host, &command).status() {
                Ok(status) => Ok(exit_code_of(status)),
                // As a shell does: 127 for a program not found, 126 for one that
                // cannot be run.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    let _ = writeln!(
                        std::io::stderr(),
                        "mtuperf lab exec: {}: command not found",
                        command[0]
                    );
                    Ok(NOT_FOUND)
                }
                Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                    let _ = writeln!(std::io::stderr(), "mtuperf lab exec: {}: {e}", command[0]);
                    Ok(NOT_EXECUTABLE)
                }
                Err(e) => Err(Failure::new(
                    exit::FAILED,
                    anyhow!(e).context(format!("running {} in lab host {host}", command[0])),
                )),
            }
        }
        Action::Serve { name, extra } => {
            let mut lab = existing(&name)?;
            lab.serve(&extra).map_err(fail)?;
            for ag in &lab.agents {
                let binds: Vec<String> = ag.binds.iter().map(ToString::to_string).collect();
                outln!(
                    "{:<10} agent pid {:<7} listening on {} port {} (log {})",
                    ag.host,
                    ag.pid,
                    binds.join(", "),
                    ag.port,
                    ag.log.display()
                );
            }
            if let Some(key) = lab.key_file() {
                outln!(
                    "key        {} (clients run with `mtuperf lab exec` get it as MTUPERF_KEY_FILE)",
                    key.display()
                );
            }
            Ok(0)
        }
    }
}

/// `lab exec` of a program that does not exist / cannot be executed (as POSIX shells).
const NOT_FOUND: u8 = 127;
const NOT_EXECUTABLE: u8 = 126;

/// The `--json` form of an error (schemas/error.schema.json).
fn error_json(msg: &str, code: u8) -> String {
    serde_json::json!({"schema": "mtuperf.error/1", "error": msg, "exit": code}).to_string()
}

/// The child's exit code, or 128 + signal as a shell reports it.
fn exit_code_of(status: std::process::ExitStatus) -> u8 {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(c), _) => c as u8,
        (None, Some(sig)) => 128u8.saturating_add(sig as u8),
        _ => exit::FAILED,
    }
}
