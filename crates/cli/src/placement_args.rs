//! CPU placement flags shared by the test commands (`#[command(flatten)]`), and
//! `serve --cpus`.

use mtuperf_proto::placement::{format_cpu_list, parse_cpu_list};

/// `--cpu` alone (path: there is no agent-side thread to pin).
#[derive(Debug, Clone, Default, clap::Args)]
#[command(next_help_heading = crate::heading::PLACEMENT)]
pub struct CpuArgs {
    /// Pin this end's test threads to these CPUs (kernel list syntax: 0, 0-3, 0,2);
    /// each thread may run on any CPU of the list. Default: not pinned.
    #[arg(long = "cpu", value_name = "LIST", value_parser = parse_local_cpus)]
    pub cpu: Option<CpuList>,
}

impl CpuArgs {
    pub fn cpus(&self) -> Option<Vec<u32>> {
        self.cpu.as_ref().map(|c| c.0.clone())
    }
}

/// `--cpu` and `--agent-cpu` (rr, stream, stream --udp).
#[derive(Debug, Clone, Default, clap::Args)]
#[command(next_help_heading = crate::heading::PLACEMENT)]
pub struct PlacementArgs {
    #[command(flatten)]
    pub client: CpuArgs,
    /// Ask the agent to pin the threads serving this test to these CPUs; refused when
    /// outside the agent's processor set (`serve --cpus`). Default: not pinned.
    #[arg(long = "agent-cpu", value_name = "LIST", value_parser = parse_any_cpus)]
    pub agent_cpu: Option<CpuList>,
}

/// A parsed CPU list (a newtype: clap would take a bare `Vec` for repeated values).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuList(pub Vec<u32>);

impl PlacementArgs {
    pub fn cpus(&self) -> Option<Vec<u32>> {
        self.client.cpus()
    }

    pub fn agent_cpus(&self) -> Option<Vec<u32>> {
        self.agent_cpu.as_ref().map(|c| c.0.clone())
    }
}

/// `compare --placement`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PlacementArg {
    Same,
    Split,
    Free,
}

impl PlacementArg {
    pub fn policy(self) -> mtuperf_engine::placement::PlacementPolicy {
        use mtuperf_engine::placement::PlacementPolicy as P;
        match self {
            PlacementArg::Same => P::Same,
            PlacementArg::Split => P::Split,
            PlacementArg::Free => P::Free,
        }
    }
}

/// The hint every refused list carries.
const HINT: &str = "write CPU numbers and ranges as the kernel does, e.g. 0 or 0-3,6";

fn online() -> String {
    format_cpu_list(&mtuperf_sys::affinity::online_cpus())
}

/// A CPU list that must name CPUs online on this host.
pub fn parse_local_cpus(s: &str) -> Result<CpuList, String> {
    let CpuList(cpus) = parse_any_cpus(s)?;
    mtuperf_engine::placement::check_cpus(&cpus, &mtuperf_sys::affinity::online_cpus())
        .map_err(|e| format!("{e}; {HINT}"))?;
    Ok(CpuList(cpus))
}

/// A well-formed CPU list (checked against another host's CPUs by that host).
pub fn parse_any_cpus(s: &str) -> Result<CpuList, String> {
    parse_cpu_list(s)
        .map(CpuList)
        .map_err(|e| format!("{e}; this host's online CPUs: {}; {HINT}", online()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_name_the_online_cpus_and_hint() {
        let e = parse_any_cpus("3-1").unwrap_err();
        assert!(
            e.contains("backwards") && e.contains("online CPUs") && e.contains("e.g. 0"),
            "{e}"
        );
        let e = parse_local_cpus("8000").unwrap_err();
        assert!(e.contains("not online") && e.contains("e.g. 0"), "{e}");
        assert_eq!(parse_local_cpus("0"), Ok(CpuList(vec![0])));
    }
}
