// Links librig: from RIG_LIB_DIR where set (the meson build points it at its build directory), else
// where `pkg-config --libs-only-L rig` says, else the linker's default paths. No crate, no bindgen here:
// the declarations are committed (src/bindings.rs) and checked against rig.h by a meson test.
use std::env;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=RIG_LIB_DIR");
    println!("cargo:rerun-if-changed=src/bindings.rs");
    if let Ok(dir) = env::var("RIG_LIB_DIR") {
        println!("cargo:rustc-link-search=native={}", dir);
    } else if let Ok(out) = Command::new("pkg-config").args(["--libs-only-L", "rig"]).output() {
        if out.status.success() {
            for flag in String::from_utf8_lossy(&out.stdout).split_whitespace() {
                if let Some(dir) = flag.strip_prefix("-L") {
                    println!("cargo:rustc-link-search=native={}", dir);
                }
            }
        }
    }
    println!("cargo:rustc-link-lib=dylib=rig");
}
