//! Key files: any text is either a key that round-trips or a format error.
#![no_main]
use libfuzzer_sys::fuzz_target;
use mtuperf_proto::auth::Key;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(k) = Key::parse_file(&text) {
        assert_eq!(Key::parse_file(&k.to_file()), Ok(k));
    }
});
