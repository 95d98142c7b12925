//! `mtuperf lab up|down|status|exec|serve|sshd`: parse → call mtuperf-lab → print.
mod args;
mod exec;

use anyhow::anyhow;
use mtuperf_lab::{Lab, LabError};
use serde::Serialize;

pub use args::{Action, Args};

use crate::exit::{self, CmdResult, Failure};
use crate::global::Global;

/// This process's command line as the user would type it again ("mtuperf lab down
/// --name rac", words quoted for a shell): what a message tells to rerun under sudo.
pub fn invocation() -> String {
    let argv: Vec<String> = std::iter::once("mtuperf".to_string())
        .chain(std::env::args().skip(1))
        .collect();
    mtuperf_lab::shell_line(&argv)
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

/// The lab's error as a failure; a missing privilege names the command as it was run
/// (`sudo mtuperf lab down --name rac`).
fn fail(e: LabError) -> Failure {
    let e = e.for_command(invocation());
    Failure::new(code_of(&e), e)
}

fn existing(name: &str) -> Result<Lab, Failure> {
    Lab::load(name)
        .map_err(fail)?
        .ok_or_else(|| fail(LabError::NotFound { name: name.into() }))
}

fn json<T: Serialize>(doc: &T) -> Result<String, Failure> {
    serde_json::to_string_pretty(doc).map_err(|e| Failure::from(anyhow!(e)))
}

pub fn run(_g: &Global, a: Args) -> CmdResult {
    match a.action {
        Action::Up(up) => {
            let lab = Lab::up(&up.options()?).map_err(fail)?;
            out!("{}", lab.status().render_text());
            if let Some(p) = lab.oifcfg_path() {
                outln!(
                    "oifcfg getif of the cluster: {} (mtuperf mesh --oifcfg {})",
                    p.display(),
                    p.display()
                );
            }
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
        Action::Status {
            name,
            json: as_json,
        } => status(&name, as_json),
        Action::Exec {
            name,
            host,
            command,
        } => {
            let lab = existing(&name)?;
            lab.check_host(&host).map_err(fail)?;
            mtuperf_lab::env::check_privilege("mtuperf lab exec").map_err(fail)?;
            exec::exec(&lab, &host, &command)
        }
        Action::Serve {
            name,
            json: as_json,
            extra,
        } => {
            let mut lab = existing(&name)?;
            lab.serve(&extra).map_err(fail)?;
            let report = lab.serve_report();
            if as_json {
                outln!("{}", json(&report)?);
            } else {
                out!("{}", report.render_text());
            }
            Ok(0)
        }
        Action::Sshd {
            name,
            json: as_json,
        } => sshd(&name, as_json),
    }
}

/// `lab sshd`: one line per node, then how to use the config.
fn sshd(name: &str, as_json: bool) -> CmdResult {
    let r = existing(name)?.sshd().map_err(fail)?;
    if as_json {
        outln!("{}", json(&r)?);
    } else {
        out!("{}", r.render_text(name));
    }
    Ok(0)
}

/// `lab status`: exit 1 (with a message, or an error document with `--json`) when
/// there is no such lab.
fn status(name: &str, as_json: bool) -> CmdResult {
    let loaded = match Lab::load(name) {
        Err(e) if as_json => {
            let code = code_of(&e);
            outln!("{}", error_json(&e.to_string(), code));
            return Ok(code);
        }
        other => other.map_err(fail)?,
    };
    let Some(lab) = loaded else {
        let msg = format!("no lab named {name:?}; build it with: mtuperf lab up --name {name}");
        if as_json {
            outln!("{}", error_json(&msg, exit::CHECK_FAILED));
        } else {
            outln!("{msg}");
        }
        return Ok(exit::CHECK_FAILED);
    };
    let st = lab.status();
    if as_json {
        outln!("{}", json(&st)?);
    } else {
        out!("{}", st.render_text());
    }
    Ok(0)
}

/// The `--json` form of an error (schemas/error.schema.json).
fn error_json(msg: &str, code: u8) -> String {
    serde_json::json!({"schema": "mtuperf.error/1", "error": msg, "exit": code}).to_string()
}
