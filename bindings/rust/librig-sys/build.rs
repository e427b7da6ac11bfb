// Links librig: from RIG_LIB_DIR where set (the meson build points it at its build directory), else from
// the libdir `pkg-config --variable=libdir rig` names (PKG_CONFIG_PATH at an installed prefix), else the
// linker's default paths. That directory is also this crate's tests' RUNPATH (so `cargo test` needs no
// LD_LIBRARY_PATH), and is passed on as DEP_RIG_LIBDIR to the build scripts of crates that depend on
// this one (librig's gives its own tests the same RUNPATH). No bindgen here: the declarations are
// committed (src/bindings.rs) and checked against rig.h by a meson test.
use std::env;
use std::process::Command;

fn libdir() -> Option<String> {
    if let Ok(dir) = env::var("RIG_LIB_DIR") {
        return Some(dir);
    }
    let out = Command::new("pkg-config").args(["--variable=libdir", "rig"]).output().ok()?;
    let dir = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && !dir.is_empty()).then(|| dir)
}

fn main() {
    println!("cargo:rerun-if-env-changed=RIG_LIB_DIR");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    println!("cargo:rerun-if-changed=src/bindings.rs");
    if let Some(dir) = libdir() {
        println!("cargo:rustc-link-search=native={}", dir);
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir);
        println!("cargo:libdir={}", dir);
    }
    println!("cargo:rustc-link-lib=dylib=rig");
}
