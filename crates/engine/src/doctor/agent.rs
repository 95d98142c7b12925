//! The agent's side of `doctor --peer`: this host's facts, read on the interface the
//! route back to the client leaves through. The client applies the rules to them.

use std::time::Duration;

use mtuperf_proto::msg::doctor::{DoctorReply, DoctorRequest};
use mtuperf_proto::msg::{AgentMsg, ClientMsg, Refusal};

use super::{facts, Profile};
use crate::serve::{AgentHandler, ServeCtx};
use crate::EngineError;

/// Longest counter sample the agent accepts (ms).
pub const MAX_SAMPLE_MS: u64 = 60_000;

pub fn serve(ctx: &dyn ServeCtx, req: &DoctorRequest) -> Result<(), EngineError> {
    let Ok(profile) = req.profile.parse::<Profile>() else {
        return ctx.refuse(Refusal::BadRequest {
            detail: format!(
                "unknown doctor profile {:?}: allowed rac, generic",
                req.profile
            ),
        });
    };
    let allowed = MAX_SAMPLE_MS.min(ctx.limits().max_duration_ms);
    if req.sample_ms > allowed {
        return ctx.refuse_limit("max-duration", req.sample_ms.div_ceil(1000), allowed / 1000);
    }
    let (ifaces, selection) = match mtuperf_sys::route::route_to(ctx.peer().ip()) {
        Ok(r) => (
            vec![r.iface.clone()],
            format!("route to {}", ctx.peer().ip()),
        ),
        Err(e) => (Vec::new(), format!("no route to {} ({e})", ctx.peer().ip())),
    };
    let on = if ifaces.is_empty() {
        "no interface".to_string()
    } else {
        ifaces.join(", ")
    };
    ctx.log_fields(
        "doctor",
        format!("doctor on {on}, profile {profile}"),
        serde_json::json!({ "interfaces": ifaces, "profile": profile.to_string() }),
    );
    let facts = facts::gather(&ifaces, &selection, Duration::from_millis(req.sample_ms));
    ctx.control()
        .send(&AgentMsg::DoctorReply(Box::new(DoctorReply {
            hostname: facts.hostname.clone(),
            facts,
        })))
}

/// The agent's `doctor --peer` handler.
pub struct DoctorHandler;

impl AgentHandler for DoctorHandler {
    type Request = DoctorRequest;
    fn request(msg: &ClientMsg) -> Option<&DoctorRequest> {
        match msg {
            ClientMsg::Doctor(req) => Some(req),
            _ => None,
        }
    }

    fn serve(&self, ctx: &dyn ServeCtx, req: &DoctorRequest) -> Result<(), EngineError> {
        serve(ctx, req)
    }
}
