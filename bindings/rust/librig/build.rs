// librig-sys finds librig (RIG_LIB_DIR or pkg-config) and says where (DEP_RIG_LIBDIR): that directory
// becomes the RUNPATH of this crate's tests and doc tests too, so `cargo test` needs no LD_LIBRARY_PATH.
// (A link argument reaches only the package that emits it: a program using librig from a prefix the
// dynamic linker does not search gives its own, as the crate's documentation shows.)
fn main() {
    println!("cargo:rerun-if-env-changed=DEP_RIG_LIBDIR");
    if let Ok(dir) = std::env::var("DEP_RIG_LIBDIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir);
    }
}
