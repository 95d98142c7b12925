//! Lab tests whose verdicts read the machine's own CPU, so they must not share it
//! with other tests: which limit a stream hit (window, network, CPU) depends on
//! whether its ends got their cores. Cargo runs one test binary at a time, so these
//! run with no other test, and one lock keeps them to one at a time.

mod stream_limits_lab;
