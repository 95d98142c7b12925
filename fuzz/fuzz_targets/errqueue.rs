//! The error queue's `sock_extended_err` (+ offender sockaddr) as the kernel hands it
//! to path probes: any bytes parse or are refused, never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    mtuperf_sys::fuzz::extended_err(data);
});
