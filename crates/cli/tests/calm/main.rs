//! Lab tests whose verdicts read the machine's own CPU, so they must not share it
//! with other tests: which limit a stream hit (window, network, CPU) depends on
//! whether its ends got their cores. This binary runs after the others, alone, and
//! its tests take one lock, one at a time, as they did each in their own process.

mod stream_limits_lab;
